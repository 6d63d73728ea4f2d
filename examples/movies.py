"""An agent as the LangChain docs write one: two ``@tool`` functions that return JSON, a chat model, no graphtrail.

README.md ("Your own agent and tools work too") and docs/ablations.md evaluate it.
It answers in a sentence ("Inception was directed by Christopher Nolan.") and
cites nothing explicitly: no ``submit_answer`` tool, no ``[E:id]`` markers.

``StandInModel`` stands in for an LLM so the example runs offline with no key:
it reads the tool results as a model would, and says it does not know when the
director is not among them. Pass your own model instead (``init_chat_model(...)``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

MOVIES = {"m1": "Inception", "m2": "Titanic"}
PEOPLE = {"p1": "Christopher Nolan", "p2": "Leonardo DiCaprio", "p3": "James Cameron", "p4": "Kate Winslet"}
EDGES = [("p1", "DIRECTED", "m1"), ("p2", "ACTED_IN", "m1"), ("p3", "DIRECTED", "m2"), ("p2", "ACTED_IN", "m2"),
         ("p4", "ACTED_IN", "m2")]


@tool
def search_movies(title: str) -> str:
    """Find movies whose title contains the given text."""
    return json.dumps([{"id": i, "name": n, "type": "Movie"} for i, n in MOVIES.items() if title.lower() in n.lower()])


@tool
def movie_people(movie_id: str) -> str:
    """People linked to a movie, with how they are linked."""
    edges = [{"source": s, "relation": r, "target": t} for s, r, t in EDGES if t == movie_id]
    people = [{"id": e["source"], "name": PEOPLE[e["source"]], "type": "Person"} for e in edges]
    return json.dumps({"movie": movie_id, "people": people, "edges": edges})


def _last(messages: Sequence[BaseMessage], name: str) -> Any:
    for msg in reversed(messages):
        if isinstance(msg, ToolMessage) and msg.name == name:
            return json.loads(str(msg.content))
    return None


class StandInModel(BaseChatModel):
    """Searches the movie the question names, lists its people, answers in a sentence from what it read."""

    @property
    def _llm_type(self) -> str:
        return "movies-stand-in"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> StandInModel:  # type: ignore[override]
        return self

    def _reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        question = str(next(m.content for m in messages if m.type == "human"))
        title = question.rstrip("?").split()[-1]  # "Who directed Inception?" -> Inception
        found = _last(messages, "search_movies")
        if found is None:
            return AIMessage(content="", tool_calls=[{"name": "search_movies", "args": {"title": title}, "id": "c1"}])
        if not found:
            return AIMessage(content=f"I could not find {title}.")
        people = _last(messages, "movie_people")
        if people is None:
            return AIMessage(content="", tool_calls=[{"name": "movie_people", "args": {"movie_id": found[0]["id"]}, "id": "c2"}])
        names = {p["id"]: p["name"] for p in people["people"]}
        director = next((names[e["source"]] for e in people["edges"] if e["relation"] == "DIRECTED"), None)
        if director is None:
            return AIMessage(content=f"I don't know who directed {found[0]['name']}.")
        return AIMessage(content=f"{found[0]['name']} was directed by {director}.")

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])
