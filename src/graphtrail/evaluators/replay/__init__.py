"""graphtrail.evaluators.replay: run an agent again under graph ablations and record each run.

Two routes reach the agent with a condition (docs/ablations.md, "Routes"), one folder each:

- :mod:`.exact`, the factory route: the agent rebuilt on really-ablated data
  (``evaluate(make_agent, questions, graph=data)``), ``ablated`` for each data
  type and ``register_ablation``; exact by construction;
- :mod:`.filtered`, the fallback for an agent that cannot be rebuilt: the output
  filter (:mod:`.filtered.filters` and its helpers, the tool proxy and the
  interception that applies it), its two checks, :mod:`.filtered.leaks` (what the
  model was given) and :mod:`.filtered.overfilter` (what the filter took), and
  :mod:`.filtered.method` (whether a run came out ``filtered`` or ``estimated``).

The modules here serve both routes. Data flows one way, conditions -> runs:

- :mod:`.ablations`: each condition's graph filters, from a baseline trajectory;
- :mod:`.runner`: :func:`replay`, one :class:`~graphtrail.evaluators.records.RunRecord`
  per job (the route's agent or filter in place), with :mod:`.reuse` (model
  responses reused across runs), :mod:`.cache` (finished runs on disk) and
  :mod:`.seen` (what the model was given, for the model-input check);
- :mod:`.tabular`, :mod:`.byvalue`: what a run visited, read from its tool outputs
  (table cells by name, JSON values by id);
- :mod:`.inputs`, :mod:`.agent`, :mod:`.suite`, :mod:`.speculate`, :mod:`.progress`:
  the questions and agent made ready, and the whole suite of baselines then conditions.

The modules of :mod:`.filtered` used to live here; their old paths
(``graphtrail.evaluators.replay.filters`` and the like) still import, as the same
module, with a ``DeprecationWarning`` (removed in graphtrail 0.3.0).

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
