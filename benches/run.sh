#!/usr/bin/env bash
# The benchmarks side by side (issue 7), in one command:
#
#   bash benches/run.sh
#
# Builds the bench crate (release), installs the TypeScript and Python SDK peers into
# benches/peers/ when missing or stale (node_modules/ and .venv/, gitignored), then measures
#   1. in process (criterion): handle(tools/call echo) and handle(tools/list, 100 tools) —
#      ours vs the serde floor vs rmcp; and, when valgrind is installed, the same calls'
#      instructions per call under callgrind (deterministic on a noisy machine);
#   2. HTTP over loopback: tools/call echo at 1, 16 and 64 keep-alive connections — ours
#      (stateless route) vs the bare hyper floor, rmcp (stateless JSON), the TS SDK, the Python
#      SDK; every server in turn, then again in reverse order; every reply body checked;
#      the same with sessions: ours (`Endpoint` with its defaults, as `orkestrel-mcp serve --http`)
#      vs rmcp's session mode — each connection initializes once, then calls with mcp-session-id;
#   3. peak RSS (VmHWM) of each HTTP server after its c=64 run;
#   4. WebSocket: messages/s on one socket with 64 in flight — ours (same /mcp path, subprotocol
#      mcp) vs a bare tokio-tungstenite floor (rmcp has no WebSocket server);
#   5. memory: resident bytes per idle session (1,000 initializes; ours vs rmcp) and per idle
#      WebSocket connection (1,000 held open; ours vs the tungstenite floor), fresh server each;
#   6. stdio round trips/s, 64 in flight and sequential — ours vs the serde line-loop floor,
#      rmcp, the TS SDK — all driven by the same client;
#   7. Redis scale-out (when redis-server is installed; tests/run.sh installs Debian's): the
#      session endpoint with its sessions in Redis (`bench-ours --http-sessions ADDR --redis URL`,
#      as `serve --http ADDR --redis URL`) vs the same endpoint on the in-memory store, at 16
#      and 64 connections: req/s, the instance's CPU per request and redis-server's, and Redis
#      commands per request, and (valgrind installed) the instance's instructions per request;
#      then Redis's memory per idle session (`INFO memory`) and the
#      instance's VmRSS with 0, 1,000 and 10,000 idle sessions (the in-memory store alongside);
#   8. the wasm packages' sizes (full, server-only, client-only; raw and gzip -9), built by
#      tests/wasm/build.sh when missing or older than the sources (needs wasm-pack and
#      tests/wasm/node_modules, which tests/wasm/run.sh installs), against a floor built the
#      same way (benches/wasm-floor: the least JSON-RPC tool server on serde_json and wasm-bindgen);
# and prints ONE table of ratios (target/bench-results/table.md).
#
# With two or more cores the servers run on CPU 0 and the load generators on CPU 1 (taskset).
# Every load loop is bounded by a duration and a request count; servers listen on 127.0.0.1.
#
# Environment:
#   BENCH_DURATION_MS  measured window per HTTP/stdio run (default 2500)
#   BENCH_WARMUP_MS    HTTP warm-up per run (default 500)
#   BENCH_ONLY         comma list of parts to run: inprocess,http,ws,memory,redis,stdio,wasm
#                      (default all)
#   BENCH_SKIP_PEERS=1 skip the TS and Python SDK servers (no node/python needed)
#   BENCH_UPDATE_README=1  also write the table into README.md's "Performance" section (between
#                      the bench-table markers)
#   CARGO_TARGET_DIR   honoured: the binaries and criterion's results are read from cargo's target
#                      directory, wherever it is; the results and the table stay in target/bench-results
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
export CARGO_TERM_COLOR=never

