//! The JS bindings on wasm32 (node and headless Chromium): `createMCPServer` with JS tools,
//! `dispatch` / `handle` / `fetch`, exact ids (BigInt), errors as `MCPError`, guards, builders.
#![cfg(target_family = "wasm")]

use js_sys::{Array, BigInt, Function, Object, Promise, Reflect};
use orkestrel_mcp::wasm::guards::*;
use orkestrel_mcp::wasm::{create_mcp_server, Server};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::{Request, RequestInit, Response};

fn js(source: &str) -> JsValue {
    Function::new_no_args(&format!("return ({source});"))
        .call0(&JsValue::UNDEFINED)
        .expect("test JS evaluates")
}

fn convert_back(value: &JsValue) -> serde_json::Value {
    orkestrel_mcp::wasm::convert::from_js(value).unwrap()
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).unwrap()
}

async fn wait(promise: Promise) -> JsValue {
    JsFuture::from(promise).await.expect("promise resolves")
}

fn server() -> Server {
    create_mcp_server(js(r#"{
        name: 'js-tools', version: '1.2.3',
        tools: [
          { name: 'echo', description: 'Echo the text back',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            execute: (args) => args.text },
          { name: 'add', execute: async (args) => args.x + args.y },
          { name: 'fail', execute: () => { throw new Error('boom') } },
          { name: 'reject', execute: () => Promise.reject(new TypeError('nope')) },
          { name: 'image', execute: () => ({ content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] }) },
          { name: 'self', prefix: '>', execute(args) { return this.prefix + args.v } },
        ] }"#))
    .map_err(|e| format!("{e:?}"))
    .expect("options are valid")
}

async fn call(server: &Server, request: &str) -> serde_json::Value {
    let reply = wait(server.handle(request.to_owned())).await;
    serde_json::from_str(&reply.as_string().expect("a reply")).unwrap()
}

#[wasm_bindgen_test]
async fn handle_lists_and_calls_js_tools() {
    let s = server();
    assert_eq!(
        (s.name(), s.version(), s.path()),
        ("js-tools".into(), "1.2.3".into(), "/mcp".into())
    );
    let init = call(&s, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "js-tools");
    let list = call(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 6);
    assert_eq!(tools[0]["description"], "Echo the text back");
    assert_eq!(tools[0]["inputSchema"]["required"][0], "text");
    assert_eq!(
        tools[1]["inputSchema"],
        serde_json::json!({"type":"object"})
    );
    let echo = call(&s, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#).await;
    assert_eq!(
        echo["result"],
        serde_json::json!({"content":[{"type":"text","text":"hi"}]})
    );
    let add = call(&s, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":5}}}"#).await;
    assert_eq!(add["result"]["content"][0]["text"], "7");
    let image = call(
        &s,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"image"}}"#,
    )
    .await;
    assert_eq!(image["result"]["content"][0]["mimeType"], "image/png");
    let this = call(&s, r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"self","arguments":{"v":"x"}}}"#).await;
    assert_eq!(this["result"]["content"][0]["text"], ">x");
}

#[wasm_bindgen_test]
async fn throws_and_rejections_are_tool_errors() {
    let s = server();
    for (name, message) in [("fail", "boom"), ("reject", "nope")] {
        let r = call(
            &s,
            &format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            ),
        )
        .await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(r["result"]["content"][0]["text"], message);
    }
    let unknown = call(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zzz"}}"#,
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
}

