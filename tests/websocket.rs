//! The WebSocket server on the HTTP port (seed clause 16; RFC 6455), driven by tokio-tungstenite
//! as a raw peer on 127.0.0.1.
#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::native::ws::WebSocketOptions;
use orkestrel_mcp::{McpServer, RequestContext, Tool};
use serde::Deserialize;
use serde_json::{json, Value};
use support::*;
use tokio::net::TcpStream;
use tokio::sync::{oneshot, Notify};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

async fn connect(url: &str, protocol: Option<&str>) -> (Ws, Option<String>) {
    let mut request = url.into_client_request().unwrap();
    if let Some(p) = protocol {
        request
            .headers_mut()
            .insert("sec-websocket-protocol", p.parse().unwrap());
    }
    let (ws, response) = tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async(request))
        .await
        .expect("handshake within the deadline")
        .expect("handshake");
    let echoed = response
        .headers()
        .get("sec-websocket-protocol")
        .map(|v| v.to_str().unwrap().to_owned());
    (ws, echoed)
}

/// A WebSocket upgrade sent by hand over `version` with `extra` header lines: the answer's
/// head, lowercased.
async fn raw_upgrade(addr: std::net::SocketAddr, version: &str, extra: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut raw = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "GET /mcp {version}\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
    );
    raw.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(DEADLINE, raw.read(&mut byte))
            .await
            .expect("the answer's head within the deadline")
            .unwrap();
        if read == 0 {
            break;
        }
        answer.push(byte[0]);
    }
    String::from_utf8_lossy(&answer).to_ascii_lowercase()
}

/// [`connect`], then the handshake every client does first (`initialize`, then
/// `notifications/initialized`).
async fn ready(url: &str) -> Ws {
    let (mut ws, _) = connect(url, None).await;
    let init = support::json::handshake_request();
    ws.send(Message::text(init.to_string())).await.unwrap();
    let answer = next_json(&mut ws).await;
    assert_eq!(answer["id"], "init", "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    let done = support::json::initialized();
    ws.send(Message::text(done.to_string())).await.unwrap();
    ws
}

async fn next(ws: &mut Ws) -> Option<Message> {
    tokio::time::timeout(DEADLINE, ws.next())
        .await
        .expect("a frame within the deadline")
        .and_then(Result::ok)
}

async fn next_json(ws: &mut Ws) -> Value {
    loop {
        match next(ws).await {
            Some(Message::Text(t)) => return serde_json::from_str(&t).unwrap(),
            Some(Message::Ping(_) | Message::Pong(_)) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

async fn close_code(ws: &mut Ws) -> CloseCode {
    loop {
        match next(ws).await {
            Some(Message::Close(Some(frame))) => return frame.code,
            Some(Message::Close(None)) => panic!("a close without a code"),
            Some(_) => continue,
            None => panic!("the connection ended without a close frame"),
        }
    }
}

async fn start_ws(server: McpServer, max: Option<usize>) -> TestServer {
    let mut options = EndpointOptions::default();
    if let Some(max) = max {
        options.websocket = Some(WebSocketOptions {
            max_message_bytes: max,
            ..WebSocketOptions::default()
        });
    }
    start(server, options).await
}

#[tokio::test]
async fn subprotocol_mcp_is_echoed_when_offered() {
    let srv = start_ws(server(), None).await;
    let (_, echoed) = connect(&srv.ws_url(), Some("mcp")).await;
    assert_eq!(echoed.as_deref(), Some("mcp"));
    let (_, echoed) = connect(&srv.ws_url(), None).await;
    assert_eq!(echoed, None);
    // Names compare exactly (RFC 6455 §4.2.2): `MCP` is not offered `mcp`, so none is echoed
    // (echoing `mcp` failed clients that check the answer against their offer).
    let answer = raw_upgrade(srv.addr, "HTTP/1.1", "sec-websocket-protocol: MCP\r\n").await;
    assert!(answer.starts_with("http/1.1 101"), "{answer}");
    assert!(!answer.contains("sec-websocket-protocol"), "{answer}");
}

#[tokio::test]
async fn requests_in_flight_are_answered_by_id() {
    let gate = Arc::new(Notify::new());
    // Declares `logging`: the tool's log is the sign that it runs.
    let server = McpServer::new(orkestrel_mcp::ServerOptions::new("test", "0.0.0").with_logging());
    let g = gate.clone();
    server.tools().add(Tool::with_context(
        "wait",
        move |_: Empty, ctx: RequestContext| {
            let g = g.clone();
            async move {
                ctx.log(
                    orkestrel_mcp::server::context::LogLevel::Info,
                    None,
                    json!("waiting"),
                );
                g.notified().await;
                Ok::<_, String>("released")
            }
        },
    ));
    let srv = start_ws(server, None).await;
    let (mut ws, _) = connect(&srv.ws_url(), Some("mcp")).await;
    ws.send(Message::text(initialize(0, "2025-06-18")))
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut ws).await["result"]["protocolVersion"],
        "2025-06-18"
    );
    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ))
    .await
    .unwrap();
    let call = json!({"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait","arguments":{}}});
    ws.send(Message::text(call.to_string())).await.unwrap();
    assert_eq!(
        next_json(&mut ws).await["method"],
        "notifications/message",
        "the tool's log, on the socket"
    );
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    gate.notify_one();
    let slow = next_json(&mut ws).await;
    assert_eq!(slow["id"], "slow");
    assert_eq!(slow["result"]["content"][0]["text"], "released");
    // An invalid message gets its error; a notification nothing.
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":3}"#))
        .await
        .unwrap();
    let error = next_json(&mut ws).await;
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );
}

