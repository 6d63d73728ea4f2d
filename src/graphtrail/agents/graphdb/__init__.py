"""Moved to :mod:`graphtrail.kg.backends`: this old path warns on import and is removed in graphtrail 0.3.0.

``graphtrail.agents.graphdb.X`` is ``graphtrail.kg.backends.X`` the same way (see ``graphtrail._moved``).
"""

from ..._moved import moved

moved(__name__, "graphtrail.kg.backends")
