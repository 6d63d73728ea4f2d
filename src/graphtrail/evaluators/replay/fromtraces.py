"""Questions taken from production traces, for ``graphtrail eval --from-traces``.

A benchmark's questions say little about what customers ask; the questions in
production traces do. Each root span of a traced run carries the question
(``graphtrail.question``, recorded in the ``full`` content mode), so the replay
evaluation can run on real traffic: questions are de-duplicated (many users ask
the same), sampled with a seed (reproducible, and a replay evaluation costs
model calls per question and condition), and keep the ids of the production
runs they came from. Every replay of such a question then carries an
OpenTelemetry span link to those runs (:func:`production_links`, read by the
replay runner), and ``graphtrail annotate`` writes the verdict back onto them.

Production traffic has no gold answers. A question gets them only when the
user supplies an answers file; otherwise the scores that need none lead
(changed outputs per condition, influence as a change of output, citation
support, fidelity) and accuracy is not shown.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["questions_from_traces", "production_links", "normalize_question", "recorded_models", "MAX_LINKS_PER_QUESTION"]

#: A popular question may have thousands of production runs: its replays link to the first ones only.
MAX_LINKS_PER_QUESTION = 16
PRODUCTION_FIELD = "production_traces"


def normalize_question(text: str) -> str:
    """The form questions are de-duplicated and matched by: case-folded, whitespace collapsed, end punctuation dropped."""
    return re.sub(r"\s+", " ", text).strip().rstrip("?!. ").casefold()


def _is_replay(traj: Any) -> bool:
    return "condition" in (getattr(traj, "metadata", None) or {})


def questions_from_traces(
    trajectories: Iterable[Any],
    *,
    sample: int | None = None,
    seed: int = 0,
    gold: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """De-duplicated, seeded-sampled questions of production runs, each with the runs it came from.

    - ``trajectories``: runs read back from traces; replays of an evaluation and
      runs without a recorded question are skipped;
    - ``sample``: how many questions to keep (all when None or larger than what there is);
      the draw depends only on ``seed`` and the set of questions, not on their order in the file;
    - ``gold``: questions with answers (``load_questions`` objects or dicts); one whose
      text matches a production question gives it its ``answers`` (and ``answer_ids``).

    Each question is a dict: ``id`` (``t-`` + a hash of the normalized text, stable
    across files), ``question``, ``answers`` (empty without gold), ``production_traces``
    (``[trace_id, span_id]`` pairs, first seen first), ``runs`` (how many production
    runs asked it) and ``production_answer`` (the first run's answer).
    """
    by_text: dict[str, dict[str, Any]] = {}
    for traj in sorted(trajectories, key=lambda t: t.start_time or 0.0):
        text = getattr(traj, "question", None)
        if _is_replay(traj) or not isinstance(text, str) or not text.strip():
            continue
        key = normalize_question(text)
        entry = by_text.get(key)
        if entry is None:
            entry = by_text[key] = {
                "id": "t-" + hashlib.sha1(key.encode()).hexdigest()[:10],
                "question": text.strip(),
                "answers": [],
                PRODUCTION_FIELD: [],
                "runs": 0,
                "production_answer": traj.answer,
            }
        entry["runs"] += 1
        if traj.trace_id and traj.span_id and len(entry[PRODUCTION_FIELD]) < MAX_LINKS_PER_QUESTION:
            entry[PRODUCTION_FIELD].append([traj.trace_id, traj.span_id])
    keys = sorted(by_text)  # a sample must not depend on the order traces were read in
    if sample is not None and sample < len(keys):
        keys = sorted(random.Random(seed).sample(keys, sample))
    picked = [by_text[k] for k in keys]
    if gold:
        golden = {normalize_question(str(_field(q, "question") or "")): q for q in gold}
        for entry in picked:
            match = golden.get(normalize_question(entry["question"]))
            if match is not None:
                entry["answers"] = [str(a) for a in _field(match, "answers") or []]
                ids = _field(match, "answer_ids")
                if ids:
                    entry["answer_ids"] = [str(i) for i in ids]
    return picked


def _field(q: Any, name: str) -> Any:
    return q.get(name) if isinstance(q, Mapping) else getattr(q, name, None)


def production_links(question: Any) -> list[tuple[str, str]]:
    """The ``(trace_id, span_id)`` pairs a replay of ``question`` links to: the production runs it came from.

    Empty for questions that did not come from traces. Malformed pairs are dropped:
    a link is a courtesy to the reader of the trace and never fails a replay.
    """
    pairs = _field(question, PRODUCTION_FIELD) if question is not None else None
    out: list[tuple[str, str]] = []
    for pair in pairs or []:
        if (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
                and re.fullmatch(r"[0-9a-f]{32}", pair[0]) and re.fullmatch(r"[0-9a-f]{16}", pair[1])):
            out.append((pair[0], pair[1]))
    return out


def recorded_models(trajectories: Iterable[Any]) -> list[str]:
    """The models production runs called (``gen_ai.request.model``/``response.model`` on their model spans), commonest first.

    A replay is a measurement of the model it replays: replaying production
    traffic with another model measures that model, not production's. The CLI
    replays the first of these unless ``--model`` says otherwise.
    """
    from collections import Counter

    seen: Counter[str] = Counter()
    for traj in trajectories:
        if _is_replay(traj):
            continue
        for call in getattr(traj, "model_calls", None) or []:
            model = getattr(call, "model", None)
            if isinstance(model, str) and model.strip():
                seen[model.strip()] += 1
    return [m for m, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]
