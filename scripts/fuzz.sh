#!/usr/bin/env bash
# Opt-in fuzzing (not part of .ci/run): a short bounded run of every cargo-fuzz target in
# fuzz/ (docs/fuzzing.md). Builds with AddressSanitizer, debug assertions and overflow checks.
#
#   scripts/fuzz.sh                      # every target, 60 s each
#   FUZZ_SECONDS=300 scripts/fuzz.sh sse # one target, 5 minutes
#
# Needs a nightly compiler: `cargo +nightly` when rustup has one, else the stable compiler
# with RUSTC_BOOTSTRAP=1. Installs cargo-fuzz on first use. New inputs go to fuzz/corpus/
# (not committed; the committed seeds are fuzz/seeds/), crashes to fuzz/artifacts/<target>/.
# Exits non-zero if any target found a crash, a leak or a timeout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

seconds=${FUZZ_SECONDS:-60}
case $seconds in
  '' | *[!0-9]*) echo "FUZZ_SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;;
esac
fuzz_version=0.13.2
all_targets=(apply_patch sse config acp_framing lsp_framing)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $fuzz_version" ]; then
  cargo install cargo-fuzz --locked --version "$fuzz_version"
fi

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  cargo=(cargo +nightly)
  compiler="nightly ($(rustc +nightly --version))"
else
  export RUSTC_BOOTSTRAP=1
  cargo=(cargo)
  compiler="$(rustc --version) with RUSTC_BOOTSTRAP=1"
fi
echo "== fuzz: $compiler, ${seconds}s per target: ${targets[*]}"

for t in "${targets[@]}"; do
  "${cargo[@]}" fuzz build "$t"
done

mkdir -p artifacts
failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log="artifacts/$t.log"
  echo "== fuzz $t (${seconds}s)"
  status=0
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: a leak or a blow-up.
  "${cargo[@]}" fuzz run "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  cov=$(grep -o 'DONE *cov: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $status, see fuzz/$log and fuzz/artifacts/$t/)"
    failed+=("$t")
    grep -E 'panicked at|SUMMARY|Test unit written' "$log" | head -5 || true
  fi
  summary+=("$(printf '%-12s %4ss %9s runs %7s exec/s  cov %6s  %s' "$t" "$seconds" "${runs:-?}" "${rate:-?}" "${cov:-?}" "$result")")
done

echo "== fuzz summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; reproduce with: cd fuzz && cargo fuzz run <target> artifacts/<target>/<file>"
  exit 1
fi
