#!/usr/bin/env bash
# The whole test suite: Rust unit and end-to-end tests, then the real third-party clients
# (the official Codex TypeScript SDK, …) against the mock model. Installs what the client
# tests need on first run. Nothing reaches the network except package registries for installs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

echo "== cargo build (binaries the e2e tests drive)"
cargo build --workspace --bins
echo "== cargo test"
cargo test --workspace

if [ -f tests/node/package.json ]; then
  echo "== node: official Codex SDK against interpreter exec"
  (
    cd tests/node
    if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
      npm ci --omit=optional --ignore-scripts --no-audit --no-fund
    fi
    npm test
  )
fi
