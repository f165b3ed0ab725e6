//! McpServer dispatch and handle, clause by clause (seed clauses 2–7 and 10) and per bad-input kind.
#![cfg(not(target_family = "wasm"))] // plain #[test]s: native only (tests/wasm_*.rs run on wasm)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::{McpServer, RequestId, ServerOptions, Tool};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    x: f64,
    y: f64,
}

fn server() -> McpServer {
    let server = McpServer::new(ServerOptions::new("calculator", "1.0.0"));
    server
        .tools()
        .add(Tool::new("add", |a: AddArgs| async move {
            Ok::<_, String>(orkestrel_mcp::Json(a.x + a.y))
        }));
    server
        .tools()
        .add(Tool::new("boom", |_: AddArgs| async move {
            Err::<String, _>("it broke")
        }));
    server
}

fn handle(server: &McpServer, text: &str) -> Option<Value> {
    block_on(server.handle(text)).map(|s| serde_json::from_str(&s).expect("replies are JSON"))
}

#[test]
fn clause2_envelope_echoes_id_with_exactly_one_of_result_or_error() {
    let s = server();
    for id in [
        json!(0),
        json!(-5),
        json!(""),
        json!("007"),
        json!(i64::MAX),
        json!(i64::MIN),
    ] {
        for method in ["ping", "nope"] {
            let req = json!({"jsonrpc":"2.0","id":id,"method":method});
            let reply = handle(&s, &req.to_string()).unwrap();
            assert_eq!(reply["jsonrpc"], "2.0");
            assert_eq!(reply["id"], id);
            assert!(reply.get("result").is_some() ^ reply.get("error").is_some());
        }
    }
    // The whole i64 range is echoed byte-exactly, never through f64.
    let text =
        block_on(s.handle(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#)).unwrap();
    assert!(text.contains(r#""id":9007199254740993"#), "{text}");
}

#[test]
fn clause3_notifications_yield_no_response_whatever_the_method() {
    let s = server();
    for text in [
        r#"{"jsonrpc":"2.0","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":[1,2]}"#,
    ] {
        assert_eq!(block_on(s.handle(text)), None, "{text}");
    }
    // Not a request at all (the seed's `isJSONRPCRequest`: `jsonrpc: '2.0'` and a string
    // `method`), id-less or not: `handle` answers `-32600`, id null (JSON-RPC 2.0 §7).
    for text in [
        r#"{"jsonrpc":"1.0","method":"ping"}"#,
        r#"{"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
    ] {
        let answer = block_on(s.handle(text)).expect("answered");
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (serde_json::Value::Null, serde_json::json!(-32600)),
            "{text}"
        );
    }
    let n = JsonRpcMessage::from_slice(br#"{"jsonrpc":"2.0","method":"ping"}"#).unwrap();
    assert_eq!(block_on(s.dispatch(n)), None);
}

#[test]
fn clause4_initialize_negotiates_the_version() {
    let s = server();
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        // Not spoken here: the latest this server speaks (spec 2025-11-25 lifecycle, "SHOULD be
        // the latest"; the seed answered its own 2025-06-18).
        ("2099-01-01", "2025-11-25"),
    ] {
        let req = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":asked,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        let reply = handle(&s, &req.to_string()).unwrap();
        assert_eq!(reply["result"]["protocolVersion"], answered);
        assert_eq!(
            reply["result"]["serverInfo"],
            json!({"name":"calculator","version":"1.0.0"})
        );
        assert_eq!(
            reply["result"]["capabilities"],
            json!({"tools":{"listChanged":true}})
        );
    }
    // A missing or non-string version is invalid params (the spec wins over the seed's fallback).
    for params in [json!({}), json!({"protocolVersion": 20250618})] {
        let req = json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":params});
        assert_eq!(
            handle(&s, &req.to_string()).unwrap()["error"]["code"],
            -32602
        );
    }
}

#[test]
fn clause4_ping_and_tools_list() {
    let s = server();
    assert_eq!(
        handle(&s, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap()["result"],
        json!({})
    );
    let list = handle(
        &s,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"x":1}}}"#,
    )
    .unwrap();
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["inputSchema"]["type"], "object");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["x", "y"]));
}

