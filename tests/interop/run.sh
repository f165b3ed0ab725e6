#!/usr/bin/env bash
# Interop harness: the official MCP SDK clients (TypeScript @modelcontextprotocol/sdk and
# Python `mcp` 2.x) drive the orkestrel-mcp server binary over stdio and Streamable HTTP.
#
# Usage: tests/interop/run.sh BINARY
#   BINARY must accept `serve --stdio` and `serve --http 127.0.0.1:PORT` (endpoint path /mcp).
#
# Idempotent: installs node packages (`npm ci`) only when node_modules is missing or does not
# match package-lock.json, and creates tests/interop/.venv (pip install -r requirements.txt)
# only when it is missing or requirements.txt changed. Everything talks to 127.0.0.1 only.
#
# Environment:
#   INTEROP_PYTHON      interpreter used to create the venv (default: python3; needs >= 3.10)
#   INTEROP_TIMEOUT     per-client whole-run bound in seconds (default 30)
#   INTEROP_PORT        fixed HTTP port instead of a free one picked at random
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf 'interop: %s\n' "$*"; }
die() { printf 'interop: error: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 BINARY"
BINARY="$1"
case "$BINARY" in
  */*) [ -e "$BINARY" ] || die "binary not found: $BINARY"
       BINARY="$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")" ;;
  *)   BINARY="$(command -v "$BINARY")" || die "binary not found on PATH: $1" ;;
esac
[ -x "$BINARY" ] || die "binary is not executable: $BINARY"

command -v node >/dev/null || die "node is required (node >= 18)"
command -v npm >/dev/null || die "npm is required"
PYTHON="${INTEROP_PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "$PYTHON is required (>= 3.10)"

export INTEROP_TIMEOUT="${INTEROP_TIMEOUT:-30}"
export INTEROP_TIMEOUT_MS="$((INTEROP_TIMEOUT * 1000))"
# Outer bound per client invocation (the python client runs two connections: legacy + auto).
CLIENT_KILL_AFTER=$((INTEROP_TIMEOUT * 2 + 30))

START_NS=$(date +%s%N)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/orkestrel-interop.XXXXXX")"
SERVER_PID=""

stop_server() { # only ever the PID we started
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  [ -n "$SERVER_PID" ] && { wait "$SERVER_PID" 2>/dev/null || true; }
  SERVER_PID=""
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sha() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- node packages
node_stamp="$HERE/node_modules/.interop-stamp"
node_want="$(sha "$HERE/package.json" "$HERE/package-lock.json")"
if [ ! -f "$node_stamp" ] || [ "$(cat "$node_stamp")" != "$node_want" ] \
   || [ ! -f "$HERE/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  log "installing node packages (npm ci)"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >"$WORK/npm.log" 2>&1) \
    || { cat "$WORK/npm.log" >&2; die "npm ci failed"; }
  printf '%s\n' "$node_want" >"$node_stamp"
fi

# ---------------------------------------------------------------- python venv
VENV="$HERE/.venv"
VPY="$VENV/bin/python"
py_want="$(sha "$HERE/requirements.txt")"
py_stamp="$VENV/.interop-stamp"
if [ ! -x "$VPY" ] || ! "$VPY" -c 'import sys' 2>/dev/null \
   || [ ! -f "$py_stamp" ] || [ "$(cat "$py_stamp")" != "$py_want" ]; then
  "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "$PYTHON is $("$PYTHON" -V 2>&1); mcp 2.x needs Python >= 3.10"
  if [ ! -x "$VPY" ] || ! "$VPY" -c 'import sys' 2>/dev/null; then
    log "creating $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python -m venv failed (on Debian: apt-get install python3-venv)"
  fi
  log "installing python packages (pip install -r requirements.txt)"
  "$VPY" -m pip install --disable-pip-version-check -q -r "$HERE/requirements.txt" >"$WORK/pip.log" 2>&1 \
    || { cat "$WORK/pip.log" >&2; die "pip install failed"; }
  printf '%s\n' "$py_want" >"$py_stamp"
fi

# ---------------------------------------------------------------- runners
PASSED=0
FAILED=0
run_client() { # NAME CMD...
  local name="$1"; shift
  if timeout -k 5 "$CLIENT_KILL_AFTER" "$@"; then
    log "$name ok"; PASSED=$((PASSED + 1))
  else
    log "$name FAILED"; FAILED=$((FAILED + 1))
  fi
}

run_client "ts stdio" node "$HERE/ts_client.mjs" stdio "$BINARY"
run_client "py stdio" "$VPY" "$HERE/py_client.py" stdio "$BINARY"

# ---------------------------------------------------------------- HTTP server
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_http_server() { # -> sets SERVER_PID and PORT; 1: the server exited, 2: not listening after ~10 s
  local port="$1"
  : >"$WORK/server.log"
  "$BINARY" serve --http "127.0.0.1:$port" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do # up to ~10 s
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      wait "$SERVER_PID" 2>/dev/null || true
      SERVER_PID=""
      return 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      PORT="$port"
      return 0
    fi
    sleep 0.1
  done
  return 2
}

PORT=""
http_up=0
for attempt in 1 2 3; do # retry only when the server exited (e.g. the picked port got taken)
  port="${INTEROP_PORT:-$(free_port)}"
  rc=0; start_http_server "$port" || rc=$?
  if [ "$rc" = 0 ]; then http_up=1; break; fi
  if [ "$rc" = 1 ]; then
    log "http server exited before listening on 127.0.0.1:$port (attempt $attempt)"
  else
    log "http server not listening on 127.0.0.1:$port after 10 s"
  fi
  sed 's/^/  server: /' "$WORK/server.log" | tail -n 20 >&2 || true
  stop_server
  if [ "$rc" = 2 ] || [ -n "${INTEROP_PORT:-}" ]; then break; fi
done

if [ "$http_up" = 1 ]; then
  URL="http://127.0.0.1:$PORT/mcp"
  run_client "ts http" node "$HERE/ts_client.mjs" http "$URL"
  run_client "py http" "$VPY" "$HERE/py_client.py" http "$URL"
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "http server exited during the run"; FAILED=$((FAILED + 1))
  fi
  if [ "$FAILED" -gt 0 ]; then
    echo "--- http server log (last 40 lines) ---" >&2
    tail -n 40 "$WORK/server.log" >&2 || true
  fi
  stop_server
else
  log "ts http FAILED (server not reachable)"; log "py http FAILED (server not reachable)"
  FAILED=$((FAILED + 2))
fi

# ---------------------------------------------------------------- through the bridge
# The same clients, through `bridge --http` in front of `serve --stdio` (issue 17: the official
# clients are downstream of the gateway, our stdio server upstream of it).
BPORT="$(free_port)"
: >"$WORK/bridge.log"
"$BINARY" bridge --http "127.0.0.1:$BPORT" -- "$BINARY" serve --stdio >"$WORK/bridge.log" 2>&1 &
SERVER_PID=$!
bridge_up=0
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$BPORT") 2>/dev/null; then bridge_up=1; break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ "$bridge_up" = 1 ]; then
  run_client "ts http via bridge" node "$HERE/ts_client.mjs" http "http://127.0.0.1:$BPORT/mcp"
  run_client "py http via bridge" "$VPY" "$HERE/py_client.py" http "http://127.0.0.1:$BPORT/mcp"
else
  log "ts/py via bridge FAILED (the bridge did not listen)"; tail -n 20 "$WORK/bridge.log" >&2 || true
  FAILED=$((FAILED + 2))
fi
stop_server

ELAPSED_MS=$(( ($(date +%s%N) - START_NS) / 1000000 ))
log "finished in $((ELAPSED_MS / 1000)).$(printf '%03d' $((ELAPSED_MS % 1000)))s"
echo "interop: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
