//! The no-I/O core on wasm32 (node and headless Chromium): classification, exact ids, a Rust
//! tool through `handle`, SSE framing, media types.
#![cfg(target_family = "wasm")]

use orkestrel_mcp::http::media::{is_json_media_type, Accept};
use orkestrel_mcp::wire::jsonrpc::{ErrorCode, JsonRpcMessage};
use orkestrel_mcp::wire::sse::encode_event;
use orkestrel_mcp::{McpServer, ServerOptions, Tool};
use serde::Deserialize;
use wasm_bindgen_test::wasm_bindgen_test;

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    x: f64,
    y: f64,
}

fn server() -> McpServer {
    let server = McpServer::new(ServerOptions::new("core", "1.0.0"));
    server.tools().add(Tool::new("add", |a: Add| async move {
        Ok::<_, String>((a.x + a.y).to_string())
    }));
    server
}

#[wasm_bindgen_test]
async fn handle_calls_a_rust_tool() {
    let reply = server()
        .handle(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":5}}}"#)
        .await;
    assert_eq!(
        reply.as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"7"}]}}"#)
    );
}

#[wasm_bindgen_test]
async fn ids_stay_exact_on_wasm() {
    for raw in [
        "9007199254740993",
        "-9223372036854775808",
        "9223372036854775807",
        "\"007\"",
        "18446744073709551616",
        "-1234567890123456789012345678901234567890",
    ] {
        let reply = server()
            .handle(&format!(
                r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#
            ))
            .await
            .unwrap();
        assert_eq!(
            reply,
            format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
        );
    }
}

#[wasm_bindgen_test]
async fn bad_input_gets_precise_codes() {
    let s = server();
    let parse = s.handle("{").await.unwrap();
    assert!(parse.contains("-32700"), "{parse}");
    let batch = s
        .handle(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await
        .unwrap();
    assert!(batch.contains("-32600"), "{batch}");
    assert_eq!(
        s.handle(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await,
        None
    );
    let unknown = s
        .handle(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        .await
        .unwrap();
    assert!(unknown.contains("-32601"), "{unknown}");
}

#[wasm_bindgen_test]
fn classification_and_sse_framing() {
    let err = JsonRpcMessage::from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#)
        .unwrap_err();
    assert_eq!(err.error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        encode_event(None, "a\nb"),
        "event: message\ndata: a\ndata: b\n\n"
    );
    assert_eq!(
        Accept::parse(["text/event-stream"]),
        Accept {
            json: false,
            sse: true
        }
    );
    assert!(is_json_media_type("application/json; charset=utf-8"));
}

#[wasm_bindgen_test]
async fn valid_json_beyond_parser_limits_is_answered_on_wasm() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let text = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"a":{deep}}}}}"#);
    let reply = server().handle(&text).await.expect("one answer");
    assert!(
        reply.starts_with(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600"#),
        "{reply}"
    );
    assert!(reply.contains("nest deeper than 127 levels"), "{reply}");
    let reply = server()
        .handle(r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#)
        .await
        .expect("one answer");
    assert!(
        reply.contains(r#""id":null"#) && reply.contains("lone UTF-16 surrogate"),
        "{reply}"
    );
}

#[wasm_bindgen_test]
async fn the_route_receives_a_batch_at_2025_03_26_and_handle_refuses_it_on_wasm() {
    use orkestrel_mcp::http::{AnswerBody, HttpRequest, Route, RouteOptions};
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":5}}}]"#;
    let spawn = orkestrel_mcp::host::defaults::spawner().expect("a spawner on wasm");
    let route = Route::new(server(), RouteOptions::default(), spawn);
    let post = |version: Option<&str>| {
        let mut request = HttpRequest::new("POST", "/mcp")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(version) = version {
            request = request.header("MCP-Protocol-Version", version);
        }
        request.body(batch)
    };
    let answer = route.respond(post(None)).await;
    assert_eq!(answer.status, 200);
    let AnswerBody::Json(text) = &answer.body else {
        panic!("JSON: {answer:?}")
    };
    assert_eq!(
        text,
        r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"7"}]}}]"#
    );
    let refused = route.respond(post(Some("2025-06-18"))).await;
    assert_eq!(refused.status, 400);
    let reply = server().handle(batch).await.expect("one answer");
    assert!(reply.contains("batches are not supported"), "{reply}");
}
