"""Version 2 of the support agent: a "tidier answers" change that cites fewer entities.

The change under review asks the agent to cite only the question's topic and
the answer. Its answers stay right, so an accuracy check passes; but for the
two-hop questions the bridge entity it walked through (the country between a
city and its language, say) now decides the answer without being cited. That
is the regression ``graphtrail compare`` exists to catch: coverage and
fidelity drop, and hidden influencers appear.
"""

from __future__ import annotations

from typing import Any

from graphtrail.agents import OfflineChatModel, create_graphrag_agent


def build_agent(kg: Any, model: Any = None) -> Any:
    """The v2 agent over ``kg``: the offline policy citing only topic and answer (``cite="endpoints"``)."""
    return create_graphrag_agent(model or OfflineChatModel(cite="endpoints"), kg, name="support-agent-v2")