/// A tool result that cannot be read (a `Proxy` whose `ownKeys` throws, a getter that throws, a
/// sparse array of 2^28 holes) is an `isError` result naming why, and the request is answered:
/// nothing escapes through the wasm frames as an uncaught exception or a trap. `fetch` of
/// anything but a `Request` rejects with a `TypeError`.
#[wasm_bindgen_test]
async fn a_result_that_cannot_be_read_is_a_tool_error_and_fetch_wants_a_request() {
    let s = create_mcp_server(js(r#"{
        name: 'poison', version: '1',
        tools: [
          { name: 'proxy', execute: () => new Proxy({}, { ownKeys() { throw new Error('ownKeys trap') } }) },
          { name: 'getter', execute: () => ({ get bad() { throw new Error('getter threw') } }) },
          { name: 'index', execute: () => { const a = [1]; Object.defineProperty(a, 0, { get() { throw new Error('index threw') } }); return a } },
          { name: 'sparse', execute: () => new Array(2 ** 28) },
          { name: 'revoked', execute: () => { const r = Proxy.revocable([], {}); r.revoke(); return r.proxy } },
          { name: 'throws-revoked', execute: () => { const r = Proxy.revocable({}, {}); r.revoke(); throw r.proxy } },
        ] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    for (name, says) in [
        ("proxy", "ownKeys trap"),
        ("getter", "getter threw"),
        ("index", "index threw"),
        ("sparse", "over the limit"),
        // `Array.isArray` throws on a revoked Proxy: the call was never answered.
        ("revoked", "revoked"),
        ("throws-revoked", "revoked"),
    ] {
        let r = call(
            &s,
            &format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}"}}}}"#
            ),
        )
        .await;
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        let answered = r["result"]["isError"] == true || r["error"].is_object();
        assert!(
            answered
                && (text.contains(says)
                    || r["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(says))),
            "{name}: {r}"
        );
    }
    // The guards are total: a revoked Proxy is no message (it threw out of the module).
    let revoked = js("(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })()");
    assert!(!is_jsonrpc_message(&revoked));
    assert!(!is_request_id(&revoked));
    for bad in [JsValue::from_str("http://x/mcp"), JsValue::UNDEFINED] {
        let rejected = JsFuture::from(s.fetch(bad)).await.unwrap_err();
        assert!(
            rejected.is_instance_of::<js_sys::TypeError>(),
            "{rejected:?}"
        );
    }
}

#[wasm_bindgen_test]
async fn handle_keeps_large_ids_exact() {
    let s = server();
    for raw in [
        "9007199254740993",
        "-9223372036854775808",
        "9223372036854775807",
    ] {
        let reply =
            wait(s.handle(format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#))).await;
        assert_eq!(
            reply.as_string().unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
        );
    }
}

#[wasm_bindgen_test]
async fn dispatch_takes_objects_and_bigint_ids() {
    let s = server();
    let r = wait(s.dispatch(js("{ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }"))).await;
    assert_eq!(get(&r, "id").as_f64(), Some(7.0));
    assert!(get(&get(&get(&r, "result"), "content"), "0").is_object());
    let big = wait(s.dispatch(js(
        "{ jsonrpc: '2.0', id: 9223372036854775807n, method: 'ping' }",
    )))
    .await;
    let id = get(&big, "id");
    assert!(id.is_bigint(), "a large id comes back as a bigint");
    assert_eq!(
        id.unchecked_ref::<BigInt>().to_string(10).unwrap(),
        "9223372036854775807"
    );
    let rounded = wait(s.dispatch(js("{ jsonrpc: '2.0', id: 2 ** 60, method: 'ping' }"))).await;
    assert_eq!(
        get(&get(&rounded, "error"), "code").as_f64(),
        Some(-32600.0)
    );
    assert!(get(&rounded, "id").is_null());
    let note = wait(s.dispatch(js(
        "{ jsonrpc: '2.0', method: 'notifications/initialized' }",
    )))
    .await;
    assert!(note.is_undefined());
    let bad = wait(s.dispatch(js(
        "{ jsonrpc: '2.0', id: 'a', method: 'ping', params: [1] }",
    )))
    .await;
    assert_eq!(get(&get(&bad, "error"), "code").as_f64(), Some(-32602.0));
    assert_eq!(get(&bad, "id").as_string().as_deref(), Some("a"));
    // Params that are not JSON (a bigint beyond 64 bits, a cycle): `-32600`, with the id, which
    // reads on its own.
    for params in [
        "{ a: 2n ** 100n }",
        "(() => { const o = {}; o.o = o; return o; })()",
    ] {
        let bad = wait(s.dispatch(js(&format!(
            "{{ jsonrpc: '2.0', id: 'b', method: 'ping', params: {params} }}"
        ))))
        .await;
        assert_eq!(get(&get(&bad, "error"), "code").as_f64(), Some(-32600.0));
        assert_eq!(
            get(&bad, "id").as_string().as_deref(),
            Some("b"),
            "{params}"
        );
    }
}

#[wasm_bindgen_test]
fn bad_options_throw_mcp_errors() {
    for (options, path) in [
        ("{ version: '1' }", "options.name"),
        ("{ name: 'n', version: '1', tools: {} }", "options.tools"),
        (
            "{ name: 'n', version: '1', tools: [{ name: 't' }] }",
            "options.tools[0].execute",
        ),
        (
            "{ name: 'n', version: '1', tools: [{ name: '', execute() {} }] }",
            "options.tools[0].name",
        ),
        // A path without its `/` would answer 404 to every request.
        ("{ name: 'n', version: '1', path: 'mcp' }", "options.path"),
        ("{ name: 'n', version: '1', path: '' }", "options.path"),
        ("{ name: 'n', version: '1', path: '/mcp?x=1' }", "options.path"),
        // The schema's `Tool.inputSchema.type` / `outputSchema.type` is "object": the official
        // TS SDK client refused the whole `tools/list` of a server with one such tool.
        (
            "{ name: 'n', version: '1', tools: [{ name: 't', inputSchema: { type: 'string' }, execute() {} }] }",
            "options.tools[0].inputSchema",
        ),
        (
            "{ name: 'n', version: '1', tools: [{ name: 't', outputSchema: { type: 'array' }, execute() {} }] }",
            "options.tools[0].outputSchema",
        ),
        // A schema that cannot be read says why.
        (
            "{ name: 'n', version: '1', tools: [{ name: 't', inputSchema: (() => { const o = { type: 'object' }; o.self = o; return o })(), execute() {} }] }",
            "options.tools[0].inputSchema",
        ),
        // A getter that throws is an error naming the member, not a server with no tools.
        (
            "{ name: 'n', version: '1', get tools() { throw new Error('no') } }",
            "options.tools",
        ),
        (
            "{ name: 'n', version: '1', tools: [{ name: 't', get execute() { throw 1 } }] }",
            "options.tools[0].execute",
        ),
        (
            "{ name: 'n', version: '1', get auth() { throw new Error('no') } }",
            "options.auth",
        ),
    ] {
        let error = create_mcp_server(js(options)).err().expect("throws");
        assert!(error.is_instance_of::<js_sys::Error>());
        assert_eq!(get(&error, "name").as_string().as_deref(), Some("MCPError"));
        assert_eq!(get(&error, "code").as_f64(), Some(-32602.0));
        assert_eq!(
            get(&get(&error, "data"), "path").as_string().as_deref(),
            Some(path)
        );
    }
}

#[wasm_bindgen_test]
fn add_remove_and_list_tools() {
    let s = server();
    s.add_tool(js("{ name: 'late', execute: () => 1 }"))
        .unwrap();
    assert!(s.remove_tool("fail"));
    let names: Vec<String> = Array::from(&s.list_tools())
        .iter()
        .map(|t| get(&t, "name").as_string().unwrap())
        .collect();
    assert_eq!(names, ["echo", "add", "reject", "image", "self", "late"]);
    assert!(s.add_tool(js("{ execute: () => 1 }")).is_err());
    // A schema naming no type is the schema of an object (as listed: clients refuse any other).
    s.add_tool(js(
        "{ name: 'bare', inputSchema: { properties: { a: { type: 'string' } } }, execute: () => 1 }",
    ))
    .unwrap();
    let listed = convert_back(&s.list_tools());
    let bare = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bare")
        .unwrap();
    assert_eq!(bare["inputSchema"]["type"], "object");
    assert_eq!(bare["inputSchema"]["properties"]["a"]["type"], "string");
}

#[wasm_bindgen_test]
fn guards_and_builders() {
    assert!(
        is_request_id(&js("'a'")) && is_request_id(&js("-3")) && is_request_id(&js("2n ** 62n"))
    );
    assert!(
        !is_request_id(&JsValue::NULL)
            && !is_request_id(&js("1.5"))
            && !is_request_id(&js("2 ** 60"))
    );
    assert!(is_jsonrpc_request(&js("{ jsonrpc: '2.0', method: 'm' }")));
    assert!(is_initialize_request(&js(
        "{ jsonrpc: '2.0', id: 1, method: 'initialize' }"
    )));
    assert!(!is_initialize_request(&js(
        "{ jsonrpc: '2.0', method: 'initialize' }"
    )));
    assert!(is_jsonrpc_response(&js(
        "{ jsonrpc: '2.0', id: null, error: { code: 1, message: 'm' } }"
    )));
    assert!(
        !is_jsonrpc_message(&js("[]")) && !is_jsonrpc_message(&js("{ jsonrpc: '2.0', id: 1 }"))
    );
    assert!(parse_jsonrpc_message(&js("{}")).is_undefined());
    let parsed = parse_jsonrpc_message(&js("{ jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 }"));
    assert_eq!(get(&parsed, "method").as_string().as_deref(), Some("ping"));
    let ok = jsonrpc_result(&js("1"), &js("{ a: [1, 'b'] }")).unwrap();
    assert!(is_jsonrpc_response(&ok));
    let err = jsonrpc_error(
        &JsValue::NULL,
        -32700,
        "Parse error".into(),
        Some(js("{ at: 3 }")),
    )
    .unwrap();
    assert_eq!(
        get(&get(&get(&err, "error"), "data"), "at").as_f64(),
        Some(3.0)
    );
    assert!(jsonrpc_result(&js("1.5"), &JsValue::NULL).is_err());
    let result = build_tool_result(&js("{ n: 7 }"));
    assert_eq!(
        get(&get(&get(&result, "content"), "0"), "text")
            .as_string()
            .as_deref(),
        Some(r#"{"n":7}"#)
    );
    let descriptors = build_tool_descriptors(&js(
        "[{ name: 'a', description: 'A', execute() {} }, { name: 'b', inputSchema: { type: 'object', required: ['x'] }, execute() {} }]",
    ))
    .unwrap();
    assert_eq!(
        convert_back(&descriptors),
        serde_json::json!([
            { "name": "a", "description": "A", "inputSchema": { "type": "object" } },
            { "name": "b", "inputSchema": { "type": "object", "required": ["x"] } }
        ])
    );
    assert!(build_tool_descriptors(&js("[{ name: 'c' }]")).is_err());
    let failed = build_tool_error(&js("new Error('bad')"));
    assert_eq!(get(&failed, "isError"), JsValue::TRUE);
    let init = initialize_result("n".into(), "1".into(), None);
    assert_eq!(
        get(&init, "protocolVersion").as_string().as_deref(),
        Some("2025-06-18")
    );
    let constants: Object = mcp_constants();
    assert_eq!(
        get(&constants, "JSONRPC_PARSE_ERROR").as_f64(),
        Some(-32700.0)
    );
    let text = |name: &str| get(&constants, name).as_string();
    assert_eq!(
        text("MCP_SESSION_HEADER").as_deref(),
        Some("mcp-session-id")
    );
    assert_eq!(
        text("MCP_PROTOCOL_VERSION_HEADER").as_deref(),
        Some("mcp-protocol-version")
    );
    assert_eq!(text("MCP_WEBSOCKET_SUBPROTOCOL").as_deref(), Some("mcp"));
    assert_eq!(
        text("DEFAULT_MCP_CLIENT_NAME").as_deref(),
        Some("orkestrel-mcp")
    );
    assert_eq!(
        get(&constants, "DEFAULT_MCP_REQUEST_TIMEOUT").as_f64(),
        Some(30_000.0)
    );
    assert!(Object::is_frozen(&constants));
}

fn request(method: &str, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Request {
    let init = RequestInit::new();
    init.set_method(method);
    let h = web_sys::Headers::new().unwrap();
    for (k, v) in headers {
        h.set(k, v).unwrap();
    }
    init.set_headers(&h);
    if let Some(body) = body {
        init.set_body(&JsValue::from_str(body));
    }
    Request::new_with_str_and_init(&format!("http://127.0.0.1{path}"), &init).unwrap()
}

async fn fetch(s: &Server, req: Request) -> (u16, String, web_sys::Headers) {
    let response: Response = wait(s.fetch(req.into())).await.unchecked_into();
    let text = wait(response.text().unwrap()).await.as_string().unwrap();
    (response.status(), text, response.headers())
}

const JSON: (&str, &str) = ("content-type", "application/json");
const ACCEPT_BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[wasm_bindgen_test]
async fn fetch_answers_with_the_native_statuses() {
    let s = server();
    let (status, body, headers) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ("accept", "application/json")],
            Some(PING),
        ),
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    );
    assert_eq!(
        headers.get("content-type").unwrap().as_deref(),
        Some("application/json")
    );
    let (status, body, headers) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(PING)),
    )
    .await;
    assert_eq!(
        (status, body.as_str()),
        (
            200,
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
        )
    );
    assert_eq!(
        headers.get("content-type").unwrap().as_deref(),
        Some("text/event-stream")
    );
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        fetch(
            &s,
            request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(note))
        )
        .await
        .0,
        202
    );
    let (status, body, _) =
        fetch(&s, request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some("{"))).await;
    assert_eq!(status, 400);
    assert!(
        body.contains("-32700") && body.contains(r#""id":null"#),
        "{body}"
    );
    let (status, body, _) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some("[]")),
    )
    .await;
    assert!(status == 400 && body.contains("-32600"), "{body}");
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ACCEPT_BOTH],
            Some(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#),
        ),
    )
    .await;
    assert!(status == 400 && body.contains("-32602"), "{body}");
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[("content-type", "text/plain"), ACCEPT_BOTH],
            Some(PING),
        ),
    )
    .await;
    assert!(status == 415 && body.contains("-32600"), "{body}");
    let (status, body, _) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ("accept", "text/html")], Some(PING)),
    )
    .await;
    assert!(status == 406 && body.contains("-32600"), "{body}");
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4 * 1024 * 1024)
    );
    let (status, body, _) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(&huge)),
    )
    .await;
    assert!(status == 413 && body.contains("-32600"), "{status} {body}");
    for verb in ["GET", "DELETE"] {
        let (status, body, headers) = fetch(&s, request(verb, "/mcp", &[ACCEPT_BOTH], None)).await;
        assert!(status == 405 && body.contains("-32000"), "{body}");
        assert_eq!(headers.get("allow").unwrap().as_deref(), Some("POST"));
    }
    assert_eq!(
        fetch(&s, request("POST", "/other", &[JSON], Some(PING)))
            .await
            .0,
        404
    );
}

