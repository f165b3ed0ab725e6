#!/usr/bin/env bash
# The wasm test command: installs what it needs on a fresh machine (skipping what is present),
# builds the npm packages with wasm-pack (tests/wasm/build.sh: the full package for `--target web`
# and `--target nodejs`, the server-only and client-only packages for `--target web`), prints their
# sizes, then runs
#   1. wasm-bindgen-test (tests/wasm_core.rs, tests/wasm_bindings.rs, tests/wasm_client.rs) under node,
#   2. the same in headless Chromium,
#   3. the server-only and client-only packages under node, one talking to the other (tests/wasm/split.mjs),
#      and the Worker-style fetch handler under node, driven by the official TS SDK client,
#   4. the same handler as a module Worker inside Cloudflare's runtime, workerd (npm `workerd`),
#      driven by the official TS SDK client, raw 2026-07-28 requests and `orkestrel-mcp tools/call`,
#   5. the JS client's task API (the nodejs package) against the native conformance fixture
#      (examples/conformance-server.rs) over HTTP, both eras (tests/wasm/client_tasks.mjs),
#   6. the JS client's sign-in (createFetchTransport's `auth`) at a real authorization server,
#      oidc-provider (tests/auth), protecting `orkestrel-mcp serve --auth-issuer`
#      (tests/wasm/client_auth.mjs),
#   7. the www/ page in headless Chromium (playwright-core): the in-page server, and the remote
#      mode (the wasm client) against `orkestrel-mcp serve --http 127.0.0.1:0 --cors <page origin>`
#      over HTTP and WebSocket, with its resources, prompts and notifications panes; its sign-in
#      popup at oidc-provider (tests/wasm/page_auth.mjs); screenshots in target/wasm-artifacts/,
# and type-checks a consumer of the generated .d.ts with tsc --strict.
# Ends with `wasm: N passed, M failed`; exit 0 only when all pass.
#
#   bash tests/wasm/run.sh               # everything
#   SKIP_BROWSER=1 bash tests/wasm/run.sh   # no Chromium (node only)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
export CARGO_TERM_COLOR=never
export WASM_PACK_CACHE="$ROOT/target/wasm-pack-cache"
export PATH="$HOME/.cargo/bin:$ROOT/tests/wasm/node_modules/.bin:$PATH"
PKG="$ROOT/target/wasm-pkg"

PASSED=0
FAILED=0
step() { printf '\n== wasm: %s\n' "$*"; }
fail() { echo "wasm: FAILED: $*" >&2; echo "wasm: $PASSED passed, $((FAILED > 0 ? FAILED : 1)) failed"; exit 1; }
count_cargo() { # sum the "test result" lines of a (wasm-bindgen-test) cargo test log
  local p f
  p=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$1" | awk '{s+=$4} END {print s+0}')
  f=$(grep -Eo '[0-9]+ failed;' "$1" | awk '{s+=$1} END {print s+0}')
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}
count_line() { # add a "<label>: N passed, M failed" line of a log
  local line
  line=$(grep -E "^$2: [0-9]+ passed, [0-9]+ failed" "$1" | tail -1 || true)
  [ -n "$line" ] || { FAILED=$((FAILED + 1)); return; }
  PASSED=$((PASSED + $(echo "$line" | awk '{print $2}')))
  FAILED=$((FAILED + $(echo "$line" | awk '{print $4}')))
}

step "toolchain (installed only when missing)"
started=$(date +%s)
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
# The wasm-bindgen CLI must equal the wasm-bindgen crate in Cargo.lock (else wasm-pack downloads
# its own, which fails offline). Its own lockfile pins a crate the registry lacks: no --locked.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
[ -n "$WB_VERSION" ] || fail "no wasm-bindgen in Cargo.lock"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  cargo install wasm-bindgen-cli --version "$WB_VERSION"
fi
command -v wasm-pack >/dev/null || cargo install wasm-pack --locked
# node packages: the TS SDK, playwright-core, typescript, workerd + esbuild, and binaryen@132's wasm-opt (first on PATH, so
# wasm-pack neither downloads binaryen nor picks up Debian's broken v108).
if [ ! -x tests/wasm/node_modules/.bin/wasm-opt ] || [ ! -x tests/wasm/node_modules/.bin/workerd ] \
  || [ tests/wasm/package-lock.json -nt tests/wasm/node_modules/.package-lock.json ]; then
  (cd tests/wasm && npm ci --no-audit --no-fund)
fi
# oidc-provider, the authorization server of the sign-in tests (tests/run.sh installs it too).
if [ ! -d tests/auth/node_modules/oidc-provider ] || [ tests/auth/package-lock.json -nt tests/auth/node_modules/.package-lock.json ]; then
  (cd tests/auth && npm ci --no-audit --no-fund)
