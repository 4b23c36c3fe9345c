# Parts of tests/dist/run.sh (sourced by it; its helpers `fail`, `ok`, `serve`, `start_mock`,
# `$tmp`, `$py`, `$root`, `$target_dir`, `$version`) that need no dist/: each builds what it
# installs or runs from target/debug. Issue 22: what install.sh and the Action must hold
# against a broken release, an odd install folder and a hostile model.

# check_log LOG...: reads each step log as the Actions runner does (a `::name ...::data` line,
# leading blanks trimmed, or `##[name ...]data` anywhere in a line; after
# `::stop-commands::T` nothing but `::T::` counts) and checks that the only command obeyed is
# the action's mask of the key, that each run's token is 32 hex digits of its own, that the
# model's lines did reach the log, and that every region is closed at the end.
check_log() {
  "$py" - "$@" <<'PY'
import re, sys

def command(line):
    t = line.lstrip()
    if t.startswith("::"):
        end = t.find("::", 2)
        if end >= 0:
            return t[2:end].split(" ", 1)[0], t[end + 2:]
    i = line.find("##[")
    if i >= 0:
        j = line.find("]", i)
        if j >= 0:
            return line[i + 3:j].split(" ", 1)[0], line[j + 1:]
    return None

tokens = []
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8", errors="replace").read()
    assert "MODEL-WROTE-THIS" in text and "A-COMMAND-PRINTED-THIS" in text, \
        f"{path}: the model's lines are not in the log:\n{text}"
    stopped, token = False, None
    for line in text.splitlines():
        c = command(line)
        if c is None:
            continue
        name, data = c
        if stopped:
            if name.lower() == token.lower():
                stopped, token = False, None
            continue
        if name.lower() == "stop-commands":
            stopped, token = True, data
            tokens.append(data)
            continue
        assert (name, data) == ("add-mask", "sk-action-log-test"), \
            f"{path}: the runner would obey {line!r}"
    assert not stopped, f"{path}: the stop-commands region is still open at the end"
for t in tokens:
    assert re.fullmatch(r"[0-9a-f]{32}", t), f"the token {t!r} is not 32 random hex digits"
assert len(tokens) == len(set(tokens)) == len(sys.argv) - 1, f"one fresh token per run: {tokens}"
print(f"   ok: {len(tokens)} runs, each in a stop-commands region of its own: "
      + ", ".join(t[:8] + "…" for t in tokens))
PY
}

# The mock's script for part_action_log: what a hostile model writes (commands at the start of
# a line, indented, the old `##[` form, a stop-commands of its own and a guessed resume
# token) and a command of its that prints more. Two runs that complete, one whose second
# request fails, one that hangs until it is cancelled.
action_log_script() {
  "$py" - <<'PY'
import json
said = "\n".join([
    "MODEL-WROTE-THIS",
    "::add-mask::MODEL-WROTE-THIS",
    "::stop-commands::guess",
    "::error title=pwned::MODEL-WROTE-THIS",
    "  ::set-output name=changed::false",
    "##[add-mask]MODEL-WROTE-THIS",
    "::guess::",
    "::warning::MODEL-WROTE-THIS",
]) + "\n"
printed = ("printf '%s\\n' A-COMMAND-PRINTED-THIS '::add-mask::A-COMMAND-PRINTED-THIS' "
           "'::notice::A-COMMAND-PRINTED-THIS'; printf '::error::no newline at the end'")
def call(i):
    return {"events": [{"text": said}, {"tool_call": {"id": f"c{i}", "name": "Bash", "arguments": {"command": printed}}}]}
replies = [
    call(1), {"events": [{"text": said}]},
    call(2), {"events": [{"text": said}]},
    call(3), {"events": [{"text": said}, {"stream_error": {"message": "overloaded"}}]},
    call(4), {"hang": True},
]
print(json.dumps({"replies": replies, "when_exhausted": {"status": 400, "error": {"message": "no more replies"}}}))
PY
}

