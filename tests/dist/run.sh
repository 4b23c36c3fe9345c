#!/usr/bin/env bash
# End-to-end checks of what users install, all offline (local servers on 127.0.0.1 only):
#
#   tests/dist/run.sh [archive|npm|npx|install|vsix|action ...]     # default: all of them
#
# Needs dist/ from `scripts/dist.sh --npm --vsix` (the host's archive, npm tarballs, VSIX),
# target/debug/mock-llm (cargo build -p interpreter-tests) and tests/acp-node/node_modules
# (installed here when missing).
#
# - archive: unpacked in an empty folder, `interpreter` and `i` answer --version, the Linux
#   build is static, and an ACP initialize and a prompt go through the TypeScript ACP SDK.
# - npm: the launcher and platform tarballs installed into a temp prefix; `npx interpreter
#   --version` (timed: the first run after install), an ACP session through the launcher,
#   argv/stdio/exit codes/signals passing through, the missing-platform message.
# - npx: `npx -y @openinterpreter/interpreter` from a local registry serving the packed
#   tarballs (cold and warm --version timed), then as an ACP agent command.
# - install: scripts/install.sh against dist/ served over HTTP installs (latest and pinned)
#   and refuses a tampered archive and a missing checksum.
# - vsix: the platform VSIX holds extension/bin/interpreter with its exec bit.
# - action: scripts/action.sh as GitHub runs it (INPUT_* variables, GITHUB_OUTPUT) against
#   the mock in a temp git repo, installing from the local server; the patch applies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
target_dir=${CARGO_TARGET_DIR:-$root/target}
mock=$target_dir/debug/mock-llm
dist=$root/dist
py=$(python3 -c 'import sys; print(sys.executable)') # the real interpreter: its pid is the server's
version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')
host=$(rustc -vV | sed -n 's/^host: //p')
arch=${host%%-*}
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(archive npm npx install install_guards vsix action action_log action_review)

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "   ok: $*"; }

[ -x "$mock" ] || fail "$mock is missing: cargo build -p interpreter-tests"

# The archive dist.sh made for this machine: the static musl build, else the host's target.
# Only the parts that test what dist.sh made need it (see `needs_dist`).
find_archive() {
  archive_target=""
  for t in "$arch-unknown-linux-musl" "$host"; do
    if [ -f "$dist/interpreter-v$version-$t.tar.gz" ]; then
      archive_target=$t
      break
    fi
  done
  [ -n "$archive_target" ] || fail "no dist/interpreter-v$version-{$arch-unknown-linux-musl,$host}.tar.gz: run scripts/dist.sh --npm --vsix"
  archive=$dist/interpreter-v$version-$archive_target.tar.gz
  echo "-- dist archive: $archive ($(wc -c <"$archive") bytes)"
}
# The parts that build what they install from target/debug, without dist/.
needs_dist() {
  case $1 in
    action_log | action_review | install_guards) return 1 ;;
    *) return 0 ;;
  esac
}

archive=""
for p in "${parts[@]}"; do
  if needs_dist "$p" && [ -z "$archive" ]; then
    find_archive
    if [ ! -d tests/acp-node/node_modules ]; then
      (cd tests/acp-node && npm ci --omit=optional --ignore-scripts --no-audit --no-fund)
    fi
  fi
done

# serve DIR: starts a static server for DIR; sets $served to its URL.
serve() {
  : >"$tmp/serve.out"
  "$py" "$here/serve.py" "$1" >"$tmp/serve.out" 2>>"$tmp/serve.err" &
  pids+=($!)
  served=""
  for _ in $(seq 200); do
    served=$(sed -n 's/^SERVING //p' "$tmp/serve.out")
    [ -n "$served" ] && return 0
    sleep 0.05
  done
  fail "serve.py did not start: $(cat "$tmp/serve.err")"
}