DUR="${BENCH_DURATION_MS:-2500}"
WARM="${BENCH_WARMUP_MS:-500}"
ONLY="${BENCH_ONLY:-inprocess,http,ws,memory,redis,stdio,wasm}"
PEERS="$ROOT/benches/peers"
OUT="$ROOT/target/bench-results"
# Where cargo builds (CARGO_TARGET_DIR, a config's build.target-dir, else ./target): the binaries
# and criterion's results are there; our own results stay in ./target/bench-results.
TARGET="$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
BIN="$TARGET/release"
mkdir -p "$OUT"
rm -f "$OUT"/http.jsonl "$OUT"/ws.jsonl "$OUT"/memory.jsonl "$OUT"/stdio.jsonl "$OUT"/rss.jsonl "$OUT"/inprocess.json "$OUT"/instructions.jsonl \
  "$OUT"/redis.jsonl "$OUT"/redis-memory.jsonl "$OUT"/redis-instructions.jsonl

log() { printf 'bench: %s\n' "$*" >&2; }
wants() { [[ ",$ONLY," == *",$1,"* ]]; }
START=$(date +%s)

CORES=$(nproc)
if [ "$CORES" -ge 2 ] && command -v taskset >/dev/null; then
  ON_SERVER=(taskset -c 0)
  ON_LOAD=(taskset -c 1)
else
  ON_SERVER=()
  ON_LOAD=()
  log "fewer than 2 cores or no taskset: running unpinned"
fi

# ------------------------------------------------------------------------------------ build
if [ "$ONLY" != "wasm" ]; then # the size row alone needs no bench binaries
  log "building the bench crate (release)"
  cargo build --release -q -p orkestrel-mcp-bench --bins --benches
fi

# ------------------------------------------------------------------------------------ peers
sha() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }
HAVE_TS=""
HAVE_PY=""
if [ -z "${BENCH_SKIP_PEERS:-}" ]; then
  if command -v node >/dev/null && command -v npm >/dev/null; then
    want="$(sha "$PEERS/package.json" "$PEERS/package-lock.json")"
    stamp="$PEERS/node_modules/.bench-stamp"
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
      log "installing the TypeScript SDK peer (npm ci)"
      (cd "$PEERS" && npm ci --no-audit --no-fund --loglevel=error >"$OUT/npm.log" 2>&1) \
        || { cat "$OUT/npm.log" >&2; exit 1; }
      printf '%s\n' "$want" >"$stamp"
    fi
    HAVE_TS=1
  else
    log "node/npm missing: skipping the TypeScript SDK"
  fi
  if command -v python3 >/dev/null; then
    want="$(sha "$PEERS/requirements.txt")"
    stamp="$PEERS/.venv/.bench-stamp"
    if [ ! -x "$PEERS/.venv/bin/python" ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
      log "installing the Python SDK peer (venv + pip)"
      rm -rf "$PEERS/.venv"
      python3 -m venv "$PEERS/.venv"
      "$PEERS/.venv/bin/pip" install -q -r "$PEERS/requirements.txt" >"$OUT/pip.log" 2>&1 \
        || { cat "$OUT/pip.log" >&2; exit 1; }
      printf '%s\n' "$want" >"$stamp"
    fi
    HAVE_PY=1
  else
    log "python3 missing: skipping the Python SDK"
  fi
fi

# ------------------------------------------------------------------------- server handling
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
REDIS_PID=""
REDIS_PORT=""
stop_redis() { # only ever the PID we started
  if [ -n "$REDIS_PID" ] && kill -0 "$REDIS_PID" 2>/dev/null; then
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$REDIS_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$REDIS_PID" 2>/dev/null || true
  fi
  [ -n "$REDIS_PID" ] && { wait "$REDIS_PID" 2>/dev/null || true; }
  REDIS_PID=""
}
trap 'stop_server; stop_redis' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# CPU time (user + system, in clock ticks) a process has used so far: the server's cost per
# request is robust to a noisy machine in a way that requests/s is not.
CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# More arguments of bench-ours --http-sessions (ours-sessions, ours-redis): the Redis part's
# memory probe raises the live-session cap; and what it runs under (callgrind, for the Redis
# part's instruction counts).
SESSION_ARGS=()
SESSION_UNDER=()

# start_http NAME PORT: start the named server pinned to the server core (exec'd, so $! is the
# server's own PID, whose VmHWM we read); wait until it accepts.
start_http() {
  local name=$1 port=$2 addr="127.0.0.1:$2"
  case "$name" in
    floor) exec "${ON_SERVER[@]}" "$BIN/bench-floor" --http "$addr" ;;
    ours) exec "${ON_SERVER[@]}" "$BIN/bench-ours" --http "$addr" ;;
    ours-sse) exec "${ON_SERVER[@]}" "$BIN/bench-ours" --http-sse "$addr" ;;
    ours-sessions) exec "${ON_SERVER[@]}" "${SESSION_UNDER[@]}" "$BIN/bench-ours" --http-sessions "$addr" \
      "${SESSION_ARGS[@]}" ;;
    ours-redis) exec "${ON_SERVER[@]}" "${SESSION_UNDER[@]}" "$BIN/bench-ours" --http-sessions "$addr" \
      --redis "redis://127.0.0.1:$REDIS_PORT" "${SESSION_ARGS[@]}" ;;
    rmcp-sessions) exec "${ON_SERVER[@]}" "$BIN/bench-rmcp" --http-sessions "$addr" ;;
    floor-ws) exec "${ON_SERVER[@]}" "$BIN/bench-floor" --ws "$addr" ;;
    rmcp) exec "${ON_SERVER[@]}" "$BIN/bench-rmcp" --http "$addr" ;;
    ts) cd "$PEERS" && exec "${ON_SERVER[@]}" node ts_server.mjs http "$port" ;;
    py) cd "$PEERS" && exec "${ON_SERVER[@]}" "$PEERS/.venv/bin/python" py_server.py http "$port" ;;
  esac >>"$OUT/server-$name.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 150); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$SERVER_PID" 2>/dev/null || { log "$name exited; see $OUT/server-$name.log"; return 1; }
    sleep 0.1
  done
  log "$name did not listen on $port within 15 s"
  return 1
}

