#!/usr/bin/env bash
# The test command (README "Test"): installs what it needs on a fresh machine, skipping what is
# already there, then runs every check and test of the crate. Exit 0 only when all pass.
#
#   bash tests/run.sh            # everything
#   SKIP_INTEROP=1 bash tests/run.sh   # Rust checks and tests only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never

PASSED=0
FAILED=0
step() { printf '\n== %s\n' "$*"; }
count() { # sum the "test result" lines of a cargo test log into PASSED/FAILED
  local p f
  p=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$1" | awk '{s+=$4} END {print s+0}')
  f=$(grep -Eo '[0-9]+ failed;' "$1" | awk '{s+=$1} END {print s+0}')
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}
run_tests() { # cargo test args..., counted
  local log; log=$(mktemp)
  if cargo test "$@" 2>&1 | tee "$log"; then count "$log"; rm -f "$log"; else count "$log"; rm -f "$log"; FAILED=$((FAILED + 1)); fail "cargo test $*"; fi
}
fail() { echo "run: FAILED: $*" >&2; echo "run: $PASSED passed, $((FAILED > 0 ? FAILED : 1)) failed"; exit 1; }

step "toolchain"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

step "cargo fmt --check"
cargo fmt --all -- --check || fail "cargo fmt (run 'cargo fmt --all')"

step "cargo clippy (no features, then native), warnings are errors"
cargo clippy --all-targets -- -D warnings || fail "clippy"
cargo clippy --all-targets --features native -- -D warnings || fail "clippy --features native"

step "wasm32-unknown-unknown: the core builds with no features and with --all-features"
cargo check --lib --target wasm32-unknown-unknown || fail "wasm32 check"
cargo check --lib --target wasm32-unknown-unknown --all-features || fail "wasm32 check --all-features"

step "benchmarks build (not run): the bench crate, with rmcp and criterion (~2 min cold, release)"
cargo build --release -q -p orkestrel-mcp-bench --benches --bins || fail "bench crate build"

step "cargo test (no features: core, doctests)"
run_tests
step "cargo test --features native (transports, binary, doctests)"
run_tests --features native

step "interop: official SDK clients drive orkestrel-mcp"
if [ -z "${SKIP_INTEROP:-}" ]; then
  cargo build --features native --bin orkestrel-mcp
  log=$(mktemp)
  if bash tests/interop/run.sh target/debug/orkestrel-mcp 2>&1 | tee "$log"; then :; else FAILED=$((FAILED + 1)); fi
  p=$(grep -Eo '^interop: [0-9]+ passed' "$log" | awk '{s+=$2} END {print s+0}'); PASSED=$((PASSED + p))
  rm -f "$log"
  [ "$FAILED" -eq 0 ] || fail "interop"
fi

echo
echo "run: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
