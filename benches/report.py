#!/usr/bin/env python3
"""Turn the raw results of benches/run.sh into ONE Markdown table of ratios.

Usage: report.py RESULTS_DIR CORES DURATION_MS WARMUP_MS

Reads RESULTS_DIR/{inprocess.json,http.jsonl,rss.jsonl,ws.jsonl,memory.jsonl,redis.jsonl,
redis-instructions.jsonl,redis-memory.jsonl,stdio.jsonl} (any may be missing) and prints the table. Throughputs are "higher is better", so ours/peer > 1 means ours is ahead;
latency and memory rows say "lower is better". Runs of the forward and reverse order are
averaged (peak RSS: the larger of the two).
"""

from __future__ import annotations

import datetime
import os
import json
import pathlib
import platform
import subprocess
import sys
from collections import defaultdict

out = pathlib.Path(sys.argv[1])
cores, dur, warm = sys.argv[2], sys.argv[3], sys.argv[4]

PEERS = ["floor", "rmcp", "ts", "py"]
HEAD = ["ours", "floor", "ours/floor", "rmcp", "ours/rmcp", "TS SDK", "ours/TS", "Python SDK", "ours/Py", "goal"]


def lines(name: str) -> list[dict]:
    p = out / name
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(v, kind):
    if v is None:
        return "—"
    if kind == "rate":
        return f"{v / 1000:.1f}k" if v >= 1000 else f"{v:.0f}"
    if kind == "ms":
        return f"{v / 1000:.2f} ms"
    if kind == "count":
        return f"{v / 1000:.1f}k" if v < 1e6 else f"{v / 1e6:.2f}M"
    if kind == "us":
        return f"{v:.1f} µs"
    if kind == "mib":
        return f"{v / 1024:.1f} MiB"
    if kind == "plain2":
        return f"{v:.2f}"
    if kind == "bytes":
        return f"{v / 1000:.1f} KB"
    return str(v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}×"


rows: list[list[str]] = []


def row(label, values: dict, kind, goal=""):
    ours = values.get("ours")
    cells = [label, fmt(ours, kind)]
    for peer in PEERS:
        cells += [fmt(values.get(peer), kind), ratio(ours, values.get(peer))]
    cells.append(goal)
    rows.append(cells)


def slot(label, text):
    rows.append([label, text] + [""] * (len(HEAD) - 1))


def check(ok) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


# ---------------------------------------------------------------- in process
inproc = {}
p = out / "inprocess.json"
if p.exists():
    inproc = json.loads(p.read_text())
for group, label, least in (("tools_call_echo", "in process: tools/call echo, calls/s", 0.75),
                            ("tools_list_100", "in process: tools/list of 100 tools, calls/s", 0.67)):
    ns = {k.split("/", 1)[1]: v for k, v in inproc.items() if k.startswith(group + "/")}
    if not ns:
        continue
    per_s = {"ours": 1e9 / ns["ours/handle"], "floor": 1e9 / ns["floor/serde"], "rmcp": 1e9 / ns["rmcp/service"]}
    ok = per_s["ours"] >= least * per_s["floor"] and per_s["ours"] > per_s["rmcp"]
    row(label, per_s, "rate", f"≥ {least}× floor, > rmcp" + check(ok))

instr = {rec["mode"]: rec["per_call"] for rec in lines("instructions.jsonl")}
for what, label in (("echo", "in process: instructions per tools/call echo (callgrind; lower is better)"),
                    ("list", "in process: instructions per tools/list of 100 (callgrind; lower is better)")):
    v = {side: instr.get(f"{side}-{what}") for side in ("ours", "floor", "rmcp")}
    if v["ours"]:
        ok = None if not v["floor"] or not v["rmcp"] else v["ours"] <= 1.5 * v["floor"] and v["ours"] < v["rmcp"]
        row(label, v, "count", "≤ 1.5× floor, < rmcp" + check(ok))

# ---------------------------------------------------------------- HTTP
http = defaultdict(lambda: defaultdict(list))  # (server) -> c -> [run]
for rec in lines("http.jsonl"):
    if "run" in rec:
        http[rec["server"]][rec["run"]["connections"]].append(rec["run"])


