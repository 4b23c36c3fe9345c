#!/usr/bin/env bash
# The logic of the GitHub Action (action.yml): install interpreter if needed, run one task with
# `interpreter exec --diff`, and hand back the patch, whether anything changed and the final
# message. With a REVIEW input (`uncommitted`, `base BRANCH` or `commit SHA`) it runs
# `interpreter review` instead, and each finding becomes an inline annotation on the PR. It reads its inputs from INPUT_* variables (action.yml passes each input as one,
# with `-` spelled `_`) and writes $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY, so it runs the
# same outside a runner:
#
#   INPUT_PROMPT="fix the failing test" INPUT_API_KEY=sk-… GITHUB_OUTPUT=out.txt scripts/action.sh
#
# Inputs: PROMPT (required), PROVIDER, MODEL, API_KEY, SANDBOX, WORKING_DIRECTORY, HARNESS,
# CONFIG (lines of key=value, each passed as -c), VERSION (a release to install; default the
# one this action is pinned to), REVIEW. Outputs: patch (a file path), changed (true/false),
# final-message, exit-code, findings (review mode: the findings JSON's path). The step fails
# when the run does, after writing the outputs.
set -euo pipefail

# The release this copy of the action installs (kept equal to Cargo.toml by the tests).
PINNED_VERSION=0.1.0

here=$(cd "$(dirname "$0")" && pwd)

# The key first: masked before anything can print it, and out of the environment the agent
# (and the commands it runs) inherits.
api_key=${INPUT_API_KEY:-}
unset INPUT_API_KEY
if [ -n "$api_key" ]; then
  while IFS= read -r line; do
    [ -n "$line" ] && echo "::add-mask::$line"
  done <<<"$api_key"
fi

fail() {
  echo "::error title=interpreter::$*"
  exit 1
}

random_hex() { # 16 bytes from /dev/urandom as 32 hex digits
  od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}

redact() { # TEXT -> TEXT without the key
  if [ -n "$api_key" ]; then
    printf '%s' "${1//"$api_key"/***}"
  else
    printf '%s' "$1"
  fi
}

prompt=${INPUT_PROMPT:-}
review=${INPUT_REVIEW:-}
review_args=()
case $review in
  "") [ -n "$prompt" ] || fail "the prompt input is empty" ;;
  uncommitted) review_args=(--uncommitted) ;;
  "base "*) review_args=(--base "${review#base }") ;;
  "commit "*) review_args=(--commit "${review#commit }") ;;
  *) fail "review '$review' is not one of: uncommitted, base BRANCH, commit SHA" ;;
esac
[ -n "${GITHUB_OUTPUT:-}" ] || fail "GITHUB_OUTPUT is not set (this script runs as a GitHub Actions step)"
provider=${INPUT_PROVIDER:-}
if [ -n "$provider" ] && ! [[ $provider =~ ^[A-Za-z0-9_-]+$ ]]; then
  fail "provider '$provider' is not a provider id (letters, digits, - and _)"
fi
workdir=${INPUT_WORKING_DIRECTORY:-.}
[ -d "$workdir" ] || fail "working-directory '$workdir' is not a directory"
workdir=$(cd "$workdir" && pwd)

work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/interpreter-action.XXXXXX")

