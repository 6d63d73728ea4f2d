"""graphtrail.agents: reference GraphRAG agents over a networkx knowledge graph.

The knowledge graph itself (graph, loaders, filters, backends) lives in
:mod:`graphtrail.kg`; its names are exported here too, as before.
"""

from ..kg import (
    BundledDataset,
    Community,
    EntityRecord,
    GraphFilter,
    KGError,
    KnowledgeGraph,
    MissingDependencyError,
    Relation,
    TextUnit,
    active_filter,
    list_bundled,
    load_kg,
    save_kg,
    use_filter,
)
from .questions import Question, QuestionsError, load_questions
from . import answers
from .tools import make_graph_tools, make_submit_answer_tool
from .models import ModelResolutionError, resolve_model
from .offline import OfflineChatModel
from .graphrag import VARIANTS, GraphRulesMiddleware, create_graphrag_agent
from .baselines import BASELINES, graphrag_local, llm_only, rag
from .results import answer_from_result

__all__ = [
    "KnowledgeGraph",
    "EntityRecord",
    "Relation",
    "TextUnit",
    "Community",
    "KGError",
    "GraphFilter",
    "active_filter",
    "use_filter",
    "load_kg",
    "save_kg",
    "list_bundled",
    "BundledDataset",
    "MissingDependencyError",
    "load_questions",
    "Question",
    "QuestionsError",
    "answers",
    # graph tools, models, agents, baselines (issue 3)
    "make_graph_tools",
    "make_submit_answer_tool",
    "resolve_model",
    "ModelResolutionError",
    "OfflineChatModel",
    "create_graphrag_agent",
    "GraphRulesMiddleware",
    "VARIANTS",
    "llm_only",
    "rag",
    "graphrag_local",
    "BASELINES",
    "answer_from_result",
]
