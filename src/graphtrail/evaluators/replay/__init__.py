"""graphtrail.evaluators.replay: run an agent again under graph ablations and record each run.

Two routes reach the agent with a condition (docs/ablations.md, "Routes"):

- :mod:`.exact`, the factory route: the agent rebuilt on really-ablated data
  (``evaluate(make_agent, questions, graph=data)``), ``ablated`` for each data
  type and ``register_ablation``; exact by construction;
- the output filter, the fallback for an agent that cannot be rebuilt: the modules
  below (:mod:`.filters` and its helpers), with its two checks, :mod:`.leaks`
  (what the model was given) and :mod:`.overfilter` (what the filter took), and
  :mod:`.method` (whether a run came out ``filtered`` or ``estimated``).

Data flows one way, conditions -> filters -> interception -> runs:

- :mod:`.ablations`: each condition's graph filters, from a baseline trajectory;
- :mod:`.filters`, :mod:`.tools`, :mod:`.scope`, :mod:`.interception`: what a
  user's tool returns under a filter, the tool proxy that applies it, the
  per-run bookkeeping, and the patch that routes every tool call of a replay
  run through it;
- :mod:`.runner`: :func:`replay`, one :class:`~graphtrail.evaluators.records.RunRecord`
  per job, with :mod:`.reuse` (model responses reused across runs) and
  :mod:`.cache` (finished runs on disk);
- :mod:`.inputs`, :mod:`.agent`, :mod:`.suite`, :mod:`.progress`: the questions
  and agent made ready, and the whole suite of baselines then conditions.

May import :mod:`graphtrail.evaluators.records`, :mod:`graphtrail.evaluators.errors`,
the tracer and the agents; never :mod:`graphtrail.evaluators.scoring`,
:mod:`graphtrail.evaluators.report` or the API (scoring comes in as a callback).

``replay`` is both this package and its main function: ``from graphtrail.evaluators
import replay`` and ``from graphtrail.evaluators.replay import replay`` give the
function. Reach the modules with ``from graphtrail.evaluators.replay.runner import ...``
(an attribute path such as ``graphtrail.evaluators.replay.runner`` goes through the
function, so ``import graphtrail.evaluators.replay.runner as m`` and dotted
monkeypatch targets do not work).
"""

from typing import TYPE_CHECKING, Any

__all__ = ["replay", "ReplayJob", "AgentRunner", "answer_from_output", "default_input"]

if TYPE_CHECKING:  # pragma: no cover
    from .runner import AgentRunner, ReplayJob, answer_from_output, default_input, replay


def __getattr__(name: str) -> Any:
    # On first use: the runner imports the agents and LangChain, which modules of this package
    # such as ``fromtraces`` and ``progress`` (read by ``annotate`` and the CLI) do not need.
    if name in __all__:
        from . import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
