#!/usr/bin/env bash
# The test command (README "Test"): installs what it needs on a fresh machine, skipping what is
# already there, then runs every check and test of the crate. Exit 0 only when all pass.
#
#   bash tests/run.sh            # everything
#   SKIP_INTEROP=1 bash tests/run.sh   # no SDK interop / conformance suites
#   SKIP_WASM=1 bash tests/run.sh      # no wasm package tests (tests/wasm/run.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never
# No incremental caches: each test crate and feature set would keep one (GBs in all) for
# rebuilds this one-shot run never makes. CARGO_INCREMENTAL=1 bash tests/run.sh keeps them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

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
# The `otel` code only (lib, binary, its test): the other targets were just checked with native.
cargo clippy --features otel --lib --bins --test otel -- -D warnings || fail "clippy --features otel"
cargo clippy --features redis --lib --bins --test redis -- -D warnings || fail "clippy --features redis"

step "wasm32-unknown-unknown: the core builds with no features and with --all-features"
cargo check --lib --target wasm32-unknown-unknown || fail "wasm32 check"
cargo check --lib --target wasm32-unknown-unknown --all-features || fail "wasm32 check --all-features"

step "benchmarks build (not run): the bench crate, with rmcp and criterion (~2 min cold, release)"
cargo build --release -q -p orkestrel-mcp-bench --benches --bins || fail "bench crate build"

step "test dependencies: a real authorization server (oidc-provider, tests/auth) for tests/auth.rs"
if [ ! -f tests/auth/node_modules/.orkestrel-stamp ] \
   || ! cmp -s tests/auth/package-lock.json tests/auth/node_modules/.orkestrel-stamp; then
  (cd tests/auth && timeout 300 npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci in tests/auth"
  cp tests/auth/package-lock.json tests/auth/node_modules/.orkestrel-stamp
fi

step "test dependencies: Debian's redis-server for tests/redis/ (scale-out; each test starts its own)"
if ! command -v redis-server >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) \
    || fail "apt-get install redis-server"
fi
# Installed: a Redis test that cannot start it fails rather than skips.
export ORKESTREL_REQUIRE_REDIS=1

step "cargo test (no features: core, doctests)"
run_tests
step "cargo test --features native (transports, binary, doctests)"
run_tests --features native
# One test crate with the `redis` feature: several real `serve --redis` binaries share one
# session through a real redis-server. The other test crates stay on the plain `native` build.
# (Its two SDK-client tests run after the interop step below, which installs their packages.)
step "cargo test --features redis --test redis (several serve --redis instances share sessions)"
run_tests --features redis --test redis -- --skip _sdk_client_
# One test crate with the `otel` feature (the OpenTelemetry crates built once, then the lib, the
# binary and this test with the feature; about 12 s warm): the real binaries export to a real
# OTLP receiver. The other test crates stay on the plain `native` build.
step "cargo test --features otel --test otel (OpenTelemetry: spans, _meta context, metrics over OTLP)"
run_tests --features otel --test otel

# An interop or conformance script: its "NAME: N passed, M failed" line is added to the totals.
suite() { # LABEL SCRIPT ARGS...
  local label="$1"; shift
  step "$label"
  local log; log=$(mktemp)
  if bash "$@" 2>&1 | tee "$log"; then :; else FAILED=$((FAILED + 1)); fi
  local p; p=$(grep -Eo '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | awk '{print $2}')
  PASSED=$((PASSED + ${p:-0}))
  rm -f "$log"
  [ "$FAILED" -eq 0 ] || fail "$label"
}

suite "fuzz: coverage-guided, about a minute in all (tests/fuzz.sh; skipped without nightly)" tests/fuzz.sh

if [ -z "${SKIP_INTEROP:-}" ]; then
  cargo build --features native --bin orkestrel-mcp --example conformance-server --example conformance-client --example client-tour
  BIN=target/debug/orkestrel-mcp
  suite "interop: the official TS and Python SDK clients drive orkestrel-mcp (stdio, HTTP, and HTTP through the bridge)" tests/interop/run.sh "$BIN"
  suite "interop: sessions, resumption and WebSocket (TS SDK, Python mcp 1.x)" tests/interop/sessions/run.sh "$BIN"
  step "cargo test --features redis --test redis _sdk_client_ (the TS and Python SDK clients' sessions through a round-robin proxy over two serve --redis instances)"
  run_tests --features redis --test redis _sdk_client_
  suite "interop: our client (tools, call, bridge) against server-everything and the Python SDK; the TS SDK through the bridge" tests/interop/client/run.sh "$BIN" target/debug/examples/client-tour
  suite "conformance: the official MCP suite, server legs and client legs" tests/conformance/run.sh target/debug/examples/conformance-server target/debug/examples/conformance-client
fi

step "wasm: the npm package in node and Chromium (tests/wasm/run.sh)"
if [ -z "${SKIP_WASM:-}" ]; then
  log=$(mktemp)
  if bash tests/wasm/run.sh 2>&1 | tee "$log"; then :; else FAILED=$((FAILED + 1)); fi
  p=$(grep -Eo '^wasm: [0-9]+ passed' "$log" | awk '{s+=$2} END {print s+0}'); PASSED=$((PASSED + p))
  rm -f "$log"
  [ "$FAILED" -eq 0 ] || fail "wasm"
fi

echo
echo "run: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
