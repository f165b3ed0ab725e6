//! The JS client bindings on wasm32 (node and headless Chromium): `createMCPClient` over a
//! transport written in JS and over `createFetchTransport` (SSE replies decoded by the core),
//! both against the in-wasm server; `call` / `callTool` semantics, errors as `MCPError`, events,
//! deadlines, server→client pings with exact ids, option checks, the resources / prompts calls.
#![cfg(target_family = "wasm")]

use js_sys::{Array, Function, Promise, Reflect};
use orkestrel_mcp::wasm::{
    create_fetch_transport, create_mcp_client, create_mcp_server, create_websocket_transport,
    Client, Server,
};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

fn js(source: &str) -> JsValue {
    Function::new_no_args(&format!("return ({source});"))
        .call0(&JsValue::UNDEFINED)
        .expect("test JS evaluates")
}

/// Evaluate `body` as a function of `(server, extra)` and return what it returns.
fn js_with(server: JsValue, extra: &JsValue, body: &str) -> JsValue {
    Function::new_with_args("server, extra", body)
        .call2(&JsValue::UNDEFINED, &server, extra)
        .expect("test JS evaluates")
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).unwrap()
}

fn json(value: &JsValue) -> serde_json::Value {
    orkestrel_mcp::wasm::convert::from_js(value).unwrap()
}

async fn ok(promise: Promise) -> JsValue {
    JsFuture::from(promise).await.expect("promise resolves")
}

async fn err(promise: Promise) -> JsValue {
    JsFuture::from(promise).await.expect_err("promise rejects")
}

fn server() -> Server {
    create_mcp_server(js(r#"{
        name: 'remote', version: '2.0.0',
        tools: [
          { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            execute: (args) => args.text },
          { name: 'add', execute: async (args) => args.x + args.y },
          { name: 'obj', execute: () => ({ a: [1, 2], b: 'c' }) },
          { name: 'nothing', execute: () => undefined },
          { name: 'fail', execute: () => { throw new Error('boom') } },
          { name: 'image', execute: () => ({ content: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] }) },
          { name: 'progress', execute: (args, ctx) => { ctx.log('info', { step: 1 }); ctx.progress(1, 2); return 'done' } },
        ] }"#))
    .map_err(|e| format!("{e:?}"))
    .expect("options are valid")
}

/// A JS transport object that dispatches on the in-wasm server (through its string boundary,
/// so ids never pass through JS numbers) and records what it sent in `transport.sent` (and the
/// sink in `transport.sink`).
fn memory_transport(server: &Server) -> JsValue {
    js_with(
        server_handle(server),
        &JsValue::NULL,
        r#"
        const transport = { sent: [], started: 0, closed: 0 };
        transport.start = (sink) => { transport.started += 1; transport.sink = sink; };
        transport.send = async (message) => {
          transport.sent.push(message);
          const reply = await server(JSON.stringify(message, (k, v) => typeof v === 'bigint' ? v.toString() : v));
          if (reply !== undefined) transport.sink.receive(reply);
        };
        transport.close = () => { transport.closed += 1; };
        return transport;
        "#,
    )
}

/// A JS function `(text) => server.handle(text)` over the same core server.
fn server_handle(server: &Server) -> JsValue {
    let server = Server::from_core(server.core().clone());
    Closure::<dyn Fn(String) -> Promise>::new(move |text: String| server.handle(text))
        .into_js_value()
}

fn client(transport: &JsValue, extra: &str) -> Client {
    let options = js_with(
        transport.clone(),
        &JsValue::NULL,
        &format!("return {{ transport: server, era: 'legacy', name: 'wasm-test', version: '9.9.9' {extra} }};"),
    );
    create_mcp_client(options)
        .map_err(|e| format!("{e:?}"))
        .expect("client options are valid")
}

#[wasm_bindgen_test]
async fn a_js_transport_connects_lists_and_calls() {
    let s = server();
    let transport = memory_transport(&s);
    let c = client(&transport, "");
    assert!(!c.connected());
    ok(c.connect()).await;
    assert!(c.connected());
    assert_eq!(get(&transport, "started").as_f64(), Some(1.0));
    let init = json(&c.initialize_result());
    assert_eq!(init["serverInfo"]["name"], "remote");
    assert_eq!(
        c.protocol_version().as_deref(),
        init["protocolVersion"].as_str()
    );
    // initialize carried clientInfo; notifications/initialized followed it.
    let sent = json(&get(&transport, "sent"));
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[0]["id"], 1);
    assert_eq!(sent[0]["params"]["clientInfo"]["name"], "wasm-test");
    assert_eq!(sent[1]["method"], "notifications/initialized");

    let tools = json(&ok(c.tools()).await);
    let names: Vec<_> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["echo", "add", "obj", "nothing", "fail", "image", "progress"]
    );
    assert_eq!(tools[0]["inputSchema"]["required"][0], "text");

    // call: text joined; JSON parsed; raw-text fallback; nothing → undefined.
    let echo = ok(c.call("echo".into(), js("{ text: 'hi' }"), None)).await;
    assert_eq!(echo.as_string().as_deref(), Some("hi"));
    let add = ok(c.call("add".into(), js("{ x: 2, y: 5 }"), None)).await;
    assert_eq!(add.as_f64(), Some(7.0));
    let obj = ok(c.call("obj".into(), JsValue::UNDEFINED, None)).await;
    assert_eq!(json(&obj), serde_json::json!({ "a": [1, 2], "b": "c" }));
    let nothing = ok(c.call("nothing".into(), js("{}"), None)).await;
    assert!(nothing.is_undefined());

    // callTool: the whole result, isError included (no rejection).
    let image = json(&ok(c.call_tool("image".into(), js("{}"), None)).await);
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    let failed = json(&ok(c.call_tool("fail".into(), js("{}"), None)).await);
    assert_eq!(failed["isError"], true);

    // request: any method.
    let pong = ok(c.request("ping".into(), None, None)).await;
    assert_eq!(json(&pong), serde_json::json!({}));

    ok(c.disconnect()).await;
    assert!(!c.connected());
    assert_eq!(get(&transport, "closed").as_f64(), Some(1.0));
}

