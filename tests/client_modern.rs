//! Our client's eras against our own server (`orkestrel-mcp serve`): auto mode reaches
//! 2026-07-28 over Streamable HTTP, stdio and WebSocket; legacy mode gets the handshake on the
//! same URL; listen streams are acknowledged and cancelled; a listed `inputSchema` reaches the caller verbatim in both eras. `HANG_GUARD` only bounds a hang.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]
#![allow(clippy::result_large_err)]

mod support;

use orkestrel_mcp::client::{ClientEra, McpClient};
use orkestrel_mcp::era::Era;
use serde_json::json;
use support::client::*;
use support::server::our_http_server;
use tokio::time::timeout;

fn stdio(era: ClientEra) -> McpClient {
    our_stdio(era_options(era))
}

async fn modern_session(client: &McpClient) {
    client.connect().await.unwrap();
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    assert!(client.initialize_result().is_none(), "no handshake");
    assert!(
        client.session_id().is_none(),
        "no session on the modern wire"
    );
    let discover = client.discover_result().expect("a discover result");
    assert!(discover["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2026-07-28")));
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert_eq!(
        client
            .call("echo", json!({"text":"hï there "}))
            .await
            .unwrap(),
        Some(json!("hï there "))
    );
    assert_eq!(
        client.call("add", json!({"a":2,"b":5})).await.unwrap(),
        Some(json!(7))
    );
    let err = client.call("nope", json!({})).await.unwrap_err();
    assert_eq!(err.code().map(|c| c.0), Some(-32602));
    client.disconnect().await;
}

#[tokio::test]
async fn auto_reaches_2026_over_http() {
    let (url, _server) = our_http_server().await;
    let client = http_client_to(&url, era_options(ClientEra::Auto));
    timeout(HANG_GUARD, modern_session(&client)).await.unwrap();
}

#[tokio::test]
async fn auto_reaches_2026_over_stdio() {
    timeout(HANG_GUARD, modern_session(&stdio(ClientEra::Auto)))
        .await
        .unwrap();
}

#[tokio::test]
async fn auto_reaches_2026_over_websocket() {
    let (url, _server) = our_http_server().await;
    let client = ws_client_to(&url, era_options(ClientEra::Auto));
    timeout(HANG_GUARD, modern_session(&client)).await.unwrap();
}

#[tokio::test]
async fn modern_mode_over_http_and_legacy_mode_gets_the_handshake() {
    let (url, _server) = our_http_server().await;
    let modern = http_client_to(&url, era_options(ClientEra::Modern));
    timeout(HANG_GUARD, modern_session(&modern)).await.unwrap();
    let legacy = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        legacy.connect().await.unwrap();
        assert_eq!(legacy.era(), Some(Era::Legacy));
        assert!(legacy.initialize_result().is_some());
        assert!(legacy.session_id().is_some(), "a legacy session");
        assert!(legacy.discover_result().is_none());
        assert_eq!(
            legacy.call("echo", json!({"text":"x"})).await.unwrap(),
            Some(json!("x"))
        );
        legacy.disconnect().await;
    })
    .await
    .unwrap();
    let legacy_stdio = stdio(ClientEra::Legacy);
    timeout(HANG_GUARD, async {
        legacy_stdio.connect().await.unwrap();
        assert_eq!(legacy_stdio.era(), Some(Era::Legacy));
        assert!(legacy_stdio.initialize_result().is_some());
        legacy_stdio.disconnect().await;
    })
    .await
    .unwrap();
}

async fn listen_and_cancel(client: &McpClient) {
    client.connect().await.unwrap();
    let subscription = client
        .listen(json!({"toolsListChanged": true}))
        .await
        .unwrap();
    assert!(subscription.acknowledged().is_object());
    subscription.cancel().await;
    // The connection keeps working after the cancel.
    assert_eq!(
        client.call("echo", json!({"text":"after"})).await.unwrap(),
        Some(json!("after"))
    );
    client.disconnect().await;
}

#[tokio::test]
async fn listen_is_acknowledged_and_cancelled_over_http_and_stdio() {
    let (url, _server) = our_http_server().await;
    let http = http_client_to(&url, era_options(ClientEra::Auto));
    timeout(HANG_GUARD, listen_and_cancel(&http)).await.unwrap();
    timeout(HANG_GUARD, listen_and_cancel(&stdio(ClientEra::Auto)))
        .await
        .unwrap();
    // Listen needs the modern era.
    let legacy = stdio(ClientEra::Legacy);
    legacy.connect().await.unwrap();
    assert!(legacy.listen(json!({})).await.is_err());
    legacy.disconnect().await;
}

/// A JSON Schema 2020-12 `inputSchema` with every keyword the suite's
/// `json-schema-2020-12-preservation` scenario looks for (SEP-1613, SEP-2106).
fn rich_schema() -> serde_json::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
        "x-vendor": {"kept": [1, 2.5, null]}
    })
}

#[tokio::test]
async fn a_listed_input_schema_is_kept_verbatim_in_both_eras() {
    use orkestrel_mcp::native::endpoint::EndpointOptions;
    use orkestrel_mcp::{McpServer, ServerOptions, Tool};
    let server = McpServer::new(ServerOptions::new("schemas", "1"));
    server
        .tools()
        .add(Tool::from_json("rich", rich_schema(), |_, _| async {
            Ok::<_, String>("ok")
        }));
    let running = support::server::start(server, EndpointOptions::default()).await;
    for era in [ClientEra::Legacy, ClientEra::Modern] {
        let client = http_client_to(&running.url(), era_options(era));
        timeout(HANG_GUARD, async {
            client.connect().await.unwrap();
            let tools = client.list_tools().await.unwrap();
            let rich = tools.iter().find(|t| t.name == "rich").expect("listed");
            assert_eq!(rich.input_schema, rich_schema(), "{era:?}");
            client.disconnect().await;
        })
        .await
        .unwrap();
    }
}
