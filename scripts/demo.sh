#!/usr/bin/env bash
# Runs `interpreter exec` on a small buggy repo against the bundled mock model (no key, no
# network): the agent runs the tests, reads the file, patches it, re-runs the tests, and the
# run's diff is printed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# A dev build: the demo's work takes seconds either way, and a newcomer should not wait for
# the optimizer (the shipped build is scripts/dist.sh's `dist` profile).
started=$(date +%s)
cargo build -q -p interpreter -p interpreter-tests --bin interpreter --bin mock-llm
echo "demo.sh: built in $(($(date +%s) - started)) s" >&2
bin=${CARGO_TARGET_DIR:-$root/target}/debug
work=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cp -r tests/demo-repo "$work/repo"
git -C "$work/repo" init -q
"$bin/mock-llm" --script tests/scripts/demo.json >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$work/mock.out" ] && break; sleep 0.05; done
url=$(awk '{print $2}' "$work/mock.out")
echo "The unit tests in stats.py fail. Find the bug and fix it." |
  OPENINTERPRETER_HOME="$work/home" "$bin/interpreter" exec --diff -C "$work/repo" \
    -c 'model_provider="mock"' -c "model_providers.mock.base_url=\"$url\"" -c 'model="kimi-k3"' \
    >"$work/run.diff"
echo
echo "=== the run's diff (interpreter exec --diff) ==="
cat "$work/run.diff"
