"""Turn command-line strings into graphtrail objects, or an :class:`InputError`.

Every check here runs *before* any long work starts, so that a typo costs the
user one line of output, not a half-finished evaluation.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = [
    "check_kg_arg",
    "check_questions_arg",
    "check_agent_spec",
    "load_kg_arg",
    "load_questions_arg",
    "load_agent_factory",
    "check_model",
    "parse_conditions",
    "guard_out_dir",
    "known_variants",
]

def known_variants() -> tuple[str, ...]:
    """The reference agents ``--variant`` accepts: the agentic variants, then the baselines."""
    from .names import BASELINES, VARIANTS

    return VARIANTS + BASELINES


def _looks_like_path(value: str) -> bool:
    return any(sep in value for sep in ("/", "\\")) or Path(value).suffix != "" or Path(value).exists()


def check_kg_arg(value: str) -> None:
    """Refuse a ``--kg`` path that does not exist, before anything heavy is imported."""
    from .names import looks_like_graph_database

    if not looks_like_graph_database(value) and _looks_like_path(value) and not Path(value).exists():
        raise InputError(
            f"knowledge graph not found: {value}",
            "pass an existing file/folder (triples TSV/CSV, node-link JSON, GraphML, GraphRAG output) "
            "or a bundled name (graphtrail kg list)",
        )


def check_questions_arg(value: str) -> None:
    """Refuse a ``--questions`` path that does not exist, is not a regular file, or holds only blank
    lines, before anything heavy is imported (the questions themselves are read later, as a stream)."""
    if not _looks_like_path(value):
        return
    path = Path(value)
    if not path.exists():
        raise InputError(
            f"questions file not found: {value}",
            "pass a JSONL file with one {\"id\", \"question\", \"answers\"} object per line, or a bundled name",
        )
    import stat

    if not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
        raise InputError(f"{value} is not a regular file (a pipe or a device)", "save the questions to a file first and pass its path")
    if path.is_file() and not _has_content(path):
        raise InputError(f"no questions in {value}", "add at least one JSONL line with id, question and answers")


def _has_content(path: Path) -> bool:
    """Whether ``path`` holds anything but whitespace (read in blocks: stops at the first that does)."""
    with path.open("rb") as fh:
        for n, block in enumerate(iter(lambda: fh.read(1 << 16), b"")):
            if (block.removeprefix(b"\xef\xbb\xbf") if n == 0 else block).strip():
                return True
    return False


def load_kg_arg(value: str) -> Any:
    """Load ``--kg``: a bundled name, a file/folder in a supported format, or a graph database."""
    check_kg_arg(value)
    from graphtrail.kg.loaders import load_kg
    from graphtrail.kg.backends import is_graph_database

    if is_graph_database(value):
        return load_kg(value)  # a missing .lbug file or an unreachable server raises KGError saying so
    import warnings

    from graphtrail.kg.errors import KGWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", KGWarning)
        kg = load_kg(value)
    for w in caught:  # one line each, like errors; other warnings go on as usual
        if issubclass(w.category, KGWarning):
            from graphtrail._secrets import scan_text

            print(scan_text(f"graphtrail: warning: {w.message}"), file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return kg


def load_questions_arg(value: str, limit: int | None = None) -> list[Any]:
    """Load ``--questions``: a bundled name or a JSONL file; optionally the first ``limit``."""
    import itertools

    check_questions_arg(value)
    from graphtrail.agents.question_stream import iter_questions

    if limit is not None and limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    # Streamed: --limit N reads N questions, a malformed line is reported when it is read,
    # and every line and question has a bound (graphtrail.agents.question_stream).
    questions = list(itertools.islice(iter_questions(value), limit))
    if not questions:
        raise InputError(f"no questions in {value}", "add at least one JSONL line with id, question and answers")
    return questions


def _import_module_or_file(module: str) -> Any:
    """Import ``pkg.mod`` or a ``path/to/file.py``; raise InputError when neither works."""
    if module.endswith(".py") or "/" in module or "\\" in module:
        path = Path(module)
        if not path.is_file():
            raise InputError(f"agent module file not found: {module}", "use MODULE:FACTORY with an importable module or an existing .py file")
        from .userfile import import_user_file

        return import_user_file(path, module)
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise InputError(
                f"cannot import agent module {module!r} (no module named {exc.name!r})",
                "run from the folder that holds it, set PYTHONPATH, or pass path/to/file.py:FACTORY",
            ) from None
        raise InputError(f"importing {module} failed: {exc}", "--debug shows the traceback") from exc
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import
        raise InputError(f"importing {module} failed: {type(exc).__name__}: {exc}", "--debug shows the traceback") from exc


def check_agent_spec(spec: str) -> tuple[str, str]:
    """``--agent MODULE:FACTORY`` split in two, or an InputError; a missing .py file is told at once."""
    module, sep, attr = spec.rpartition(":")
    # A Windows drive letter ("C:\\x.py") is not a separator we want.
    if not sep or not module or not attr or (len(module) == 1 and attr.startswith(("\\", "/"))):
        raise InputError(
            f"--agent must look like MODULE:FACTORY, got {spec!r}",
            "e.g. --agent my_agent:build_agent or --agent path/to/my_agent.py:build_agent",
        )
    if (module.endswith(".py") or "/" in module or "\\" in module) and not Path(module).is_file():
        raise InputError(f"agent module file not found: {module}", "use MODULE:FACTORY with an importable module or an existing .py file")
    return module, attr


def load_agent_factory(spec: str) -> Any:
    """Resolve ``--agent MODULE:FACTORY`` to the factory (or agent object) it names."""
    module, attr = check_agent_spec(spec)
    mod = _import_module_or_file(module)
    target: Any = mod
    for part in attr.split("."):
        if not hasattr(target, part):
            raise InputError(f"{module!r} has no attribute {attr!r}", f"check the name after ':' in --agent {spec}")
        target = getattr(target, part)
    if not callable(target) and not hasattr(target, "invoke"):
        raise InputError(f"--agent {spec} is neither a factory function nor an agent", "point it at a function that returns a LangGraph/LangChain agent")
    return target


def _is_agent_object(target: Any) -> bool:
    """``--agent`` named a built agent (e.g. a compiled graph), not a factory to call."""
    return hasattr(target, "invoke") and not inspect.isfunction(target) and not inspect.isclass(target)


def _parameters(target: Any) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(target).parameters
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return {}


def factory_wants_model(target: Any, model_given: bool) -> bool:
    """Whether to pass ``model=``: when ``--model`` was given and the factory takes it, or it requires it."""
    if _is_agent_object(target):
        return False
    params = _parameters(target)
    param = params.get("model")
    if param is None:
        return model_given and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return model_given or param.default is inspect.Parameter.empty


def build_agent_from_factory(target: Any, *, model: Any, kg: Any, spec: str) -> Any:
    """Call a user factory with the keyword arguments it declares (``kg``, and ``model`` unless None)."""
    if _is_agent_object(target):
        return target
    params = _parameters(target)
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    offered = (("model", model), ("kg", kg)) if model is not None else (("kg", kg),)
    kwargs = {k: v for k, v in offered if accepts_any or k in params}
    try:
        agent = target(**kwargs)
    except TypeError as exc:
        raise InputError(
            f"could not call agent factory {spec}: {exc}",
            "the factory may take `model` and/or `kg` keyword arguments and must return an agent",
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's code failed, not graphtrail
        raise InputError(
            f"agent factory {spec} raised {type(exc).__name__}: {exc}", "fix the factory; --debug shows the traceback"
        ) from exc
    if not hasattr(agent, "invoke") and not callable(agent):
        raise InputError(f"agent factory {spec} returned {type(agent).__name__}, not an agent", "return a LangGraph/LangChain runnable")
    return agent


def load_graph_arg(value: str) -> Any:
    """``--graph``: the data the agent is built from: ``file.py:NAME`` (an object, or a function returning one)
    or anything ``--kg`` reads (a bundled name, a graph file or folder)."""
    module, sep, attr = value.rpartition(":")
    if sep and attr.isidentifier() and (module.endswith(".py") or (module and not _looks_like_path(module))):
        target = getattr(_import_module_or_file(module), attr, None)
        if target is None:
            raise InputError(f"{module!r} has no attribute {attr!r}", f"check the name after ':' in --graph {value}")
        try:
            return target() if inspect.isfunction(target) else target
        except Exception as exc:  # noqa: BLE001 - the user's code failed, not graphtrail
            raise InputError(f"--graph {value} raised {type(exc).__name__}: {exc}", "fix the function; --debug shows the traceback") from exc
    return load_kg_arg(value)


def graph_factory(target: Any, *, model: Any, spec: str) -> Any:
    """``data -> agent`` from ``--agent MODULE:FACTORY`` for the factory route: ``FACTORY(kg=data[, model=])``
    when it takes ``kg``, else ``FACTORY(data[, model=])``."""
    if _is_agent_object(target):
        raise InputError(f"--agent {spec} names a built agent; with --graph it must name the function that builds it",
                         "point --agent at a function that takes the graph and returns the agent")
    params = _parameters(target)
    if "kg" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return lambda data: build_agent_from_factory(target, model=model, kg=data, spec=spec)

    def build(data: Any) -> Any:
        kwargs = {"model": model} if model is not None and "model" in params else {}
        try:
            return target(data, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the user's code failed, not graphtrail
            raise InputError(f"agent factory {spec} raised {type(exc).__name__}: {exc}", "fix the factory; --debug shows the traceback") from exc

    return build


def check_model(model: str) -> str:
    """Validate ``--model`` without importing a provider: ``offline`` or ``provider:name``."""
    if model == "offline" or model.startswith("offline:"):
        return model
    provider, sep, name = model.partition(":")
    if not sep or not provider or not name:
        raise InputError(
            f"--model must be 'offline' or 'provider:model', got {model!r}",
            "e.g. --model offline or --model openai:gpt-4o-mini",
        )
    providers = _langchain_providers()
    if providers is None:  # older/newer langchain: let init_chat_model judge
        return model
    if provider not in providers:
        raise InputError(
            f"unknown model provider {provider!r} in --model {model}",
            "use one of: offline, " + ", ".join(sorted(providers)),
        )
    return model


def _langchain_providers() -> list[str] | None:
    """The providers ``init_chat_model`` knows (``langchain.chat_models.base._BUILTIN_PROVIDERS``).

    Read from the module's source rather than imported: importing it loads LangChain, seconds
    before a mistyped ``--model`` could be answered. ``None`` when it cannot be found.
    """
    import ast
    import importlib.util

    try:
        spec = importlib.util.find_spec("langchain")
        roots = list(spec.submodule_search_locations or []) if spec is not None else []
        for root in roots:
            source = Path(root, "chat_models", "base.py")
            if not source.is_file():
                continue
            for node in ast.parse(source.read_text(encoding="utf-8")).body:
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
                if isinstance(target, ast.Name) and target.id == "_BUILTIN_PROVIDERS" and node.value is not None:
                    value = node.value
                    keys = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", [])
                    found = [k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                    return found or None
    except (OSError, SyntaxError, ValueError, ImportError):
        return None
    return None


def parse_conditions(values: Sequence[str] | None, known: Iterable[str]) -> list[str] | None:
    """``--conditions a,b --conditions c`` -> ``[a, b, c]``; ``all`` means every condition."""
    if not values:
        return None
    known = list(known)
    out: list[str] = []
    for value in values:
        for name in (v.strip() for v in value.split(",")):
            if not name:
                continue
            if name == "all":
                out.extend(c for c in known if c not in out)
                continue
            if name not in known:
                raise InputError(f"unknown condition {name!r}", "choose from: " + ", ".join(known))
            if name not in out:
                out.append(name)
    if not out:
        raise InputError("--conditions is empty", "choose from: " + ", ".join(known))
    return out


def guard_out_dir(out: Path, produced: Iterable[str], *, force: bool, resume: bool = False, flag_hint: str = "--force") -> list[Path]:
    """Refuse to overwrite results already in ``out``; return the files that exist.

    A non-empty folder graphtrail did not make is refused (graphtrail._outdir.claim), and so is one
    another graphtrail process is writing to (its lock).
    """
    if out.exists() and not out.is_dir():
        raise InputError(f"output path {out} is a file, not a directory", "pass --out with a directory path")
    existing = [out / name for name in produced if (out / name).exists() or (out / name).is_symlink()]
    if existing and not (force or resume):
        names = ", ".join(p.name for p in existing)
        raise InputError(
            f"{out} already holds results ({names})",
            f"pass {flag_hint} to overwrite them, or --out to choose another directory",
        )
    from graphtrail._outdir import check

    # A non-empty folder graphtrail did not make is refused, and so is one another live
    # graphtrail is writing to; nothing is created here (bad input must leave no trace).
    check(out, force=force or bool(existing), resume=resume)
    return existing