#[tokio::test]
async fn ping_gets_pong_and_close_gets_close() {
    let srv = start_ws(server(), None).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    ws.send(Message::Ping("hi".as_bytes().to_vec().into()))
        .await
        .unwrap();
    match next(&mut ws).await {
        Some(Message::Pong(data)) => assert_eq!(&data[..], b"hi"),
        other => panic!("expected a pong, got {other:?}"),
    }
    ws.send(Message::Close(None)).await.unwrap();
    match next(&mut ws).await {
        Some(Message::Close(_)) => {}
        other => panic!("expected a close, got {other:?}"),
    }
    assert!(next(&mut ws).await.is_none(), "then the connection ends");
}

#[tokio::test]
async fn a_ping_flood_is_closed_with_1008_and_keep_alives_are_answered() {
    let srv = start_ws(server(), None).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    // A burst within the budget (64) is answered pong for pong.
    for i in 0..64u8 {
        ws.feed(Message::Ping(vec![i].into())).await.unwrap();
    }
    ws.flush().await.unwrap();
    for i in 0..64u8 {
        match next(&mut ws).await {
            Some(Message::Pong(data)) => assert_eq!(&data[..], [i]),
            other => panic!("expected pong {i}, got {other:?}"),
        }
    }
    // A flood past it (each ping owing a pong the sender may never read) ends the connection.
    for _ in 0..200 {
        if ws.feed(Message::Ping(vec![0; 125].into())).await.is_err() {
            break;
        }
    }
    let _ = ws.flush().await;
    assert_eq!(close_code(&mut ws).await, CloseCode::Policy);
}

#[tokio::test]
async fn a_binary_message_is_closed_with_1003() {
    let srv = start_ws(server(), None).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    ws.send(Message::Binary(vec![1, 2, 3].into()))
        .await
        .unwrap();
    assert_eq!(close_code(&mut ws).await, CloseCode::Unsupported);
}

#[tokio::test]
async fn invalid_utf8_is_closed_with_1007() {
    let srv = start_ws(server(), None).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    let frame = Frame::message(vec![0x7b, 0xff, 0xfe, 0x7d], OpCode::Data(Data::Text), true);
    ws.send(Message::Frame(frame)).await.unwrap();
    assert_eq!(close_code(&mut ws).await, CloseCode::Invalid);
}

