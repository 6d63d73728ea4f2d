"""graphtrail.evaluators: replay an agent under graph ablations and score provenance.

Names are imported lazily (``_EXPORTS`` maps each to its module) so that
``import graphtrail.evaluators`` stays cheap; add new public names there.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # records (the replay <-> scoring contract)
    "RunKey": "records",
    "RunRecord": "records",
    "CONDITIONS": "records",
    "DEFAULT_CONDITIONS": "records",
    # ablation builders
    "condition_filters": "ablations",
    "random_removal_candidates": "ablations",
    "AblationError": "ablations",
    # replay runner, prefix reuse, cache
    "replay": "replay",
    "ReplayJob": "replay",
    "AgentRunner": "replay",
    "PrefixReuseCache": "reuse",
    "ReuseStore": "reuse",
    "RunCache": "cache",
    "load_records": "cache",
    # user tools
    "register_tool_filter": "user_tools",
    "unregister_tool_filter": "user_tools",
    "generic_filter": "user_tools",
    "filter_tool_output": "user_tools",
    "wrap_tool": "user_tools",
    "wrap_agent_tools": "user_tools",
    "AblationMiddleware": "user_tools",
    # judges, scores, statistics, reports
    "Judge": "judges",
    "JudgeContext": "judges",
    "LLMJudge": "judges",
    "apply_judges": "judges",
    "exact_match": "judges",
    "cover_exact_match": "judges",
    "token_f1_score": "judges",
    "output_changed": "judges",
    "as_judge": "judges",
    "accuracy": "metrics",
    "output_changed_rate": "metrics",
    "source_support": "metrics",
    "trajectory_fidelity": "metrics",
    "entity_influence": "metrics",
    "fit_surrogate": "metrics",
    "coverage": "metrics",
    "structural_faithfulness": "metrics",
    "cluster_bootstrap": "stats",
    "mcnemar_exact": "stats",
    "noise_floor": "stats",
    "pass_hat_k": "stats",
    "min_detectable_difference": "stats",
    "Report": "report",
    "ReportError": "report",
    "build_report": "report",
    "load_report": "report",
    # the one-call API
    "evaluate": "api",
    "aevaluate": "api",
    "aevaluate_records": "api",
    "Evaluation": "api",
    "EvaluationError": "api",
    "CoverageError": "api",
    # comparing two evaluations (the provenance regression gate)
    "compare": "comparison",
    "Comparison": "comparison",
    "CompareError": "comparison",
    "GateResult": "comparison",
}

__all__ = sorted(_EXPORTS)

# ``replay`` is both a submodule and a function; bind the function eagerly, or the
# submodule (set on the package when first imported) would shadow it.
from .replay import replay  # noqa: E402


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graphtrail.evaluators' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