# The binary: the one on PATH when no other version is asked for, else an install.
want=${INPUT_VERSION:-}
want=${want#v}
bin=""
if existing=$(command -v interpreter 2>/dev/null); then
  have=$("$existing" --version 2>/dev/null | awk '{print $2}') || have=""
  if [ -z "$want" ] || [ "$want" = "$have" ]; then
    bin=$existing
    echo "Using $existing ($have)"
  fi
fi
if [ -z "$bin" ]; then
  version=${want:-$PINNED_VERSION}
  install_dir=${RUNNER_TEMP:-$work}/interpreter-$version/bin
  if [ "$version" != latest ] && [ -x "$install_dir/interpreter" ]; then
    echo "Using $install_dir/interpreter (installed by an earlier step)"
  else
    echo "Installing interpreter $version (checksum verified)"
    INTERPRETER_VERSION=$version INTERPRETER_INSTALL_DIR=$install_dir sh "$here/install.sh" ||
      fail "could not install interpreter $version"
  fi
  bin=$install_dir/interpreter
fi

findings=$work/findings.json
annotations=$work/annotations.txt
if [ -n "$review" ]; then
  # A review reads only (its sandbox is read-only whatever the input says); the prompt is
  # its focus.
  args=(review "${review_args[@]}" -C "$workdir" -o "$findings" --github-annotations "$annotations")
else
  args=(exec --diff -C "$workdir" -o "$work/final-message.txt")
  [ -n "${INPUT_SANDBOX:-}" ] && args+=(--sandbox "$INPUT_SANDBOX")
fi
[ -n "$provider" ] && args+=(--provider "$provider")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
[ -n "${INPUT_HARNESS:-}" ] && args+=(--harness "$INPUT_HARNESS")
while IFS= read -r line; do
  line=${line#"${line%%[![:space:]]*}"}
  line=${line%"${line##*[![:space:]]}"}
  [ -z "$line" ] || [[ $line == \#* ]] || args+=(-c "$line")
done <<<"${INPUT_CONFIG:-}"
if [ -n "$api_key" ]; then
  # Whatever variable the provider reads by default, this run reads the key from ours.
  args+=(-c "model_providers.${provider:-kimi}.env_key=\"INTERPRETER_ACTION_API_KEY\"")
fi

patch=$work/interpreter.patch
echo "Running: interpreter ${args[*]}"
# What the agent prints (the model's words, its commands' output) is log text, never workflow
# commands: the runner obeys none between `::stop-commands::TOKEN` and `::TOKEN::`, and the
# token is fresh random bytes the agent never sees, so nothing it prints ends the region early
# (a `::stop-commands::` of its own included). Its stderr joins our stdout, so the log keeps
# one order. The region is closed however the run ends; the newline first in case the
# agent's last line did not end.
stop_token=$(random_hex)
[[ $stop_token =~ ^[0-9a-f]{32}$ ]] || fail "could not read /dev/urandom for a stop-commands token"
resume_commands() {
  printf '\n::%s::\n' "$stop_token"
}
echo "::stop-commands::$stop_token"
trap resume_commands EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
status=0
if [ -n "$review" ]; then
  # The findings as text go to the final message; the prompt, if any, is the focus.
  [ -n "$prompt" ] && args+=("$prompt")
  INTERPRETER_ACTION_API_KEY=$api_key "$bin" "${args[@]}" </dev/null 2>&1 >"$work/final-message.txt" || status=$?
else
  printf '%s\n' "$prompt" | INTERPRETER_ACTION_API_KEY=$api_key "$bin" "${args[@]}" 2>&1 >"$patch" || status=$?
fi
trap - EXIT INT TERM
resume_commands

# The findings as annotations, now that workflow commands are obeyed again: only the lines
# interpreter wrote as `::warning`/`::error` with a file, every model text in them escaped (no
# line break survives), so nothing the model wrote becomes a command of its own.
if [ -n "$review" ] && [ -f "$annotations" ]; then
  grep -E '^::(warning|error) file=' "$annotations" || true
fi

final=""
[ -f "$work/final-message.txt" ] && final=$(redact "$(cat "$work/final-message.txt")")
changed=false
[ -s "$patch" ] && changed=true

delimiter=interpreter_$(random_hex)
{
  echo "patch=$patch"
  echo "changed=$changed"
  echo "exit-code=$status"
  [ -n "$review" ] && [ -f "$findings" ] && echo "findings=$findings"
  echo "final-message<<$delimiter"
  printf '%s\n' "$final"
  echo "$delimiter"
} >>"$GITHUB_OUTPUT"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "## interpreter"
    echo
    if [ $status -eq 0 ]; then echo "**Result:** completed"; else echo "**Result:** failed (exit status $status)"; fi
    echo
    echo "**Task:**"
    echo
    redact "$prompt" | sed 's/^/> /'
    echo
    echo
    echo "### Final message"
    echo
    printf '%s\n' "${final:-_(none)_}"
    echo
    echo "### Changes"
    echo
    if [ "$changed" = true ]; then
      echo '```'
      git apply --stat <"$patch" 2>/dev/null || true
      echo '```'
      echo
      echo "<details><summary>Patch</summary>"
      echo
      echo '```diff'
      redact "$(head -c 60000 "$patch")"
      echo
      [ "$(wc -c <"$patch")" -le 60000 ] || echo "… (truncated; the whole patch is the step's patch output)"
      echo '```'
      echo
      echo "</details>"
    else
      echo "No files changed."
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi

echo "patch: $patch ($changed)"
exit "$status"