#[tokio::test]
async fn a_message_over_the_limit_is_closed_with_1009() {
    let srv = start_ws(server(), Some(1024)).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2048)
    );
    ws.send(Message::text(big)).await.unwrap();
    assert_eq!(close_code(&mut ws).await, CloseCode::Size);
}

#[tokio::test]
async fn a_vanished_peer_frees_its_requests() {
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
    let slots = Arc::new(std::sync::Mutex::new((Some(started_tx), Some(dropped_tx))));
    struct OnDrop(Option<oneshot::Sender<()>>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }
    let server = server();
    server.tools().add(Tool::new("hold", move |_: Empty| {
        let slots = slots.clone();
        async move {
            let (started, dropped) = {
                let mut s = slots.lock().unwrap();
                (s.0.take(), s.1.take())
            };
            let _guard = OnDrop(dropped);
            if let Some(tx) = started {
                let _ = tx.send(());
            }
            std::future::pending::<()>().await;
            Ok::<_, String>("never")
        }
    }));
    let srv = start_ws(server, None).await;
    let mut ws = ready(&srv.ws_url()).await;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{}}});
    ws.send(Message::text(call.to_string())).await.unwrap();
    tokio::time::timeout(DEADLINE, started_rx)
        .await
        .unwrap()
        .unwrap();
    drop(ws); // no close frame: the TCP connection just goes away
    tokio::time::timeout(DEADLINE, dropped_rx)
        .await
        .expect("the in-flight request is dropped once the peer is gone")
        .unwrap();
}

#[tokio::test]
async fn upgrades_that_are_declined() {
    let srv = start_ws(server(), None).await;
    let base = [
        ("upgrade", "websocket"),
        ("connection", "Upgrade"),
        ("sec-websocket-version", "13"),
    ];
    let key = ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==");

    let reply = send(srv.addr, "GET", &base, "").await;
    assert_eq!(reply.status, 400, "no Sec-WebSocket-Key");

    let v12 = [base[0], base[1], ("sec-websocket-version", "12"), key];
    let reply = send(srv.addr, "GET", &v12, "").await;
    assert_eq!(reply.status, 426);
    assert_eq!(reply.header("sec-websocket-version"), Some("13"));

    let no_connection = [base[0], base[2], key];
    assert_eq!(send(srv.addr, "GET", &no_connection, "").await.status, 400);

    // RFC 6455 §4.2.1: an HTTP/1.1 GET; over HTTP/1.0 a 101 was sent and the connection closed.
    let answer = raw_upgrade(srv.addr, "HTTP/1.0", "").await;
    assert!(
        answer.starts_with("http/1.0 400") || answer.starts_with("http/1.1 400"),
        "{answer}"
    );

    // Not an upgrade to websocket: plain HTTP answers (GET without a session → 400).
    let h2c = [
        ("upgrade", "h2c"),
        ("connection", "Upgrade"),
        ("accept", "text/event-stream"),
    ];
    assert_eq!(send(srv.addr, "GET", &h2c, "").await.status, 400);

    // A bad Origin on the upgrade → 403 before any handshake.
    let evil = [
        base[0],
        base[1],
        base[2],
        key,
        ("origin", "http://evil.example"),
    ];
    let reply = send(srv.addr, "GET", &evil, "").await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.json()["error"]["code"], -32000);

    // Another path is not ours.
    let url = format!("ws://{}/other", srv.addr);
    assert!(tokio_tungstenite::connect_async(url).await.is_err());

    // With WebSocket off, an upgrade is plain HTTP.
    let options = EndpointOptions {
        websocket: None,
        ..EndpointOptions::default()
    };
    let srv = start(server(), options).await;
    let reply = send(
        srv.addr,
        "GET",
        &[
            base[0],
            base[1],
            base[2],
            key,
            ("accept", "text/event-stream"),
        ],
        "",
    )
    .await;
    assert_eq!(reply.status, 400);
}

#[tokio::test]
async fn shutdown_closes_sockets_with_1001() {
    let srv = start_ws(server(), None).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    srv.endpoint.shutdown();
    assert_eq!(close_code(&mut ws).await, CloseCode::Away);
}

