//! Our client's eras against our own server (`orkestrel-mcp serve`): auto mode reaches
//! 2026-07-28 over Streamable HTTP, stdio and WebSocket; legacy mode gets the handshake on the
//! same URL; listen streams are acknowledged and cancelled. `HANG_GUARD` only bounds a hang.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]
#![allow(clippy::result_large_err)]

#[path = "support/client.rs"]
mod client_support;

use std::time::Duration;

use client_support::*;
use orkestrel_mcp::client::{ClientEra, ClientOptions, McpClient};
use orkestrel_mcp::era::Era;
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use serde_json::json;
use tokio::time::timeout;

fn era_options(era: ClientEra) -> ClientOptions {
    ClientOptions::new("it", "0")
        .with_timeout(Duration::from_secs(10))
        .with_era(era)
}

async fn our_http_server() -> (String, tokio::process::Child) {
    let mut child = tokio::process::Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let url = timeout(HANG_GUARD, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(i) = line.find("http://") {
                return line[i..].split_whitespace().next().unwrap_or("").to_owned();
            }
        }
        panic!("the server printed no URL")
    })
    .await
    .unwrap();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (url, child)
}

fn stdio(era: ClientEra) -> McpClient {
    McpClient::new(
        StdioTransport::new(
            StdioClientOptions::new(BIN)
                .with_args(["serve", "--stdio"])
                .with_env([("RUST_LOG", "warn")])
                .quiet(),
        ),
        era_options(era),
    )
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
    let client = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        era_options(ClientEra::Auto),
    );
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
    let client = McpClient::new(
        WsTransport::new(WsClientOptions::new(url.replacen("http://", "ws://", 1))).unwrap(),
        era_options(ClientEra::Auto),
    );
    timeout(HANG_GUARD, modern_session(&client)).await.unwrap();
}

#[tokio::test]
async fn modern_mode_over_http_and_legacy_mode_gets_the_handshake() {
    let (url, _server) = our_http_server().await;
    let modern = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        era_options(ClientEra::Modern),
    );
    timeout(HANG_GUARD, modern_session(&modern)).await.unwrap();
    let legacy = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        era_options(ClientEra::Legacy),
    );
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
    let http = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        era_options(ClientEra::Auto),
    );
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