#[wasm_bindgen_test]
async fn errors_are_mcp_errors_with_codes_and_kinds() {
    let s = server();
    let c = client(&memory_transport(&s), "");
    // Before connect.
    let e = err(c.call("echo".into(), js("{ text: 'x' }"), None)).await;
    assert_eq!(get(&e, "name").as_string().as_deref(), Some("MCPError"));
    assert_eq!(
        get(&e, "kind").as_string().as_deref(),
        Some("not-connected")
    );
    ok(c.connect()).await;
    // isError → kind tool, the text as message, the whole result as data.
    let e = err(c.call("fail".into(), js("{}"), None)).await;
    assert!(e.is_instance_of::<js_sys::Error>());
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("tool"));
    assert!(get(&e, "message").as_string().unwrap().contains("boom"));
    assert_eq!(json(&get(&e, "data"))["isError"], true);
    // A JSON-RPC error keeps the server's code.
    let e = err(c.request("no/such/method".into(), None, None)).await;
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("rpc"));
    assert_eq!(get(&e, "code").as_f64(), Some(-32601.0));
    // Arguments that are not an object.
    let e = err(c.call("echo".into(), js("[1, 2]"), None)).await;
    assert_eq!(
        get(&e, "kind").as_string().as_deref(),
        Some("invalid-arguments")
    );
    assert_eq!(get(&e, "code").as_f64(), Some(-32602.0));
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn events_fire_and_throwing_listeners_are_isolated() {
    let s = server();
    let transport = memory_transport(&s);
    let c = client(&transport, "");
    let seen = Array::new();
    for event in ["connect", "disconnect", "notification", "error"] {
        let seen = seen.clone();
        let listener = Closure::<dyn Fn(JsValue)>::new(move |arg: JsValue| {
            let entry = Array::of2(&event.into(), &arg);
            seen.push(&entry);
        });
        c.on(event, listener.into_js_value().unchecked_into())
            .unwrap();
    }
    c.on(
        "connect",
        Function::new_no_args("throw new Error('listener bug')"),
    )
    .unwrap();
    assert!(c.on("other", Function::new_no_args("")).is_err());
    // A listener that is not a function is refused when added, not left to fail each event.
    let refused = c.on("notification", js("5").unchecked_into()).unwrap_err();
    assert!(
        get(&refused, "message")
            .as_string()
            .unwrap()
            .contains("listener must be a function"),
        "{refused:?}"
    );
    ok(c.connect()).await;
    // A server notification pushed by the transport reaches `notification`.
    let sink = get(&transport, "sink");
    let receive: Function = get(&sink, "receive").unchecked_into();
    receive
        .call1(
            &sink,
            &js("{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }"),
        )
        .unwrap();
    // Text that is not JSON → an `error` event, not a failure.
    receive.call1(&sink, &"not json".into()).unwrap();
    ok(c.disconnect()).await;
    let names: Vec<String> = seen
        .iter()
        .map(|e| Array::from(&e).get(0).as_string().unwrap())
        .collect();
    assert_eq!(names, ["connect", "notification", "error", "disconnect"]);
    let notification = json(&Array::from(&seen.get(1)).get(1));
    assert_eq!(notification["method"], "notifications/tools/list_changed");
    let error = Array::from(&seen.get(2)).get(1);
    assert_eq!(get(&error, "name").as_string().as_deref(), Some("MCPError"));
}

#[wasm_bindgen_test]
async fn server_pings_are_answered_with_the_exact_id() {
    let s = server();
    let transport = memory_transport(&s);
    let c = client(&transport, "");
    ok(c.connect()).await;
    let sink = get(&transport, "sink");
    let receive: Function = get(&sink, "receive").unchecked_into();
    receive
        .call1(
            &sink,
            &js("{ jsonrpc: '2.0', id: 2n ** 60n + 1n, method: 'ping' }"),
        )
        .unwrap();
    // The answer goes out through the transport's send (on a spawned task).
    let sent = get(&transport, "sent");
    let mut answer = JsValue::UNDEFINED;
    for _ in 0..100 {
        let last = Array::from(&sent).iter().last().unwrap();
        if get(&last, "result").is_object() {
            answer = last;
            break;
        }
        ok(js("new Promise((r) => setTimeout(r, 0))").unchecked_into()).await;
    }
    let id = get(&answer, "id");
    assert!(id.is_bigint(), "the id stays a bigint: {id:?}");
    assert_eq!(
        js_sys::BigInt::from(id).to_string(10).unwrap(),
        "1152921504606846977"
    );
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn a_request_past_its_deadline_rejects_with_a_timeout() {
    // A transport that never answers anything but initialize.
    let s = server();
    let transport = memory_transport(&s);
    js_with(
        transport.clone(),
        &JsValue::NULL,
        r#"const t = server; const send = t.send;
           t.send = (m) => (m.method === 'initialize' || m.method === 'notifications/initialized') ? send(m) : new Promise(() => {});"#,
    );
    let c = client(&transport, ", timeout: 30000");
    ok(c.connect()).await;
    let e = err(c.call(
        "echo".into(),
        js("{ text: 'x' }"),
        Some(js("{ timeout: 20 }")),
    ))
    .await;
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("timeout"));
    assert_eq!(get(&e, "code").as_f64(), Some(-32001.0));
    ok(c.disconnect()).await;
}

/// A wait of 2^31 ms or more (a JS `timeout` of `Number.MAX_SAFE_INTEGER`: "no deadline")
/// waits: the timer under it (`setTimeout`) takes at most 2^31 − 1 ms and fired at once beyond.
#[wasm_bindgen_test]
async fn a_wait_of_2_31_ms_or_more_does_not_end_at_once() {
    use std::time::Duration;
    let sleep = orkestrel_mcp::host::defaults::sleep().unwrap();
    for long in [1u64 << 31, 9_007_199_254_740_991] {
        let (long, short) = (
            sleep(Duration::from_millis(long)),
            sleep(Duration::from_millis(100)),
        );
        assert!(
            matches!(
                futures::future::select(long, short).await,
                futures::future::Either::Right(_)
            ),
            "the long wait ended first"
        );
    }
}

