"""The names the command line checks its arguments against, importable in milliseconds.

The library's own lists (``graphtrail.evaluators.CONDITIONS``,
``graphtrail.agents.VARIANTS`` / ``BASELINES``, the run cache's file name, what
names a graph database) live in modules that import LangChain, NumPy and
NetworkX: seconds before a typo could be reported. The CLI checks against these
copies first, so a bad argument is answered at once, and
``tests/test_cli_fast_start.py`` fails the day a copy differs from the library's.
"""

from __future__ import annotations

__all__ = [
    "CONDITIONS",
    "VARIANTS",
    "BASELINES",
    "RUNS_FILE",
    "looks_like_graph_database",
]

#: Every ablation condition, in the evaluators' order (``graphtrail.evaluators.CONDITIONS``).
CONDITIONS: tuple[str, ...] = (
    "baseline",
    "cited_removal",
    "random_removal",
    "full_isolation",
    "text_only_isolation",
    "uncited_removal",
    "uncited_mask",
    "leave_one_out",
    "random_subsets",
)
#: The reference agents (``graphtrail.agents.VARIANTS``) and baselines (``BASELINES``).
VARIANTS: tuple[str, ...] = ("agentic", "evidence_first", "visited_only")
BASELINES: tuple[str, ...] = ("llm_only", "rag", "graphrag_local")
#: The evaluation's run cache in ``--out`` (``graphtrail.evaluators.replay.cache.RUNS_FILE``).
RUNS_FILE = "runs.jsonl"

_DATABASE_SCHEMES = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")


def looks_like_graph_database(value: str) -> bool:
    """Whether ``--kg`` / ``--to`` names a graph database (``graphtrail.kg.backends.is_graph_database``)."""
    low = value.lower()
    return low.startswith(_DATABASE_SCHEMES) or low.startswith("lbug:") or low.endswith(".lbug")
