#!/usr/bin/env bash
# Client interop: our `orkestrel-mcp tools` / `call` / `bridge` against servers we did not write.
#
#   tests/interop/client/run.sh BINARY [TOUR]   (BINARY = target/debug/orkestrel-mcp,
#                                                TOUR = target/debug/examples/client-tour)
#
# TOUR (the client-tour example) reads a resource, gets a prompt and receives progress from the
# Python SDK server over stdio and Streamable HTTP.
#
# Installs what it needs, idempotently: the pinned npm packages (npm ci when node_modules is
# missing) and a venv with mcp==2.3.0 at tests/interop/client/.venv. Every server listens on
# 127.0.0.1 only; every command is bounded by `timeout`. The last line is
# "client-interop: N passed, M failed" (tests/run.sh adds it to its totals); the exit status is
# the number of failures.
set -uo pipefail

BIN=$(realpath "${1:?usage: run.sh path/to/orkestrel-mcp [path/to/client-tour]}")
DIR=$(cd "$(dirname "$0")" && pwd)
TOUR=$(realpath "${2:-$DIR/../../../target/debug/examples/client-tour}")
cd "$DIR"

if [ ! -d node_modules ]; then
  timeout 300 npm ci --no-audit --no-fund >/dev/null || { echo "npm ci failed"; exit 1; }
fi
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import mcp' 2>/dev/null; then
  python3 -m venv .venv && timeout 300 .venv/bin/pip install -q 'mcp==2.3.0' || { echo "pip failed"; exit 1; }
fi
PY="$DIR/.venv/bin/python"
EVERYTHING=(node --require "$DIR/loopback.cjs" "$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
T=(timeout 60)
export RUST_LOG=warn

fails=0
passes=0
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

ok() { echo "ok   - $1"; passes=$((passes + 1)); }
bad() { echo "FAIL - $1: $2"; fails=$((fails + 1)); }
expect() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "expected [$2], got [$3]"; fi; }
has_tools() { # name json tool...
  local name=$1 json=$2; shift 2
  if echo "$json" | "$PY" -c 'import json,sys; n={t["name"] for t in json.load(sys.stdin)}; sys.exit(0 if set(sys.argv[1:]) <= n else 1)' "$@" 2>/dev/null; then
    ok "$name"; else bad "$name" "missing one of [$*] in: $(echo "$json" | head -c 300)"; fi
}
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 150); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
quiet() { "$@" 2>/dev/null; }

start=$(date +%s)

# 1. server-everything over stdio
out=$(quiet "${T[@]}" "$BIN" tools -- "${EVERYTHING[@]}" stdio)
has_tools "everything/stdio: tools lists echo, get-sum" "$out" echo get-sum get-tiny-image
expect "everything/stdio: call echo" '"Echo: hi"' "$(quiet "${T[@]}" "$BIN" call echo --args '{"message":"hi"}' -- "${EVERYTHING[@]}" stdio)"
expect "everything/stdio: call get-sum" '"The sum of 2 and 3 is 5."' "$(quiet "${T[@]}" "$BIN" call get-sum --args '{"a":2,"b":3}' -- "${EVERYTHING[@]}" stdio)"
raw=$(quiet "${T[@]}" "$BIN" call get-tiny-image --raw -- "${EVERYTHING[@]}" stdio)
if echo "$raw" | "$PY" -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if any(c["type"]=="image" and c["mimeType"]=="image/png" for c in r["content"]) else 1)'; then
  ok "everything/stdio: call --raw keeps image blocks"; else bad "everything/stdio: call --raw keeps image blocks" "$(echo "$raw" | head -c 300)"; fi

# 2. server-everything over Streamable HTTP
port=$(free_port)
PORT=$port "${EVERYTHING[@]}" streamableHttp >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  url="http://127.0.0.1:$port/mcp"
  has_tools "everything/http: tools" "$(quiet "${T[@]}" "$BIN" tools "$url")" echo get-sum
  expect "everything/http: call echo" '"Echo: over http"' "$(quiet "${T[@]}" "$BIN" call "$url" echo --args '{"message":"over http"}')"
  expect "everything/http: call get-sum" '"The sum of 20 and 22 is 42."' "$(quiet "${T[@]}" "$BIN" call "$url" get-sum --args '{"a":20,"b":22}')"
else
  bad "everything/http" "the server did not listen on $port"
fi