/// A streamed body past the limit is not read to its end: the handler stops at the first chunk
/// over 4 MiB and answers `413` (a peer streaming gigabytes does not grow the module's memory,
/// nor wait for the whole of it).
#[wasm_bindgen_test]
async fn a_streamed_body_over_the_limit_is_refused_without_reading_the_rest() {
    let s = server();
    // A 64 MiB body in 64 KiB chunks, counting what is pulled.
    let source = js(r#"(() => {
        const chunk = new Uint8Array(65536).fill(32);
        const seen = { pulled: 0 };
        const body = new ReadableStream({
            pull(c) { if (seen.pulled >= 64 * 1048576) { c.close(); return; } seen.pulled += chunk.length; c.enqueue(chunk); },
        });
        return { seen, body };
    })()"#);
    let init = RequestInit::new();
    init.set_method("POST");
    let h = web_sys::Headers::new().unwrap();
    for (k, v) in [JSON, ACCEPT_BOTH] {
        h.set(k, v).unwrap();
    }
    init.set_headers(&h);
    init.set_body(&get(&source, "body"));
    Reflect::set(&init, &"duplex".into(), &"half".into()).unwrap();
    let req = Request::new_with_str_and_init("http://127.0.0.1/mcp", &init).unwrap();
    let (status, body, _) = fetch(&s, req).await;
    assert!(status == 413 && body.contains("-32600"), "{status} {body}");
    let pulled = get(&get(&source, "seen"), "pulled").as_f64().unwrap();
    assert!(
        pulled < 8.0 * 1048576.0,
        "{pulled} bytes pulled: the body was read past the limit"
    );
}

