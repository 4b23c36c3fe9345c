#!/usr/bin/env bash
# Builds the shipped binary and the release assets in dist/:
#
#   scripts/dist.sh [--target TRIPLE] [--profile dist|release|dev] [--no-link-order] [--npm] [--vsix]
#
#   dist/interpreter-v<version>-<target>.tar.gz   interpreter, i (a symlink to it), LICENSE, README.md
#   dist/interpreter-v<version>-<target>.zip      Windows: interpreter.exe, LICENSE, README.md
#   dist/SHA256SUMS                              every archive and VSIX of this version in dist/
#   dist/latest, dist/v<version> -> .            so dist/ can be served as an install.sh download base
#   dist/npm/*.tgz                               --npm: the launcher and the platform package
#   dist/interpreter-vscode-<version>-<vscode-target>.vsix   --vsix: the VS Code extension with the binary
#
# --profile: `dist` (the default) is what ships: fat LTO, one codegen unit, and on Linux the
# link-time layout (below). `release` and `dev` package a quick build, for the packaging
# checks of scripts/test.sh; their archives are not what a release ships. `dev` builds what
# `cargo build --workspace --bins` does, so it reuses the tests' build.
#
# Link-time layout (profile dist, Linux, a binary this machine runs): the binary is built,
# run under callgrind against the mock model (bench/order_file.py), and relinked by rust-lld
# with the functions start-up runs placed together; the relinked binary must define at least
# 90% of the names or the script fails. The order file is made from this build and lives in
# dist/.stage only: symbol names carry the build's hash, so no committed file could match.
# It needs valgrind; --no-link-order skips it (say, where valgrind cannot run).
#
# The version is workspace.package.version in Cargo.toml. Without --target, Linux builds the
# static musl target of the host's architecture and other systems build the host's target.
# Where the target cannot be built here (rustup cannot add it, or no C compiler for musl), the
# script says so and builds the host's target instead. The release workflow
# (.github/workflows/release.yml) runs this script once per target.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

say() { echo "dist.sh: $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

target=""
profile=dist
link_order=1
want_npm=0
want_vsix=0
while [ $# -gt 0 ]; do
  case $1 in
    --target)
      [ $# -ge 2 ] || die "--target needs a target triple"
      target=$2
      shift 2
      ;;
    --target=*)
      target=${1#--target=}
      shift
      ;;
    --profile)
      [ $# -ge 2 ] || die "--profile needs dist, release or dev"
      profile=$2
      shift 2
      ;;
    --profile=*)
      profile=${1#--profile=}
      shift
      ;;
    --no-link-order) link_order=0; shift ;;
    --npm) want_npm=1; shift ;;
    --vsix) want_vsix=1; shift ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument: $1 (usage: scripts/dist.sh [--target TRIPLE] [--profile dist|release|dev] [--no-link-order] [--npm] [--vsix])" ;;
  esac
done
case $profile in
  dist | release) profile_dir=$profile ;;
  dev) profile_dir=debug ;;
  *) die "--profile $profile: use dist, release or dev" ;;
esac

