"""The factory route: the agent rebuilt on really-ablated data for every condition (the paper's own experiment).

``evaluate(make_agent, questions, graph=G)``: the baseline runs ``make_agent(G)``;
an ablation run runs ``make_agent(ablated(G, condition))`` (:mod:`.ablate`). No
output filter runs, so nothing guesses a tool output's shape: every condition is
exact by construction. The agent is built once per distinct ablation (same
hidden, masked and text-blocked sets: same agent; trials and repeats share it).

What the agent visited is recognised by value against ``G`` (:mod:`.recognise`).
The model-input check still runs: a withheld entity that reaches the model
although the ablated data does not hold it came through another path than
``graph=`` (a prompt, a second store), and that condition is invalid.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ....kg.views import GraphFilter
from ...errors import EvaluationError
from ..filtered.leaks import EntityNames, input_leaks
from ..seen import SeenInputs
from .ablate import Keys, ablated, catalogue
from .excuse import Analyses, CatalogueShown, data_shown, data_strings
from .excuse import _version as excuse_version
from .recognise import ValueIndex, recognise

__all__ = ["AgentFactory", "ROUTE", "data_strings"]

#: ``RunRecord.route`` of a run of this route.
ROUTE = "factory"

#: Agents kept at once (one per distinct ablation); the oldest built is dropped first.
MAX_AGENTS = 1024


def _key(graph_filter: GraphFilter | None) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    if graph_filter is None:
        return frozenset(), frozenset(), frozenset()
    return graph_filter.hidden, graph_filter.masked, graph_filter.text_blocked


class AgentFactory:
    """``make_agent`` and the user's data: builds (once per distinct ablation) and traces the agent of a condition."""

    def __init__(self, make_agent: Callable[[Any], Any], data: Any, *, keys: Keys | None = None,
                 trace: Callable[[Any], Any] = lambda agent: agent, kg: Any = None) -> None:
        if not callable(make_agent):
            raise EvaluationError(f"with graph=, the agent must be a function that builds it from the graph, "
                                  f"got {type(make_agent).__name__}")
        self.make_agent, self.data, self.keys, self.trace = make_agent, data, keys or Keys(), trace
        self.kg = kg if kg is not None else catalogue(data, self.keys)  # raises UnsupportedData for an unknown type
        self.index = ValueIndex(self.kg) if self.kg is not None else None
        self._agents: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        # the last filter objects asked for, by identity: a job's trials share one GraphFilter, and comparing
        # two equal sets of a whole-graph isolation entity by entity costs milliseconds
        self._recent: dict[int, tuple[GraphFilter, Any]] = {}
        # the excuse (.excuse): per distinct ablation, entity -> whether the ablated data shows it
        self._excused: dict[tuple[Any, ...], dict[str, bool]] = {}
        self._data_excused: dict[tuple[Any, ...], frozenset[str]] = {}
        self._catalogue_strings: CatalogueShown | None = None
        self._analyses: Analyses | None = None
        self._lock = threading.Lock()
        self.built = 0  # agents built (for tests and the benchmark)
        self.baseline = self.agent_for(None)

    def agent_for(self, graph_filter: GraphFilter | None) -> Any:
        """The traced agent built on the data ``graph_filter`` leaves (the baseline's for ``None``/empty)."""
        if graph_filter is not None:
            recent = self._recent.get(id(graph_filter))
            if recent is not None and recent[0] is graph_filter:
                return recent[1]
        key = _key(graph_filter)
        with self._lock:
            agent = self._agents.get(key)
            if agent is not None:
                self._remember(graph_filter, agent)
                return agent
            try:
                built = self.make_agent(ablated(self.data, graph_filter, self.keys))
            except EvaluationError:
                raise
            except Exception as exc:
                raise EvaluationError(f"make_agent failed on the data of an ablation: {type(exc).__name__}: {exc}") from exc
            if built is None or not (callable(built) or hasattr(built, "ainvoke")):
                raise EvaluationError(f"make_agent must return a Runnable, a compiled graph or a callable, "
                                      f"got {type(built).__name__}")
            agent = self._agents[key] = self.trace(built)
            self.built += 1
            while len(self._agents) > MAX_AGENTS:
                self._agents.popitem(last=False)
            self._remember(graph_filter, agent)
            return agent

    def _remember(self, graph_filter: GraphFilter | None, agent: Any) -> None:
        if graph_filter is not None:
            if len(self._recent) >= MAX_AGENTS:
                self._recent.clear()
            self._recent[id(graph_filter)] = (graph_filter, agent)

    def recognise(self, trajectory: Any, graph_filter: GraphFilter | None, mode: Any, names: EntityNames | None = None) -> Any:
        """``trajectory`` with what its tools showed recognised by value; ``names``: the job's, whose index of the
        catalogue's names (when it holds those alone) serves free text here too."""
        if self.index is not None:
            self.index.share_names(names)
        return recognise(trajectory, self.index, graph_filter, mode)

    def _in_data(self, graph_filter: GraphFilter, names: EntityNames, entities: Iterable[str]) -> frozenset[str]:
        """Which of ``entities`` (withheld) the ablated data itself still shows (a visible passage naming a hidden one).

        Read through :mod:`.excuse`: the catalogue's strings normalised once per evaluation, and for each
        entity asked about only the strings that could show it; the answer is kept per distinct ablation.
        """
        key = _key(graph_filter)
        with self._lock:
            known = self._excused.setdefault(key, {})
        todo = [e for e in dict.fromkeys(entities) if e not in known]
        if todo:
            if graph_filter.hidden or graph_filter.masked:
                names.ensure(graph_filter.hidden)  # as the model-input check reads: hidden ids are looked for
            with self._lock:
                analyses = self._analyses
                if analyses is None or analyses.version != excuse_version(names):
                    analyses = self._analyses = Analyses(names)
                if self._catalogue_strings is None and self.kg is not None:
                    self._catalogue_strings = CatalogueShown(self.kg)
            shown: set[str] = set()
            if self._catalogue_strings is not None:
                shown |= self._catalogue_strings.shown(self.kg.filtered(graph_filter), graph_filter, analyses, todo)
            in_data = self._data_excused.get(key)
            if in_data is None:  # passages, cells, attributes as the user's data gives them
                strings = data_strings(ablated(self.data, graph_filter, self.keys))
                in_data = self._data_excused[key] = frozenset(data_shown(strings, analyses, graph_filter))
            shown |= in_data
            with self._lock:
                known.update((e, e in shown) for e in todo)
        return frozenset(e for e in entities if known.get(e))

    def leaks(self, seen: SeenInputs | None, graph_filter: GraphFilter, names: EntityNames,
              question: str) -> dict[str, list[str]] | None:
        """The model-input check of a factory run: withheld entities the model was given beyond what the ablated data shows."""
        if seen is None:
            return None
        found = input_leaks(seen, graph_filter, names, question)
        if not found:
            return found
        excused = self._in_data(graph_filter, names, {i for ids in found.values() for i in ids})
        kept: Mapping[str, list[str]] = {ch: [i for i in ids if i not in excused] for ch, ids in found.items()}
        return {ch: ids for ch, ids in kept.items() if ids}