#[wasm_bindgen_test]
async fn a_request_that_cannot_be_read_is_answered_or_rejected_never_left_hanging() {
    // A body a middleware read first, or one locked by a reader: 400 -32700 naming why (its
    // `getReader` threw out of the module, and the promise never settled).
    let s = server();
    let headers = [JSON, ACCEPT_BOTH];
    let used = request("POST", "/mcp", &headers, Some(PING));
    wait(used.text().unwrap()).await;
    let locked = request("POST", "/mcp", &headers, Some(PING));
    locked.body().unwrap().get_reader();
    for req in [used, locked] {
        let (status, body, _) = fetch(&s, req).await;
        assert_eq!(status, 400, "{body}");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], -32700, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("cannot be read"), "{message}");
    }
    // A `Request` whose getter throws: the promise rejects with what it threw.
    for member in ["url", "method", "headers", "body"] {
        let hostile = js(&format!(
            r#"new Proxy(new Request('http://127.0.0.1/mcp', {{ method: 'POST', body: '{PING}',
                 headers: {{ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }} }}), {{
               get(target, key) {{
                 if (key === '{member}') throw new Error('{member} getter boom');
                 const value = Reflect.get(target, key, target);
                 return typeof value === 'function' ? value.bind(target) : value;
               }} }})"#
        ));
        let rejected = within(s.fetch(hostile).into(), 5_000).await.unwrap_err();
        let message = get(&rejected, "message").as_string().unwrap_or_default();
        assert_eq!(message, format!("{member} getter boom"));
    }
    // The server goes on answering.
    let (status, body, _) = fetch(&s, request("POST", "/mcp", &headers, Some(PING))).await;
    assert_eq!(status, 200, "{body}");
}