#[wasm_bindgen_test]
async fn the_fetch_transport_talks_to_the_wasm_worker_handler_over_sse() {
    let s = server();
    let handler = {
        let s = Server::from_core(s.core().clone());
        Closure::<dyn Fn(web_sys::Request) -> Promise>::new(move |r: web_sys::Request| {
            s.fetch(r.into())
        })
        .into_js_value()
    };
    let seen = Array::new();
    let trace = {
        let seen = seen.clone();
        Closure::<dyn Fn(String, JsValue)>::new(move |d: String, m: JsValue| {
            seen.push(&Array::of2(&d.into(), &m));
        })
        .into_js_value()
    };
    let transport = create_fetch_transport(js_with(
        handler,
        &JsValue::NULL,
        "return { url: 'http://in-wasm.test/mcp', headers: { 'x-test': '1' }, fetch: (request) => server(request) };",
    ))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    assert_eq!(transport.kind(), "http");
    let options = js_with(
        JsValue::from(transport),
        &trace,
        "return { transport: server, era: 'legacy', trace: extra, timeout: 10000 };",
    );
    let c = create_mcp_client(options)
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    ok(c.connect()).await;
    assert_eq!(
        json(&c.initialize_result())["serverInfo"]["version"],
        "2.0.0"
    );
    assert!(c.session_id().is_none(), "the Worker handler is stateless");
    let tools = json(&ok(c.tools()).await);
    assert_eq!(tools.as_array().unwrap().len(), 7);
    let echo = ok(c.call("echo".into(), js("{ text: 'over fetch' }"), None)).await;
    assert_eq!(echo.as_string().as_deref(), Some("over fetch"));
    // Notifications the tool sends come first on the SSE stream, then the result.
    let notes = Array::new();
    let on_note = {
        let notes = notes.clone();
        Closure::<dyn Fn(JsValue)>::new(move |m: JsValue| {
            notes.push(&m);
        })
        .into_js_value()
    };
    c.on("notification", on_note.unchecked_into()).unwrap();
    let done = ok(c.request(
        "tools/call".into(),
        Some(js(
            "{ name: 'progress', arguments: {}, _meta: { progressToken: 'p1' } }",
        )),
        None,
    ))
    .await;
    assert_eq!(json(&done)["content"][0]["text"], "done");
    // The log and the progress notification arrived on the SSE reply before the result.
    let notes: Vec<serde_json::Value> = notes.iter().map(|n| json(&n)).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/message");
    assert_eq!(notes[0]["params"]["data"]["step"], 1);
    assert_eq!(notes[1]["method"], "notifications/progress");
    assert_eq!(notes[1]["params"]["progressToken"], "p1");
    // callTool's onProgress: the call carries a progressToken; the listener sees the progress.
    let progress = js("[]");
    let options = js_with(
        progress.clone(),
        &JsValue::NULL,
        "return { onProgress: (p) => server.push(p) };",
    );
    let done = ok(c.call_tool("progress".into(), js("{}"), Some(options))).await;
    assert_eq!(json(&done)["content"][0]["text"], "done");
    assert_eq!(
        json(&progress),
        serde_json::json!([{ "progress": 1, "total": 2 }])
    );
    for (bad, path) in [
        ("{ onProgress: 1 }", "options.onProgress"),
        ("{ logLevel: 'loud' }", "options.logLevel"),
    ] {
        let e = err(c.call_tool("echo".into(), js("{ text: 'x' }"), Some(js(bad)))).await;
        assert_eq!(get(&e, "code").as_f64(), Some(-32602.0), "{bad}");
        assert_eq!(json(&get(&e, "data"))["path"], path, "{bad}");
    }
    let e = err(c.call("fail".into(), js("{}"), None)).await;
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("tool"));
    ok(c.disconnect()).await;
    // The trace saw both directions.
    let directions: Vec<String> = seen
        .iter()
        .map(|e| Array::from(&e).get(0).as_string().unwrap())
        .collect();
    assert_eq!(directions.first().map(String::as_str), Some("send"));
    assert!(directions.iter().any(|d| d == "receive"));
}

#[wasm_bindgen_test]
fn options_are_checked() {
    let code = |e: JsValue| get(&e, "code").as_f64();
    assert_eq!(
        code(create_mcp_client(js("{}")).err().unwrap()),
        Some(-32602.0)
    );
    assert_eq!(
        code(create_mcp_client(js("{ transport: 5 }")).err().unwrap()),
        Some(-32602.0)
    );
    assert_eq!(
        code(
            create_mcp_client(js("{ transport: { send() {} }, timeout: 'x' }"))
                .err()
                .unwrap()
        ),
        Some(-32602.0)
    );
    assert_eq!(
        code(
            create_fetch_transport(js("{ url: 'ws://x/mcp' }"))
                .err()
                .unwrap()
        ),
        Some(-32602.0)
    );
    assert_eq!(
        code(
            create_fetch_transport(js("{ url: 'http://x/mcp', fetch: 1 }"))
                .err()
                .unwrap()
        ),
        Some(-32602.0)
    );
    assert_eq!(
        code(
            create_websocket_transport(js("{ url: 'http://x/mcp' }"))
                .err()
                .unwrap()
        ),
        Some(-32602.0)
    );
    let ws = create_websocket_transport(js("{ url: 'ws://127.0.0.1:9/mcp' }")).unwrap();
    assert_eq!(ws.kind(), "websocket");
}

/// Yield to the event loop until `done()` holds (at most `rounds` turns).
async fn until(rounds: usize, done: impl Fn() -> bool) -> bool {
    for _ in 0..rounds {
        if done() {
            return true;
        }
        ok(js("new Promise((r) => setTimeout(r, 1))").unchecked_into()).await;
    }
    done()
}

#[wasm_bindgen_test]
async fn the_fetch_transport_listens_on_the_servers_get_stream_and_resumes_it() {
    let s = server();
    let handler = {
        let s = Server::from_core(s.core().clone());
        Closure::<dyn Fn(web_sys::Request) -> Promise>::new(move |r: web_sys::Request| {
            s.fetch(r.into())
        })
        .into_js_value()
    };
    // POSTs go to the wasm handler; the first GET streams one notification (event id 7,
    // retry 0) and ends; the next GET (which must carry Last-Event-ID: 7) is answered 405.
    let state = js("{ gets: [] }");
    let fetch = js_with(
        handler,
        &state,
        r#"return async (request) => {
          if (request.method !== 'GET') return server(request);
          extra.gets.push({ accept: request.headers.get('accept'), last: request.headers.get('last-event-id') });
          if (extra.gets.length > 1) return new Response(null, { status: 405 });
          const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
          return new Response(`id: 7\nretry: 0\ndata: ${note}\n\n`, { headers: { 'content-type': 'text/event-stream' } });
        };"#,
    );
    let transport = create_fetch_transport(js_with(
        fetch,
        &JsValue::NULL,
        "return { url: 'http://in-wasm.test/mcp', fetch: server };",
    ))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let c = create_mcp_client(js_with(
        JsValue::from(transport),
        &JsValue::NULL,
        "return { transport: server, era: 'legacy' };",
    ))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let notes = Array::new();
    let on_note = {
        let notes = notes.clone();
        Closure::<dyn Fn(JsValue)>::new(move |m: JsValue| {
            notes.push(&m);
        })
        .into_js_value()
    };
    c.on("notification", on_note.unchecked_into()).unwrap();
    ok(c.connect()).await;
    let gets = get(&state, "gets");
    assert!(
        until(500, || Array::from(&gets).length() >= 2).await,
        "the GET stream was resumed"
    );
    let gets = json(&gets);
    assert_eq!(gets[0]["accept"], "text/event-stream");
    assert_eq!(gets[0]["last"], serde_json::Value::Null);
    assert_eq!(gets[1]["last"], "7");
    let notes: Vec<serde_json::Value> = notes.iter().map(|n| json(&n)).collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["method"], "notifications/tools/list_changed");
    ok(c.disconnect()).await;
}

/// A fetch transport over the in-wasm Worker handler, with `fetch` wrapped by the JS function
/// body `wrap` (of `(server, state)`, returning `async (request) => Response`), and `extra`
/// transport options; and a client over it.
fn wrapped_fetch_client(state: &JsValue, wrap: &str, extra: &str) -> Client {
    wrapped_fetch_client_with(state, wrap, extra, "timeout: 10000")
}