part_action_log() {
  echo "== scripts/action.sh: workflow commands the agent prints are never obeyed"
  local bin_dir=$target_dir/debug
  [ -x "$bin_dir/interpreter" ] || fail "$bin_dir/interpreter is missing: cargo build -p interpreter"
  local x=$tmp/action-log
  mkdir -p "$x/repo" "$x/home"
  git -C "$x/repo" init -q
  action_log_script >"$x/script.json"
  start_mock "$x/script.json"
  printf '[model_providers.mock]\nbase_url = "%s"\nwire_api = "chat"\nrequest_max_retries = 0\nstream_max_retries = 0\n' "$mock_url" >"$x/home/config.toml"
  # run_action NAME [setsid]: the step's log (stdout and stderr, in order) in $x/NAME.log.
  run_action() {
    : >"$x/$1.output"
    local status=0
    (
      cd "$x/repo"
      # With setsid this pid is the step's process group (no job control here: the subshell
      # leads no group, so setsid does not fork).
      echo "$BASHPID" >"$x/$1.pid"
      exec ${2:+setsid} env -i HOME="$HOME" PATH="$bin_dir:/usr/bin:/bin" RUNNER_TEMP="$x" GITHUB_OUTPUT="$x/$1.output" \
        OPENINTERPRETER_HOME="$x/home" INPUT_PROMPT="say something" INPUT_PROVIDER=mock INPUT_MODEL=kimi-k3 \
        INPUT_API_KEY=sk-action-log-test INPUT_HARNESS=kimi-code INPUT_CONFIG='approval_policy="never"' \
        bash "$root/scripts/action.sh"
    ) >"$x/$1.log" 2>&1 || status=$?
    echo "$status" >"$x/$1.status"
  }
  run_action first
  run_action second
  [ "$(cat "$x/first.status") $(cat "$x/second.status")" = "0 0" ] || fail "action.sh failed: $(cat "$x/first.log" "$x/second.log")"
  run_action failed
  [ "$(cat "$x/failed.status")" = 1 ] || fail "the failed run exited $(cat "$x/failed.status"): $(cat "$x/failed.log")"
  grep -q '^exit-code=1$' "$x/failed.output" || fail "the failed run's outputs: $(cat "$x/failed.output")"
  # Cancelled as the runner cancels a step: SIGTERM to the step's process group while the
  # model's answer hangs.
  run_action cancelled setsid &
  local step=$! posts=0
  for _ in $(seq 400); do
    posts=$(curl -fsS "${mock_url%/v1}/_mock/requests" | "$py" -c 'import json, sys; print(sum(r["method"] == "POST" for r in json.load(sys.stdin)))')
    [ "$posts" -ge 8 ] && break
    sleep 0.05
  done
  [ "$posts" -ge 8 ] || fail "the cancelled run never reached its hanging request"
  sleep 0.3
  local pgid
  pgid=$(cat "$x/cancelled.pid")
  [ "$(ps -o pgid= -p "$pgid" | tr -d ' ')" = "$pgid" ] || fail "the cancelled step is not its own process group"
  kill -TERM -- "-$pgid"
  wait "$step" || true
  [ "$(cat "$x/cancelled.status")" != 0 ] || fail "the cancelled run exited 0"
  check_log "$x/first.log" "$x/second.log" "$x/failed.log" "$x/cancelled.log" ||
    fail "a workflow command from the agent's output would be obeyed by the runner"
  ok "completed, failed and cancelled runs: the model's workflow commands are log text only"
}

# release_base DIR BINARY [upper]: DIR laid out like the GitHub releases for $version and the
# target `test-target`, its archive holding BINARY as `interpreter`; `upper` writes the
# SHA256SUMS hash in upper case.
release_base() {
  local base=$1 stage=$1.stage archive=interpreter-v$version-test-target.tar.gz
  mkdir -p "$base/v$version" "$stage"
  cp "$2" "$stage/interpreter"
  chmod 755 "$stage/interpreter"
  tar -czf "$base/v$version/$archive" -C "$stage" interpreter
  (cd "$base/v$version" && sha256sum "$archive") >"$base/v$version/SHA256SUMS"
  if [ "${3:-}" = upper ]; then
    awk '{ print toupper($1) "  " $2 }' "$base/v$version/SHA256SUMS" >"$base/v$version/SHA256SUMS.upper"
    mv "$base/v$version/SHA256SUMS.upper" "$base/v$version/SHA256SUMS"
  fi
  echo "$version" >"$base/latest"
}