#[test]
fn clause4_raw_tools_default_to_an_object_schema() {
    let s = server();
    s.tools().add(Tool::from_json(
        "raw",
        json!({"type":"object"}),
        |_, _| async { Ok::<_, String>("r") },
    ));
    let list = handle(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
    assert_eq!(
        list["result"]["tools"][2]["inputSchema"],
        json!({"type":"object"})
    );
}

#[test]
fn clause5_tool_results_and_tool_errors() {
    let s = server();
    let ok = handle(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":5}}}"#).unwrap();
    assert_eq!(
        ok["result"],
        json!({"content":[{"type":"text","text":"7.0"}]})
    );
    let failed = handle(&s, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"boom","arguments":{"x":1,"y":1}}}"#).unwrap();
    assert_eq!(
        failed["result"],
        json!({"content":[{"type":"text","text":"it broke"}],"isError":true})
    );
    // Bad arguments are a tool error the model can correct, not a protocol error.
    let bad = handle(&s, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"x":"2"}}}"#).unwrap();
    assert_eq!(bad["result"]["isError"], true);
    // Missing arguments are treated as {} (and then fail add's own validation as a tool error).
    let missing = handle(
        &s,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add"}}"#,
    )
    .unwrap();
    assert_eq!(missing["result"]["isError"], true);
}

#[test]
fn clause5_a_panicking_tool_is_an_error_result() {
    let s = server();
    s.tools().add(Tool::from_json(
        "panics",
        json!({"type":"object"}),
        |_, _| async {
            if true {
                panic!("tool exploded");
            }
            Ok::<String, String>(String::new())
        },
    ));
    let r = handle(&s, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"panics","arguments":{}}}"#).unwrap();
    assert_eq!(r["result"]["isError"], true);
    assert!(r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("tool exploded"));
    // The server keeps serving.
    assert!(
        handle(&s, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).unwrap()["result"].is_object()
    );
}

#[test]
fn clause5_name_problems_are_invalid_params() {
    let s = server();
    for params in [
        json!({"name":"nope"}),
        json!({}),
        json!({"name":5}),
        json!({"name":"add","arguments":[1]}),
    ] {
        let req = json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":params});
        let r = handle(&s, &req.to_string()).unwrap();
        assert_eq!(r["error"]["code"], -32602, "{params}");
        assert_eq!(r["id"], 9);
    }
    let none = handle(&s, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call"}"#).unwrap();
    assert_eq!(none["error"]["code"], -32602);
    let unknown = handle(
        &s,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}"#,
    )
    .unwrap();
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nope"));
}

#[test]
fn clause6_unknown_method_names_the_method() {
    let s = server();
    let r = handle(
        &s,
        r#"{"jsonrpc":"2.0","id":"x","method":"resources/list"}"#,
    )
    .unwrap();
    assert_eq!(r["error"]["code"], -32601);
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("resources/list"));
}