/// [`wrapped_fetch_client`] with the client options `client` (object members, as JS text).
fn wrapped_fetch_client_with(state: &JsValue, wrap: &str, extra: &str, client: &str) -> Client {
    let s = server();
    let handler = {
        let s = Server::from_core(s.core().clone());
        Closure::<dyn Fn(web_sys::Request) -> Promise>::new(move |r: web_sys::Request| {
            s.fetch(r.into())
        })
        .into_js_value()
    };
    let fetch = js_with(handler, state, wrap);
    let transport = create_fetch_transport(js_with(
        fetch,
        &JsValue::NULL,
        &format!("return {{ url: 'http://in-wasm.test/mcp', fetch: server {extra} }};"),
    ))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    create_mcp_client(js_with(
        JsValue::from(transport),
        &JsValue::NULL,
        &format!("return {{ transport: server, {client} }};"),
    ))
    .map_err(|e| format!("{e:?}"))
    .unwrap()
}

#[wasm_bindgen_test]
async fn the_fetch_transport_resumes_a_dropped_post_stream_with_last_event_id() {
    // The answer to tools/call is an event stream that ends after a priming event (id ev-1,
    // retry 5 ms) without the response; the GET carrying Last-Event-ID: ev-1 brings it.
    // Everything else goes to the wasm handler; the listener's own GET gets 405.
    let state = js("{ gets: [], id: undefined }");
    let c = wrapped_fetch_client(
        &state,
        r#"return async (request) => {
          if (request.method === 'GET') {
            const last = request.headers.get('last-event-id');
            extra.gets.push({ last, accept: request.headers.get('accept') });
            if (last === null) return new Response(null, { status: 405 });
            const answer = `{"jsonrpc":"2.0","id":${extra.id},"result":{"content":[{"type":"text","text":"resumed"}]}}`;
            return new Response(`id: ev-2\ndata: ${answer}\n\n`, { headers: { 'content-type': 'text/event-stream' } });
          }
          const text = await request.clone().text();
          const message = JSON.parse(text);
          if (message.method !== 'tools/call') return server(request);
          extra.id = /"id":\s*([0-9]+)/.exec(text)[1];
          return new Response('id: ev-1\nretry: 5\ndata: \n\n', { headers: { 'content-type': 'text/event-stream' } });
        };"#,
        "",
    );
    ok(c.connect()).await;
    let echo = ok(c.call("echo".into(), js("{ text: 'x' }"), None)).await;
    assert_eq!(echo.as_string().as_deref(), Some("resumed"));
    let gets = json(&get(&state, "gets"));
    let resumed: Vec<_> = gets
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| !g["last"].is_null())
        .collect();
    assert_eq!(resumed.len(), 1, "{gets:?}");
    assert_eq!(resumed[0]["last"], "ev-1");
    assert_eq!(resumed[0]["accept"], "text/event-stream");
    ok(c.disconnect()).await;
}