# install_from BASE DIR [VAR=value...]: scripts/install.sh from BASE into DIR; its stderr in
# $tmp/install.err, its status returned.
install_from() {
  local base=$1 dir=$2
  shift 2
  env INTERPRETER_DOWNLOAD_BASE="$base" INTERPRETER_INSTALL_DIR="$dir" INTERPRETER_TARGET=test-target \
    PATH=/usr/bin:/bin "$@" sh "$root/scripts/install.sh" 2>"$tmp/install.err"
}

part_install_guards() {
  echo "== scripts/install.sh: a broken release, an odd install folder, an uppercase checksum"
  local x=$tmp/install-guards
  mkdir -p "$x"
  # Stand-ins for release binaries: one that answers --version, one that cannot run here.
  printf '#!/bin/sh\necho "interpreter %s"\n' "$version" >"$x/good"
  printf '#!/bin/sh\necho "cannot execute binary file: Exec format error" >&2\nexit 126\n' >"$x/broken"
  release_base "$x/good-base" "$x/good"
  release_base "$x/broken-base" "$x/broken"
  release_base "$x/upper-base" "$x/good" upper
  serve "$x/good-base"
  local good=$served
  serve "$x/broken-base"
  local broken=$served
  serve "$x/upper-base"
  local upper=$served

  # INSTALL_GUARDS=broken,upper,hint runs only those cases (to see each fail on its own).
  local case
  for case in $(echo "${INSTALL_GUARDS:-broken,upper,hint}" | tr , ' '); do
    "guard_$case"
  done
}

# A release whose binary does not run leaves the working install as it was.
guard_broken() {
  local dir=$x/inst/bin before
  install_from "$good" "$dir" || fail "install.sh (good) failed: $(cat "$tmp/install.err")"
  before=$(sha256sum <"$dir/interpreter")
  if install_from "$broken" "$dir"; then
    fail "install.sh installed a binary that does not run"
  fi
  [ "$(sha256sum <"$dir/interpreter")" = "$before" ] || fail "the broken release replaced the working interpreter"
  grep -q "does not run here" "$tmp/install.err" || fail "no clear message: $(cat "$tmp/install.err")"
  [ "$("$dir/interpreter" --version)" = "interpreter $version" ] || fail "the old interpreter no longer runs"
  [ -z "$(find "$dir" -name '.interpreter.new.*')" ] || fail "a temp file was left in $dir: $(ls -A "$dir")"
  ok "a release binary that does not run changes nothing: $(tail -n 1 "$tmp/install.err")"
}

# An uppercase hash in SHA256SUMS is the same hash.
guard_upper() {
  install_from "$upper" "$x/upper/bin" || fail "install.sh refused an uppercase SHA256SUMS entry: $(cat "$tmp/install.err")"
  [ "$("$x/upper/bin/interpreter" --version)" = "interpreter $version" ] || fail "the uppercase install"
  ok "an uppercase SHA256SUMS entry is accepted"
}

# A folder with a space, `$`, quotes and a backslash: each shell's PATH hint, pasted into that
# shell, puts exactly this folder on PATH.
guard_hint() {
  local odd="$x/my dir/\$HOME's \"x\" \\q/bin" sh_name line rc found
  for sh_name in bash zsh sh fish; do
    install_from "$good" "$odd" SHELL="/bin/$sh_name" || fail "install.sh into '$odd' failed: $(cat "$tmp/install.err")"
    line=$(sed -n '/is not on your PATH/{n;s/^install\.sh:   //p;}' "$tmp/install.err")
    [ -n "$line" ] || fail "no PATH hint for $sh_name: $(cat "$tmp/install.err")"
    rm -rf "$x/home" && mkdir -p "$x/home"
    case $sh_name in
      bash | zsh)
        rc=$x/home/.${sh_name}rc
        # The line as pasted (without the `exec`, which would start the user's shell), then
        # the profile it wrote, read by that shell (a POSIX sh where zsh is not installed).
        local run=$sh_name
        command -v "$run" >/dev/null 2>&1 || run=sh
        HOME=$x/home "$run" -c "${line% && exec $sh_name}" </dev/null || fail "the $sh_name hint does not run: $line"
        found=$(HOME=$x/home PATH=/usr/bin:/bin "$run" -c ". \"$rc\" && command -v interpreter") || fail "$rc: $(cat "$rc")"
        ;;
      sh)
        found=$(PATH=/usr/bin:/bin sh -c "${line%   (in your shell*} && command -v interpreter") || fail "the sh hint: $line"
        ;;
      fish)
        if ! command -v fish >/dev/null 2>&1; then
          echo "   skipped: fish is not installed, its hint was not run: $line"
          continue
        fi
        found=$(HOME=$x/home PATH=/usr/bin:/bin fish -c "$line; command -v interpreter") || fail "the fish hint: $line"
        ;;
    esac
    [ "$found" = "$odd/interpreter" ] || fail "the $sh_name hint put '$found' on PATH, not '$odd/interpreter': $line"
    ok "$sh_name hint for a folder with a space, \$ and quotes: $line"
  done
}

