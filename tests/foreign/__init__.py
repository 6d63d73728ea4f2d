"""Agents written the way the LangChain/LangGraph docs write them (not graphtrail's way), evaluated end to end.

world.py holds the film graph, its tools and the scripted model that doubles as
the spy (what the model saw, under which filter).
"""