#[wasm_bindgen_test]
async fn fetch_calls_a_tool_with_an_exact_large_id() {
    let s = server();
    let body = r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"echo","arguments":{"text":"w"}}}"#;
    let (status, text, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ("accept", "application/json")],
            Some(body),
        ),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"w"}]}}"#
    );
}

#[wasm_bindgen_test]
async fn tools_get_a_context_and_progress_streams_on_sse() {
    let s = create_mcp_server(js(r#"{
        name: 'ctx', version: '1',
        tools: [{ name: 'slow', execute: async (args, ctx) => {
            globalThis.__kept = ctx; // a kept context must not hold the stream open
            const sent = ctx.progress(1, 2, 'half');
            ctx.log('info', { step: 1 });
            return { sent, id: ctx.requestId, token: ctx.progressToken };
        } }] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"t1"}}}"#;
    let (status, text, _) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(body)),
    )
    .await;
    assert_eq!(status, 200);
    let events: Vec<serde_json::Value> = text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| serde_json::from_str(e.strip_prefix("event: message\ndata: ").unwrap()).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{text}");
    assert_eq!(events[0]["method"], "notifications/progress");
    let progress = &events[0]["params"];
    assert_eq!(
        (
            progress["progressToken"].as_str(),
            progress["progress"].as_f64()
        ),
        (Some("t1"), Some(1.0))
    );
    assert_eq!(
        (progress["total"].as_f64(), progress["message"].as_str()),
        (Some(2.0), Some("half"))
    );
    assert_eq!(events[1]["method"], "notifications/message");
    assert_eq!(events[1]["params"]["data"]["step"], 1);
    let result: serde_json::Value =
        serde_json::from_str(events[2]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        serde_json::json!({"sent": true, "id": "p", "token": "t1"})
    );
    // Through `handle` there is no channel back: progress reports false.
    let reply = wait(s.handle(body.to_owned())).await.as_string().unwrap();
    assert!(reply.contains(r#"\"sent\":false"#), "{reply}");
}

/// A promise on `globalThis` under each name, with its `resolve` as a member (for a JS tool
/// to report what it saw).
fn deferreds(names: &[&str]) {
    for name in names {
        js(&format!(
            "(() => {{ let resolve; const p = new Promise(r => resolve = r); p.resolve = resolve; globalThis.{name} = p; }})()"
        ));
    }
}

/// `promise`, or a rejection after `ms` (a bound: a test fails instead of hanging).
async fn within(promise: JsValue, ms: u32) -> Result<JsValue, JsValue> {
    let bound = Function::new_with_args(
        "p, ms",
        "return Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error('timed out')), ms))]);",
    );
    let raced: Promise = bound
        .call2(&JsValue::UNDEFINED, &promise, &ms.into())
        .unwrap()
        .unchecked_into();
    JsFuture::from(raced).await
}

#[wasm_bindgen_test]
async fn a_cancelled_sse_reply_aborts_the_tools_signal_and_a_settled_call_never_does() {
    let s = create_mcp_server(js(r#"{
        name: 'abort', version: '1',
        tools: [
          { name: 'hang', execute: (args, ctx) => {
              ctx.signal.addEventListener('abort', () => globalThis.__aborted.resolve(ctx.signal.aborted));
              globalThis.__started.resolve(ctx.signal.aborted);
              return new Promise(() => {}); // never settles
          } },
          { name: 'quick', execute: (args, ctx) => { globalThis.__quick = ctx; return 'done'; } },
        ] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    deferreds(&["__started", "__aborted"]);
    let body =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hang","arguments":{}}}"#;
    let response: Response =
        wait(s.fetch(request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(body)).into()))
            .await
            .unchecked_into();
    assert_eq!(response.status(), 200);
    let started = within(js("globalThis.__started"), 5000)
        .await
        .expect("the tool runs");
    assert_eq!(
        started,
        JsValue::FALSE,
        "not aborted while the client reads"
    );
    // The client goes away: its reader cancels the stream, though the tool never sent a byte.
    let reader: JsValue = response.body().unwrap().get_reader().into();
    let cancel: Function = get(&reader, "cancel").unchecked_into();
    wait(cancel.call0(&reader).unwrap().unchecked_into()).await;
    let aborted = within(js("globalThis.__aborted"), 5000)
        .await
        .expect("the tool's signal aborts");
    assert_eq!(aborted, JsValue::TRUE);
    // A call that settled keeps its signal quiet, even with the context kept after it.
    let reply = call(
        &s,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"quick","arguments":{}}}"#,
    )
    .await;
    assert_eq!(reply["result"]["content"][0]["text"], "done");
    assert_eq!(js("globalThis.__quick.signal.aborted"), JsValue::FALSE);
}