# 3. Python SDK (mcp 2.3.0) over stdio
has_tools "python/stdio: tools" "$(quiet "${T[@]}" "$BIN" tools -- "$PY" "$DIR/py_server.py")" add greet explode
expect "python/stdio: call add" "5" "$(quiet "${T[@]}" "$BIN" call add --args '{"a":2,"b":3}' -- "$PY" "$DIR/py_server.py")"
expect "python/stdio: call greet" '"Hello, Rust!"' "$(quiet "${T[@]}" "$BIN" call greet --args '{"name":"Rust"}' -- "$PY" "$DIR/py_server.py")"
err=$("${T[@]}" "$BIN" call explode --args '{"message":"kaboom"}' -- "$PY" "$DIR/py_server.py" 2>&1 >/dev/null); code=$?
if [ "$code" -ne 0 ] && [[ "$err" == *kaboom* ]]; then ok "python/stdio: a tool error exits non-zero with its text"; else bad "python/stdio: tool error" "exit $code, stderr [$err]"; fi

# 4. Python SDK over Streamable HTTP
port=$(free_port)
"$PY" "$DIR/py_server.py" http "$port" >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  url="http://127.0.0.1:$port/mcp"
  has_tools "python/http: tools" "$(quiet "${T[@]}" "$BIN" tools "$url")" add greet
  expect "python/http: call add" "42" "$(quiet "${T[@]}" "$BIN" call "$url" add --args '{"a":40,"b":2}')"
  expect "python/http: call greet" '"Hello, HTTP!"' "$(quiet "${T[@]}" "$BIN" call "$url" greet --args '{"name":"HTTP"}')"
else
  bad "python/http" "the server did not listen on $port"
fi

# 4b. Our client's resources, prompts and progress against the Python SDK server (stdio, HTTP)
TOUR_WANT='{"resources": ["interop://motd"], "read": "hello from python", "prompts": ["review"], "prompt": "Please review: x+1", "result": "counted 3", "progress": [[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]]}'
tour() { TOUR_RESOURCE=interop://motd TOUR_PROMPT=review TOUR_PROMPT_ARGS='{"code":"x+1"}' TOUR_TOOL=count \
  TOUR_TOOL_ARGS='{"steps":3}' "${T[@]}" "$TOUR" "$@" 2>&1 | "$PY" -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())))' 2>&1; }
if [ -x "$TOUR" ]; then
  expect "python/stdio: resources, prompts, progress (client-tour)" "$TOUR_WANT" "$(tour -- "$PY" "$DIR/py_server.py")"
  port=$(free_port)
  "$PY" "$DIR/py_server.py" http "$port" >/dev/null 2>&1 &
  PIDS+=($!)
  if wait_port "$port"; then
    expect "python/http: resources, prompts, progress (client-tour)" "$TOUR_WANT" "$(tour "http://127.0.0.1:$port/mcp")"
  else
    bad "python/http tour" "the server did not listen on $port"
  fi
else
  bad "client-tour" "no executable at $TOUR (cargo build --features native --example client-tour)"
fi

# 5. The bridge in front of server-everything, driven by the official TypeScript SDK client
port=$(free_port)
"$BIN" bridge --http "127.0.0.1:$port" -- "${EVERYTHING[@]}" stdio >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  if res=$("${T[@]}" node "$DIR/bridge_client.mjs" "http://127.0.0.1:$port/mcp" 2>&1); then ok "bridge: TS SDK client ($res)"; else bad "bridge: TS SDK client" "$res"; fi
else
  bad "bridge" "the bridge did not listen on $port"
fi