def http_stat(c, key):
    return {s: mean([r[key] for r in http[s][c]]) for s in http if http[s][c]}


if http:
    for c in (1, 16, 64):
        v = http_stat(c, "rps")
        goal = ""
        if c in (16, 64):
            ok = None if not v.get("ours") or not v.get("floor") else v["ours"] >= 0.8 * v["floor"]
            goal = "≥ 0.8× floor" + check(ok)
        row(f"HTTP tools/call, c={c}, req/s", v, "rate", goal)
    for c in (16, 64):
        row(f"HTTP p50 latency, c={c} (lower is better)", http_stat(c, "p50_us"), "ms")
        v = http_stat(c, "p99_us")
        goal = ""
        if c == 64:
            ok = None if not v.get("ours") or not v.get("rmcp") else v["ours"] <= v["rmcp"]
            goal = "≤ rmcp" + check(ok)
        row(f"HTTP p99 latency, c={c} (lower is better)", v, "ms", goal)
    cpu = defaultdict(lambda: defaultdict(list))
    for rec in lines("http.jsonl"):
        run = rec.get("run")
        if run and rec.get("cpu_ticks") is not None and run.get("total"):
            cpu[rec["server"]][run["connections"]].append(rec["cpu_ticks"] / rec["clk_tck"] * 1e6 / run["total"])
    for c in (16, 64):
        v = {s: mean(cpu[s][c]) for s in cpu if cpu[s][c]}
        if v:
            row(f"HTTP server CPU per request, c={c} (lower is better)", v, "us")
    for c in (16, 64):
        sse = {"ours": mean([r["rps"] for r in http["ours-sse"][c]]), "floor": mean([r["rps"] for r in http["floor"][c]]),
               "rmcp": mean([r["rps"] for r in http["rmcp"][c]])}
        if sse["ours"]:
            ok = None if not sse["floor"] or not sse["rmcp"] else sse["ours"] >= 0.8 * sse["floor"] and sse["ours"] > sse["rmcp"]
            row(f"HTTP c={c}, req/s — ours answering SSE (the route's default `prefer_json: false`)", sse, "rate",
                "≥ 0.8× floor, > rmcp" + check(ok))
            v = {"ours": mean(cpu["ours-sse"][c]), "floor": mean(cpu["floor"][c]), "rmcp": mean(cpu["rmcp"][c])}
            row(f"HTTP server CPU per request, c={c} — ours answering SSE (lower is better)", v, "us")
    rss = defaultdict(int)
    for rec in lines("rss.jsonl"):
        if rec["server"] == "ours-sse" or rec["server"].endswith("-sessions"):
            continue
        rss[rec["server"]] = max(rss[rec["server"]], rec.get("vmhwm_kib") or 0)
    if rss:
        ok = None if not rss.get("ours") else rss["ours"] <= 8 * 1024
        row("peak RSS after c=64 (VmHWM; lower is better)", dict(rss), "mib", "≤ 8 MiB" + check(ok))


def sessions_view(stat):
    # ours = our Endpoint with sessions, rmcp = rmcp's session mode, floor = the stateless floor.
    return {"ours": stat.get("ours-sessions"), "floor": stat.get("floor"), "rmcp": stat.get("rmcp-sessions")}


if http.get("ours-sessions"):
    for c in (1, 16, 64):
        v = sessions_view(http_stat(c, "rps"))
        goal = ""
        if c in (16, 64):
            ok = None if not v["ours"] or not v["floor"] or not v["rmcp"] else v["ours"] >= 0.65 * v["floor"] and v["ours"] > v["rmcp"]
            goal = "≥ 0.65× floor, > rmcp" + check(ok)
        row(f"HTTP with sessions (mcp-session-id), c={c}, req/s", v, "rate", goal)
    for c in (16, 64):
        v = sessions_view(http_stat(c, "p99_us"))
        ok = None if not v["ours"] or not v["rmcp"] else v["ours"] <= v["rmcp"]
        row(f"HTTP with sessions, p99 latency, c={c} (lower is better)", v, "ms", "≤ rmcp" + check(ok))
    for c in (16, 64):
        v = {s2: mean(cpu[s2][c]) for s2 in cpu if cpu[s2][c]}
        row(f"HTTP with sessions, server CPU per request, c={c} (lower is better)", sessions_view(v), "us")
    srss = defaultdict(int)
    for rec in lines("rss.jsonl"):
        srss[rec["server"]] = max(srss[rec["server"]], rec.get("vmhwm_kib") or 0)
    row("HTTP with sessions, peak RSS after c=64 (VmHWM; lower is better)", sessions_view(dict(srss)), "mib")