fi
if [ -z "${SKIP_BROWSER:-}" ] && { ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; }; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi
echo "toolchain ready in $(( $(date +%s) - started )) s (wasm-bindgen $WB_VERSION, $(wasm-pack --version), wasm-opt $(wasm-opt --version | awk '{print $3}'))"

step "wasm-pack build: full (web, nodejs), server-only and client-only (web); profile wasm-release; sizes (.wasm + JS glue)"
started=$(date +%s)
bash tests/wasm/build.sh "$PKG" || fail "tests/wasm/build.sh"
echo "built in $(( $(date +%s) - started )) s"

step "the .d.ts under tsc --strict (tests/wasm/types_check.ts)"
if (cd tests/wasm && tsc -p tsconfig.json); then PASSED=$((PASSED + 1)); echo "types: ok"; else FAILED=$((FAILED + 1)); fi

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
WASM_TESTS=(--target wasm32-unknown-unknown --test wasm_core --test wasm_bindings --test wasm_client)

step "wasm-bindgen-test under node"
log=$(mktemp)
if cargo test "${WASM_TESTS[@]}" 2>&1 | tee "$log"; then count_cargo "$log"; else count_cargo "$log"; FAILED=$((FAILED + 1)); fi
rm -f "$log"

if [ -z "${SKIP_BROWSER:-}" ]; then
  step "wasm-bindgen-test in headless Chromium"
  log=$(mktemp)
  if WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=$(command -v chromedriver) timeout 600 cargo test "${WASM_TESTS[@]}" 2>&1 | tee "$log"; then
    count_cargo "$log"
  else
    count_cargo "$log"; FAILED=$((FAILED + 1))
  fi
  rm -f "$log"
fi

step "the server-only and client-only packages under node (tests/wasm/split.mjs)"
log=$(mktemp)
node tests/wasm/split.mjs "$PKG" 2>&1 | tee "$log" || true
count_line "$log" split
rm -f "$log"

step "the Worker fetch handler under node, driven by the official TS SDK client"
log=$(mktemp)
ORKESTREL_MCP_PKG="$PKG/node/orkestrel_mcp.js" node tests/wasm/worker_sdk.mjs 2>&1 | tee "$log" || true
count_line "$log" worker
rm -f "$log"

step "the Worker in workerd (Cloudflare's runtime), driven by the official TS SDK client and orkestrel-mcp, both eras"
cargo build --quiet --features native --bin orkestrel-mcp || fail "cargo build --features native --bin orkestrel-mcp"
log=$(mktemp)
timeout 120 node tests/wasm/workerd/test.mjs 2>&1 | tee "$log" || true
count_line "$log" workerd
rm -f "$log"

step "the JS client's task API against the native conformance fixture over HTTP, both eras"
cargo build --quiet --features native --example conformance-server || fail "cargo build --features native --example conformance-server"
log=$(mktemp)
ORKESTREL_MCP_PKG="$PKG/node/orkestrel_mcp.js" CONFORMANCE_SERVER="$ROOT/target/debug/examples/conformance-server" \
  timeout 120 node tests/wasm/client_tasks.mjs 2>&1 | tee "$log" || true
count_line "$log" client-tasks
rm -f "$log"

step "the JS client's sign-in at oidc-provider, protecting orkestrel-mcp serve --auth-issuer"
log=$(mktemp)
ORKESTREL_MCP_PKG="$PKG/node/orkestrel_mcp.js" ORKESTREL_MCP_BIN="$ROOT/target/debug/orkestrel-mcp" \
  timeout 120 node tests/wasm/client_auth.mjs 2>&1 | tee "$log" || true
count_line "$log" client-auth
rm -f "$log"

if [ -z "${SKIP_BROWSER:-}" ]; then
  step "the www/ page in headless Chromium (playwright-core), local mode and remote mode against orkestrel-mcp serve"
  cargo build --quiet --features native --bin orkestrel-mcp || fail "cargo build --features native --bin orkestrel-mcp"
  log=$(mktemp)
  PKG="$PKG/web" node tests/wasm/page_test.mjs 2>&1 | grep -v 'unexpected operator' | tee "$log" || true
  count_line "$log" page
  rm -f "$log"
  step "the www/ console's sign-in popup in headless Chromium, at oidc-provider"
  log=$(mktemp)
  PKG="$PKG/web" timeout 150 node tests/wasm/page_auth.mjs 2>&1 | tee "$log" || true
  count_line "$log" page-auth
  rm -f "$log"
fi

echo
echo "wasm: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