#[tokio::test]
async fn requests_beyond_the_in_flight_cap_are_refused() {
    let gate = Arc::new(Notify::new());
    let server = server();
    let g = gate.clone();
    server.tools().add(Tool::new("wait", move |_: Empty| {
        let g = g.clone();
        async move {
            g.notified().await;
            Ok::<_, String>("released")
        }
    }));
    let options = EndpointOptions {
        websocket: Some(WebSocketOptions {
            max_in_flight: 1,
            ..WebSocketOptions::default()
        }),
        ..EndpointOptions::default()
    };
    let srv = start(server, options).await;
    let mut ws = ready(&srv.ws_url()).await;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}});
    ws.send(Message::text(call.to_string())).await.unwrap();
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#))
        .await
        .unwrap();
    let busy = next_json(&mut ws).await;
    assert_eq!(
        (busy["id"].clone(), busy["error"]["code"].clone()),
        (json!(2), json!(-32000))
    );
    gate.notify_one();
    assert_eq!(next_json(&mut ws).await["id"], 1);
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({"jsonrpc":"2.0","id":3,"result":{}})
    );
}

/// A server with a `hold` tool that never finishes: `started` fires when a call begins,
/// `dropped` when its future is dropped (the call cancelled, the connection gone).
fn holding_server() -> (McpServer, oneshot::Receiver<()>, oneshot::Receiver<()>) {
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
    let slots = Arc::new(std::sync::Mutex::new((Some(started_tx), Some(dropped_tx))));
    struct OnDrop(Option<oneshot::Sender<()>>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }
    let server = server();
    server.tools().add(Tool::new("hold", move |_: Empty| {
        let slots = slots.clone();
        async move {
            let (started, dropped) = {
                let mut s = slots.lock().unwrap();
                (s.0.take(), s.1.take())
            };
            let _guard = OnDrop(dropped);
            if let Some(tx) = started {
                let _ = tx.send(());
            }
            std::future::pending::<()>().await;
            Ok::<_, String>("never")
        }
    }));
    (server, started_rx, dropped_rx)
}

async fn start_pinging(server: McpServer, interval: std::time::Duration) -> TestServer {
    let options = EndpointOptions {
        websocket: Some(WebSocketOptions {
            ping_interval: Some(interval),
            ..WebSocketOptions::default()
        }),
        ..EndpointOptions::default()
    };
    start(server, options).await
}

const HOLD: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{}}}"#;

#[tokio::test]
async fn an_idle_peer_that_answers_pings_stays_connected() {
    let (server, started, mut dropped) = holding_server();
    // Long enough for this (shared, loaded) machine to read a ping and send its pong in time.
    let srv = start_pinging(server, std::time::Duration::from_millis(500)).await;
    let mut ws = ready(&srv.ws_url()).await;
    ws.send(Message::text(HOLD)).await.unwrap();
    tokio::time::timeout(DEADLINE, started)
        .await
        .unwrap()
        .unwrap();
    // Reading lets tungstenite answer each ping with a pong. Pings come only after an interval
    // of silence, and a peer silent for a second interval would be closed instead: a second
    // ping is an interval the pong kept the connection through.
    let mut pings = 0;
    while pings < 2 {
        match next(&mut ws).await {
            Some(Message::Ping(_)) => pings += 1,
            other => panic!("expected a ping, got {other:?}"),
        }
    }
    assert!(
        matches!(dropped.try_recv(), Err(oneshot::error::TryRecvError::Empty)),
        "the call in flight still runs"
    );
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
}

