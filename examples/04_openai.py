"""The same agent and journeys with a real LLM: ChatOpenAI (needs a key; marked, not run offline).

    OPENAI_API_KEY=sk-... python examples/04_openai.py
    OPENAI_API_KEY=sk-... python examples/04_openai.py --eval --out openai-eval

Works with any OpenAI-compatible server (vLLM, Ollama, llama.cpp server)::

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=none OPENAI_MODEL=local python examples/04_openai.py

Without OPENAI_API_KEY it prints why and exits 0, so it never fails a run of
all examples. ``pip install 'graphtrail[openai]'`` for langchain-openai.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--eval", action="store_true", help="also run the replay evaluation (many model calls)")
    parser.add_argument("--out", default="graphtrail-openai-eval")
    args = parser.parse_args()

    if not os.environ.get("OPENAI_API_KEY"):
        print("skipped: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local OpenAI-compatible server) to run this example")
        return 0
    if importlib.util.find_spec("langchain_openai") is None:
        print("skipped: langchain-openai is not installed; pip install 'graphtrail[openai]'")
        return 0

    from langchain_openai import ChatOpenAI

    import graphtrail
    from my_agent import QUESTIONS, build_agent

    # ChatOpenAI reads OPENAI_API_KEY and OPENAI_BASE_URL itself.
    model = ChatOpenAI(model=args.model, temperature=0, timeout=60, max_retries=1)
    agent = graphtrail.trace_agent(build_agent(model), name="countries-agent-openai")

    for q in QUESTIONS:
        with graphtrail.capture() as captured:
            agent.invoke({"messages": [("user", q["question"])]}, config={"recursion_limit": 20})
        traj = captured.trajectories[0]
        print(f"{q['question']}\n  answer: {traj.answer!r}  citations: {traj.citations}  visited: {traj.visited}")
        print(f"  tools: {[s.tool for s in traj.steps]}  uncited: {traj.visited_uncited}")

    if args.eval:
        from graphtrail.evaluators import evaluate, register_tool_filter

        example = importlib.import_module("03_replay_evaluation")  # its filter and graph conversion
        register_tool_filter("related", example.filter_related)
        report = evaluate(build_agent(model), QUESTIONS, kg=example.as_knowledge_graph(), out_dir=args.out, model_name=args.model)
        for row in report.conditions:
            print(f"{row.condition:<22} {row.accuracy}")
        print(f"report: {Path(args.out) / 'report.html'}")
    graphtrail.tracer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
