#!/usr/bin/env bash
# Soak and fault run (issue 16, item 10); not part of tests/run.sh or CI:
#
#   bash benches/soak.sh            # 10 minutes
#   SOAK_SECONDS=60 bash benches/soak.sh
#
# Builds the release `orkestrel-mcp` and the bench crate's `soak` load generator, starts
# `orkestrel-mcp serve --http 127.0.0.1:PORT` (a free port), and runs `soak` against it for
# SOAK_SECONDS (default 600): Streamable HTTP in the handshake era (sessions, DELETE) and the
# 2026-07-28 era, WebSocket on the same path, stdio children, and injected faults (clients
# vanishing mid-call over raw TCP and WebSocket, SIGKILLed stdio children with a call in flight,
# slow SSE and WebSocket readers). It prints calls per kind, errors, the server's RSS and open
# descriptors over time, and the stdio children left; the exit status is non-zero when there
# was an error, the descriptors did not return to baseline, or a child was left.
# The server's stderr goes to target/soak/server.log, the report to target/soak/report.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_TO_RUN="${SOAK_SECONDS:-600}"
OUT=target/soak
mkdir -p "$OUT"

# One build of both binaries (one feature set for the shared library, so no rebuild next time).
cargo build --release -p orkestrel-mcp -p orkestrel-mcp-bench --features orkestrel-mcp/native \
  --bin orkestrel-mcp --bin soak >&2
# Cargo's target directory (CARGO_TARGET_DIR, a config's build.target-dir, else ./target).
TARGET="$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
BIN="$TARGET/release/orkestrel-mcp"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
RUST_LOG="${SOAK_SERVER_LOG:-warn}" "$BIN" serve --http "127.0.0.1:$PORT" 2>"$OUT/server.log" &
SERVER=$!
stop() { kill -TERM "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
trap stop EXIT

# Wait (bounded) until the server accepts connections.
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  if ! kill -0 "$SERVER" 2>/dev/null; then echo "soak: the server exited" >&2; cat "$OUT/server.log" >&2; exit 1; fi
  sleep 0.1
done

echo "soak: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/report.txt"
status=0
"$TARGET/release/soak" --url "http://127.0.0.1:$PORT/mcp" --pid "$SERVER" --bin "$BIN" \
  --seconds "$SECONDS_TO_RUN" | tee -a "$OUT/report.txt" || status=$?
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit "$status"