#[tokio::test]
async fn a_peer_that_answers_no_ping_is_closed_and_its_calls_dropped() {
    let (server, started, dropped) = holding_server();
    let srv = start_pinging(server, std::time::Duration::from_millis(40)).await;
    let mut ws = ready(&srv.ws_url()).await;
    ws.send(Message::text(HOLD)).await.unwrap();
    tokio::time::timeout(DEADLINE, started)
        .await
        .unwrap()
        .unwrap();
    // Not reading: tungstenite answers no ping, as a peer that vanished without a FIN.
    tokio::time::timeout(DEADLINE, dropped)
        .await
        .expect("the server ends a connection whose peer answers no ping")
        .unwrap();
    // What the socket holds: the pings, then the close "ping timeout" (1001), then its end.
    loop {
        match tokio::time::timeout(DEADLINE, ws.next()).await.unwrap() {
            Some(Ok(Message::Ping(_))) => continue,
            Some(Ok(Message::Close(Some(frame)))) => {
                assert_eq!(
                    (frame.code, frame.reason.as_str()),
                    (CloseCode::Away, "ping timeout")
                );
                break;
            }
            other => panic!("expected pings then a close, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn pings_are_off_when_the_interval_is_none() {
    let options = EndpointOptions {
        websocket: Some(WebSocketOptions {
            ping_interval: None,
            ..WebSocketOptions::default()
        }),
        ..EndpointOptions::default()
    };
    let srv = start(server(), options).await;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(next_json(&mut ws).await["id"], 1);
    assert_eq!(
        WebSocketOptions::default().ping_interval,
        Some(orkestrel_mcp::native::ws::DEFAULT_PING_INTERVAL)
    );
}

#[tokio::test]
async fn valid_json_beyond_parser_limits_gets_exactly_one_answer_in_both_eras() {
    let srv = start_ws(server(), None).await;
    let mut ws = ready(&srv.ws_url()).await;
    let modern = format!(r#""_meta":{}"#, support::json::meta());
    for extra in ["", modern.as_str()] {
        for (text, id, code) in support::json::beyond_limits(extra) {
            ws.send(Message::text(text)).await.unwrap();
            let answer = loop {
                match next(&mut ws).await {
                    Some(Message::Text(t)) => break t.to_string(),
                    Some(Message::Ping(_) | Message::Pong(_)) => continue,
                    other => panic!("expected a text frame, got {other:?}"),
                }
            };
            support::json::check_limit_answer(&answer, &id, code);
        }
    }
}

// ---- JSON-RPC batches: received at 2025-03-26 only ---------------------------------------

/// [`connect`], then `initialize` at `version` and `notifications/initialized`.
async fn ready_at(url: &str, version: &str) -> Ws {
    let (mut ws, _) = connect(url, None).await;
    ws.send(Message::text(support::json::initialize(1, version)))
        .await
        .unwrap();
    let answer = next_json(&mut ws).await;
    assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
    let done = support::json::initialized();
    ws.send(Message::text(done.to_string())).await.unwrap();
    ws
}

#[tokio::test]
async fn a_batch_at_2025_03_26_is_answered_by_one_text_frame() {
    let srv = start_ws(server(), None).await;
    let mut ws = ready_at(&srv.ws_url(), "2025-03-26").await;
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
        {"jsonrpc":"2.0","id":2,"method":"tools/list"},
        {"jsonrpc":"2.0","id":2,"method":"ping"},
        {"jsonrpc":"2.0","id":3}
    ]);
    ws.send(Message::text(batch.to_string())).await.unwrap();
    let reply = next_json(&mut ws).await;
    assert_eq!(
        reply,
        json!([
            {"jsonrpc":"2.0","id":1,"result":{}},
            {"jsonrpc":"2.0","id":2,"result":{"tools":[]}},
            {"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request: the request id is already in use by an earlier request of this batch"}},
            {"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: a message with an \"id\" needs \"method\" (a request), or \"result\" or \"error\" (a response)"}}
        ])
    );
    // Only notifications: nothing is sent; the next frame answers the ping after it.
    let notes = json!([{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]);
    ws.send(Message::text(notes.to_string())).await.unwrap();
    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
    ))
    .await
    .unwrap();
    assert_eq!(
        next_json(&mut ws).await,
        json!({"jsonrpc":"2.0","id":"p","result":{}})
    );
    // An empty batch and one holding initialize: one error each, not an array.
    ws.send(Message::text("[]")).await.unwrap();
    assert_eq!(next_json(&mut ws).await["error"]["code"], -32600);
    let init: Value = serde_json::from_str(&support::json::initialize(9, "2025-03-26")).unwrap();
    ws.send(Message::text(json!([init]).to_string()))
        .await
        .unwrap();
    let refused = next_json(&mut ws).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize must not be part of a JSON-RPC batch"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_batch_is_refused_before_initialize_and_at_other_revisions() {
    let srv = start_ws(server(), None).await;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    let (mut ws, _) = connect(&srv.ws_url(), None).await;
    ws.send(Message::text(batch)).await.unwrap();
    let early = next_json(&mut ws).await;
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch before initialize"),
        "{early}"
    );
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut ws = ready_at(&srv.ws_url(), version).await;
        ws.send(Message::text(batch)).await.unwrap();
        assert_eq!(
            next(&mut ws).await,
            Some(Message::text(
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}}"#
            )),
            "unchanged at {version}"
        );
    }
}