/// A `fetch` wrapper (for [`wrapped_fetch_client`]) whose `tools/call` answers an event stream
/// that never ends, recording the request's signal in `state.signals` and the stream's
/// cancellation in `state.cancelled`; the rest goes to the wasm handler, the GET gets 405.
const ENDLESS_TOOLS_CALL: &str = r#"return async (request) => {
  if (request.method === 'GET') return new Response(null, { status: 405 });
  const message = JSON.parse(await request.clone().text());
  if (message.method !== 'tools/call') return server(request);
  extra.signals.push(request.signal);
  const body = new ReadableStream({
    start(c) { c.enqueue(new TextEncoder().encode('id: 1\ndata: \n\n')); },
    cancel() { extra.cancelled = (extra.cancelled || 0) + 1; },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
};"#;

#[wasm_bindgen_test]
async fn the_fetch_transport_times_out_an_exchange_and_aborts_it() {
    // tools/call answers with an event stream that never ends; the transport's 1.5 s deadline
    // fails the exchange (well before the client's 10 s) and aborts the fetch. The deadline
    // also bounds the exchanges that do get answered (initialize, tools/list), so it leaves a
    // loaded machine room for them.
    let state = js("{ signals: [] }");
    let c = wrapped_fetch_client(&state, ENDLESS_TOOLS_CALL, ", timeout: 1500");
    ok(c.connect()).await;
    let e = err(c.call("echo".into(), js("{ text: 'x' }"), None)).await;
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("transport"));
    let message = get(&e, "message").as_string().unwrap();
    assert!(
        message.contains("the HTTP exchange timed out after 1500 ms"),
        "{message}"
    );
    let signals = Array::from(&get(&state, "signals"));
    assert_eq!(signals.length(), 1);
    assert_eq!(get(&signals.get(0), "aborted").as_bool(), Some(true));
    // The transport still works for the next request (`tools/list`: the client's era is
    // 'auto', so this may be the 2026-07-28 wire, which has no `ping`).
    let listed = json(&ok(c.request("tools/list".into(), None, None)).await);
    assert!(
        listed["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn a_failed_tool_without_text_rejects_saying_so() {
    // `call` of a tool whose `isError` result carries no text: the MCPError says the tool
    // failed (its message was empty).
    let s = create_mcp_server(js(r#"{ name: 'mute', version: '1',
        tools: [{ name: 'mute', execute: () => ({ content: [], isError: true }) }] }"#))
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    let c = client(&memory_transport(&s), "");
    ok(c.connect()).await;
    let e = err(c.call("mute".into(), js("{}"), None)).await;
    assert_eq!(get(&e, "kind").as_string().as_deref(), Some("tool"));
    assert_eq!(
        get(&e, "message").as_string().as_deref(),
        Some("the tool failed (its result carries no text)")
    );
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn a_request_the_client_gave_up_on_ends_its_fetch_and_its_stream() {
    // tools/call answers with an event stream that never ends; the transport has no deadline,
    // the client's is 300 ms. Once the call has timed out, its fetch is aborted and the stream
    // cancelled: the connection is not held open until the server ends it (20 timed-out calls
    // held 20 connections, past `disconnect` too).
    let state = js("{ signals: [], cancelled: 0 }");
    let c = wrapped_fetch_client_with(
        &state,
        ENDLESS_TOOLS_CALL,
        "",
        "timeout: 300, era: 'legacy'",
    );
    ok(c.connect()).await;
    let e = err(c.call("echo".into(), js("{ text: 'x' }"), None)).await;
    assert_eq!(
        get(&e, "kind").as_string().as_deref(),
        Some("timeout"),
        "{e:?}"
    );
    let ended = || {
        let signals = Array::from(&get(&state, "signals"));
        signals.length() == 1
            && get(&signals.get(0), "aborted").as_bool() == Some(true)
            && get(&state, "cancelled").as_f64() == Some(1.0)
    };
    assert!(
        until(5_000, ended).await,
        "{:?}",
        json(&get(&state, "cancelled"))
    );
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn a_body_that_yields_nothing_for_ever_neither_starves_the_deadline_nor_traps() {
    // tools/call answers with a body whose reader resolves at once with an empty chunk, for
    // ever (a `pull` that enqueues nothing new): the client's 500 ms deadline still fires (it
    // spun at 100 % CPU, no timer ever ran). A reader that gives no `{ done, value }` object
    // fails the exchange (it was read for ever, and the module trapped).
    for mode in ["empty", "garbage"] {
        let state = js(&format!("{{ mode: '{mode}' }}"));
        let c = wrapped_fetch_client_with(
            &state,
            r#"return async (request) => {
              if (request.method === 'GET') return new Response(null, { status: 405 });
              const message = JSON.parse(await request.clone().text());
              if (message.method !== 'tools/call') return server(request);
              const headers = { 'content-type': 'text/event-stream' };
              if (extra.mode === 'empty') {
                const body = new ReadableStream({ pull(c) { c.enqueue(new Uint8Array(0)); } });
                return new Response(body, { headers });
              }
              const response = new Response('', { headers });
              return new Proxy(response, { get(target, key) {
                if (key === 'body') return { getReader: () => ({ read: () => 42, cancel() {} }) };
                const value = Reflect.get(target, key, target);
                return typeof value === 'function' ? value.bind(target) : value;
              } });
            };"#,
            "",
            "timeout: 500, era: 'legacy'",
        );
        ok(c.connect()).await;
        let call = c.call("echo".into(), js("{ text: 'x' }"), None);
        let e = JsFuture::from(within(call.into(), 10_000))
            .await
            .expect_err("the call fails");
        let message = get(&e, "message").as_string().unwrap_or_default();
        match mode {
            "empty" => assert_eq!(
                get(&e, "kind").as_string().as_deref(),
                Some("timeout"),
                "{message}"
            ),
            _ => assert!(message.contains("no { done, value } object"), "{message}"),
        }
        ok(c.disconnect()).await;
    }
}

#[wasm_bindgen_test]
async fn a_response_whose_getter_throws_fails_the_exchange_and_the_client_goes_on() {
    // A custom fetch's `Response` (a mock, a wrapper) whose `status`, `headers` or `body`
    // getter throws: the call rejects with what it threw (it trapped the module and never
    // settled), and the next call on the same client is answered.
    for member in ["status", "headers", "body"] {
        let state = js(&format!("{{ member: '{member}', armed: false }}"));
        let c = wrapped_fetch_client(
            &state,
            r#"return async (request) => {
              const response = await server(request);
              if (!extra.armed) return response;
              extra.armed = false;
              return new Proxy(response, {
                get(target, key) {
                  if (key === extra.member) throw new Error(extra.member + ' getter boom');
                  const value = Reflect.get(target, key, target);
                  return typeof value === 'function' ? value.bind(target) : value;
                },
              });
            };"#,
            "",
        );
        ok(c.connect()).await;
        Reflect::set(&state, &"armed".into(), &JsValue::TRUE).unwrap();
        let e = err(c.call("echo".into(), js("{ text: 'x' }"), None)).await;
        let message = get(&e, "message").as_string().unwrap_or_default();
        assert!(
            message.contains(&format!("{member} getter boom")),
            "{member}: {message}"
        );
        let echo = ok(c.call("echo".into(), js("{ text: 'again' }"), None)).await;
        assert_eq!(echo.as_string().as_deref(), Some("again"), "{member}");
        ok(c.disconnect()).await;
    }
}

#[wasm_bindgen_test]
async fn a_transport_whose_close_never_settles_does_not_wedge_the_client() {
    // A JS transport whose `close` returns a promise that never settles: `disconnect` resolves
    // (within the 5 s bound) and the client connects again.
    let s = server();
    let transport = memory_transport(&s);
    js_with(
        transport.clone(),
        &JsValue::NULL,
        "server.close = () => { server.closed += 1; return new Promise(() => {}); };",
    );
    let c = client(&transport, "");
    ok(c.connect()).await;
    let gone = js_with(c.disconnect().into(), &JsValue::NULL, "return server;");
    ok(within(gone, 15_000)).await;
    assert_eq!(get(&transport, "closed").as_f64(), Some(1.0));
    ok(c.connect()).await;
    let echo = ok(c.call("echo".into(), js("{ text: 'back' }"), None)).await;
    assert_eq!(echo.as_string().as_deref(), Some("back"));
}

/// `promise`, or a rejection after `ms` (a bound: a test fails instead of hanging).
fn within(promise: JsValue, ms: u32) -> Promise {
    Function::new_with_args(
        "p, ms",
        "return Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error('timed out')), ms))]);",
    )
    .call2(&JsValue::UNDEFINED, &promise, &ms.into())
    .unwrap()
    .unchecked_into()
}

/// The transport's `headers` take what `fetch` takes: a plain object, a `Headers` (whose pairs
/// are not own keys: they were dropped), `[name, value]` pairs; a malformed pair is refused.
#[wasm_bindgen_test]
async fn the_fetch_transport_takes_headers_as_fetch_does() {
    for given in [
        "{ 'x-a': 'one' }",
        "new Headers({ 'x-a': 'one' })",
        "[['x-a', 'one']]",
    ] {
        let seen = Array::new();
        let transport = create_fetch_transport(js_with(
            seen.clone().into(),
            &JsValue::NULL,
            &format!(
                r#"return {{ url: 'http://x/mcp', headers: {given}, fetch: async (r) => {{
                  server.push(r.headers.get('x-a'));
                  const m = await r.json();
                  if (m.method !== 'initialize') return new Response(null, {{ status: 202 }});
                  return Response.json({{ jsonrpc: '2.0', id: m.id, result: {{ protocolVersion: '2025-06-18', capabilities: {{}}, serverInfo: {{ name: 's', version: '1' }} }} }});
                }} }};"#
            ),
        ))
        .map_err(|e| format!("{e:?}"))
        .unwrap();
        let c = client(&JsValue::from(transport), "");
        ok(c.connect()).await;
        ok(c.disconnect()).await;
        assert_eq!(seen.get(0).as_string().as_deref(), Some("one"), "{given}");
    }
    let e = create_fetch_transport(js("{ url: 'http://x/mcp', headers: [['x-a']] }"))
        .err()
        .unwrap();
    assert_eq!(json(&get(&e, "data"))["path"], "options.headers.0");
}

#[wasm_bindgen_test]
fn the_fetch_transport_timeout_option_is_checked() {
    let code = |e: JsValue| get(&e, "code").as_f64();
    for bad in ["'x'", "-1", "Infinity"] {
        let e = create_fetch_transport(js(&format!("{{ url: 'http://x/mcp', timeout: {bad} }}")))
            .err()
            .unwrap();
        assert_eq!(code(e.clone()), Some(-32602.0), "{bad}");
        assert_eq!(json(&get(&e, "data"))["path"], "options.timeout", "{bad}");
    }
    assert!(create_fetch_transport(js("{ url: 'http://x/mcp', timeout: 0 }")).is_ok());
    // A getter that throws is an error naming the member (it was taken for "no timeout").
    let e = create_fetch_transport(js(
        "{ url: 'http://x/mcp', get timeout() { throw new Error('no') } }",
    ))
    .err()
    .unwrap();
    assert_eq!(json(&get(&e, "data"))["path"], "options.timeout");
    let transport = create_fetch_transport(js("{ url: 'http://x/mcp' }")).unwrap();
    let options = js("{ get timeout() { throw new Error('no') } }");
    Reflect::set(&options, &"transport".into(), &transport.into()).unwrap();
    let e = create_mcp_client(options).err().unwrap();
    assert_eq!(json(&get(&e, "data"))["path"], "options.timeout");
}

