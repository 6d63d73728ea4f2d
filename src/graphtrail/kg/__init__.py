"""graphtrail.kg: the knowledge graph the agents walk, and everything that loads, searches or serves it.

What it holds:

- :mod:`.graph`: :class:`KnowledgeGraph`, the in-memory graph and its read API,
  over the arrays of :mod:`.store`; :mod:`.records` holds the values it hands
  out (:class:`EntityRecord`, :class:`Relation`, :class:`TextUnit`,
  :class:`Community`), :mod:`.errors` what can go wrong, :mod:`.fields` the
  alias and relation conventions every source shares;
- :mod:`.views`: the ablation filter (:class:`GraphFilter`, :func:`use_filter`,
  :func:`active_filter`) that filtered views of the graph honour; :mod:`.live`,
  :mod:`.live_db` (with :mod:`.live_ablate`, :mod:`.live_neo4j`, :mod:`.live_ladybug`): the same
  condition at a user's own data
  source (a networkx graph, a Neo4j driver, a LadybugDB connection); :mod:`.relabel`: a masked
  node keyed by its name shown under a placeholder key in a networkx view;
- :mod:`.search`: entity search (ranking rules, full scan, index);
- :mod:`.communities`: seeded Leiden communities, computed lazily and cached;
- :mod:`.loaders`: :func:`load_kg` / :func:`save_kg`, one module per format
  family, and the bundled datasets;
- :mod:`.backends`: the backend protocol, the in-memory backend and the graph
  databases (LadybugDB, Neo4j) behind a shared Cypher layer.

What it may import: the standard library, third-party packages, and
graphtrail's tracer-free private helpers (``graphtrail._lines``,
``graphtrail._jsonread``, ``graphtrail._display``). Never ``graphtrail.agents``,
``graphtrail.evaluators``, ``graphtrail.cli`` or ``graphtrail.tracer``: those
import this package. Inside it, imports point one way: records, errors, fields
and views at the bottom, then the store, the graph, search and communities,
then the backends, then the loaders (which open databases through the
backends). Submodules import each other, never this ``__init__``.
"""

from .errors import KGError, MissingDependencyError
from .graph import KnowledgeGraph
from .live import ablated_view
from .live_db import ablated_connection, ablated_driver
from .loaders import BundledDataset, list_bundled, load_kg, save_kg
from .records import Community, EntityRecord, Relation, TextUnit
from .views import GraphFilter, active_filter, use_filter

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
    "ablated_view",
    "ablated_driver",
    "ablated_connection",
    "load_kg",
    "save_kg",
    "list_bundled",
    "BundledDataset",
    "MissingDependencyError",
]