#[tokio::test]
async fn a_batch_s_requests_beyond_the_in_flight_cap_are_refused_inside_its_reply() {
    let gate = Arc::new(Notify::new());
    let server = server();
    let g = gate.clone();
    server.tools().add(Tool::new("wait", move |_: Empty| {
        let g = g.clone();
        async move {
            g.notified().await;
            Ok::<_, String>("released")
        }
    }));
    let options = EndpointOptions {
        websocket: Some(WebSocketOptions {
            max_in_flight: 2,
            ..WebSocketOptions::default()
        }),
        ..EndpointOptions::default()
    };
    let srv = start(server, options).await;
    let mut ws = ready_at(&srv.ws_url(), "2025-03-26").await;
    let call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}});
    ws.send(Message::text(call.to_string())).await.unwrap();
    // One place left: the first request of the batch takes it, the others are refused.
    let batch = json!([
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}},
        {"jsonrpc":"2.0","id":3,"method":"ping"},
        {"jsonrpc":"2.0","id":4,"method":"ping"}
    ]);
    ws.send(Message::text(batch.to_string())).await.unwrap();
    // A single request now finds every place taken (the batch holds its own until its reply).
    ws.send(Message::text(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#))
        .await
        .unwrap();
    let busy = next_json(&mut ws).await;
    assert_eq!(
        (busy["id"].clone(), busy["error"]["code"].clone()),
        (json!(5), json!(-32000))
    );
    gate.notify_one();
    gate.notify_one();
    let mut frames = [next_json(&mut ws).await, next_json(&mut ws).await];
    frames.sort_by_key(Value::is_array);
    assert_eq!(frames[0]["id"], 1);
    assert_eq!(
        frames[1],
        json!([
            {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"released"}]}},
            {"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"too many requests in flight"}},
            {"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"too many requests in flight"}}
        ])
    );
}

/// A connection authorized by a bearer token ends when the token does (its `exp` plus the
/// 30 s leeway): close `1008`. Served until then; it was served for as long as it stayed open.
#[tokio::test]
async fn a_connection_ends_with_1008_when_its_token_expires() {
    let srv = start(server(), support::server::gated_by_people(false)).await;
    let mut request = srv.ws_url().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", "Bearer brief".parse().unwrap());
    let (mut ws, _) = tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async(request))
        .await
        .expect("handshake within the deadline")
        .expect("handshake");
    ws.send(Message::text(
        support::json::handshake_request().to_string(),
    ))
    .await
    .unwrap();
    assert_eq!(next_json(&mut ws).await["id"], "init");
    let close = loop {
        match tokio::time::timeout(DEADLINE, ws.next()).await {
            Ok(Some(Ok(Message::Close(frame)))) => break frame,
            Ok(Some(Ok(_))) => continue,
            other => panic!("a close frame, not {other:?}"),
        }
    };
    let frame = close.expect("a close frame with a code");
    assert_eq!(frame.code, CloseCode::Policy);
    assert!(frame.reason.contains("expired"), "{}", frame.reason);
}
