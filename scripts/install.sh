#!/bin/sh
# Installs the `interpreter` release binary (and its `i` alias) for this machine:
#
#   curl -fsSL https://github.com/openinterpreter/interpreter/releases/latest/download/install.sh | sh
#
# It downloads $BASE/v<version>/interpreter-v<version>-<target>.tar.gz and
# $BASE/v<version>/SHA256SUMS, refuses the archive unless its SHA-256 is the one listed, and
# installs into ~/.local/bin. Environment:
#
#   INTERPRETER_VERSION        a version to pin (0.1.0 or v0.1.0); default: the latest release
#   INTERPRETER_INSTALL_DIR    where to install; default: ~/.local/bin
#   INTERPRETER_DOWNLOAD_BASE  another download base laid out like the GitHub releases:
#                              $BASE/v<version>/<asset>, and $BASE/latest holding the newest
#                              version (scripts/dist.sh makes dist/ such a base)
#   INTERPRETER_TARGET         the target triple to fetch; default: this machine's release
#                              target (<arch>-unknown-linux-musl or <arch>-apple-darwin)
#
# The latest version comes from the release asset `latest` (GitHub's releases/latest/download
# redirect), or from $BASE/latest: no GitHub API call, no token.
#
# Everything is inside main(), called on the last line, so a truncated download runs nothing.
set -eu

REPO=openinterpreter/interpreter
GITHUB_DOWNLOAD=https://github.com/$REPO/releases

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

download() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,http' -fsSL --retry 3 -o "$2" "$1" || die "could not download $1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1" || die "could not download $1"
  else
    die "curl or wget is needed"
  fi
}

# sh_quote WORD: WORD as one word of a POSIX shell (bash, zsh, dash): bare when it is plain,
# else in single quotes, each ' written as '\''.
sh_quote() {
  case $1 in
    '' | *[!A-Za-z0-9_./-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
    *) printf '%s' "$1" ;;
  esac
}

# fish_quote WORD: the same for fish, whose single quotes take \' and \\ as escapes.
fish_quote() {
  case $1 in
    '' | *[!A-Za-z0-9_./-]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/[\\\\']/\\\\&/g")" ;;
    *) printf '%s' "$1" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 "$1" | awk '{print $NF}'
  else
    die "sha256sum, shasum or openssl is needed to check the download"
  fi
}

detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case $arch in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) die "no release build for the $arch architecture; build from source: cargo install --locked --git https://github.com/$REPO interpreter" ;;
  esac
  case $os in
    Linux) echo "$arch-unknown-linux-musl" ;;
    Darwin)
      # A shell under Rosetta reports x86_64 on Apple silicon: take the native build.
      if [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
        arch=aarch64
      fi
      echo "$arch-apple-darwin"
      ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      die "this script installs on Linux and macOS; on Windows use npm (npm install -g @openinterpreter/interpreter) or build from source"
      ;;
    *) die "no release build for $os; build from source: cargo install --locked --git https://github.com/$REPO interpreter" ;;
  esac
}

main() {
  base=${INTERPRETER_DOWNLOAD_BASE:-}
  version=${INTERPRETER_VERSION:-latest}
  dir=${INTERPRETER_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}
  base=${base%/}

  if [ -n "${INTERPRETER_TARGET:-}" ]; then
    target=$INTERPRETER_TARGET
  else
    target=$(detect_target)
  fi
  case $target in
    *[!0-9A-Za-z_.-]*) die "not a target triple: '$target'" ;;
  esac
  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t interpreter-install)
  new=""
  trap 'rm -rf "$tmp"; [ -z "$new" ] || rm -f "$new"' EXIT
  trap 'exit 130' INT TERM

  if [ "$version" = latest ]; then
    if [ -n "$base" ]; then
      latest_url=$base/latest
    else
      latest_url=$GITHUB_DOWNLOAD/latest/download/latest
    fi
    download "$latest_url" "$tmp/latest"
    version=$(tr -d ' \t\r\n' <"$tmp/latest")
    [ -n "$version" ] || die "$latest_url is empty"
  fi
  version=${version#v}
  case $version in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) die "not a version: '$version' (INTERPRETER_VERSION is like 0.1.0)" ;;
  esac
  case $version in
    *[!0-9A-Za-z.+-]*) die "not a version: '$version'" ;;
  esac
  [ -n "$base" ] || base=$GITHUB_DOWNLOAD/download

  archive=interpreter-v$version-$target.tar.gz
  say "installing interpreter $version ($target) into $dir"
  download "$base/v$version/$archive" "$tmp/$archive"
  download "$base/v$version/SHA256SUMS" "$tmp/SHA256SUMS"

  # Hex digits in either case (tools differ); compared in lower case.
  expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print tolower($1); exit }' "$tmp/SHA256SUMS")
  [ -n "$expected" ] || die "SHA256SUMS of v$version lists no $archive; refusing to install"
  case $expected in
    *[!0-9a-f]*) die "SHA256SUMS of v$version lists '$expected' for $archive, not a SHA-256; refusing to install" ;;
  esac
  actual=$(sha256_of "$tmp/$archive" | tr 'A-F' 'a-f')
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; refusing to install"
  fi

  mkdir "$tmp/x"
  tar -xzf "$tmp/$archive" -C "$tmp/x" || die "could not unpack $archive"
  [ -f "$tmp/x/interpreter" ] || die "$archive holds no interpreter binary"

  mkdir -p "$dir" || die "cannot create $dir"
  # Copy next to the target and check it there (where it will run: the temp folder may be
  # noexec), then rename: atomic, safe while an old binary is running, and a binary that
  # does not run replaces nothing.
  new=$dir/.interpreter.new.$$
  cp "$tmp/x/interpreter" "$new" || die "cannot write to $dir"
  chmod 755 "$new"
  installed=$("$new" --version 2>&1) || die "the interpreter in $archive does not run here ($installed); nothing in $dir was changed"
  case $installed in
    "interpreter "*) ;;
    *) die "the interpreter in $archive answers --version with '$installed'; nothing in $dir was changed" ;;
  esac
  mv -f "$new" "$dir/interpreter"
  new=""

  # The `i` alias: a symlink, unless `i` is already something else.
  if [ -L "$dir/i" ] && [ "$(readlink "$dir/i")" = interpreter ]; then
    :
  elif [ -e "$dir/i" ] || [ -L "$dir/i" ]; then
    say "kept the existing $dir/i: the \`i\` alias was not installed"
  else
    ln -s interpreter "$dir/i"
  fi

  say "installed $installed at $dir/interpreter"

  case ":${PATH:-}:" in
    *":$dir:"*) ;;
    *)
      shell_name=$(basename "${SHELL:-sh}")
      say "$dir is not on your PATH. Add it:"
      # Lines to paste: the folder is quoted for the shell that reads it (twice for the
      # line written to the profile), whatever spaces, $ or quotes it holds.
      export_line="export PATH=$(sh_quote "$dir"):\"\$PATH\""
      case $shell_name in
        fish) say "  fish_add_path $(fish_quote "$dir")" ;;
        zsh) say "  printf '%s\\n' $(sh_quote "$export_line") >> ~/.zshrc && exec zsh" ;;
        bash) say "  printf '%s\\n' $(sh_quote "$export_line") >> ~/.bashrc && exec bash" ;;
        *) say "  $export_line   (in your shell's profile)" ;;
      esac
      ;;
  esac
}

main "$@"
