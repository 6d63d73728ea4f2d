#!/usr/bin/env bash
# Build what the `neo4j` pytest marker needs: a real Neo4j 5.26 LTS (Neo4j's own test harness,
# org.neo4j.test:neo4j-harness from Maven Central) behind the one-class launcher in
# tests/neo4j_launcher, which prints the Bolt URI of a loopback server and runs until stdin closes.
#
# Why a script: resolving the harness downloads ~150 MB of jars (about a minute). We compile the
# launcher once and copy its runtime classpath into a cache outside the work tree, so a fresh clone
# on the same machine (CI) starts Neo4j with no Maven run at all.
#
# Idempotent: a cache whose stamp matches the launcher's sources is reused. Exit 0 when the
# launcher is built; non-zero with a message on stderr otherwise, so callers can skip the marker.
#
# Usage: install_neo4j_harness.sh [--cached-only]
#   --cached-only   never run Maven: fail (exit 2) unless the launcher is already built.
#
# Environment:
#   GRAPHTRAIL_NEO4J_CACHE   where the launcher goes (default ~/.cache/graphtrail/neo4j);
#                            tests/neo4j_server.py reads the same variable
#   MVN, JAVA                the Maven and Java commands (default: mvn, java)
set -euo pipefail

CACHED_ONLY=0
case "${1:-}" in
    "") ;;
    --cached-only) CACHED_ONLY=1 ;;
    *) echo "usage: $0 [--cached-only]" >&2; exit 64 ;;
esac

HERE="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$HERE/tests/neo4j_launcher"
CACHE="${GRAPHTRAIL_NEO4J_CACHE:-$HOME/.cache/graphtrail/neo4j}"
MVN="${MVN:-mvn}"
JAVA="${JAVA:-java}"

say() { echo "install_neo4j_harness: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# The stamp: a hash of everything that decides what gets built.
stamp="$(cat "$SRC/pom.xml" "$SRC"/src/main/java/graphtrail/*.java | sha256sum | cut -c1-16)"

if [ -f "$CACHE/STAMP" ] && [ "$(cat "$CACHE/STAMP")" = "$stamp" ] && [ -d "$CACHE/classes" ] && [ -d "$CACHE/lib" ]; then
    say "launcher already built in $CACHE"
    exit 0
fi
if [ "$CACHED_ONLY" = 1 ]; then
    say "no launcher built for these sources in $CACHE and --cached-only given: not running Maven"
    exit 2
fi
command -v "$JAVA" >/dev/null 2>&1 || fail "no java on PATH (Neo4j 5.26 needs Java 17)"
java_major="$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
[ -n "$java_major" ] && [ "$java_major" -ge 17 ] || fail "Java 17 or newer needed, found '${java_major:-unknown}'"
command -v "$MVN" >/dev/null 2>&1 || fail "no mvn on PATH (Maven builds the launcher)"

mkdir -p "$(dirname "$CACHE")" || fail "cannot create $(dirname "$CACHE")"
work="$(mktemp -d "$(dirname "$CACHE")/.neo4j-build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$SRC/pom.xml" "$SRC/src" "$work/"
say "building the Neo4j harness launcher (downloads ~150 MB from Maven Central the first time)"
start=$(date +%s)
if ! (cd "$work" && "$MVN" -q -B compile dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$work/lib") >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    fail "mvn build of tests/neo4j_launcher (log tail above; needs Maven Central)"
fi
mkdir -p "$work/out"
mv "$work/target/classes" "$work/out/classes"
mv "$work/lib" "$work/out/lib"
echo "$stamp" >"$work/out/STAMP"
# Swap in only once complete, so an interrupted build never leaves a cache that later runs trust.
rm -rf "$CACHE.old"
[ -e "$CACHE" ] && mv "$CACHE" "$CACHE.old"
mv "$work/out" "$CACHE"
rm -rf "$CACHE.old"
say "ok: launcher in $CACHE (built in $(( $(date +%s) - start )) s); start it with:"
say "  $JAVA -cp '$CACHE/classes:$CACHE/lib/*' graphtrail.Neo4jLauncher"
