"""Version 1 of a support agent: it cites every entity on the path it walked.

This is the version whose evaluation is stored as the baseline
(``baseline/results.json``). ``graphtrail eval --agent agent_v1.py:build_agent``
calls :func:`build_agent` with the graph, and with ``model=`` only when
``--model`` is given; without it the offline model stands in for an LLM.
"""

from __future__ import annotations

from typing import Any

from graphtrail.agents import OfflineChatModel, create_graphrag_agent


def build_agent(kg: Any, model: Any = None) -> Any:
    """The v1 agent over ``kg``: the offline policy citing its whole path (``cite="path"``)."""
    return create_graphrag_agent(model or OfflineChatModel(cite="path"), kg, name="support-agent-v1")