version=$(awk '
  /^\[workspace\.package\]/ { inside = 1; next }
  /^\[/ { inside = 0 }
  inside && /^version[ \t]*=/ { sub(/^[^"]*"/, ""); sub(/".*/, ""); print; exit }
' Cargo.toml)
[ -n "$version" ] || die "no workspace.package.version in Cargo.toml"
host=$(rustc -vV | sed -n 's/^host: //p')
[ -n "$host" ] || die "rustc -vV names no host triple"

if [ -z "$target" ]; then
  case $host in
    *-unknown-linux-gnu) target=${host%-gnu}-musl ;;
    *) target=$host ;;
  esac
fi

target_installed() {
  [ "$1" = "$host" ] && return 0
  command -v rustup >/dev/null 2>&1 || return 1
  rustup target list --installed 2>/dev/null | grep -qx "$1" && return 0
  say "adding the Rust target $1 (rustup target add)"
  if command -v timeout >/dev/null 2>&1; then
    timeout 300 rustup target add "$1" >&2
  else
    rustup target add "$1" >&2
  fi
}

# ring and tree-sitter have C code, so a musl build needs a musl C compiler: cc-rs looks for
# <arch>-linux-musl-gcc, which Debian/Ubuntu's musl-tools installs (with musl-gcc) for the
# machine's own architecture.
musl_cc() {
  local arch=${1%%-*} var=CC_${1//-/_}
  if [ -n "${!var:-}" ]; then
    echo "${!var}"
  elif command -v "$arch-linux-musl-gcc" >/dev/null 2>&1; then
    echo "$arch-linux-musl-gcc"
  elif [ "$arch" = "${host%%-*}" ] && command -v musl-gcc >/dev/null 2>&1; then
    echo musl-gcc
  fi
}

why_not=""
if ! target_installed "$target"; then
  why_not="rustup could not add the Rust target"
elif [[ $target == *-linux-musl ]]; then
  cc=$(musl_cc "$target")
  if [ -z "$cc" ]; then
    why_not="no C compiler for musl (install musl-tools, or set CC_${target//-/_})"
  else
    export "CC_${target//-/_}=$cc"
  fi
fi
if [ -n "$why_not" ]; then
  say "cannot build $target on this machine: $why_not; building the host's target $host instead"
  target=$host
fi

case $target in
  *-windows-*) exe=interpreter.exe ;;
  *) exe=interpreter ;;
esac
target_dir=${CARGO_TARGET_DIR:-$root/target}
build_args=(--profile "$profile" --locked -p interpreter --bin interpreter)
# A dev package is the build the tests drive (scripts/test.sh): the same package selection
# resolves the same features, so nothing is compiled a second time.
[ "$profile" = dev ] && build_args=(--profile dev --locked --workspace --bins)
if [ "$target" = "$host" ]; then
  # No --target: shares target/<profile> with cargo build, the demo and the tests.
  bin=$target_dir/$profile_dir/$exe
else
  build_args+=(--target "$target")
  bin=$target_dir/$target/$profile_dir/$exe
fi

# Linker arguments of the shipped Linux build, passed to the final link only (cargo rustc),
# and only when the linker is the toolchain's rust-lld: these flags mean nothing to others.
link_args=()
lld_dir=""
runs_natively() { [ "$target" = "$host" ] || { [[ $target == *-linux-musl ]] && [ "${target%%-*}" = "${host%%-*}" ] && [[ $host == *-linux-* ]]; }; }
user_linker() {
  local var=CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_LINKER
  [ -n "${!var:-}" ] || [[ "${RUSTFLAGS:-} ${CARGO_ENCODED_RUSTFLAGS:-}" == *linker* ]] || [[ "${RUSTFLAGS:-}" == *fuse-ld* ]]
}
if [ "$profile" = dist ] && [[ $target == *-linux-* ]] && [ "${target%%-*}" = "${host%%-*}" ]; then
  if user_linker; then
    say "a linker is set for $target: leaving its arguments alone (no link-time layout)"
  else
    d=$(rustc --print sysroot)/lib/rustlib/$host/bin/gcc-ld
    if [ -x "$d/ld.lld" ]; then
      lld_dir=$d
      link_args=(-C "link-arg=-fuse-ld=lld" -C "link-arg=-B$lld_dir")
      # A static musl binary applies packed relative relocations itself (musl 1.2.4 and
      # later). A glibc build does not pack: that would need glibc 2.36 (GLIBC_ABI_DT_RELR).
      [[ $target == *-linux-musl ]] && link_args+=(-C "link-arg=-Wl,-z,pack-relative-relocs")
    else
      say "the toolchain has no rust-lld ($d/ld.lld): no link-time layout"
    fi
  fi
fi
[ -n "$lld_dir" ] && runs_natively || link_order=0

build() { # extra rustc arguments for the final link
  local args=("${link_args[@]}" "$@")
  if [ ${#args[@]} -gt 0 ]; then
    cargo rustc "${build_args[@]}" -- "${args[@]}"
  else
    cargo build "${build_args[@]}"
  fi
}
started=$(date +%s)
say "building interpreter $version for $target (profile $profile${link_args[*]:+, rust-lld})"
build
[ -x "$bin" ] || die "cargo did not produce $bin"
say "built in $(($(date +%s) - started)) s"

stage=$root/dist/.stage/$target
rm -rf "$stage"
mkdir -p "$stage"
if [ "$link_order" = 1 ]; then
  command -v valgrind >/dev/null 2>&1 || die "the link-time layout needs valgrind (apt-get install valgrind), or pass --no-link-order"
  started=$(date +%s)
  say "link-time layout: the mock model (cargo build --release -p interpreter-tests --bin mock-llm)"
  cargo build --release --locked -p interpreter-tests --bin mock-llm
  say "link-time layout: profiling $bin under callgrind"
  python3 bench/order_file.py --bin "$bin" --mock "$target_dir/release/mock-llm" --out "$stage/link-order.txt" >&2
  say "link-time layout: relinking with $stage/link-order.txt"
  build -C "link-arg=-Wl,--symbol-ordering-file=$stage/link-order.txt"
  python3 bench/order_file.py --bin "$bin" --check "$stage/link-order.txt" --min 0.9 >&2 ||
    die "the relinked binary does not match its own link order"
  say "link-time layout done in $(($(date +%s) - started)) s"
elif [ "$profile" = dist ]; then
  say "no link-time layout for $target (it needs rust-lld and a binary this machine runs)"
fi

dist=$root/dist
mkdir -p "$dist"
cp "$bin" "$stage/$exe"
chmod 755 "$stage/$exe"
if [ "$profile" = dev ] && command -v strip >/dev/null 2>&1 && [[ $target == *-linux-* ]]; then
  # A dev build's line tables would make the packaging checks push 120 MB through gzip.
  strip --strip-debug "$stage/$exe"
fi
cp LICENSE README.md "$stage/"

# A binary this machine can run gets a smoke test before it is packed.
runs_here=0
if runs_natively; then
  runs_here=1
  answer=$("$stage/$exe" --version)
  [ "$answer" = "interpreter $version" ] || die "$stage/$exe --version printed '$answer', not 'interpreter $version'"
fi

name=interpreter-v$version-$target
case $target in
  *-windows-*)
    archive=$dist/$name.zip
    rm -f "$archive"
    # Windows has no symlinks in zip files and a copy would double the download: no `i` here.
    py=$(command -v python3 || command -v python) || die "python is needed to write $archive"
    (cd "$stage" && "$py" -m zipfile -c "$archive" "$exe" LICENSE README.md)
    ;;
  *)
    archive=$dist/$name.tar.gz
    ln -s "$exe" "$stage/i"
    tar_opts=()
    if tar --version 2>/dev/null | grep -q 'GNU tar'; then
      tar_opts=(--owner=0 --group=0 --numeric-owner)
      if epoch=$(git log -1 --format=%ct 2>/dev/null) && [ -n "$epoch" ]; then
        tar_opts+=(--mtime="@$epoch")
      fi
    fi
    # COPYFILE_DISABLE: no AppleDouble ._ files from macOS tar.
    COPYFILE_DISABLE=1 tar ${tar_opts[@]+"${tar_opts[@]}"} -C "$stage" -cf - "$exe" i LICENSE README.md | gzip -9n >"$archive"
    ;;
esac
say "wrote $archive ($(wc -c <"$archive" | tr -d ' ') bytes)"

npm_platform() {
  case $1 in
    x86_64-unknown-linux-*) echo linux-x64 ;;
    aarch64-unknown-linux-*) echo linux-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-*) echo win32-x64 ;;
    aarch64-pc-windows-*) echo win32-arm64 ;;
  esac
}

