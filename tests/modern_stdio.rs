//! The 2026-07-28 wire on stdio (§2.4 stdio classification, §5.1 listen): the real binary, and
//! `serve_with` over an in-memory duplex so the server handle stays in the test. Sources: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/seps/2243-http-standardization>.
//! Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use std::time::Duration;

use orkestrel_mcp::server::ListKind;
use serde_json::{json, Value};
use support::json::{meta, CAPS, PV, SERVER_INFO, SUB_ID, V};
use support::modern::fixture;
use support::server::{ChildServer, Pipe};
use support::DEADLINE;

// ---------------------------------------------------------------------------------------------
// The binary (§2.4)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn stdio_serves_modern_messages_statelessly_beside_a_legacy_initialize() {
    let mut c = ChildServer::spawn(&["serve", "--stdio"]);
    let modern = c
        .ask(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": meta() } }))
        .await;
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
    assert!(modern["result"]["ttlMs"].is_u64(), "{modern}");
    assert!(
        modern["result"]["_meta"][SERVER_INFO].is_object(),
        "{modern}"
    );
    let removed = c
        .ask(json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": meta() } }))
        .await;
    assert_eq!(removed["error"]["code"], json!(-32601), "{removed}");
    let init = c
        .ask(json!({ "jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    c.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let legacy = c
        .ask(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" }))
        .await;
    assert!(legacy["result"]["tools"].is_array(), "{legacy}");
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    let modern = c
        .ask(json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "text": "hi" }, "_meta": meta() } }))
        .await;
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
    assert_eq!(modern["result"]["content"][0]["text"], "hi", "{modern}");
    let bad = c
        .ask(json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/list",
            "params": { "_meta": { PV: "v999.0.0", CAPS: {} } } }))
        .await;
    assert_eq!(bad["error"]["code"], json!(-32022), "{bad}");
    assert_eq!(bad["error"]["data"]["requested"], "v999.0.0");
    c.close_stdin();
    let status = tokio::time::timeout(DEADLINE, c.child.wait())
        .await
        .expect("exits on stdin EOF")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn stdio_always_answers_server_discover() {
    let mut c = ChildServer::spawn(&["serve", "--stdio"]);
    for (id, params) in [(1, json!({})), (2, json!({ "_meta": meta() }))] {
        let reply = c
            .ask(json!({ "jsonrpc": "2.0", "id": id, "method": "server/discover", "params": params }))
            .await;
        let versions = reply["result"]["supportedVersions"]
            .as_array()
            .unwrap_or_else(|| panic!("{reply}"));
        assert!(versions.contains(&json!(V)), "{reply}");
        assert_eq!(reply["result"]["resultType"], "complete");
    }
    let init = c
        .ask(json!({ "jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert!(init.get("result").is_some(), "{init}");
    let after = c
        .ask(json!({ "jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    assert!(after["result"]["supportedVersions"].is_array(), "{after}");
    // Also without params at all.
    let bare = c
        .ask(json!({ "jsonrpc": "2.0", "id": 5, "method": "server/discover" }))
        .await;
    assert!(bare["result"]["supportedVersions"].is_array(), "{bare}");
}

// ---------------------------------------------------------------------------------------------
// subscriptions/listen over serve_with (§5.1)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn stdio_listen_is_acknowledged_first_with_the_request_id() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true, "promptsListChanged": true } } }))
        .await;
    let ack = p.read().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("L"), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true, "promptsListChanged": true })
    );
    // Integer ids keep their JSON type on stdio too.
    p.send(
        json!({ "jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!(9), "{ack}");
}

#[tokio::test]
async fn stdio_listen_notifications_are_tagged_and_sent_once() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(
        json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        server.notify_list_changed(ListKind::Prompts),
        0,
        "not requested"
    );
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        1,
        "one listen stream"
    );
    let change = p.read().await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(change["params"]["_meta"][SUB_ID], json!("L"), "{change}");
    assert_eq!(
        p.silent_for(Duration::from_millis(200)).await,
        None,
        "one tagged notification only"
    );
}

#[tokio::test]
async fn stdio_modern_client_without_listen_gets_no_list_changed() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    let discover = p.read().await;
    assert!(discover["result"]["supportedVersions"].is_array());
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        0,
        "nobody subscribed"
    );
    assert_eq!(
        p.silent_for(Duration::from_millis(300)).await,
        None,
        "no unrequested notification on a modern stdio connection (§5.1)"
    );
}

#[tokio::test]
async fn stdio_listen_is_cancelled_by_notifications_cancelled() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(
        json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("L"), "{ack}");
    p.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "L" } }),
    )
    .await;
    // A request after the cancellation: once it is answered, the cancellation was processed.
    p.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    loop {
        let line = p.read().await;
        if line["id"] == json!(2) {
            break;
        }
        assert_ne!(
            line["id"],
            json!("L"),
            "a cancelled request gets no response: {line}"
        );
    }
    server.notify_list_changed(ListKind::Tools);
    // Whatever else arrives (see the ignored stdio tests), nothing is tagged for "L" any more.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(300);
    while let Ok(Some(line)) = tokio::time::timeout_at(deadline, async {
        p.silent_for(Duration::from_millis(300)).await
    })
    .await
    {
        if line.is_empty() {
            break;
        }
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(
            message["params"]["_meta"][SUB_ID],
            json!("L"),
            "the cancelled subscription still receives: {message}"
        );
    }
}