else:
    slot("HTTP with sessions, c=1/16/64", "not measured in this run")

# ---------------------------------------------------------------- stdio
stdio = defaultdict(lambda: defaultdict(list))
for rec in lines("stdio.jsonl"):
    stdio[rec["server"]][rec["run"]["inflight"]].append(rec["run"]["rps"])


def stdio_row(k, ours_name, label):
    v = {
        "ours": mean(stdio[ours_name][k]),
        "floor": mean(stdio["floor"][k]),
        "rmcp": mean(stdio["rmcp-pipes"][k]),
        "ts": mean(stdio["ts"][k]),
    }
    ok = None if not v["ours"] or not v["floor"] else v["ours"] >= 0.9 * v["floor"]
    goal = "≥ 0.9× floor"
    if ours_name == "ours" and k == 1:  # the shipped serve_stdio, sequential: also ahead of rmcp
        ok = ok and (v["rmcp"] is None or v["ours"] > v["rmcp"])
        goal += ", > rmcp"
    row(label, v, "rate", goal + check(ok))


if stdio:
    stdio_row(64, "ours", "stdio, 64 in flight, round trips/s")
    stdio_row(1, "ours", "stdio, sequential, round trips/s")
    stdio_row(64, "ours-pipes", "stdio, 64 in flight — ours on non-blocking pipes (bench variant)")
    stdio_row(1, "ours-pipes", "stdio, sequential — ours on non-blocking pipes (bench variant)")

# ---------------------------------------------------------------- WebSocket
ws = defaultdict(list)
ws_cpu = defaultdict(list)
for rec in lines("ws.jsonl"):
    ws[rec["server"]].append(rec["run"])
    if rec.get("cpu_ticks") is not None and rec["run"].get("ok"):
        ws_cpu[rec["server"]].append(rec["cpu_ticks"] / rec["clk_tck"] * 1e6 / rec["run"]["ok"])


def ws_view(key):
    return {"ours": mean([r[key] for r in ws["ours-sessions"]]), "floor": mean([r[key] for r in ws["floor-ws"]])}


if ws:
    v = ws_view("rps")
    ok = None if not v["ours"] or not v["floor"] else v["ours"] >= 0.9 * v["floor"]
    row("WebSocket, one socket, 64 in flight, msg/s (rmcp: no WebSocket server)", v, "rate", "≥ 0.9× floor" + check(ok))
    row("WebSocket, 64 in flight, p99 latency (lower is better)", ws_view("p99_us"), "ms")
    row("WebSocket, server CPU per message (lower is better; includes the warm-up's share)",
        {"ours": mean(ws_cpu["ours-sessions"]), "floor": mean(ws_cpu["floor-ws"])}, "us")
else:
    slot("WebSocket, one socket, 64 in flight, msg/s", "not measured in this run")

# ---------------------------------------------------------------- memory
mem = defaultdict(lambda: defaultdict(list))  # mode -> server -> [bytes per]
for rec in lines("memory.jsonl"):
    mem[rec["probe"]["mode"]][rec["server"]].append(rec["probe"]["bytes_per"])
if mem["sessions"]:
    v = {"ours": mean(mem["sessions"]["ours-sessions"]), "rmcp": mean(mem["sessions"]["rmcp-sessions"])}
    ok = None if v["ours"] is None else v["ours"] < 2000
    row("memory per idle session, 1,000 sessions (VmRSS delta; lower is better)", v, "bytes", "< 2 KB" + check(ok))
else:
    slot("memory per idle session (1,000 sessions)", "not measured in this run")
if mem["ws"]:
    v = {"ours": mean(mem["ws"]["ours-sessions"]), "floor": mean(mem["ws"]["floor-ws"])}
    ok = None if v["ours"] is None else v["ours"] < 16000
    row("memory per idle WebSocket connection, 1,000 open (VmRSS delta; lower is better; rmcp: no WebSocket server)",
        v, "bytes", "< 16 KB" + check(ok))
