#!/usr/bin/env bash
# Cross-checks the macOS and Windows builds from Linux (docs/release.md):
#   1. the macOS arm64 binary, with cargo-zigbuild (zig as the linker);
#   2. the Windows x86_64 binary, with Debian's mingw-w64;
#   3. where wine can run Windows programs, the core's unit tests of the Windows build.
# It installs what it needs: rustup targets, cargo-zigbuild and ziglang in a venv, and (as root)
# Debian's mingw-w64 and wine. Each step prints what it did and how long it took.
#
#   scripts/cross-check.sh              all three steps
#   CROSS_CHECK_TESTS=none ...          builds only
#   CROSS_CHECK_TESTS=<filter> ...      only the Windows unit tests matching <filter>
#
# Nothing built here is run on macOS: the macOS binary is linked against stub frameworks
# (below), so it is a check that everything compiles and links, not a shippable binary. The
# release workflow builds and tests the real ones on macOS and Windows runners.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

cache="${XDG_CACHE_HOME:-$HOME/.cache}/interpreter-cross"
venv="$cache/venv"
mac_target=aarch64-apple-darwin
win_target=x86_64-pc-windows-gnu
# Under wine the whole library's unit tests run (about a minute), less these, which need what a
# wine prefix lacks: git on PATH (exec's --diff snapshot test, the checkpoints), and Unix-style absolute paths in the
# tests' own fixtures (swe-agent's renderer, the grep test's expected listing).
wine_skips=(
  diff::tests::shell_edits_count_and_earlier_dirt_does_not
  harness::swe_agent::tests::history_renders_as_text_actions_and_observations
  tools::files::search_tests::buffers_replace_the_disk
  checkpoint::tests::
)
tests="${CROSS_CHECK_TESTS:-default}"
failures=()

step() {
  local name="$1"
  shift
  echo "== cross-check: $name"
  local start=$SECONDS
  if "$@"; then
    echo "== cross-check: $name: ok in $((SECONDS - start)) s"
  else
    echo "== cross-check: $name: FAILED after $((SECONDS - start)) s"
    failures+=("$name")
  fi
}

install_targets() {
  local installed
  installed="$(rustup target list --installed)"
  for t in "$mac_target" "$win_target"; do
    if ! grep -qx "$t" <<<"$installed"; then
      echo "adding the $t target"
      rustup target add "$t"
    fi
  done
  echo "rustup targets: $mac_target $win_target"
}

install_zig() {
  if [ ! -x "$venv/bin/cargo-zigbuild" ] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet cargo-zigbuild ziglang
  fi
  echo "cargo-zigbuild $("$venv/bin/cargo-zigbuild" --version 2>/dev/null | awk '{print $2}') and zig $("$venv/bin/python" -m ziglang version) in $venv"
}

install_debian() {
  local want=()
  command -v x86_64-w64-mingw32-gcc >/dev/null || want+=(mingw-w64)
  command -v wine >/dev/null || want+=(wine wine64)
  if [ ${#want[@]} -eq 0 ]; then
    echo "mingw-w64 and wine are installed"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "missing ${want[*]} (install them, or run as root)"
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null
  echo "installed ${want[*]}"
}

# The macOS SDK cannot be installed here. The binary links two system frameworks (through
# the TLS certificate verifier and the time zone crate); stub frameworks with the right
# install names let the link finish, their symbols left to be found at load time.
mac_stubs() {
  local dir="$cache/macos-frameworks"
  for fw in Security CoreFoundation SystemConfiguration; do
    mkdir -p "$dir/$fw.framework"
    cat >"$dir/$fw.framework/$fw.tbd" <<EOF
--- !tapi-tbd
tbd-version:     4
targets:         [ arm64-macos, x86_64-macos ]
install-name:    '/System/Library/Frameworks/$fw.framework/Versions/A/$fw'
current-version: 1
...
EOF
  done
  echo "$dir"
}

build_mac() {
  local stubs
  stubs="$(mac_stubs | tail -1)"
  PATH="$venv/bin:$PATH" \
    CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS="-C link-arg=-F$stubs -C link-arg=-Wl,-undefined,dynamic_lookup" \
    cargo zigbuild --target "$mac_target" -p interpreter --bins
  file_info "target/$mac_target/debug/interpreter"
}

build_windows() {
  # With the unit tests to run, one build makes the binary and the test harnesses: the same
  # package selection and dev-dependencies as `cargo test` below, so it compiles nothing again.
  local with_tests=()
  [ "$tests" = none ] || with_tests=(--tests)
  cargo build --target "$win_target" --workspace --exclude interpreter-tests --bins "${with_tests[@]}"
  file_info "target/$win_target/debug/interpreter.exe"
}

file_info() {
  if command -v file >/dev/null; then
    file "$1"
  else
    ls -l "$1"
  fi
}

export WINEDEBUG=-all WINEPREFIX="$cache/wineprefix"

# Rust's standard library draws randomness from bcryptprimitives.dll's ProcessPrng, which
# Debian's wine 8 does not have: a stand-in built with mingw, over RtlGenRandom.
wine_prng() {
  local sys32="$WINEPREFIX/drive_c/windows/system32" src="$cache/bcryptprimitives"
  [ -f "$sys32/bcryptprimitives.dll" ] && return 0
  [ -d "$sys32" ] || timeout 300 wine cmd /c exit >/dev/null 2>&1 || true
  mkdir -p "$src"
  cat >"$src/bcryptprimitives.c" <<'C'
#include <windows.h>
#include <ntsecapi.h>
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
C
  printf 'LIBRARY bcryptprimitives\nEXPORTS\nProcessPrng\n' >"$src/bcryptprimitives.def"
  x86_64-w64-mingw32-gcc -shared -O2 -o "$sys32/bcryptprimitives.dll" \
    "$src/bcryptprimitives.c" "$src/bcryptprimitives.def" -ladvapi32
}

wine_works() {
  command -v wine >/dev/null || return 1
  mkdir -p "$cache"
  wine_prng || return 1
  timeout 120 wine "target/$win_target/debug/interpreter.exe" --version
}

test_windows() {
  local args=()
  case "$tests" in
    default) for t in "${wine_skips[@]}"; do args+=(--skip "$t"); done ;;
    *) args=("$tests") ;;
  esac
  # insta cannot ask cargo for the workspace under wine: tell it.
  INSTA_WORKSPACE_ROOT="$PWD" CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine \
    cargo test --target "$win_target" --workspace --exclude interpreter-tests --lib --bins -- --test-threads 2 "${args[@]}"
}

step "rustup targets" install_targets
step "cargo-zigbuild and ziglang" install_zig
step "mingw-w64 and wine" install_debian
step "macOS arm64 build (zigbuild)" build_mac
step "Windows x86_64 build (mingw-w64)" build_windows
if [ "$tests" = none ]; then
  echo "== cross-check: Windows unit tests SKIPPED (CROSS_CHECK_TESTS=none)"
elif [ -f "target/$win_target/debug/interpreter.exe" ] && wine_works; then
  step "Windows unit tests under wine" test_windows
else
  echo "== cross-check: Windows unit tests SKIPPED: wine cannot run the Windows binary here"
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "cross-check failed: ${failures[*]}"
  exit 1
fi
echo "cross-check passed"
