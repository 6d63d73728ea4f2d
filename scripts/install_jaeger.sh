#!/usr/bin/env bash
# Install what the `jaeger` pytest marker needs: the Jaeger v2 binary (one program:
# collector with OTLP receivers, in-memory storage, query API and UI).
#
# Why a script: Jaeger ships no PyPI package, and prebuilt release binaries cannot be
# downloaded here; the Go module proxy can serve its source, so we build it with
# `go install` once (10-45 min on 2 shared cores: 44 min measured) into a cache
# outside the work tree. A fresh clone on the same machine (CI) then finds it at once,
# and an interrupted build resumes from Go's build cache.
#
# Idempotent. Exit 0 when the cached binary runs and reports the pinned version;
# non-zero with a message on stderr otherwise, so callers can skip the marker.
#
# Usage: install_jaeger.sh [--cached-only]
#   --cached-only   never build: fail (exit 2) unless the binary is already cached.
#
# Environment:
#   GRAPHTRAIL_BIN_CACHE   binary cache dir (default ~/.cache/graphtrail/bin)
#   JAEGER_VERSION         Jaeger module version to build (default below)
#   GO                     go command (default: go on PATH, else /usr/local/go/bin/go)
set -euo pipefail

CACHED_ONLY=0
case "${1:-}" in
    "") ;;
    --cached-only) CACHED_ONLY=1 ;;
    *) echo "usage: $0 [--cached-only]" >&2; exit 64 ;;
esac

JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"
CACHE="${GRAPHTRAIL_BIN_CACHE:-$HOME/.cache/graphtrail/bin}"
TARGET="$CACHE/jaeger-$JAEGER_VERSION"

say() { echo "install_jaeger: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# The binary is complete only once moved into place (see below), so "exists and
# runs" is enough to trust it.
installed_ok() {
    [ -x "$TARGET" ] && "$TARGET" version >/dev/null 2>&1
}

if installed_ok; then
    say "jaeger $JAEGER_VERSION already built: $TARGET"
    exit 0
fi
if [ "$CACHED_ONLY" = 1 ]; then
    say "no cached jaeger $JAEGER_VERSION in $CACHE and --cached-only given: not building"
    exit 2
fi

GO="${GO:-$(command -v go || true)}"
[ -z "$GO" ] && [ -x /usr/local/go/bin/go ] && GO=/usr/local/go/bin/go
[ -n "$GO" ] || fail "Go is not installed (needed to build Jaeger from the Go module proxy)"

mkdir -p "$CACHE" || fail "cannot create binary cache $CACHE"
build_dir="$(mktemp -d)"
trap 'rm -rf "$build_dir"' EXIT
say "building jaeger $JAEGER_VERSION with $("$GO" version) into $CACHE (10-45 min on 2 cores)"
start=$(date +%s)
# `go install cmd@version` refuses modules whose go.mod has replace directives, and
# Jaeger's has one (sarama). So build inside a throwaway module that requires Jaeger
# as a tool and repeats that replace, then `go build` the command from it.
mkdir -p "$build_dir/mod"
(
    cd "$build_dir/mod"
    export GOFLAGS="-buildvcs=false" GOWORK=off
    "$GO" mod init graphtrail.local/jaegerbuild
    "$GO" mod edit -replace github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0
    "$GO" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION"
    nice -n 10 "$GO" build -trimpath -o "$build_dir/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
) >"$build_dir/build.log" 2>&1 || {
    tail -n 40 "$build_dir/build.log" >&2
    fail "building github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION (log tail above; needs the Go module proxy)"
}
# Move into the cache only once complete, so an interrupted build never leaves a
# half-written binary that later runs would trust.
mv "$build_dir/jaeger" "$TARGET.tmp" && mv "$TARGET.tmp" "$TARGET" || fail "no binary produced"
ln -sf "jaeger-$JAEGER_VERSION" "$CACHE/jaeger"
say "built in $(( $(date +%s) - start )) s"
installed_ok || fail "$TARGET does not run ('jaeger version' failed)"
say "ok: $TARGET"
