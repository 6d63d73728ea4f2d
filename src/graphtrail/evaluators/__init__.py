"""graphtrail.evaluators: replay an agent under graph ablations and score provenance.

Three subpackages, data flowing one way (``report -> scoring -> records <- replay``):

- :mod:`.replay`: conditions -> filters -> interception -> runs, producing
  :class:`~.records.RunRecord` objects (with prefix reuse, the run cache and the
  per-tool filter counts);
- :mod:`.scoring`: pure functions from records to judged records, scored
  tables, statistics and findings;
- :mod:`.report`: the :class:`~.report.Report` and its Markdown, HTML and plot views.

:mod:`.records` (the replay -> scoring contract) and :mod:`.errors` sit beside
them; :mod:`.api` (``evaluate``) is the one entry point that uses all three.
The modules ``stats``, ``metrics``, ``findings``, ``judges`` and ``interception``
here are old paths: each is its new module and warns on import (``graphtrail._moved``).

Names are imported lazily (``_EXPORTS`` maps each to its module) so that
``import graphtrail.evaluators`` stays cheap; add new public names there.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_EXPORTS: dict[str, str] = {
    # records (the replay <-> scoring contract)
    "RunKey": "records",
    "RunRecord": "records",
    "CONDITIONS": "records",
    "DEFAULT_CONDITIONS": "records",
    # ablation builders
    "condition_filters": "replay.ablations",
    "random_removal_candidates": "replay.ablations",
    "AblationError": "replay.ablations",
    # the exact route: the user's data really ablated (evaluate(make_agent, questions, graph=G))
    "ablated": "replay.exact.ablate",
    "register_ablation": "replay.exact.ablate",
    "Keys": "replay.exact.ablate",
    "EntityTables": "replay.exact.frames",
    # replay runner, prefix reuse, cache
    "replay": "replay.runner",
    "ReplayJob": "replay.runner",
    "AgentRunner": "replay.runner",
    "PrefixReuseCache": "replay.reuse",
    "ReuseStore": "replay.reuse",
    "RunCache": "replay.cache",
    "load_records": "replay.cache",
    # user tools
    "register_tool_filter": "replay.filtered.filters",
    "unregister_tool_filter": "replay.filtered.filters",
    "generic_filter": "replay.filtered.filters",
    "filter_tool_output": "replay.filtered.filters",
    "wrap_tool": "replay.filtered.tools",
    "wrap_agent_tools": "replay.filtered.tools",
    "AblationMiddleware": "replay.filtered.tools",
    # judges, scores, statistics, reports
    "Judge": "scoring.judges",
    "JudgeContext": "scoring.judges",
    "LLMJudge": "scoring.judges",
    "apply_judges": "scoring.judges",
    "exact_match": "scoring.judges",
    "cover_exact_match": "scoring.judges",
    "token_f1_score": "scoring.judges",
    "output_changed": "scoring.judges",
    "as_judge": "scoring.judges",
    "accuracy": "scoring.metrics",
    "output_changed_rate": "scoring.metrics",
    "source_support": "scoring.metrics",
    "trajectory_fidelity": "scoring.metrics",
    "entity_influence": "scoring.metrics",
    "fit_surrogate": "scoring.metrics",
    "coverage": "scoring.metrics",
    "structural_faithfulness": "scoring.metrics",
    "cluster_bootstrap": "scoring.stats",
    "mcnemar_exact": "scoring.stats",
    "noise_floor": "scoring.stats",
    "pass_hat_k": "scoring.stats",
    "min_detectable_difference": "scoring.stats",
    "Report": "report",
    "ReportError": "report",
    "build_report": "report",
    "load_report": "report",
    # the one-call API
    "evaluate": "api",
    "aevaluate": "api",
    "aevaluate_records": "api",
    "Evaluation": "replay.suite",
    "EvaluationError": "errors",
    "CoverageError": "errors",
    # comparing two evaluations (the provenance regression gate)
    "compare": "comparison",
    "Comparison": "comparison",
    "CompareError": "comparison",
    "GateResult": "comparison",
}

__all__ = sorted(_EXPORTS)



class _Package(types.ModuleType):
    """``replay`` is both a subpackage and a function, and the name means the function.

    The import system binds a subpackage on its parent once it is loaded; this
    package ignores that binding for ``replay``, so the function is found (and
    imported) on first use rather than eagerly: the replay runner imports the
    agents and LangChain, seconds that ``compare`` and ``report`` do not need.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "replay" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name == "replay":
        from .replay.runner import replay

        globals()["replay"] = replay
        return replay
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graphtrail.evaluators' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | {"replay"})