#[wasm_bindgen_test]
async fn auto_falls_back_to_the_handshake_when_discover_is_refused_as_an_older_server_does() {
    // The answers older Streamable HTTP servers give a `server/discover` they do not know (the TS
    // SDK's 400 with a null-id error, an empty 400, a 405, a 404 with text); every other request
    // goes to the wasm handler, which then speaks the handshake.
    for (status, body) in [
        (
            400,
            r#"'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}'"#,
        ),
        (400, "null"),
        (405, "null"),
        (404, "'Not Found'"),
    ] {
        let state = js("{ probes: 0 }");
        let c = wrapped_fetch_client(
            &state,
            &format!(
                r#"return async (request) => {{
                  const text = await request.clone().text();
                  if (request.method === 'POST' && JSON.parse(text).method === 'server/discover') {{
                    extra.probes += 1;
                    return new Response({body}, {{ status: {status} }});
                  }}
                  return server(request);
                }};"#
            ),
            "",
        );
        ok(c.connect()).await;
        assert_eq!(get(&state, "probes").as_f64(), Some(1.0), "{status} {body}");
        assert_eq!(c.era().as_deref(), Some("legacy"), "{status} {body}");
        assert_eq!(
            json(&c.initialize_result())["serverInfo"]["version"],
            "2.0.0",
            "{status} {body}"
        );
        let echo = ok(c.call("echo".into(), js("{ text: 'after fallback' }"), None)).await;
        assert_eq!(echo.as_string().as_deref(), Some("after fallback"));
        ok(c.disconnect()).await;
    }
}

// The task API (`callToolAsTask`, `getTask`, `cancelTask`, `waitTask`) against the core server
// with tasks on (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks
// and the 2026-07-28 extension `io.modelcontextprotocol/tasks`), in both eras.

fn task_server() -> Server {
    use orkestrel_mcp::protocol::TaskSupport;
    use orkestrel_mcp::server::tasks::TaskOptions;
    use orkestrel_mcp::{McpServer, ServerOptions, Tool};
    type Args = serde_json::Map<String, serde_json::Value>;
    let server = McpServer::new(
        ServerOptions::new("jobs", "1.0.0").with_tasks(TaskOptions::new().with_poll_interval(5)),
    );
    let tools = server.tools();
    tools.add(
        Tool::from_json(
            "report",
            serde_json::json!({"type": "object"}),
            |args: Args, _| async move {
                let of = args.get("of").and_then(|v| v.as_str()).unwrap_or("?");
                Ok::<_, String>(format!("the report on {of}"))
            },
        )
        .with_task_support(TaskSupport::Optional),
    );
    tools.add(
        Tool::from_json(
            "forever",
            serde_json::json!({"type": "object"}),
            |_: Args, _| futures::future::pending::<Result<String, String>>(),
        )
        .with_task_support(TaskSupport::Required),
    );
    tools.add(
        Tool::from_json(
            "asks",
            serde_json::json!({"type": "object"}),
            |_: Args, ctx: orkestrel_mcp::RequestContext| async move {
                let answer = ctx
                    .elicit(serde_json::json!({
                        "message": "Your name?",
                        "requestedSchema": { "type": "object",
                            "properties": { "name": { "type": "string" } }, "required": ["name"] }
                    }))
                    .await?;
                Ok::<_, orkestrel_mcp::ErrorObject>(format!(
                    "Hello, {}!",
                    answer["content"]["name"].as_str().unwrap_or("nobody")
                ))
            },
        )
        .with_task_support(TaskSupport::Optional),
    );
    tools.add(Tool::from_json(
        "plain",
        serde_json::json!({"type": "object"}),
        |_: Args, _| async { Ok::<_, String>("plain answer") },
    ));
    Server::from_core(server)
}

async fn rpc_code(promise: Promise) -> (String, f64, String) {
    let e = err(promise).await;
    (
        get(&e, "kind").as_string().unwrap_or_default(),
        get(&e, "code").as_f64().unwrap_or_default(),
        get(&e, "message").as_string().unwrap_or_default(),
    )
}

#[wasm_bindgen_test]
async fn the_js_client_runs_tools_as_tasks_polls_waits_and_cancels_in_both_eras() {
    for era in ["legacy", "modern"] {
        let s = task_server();
        let transport = memory_transport(&s);
        let c = client(&transport, &format!(", era: '{era}'"));
        ok(c.connect()).await;
        assert_eq!(c.era().as_deref(), Some(era));

        // A task-supporting tool answers with a task; waitTask polls it to its result.
        let call = json(
            &ok(c.call_tool_as_task(
                "report".into(),
                js("{ of: 'q3' }"),
                Some(js("{ ttl: 30000 }")),
            ))
            .await,
        );
        assert_eq!(call["type"], "task", "{era}: {call}");
        let task = &call["task"];
        let id = task["taskId"].as_str().expect("a task id").to_owned();
        assert!(
            matches!(task["status"].as_str(), Some("working" | "completed")),
            "{era}: {task}"
        );
        assert_eq!(task["pollIntervalMs"], 5, "{era}: {task}");
        if era == "legacy" {
            assert_eq!(task["ttlMs"], 30000, "the asked TTL is granted: {task}");
        }
        let seen = js("[]");
        let on_status = js_with(
            seen.clone(),
            &JsValue::NULL,
            "return { onStatus: (t) => server.push(t) };",
        );
        let result = json(&ok(c.wait_task(id.clone(), Some(on_status))).await);
        assert_eq!(
            result["content"][0]["text"], "the report on q3",
            "{era}: {result}"
        );
        let seen = json(&seen);
        let statuses: Vec<&str> = seen
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["status"].as_str())
            .collect();
        assert!(!statuses.is_empty(), "{era}: onStatus saw the states");
        assert!(
            seen.as_array()
                .unwrap()
                .iter()
                .all(|t| t["taskId"] == id.as_str()),
            "{era}: {seen}"
        );
        let got = json(&ok(c.get_task(id.clone())).await);
        assert_eq!(got["status"], "completed", "{era}: {got}");
        if era == "modern" {
            assert_eq!(
                got["result"]["content"][0]["text"], "the report on q3",
                "inlined: {got}"
            );
        }

        // A running task is cancelled; waiting on it then rejects.
        let call = json(&ok(c.call_tool_as_task("forever".into(), JsValue::UNDEFINED, None)).await);
        assert_eq!(call["type"], "task", "{era}: {call}");
        let forever = call["task"]["taskId"].as_str().unwrap().to_owned();
        assert_eq!(
            json(&ok(c.get_task(forever.clone())).await)["status"],
            "working"
        );
        // A wait past its deadline rejects as a timeout; the task runs on.
        let e = err(c.wait_task(forever.clone(), Some(js("{ timeout: 30 }")))).await;
        assert_eq!(
            get(&e, "kind").as_string().as_deref(),
            Some("timeout"),
            "{era}"
        );
        assert_eq!(get(&e, "code").as_f64(), Some(-32001.0), "{era}");
        assert_eq!(
            json(&ok(c.get_task(forever.clone())).await)["status"],
            "working"
        );
        assert!(ok(c.cancel_task(forever.clone())).await.is_undefined());
        assert_eq!(
            json(&ok(c.get_task(forever.clone())).await)["status"],
            "cancelled",
            "{era}"
        );
        let (kind, code, message) = rpc_code(c.wait_task(forever, None)).await;
        assert_eq!((kind.as_str(), code), ("rpc", -32000.0), "{era}: {message}");
        assert!(message.contains("cancelled"), "{era}: {message}");

        // A tool that is never a task: 2025-11-25 refuses the task; 2026-07-28 runs it plain.
        let plain = c.call_tool_as_task("plain".into(), JsValue::UNDEFINED, None);
        if era == "legacy" {
            let (kind, code, message) = rpc_code(plain).await;
            assert_eq!((kind.as_str(), code), ("rpc", -32601.0), "{message}");
        } else {
            let call = json(&ok(plain).await);
            assert_eq!(call["type"], "result", "{call}");
            assert_eq!(
                call["result"]["content"][0]["text"], "plain answer",
                "{call}"
            );
        }

        // An unknown task id is the server's -32602, for get, wait and cancel alike.
        for promise in [
            c.get_task("nope".into()),
            c.wait_task("nope".into(), None),
            c.cancel_task("nope".into()),
        ] {
            let (kind, code, message) = rpc_code(promise).await;
            assert_eq!((kind.as_str(), code), ("rpc", -32602.0), "{era}: {message}");
        }
        ok(c.disconnect()).await;
    }
}

