from .model import *  # noqa: F401,F403
from .model import JUDGE_TEXT, TraversalNode  # noqa: F401
