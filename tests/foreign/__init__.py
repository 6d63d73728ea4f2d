"""Agents written the way the LangChain and LangGraph docs write them, traced and evaluated by graphtrail."""