# Review mode (issue 39): `review: base main` runs `interpreter review`; each finding is one
# annotation the runner obeys after the agent's region, its text escaped so a hostile finding
# cannot add a command; the findings JSON is an output.
part_action_review() {
  echo "== scripts/action.sh review: findings become inline annotations"
  local bin_dir=$target_dir/debug
  [ -x "$bin_dir/interpreter" ] || fail "$bin_dir/interpreter is missing: cargo build -p interpreter"
  local x=$tmp/action-review
  mkdir -p "$x/repo/src" "$x/home"
  local g=(git -C "$x/repo" -c user.name=t -c user.email=t@t)
  "${g[@]}" init -q -b main
  printf 'fn a() {}\n' >"$x/repo/src/a.rs"
  "${g[@]}" add . && "${g[@]}" commit -q -m first
  "${g[@]}" checkout -q -b feature
  printf 'fn a() {}\n// MARKER\n' >"$x/repo/src/a.rs"
  "${g[@]}" commit -q -am second
  local top
  top=$(cd "$x/repo" && pwd -P)
  TOP=$top "$py" - >"$x/script.json" <<'PY'
import json, os
findings = {"findings": [{"title": "Guard it, now", "body": "50% of calls panic.\n::error::pwned",
    "confidence_score": 0.9, "priority": 1,
    "code_location": {"absolute_file_path": os.environ["TOP"] + "/src/a.rs",
                      "line_range": {"start": 2, "end": 3}}}],
    "overall_correctness": "patch is incorrect", "overall_explanation": "A panic.",
    "overall_confidence_score": 0.8}
print(json.dumps({"replies": [{"events": [{"text": json.dumps(findings)}]}]}))
PY
  start_mock "$x/script.json"
  printf '[model_providers.mock]\nbase_url = "%s"\nwire_api = "chat"\n' "$mock_url" >"$x/home/config.toml"
  : >"$x/output"
  local status=0
  (
    cd "$x/repo"
    exec env -i HOME="$HOME" PATH="$bin_dir:/usr/bin:/bin" RUNNER_TEMP="$x" GITHUB_OUTPUT="$x/output" \
      OPENINTERPRETER_HOME="$x/home" INPUT_REVIEW="base main" INPUT_PROVIDER=mock INPUT_MODEL=m \
      INPUT_API_KEY=sk-action-review-test bash "$root/scripts/action.sh"
  ) >"$x/log" 2>&1 || status=$?
  [ $status -eq 0 ] || fail "action.sh review exited $status: $(cat "$x/log")"
  "$py" - "$x/log" "$x/output" <<'PY' || fail "review annotations: $(cat "$x/log")"
import json, sys
log, output = (open(p).read() for p in sys.argv[1:])
obeyed, token = [], None
for line in log.splitlines():
    if not line.startswith("::"):
        continue
    if token:
        token = None if line == f"::{token}::" else token
    elif line.startswith("::stop-commands::"):
        token = line.split("::")[2]
    else:
        obeyed.append(line)
want = "::warning file=src/a.rs,line=2,endLine=3,title=[P1] Guard it%2C now::50%25 of calls panic.%0A::error::pwned"
assert obeyed == ["::add-mask::sk-action-review-test", want], obeyed
path = dict(l.split("=", 1) for l in output.splitlines() if l.startswith("findings="))["findings"]
assert json.load(open(path))["findings"][0]["priority"] == 1
assert "exit-code=0" in output
PY
  ok "one escaped annotation per finding, obeyed after the agent's region; the findings JSON is an output"
}
