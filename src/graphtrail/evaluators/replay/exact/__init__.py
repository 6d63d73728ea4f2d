"""The exact route: ablation on the data itself, so every condition is the paper's own experiment.

- :mod:`.ablate`: ``ablated(data, graph_filter)`` for graphtrail's KnowledgeGraph,
  networkx graphs (:mod:`.nxgraph`), LangChain Documents, dicts of records, pandas
  tables (:mod:`.frames`), and ``register_ablation`` for any other type;
- :mod:`.factory`: ``evaluate(make_agent, questions, graph=G)``, the agent rebuilt
  on each condition's ablated data (memoised per distinct ablation);
- :mod:`.recognise`: what a factory run visited, recognised by value against ``G``.

The data-source wrappers of the filter-free route for tools over a live source
(``ablated_view``, ``ablated_driver``, ``ablated_connection``) live in
:mod:`graphtrail.kg` (tools import them without the evaluators). The fallback,
the output filter and its two checks, is :mod:`..filtered`
(:mod:`..filtered.filters`, :mod:`..filtered.leaks`, :mod:`..filtered.overfilter`; docs/ablations.md, "Routes").
"""

from .ablate import Keys, UnsupportedData, ablated, catalogue, register_ablation
from .factory import AgentFactory
from .frames import EntityTables

__all__ = ["ablated", "register_ablation", "catalogue", "Keys", "EntityTables", "AgentFactory", "UnsupportedData"]
