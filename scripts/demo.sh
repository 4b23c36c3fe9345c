#!/usr/bin/env bash
# Runs `interpreter exec` on a small buggy repo against the bundled mock model (no key, no
# network): the agent runs the tests, reads the file, patches it, re-runs the tests, and the
# run's diff is printed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -q -p interpreter -p interpreter-tests
work=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cp -r tests/demo-repo "$work/repo"
git -C "$work/repo" init -q
target/release/mock-llm --script tests/scripts/demo.json >"$work/mock.out" 2>"$work/mock.err" &
mock_pid=$!
for _ in $(seq 100); do [ -s "$work/mock.out" ] && break; sleep 0.05; done
url=$(awk '{print $2}' "$work/mock.out")
echo "The unit tests in stats.py fail. Find the bug and fix it." |
  OPENINTERPRETER_HOME="$work/home" target/release/interpreter exec --diff -C "$work/repo" \
    -c 'model_provider="mock"' -c "model_providers.mock.base_url=\"$url\"" -c 'model="kimi-k3"' \
    >"$work/run.diff"
echo
echo "=== the run's diff (interpreter exec --diff) ==="
cat "$work/run.diff"