if [ $want_npm = 1 ]; then
  command -v npm >/dev/null 2>&1 || die "--npm needs npm"
  mkdir -p "$dist/npm"
  npm_stage=$dist/.stage/npm
  rm -rf "$npm_stage"
  mkdir -p "$npm_stage/interpreter/bin"
  cp npm/interpreter/package.json npm/interpreter/README.md LICENSE "$npm_stage/interpreter/"
  cp npm/interpreter/bin/interpreter.js "$npm_stage/interpreter/bin/"
  chmod 755 "$npm_stage/interpreter/bin/interpreter.js"
  packs=("$npm_stage/interpreter")
  platform=$(npm_platform "$target")
  if [ -n "$platform" ] && [ -f "npm/platforms/$platform/package.json" ]; then
    p=$npm_stage/$platform
    mkdir -p "$p/bin"
    cp "npm/platforms/$platform/package.json" LICENSE "$p/"
    cp "$stage/$exe" "$p/bin/$exe"
    chmod 755 "$p/bin/$exe"
    # shellcheck disable=SC2016 # backticks are Markdown here
    printf '# @openinterpreter/interpreter-%s\n\nThe `interpreter` %s binary (%s build of %s) for %s. Install\n[@openinterpreter/interpreter](https://github.com/openinterpreter/interpreter#readme) instead:\nnpm picks this package for you by its `os` and `cpu` fields.\n' \
      "$platform" "$version" "$target" "$version" "$platform" >"$p/README.md"
    packs+=("$p")
  else
    say "no npm platform package for $target (npm/platforms/${platform:-?} does not exist): wrote only the launcher"
  fi
  for p in "${packs[@]}"; do
    file=$(cd "$p" && npm pack --silent --ignore-scripts --pack-destination "$dist/npm" | tail -n 1)
    say "wrote $dist/npm/$file"
  done