#[test]
fn clause7_handle_maps_boundary_failures() {
    let s = server();
    for (text, code) in [
        ("{not json", -32700),
        ("", -32700),
        ("[]", -32600),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        ("42", -32600),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, -32600),
    ] {
        let r = handle(&s, text).unwrap();
        assert_eq!(r["error"]["code"], code, "{text}");
        assert_eq!(r["id"], Value::Null, "{text}");
    }
    for (text, code) in [
        (r#"{"id":1,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2","id":1,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
            -32602,
        ),
    ] {
        let r = handle(&s, text).unwrap();
        assert_eq!(
            (r["error"]["code"].clone(), r["id"].clone()),
            (json!(code), json!(1)),
            "{text}"
        );
    }
    // A batch is rejected whole: no element runs. `handle` serves one message with no
    // negotiated revision, and only 2025-03-26 receives batches (a connection or the HTTP route
    // that negotiated it does).
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    s.on_request(move |_, _| {
        c.fetch_add(1, Ordering::SeqCst);
    });
    let refused = handle(
        &s,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
    )
    .unwrap();
    assert_eq!(
        refused,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}})
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn responses_sent_to_the_server_get_no_reply() {
    let s = server();
    assert_eq!(handle(&s, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
    assert_eq!(
        handle(
            &s,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}"#
        ),
        None
    );
}

#[test]
fn unknown_members_are_ignored() {
    let s = server();
    let r = handle(&s, r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":[1],"params":{"_meta":{"progressToken":1},"x":2}}"#).unwrap();
    assert_eq!(r["result"], json!({}));
}

#[test]
fn clause10_request_event_fires_first_and_listener_panics_are_isolated() {
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let e = errors.clone();
    let s = McpServer::new(ServerOptions::new("t", "1").with_error_handler(
        move |message, event| {
            e.lock().unwrap().push(format!("{event}: {message}"));
        },
    ));
    let seen = Arc::new(Mutex::new(Vec::<(String, Option<RequestId>)>::new()));
    let seen2 = seen.clone();
    s.on_request(move |method, id| seen2.lock().unwrap().push((method.to_owned(), id.cloned())));
    s.on_request(|_, _| panic!("listener bug"));
    let r = handle(&s, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).unwrap();
    assert_eq!(r["result"], json!({}));
    assert_eq!(
        handle(
            &s,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ),
        None
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("ping".to_owned(), Some(RequestId::Number(3))),
            ("notifications/initialized".to_owned(), None)
        ]
    );
    assert_eq!(errors.lock().unwrap().len(), 2);
    assert!(errors.lock().unwrap()[0].contains("listener bug"));
}

#[test]
fn clause10_a_panicking_error_handler_neither_escapes_nor_recurses() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let s = McpServer::new(
        ServerOptions::new("t", "1").with_error_handler(move |_, _| {
            c.fetch_add(1, Ordering::SeqCst);
            panic!("handler bug");
        }),
    );
    s.on_request(|_, _| panic!("listener bug"));
    let r = handle(&s, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
    assert_eq!(r["result"], json!({}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn tools_added_and_removed_at_runtime_are_live() {
    let s = server();
    assert!(s.tools().remove("boom"));
    let r = handle(
        &s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom","arguments":{}}}"#,
    )
    .unwrap();
    assert_eq!(r["error"]["code"], -32602);
    let list = handle(&s, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 1);
}

/// `McpServer::handle` (the in-process string boundary, also behind the wasm `handle`): valid
/// JSON beyond the parser's limits gets one answer with its id, in both eras; long ids are exact.
#[test]
fn handle_answers_valid_json_beyond_parser_limits_in_both_eras() {
    let server = McpServer::new(ServerOptions::new("limits", "1"));
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let modern = r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}"#;
    let long = "-".to_owned() + &"9".repeat(45);
    for extra in ["", modern] {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{"a":{deep}{extra}}}}}"#
        );
        let answer = block_on(server.handle(&text)).expect("one answer");
        assert!(
            answer.contains(r#""id":5,"#) && answer.contains("-32600"),
            "{answer}"
        );
        assert!(
            answer.contains("nest deeper than 127 levels at line 1 column"),
            "{answer}"
        );
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{long},"method":"tools/list","params":{{"s":"\udc00"{extra}}}}}"#
        );
        let answer = block_on(server.handle(&text)).expect("one answer");
        assert!(answer.contains(&format!(r#""id":{long},"#)), "{answer}");
        assert!(
            answer.contains(r"lone UTF-16 surrogate escape \\udc00"),
            "{answer}"
        );
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{long},"method":"tools/list","params":{{"cursor":null{extra}}}}}"#
        );
        let answer = block_on(server.handle(&text)).expect("one answer");
        assert!(
            answer.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{long},"#)),
            "{answer}"
        );
    }
}