else:
    slot("memory per idle WebSocket connection (1,000)", "not measured in this run")
# ---------------------------------------------------------------- Redis scale-out
# One text cell per row (Redis / in-memory): the columns of the peers do not apply. The in-memory
# store is the same endpoint and binary (bench-ours --http-sessions), measured in the same part.
redis_runs = defaultdict(lambda: defaultdict(list))  # server -> c -> [record]
for rec in lines("redis.jsonl"):
    if "run" in rec:
        redis_runs[rec["server"]][rec["run"]["connections"]].append(rec)


def per_request(recs, key):
    return mean([r[key] / r["clk_tck"] * 1e6 / r["run"]["total"] for r in recs if r["run"].get("total")])


def text_row(label, text, goal=""):
    rows.append([label, text] + [""] * (len(HEAD) - 2) + [goal])


redis_ok = bool(redis_runs.get("ours-redis"))
if redis_ok:
    for c in (16, 64):
        red, mem_ = redis_runs["ours-redis"][c], redis_runs["ours-sessions"][c]
        r_rps, m_rps = mean([r["run"]["rps"] for r in red]), mean([r["run"]["rps"] for r in mem_])
        text_row(f"Redis store: sessions HTTP c={c}, req/s — Redis / in-memory (same endpoint)",
                 f"{fmt(r_rps, 'rate')} / {fmt(m_rps, 'rate')} = {ratio(r_rps, m_rps)}")
    for c in (16, 64):
        red, mem_ = redis_runs["ours-redis"][c], redis_runs["ours-sessions"][c]
        inst, rs, m_cpu = per_request(red, "cpu_ticks"), per_request(red, "redis_ticks"), per_request(mem_, "cpu_ticks")
        total = None if inst is None or rs is None else inst + rs
        text_row(f"Redis store: CPU per request, c={c} — instance + redis-server = total / in-memory (lower is better)",
                 f"{fmt(inst, 'us')} + {fmt(rs, 'us')} = {fmt(total, 'us')} / {fmt(m_cpu, 'us')} = {ratio(total, m_cpu)} "
                 f"(instance alone {ratio(inst, m_cpu)})")
    ir = {rec["server"]: rec["ir"] / rec["calls"] for rec in lines("redis-instructions.jsonl")}
    if ir.get("ours-redis"):
        text_row("Redis store: instructions per session request in the instance — Redis / in-memory "
                 "(callgrind, c=16; lower is better)",
                 f"{fmt(ir['ours-redis'], 'count')} / {fmt(ir.get('ours-sessions'), 'count')} = "
                 f"{ratio(ir['ours-redis'], ir.get('ours-sessions'))}")
    red_all = [r for c in (16, 64) for r in redis_runs["ours-redis"][c] if r["run"].get("total")]

    def per_call(key):
        return mean([r[key] / r["run"]["total"] for r in red_all if r.get(key) is not None])

    cmds, scripts = per_call("redis_commands"), per_call("redis_evalsha")
    if cmds is not None:
        text_row("Redis store: Redis commands per session request — scripts run (EVALSHA, one round trip each) / "
                 "all commands, scripts' own included (lower is better)",
                 f"{fmt(scripts, 'plain2')} / {fmt(cmds, 'plain2')}")
    left, keys = per_call("redis_memory_delta"), per_call("redis_keys_delta")
    if left is not None:
        text_row("Redis store: Redis memory left per session request (its stream's event list, kept for the event TTL, "
                 "5 min; lower is better)", f"{left:.0f} B in {fmt(keys, 'plain2')} keys")
else:
    slot("Redis store: sessions HTTP c=16/64, Redis / in-memory", "not measured in this run")