fi

vscode_target() {
  case $1 in
    x86_64-unknown-linux-*) echo linux-x64 ;;
    aarch64-unknown-linux-*) echo linux-arm64 ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-*) echo win32-x64 ;;
    aarch64-pc-windows-*) echo win32-arm64 ;;
  esac
}

if [ $want_vsix = 1 ]; then
  vt=$(vscode_target "$target")
  [ -n "$vt" ] || die "no VS Code target for $target"
  ext=$root/editors/vscode
  vsix=$dist/interpreter-vscode-$version-$vt.vsix
  # The binary is in editors/vscode/bin only while vsce packs it: a universal VSIX built
  # later (npm run package) must not pick up a stale one.
  trap 'rm -rf "${ext:?}/bin"' EXIT
  rm -rf "${ext:?}/bin"
  mkdir -p "$ext/bin"
  cp "$stage/$exe" "$ext/bin/$exe"
  chmod 755 "$ext/bin/$exe"
  (
    cd "$ext"
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
      npm ci --ignore-scripts --no-audit --no-fund
    fi
    npx --no-install vsce package --no-dependencies --target "$vt" --out "$vsix"
  )
  rm -rf "${ext:?}/bin"
  say "wrote $vsix"
fi

# dist/ doubles as a download base for scripts/install.sh: $BASE/latest names the newest
# version and $BASE/v<version>/<asset> is the asset (the GitHub release layout).
printf '%s\n' "$version" >"$dist/latest"
case $(uname -s) in
  MINGW* | MSYS* | CYGWIN*) ;; # no real symlinks
  *) ln -sfn . "$dist/v$version" ;;
esac

(
  cd "$dist"
  shopt -s nullglob
  assets=(interpreter-v"$version"-*.tar.gz interpreter-v"$version"-*.zip interpreter-vscode-"$version"-*.vsix)
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "${assets[@]}" >SHA256SUMS
  else
    shasum -a 256 "${assets[@]}" >SHA256SUMS
  fi
)
say "wrote $dist/SHA256SUMS"
[ $runs_here = 1 ] || say "note: $target does not run on this machine ($host): the binary was not smoke-tested"
echo "$archive"