# ------------------------------------------------------------------------------ in process
if wants inprocess; then
  log "in process (criterion, quick settings)"
  BENCH_QUICK=1 "${ON_SERVER[@]}" cargo bench -q -p orkestrel-mcp-bench --bench inprocess \
    >"$OUT/criterion.log" 2>&1 || { cat "$OUT/criterion.log" >&2; exit 1; }
  python3 - "$TARGET/criterion" "$OUT/inprocess.json" <<'EOF'
import json, sys, pathlib
base, out = pathlib.Path(sys.argv[1]), sys.argv[2]
res = {}
for group in ("tools_call_echo", "tools_list_100"):
    for side in ("ours/handle", "floor/serde", "rmcp/service", "rmcp/oneshot"):
        est = json.loads((base / group / side / "new" / "estimates.json").read_text())
        res[f"{group}/{side}"] = est["median"]["point_estimate"]  # ns per call (median: robust to bursts)
json.dump(res, open(out, "w"))
EOF
fi

# Instructions per call under callgrind: deterministic, so immune to a busy machine. Each mode
# runs with N calls and with 0; the difference over N is the per-call cost.
if wants inprocess && command -v valgrind >/dev/null; then
  log "in process: instructions per call (callgrind)"
  : >"$OUT/instructions.jsonl"
  for mode in ours-echo floor-echo rmcp-echo ours-list floor-list rmcp-list; do
    case "$mode" in *-list) n=100 ;; *) n=4000 ;; esac
    irs=()
    for calls in "$n" 0; do
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN/profile-handle" "$mode" "$calls" \
        >/dev/null 2>"$OUT/callgrind.log" || { cat "$OUT/callgrind.log" >&2; exit 1; }
      irs+=("$(grep -Eo 'refs: +[0-9,]+' "$OUT/callgrind.log" | tr -dc '0-9')")
    done
    printf '{"mode":"%s","per_call":%s}\n' "$mode" "$(((irs[0] - irs[1]) / n))" >>"$OUT/instructions.jsonl"
  done
fi

# ------------------------------------------------------------------------------------ HTTP
HTTP_SERVERS=(floor ours ours-sse rmcp ours-sessions rmcp-sessions)
[ -n "$HAVE_TS" ] && HTTP_SERVERS+=(ts)
[ -n "$HAVE_PY" ] && HTTP_SERVERS+=(py)
CONCURRENCY=(1 16 64)