steps = {rec["server"]: rec["probe"]["steps"] for rec in lines("redis-memory.jsonl")}
if steps.get("ours-redis"):
    red = steps["ours-redis"]
    first, last = red[0], red[-1]
    if first.get("used_memory") is not None and last["sessions"] > first["sessions"]:
        per = (last["used_memory"] - first["used_memory"]) / (last["sessions"] - first["sessions"])
        text_row(f"Redis store: Redis memory per idle session, {last['sessions'] - first['sessions']:,} sessions "
                 "(INFO used_memory delta; 2025-06-18 sessions; lower is better)", f"{per:.0f} B")

    def rss_cells(s):
        return " / ".join(f"{x['rss_kib'] / 1024:.1f}" for x in s) + " MiB"

    counts = " / ".join(f"{x['sessions']:,}" for x in red)
    mem_steps = steps.get("ours-sessions")
    text = rss_cells(red) + (f" (in-memory store: {rss_cells(mem_steps)})" if mem_steps else "")
    # An instance keeps up to 1,024 unused local handles (native::redis::LOCAL_SESSIONS): the
    # growth that matters is past them, from the next-to-last step to the last.
    base = red[-2] if len(red) > 2 else first
    growth = (last["rss_kib"] - base["rss_kib"]) * 1024 / max(1, last["sessions"] - base["sessions"])
    flat = growth < 100  # bytes per session: "flat" means the state lives in Redis
    text_row(f"Redis store: instance VmRSS with {counts} idle sessions (lower is better)",
             f"{text}; {growth:.0f} B a session past {base['sessions']:,}", "flat" + check(flat))
# The wasm packages (tests/wasm/build.sh, which benches/run.sh runs when they are missing or
# older than the sources): the full package and the server-only and client-only ones, each the
# web .wasm + its JS glue; sizes in KiB (1024 B), gzip -9.
import gzip

TS_SDK = "TS SDK client + server, esbuild --minify: 441 KB / 121 KB"


def wasm_size(d, stem):
    files = [d / f"{stem}_bg.wasm", d / f"{stem}.js"]
    if not all(f.exists() for f in files):
        return None
    return sum(f.stat().st_size for f in files), sum(len(gzip.compress(f.read_bytes(), 9)) for f in files)


# The floor: the least JSON-RPC tool server on serde_json and wasm-bindgen (benches/wasm-floor),
# built as the packages are; beside the full and server-only rows (the client-only one has none).
floor_size = None if os.environ.get("REPORT_NO_WASM") else wasm_size(out.parent / "wasm-pkg" / "web-floor", "orkestrel_mcp_wasm_floor")
for pkg_dir, label, goal_kb in [
    ("web", "wasm package, full (server + client; web .wasm + JS glue), raw / gzip -9", 100),
    ("web-server", "wasm package, server-only (feature js-server), raw / gzip -9", 60),
    ("web-client", "wasm package, client-only (feature js-client), raw / gzip -9", 60),
]:
    d = out.parent / "wasm-pkg" / pkg_dir
    files = [d / "orkestrel_mcp_bg.wasm", d / "orkestrel_mcp.js"]
    if os.environ.get("REPORT_NO_WASM"):
        slot(label, "not measured in this run")
    elif all(f.exists() for f in files):
        raw = sum(f.stat().st_size for f in files)
        gz = sum(len(gzip.compress(f.read_bytes(), 9)) for f in files)
        cells = [label, f"{raw / 1024:.1f} KB / {gz / 1024:.1f} KB"] + [""] * (len(HEAD) - 2)
        if floor_size and pkg_dir != "web-client":
            cells[HEAD.index("floor") + 1] = f"{floor_size[0] / 1024:.1f} KB / {floor_size[1] / 1024:.1f} KB"
            cells[HEAD.index("ours/floor") + 1] = f"{gz / floor_size[1]:.2f}× (gzip; lower is better)"
        if pkg_dir == "web":
            cells[HEAD.index("TS SDK") + 1] = "441 KB / 121 KB"
            cells[HEAD.index("ours/TS") + 1] = f"{gz / 1024 / 121:.2f}× (gzip; lower is better)"
        cells[-1] = f"≤ {goal_kb} KB gzipped" + check(gz / 1024 <= goal_kb)
        rows.append(cells)
    else:
        slot(label, f"n/a (not built: bash tests/wasm/build.sh; {TS_SDK})")

# ---------------------------------------------------------------- print
try:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    commit = "?"
cpu = ""
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
print(f"Machine: {cores} cores ({cpu or platform.machine()}), {datetime.date.today()}, commit {commit}; "
      f"{dur} ms measured after {warm} ms warm-up per run, forward and reverse order averaged.")