#[wasm_bindgen_test]
async fn a_request_whose_signal_aborts_before_its_json_answer_cancels_the_tool() {
    let s = create_mcp_server(js(r#"{
        name: 'gone', version: '1',
        tools: [{ name: 'hang', execute: (args, ctx) => {
            ctx.signal.addEventListener('abort', () => globalThis.__goneAborted.resolve(true));
            globalThis.__goneStarted.resolve(true);
            return new Promise(() => {});
        } }] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    deferreds(&["__goneStarted", "__goneAborted"]);
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","arguments":{}}}"#;
    let with_signal = |signal: &web_sys::AbortSignal| {
        let req = request(
            "POST",
            "/mcp",
            &[JSON, ("accept", "application/json")],
            Some(body),
        );
        let init = RequestInit::new();
        init.set_signal(Some(signal));
        Request::new_with_request_and_init(&req, &init).unwrap()
    };
    let controller = web_sys::AbortController::new().unwrap();
    let answered = s.fetch(with_signal(&controller.signal()).into());
    within(js("globalThis.__goneStarted"), 5000)
        .await
        .expect("the tool runs");
    controller.abort();
    let response: Response = within(answered.into(), 5000)
        .await
        .expect("answered once the client is gone")
        .unchecked_into();
    assert_eq!(response.status(), 499);
    within(js("globalThis.__goneAborted"), 5000)
        .await
        .expect("the tool's signal aborts");
    // A request whose signal aborted before it came is answered so at once; nothing runs.
    js("globalThis.__goneStarted = null");
    let (status, text, _) = fetch(&s, with_signal(&controller.signal())).await;
    assert_eq!((status, text.as_str()), (499, ""));
    assert!(js("globalThis.__goneStarted").is_null());
}

#[wasm_bindgen_test]
async fn structured_output_follows_the_output_schema() {
    let s = create_mcp_server(js(r#"{
        name: 'out', version: '1',
        tools: [
          { name: 'sum', outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
            execute: (args) => ({ sum: 3 }) },
          { name: 'text', outputSchema: { type: 'object' }, execute: () => 'three' },
          { name: 'full', outputSchema: { type: 'object' },
            execute: () => ({ content: [{ type: 'text', text: 'x' }], structuredContent: { x: 1 } }) },
          { name: 'scalar', execute: () => ({ content: [], structuredContent: 5 }) },
          { name: 'nulled', execute: () => ({ content: [], structuredContent: null }) },
          { name: 'failed', outputSchema: { type: 'object' }, execute: () => { throw new Error('no') } },
          { name: 'only', outputSchema: { type: 'object' }, execute: () => ({ structuredContent: { y: 2 } }) },
          { name: 'flagged', outputSchema: { type: 'object' },
            execute: () => ({ isError: true, content: [{ type: 'text', text: 'bad input' }] }) },
        ] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let result = |name: &str| {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        );
        let s = &s;
        async move { call(s, &request).await["result"].clone() }
    };
    assert_eq!(
        result("sum").await,
        serde_json::json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}})
    );
    assert_eq!(
        result("text").await,
        serde_json::json!({"content": [{"type": "text", "text": "tool text has an outputSchema but returned no structuredContent"}], "isError": true})
    );
    assert_eq!(
        result("full").await["structuredContent"],
        serde_json::json!({"x": 1})
    );
    assert_eq!(
        result("scalar").await["content"][0]["text"],
        "tool scalar returned structuredContent that is not a JSON object"
    );
    assert_eq!(result("nulled").await, serde_json::json!({"content": []}));
    assert_eq!(result("failed").await["isError"], true);
    // A result-shaped object is a result, not structured output wrapped once more.
    assert_eq!(
        result("only").await,
        serde_json::json!({"content": [{"type": "text", "text": "{\"y\":2}"}], "structuredContent": {"y": 2}})
    );
    assert_eq!(
        result("flagged").await,
        serde_json::json!({"content": [{"type": "text", "text": "bad input"}], "isError": true})
    );
}