http_pass() { # order servers...
  local order=$1; shift
  local name c port extra line conc
  for name in "$@"; do
    port=$(free_port)
    start_http "$name" "$port" || { stop_server; continue; }
    extra=()
    [ "$name" = floor ] && extra=(--no-id-check) # the floor's fixed body always says id 1
    [[ "$name" == *-sessions ]] && extra=(--sessions) # initialize once per connection
    conc=("${CONCURRENCY[@]}")
    [ "$order" = reverse ] && conc=(64 16 1)
    for c in "${conc[@]}"; do
      cpu0=$(cpu_ticks "$SERVER_PID")
      if line=$("${ON_LOAD[@]}" "$BIN/loadgen" --url "http://127.0.0.1:$port/mcp" \
          --connections "$c" --duration-ms "$DUR" --warmup-ms "$WARM" --max-requests 2000000 \
          "${extra[@]}" 2>>"$OUT/loadgen.log"); then
        cpu=$(( $(cpu_ticks "$SERVER_PID") - cpu0 ))
        printf '{"server":"%s","order":"%s","cpu_ticks":%s,"clk_tck":%s,"run":%s}\n' \
          "$name" "$order" "$cpu" "$CLK_TCK" "$line" >>"$OUT/http.jsonl"
        log "http $order $name c=$c $line cpu_ticks=$cpu"
      else
        log "http $order $name c=$c FAILED: $line (see $OUT/loadgen.log)"
        printf '{"server":"%s","order":"%s","failed":true,"connections":%s}\n' "$name" "$order" "$c" >>"$OUT/http.jsonl"
      fi
    done
    rss=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)
    printf '{"server":"%s","order":"%s","vmhwm_kib":%s}\n' "$name" "$order" "${rss:-0}" >>"$OUT/rss.jsonl"
    stop_server
  done
}

