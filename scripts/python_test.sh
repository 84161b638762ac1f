#!/usr/bin/env bash
# Builds the Python bindings (python/) and runs their tests against the tbforge
# command line. Needs Rust and Python 3.8+ (PYTHON, default python3) and PyPI
# for maturin and pytest, installed once into target/py-venv.
#
# Both builds use cargo's dev profile in the root target directory: this
# project's dev profile is optimised (opt-level 3), and in CI `cargo test` has
# already built the dev CLI, so it costs nothing here; the extension shares
# the probe-only library with the C library's build. TBFORGE_BIN overrides the
# CLI the tests compare against.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
venv="$PWD/target/py-venv"
wheels="$PWD/target/py-wheels"

if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
if [ ! -x "$venv/bin/maturin" ] || ! "$venv/bin/python" -c "import pytest" 2>/dev/null; then
  echo "== maturin and pytest into $venv"
  "$venv/bin/python" -m pip install -q maturin pytest
fi

echo "== tbforge CLI (dev profile)"
cargo build -q --bin tbforge
export TBFORGE_BIN="${TBFORGE_BIN:-$PWD/target/debug/tbforge}"

echo "== python/ wheel, installed into $venv"
rm -rf "$wheels"
"$venv/bin/maturin" build -q --profile dev -m python/Cargo.toml \
  -i "$venv/bin/python" -o "$wheels"
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheels"/tbforge-*.whl

echo "== pytest python/tests"
# From python/tests, not python/: the installed package, not the source
# directory python/tbforge (which lacks the compiled extension), is imported.
(cd python/tests && "$venv/bin/python" -m pytest -q -p no:cacheprovider .)
echo "python bindings: built and tested in $((SECONDS - start)) s"
