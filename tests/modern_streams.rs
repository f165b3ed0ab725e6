//! The 2026-07-28 response streams over real HTTP on 127.0.0.1: per-request logging and progress
//! (§5.2, §3.1), `subscriptions/listen` (§5.1), cancellation by closing the stream (§3.4), and
//! the SSE framing of the modern wire. Sources: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/seps/2243-http-standardization>. Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use std::time::Duration;

use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::server::ListKind;
use orkestrel_mcp::{McpServer, ServerOptions};
use serde_json::{json, Value};
use support::json::{modern_params, rpc, CAPS, LOG, PV, SUB_ID, V};
use support::modern::{
    assert_ok, call, fixture, listen, modern_headers, next_event, open_conn, response,
    start_fixture,
};
use support::{Reply, SseStream, DEADLINE};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The `notifications/message` messages of a reply.
fn log_messages(reply: &Reply) -> Vec<Value> {
    reply
        .messages()
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect()
}

/// The next event with fields on `stream`, as JSON.
async fn first_event(stream: &mut SseStream) -> Value {
    stream.next().await.expect("an event").json()
}

// ---------------------------------------------------------------------------------------------
// Per-request logging and progress (§5.2, §3.1)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn no_log_messages_without_a_log_level() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "log_levels", "arguments": {} }),
    )
    .await;
    assert_ok(&reply, &json!(1));
    assert!(log_messages(&reply).is_empty(), "{reply:?}");
}

#[tokio::test]
async fn log_level_warning_sends_only_warning_and_above_on_that_request_stream() {
    let (s, _server, _) = start_fixture().await;
    let with_level = json!({ "name": "log_levels", "arguments": {},
        "_meta": { PV: V, CAPS: {}, LOG: "warning" } });
    let without = json!({ "name": "log_levels", "arguments": {} });
    let (a, b) = tokio::join!(
        call(s.addr, json!("with"), "tools/call", with_level),
        call(s.addr, json!("without"), "tools/call", without),
    );
    assert_eq!(a.header("content-type"), Some("text/event-stream"), "{a:?}");
    let messages = a.messages();
    let levels: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error"], "{messages:?}");
    assert!(
        messages.last().unwrap().get("result").is_some(),
        "the response comes last: {messages:?}"
    );
    assert_ok(&a, &json!("with"));
    assert_ok(&b, &json!("without"));
    assert!(
        log_messages(&b).is_empty(),
        "the other request got logs: {b:?}"
    );
}

#[tokio::test]
async fn bad_log_level_is_invalid_params() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "log_levels", "arguments": {}, "_meta": { PV: V, CAPS: {}, LOG: "loud" } }),
    )
    .await;
    let r = response(&reply);
    assert_eq!(r["id"], json!(1));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
}

#[tokio::test]
async fn progress_arrives_on_the_sse_stream_in_increasing_order_before_the_response() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "progress", "arguments": {},
            "_meta": { PV: V, CAPS: {}, "progressToken": "tok-1" } }),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    let messages = reply.messages();
    let (last, notes) = messages.split_last().unwrap();
    assert_eq!(last["id"], json!(1));
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    let progress: Vec<f64> = notes
        .iter()
        .map(|m| {
            assert_eq!(m["method"], "notifications/progress", "{m}");
            assert_eq!(m["params"]["progressToken"], "tok-1", "{m}");
            m["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress.len(), 4, "{messages:?}");
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "increasing: {progress:?}"
    );
    // Without a token: no progress, a plain JSON reply.
    let plain = call(
        s.addr,
        json!(2),
        "tools/call",
        json!({ "name": "progress", "arguments": {} }),
    )
    .await;
    assert_eq!(plain.messages().len(), 1, "{plain:?}");
}

#[tokio::test]
async fn sse_messages_are_one_data_line_each_with_no_event_ids() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "progress", "arguments": {},
            "_meta": { PV: V, CAPS: {}, "progressToken": "t" } }),
    )
    .await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = support::parse_events(&reply.body);
    assert!(events.len() >= 2, "{events:?}");
    for event in &events {
        assert_eq!(
            event.id, None,
            "no SSE event ids on the modern wire: {event:?}"
        );
        assert!(!event.data.contains('\n'), "one data line: {event:?}");
        assert!(event.json().is_object());
    }
    for message in reply.messages() {
        assert!(
            message.get("method").is_none() || message.get("id").is_none(),
            "no server-sent requests: {message}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// subscriptions/listen (§5.1)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_a_string_request_id() {
    let (s, _server, _) = start_fixture().await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("listen-A"),
        json!({ "toolsListChanged": true, "promptsListChanged": true }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(ack.get("id").is_none(), "a notification: {ack}");
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("listen-A"), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true, "promptsListChanged": true })
    );
    conn.abort();
}

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_an_integer_request_id() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(s.addr, json!(7), json!({ "toolsListChanged": true })).await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(
        ack["params"]["_meta"][SUB_ID].is_u64(),
        "same JSON type: {ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!(7));
    assert_eq!(server.notify_list_changed(ListKind::Tools), 1);
    let change = first_event(&mut stream).await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(change["params"]["_meta"][SUB_ID], json!(7), "{change}");
    conn.abort();
}