#[wasm_bindgen_test]
async fn request_listeners_see_every_dispatch_and_their_throws_are_isolated() {
    let s = create_mcp_server(js(r#"{ name: 'ev', version: '1',
        error: (e, event) => { (globalThis.__errors ??= []).push(event + ':' + e.message) } }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let seen = js("(globalThis.__seen = [])");
    // A listener that is not a function is refused where it is given, not on every request.
    let refused = s
        .on("request", js("5").unchecked_into())
        .expect_err("throws");
    assert_eq!(
        get(&get(&refused, "data"), "path").as_string().as_deref(),
        Some("listener")
    );
    s.on(
        "request",
        js("(m, id) => globalThis.__seen.push(m + '#' + String(id))").unchecked_into(),
    )
    .unwrap();
    s.on(
        "request",
        js("() => { throw new Error('listener bug') }").unchecked_into(),
    )
    .unwrap();
    assert!(s.on("other", js("() => {}").unchecked_into()).is_err());
    let reply = wait(s.handle(PING.to_owned())).await;
    assert_eq!(
        reply.as_string().as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    );
    wait(s.handle(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned())).await;
    let seen: Vec<String> = Array::from(&seen)
        .iter()
        .map(|v| v.as_string().unwrap())
        .collect();
    assert_eq!(seen, ["ping#1", "notifications/initialized#undefined"]);
    let errors: Vec<String> = Array::from(&js("globalThis.__errors"))
        .iter()
        .map(|v| v.as_string().unwrap())
        .collect();
    assert_eq!(errors, ["request:listener bug", "request:listener bug"]);
}

#[wasm_bindgen_test]
async fn fetch_checks_versions_and_serves_the_2026_era() {
    let s = server();
    let (status, body, _) = fetch(&s, request("POST", "/mcp", &[ACCEPT_BOTH], Some(PING))).await;
    assert!(
        status == 415 && body.contains("-32600"),
        "no Content-Type: {status} {body}"
    );
    let v = |version: &'static str| ("mcp-protocol-version", version);
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ACCEPT_BOTH, v("1999-01-01")],
            Some(PING),
        ),
    )
    .await;
    // An unknown version is not a handshake-era one: the 2026 validation answers it (as native).
    assert!(status == 400 && body.contains("-32602"), "{body}");
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ACCEPT_BOTH, v("2025-06-18, 2025-03-26")],
            Some(PING),
        ),
    )
    .await;
    assert!(status == 400 && body.contains("conflicting"), "{body}");
    let (status, _, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ("accept", "application/json"), v("2025-06-18")],
            Some(PING),
        ),
    )
    .await;
    assert_eq!(status, 200);
    let modern = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"new era"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[JSON, ACCEPT_BOTH, v("2026-07-28")],
            Some(modern),
        ),
    )
    .await;
    assert!(
        status == 400 && body.contains("-32020") && body.contains("Mcp-Method"),
        "{status} {body}"
    );
    let headers = [
        JSON,
        ACCEPT_BOTH,
        v("2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let (status, body, headers) = fetch(&s, request("POST", "/mcp", &headers, Some(modern))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        headers.get("content-type").unwrap().as_deref(),
        Some("application/json"),
        "a modern reply with no notifications is JSON"
    );
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "new era");
    let unknown = r#"{"jsonrpc":"2.0","id":6,"method":"nope/nope","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[
                JSON,
                ACCEPT_BOTH,
                v("2026-07-28"),
                ("mcp-method", "nope/nope"),
            ],
            Some(unknown),
        ),
    )
    .await;
    assert!(status == 404 && body.contains("-32601"), "{status} {body}");
}

