#!/usr/bin/env python3
"""Write the seed corpora (fuzz/seeds/<target>/) from the messages in the tests.

The JSON-RPC messages are the raw-string literals of tests/*.rs and the in-module tests of src/
that hold "jsonrpc", plus the modern (2026-07-28, per-request `_meta`) requests the tests build
with `modern_params` / `tool_call`, aimed at the fuzz server's tools. Run from anywhere:
`python3 fuzz/seeds.py` (idempotent: it rewrites the folders). Inputs fuzzing found that once
failed a target (kept in fuzz/found/<target>/, one file each) are copied in too.
"""
import glob, hashlib, json, os, re, shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "seeds")

def rust_sources():
    for pattern in ("tests/*.rs", "tests/support/*.rs", "src/*.rs", "src/**/*.rs"):
        yield from glob.glob(os.path.join(ROOT, pattern), recursive=True)

messages = set()
for path in rust_sources():
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r'r#"(\{"jsonrpc.*?)"#', text):
        messages.add(m.group(1))

V = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-tests", "version": "0"}}
META_ELICIT = dict(META, **{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                            "io.modelcontextprotocol/logLevel": "debug"})
def rpc(id, method, params=None, meta=META):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None or meta is not None:
        p = dict(params or {})
        if meta is not None:
            p["_meta"] = meta
        msg["params"] = p
    return json.dumps(msg, separators=(",", ":"))