#[tokio::test]
async fn listen_delivers_only_the_requested_kinds() {
    let (s, server, _) = start_fixture().await;
    let (mut prompts, c1) = listen(s.addr, json!("p"), json!({ "promptsListChanged": true })).await;
    let (mut tools, c2) = listen(s.addr, json!("t"), json!({ "toolsListChanged": true })).await;
    let ack = first_event(&mut prompts).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "promptsListChanged": true })
    );
    first_event(&mut tools).await;
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        1,
        "only the tools stream"
    );
    assert_eq!(
        server.notify_list_changed(ListKind::Prompts),
        1,
        "only the prompts stream"
    );
    let next = first_event(&mut prompts).await;
    assert_eq!(
        next["method"], "notifications/prompts/list_changed",
        "the prompts-only stream got {next}"
    );
    assert_eq!(next["params"]["_meta"][SUB_ID], json!("p"));
    let next = first_event(&mut tools).await;
    assert_eq!(next["method"], "notifications/tools/list_changed");
    assert_eq!(next["params"]["_meta"][SUB_ID], json!("t"));
    assert_eq!(
        server.notify_list_changed(ListKind::Resources),
        0,
        "nobody asked"
    );
    c1.abort();
    c2.abort();
}

#[tokio::test]
async fn listen_resource_updates_only_for_subscribed_uris() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("r"),
        json!({ "resourceSubscriptions": ["test://watched"] }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "resourceSubscriptions": ["test://watched"] })
    );
    assert_eq!(server.notify_resource_updated("test://static-text"), 0);
    assert_eq!(server.notify_resource_updated("test://watched"), 1);
    let update = first_event(&mut stream).await;
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "test://watched", "{update}");
    assert_eq!(update["params"]["_meta"][SUB_ID], json!("r"), "{update}");
    conn.abort();
}

#[tokio::test]
async fn closing_the_listen_stream_unsubscribes() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(s.addr, json!(1), json!({ "toolsListChanged": true })).await;
    first_event(&mut stream).await;
    assert_eq!(server.notify_list_changed(ListKind::Tools), 1);
    drop(stream);
    conn.abort();
    support::eventually(DEADLINE, "a notify after the close reaches nobody", || {
        server.notify_list_changed(ListKind::Tools) == 0
    })
    .await;
}

#[tokio::test]
async fn listen_stream_gets_keep_alive_comments_while_idle() {
    let (server, _) = fixture();
    let mut options = EndpointOptions::default();
    options.http.keep_alive = Some(Duration::from_millis(50));
    let s = support::start(server, options).await;
    let (mut stream, conn) = listen(s.addr, json!(1), json!({ "toolsListChanged": true })).await;
    first_event(&mut stream).await;
    let block = stream.next_block().await.expect("a keep-alive");
    assert!(
        block.data.is_empty() && !block.comments.is_empty(),
        "a comment line: {block:?}"
    );
    conn.abort();
}

#[tokio::test]
async fn listen_acknowledges_only_the_kinds_the_server_supports() {
    let server = McpServer::new(ServerOptions::new("tools-only", "0"));
    let s = support::start(server, EndpointOptions::default()).await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("k"),
        json!({ "toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": true, "resourceSubscriptions": ["test://x"] }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true }),
        "{ack}"
    );
    conn.abort();
}

// ---------------------------------------------------------------------------------------------
// Cancellation by closing the stream (§3.4)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn closing_a_modern_sse_response_cancels_the_handler() {
    let (s, _server, mut events) = start_fixture().await;
    let params = json!({ "name": "forever", "arguments": {},
        "_meta": { PV: V, CAPS: {}, "progressToken": 1 } });
    let (response, conn) = open_conn(
        s.addr,
        &modern_headers("tools/call", Some("forever")),
        &rpc(json!(1), "tools/call", params),
    )
    .await;
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut stream = SseStream::new(response);
    assert_eq!(next_event(&mut events).await, "started");
    let progress = first_event(&mut stream).await;
    assert_eq!(progress["method"], "notifications/progress");
    drop(stream);
    conn.abort();
    assert_eq!(
        next_event(&mut events).await,
        "dropped",
        "the handler was cancelled"
    );
}

#[tokio::test]
async fn closing_the_connection_before_any_event_cancels_the_handler() {
    let (s, _server, mut events) = start_fixture().await;
    let body = rpc(
        json!(1),
        "tools/call",
        modern_params(json!({ "name": "forever_silent", "arguments": {} })),
    );
    let headers = modern_headers("tools/call", Some("forever_silent"));
    // No response head comes until the handler says something: write the request raw.
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        s.addr,
        body.len()
    );
    for (k, v) in &headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(&body);
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(next_event(&mut events).await, "started");
    drop(tcp);
    assert_eq!(
        next_event(&mut events).await,
        "dropped",
        "the handler was cancelled"
    );
}
