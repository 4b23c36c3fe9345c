#!/bin/sh
# Prints the import cycles among the files of every module folder (none is the rule:
# crates/core/src/architecture_tests.rs).
cd "$(dirname "$0")/.." || exit 1
cargo test -q -p interpreter-core --lib architecture_tests::no_module_folder_has_an_import_cycle -- --nocapture 2>&1 |
    awk '/^import cycles:/ { on = 1; print; next } on && /^  / { print; next } { on = 0 }'