#[wasm_bindgen_test]
async fn fetch_with_the_auth_option_requires_a_bearer_token() {
    let s = create_mcp_server(js(r#"{
        name: 'guarded', version: '1',
        tools: [{ name: 'whoami', execute: (_args, ctx) => ctx.identity ? ctx.identity.subject : 'nobody' }],
        auth: {
          resource: 'https://mcp.example.com/mcp',
          authorizationServers: ['https://auth.example.com'],
          requiredScopes: ['mcp:tools'],
          verify: async (token) => token === 'good' ? { subject: 'ada', clientId: 'app', scopes: ['mcp:tools'] }
            : token === 'weak' ? { subject: 'bob', scopes: [] }
            : token === 'throws' ? Promise.reject(new Error('expired'))
            : null,
        } }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let (status, _, headers) = fetch(
        &s,
        request("POST", "/mcp", &[JSON, ACCEPT_BOTH], Some(PING)),
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(
        headers.get("www-authenticate").unwrap().as_deref(),
        Some(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#
        )
    );
    for (token, want) in [("forged", 401), ("throws", 401), ("weak", 403)] {
        let bearer = format!("Bearer {token}");
        let (status, body, _) = fetch(
            &s,
            request(
                "POST",
                "/mcp",
                &[JSON, ACCEPT_BOTH, ("authorization", &bearer)],
                Some(PING),
            ),
        )
        .await;
        assert_eq!(status, want, "{token}: {body}");
    }
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;
    let (status, body, _) = fetch(
        &s,
        request(
            "POST",
            "/mcp",
            &[
                JSON,
                ("accept", "application/json"),
                ("authorization", "Bearer good"),
            ],
            Some(call),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""text":"ada""#), "{body}");
    let (status, body, _) = fetch(
        &s,
        request(
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            None,
        ),
    )
    .await;
    assert_eq!(status, 200);
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        doc["authorization_servers"],
        serde_json::json!(["https://auth.example.com"])
    );
    // A malformed option names its member.
    let bad = create_mcp_server(js("{ name: 'n', version: '1', auth: { resource: 'x' } }"));
    let error = bad.err().expect("refused");
    assert_eq!(get(&error, "code").as_f64(), Some(-32602.0));
    // A resource or an authorization server that is not an http(s) URL: the gate would publish
    // an address no client can use.
    for (auth, path) in [
        (
            "{ resource: 'not a url', authorizationServers: ['https://a.example'], verify() {} }",
            "options.auth.resource",
        ),
        (
            "{ resource: 'https://m.example/mcp#x', authorizationServers: ['https://a.example'], verify() {} }",
            "options.auth.resource",
        ),
        (
            "{ resource: 'https://m.example/mcp', authorizationServers: ['also not'], verify() {} }",
            "options.auth.authorizationServers[0]",
        ),
    ] {
        let error = create_mcp_server(js(&format!("{{ name: 'n', version: '1', auth: {auth} }}")))
            .err()
            .expect("refused");
        assert_eq!(
            get(&get(&error, "data"), "path").as_string().as_deref(),
            Some(path),
            "{auth}"
        );
    }
}