#[wasm_bindgen_test]
async fn the_task_options_are_checked() {
    let s = task_server();
    let transport = memory_transport(&s);
    let c = client(&transport, "");
    ok(c.connect()).await;
    for bad in ["{ ttl: -1 }", "{ ttl: 1.5 }", "{ ttl: 'long' }"] {
        let e = err(c.call_tool_as_task("report".into(), JsValue::UNDEFINED, Some(js(bad)))).await;
        assert_eq!(get(&e, "code").as_f64(), Some(-32602.0), "{bad}");
        assert_eq!(json(&get(&e, "data"))["path"], "options.ttl", "{bad}");
    }
    let e = err(c.wait_task("any".into(), Some(js("{ onStatus: 5 }")))).await;
    assert_eq!(json(&get(&e, "data"))["path"], "options.onStatus");
    let e = err(c.wait_task("any".into(), Some(js("{ timeout: -1 }")))).await;
    assert_eq!(json(&get(&e, "data"))["path"], "options.timeout");
    let e = err(c.call_tool_as_task("report".into(), js("[1]"), None)).await;
    assert_eq!(
        get(&e, "kind").as_string().as_deref(),
        Some("invalid-arguments")
    );
    // Nothing was sent for the refused calls: only the handshake went out.
    let sent = json(&get(&transport, "sent"));
    assert!(
        sent.as_array()
            .unwrap()
            .iter()
            .all(|m| m["method"] != "tools/call"),
        "{sent}"
    );
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
async fn handlers_answer_input_requests_of_a_task_and_of_a_plain_call() {
    let s = task_server();
    let transport = memory_transport(&s);
    let asked = js("[]");
    let handlers = js_with(
        asked.clone(),
        &JsValue::NULL,
        "return { handlers: { elicit: async (params) => { server.push(params.message); return { action: 'accept', content: { name: 'Kay' } }; } } };",
    );
    let options = js_with(
        transport.clone(),
        &handlers,
        "return { ...extra, transport: server, era: 'modern' };",
    );
    let c = create_mcp_client(options)
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    ok(c.connect()).await;
    // As a task: the elicitation sets input_required; waitTask answers it with tasks/update.
    let call = json(&ok(c.call_tool_as_task("asks".into(), JsValue::UNDEFINED, None)).await);
    assert_eq!(call["type"], "task", "{call}");
    let id = call["task"]["taskId"].as_str().unwrap().to_owned();
    let seen = js("[]");
    let on_status = js_with(
        seen.clone(),
        &JsValue::NULL,
        "return { onStatus: (t) => server.push(t.status) };",
    );
    let result = json(&ok(c.wait_task(id, Some(on_status))).await);
    assert_eq!(result["content"][0]["text"], "Hello, Kay!", "{result}");
    let seen = json(&seen);
    assert!(
        seen.as_array().unwrap().contains(&"input_required".into()),
        "{seen}"
    );
    assert_eq!(json(&asked), serde_json::json!(["Your name?"]));
    let sent = json(&get(&transport, "sent"));
    let updates: Vec<_> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["method"] == "tasks/update")
        .collect();
    assert_eq!(updates.len(), 1, "{sent}");
    let responses = updates[0]["params"]["inputResponses"].as_object().unwrap();
    assert_eq!(
        responses.values().next().unwrap()["content"]["name"],
        "Kay",
        "{sent}"
    );
    // The client declared the handler's capability with every request.
    let caps = &updates[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(caps["elicitation"]["form"].is_object(), "{caps}");
    // A plain call of the same tool: the input round goes through the same handler.
    let plain = ok(c.call("asks".into(), JsValue::UNDEFINED, None)).await;
    assert_eq!(plain.as_string().as_deref(), Some("Hello, Kay!"));
    assert_eq!(json(&asked).as_array().unwrap().len(), 2);
    ok(c.disconnect()).await;

    // A handler that throws: waitTask rejects with the handler's message.
    let transport = memory_transport(&s);
    let options = js_with(
        transport,
        &JsValue::NULL,
        "return { transport: server, era: 'modern', handlers: { elicit: () => { throw new Error('no names here') } } };",
    );
    let c = create_mcp_client(options)
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    ok(c.connect()).await;
    let call = json(&ok(c.call_tool_as_task("asks".into(), JsValue::UNDEFINED, None)).await);
    let id = call["task"]["taskId"].as_str().unwrap().to_owned();
    let (kind, code, message) = rpc_code(c.wait_task(id, None)).await;
    assert_eq!((kind.as_str(), code), ("rpc", -32603.0), "{message}");
    assert!(message.contains("no names here"), "{message}");
    ok(c.disconnect()).await;
}

#[wasm_bindgen_test]
fn the_handlers_option_is_checked() {
    for (handlers, path) in [
        ("5", "options.handlers"),
        ("{ elicit: 1 }", "options.handlers.elicit"),
        ("{ createMessage: 'x' }", "options.handlers.createMessage"),
        ("{ listRoots: {} }", "options.handlers.listRoots"),
    ] {
        let options = js(&format!(
            "{{ transport: {{ send() {{}} }}, handlers: {handlers} }}"
        ));
        let e = create_mcp_client(options).err().expect("refused");
        assert_eq!(get(&e, "code").as_f64(), Some(-32602.0), "{handlers}");
        assert_eq!(json(&get(&e, "data"))["path"], path, "{handlers}");
    }
}

#[wasm_bindgen_test]
async fn handlers_answer_the_servers_requests_in_the_handshake_era() {
    let s = server();
    let transport = memory_transport(&s);
    let c = client(
        &transport,
        ", handlers: { elicit: (p) => ({ action: 'accept', content: { said: p.message } }), \
           listRoots: async () => { throw new Error('no roots today') } }",
    );
    ok(c.connect()).await;
    // initialize declared exactly the capabilities of the functions given.
    let sent = json(&get(&transport, "sent"));
    assert_eq!(
        sent[0]["params"]["capabilities"],
        serde_json::json!({ "elicitation": { "form": {} }, "roots": {} }),
        "{sent}"
    );
    let sink = get(&transport, "sink");
    let receive: Function = get(&sink, "receive").unchecked_into();
    for request in [
        "{ jsonrpc: '2.0', id: 'e', method: 'elicitation/create', params: { message: 'hi', requestedSchema: { type: 'object', properties: {} } } }",
        "{ jsonrpc: '2.0', id: 'r', method: 'roots/list' }",
        "{ jsonrpc: '2.0', id: 's', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } }",
    ] {
        receive.call1(&sink, &js(request)).unwrap();
    }
    // The answers go out through the transport's send (on spawned tasks).
    let answer = |id: &str| {
        json(&get(&transport, "sent"))
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
    };
    assert!(
        until(200, || ["e", "r", "s"]
            .iter()
            .all(|id| answer(id).is_some()))
        .await
    );
    assert_eq!(
        answer("e").unwrap()["result"],
        serde_json::json!({ "action": "accept", "content": { "said": "hi" } })
    );
    let roots = answer("r").unwrap();
    assert_eq!(roots["error"]["code"], -32603, "{roots}");
    assert!(
        roots["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no roots today"),
        "{roots}"
    );
    assert_eq!(
        answer("s").unwrap()["error"]["code"],
        -32601,
        "no createMessage given"
    );
    ok(c.disconnect()).await;
}

/// A JS transport playing a server that declares `resources` (no `subscribe`) and `prompts`
/// (no `logging`): `resources/list` in two pages, one template, `resources/read` and
/// `prompts/get` answering from their params.
fn primitives_transport() -> JsValue {
    js(r#"(() => {
      const transport = { sent: [] };
      const answers = {
        initialize: (p) => ({ protocolVersion: p.protocolVersion, serverInfo: { name: 'lists', version: '1' },
          capabilities: { resources: {}, prompts: { listChanged: true } } }),
        'resources/list': (p) => p.cursor === 'two'
          ? { resources: [{ uri: 'mem://b', name: 'b' }] }
          : { resources: [{ uri: 'mem://a', name: 'a', mimeType: 'text/plain' }], nextCursor: 'two' },
        'resources/templates/list': () => ({ resourceTemplates: [{ uriTemplate: 'mem://items/{id}', name: 'item' }] }),
        'resources/read': (p) => ({ contents: [{ uri: p.uri, mimeType: 'text/plain', text: 'read ' + p.uri }] }),
        'prompts/list': () => ({ prompts: [{ name: 'greet', arguments: [{ name: 'name', required: true }] }] }),
        'prompts/get': (p) => ({ description: 'greeting', messages: [{ role: 'user',
          content: { type: 'text', text: 'Please greet ' + (p.arguments ?? {}).name + '.' } }] }),
      };
      transport.start = (sink) => { transport.sink = sink; };
      transport.send = (m) => {
        transport.sent.push(m.method);
        if (m.id === undefined || m.method === undefined) return;
        const answer = answers[m.method];
        const body = answer ? '"result":' + JSON.stringify(answer(m.params ?? {}))
          : '"error":{"code":-32601,"message":"no"}';
        transport.sink.receive('{"jsonrpc":"2.0","id":' + String(m.id) + ',' + body + '}');
      };
      return transport;
    })()"#)
}