# start_mock SCRIPT: sets $mock_url (…/v1).
start_mock() {
  : >"$tmp/mock.out"
  "$mock" --script "$1" >>"$tmp/mock.out" 2>>"$tmp/mock.err" &
  pids+=($!)
  mock_url=""
  for _ in $(seq 200); do
    mock_url=$(sed -n 's/^MOCK_LISTENING \(.*\)$/\1/p' "$tmp/mock.out")
    [ -n "$mock_url" ] && return 0
    sleep 0.05
  done
  fail "mock-llm did not start: $(cat "$tmp/mock.err")"
}

now_ms() { "$py" -c 'import time; print(int(time.time() * 1000))'; }

part_archive() {
  echo "== dist archive, unpacked in an empty folder"
  local x=$tmp/archive
  mkdir "$x"
  tar -xzf "$archive" -C "$x"
  [ "$(cd "$x" && ls -A | sort | tr '\n' ' ')" = "LICENSE README.md i interpreter " ] || fail "archive holds: $(ls -A "$x")"
  [ -L "$x/i" ] && [ "$(readlink "$x/i")" = interpreter ] || fail "i is not a symlink to interpreter"
  ok "holds interpreter, i -> interpreter, LICENSE, README.md"
  [ "$("$x/interpreter" --version)" = "interpreter $version" ] || fail "interpreter --version: $("$x/interpreter" --version)"
  [ "$("$x/i" --version)" = "interpreter $version" ] || fail "i --version"
  ok "interpreter --version and i --version: interpreter $version"
  if [[ $archive_target == *-linux-musl ]]; then
    "$py" - "$x/interpreter" <<'EOF' || fail "the musl binary is not static"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF"
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
assert 3 not in types, "has a PT_INTERP (dynamic loader)"
EOF
    ok "static: no dynamic loader (PT_INTERP)"
  elif [[ $archive_target == *-linux-gnu ]]; then
    # docs/release.md states the glibc a gnu build needs; no symbol may ask for a newer one.
    local floor newest
    floor=$(sed -n 's/.*<!-- glibc-floor: \([0-9.]*\) -->.*/\1/p' docs/release.md)
    [ -n "$floor" ] || fail "docs/release.md states no glibc floor (<!-- glibc-floor: X.Y -->)"
    newest=$(readelf -V "$x/interpreter" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
    [ "$(printf '%s\n%s\n' "$newest" "$floor" | sort -V | tail -n 1)" = "$floor" ] ||
      fail "the gnu binary needs glibc $newest, newer than the documented floor $floor"
    ! readelf -V "$x/interpreter" | grep -q GLIBC_ABI_DT_RELR || fail "the gnu binary needs GLIBC_ABI_DT_RELR (glibc 2.36)"
    ok "glibc: no symbol newer than GLIBC_$floor (the floor in docs/release.md)"
  fi
  INTERPRETER_BIN="$x/interpreter" MOCK_LLM_BIN="$mock" EXPECT_VERSION="$version" \
    node --test --test-reporter=spec "$here/acp.test.mjs"
}

npm_prefix=""
part_npm() {
  echo "== npm: launcher + platform package from the packed tarballs"
  local platform launcher_tgz platform_tgz
  platform=$(node -p 'process.platform + "-" + process.arch')
  launcher_tgz=$dist/npm/openinterpreter-interpreter-$version.tgz
  platform_tgz=$dist/npm/openinterpreter-interpreter-$platform-$version.tgz
  [ -f "$launcher_tgz" ] && [ -f "$platform_tgz" ] || fail "missing $launcher_tgz or $platform_tgz: run scripts/dist.sh --npm"
  npm_prefix=$tmp/npm-prefix
  mkdir -p "$npm_prefix"
  echo '{"name": "npm-install-check", "private": true}' >"$npm_prefix/package.json"
  # --offline and a dead registry: nothing may leave the machine. The other platforms'
  # optional packages cannot be fetched, which npm must tolerate.
  (cd "$npm_prefix" && npm_config_registry=http://127.0.0.1:9/ npm install --offline --no-audit --no-fund --ignore-scripts \
    --cache "$tmp/npm-cache" "$platform_tgz" "$launcher_tgz" 2>&1 | sed 's/^/   npm: /')
  [ -x "$npm_prefix/node_modules/@openinterpreter/interpreter-$platform/bin/interpreter" ] || fail "the platform binary is not executable after npm install"
  local start end out
  start=$(now_ms)
  out=$(cd "$npm_prefix" && npm_config_registry=http://127.0.0.1:9/ npx --offline --cache "$tmp/npm-cache" interpreter --version)
  end=$(now_ms)
  [ "$out" = "interpreter $version" ] || fail "npx interpreter --version printed: $out"
  echo "   figure: cold npx interpreter --version (first run after install): $((end - start)) ms"
  start=$(now_ms)
  (cd "$npm_prefix" && npx --offline --cache "$tmp/npm-cache" interpreter --version >/dev/null)
  end=$(now_ms)
  echo "   figure: warm npx interpreter --version: $((end - start)) ms"
  start=$(now_ms)
  "$npm_prefix/node_modules/.bin/interpreter" --version >/dev/null
  end=$(now_ms)
  echo "   figure: the launcher without npx: $((end - start)) ms"
  [ "$(cd "$npm_prefix" && npx --offline --cache "$tmp/npm-cache" i --version)" = "interpreter $version" ] || fail "npx i --version"
  ok "npx interpreter --version and npx i --version: interpreter $version"

  local real=$npm_prefix/node_modules/@openinterpreter/interpreter-$platform/bin/interpreter
  local launcher_pkg=$npm_prefix/node_modules/@openinterpreter/interpreter
  INTERPRETER_BIN="$npm_prefix/node_modules/.bin/interpreter" MOCK_LLM_BIN="$mock" EXPECT_VERSION="$version" \
    node --test --test-reporter=spec "$here/acp.test.mjs"
  INTERPRETER_BIN="$npm_prefix/node_modules/.bin/interpreter" MOCK_LLM_BIN="$mock" REAL_BIN="$real" LAUNCHER_PACKAGE="$launcher_pkg" \
    node --test --test-concurrency=1 --test-reporter=spec "$here/launcher.test.mjs"

  # `npx interpreter acp` itself as the agent command (npm exec adds its own processes).
  INTERPRETER_BIN="$here/npx-agent.sh" NPX_PREFIX="$npm_prefix" NPX_CACHE="$tmp/npm-cache" MOCK_LLM_BIN="$mock" \
    EXPECT_VERSION="$version" node --test --test-reporter=spec "$here/acp.test.mjs"
}

part_npx() {
  echo "== npx -y @openinterpreter/interpreter, from a local registry holding the packed tarballs"
  : >"$tmp/registry.out"
  "$py" "$here/registry.py" "$dist/npm" "$root/npm" >"$tmp/registry.out" 2>"$tmp/registry.err" &
  pids+=($!)
  local reg=""
  for _ in $(seq 200); do
    reg=$(sed -n 's/^REGISTRY //p' "$tmp/registry.out")
    [ -n "$reg" ] && break
    sleep 0.05
  done
  [ -n "$reg" ] || fail "registry.py did not start: $(cat "$tmp/registry.err")"
  local cwd=$tmp/npx-cwd cache=$tmp/npx-cache start end out
  mkdir -p "$cwd"
  start=$(now_ms)
  out=$(cd "$cwd" && npm_config_registry=$reg npx -y --cache "$cache" "@openinterpreter/interpreter@$version" --version)
  end=$(now_ms)
  [ "$out" = "interpreter $version" ] || fail "npx -y printed: $out"
  echo "   figure: cold npx -y @openinterpreter/interpreter@$version --version (empty cache, download from 127.0.0.1): $((end - start)) ms"
  start=$(now_ms)
  (cd "$cwd" && npm_config_registry=$reg npx -y --cache "$cache" "@openinterpreter/interpreter@$version" --version >/dev/null)
  end=$(now_ms)
  echo "   figure: warm npx -y @openinterpreter/interpreter@$version --version: $((end - start)) ms"
  ! grep -q "missing-" "$tmp/registry.err" || fail "npm downloaded another platform's package: $(grep missing- "$tmp/registry.err")"
  ok "npm installed only this platform's package (os/cpu), and npx ran the interpreter bin"
  npm_config_registry=$reg INTERPRETER_BIN="$here/npx-agent.sh" NPX_PACKAGE="@openinterpreter/interpreter@$version" NPX_CACHE="$cache" \
    MOCK_LLM_BIN="$mock" EXPECT_VERSION="$version" node --test --test-reporter=spec "$here/acp.test.mjs"
}

part_install() {
  echo "== scripts/install.sh against dist/ over HTTP"
  serve "$dist"
  local base=$served env_target=()
  [[ $archive_target == "$arch-unknown-linux-musl" ]] || env_target=(INTERPRETER_TARGET="$archive_target")
  local out=$tmp/install-out
  env ${env_target[@]+"${env_target[@]}"} INTERPRETER_DOWNLOAD_BASE="$base" INTERPRETER_INSTALL_DIR="$tmp/inst/bin" PATH=/usr/bin:/bin \
    sh scripts/install.sh 2>"$out" || fail "install.sh (latest) failed: $(cat "$out")"
  [ "$("$tmp/inst/bin/interpreter" --version)" = "interpreter $version" ] || fail "installed binary"
  [ "$("$tmp/inst/bin/i" --version)" = "interpreter $version" ] || fail "installed i"
  grep -q "is not on your PATH" "$out" || fail "no PATH advice: $(cat "$out")"
  ok "latest (from \$BASE/latest): installed interpreter and i, with PATH advice"
  env ${env_target[@]+"${env_target[@]}"} INTERPRETER_DOWNLOAD_BASE="$base/" INTERPRETER_VERSION="v$version" INTERPRETER_INSTALL_DIR="$tmp/inst/bin" \
    PATH="$tmp/inst/bin:/usr/bin:/bin" sh scripts/install.sh 2>"$out" || fail "install.sh (pinned) failed: $(cat "$out")"
  ! grep -q "is not on your PATH" "$out" || fail "PATH advice although the folder is on PATH"
  ok "pinned v$version over an existing install"

  # A tampered archive next to the real SHA256SUMS.
  local bad=$tmp/tampered
  mkdir -p "$bad/v$version"
  cp "$dist/SHA256SUMS" "$bad/v$version/"
  cp "$archive" "$bad/v$version/"
  printf 'x' >>"$bad/v$version/$(basename "$archive")"
  echo "$version" >"$bad/latest"
  serve "$bad"
  if env ${env_target[@]+"${env_target[@]}"} INTERPRETER_DOWNLOAD_BASE="$served" INTERPRETER_INSTALL_DIR="$tmp/inst2/bin" sh scripts/install.sh 2>"$out"; then
    fail "install.sh installed a tampered archive"
  fi
  grep -q "checksum mismatch for $(basename "$archive")" "$out" || fail "no checksum message: $(cat "$out")"
  [ ! -e "$tmp/inst2/bin/interpreter" ] || fail "a tampered binary was installed"
  ok "refuses a tampered archive: $(tail -n 1 "$out")"

  # No line for the archive in SHA256SUMS.
  grep -v "$(basename "$archive")" "$dist/SHA256SUMS" >"$bad/v$version/SHA256SUMS" || true
  cp "$archive" "$bad/v$version/"
  if env ${env_target[@]+"${env_target[@]}"} INTERPRETER_DOWNLOAD_BASE="$served" INTERPRETER_INSTALL_DIR="$tmp/inst2/bin" sh scripts/install.sh 2>"$out"; then
    fail "install.sh installed an archive SHA256SUMS does not list"
  fi
  grep -q "lists no $(basename "$archive")" "$out" || fail "no missing-checksum message: $(cat "$out")"
  ok "refuses an archive SHA256SUMS does not list"
  if INTERPRETER_DOWNLOAD_BASE="$base" INTERPRETER_VERSION=9.9.9 INTERPRETER_INSTALL_DIR="$tmp/inst2/bin" sh scripts/install.sh 2>"$out"; then
    fail "install.sh installed a version that does not exist"
  fi
  grep -q "could not download" "$out" || fail "no download error: $(cat "$out")"
  ok "a missing version is a clear error: $(tail -n 1 "$out")"
}

part_vsix() {
  echo "== VSIX"
  local vt
  vt=$(node -p 'process.platform + "-" + process.arch')
  local vsix=$dist/interpreter-vscode-$version-$vt.vsix
  [ -f "$vsix" ] || fail "missing $vsix: run scripts/dist.sh --vsix"
  local x=$tmp/archive-bin
  mkdir -p "$x"
  tar -xzf "$archive" -C "$x"
  "$py" - "$vsix" "$x/interpreter" "$version" "$vt" <<'EOF' || fail "the VSIX check failed"
import hashlib, json, stat, sys, zipfile
vsix, binary, version, target = sys.argv[1:]
with zipfile.ZipFile(vsix) as z:
    info = z.getinfo("extension/bin/interpreter")
    mode = info.external_attr >> 16
    assert mode & 0o111 == 0o111, f"extension/bin/interpreter has mode {oct(mode)}"
    assert hashlib.sha256(z.read(info)).digest() == hashlib.sha256(open(binary, "rb").read()).digest(), "not the release binary"
    pkg = json.loads(z.read("extension/package.json"))
    assert pkg["version"] == version, pkg["version"]
    manifest = z.read("extension.vsixmanifest").decode()
    assert f'TargetPlatform="{target}"' in manifest, "no TargetPlatform in the manifest"
    names = z.namelist()
    assert "extension/dist/extension.js" in names, names
    print(f"   ok: extension/bin/interpreter, mode {stat.filemode(mode)}, the archive's binary; TargetPlatform {target}; {len(names)} files")
EOF
}

part_action() {
  echo "== scripts/action.sh as GitHub runs it, installing from dist/ over HTTP"
  serve "$dist"
  local base=$served
  start_mock "$root/tests/scripts/demo.json"
  local repo=$tmp/action-repo home=$tmp/action-home runner=$tmp/runner
  cp -r tests/demo-repo "$repo"
  git -C "$repo" init -q
  git -C "$repo" add -A
  git -C "$repo" -c user.name=t -c user.email=t@example.invalid commit -qm init
  mkdir -p "$home" "$runner"
  # A provider from config.toml; the key comes from the api-key input.
  printf '[model_providers.mock]\nbase_url = "%s"\nwire_api = "chat"\nrequest_max_retries = 1\n' "$mock_url" >"$home/config.toml"
  # PATH without any interpreter, so the action must install one.
  local clean_path="" d
  IFS=: read -ra dirs <<<"$PATH"
  for d in "${dirs[@]}"; do
    [ -x "$d/interpreter" ] || clean_path=${clean_path:+$clean_path:}$d
  done
  local env_target=()
  [[ $archive_target == "$arch-unknown-linux-musl" ]] || env_target=(INTERPRETER_TARGET="$archive_target")
  local key=sk-action-test-4f1c
  : >"$runner/output"
  : >"$runner/summary"
  local status=0
  (
    cd "$repo"
    env -i HOME="$HOME" PATH="$clean_path" RUNNER_TEMP="$runner" GITHUB_OUTPUT="$runner/output" GITHUB_STEP_SUMMARY="$runner/summary" \
      OPENINTERPRETER_HOME="$home" INTERPRETER_DOWNLOAD_BASE="$base" ${env_target[@]+"${env_target[@]}"} \
      INPUT_PROMPT="The unit tests in stats.py fail. Find the bug and fix it." INPUT_PROVIDER=mock INPUT_MODEL=kimi-k3 \
      INPUT_API_KEY="$key" INPUT_SANDBOX=workspace-write INPUT_WORKING_DIRECTORY=. INPUT_HARNESS=kimi-code \
      INPUT_CONFIG=$'# a comment\napproval_policy="never"\n' INPUT_VERSION="$version" \
      bash "$root/scripts/action.sh"
  ) >"$tmp/action.out" 2>"$tmp/action.err" || status=$?
  [ $status -eq 0 ] || fail "action.sh exited $status: $(cat "$tmp/action.out" "$tmp/action.err")"
  grep -q "^::add-mask::$key\$" "$tmp/action.out" || fail "the key was not masked"
  [ "$(grep -c -- "$key" "$tmp/action.out" "$tmp/action.err" "$runner/output" "$runner/summary" | awk -F: '{s += $2} END {print s}')" = 1 ] ||
    fail "the key appears outside its ::add-mask:: line"
  grep -q "Installing interpreter $version" "$tmp/action.out" || fail "the action did not install: $(cat "$tmp/action.out")"
  ok "installed $version with install.sh; the key is masked and printed nowhere else"
  local patch changed final
  patch=$(sed -n 's/^patch=//p' "$runner/output")
  changed=$(sed -n 's/^changed=//p' "$runner/output")
  final=$("$py" - "$runner/output" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^final-message<<(\S+)\n(.*?)\n\1$", text, re.S | re.M)
print(m.group(2) if m else "")
EOF
)
  [ "$changed" = true ] || fail "changed=$changed"
  [ -s "$patch" ] || fail "no patch at '$patch'"
  [[ $final == *"Both tests pass"* ]] || fail "final-message: $final"
  "$py" - "${mock_url%/v1}" "$key" <<'EOF' || fail "the model did not get the key from the api-key input"
import json, sys, urllib.request
reqs = json.load(urllib.request.urlopen(sys.argv[1] + "/_mock/requests", timeout=10))
auth = {r["headers"].get("authorization") for r in reqs if r["method"] == "POST"}
assert auth == {"Bearer " + sys.argv[2]}, auth
EOF
  local fresh=$tmp/action-fresh
  cp -r tests/demo-repo "$fresh"
  git -C "$fresh" init -q
  git -C "$fresh" apply --check "$patch" || fail "git apply --check rejects the patch"
  git -C "$fresh" apply "$patch"
  (cd "$fresh" && python3 -m unittest -q 2>/dev/null) || fail "the patched repo's tests fail"
  { grep -q "^## interpreter" "$runner/summary" && grep -q "stats.py" "$runner/summary"; } || fail "job summary: $(cat "$runner/summary")"
  ok "outputs: changed=true, final-message, a patch that git apply accepts (and fixes the tests); a job summary"

  # Again, now with the installed binary on PATH and no version asked: no install.
  : >"$runner/output"
  local installed_dir
  installed_dir=$runner/interpreter-$version/bin
  mkdir -p "$runner/second"
  git -C "$repo" checkout -q -- .
  (
    cd "$repo"
    env -i HOME="$HOME" PATH="$installed_dir:$clean_path" RUNNER_TEMP="$runner/second" GITHUB_OUTPUT="$runner/output" \
      OPENINTERPRETER_HOME="$home" INPUT_PROMPT="say hi" INPUT_PROVIDER=mock INPUT_API_KEY="$key" \
      bash "$root/scripts/action.sh"
  ) >"$tmp/action2.out" 2>"$tmp/action2.err" || true
  grep -q "^Using $installed_dir/interpreter ($version)" "$tmp/action2.out" || fail "second run did not use the binary on PATH: $(cat "$tmp/action2.out")"
  grep -q '^exit-code=' "$runner/output" || fail "second run wrote no outputs"
  ok "with interpreter on PATH and no version input, the action uses it"
}

. "$here/guards.sh"

for p in "${parts[@]}"; do
  "part_$p"
done
echo "dist checks passed: ${parts[*]}"