modern = [
    rpc(1, "server/discover"),
    rpc(2, "tools/list"),
    rpc(3, "tools/list", {"cursor": "x"}),
    rpc("c", "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    rpc(4, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 5}}),
    rpc(5, "tools/call", {"name": "fail", "arguments": {}}),
    rpc(6, "tools/call", {"name": "progress", "arguments": {}, "_meta": dict(META_ELICIT, progressToken="t")}, meta=None),
    rpc(7, "tools/call", {"name": "ask", "arguments": {}}, meta=META_ELICIT),
    rpc(8, "tools/call", {"name": "ask", "arguments": {}, "inputResponses": {"q": {"action": "accept", "content": {}}}}, meta=META_ELICIT),
    rpc(9, "tools/call", {"name": "ask", "arguments": {}, "requestState": "AAAA"}, meta=META_ELICIT),
    rpc(10, "resources/list"),
    rpc(11, "resources/templates/list"),
    rpc(12, "resources/read", {"uri": "mem://a"}),
    rpc(13, "prompts/list"),
    rpc(14, "prompts/get", {"name": "greet", "arguments": {"who": "w"}}),
    rpc(15, "completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}}),
    rpc(16, "subscriptions/listen", {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["mem://a"]}}),
    rpc(17, "initialize", {"protocolVersion": V, "capabilities": {}}),
    rpc(18, "ping"),
    rpc(19, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}),
    rpc(20, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": V}),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "_meta": META}}, separators=(",", ":")),
]
legacy = [
    rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}, meta=None),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    rpc(2, "tools/call", {"name": "ask", "arguments": {}}, meta=None),
    '{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept","content":{"name":"n"}}}',
    rpc(3, "tools/call", {"name": "progress", "arguments": {}, "_meta": {"progressToken": 1}}, meta=None),
    rpc(4, "logging/setLevel", {"level": "debug"}, meta=None),
    rpc(5, "resources/subscribe", {"uri": "mem://a"}, meta=None),
    rpc(6, "prompts/get", {"name": "greet"}, meta=None),
    rpc(7, "resources/read", {"uri": "mem://nope"}, meta=None),
    rpc(8, "tools/list", {"cursor": "Mg"}, meta=None),
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}',
]
odd = ["", "not json", "[]", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", "1",
       '{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}',
       '{"jsonrpc":"2.0","id":-0,"method":"ping"}',
       '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
       '{"jsonrpc":"2.0","id":null,"result":{}}',
       '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + "[" * 200 + "]" * 200 + "}"]

FOUND = os.path.join(ROOT, "fuzz", "found")

def write(target, items):
    """Rewrite fuzz/seeds/<target>/: `items`, plus what fuzzing found (fuzz/found/<target>/)."""
    folder = os.path.join(OUT, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    found = os.path.join(FOUND, target)
    for name in sorted(os.listdir(found)) if os.path.isdir(found) else []:
        items = list(items) + [open(os.path.join(found, name), "rb").read()]
    for item in items:
        data = item if isinstance(item, bytes) else item.encode("utf-8")
        name = hashlib.sha1(data).hexdigest()[:16]
        open(os.path.join(folder, name), "wb").write(data)

single = sorted(messages) + modern + legacy + odd
write("handle", single)
write("jsonrpc", single)
# A connection input: one header byte (bit 0 WebSocket, bits 1-3 limit - 1), then lines.
sessions = [legacy, modern, legacy[:3] + [legacy[-1]], modern[15:17] + [modern[-1]], sorted(messages)[:20]]
conn = []
for header in (b"\x0e", b"\x0f", b"\x00", b"\x01"):
    for lines in sessions:
        conn.append(header + "\n".join(lines).encode("utf-8") + b"\n")
# JSON-RPC batches at 2025-03-26 (header bit 7: the handshake at that revision): requests,
# notifications and a response to a server request mixed, all notifications, the invalid ones.
B = "2025-03-26"
batches = [
    "[" + ",".join([rpc(31, "ping", meta=None), rpc(32, "tools/list", meta=None),
                    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}']) + "]",
    "[" + ",".join([rpc(33, "tools/call", {"name": "ask", "arguments": {}}, meta=None),
                    '{"jsonrpc":"2.0","id":"s-1","result":{"action":"accept","content":{"name":"n"}}}']) + "]",
    '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]',
    "[" + rpc(34, "initialize", {"protocolVersion": B, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}, meta=None) + "]",
    "[]", "[1,2]", '[{"jsonrpc":"2.0","id":35,"method":"ping"},"x",[]]',
    "[" + ",".join([rpc(36, "ping", meta=None)] * 3) + "]",
    '[{"jsonrpc":"2.0","id":37,"method":"ping"}',
]
for header in (b"\x80", b"\x82", b"\x8e", b"\x90"):
    conn.append(header + "\n".join(batches + legacy[2:5]).encode("utf-8") + b"\n")
write("connection", conn)
# SSE bodies (two header bytes: the cut size, the line limit (>= 128: none)).
sse = [b"\x03\xff" + b for b in (
    b"data: a\n\n", b"id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n",
    b"\xef\xbb\xbfdata: x\r\ndata: y\r\n\r\n", b": keep-alive\n\nretry: 500\ndata:\n\n",
    b"data: a\rdata: b\r\r", b"id: 7\ndata: \n\nid\ndata: z\n\n", b"event: end\ndata: 1\n\ndata: partial",
    b"\x01data: {\"a\":1}\nmore",
)] + [b"\x01\x04data: over the limit\n\ndata: ok\n\n"]
write("sse", sse)
framing = [b"\xff\x05" + b for b in (
    "\ufeff{\"a\":\"é\"}\r\n\n  \r\n{}\n".encode("utf-8"),
    b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n{\"jsonrpc\"",
    "\n".join(legacy).encode("utf-8"),
)] + [b"\x04\x01123456\n78\nok\nabcdefgh\nxy"]
write("framing", framing)
# WebSocket: byte 0 the limit - 1; then frames (a length byte, the text), 250 run, 251 close.
def ws_frames(frames, ops=b""):
    out = bytearray()
    for f in frames:
        data = f.encode("utf-8")[:249]
        out.append(len(data))
        out += data
        out.append(250)
    return bytes(out) + ops
ws = []
for limit in (b"\x00", b"\x01", b"\x07"):
    for lines in sessions:
        ws.append(limit + ws_frames(lines))
ws.append(b"\x00" + ws_frames(["not json", "[]", legacy[0], legacy[2]], b"\xfb" + ws_frames(["{}"])))
ws.append(b"\x01" + ws_frames([legacy[0], modern[15], modern[15], modern[-1]]))
for limit in (b"\x10", b"\x11", b"\x17"):
    ws.append(limit + ws_frames(batches[:3] + batches[4:] + [legacy[2]]))
write("websocket", ws)

# HTTP route: byte 0 the flags (bit 0 sessions, 1 no SSE, 2 prefer JSON, 3 a 64-byte body
# limit); then requests separated by NUL: "METHOD PATH", header lines, a blank line, the body.
def http(method, headers, body=b"", path="/mcp"):
    head = "\n".join([f"{method} {path}"] + [f"{n}: {v}" for n, v in headers])
    return head.encode("utf-8") + b"\n\n" + (body.encode("utf-8") if isinstance(body, str) else body)
JSON_SSE = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
MODERN_H = JSON_SSE + [("mcp-protocol-version", V)]
def modern_headers(msg):
    m = json.loads(msg)
    h = MODERN_H + [("mcp-method", m["method"])]
    name = m.get("params", {}).get("name") or m.get("params", {}).get("uri")
    if name:
        h.append(("mcp-name", name))
    return h
routes = []
for flags in (b"\x00", b"\x04", b"\x02"):
    for msg in legacy:
        routes.append(flags + http("POST", JSON_SSE + [("mcp-protocol-version", "2025-11-25")], msg))
    for msg in modern:
        if "method" in json.loads(msg):
            routes.append(flags + http("POST", modern_headers(msg), msg))
for body in ("", "not json", "[]", '{"jsonrpc":"2.0","id":1,"method":"ping"}' + " " * 80):
    routes.append(b"\x08" + http("POST", JSON_SSE, body))
routes.append(b"\x00" + http("GET", [("accept", "text/event-stream")]))
routes.append(b"\x00" + http("POST", [("content-type", "text/plain")], legacy[0]))
routes.append(b"\x00" + http("POST", JSON_SSE, legacy[0], path="/other"))
sid = [("mcp-session-id", "$SID"), ("mcp-protocol-version", "2025-11-25")]
routes.append(b"\x01" + b"\0".join([
    http("POST", JSON_SSE, legacy[0]),
    http("POST", JSON_SSE + sid, legacy[1]),
    http("POST", JSON_SSE + sid, legacy[2]),
    http("POST", JSON_SSE + sid, legacy[3]),
]))
routes.append(b"\x05" + b"\0".join([
    http("POST", JSON_SSE, legacy[0]),
    http("GET", [("accept", "text/event-stream")] + sid),
    http("POST", JSON_SSE + sid, rpc(9, "tools/list", meta=None)),
    http("DELETE", sid),
]))
# Batches over HTTP: stateless with the 2025-03-26 header (or none), and in a 2025-03-26 session.
for version in ([("mcp-protocol-version", B)], []):
    for body in batches:
        routes.append(b"\x00" + http("POST", JSON_SSE + version, body))
        routes.append(b"\x04" + http("POST", JSON_SSE + version, body))
sid_b = [("mcp-session-id", "$SID"), ("mcp-protocol-version", B)]
routes.append(b"\x01" + b"\0".join([
    http("POST", JSON_SSE, rpc(1, "initialize", {"protocolVersion": B, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}, meta=None)),
    http("POST", JSON_SSE + sid_b, legacy[1]),
] + [http("POST", JSON_SSE + sid_b, body) for body in batches]))
write("http_route", routes)

# Client exchange: byte 0 the flags (bits 0-2 the message, 4 a session, 5 modern headers, 7 a
# GET stream); then one op per step (see fuzz_targets/exchange.rs).
def response(status_index, ctype, extra=0):
    return bytes([status_index, ctype | extra])
def chunk(data):
    data = data.encode("utf-8") if isinstance(data, str) else data
    out = bytearray()
    while data:
        part, data = data[:255], data[255:]
        out += bytes([0x02, len(part)]) + part
    return bytes(out)
END = b"\x00"
json_reply = lambda id: json.dumps({"jsonrpc": "2.0", "id": id, "result": {}})
sse_reply = lambda id: "id: 1\nretry: 10\ndata: " + json_reply(id) + "\n\n"
exch = []
for flags, id in ((0, 1), (1, "init"), (4, 7), (5, 2), (0x10, 1), (0x20, 1)):
    exch.append(bytes([flags]) + response(0, 0) + chunk(json_reply(id)) + END)
    exch.append(bytes([flags]) + response(0, 1) + chunk(sse_reply(id)) + END)
    exch.append(bytes([flags]) + response(0, 1) + chunk("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n") + END
                + b"\x03" + response(0, 1) + chunk(sse_reply(id)) + END)
exch.append(bytes([2]) + response(1, 0x10))
exch.append(bytes([0]) + response(4, 0x40) + b"\x14" + response(0, 0) + chunk(json_reply(1)) + END)
exch.append(bytes([0x10]) + response(6, 0) + chunk('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}') + END)
exch.append(bytes([0]) + b"\x0f")
exch.append(bytes([0]) + b"\x86")
exch.append(bytes([0x90]) + response(0, 1) + chunk("id: 5\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n") + END + b"\x03")
exch.append(bytes([0x80]) + response(7, 0))
write("exchange", exch)

# The client's authorization machine: byte 0 the configuration (bit 0 client credentials, 1 a
# pre-registered client, 2 its secret, 3 a metadata document URL, 4 a scope, 5 restored
# credentials (then an issuer byte), 6-7 the server); then rounds: a status, a clock step, a
# challenge (0 none, 1-4 templates, else text); then one op per action (see
# fuzz_targets/auth_flow.rs): 0 the document asked for (then its shape byte), 4 a status and
# text, 6 a failure; for a sign-in 0 the right callback, 2 another state, 3 an error.
def text(t):
    t = t.encode("utf-8") if isinstance(t, str) else t
    return bytes([len(t)]) + t
DOC = b"\x00\x00"          # the document, shape 0
NOT_FOUND = b"\x04\x04\x00"  # 404, empty body
ROUND = b"\x00\x00\x00"     # 401, no clock step, no challenge header
flows = [
    # Authorization code: resource metadata, server metadata, registration, sign-in, token.
    b"\x00" + ROUND + DOC + DOC + DOC + b"\x00" + DOC + b"\x00"
    # then a 403 step-up: the cached server, the same client, a new sign-in.
    + b"\x02\x01\x02" + DOC + b"\x00" + DOC + b"\x00",
    # Client credentials, client_secret_basic.
    b"\x01" + ROUND + DOC + b"\x00\x10" + DOC + b"\x00",
    # The 2025-03-26 fallback: no resource metadata; the origin's server metadata.
    b"\x00" + ROUND + NOT_FOUND + NOT_FOUND + DOC + DOC + b"\x00" + DOC + b"\x00",
    # ... and no server metadata either: the default endpoints.
    b"\x00" + ROUND + NOT_FOUND + NOT_FOUND + NOT_FOUND + NOT_FOUND + DOC + b"\x00" + DOC + b"\x00",
    # Restored tokens: a refresh; then a refused refresh and a new sign-in.
    b"\x20\x00" + ROUND + DOC + DOC + DOC + b"\x00"
    + b"\x00\x10\x00" + DOC + b"\x04\x02" + text('{"error":"invalid_grant"}') + b"\x00" + DOC + b"\x00",
    # RFC 9207: iss advertised and sent; then (403 step-ups) another state; then an error.
    b"\x00" + ROUND + DOC + b"\x00\x10" + DOC + b"\x08" + DOC + b"\x00"
    + b"\x02\x20\x02" + DOC + b"\x02" + b"\x00"
    + b"\x02\x20\x02" + DOC + b"\x03" + b"\x00",
    # A Client ID Metadata Document and a pre-registered client with a secret (post).
    b"\x08" + ROUND + DOC + b"\x00\x20" + b"\x00" + DOC + b"\x00",
    b"\x16" + ROUND + DOC + b"\x00\x08" + b"\x00" + DOC + b"\x00",
    # A challenge naming the metadata URL; text challenges.
    b"\x00\x00\x00\x01" + DOC + DOC + DOC + b"\x00" + DOC + b"\x00",
    b"\x00\x00\x00\x05" + text('Bearer resource_metadata="https://mcp.example/prm", scope="a b", error="insufficient_scope"') + DOC + DOC + DOC + b"\x00" + DOC,
    b"\x00\x00\x00\x04" + text("https://elsewhere.example/prm") + b"\x06\x06\x06\x06\x06\x06",
    # Lies: another resource, another issuer, no S256; a failed fetch of each candidate.
    b"\x00" + ROUND + b"\x00\x01",
    b"\x00" + ROUND + DOC + b"\x00\x41" + text("https://evil.example"),
    b"\x00" + ROUND + DOC + b"\x00\x02",
    b"\x00" + ROUND + b"\x06\x06\x06\x06\x06\x06\x06",
    # Out of order: a redirect while fetching, an answer while signing in, a new challenge.
    b"\x00" + ROUND + b"\x82" + text("http://127.0.0.1:7/callback?code=c&state=s"),
    b"\x00" + ROUND + DOC + DOC + DOC + b"\x80\x00" + text("{}"),
    b"\x00" + ROUND + DOC + b"\x83" + text('Bearer scope="s9"') + DOC + DOC,
]
write("auth_flow", flows)
print("seeds:", {t: len(os.listdir(os.path.join(OUT, t))) for t in sorted(os.listdir(OUT))})