print("Servers on CPU 0, load generator / driver on CPU 1 (taskset). Throughput ratios: ours/peer > 1 means ours is ahead.")
print("The one-core load generator caps the bare hyper floor, so the floor is a LOWER bound and ours/floor an upper bound.")
print()
print("| measure | " + " | ".join(HEAD) + " |")
print("|---|" + "---|" * len(HEAD))
for r in rows:
    print("| " + " | ".join(r) + " |")
print()
notes = []
if inproc:
    notes.append(
        "In process, rmcp is its running service fed parsed messages over in-memory channels (its fastest public path); "
        f"its one-shot service per request (what its stateless HTTP does) takes "
        f"{inproc.get('tools_call_echo/rmcp/oneshot', 0) / 1000:.1f} µs (echo) and "
        f"{inproc.get('tools_list_100/rmcp/oneshot', 0) / 1000:.1f} µs (list); "
        f"ours {inproc.get('tools_call_echo/ours/handle', 0) / 1000:.2f} µs and {inproc.get('tools_list_100/ours/handle', 0) / 1000:.1f} µs; "
        f"serde floor {inproc.get('tools_call_echo/floor/serde', 0) / 1000:.2f} µs and {inproc.get('tools_list_100/floor/serde', 0) / 1000:.1f} µs."
    )
if stdio:
    r64, r1 = mean(stdio["rmcp"][64]), mean(stdio["rmcp"][1])
    notes.append(
        "stdio: ours is `native::stdio::serve_stdio` as shipped (the bench variant opens /proc/self/fd/0 and 1 as non-blocking pipes itself); rmcp is `stdio_pipes()`; "
        f"rmcp with plain `stdio()` does {fmt(r64, 'rate')} (64 in flight) and {fmt(r1, 'rate')} (sequential) round trips/s."
    )
notes.append("HTTP servers answer JSON (ours: `HttpOptions { prefer_json: true }`; rmcp: stateless, `json_response`; "
             "TS SDK: a server and transport per request, `enableJsonResponse`; Python SDK: `stateless_http`, `json_response`).")
if http.get("ours-sessions") or ws or mem:
    notes.append(
        "Sessions: ours is `native::endpoint::Endpoint` with its default options, as `orkestrel-mcp serve --http` runs it "
        "(sessions, SSE replies, WebSocket on the same path); rmcp is its Streamable HTTP service in its default session mode "
        "(SSE replies). Each load connection sends `initialize` and `notifications/initialized` once, then every call with its "
        "`mcp-session-id`; the floor column is the stateless bare hyper floor. WebSocket: ours is the same endpoint's "
        "WebSocket (subprotocol `mcp`, one socket, 64 requests kept in flight, every reply's id and text checked); "
        "the floor is a bare tokio-tungstenite server (default config) answering each message with the serde floor, one "
        "after another. Memory: fresh server per probe; VmRSS after 1,000 `initialize`s (sessions, the connection then "
        "closed) or 1,000 open, initialized sockets, minus VmRSS before, over 1,000; every session / socket is then used "
        "once and its reply checked.")
if redis_ok or steps:
    notes.append(
        "Redis store: the same binary and endpoint as the sessions rows (`bench-ours --http-sessions`) with `--redis URL` "
        "(`native::redis::RedisSessions` through `Endpoint::with_session_backend`, as `orkestrel-mcp serve --http --redis` "
        "wires it), against a fresh local redis-server 7 (`--save '' --appendonly no`) pinned to the load core; the "
        "in-memory store measured in the same part, both orders averaged. CPU per request: the instance's and "
        "redis-server's ticks over the run (session opening and warm-up included) over the good replies. Memory: a fresh "
        "instance per store (live-session cap raised to 20,000); after one warm-up session, sessions opened "
        "(`initialize` + `notifications/initialized`, 8 connections, then closed) up to each count, VmRSS and Redis's "
        "`INFO memory` read 300 ms later; every session then used once and its reply checked. Redis's figure includes "
        "each `initialize` answer's logged SSE event, kept for the event TTL (5 min).")
for n in notes:
    print(f"- {n}")