# 5b. The bridge in other directions, between peers we did not write: the Python SDK's HTTP
#     server (2026-07-28) re-served on stdio to our client-tour (resources, prompts, progress) and
#     to a handshake-era call; and --config with server-everything, the Python server and a
#     broken command behind one endpoint (prefixed names, /servers/NAME/mcp for the TS SDK
#     client, the broken one in /status).
port=$(free_port)
"$PY" "$DIR/py_server.py" http "$port" >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  pyurl="http://127.0.0.1:$port/mcp"
  if [ -x "$TOUR" ]; then
    expect "bridge: python/http → stdio → client-tour" "$TOUR_WANT" "$(tour -- "$BIN" bridge --stdio "$pyurl")"
  fi
  expect "bridge: python/http → stdio → a handshake-era call" '"Hello, bridge!"' \
    "$(quiet "${T[@]}" "$BIN" call --era legacy greet --args '{"name":"bridge"}' -- "$BIN" bridge --stdio "$pyurl")"
  cfg="$DIR/.bridge-config.json"
  cat >"$cfg" <<JSON
{"mcpServers": {
  "everything": {"command": "node", "args": ["--require", "$DIR/loopback.cjs", "$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]},
  "py": {"type": "http", "url": "$pyurl"},
  "broken": {"command": "/nonexistent/mcp-server"}}}
JSON
  gport=$(free_port)
  "$BIN" bridge --http "127.0.0.1:$gport" --config "$cfg" >/dev/null 2>&1 &
  PIDS+=($!)
  if wait_port "$gport" && "$PY" - "$gport" <<'PY'
import json, sys, time, urllib.request
for _ in range(200):
    try:
        status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status", timeout=2))
        by = {u["name"]: u for u in status["upstreams"]}
        if status["up"] == 2 and by["broken"]["state"] != "up" and "nonexistent" in (by["broken"]["lastError"] or ""):
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
  then
    ok "bridge --config: two upstreams up, the broken one reported in /status"
    gurl="http://127.0.0.1:$gport/mcp"
    has_tools "bridge --config: prefixed names on /mcp" "$(quiet "${T[@]}" "$BIN" tools "$gurl")" everything__echo everything__get-sum py__add py__greet
    expect "bridge --config: everything__echo routed" '"Echo: merged"' "$(quiet "${T[@]}" "$BIN" call "$gurl" everything__echo --args '{"message":"merged"}')"
    expect "bridge --config: py__add routed" "5" "$(quiet "${T[@]}" "$BIN" call "$gurl" py__add --args '{"a":2,"b":3}')"
    if res=$("${T[@]}" node "$DIR/bridge_client.mjs" "http://127.0.0.1:$gport/servers/everything/mcp" 2>&1); then
      ok "bridge --config: TS SDK client on /servers/everything/mcp ($res)"; else bad "bridge --config: TS SDK client" "$res"; fi
  else
    bad "bridge --config" "the bridge did not bring up its upstreams on $gport"
  fi
  rm -f "$cfg"
else
  bad "bridge: python/http" "the server did not listen on $port"
fi

# 6. Eras (issue 8): auto mode reaches 2026-07-28 with the Python SDK 2.x server and falls back to
#    the handshake with server-everything (TypeScript SDK 1.x); --era legacy skips the probe.
era_of() { RUST_LOG=orkestrel_mcp::client=debug "${T[@]}" "$BIN" tools "$@" 2>&1 >/dev/null | grep -o "speaking the [a-z]* era" | head -1; }
expect "era: python/stdio auto is 2026-07-28" "speaking the stateless era" "$(era_of -- "$PY" "$DIR/py_server.py")"
expect "era: python/stdio --era legacy" "speaking the handshake era" "$(era_of --era legacy -- "$PY" "$DIR/py_server.py")"
expect "era: python/stdio --era modern call" "5" "$(quiet "${T[@]}" "$BIN" call add --era modern --args '{"a":2,"b":3}' -- "$PY" "$DIR/py_server.py")"
expect "era: everything/stdio auto falls back" "speaking the handshake era" "$(era_of -- "${EVERYTHING[@]}" stdio)"
port=$(free_port)
"$PY" "$DIR/py_server.py" http "$port" >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  url="http://127.0.0.1:$port/mcp"
  expect "era: python/http auto is 2026-07-28" "speaking the stateless era" "$(era_of "$url")"
  expect "era: python/http --era modern call" '"Hello, era!"' "$(quiet "${T[@]}" "$BIN" call "$url" greet --era modern --args '{"name":"era"}')"
  expect "era: python/http --era legacy" "speaking the handshake era" "$(era_of --era legacy "$url")"
else
  bad "era: python/http" "the server did not listen on $port"
fi
port=$(free_port)
PORT=$port "${EVERYTHING[@]}" streamableHttp >/dev/null 2>&1 &
PIDS+=($!)
if wait_port "$port"; then
  url="http://127.0.0.1:$port/mcp"
  expect "era: everything/http auto falls back" "speaking the handshake era" "$(era_of "$url")"
  expect "era: everything/http auto call" '"Echo: fell back"' "$(quiet "${T[@]}" "$BIN" call "$url" echo --args '{"message":"fell back"}')"
else
  bad "era: everything/http" "the server did not listen on $port"
fi

echo "# took $(( $(date +%s) - start )) s"
echo "client-interop: $passes passed, $fails failed"
exit "$fails"