#[wasm_bindgen_test]
async fn the_js_client_lists_reads_and_gets_resources_and_prompts() {
    let transport = primitives_transport();
    let c = client(&transport, "");
    assert!(c.server_capabilities().is_undefined());
    ok(c.connect()).await;
    assert_eq!(
        json(&c.server_capabilities()),
        serde_json::json!({ "resources": {}, "prompts": { "listChanged": true } })
    );
    // Every page followed.
    let resources = json(&ok(c.list_resources()).await);
    assert_eq!(
        resources,
        serde_json::json!([{ "uri": "mem://a", "name": "a", "mimeType": "text/plain" }, { "uri": "mem://b", "name": "b" }])
    );
    let templates = json(&ok(c.list_resource_templates()).await);
    assert_eq!(templates[0]["uriTemplate"], "mem://items/{id}");
    let read = json(&ok(c.read_resource("mem://items/7".into())).await);
    assert_eq!(
        read,
        serde_json::json!({ "contents": [{ "uri": "mem://items/7", "mimeType": "text/plain", "text": "read mem://items/7" }] })
    );
    let prompts = json(&ok(c.list_prompts()).await);
    assert_eq!(prompts[0]["arguments"][0]["name"], "name");
    let got = json(&ok(c.get_prompt("greet".into(), Some(js("{ name: 'Ada' }")))).await);
    assert_eq!(got["messages"][0]["content"]["text"], "Please greet Ada.");
    assert_eq!(got["description"], "greeting");

    // What the server did not declare is refused before anything is sent.
    let before = json(&get(&transport, "sent")).as_array().unwrap().len();
    let refused = err(c.subscribe_resource("mem://a".into())).await;
    assert_eq!(
        get(&refused, "kind").as_string().as_deref(),
        Some("not-declared")
    );
    assert_eq!(
        json(&get(&refused, "data")),
        serde_json::json!({ "capability": "resources.subscribe" })
    );
    let refused = err(c.set_logging_level("info".into())).await;
    assert_eq!(
        json(&get(&refused, "data")),
        serde_json::json!({ "capability": "logging" })
    );
    // Prompt arguments must be an object.
    let bad = err(c.get_prompt("greet".into(), Some(js("'Ada'")))).await;
    assert_eq!(
        get(&bad, "kind").as_string().as_deref(),
        Some("invalid-arguments")
    );
    assert_eq!(
        json(&get(&transport, "sent")).as_array().unwrap().len(),
        before
    );
    ok(c.disconnect()).await;
}