if wants http; then
  log "HTTP: ${HTTP_SERVERS[*]} at c=${CONCURRENCY[*]}, ${DUR} ms each after ${WARM} ms warm-up"
  http_pass forward "${HTTP_SERVERS[@]}"
  reversed=()
  for ((i = ${#HTTP_SERVERS[@]} - 1; i >= 0; i--)); do reversed+=("${HTTP_SERVERS[i]}"); done
  http_pass reverse "${reversed[@]}"
fi

# ------------------------------------------------------------------------------- WebSocket
WS_SERVERS=(floor-ws ours-sessions)

ws_pass() { # order servers...
  local order=$1; shift
  local name port line
  for name in "$@"; do
    port=$(free_port)
    start_http "$name" "$port" || { stop_server; continue; }
    cpu0=$(cpu_ticks "$SERVER_PID")
    if line=$("${ON_LOAD[@]}" "$BIN/wsload" --url "ws://127.0.0.1:$port/mcp" --inflight 64 \
        --duration-ms "$DUR" --warmup-ms "$WARM" --max-requests 2000000 2>>"$OUT/wsload.log"); then
      cpu=$(( $(cpu_ticks "$SERVER_PID") - cpu0 ))
      printf '{"server":"%s","order":"%s","cpu_ticks":%s,"clk_tck":%s,"run":%s}\n' \
        "$name" "$order" "$cpu" "$CLK_TCK" "$line" >>"$OUT/ws.jsonl"
      log "ws $order $name inflight=64 $line"
    else
      log "ws $order $name FAILED (see $OUT/wsload.log)"
    fi
    stop_server
  done
}

if wants ws; then
  log "WebSocket: ${WS_SERVERS[*]}, one socket, 64 in flight"
  ws_pass forward "${WS_SERVERS[@]}"
  reversed=()
  for ((i = ${#WS_SERVERS[@]} - 1; i >= 0; i--)); do reversed+=("${WS_SERVERS[i]}"); done
  ws_pass reverse "${reversed[@]}"
fi

# ---------------------------------------------------------------------------------- memory
# Each probe on a fresh server: VmRSS before and after 1,000 idle sessions / connections.
MEM_PROBES=(sessions:ours-sessions sessions:rmcp-sessions ws:ours-sessions ws:floor-ws)
MEM_COUNT=1000

mem_pass() { # order probes...
  local order=$1; shift
  local probe mode name port url line
  for probe in "$@"; do
    mode=${probe%%:*}
    name=${probe#*:}
    port=$(free_port)
    start_http "$name" "$port" || { stop_server; continue; }
    if [ "$mode" = ws ]; then url="ws://127.0.0.1:$port/mcp"; else url="http://127.0.0.1:$port/mcp"; fi
    if line=$("${ON_LOAD[@]}" "$BIN/memprobe" "$mode" --pid "$SERVER_PID" --url "$url" \
        --count "$MEM_COUNT" 2>>"$OUT/memprobe.log"); then
      printf '{"server":"%s","order":"%s","probe":%s}\n' "$name" "$order" "$line" >>"$OUT/memory.jsonl"
      log "memory $order $name $line"
    else
      log "memory $order $name $mode FAILED (see $OUT/memprobe.log)"
    fi
    stop_server
  done
}

if wants memory; then
  log "memory: ${MEM_PROBES[*]}, $MEM_COUNT each"
  mem_pass forward "${MEM_PROBES[@]}"
  reversed=()
  for ((i = ${#MEM_PROBES[@]} - 1; i >= 0; i--)); do reversed+=("${MEM_PROBES[i]}"); done
  mem_pass reverse "${reversed[@]}"
fi

# ---------------------------------------------------------------------------- Redis scale-out
# The same session endpoint (bench-ours --http-sessions: the same tools, `Endpoint`, session
# code path) with its sessions in Redis (`--redis URL`, as `orkestrel-mcp serve --http ADDR
# --redis URL` wires it) against the in-memory store.
#
# Where redis-server runs: on the load core (with the load generator), not the server core. The
# server core then holds the instance alone, as in the in-memory row, so the instance's CPU per
# request compares like with like; redis-server's CPU is counted on its own (its ticks over the
# same run) and added for the total. In production Redis has a machine of its own; here, when the
# load core saturates (loadgen + redis-server), the Redis row's req/s is a lower bound, which the
# CPU columns show.
REDIS_SERVERS=(ours-sessions ours-redis)
REDIS_CONCURRENCY=(16 64)
REDIS_STEPS=1000,10000 # idle sessions at which the memory probe measures

redis_cli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }
redis_info() { # INFO all, one line per field, as "FIELD VALUE" (cmdstat_X: its calls)
  redis_cli INFO all 2>/dev/null | tr -d '\r' \
    | awk -F: 'NF == 2 {v = $2; if ($1 ~ /^cmdstat_/) {sub(/^calls=/, "", v); sub(/,.*/, "", v)}; print $1, v}'
}
redis_field() { # FIELD INFO_TEXT: the field's value (0 when absent)
  awk -v f="$1" '$1 == f {print $2; found = 1} END {if (!found) print 0}' <<<"$2"
}

start_redis() { # a fresh redis-server on a free port, no persistence; exec'd by taskset, so $! is its PID
  REDIS_PORT=$(free_port)
  "${ON_LOAD[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    >>"$OUT/redis-server.log" 2>&1 &
  REDIS_PID=$!
  for _ in $(seq 1 150); do
    if [ "$(redis_cli PING 2>/dev/null)" = PONG ]; then return 0; fi
    kill -0 "$REDIS_PID" 2>/dev/null || { log "redis-server exited; see $OUT/redis-server.log"; return 1; }
    sleep 0.1
  done
  log "redis-server did not answer PING on $REDIS_PORT within 15 s"
  return 1
}

redis_pass() { # order servers...
  local order=$1; shift
  local name c port line conc cpu0 redis0 info0 info1 keys0 cpu redis cmd evalsha mem keys
  for name in "$@"; do
    redis_cli FLUSHALL >/dev/null # each instance starts on an empty Redis (DBSIZE: its keys)
    port=$(free_port)
    start_http "$name" "$port" || { stop_server; continue; }
    conc=("${REDIS_CONCURRENCY[@]}")
    [ "$order" = reverse ] && conc=(64 16)
    for c in "${conc[@]}"; do
      cpu0=$(cpu_ticks "$SERVER_PID")
      redis0=$(cpu_ticks "$REDIS_PID")
      info0=$(redis_info)
      keys0=$(redis_cli DBSIZE)
      if line=$("${ON_LOAD[@]}" "$BIN/loadgen" --url "http://127.0.0.1:$port/mcp" \
          --connections "$c" --duration-ms "$DUR" --warmup-ms "$WARM" --max-requests 2000000 \
          --sessions 2>>"$OUT/loadgen.log"); then
        cpu=$(( $(cpu_ticks "$SERVER_PID") - cpu0 ))
        redis=$(( $(cpu_ticks "$REDIS_PID") - redis0 ))
        info1=$(redis_info)
        # Commands (those scripts run included) less our own INFO; EVALSHA: the scripts run
        # (one a round trip); used_memory and keys: what the run left in Redis.
        cmd=$(( $(redis_field total_commands_processed "$info1") - $(redis_field total_commands_processed "$info0") - 1 ))
        evalsha=$(( $(redis_field cmdstat_evalsha "$info1") - $(redis_field cmdstat_evalsha "$info0") ))
        mem=$(( $(redis_field used_memory "$info1") - $(redis_field used_memory "$info0") ))
        keys=$(( $(redis_cli DBSIZE) - keys0 ))
        printf '{"server":"%s","order":"%s","cpu_ticks":%s,"redis_ticks":%s,"redis_commands":%s,"redis_evalsha":%s,"redis_memory_delta":%s,"redis_keys_delta":%s,"clk_tck":%s,"run":%s}\n' \
          "$name" "$order" "$cpu" "$redis" "$cmd" "$evalsha" "$mem" "$keys" "$CLK_TCK" "$line" >>"$OUT/redis.jsonl"
        log "redis $order $name c=$c $line cpu_ticks=$cpu redis_ticks=$redis commands=$cmd evalsha=$evalsha used_memory+=$mem keys+=$keys"
      else
        log "redis $order $name c=$c FAILED: $line (see $OUT/loadgen.log)"
        printf '{"server":"%s","order":"%s","failed":true,"connections":%s}\n' "$name" "$order" "$c" >>"$OUT/redis.jsonl"
      fi
    done
    stop_server
  done
}

# Instructions per session request in the instance (callgrind: deterministic on a busy
# machine): the server under callgrind, a warm-up load, the counters zeroed, REDIS_IR_CALLS
# calls on 16 connections (their 16 sessions' opening included), the counters dumped.
REDIS_IR_CALLS=4000
redis_instructions() { # servers...
  local name port pid dump ir
  for name in "$@"; do
    redis_cli FLUSHALL >/dev/null
    port=$(free_port)
    SESSION_UNDER=(valgrind --tool=callgrind "--callgrind-out-file=$OUT/callgrind-$name.%p")
    rm -f "$OUT/callgrind-$name."*
    start_http "$name" "$port" || { SESSION_UNDER=(); stop_server; continue; }
    SESSION_UNDER=()
    pid=$SERVER_PID
    if "${ON_LOAD[@]}" "$BIN/loadgen" --url "http://127.0.0.1:$port/mcp" --connections 16 \
        --duration-ms 120000 --warmup-ms 0 --max-requests 1000 --sessions >/dev/null 2>>"$OUT/loadgen.log" \
      && callgrind_control -z "$pid" >/dev/null 2>&1 \
      && "${ON_LOAD[@]}" "$BIN/loadgen" --url "http://127.0.0.1:$port/mcp" --connections 16 \
        --duration-ms 120000 --warmup-ms 0 --max-requests "$REDIS_IR_CALLS" --sessions >/dev/null 2>>"$OUT/loadgen.log" \
      && callgrind_control -d "$pid" >/dev/null 2>&1; then
      dump=""
      for _ in $(seq 1 100); do # the dump is written by the server's next scheduling: wait for it
        dump=$(compgen -G "$OUT/callgrind-$name.$pid.*" | head -1 || true)
        [ -n "$dump" ] && grep -q '^totals:' "$dump" && break
        sleep 0.1
      done
      ir=$(awk '/^totals:/ {print $2}' "${dump:-/dev/null}")
      if [ -n "$ir" ]; then
        printf '{"server":"%s","calls":%s,"ir":%s}\n' "$name" "$REDIS_IR_CALLS" "$ir" >>"$OUT/redis-instructions.jsonl"
        log "redis instructions $name $((ir / REDIS_IR_CALLS)) per call"
      else
        log "redis instructions $name: no callgrind dump"
      fi
    else
      log "redis instructions $name FAILED (see $OUT/loadgen.log)"
    fi
    stop_server
    rm -f "$OUT/callgrind-$name."*
  done
}

redis_memory() { # servers...: a fresh instance each (cap raised), idle sessions in steps
  local name port line probe_redis
  SESSION_ARGS=(--max-sessions 20000)
  for name in "$@"; do
    redis_cli FLUSHALL >/dev/null
    port=$(free_port)
    start_http "$name" "$port" || { stop_server; continue; }
    probe_redis=()
    [ "$name" = ours-redis ] && probe_redis=(--redis "127.0.0.1:$REDIS_PORT")
    if line=$("${ON_LOAD[@]}" "$BIN/memprobe" steps --pid "$SERVER_PID" \
        --url "http://127.0.0.1:$port/mcp" --steps "$REDIS_STEPS" "${probe_redis[@]}" \
        2>>"$OUT/memprobe.log"); then
      printf '{"server":"%s","probe":%s}\n' "$name" "$line" >>"$OUT/redis-memory.jsonl"
      log "redis memory $name $line"
    else
      log "redis memory $name FAILED (see $OUT/memprobe.log)"
    fi
    stop_server
  done
  SESSION_ARGS=()
}

if wants redis; then
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    log "redis: skipped: redis-server / redis-cli not installed (tests/run.sh installs Debian's redis-server)"
  elif start_redis; then
    log "redis: ${REDIS_SERVERS[*]} at c=${REDIS_CONCURRENCY[*]}, ${DUR} ms each after ${WARM} ms warm-up; redis-server $(redis_field redis_version "$(redis_info)") on the load core"
    redis_pass forward "${REDIS_SERVERS[@]}"
    reversed=()
    for ((i = ${#REDIS_SERVERS[@]} - 1; i >= 0; i--)); do reversed+=("${REDIS_SERVERS[i]}"); done
    redis_pass reverse "${reversed[@]}"
    if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
      log "redis: instructions per session request in the instance (callgrind, $REDIS_IR_CALLS calls)"
      redis_instructions "${REDIS_SERVERS[@]}"
    fi
    log "redis: memory with idle sessions at 0,$REDIS_STEPS (Redis INFO memory, instance VmRSS)"
    redis_memory ours-redis ours-sessions
    stop_redis
  fi
fi

# ----------------------------------------------------------------------------------- stdio
stdio_cmd() { # NAME -> the command line, pinned to the server core
  case "$1" in
    floor) echo "${ON_SERVER[*]} $BIN/bench-floor --stdio" ;;
    ours) echo "${ON_SERVER[*]} $BIN/bench-ours --stdio" ;;
    ours-pipes) echo "${ON_SERVER[*]} $BIN/bench-ours --stdio-pipes" ;;
    rmcp) echo "${ON_SERVER[*]} $BIN/bench-rmcp --stdio" ;;
    rmcp-pipes) echo "${ON_SERVER[*]} $BIN/bench-rmcp --stdio-pipes" ;;
    ts) echo "${ON_SERVER[*]} node $PEERS/ts_server.mjs stdio" ;;
  esac
}
STDIO_SERVERS=(floor ours ours-pipes rmcp rmcp-pipes)
[ -n "$HAVE_TS" ] && STDIO_SERVERS+=(ts)

stdio_pass() { # order servers...
  local order=$1; shift
  local name k line
  for name in "$@"; do
    for k in 64 1; do
      # shellcheck disable=SC2046 # the command line is split on purpose
      if line=$("${ON_LOAD[@]}" "$BIN/stdio-driver" --inflight "$k" --duration-ms "$DUR" \
          --max-requests 2000000 --warmup 2000 -- $(stdio_cmd "$name") 2>>"$OUT/stdio.log"); then
        printf '{"server":"%s","order":"%s","run":%s}\n' "$name" "$order" "$line" >>"$OUT/stdio.jsonl"
        log "stdio $order $name inflight=$k $line"
      else
        log "stdio $order $name inflight=$k FAILED (see $OUT/stdio.log)"
      fi
    done
  done
}

if wants stdio; then
  log "stdio: ${STDIO_SERVERS[*]}, 64 in flight and sequential"
  stdio_pass forward "${STDIO_SERVERS[@]}"
  reversed=()
  for ((i = ${#STDIO_SERVERS[@]} - 1; i >= 0; i--)); do reversed+=("${STDIO_SERVERS[i]}"); done
  stdio_pass reverse "${reversed[@]}"
fi

# ------------------------------------------------------------------------------------ wasm
if wants wasm; then
  PKGS="$ROOT/target/wasm-pkg"
  stale=""
  for d in web web-server web-client; do
    f="$PKGS/$d/orkestrel_mcp_bg.wasm"
    if [ ! -f "$f" ] || [ -n "$(find "$ROOT/src" "$ROOT/Cargo.toml" "$ROOT/Cargo.lock" "$ROOT/tests/wasm/build.sh" -newer "$f" -print -quit)" ]; then
      stale=1
    fi
  done
  if [ -n "$stale" ]; then
    log "wasm: building the packages (tests/wasm/build.sh)"
    if ! bash "$ROOT/tests/wasm/build.sh" "$PKGS" >"$OUT/wasm.log" 2>&1; then
      log "wasm: build FAILED (see $OUT/wasm.log); removing stale packages"
      rm -rf "$PKGS/web" "$PKGS/web-server" "$PKGS/web-client"
    fi
  fi
  # The floor (benches/wasm-floor: the least JSON-RPC tool server on serde_json and wasm-bindgen),
  # built the same way.
  f="$PKGS/web-floor/orkestrel_mcp_wasm_floor_bg.wasm"
  if [ ! -f "$f" ] || [ -n "$(find "$ROOT/benches/wasm-floor" "$ROOT/Cargo.lock" "$ROOT/tests/wasm/build.sh" -newer "$f" -print -quit)" ]; then
    log "wasm: building the floor (tests/wasm/build.sh PKG floor)"
    if ! bash "$ROOT/tests/wasm/build.sh" "$PKGS" floor >>"$OUT/wasm.log" 2>&1; then
      log "wasm: floor build FAILED (see $OUT/wasm.log)"
      rm -rf "$PKGS/web-floor"
    fi
  fi
else
  # Not measured in this run: the report says so rather than showing an old build.
  REPORT_NO_WASM=1
fi

# ----------------------------------------------------------------------------------- table
REPORT_NO_WASM="${REPORT_NO_WASM:-}" python3 "$ROOT/benches/report.py" "$OUT" "$CORES" "$DUR" "$WARM" >"$OUT/table.md"
cat "$OUT/table.md"
if [ -n "${BENCH_UPDATE_README:-}" ]; then
  python3 - "$ROOT/README.md" "$OUT/table.md" <<'EOF'
import sys
readme, table = sys.argv[1], open(sys.argv[2]).read().strip()
text = open(readme).read()
start, end = "<!-- bench-table:start -->", "<!-- bench-table:end -->"
i, j = text.index(start) + len(start), text.index(end)
open(readme, "w").write(text[:i] + "\n" + table + "\n" + text[j:])
EOF
  log "README.md Performance table updated"
fi
log "done in $(($(date +%s) - START)) s; raw results in $OUT"
