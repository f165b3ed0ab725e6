//! The stateless Streamable HTTP route over real TCP: statuses, bodies, SSE framing, bad input.
#![cfg(feature = "native")]

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use hyper::Method;
use orkestrel_mcp::native::http::{self, HttpOptions, Routes};
use orkestrel_mcp::{McpServer, ServerOptions, Tool};
use serde::Deserialize;
use serde_json::json;
use support::http::{post_accept as post, request};
use support::server::spawn_listening;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

#[derive(Deserialize, schemars::JsonSchema)]
struct Sleep {
    ms: u64,
}

async fn start(options: HttpOptions) -> SocketAddr {
    start_signalling(options).await.0
}

/// The route on 127.0.0.1 with a `sleep` tool (slow on purpose: the behaviour under test) that
/// reports each call's start on the returned channel.
async fn start_signalling(options: HttpOptions) -> (SocketAddr, UnboundedReceiver<u64>) {
    let server = McpServer::new(ServerOptions::new("http-test", "1.0.0"));
    let (started, calls) = unbounded_channel();
    server.tools().add(Tool::new("sleep", move |a: Sleep| {
        let _ = started.send(a.ms);
        async move {
            tokio::time::sleep(Duration::from_millis(a.ms)).await;
            Ok::<_, String>(format!("slept {} ms", a.ms))
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http::serve(
        listener,
        Routes::new(server, options),
        std::future::pending(),
    ));
    (addr, calls)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const JSON: &str = "application/json";
const BOTH: &str = "application/json, text/event-stream";

#[tokio::test]
async fn json_reply_when_only_json_is_accepted() {
    let addr = start(HttpOptions::default()).await;
    let r = post(addr, INIT, JSON).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn sse_reply_is_one_message_event_when_sse_is_accepted() {
    let addr = start(HttpOptions::default()).await;
    let r = post(addr, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#, BOTH).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "text/event-stream");
    assert_eq!(
        r.body,
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}\n\n"
    );
    let only_sse = post(
        addr,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        "text/event-stream",
    )
    .await;
    assert_eq!(only_sse.headers["content-type"], "text/event-stream");
}

#[tokio::test]
async fn prefer_json_answers_json_when_both_are_accepted() {
    let addr = start(HttpOptions {
        prefer_json: true,
        ..HttpOptions::default()
    })
    .await;
    let r = post(addr, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, BOTH).await;
    assert_eq!(r.json(), json!({"jsonrpc":"2.0","id":2,"result":{}}));
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_with_202_and_no_body() {
    let addr = start(HttpOptions::default()).await;
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"no/such"}"#,
        r#"{"jsonrpc":"2.0","method":"x","params":7}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
    ] {
        let r = post(addr, body, BOTH).await;
        assert_eq!((r.status, r.body.as_str()), (202, ""), "{body}");
    }
}

#[tokio::test]
async fn transport_failures_are_400_with_a_jsonrpc_body() {
    let addr = start(HttpOptions::default()).await;
    for (body, code) in [
        ("{oops", -32700),
        ("", -32700),
        // An empty batch (a non-empty one is received here: no version header means
        // 2025-03-26; see the batch tests below).
        ("[]", -32600),
        ("\"text\"", -32600),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600),
    ] {
        let r = post(addr, body, BOTH).await;
        assert_eq!(r.status, 400, "{body}");
        assert_eq!(r.headers["content-type"], "application/json");
        let v = r.json();
        assert_eq!(
            (v["error"]["code"].clone(), v["id"].clone()),
            (json!(code), json!(null)),
            "{body}"
        );
    }
    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}"#,
        BOTH,
    )
    .await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (400, json!(-32602), json!(9))
    );
}

#[tokio::test]
async fn dispatch_errors_are_200_in_band() {
    let addr = start(HttpOptions::default()).await;
    let r = post(addr, r#"{"jsonrpc":"2.0","id":3,"method":"no/such"}"#, JSON).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["error"]["code"], -32601);
}

#[tokio::test]
async fn content_type_variants_are_accepted_and_others_are_415() {
    let addr = start(HttpOptions::default()).await;
    for ct in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/json;charset=UTF-8",
    ] {
        let r = request(
            addr,
            Method::POST,
            "/mcp",
            &[("content-type", ct), ("accept", JSON)],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
        assert_eq!(r.status, 200, "{ct}");
    }
    let r = request(
        addr,
        Method::POST,
        "/mcp",
        &[("content-type", "text/plain"), ("accept", JSON)],
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    )
    .await;
    assert_eq!(r.status, 415);
    assert_eq!(r.json()["error"]["code"], -32600);
}

#[tokio::test]
async fn unacceptable_accept_is_406() {
    let addr = start(HttpOptions::default()).await;
    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "text/html",
    )
    .await;
    assert_eq!(r.status, 406);
    let r = post(
        addr,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "application/json;q=0, text/event-stream;q=0",
    )
    .await;
    assert_eq!(r.status, 406);
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let addr = start(HttpOptions {
        max_body_bytes: 1024,
        ..HttpOptions::default()
    })
    .await;
    let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"x".repeat(2048)}})
        .to_string();
    let r = post(addr, &big, JSON).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["error"]["code"], -32600);
}

#[tokio::test]
async fn other_verbs_are_405_and_other_paths_404() {
    let addr = start(HttpOptions::default()).await;
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let r = request(
            addr,
            method.clone(),
            "/mcp",
            &[("accept", "text/event-stream")],
            "",
        )
        .await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.headers["allow"], "POST");
        assert!(r.json()["error"].is_object());
    }
    let r = request(
        addr,
        Method::POST,
        "/other",
        &[("content-type", JSON)],
        "{}",
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_slow_call_does_not_hold_up_a_ping_on_another_connection() {
    let (addr, mut calls) = start_signalling(HttpOptions::default()).await;
    let slow = tokio::spawn(async move {
        post(addr, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1500}}}"#, JSON).await
    });
    // The slow call is running once its tool has started.
    let started = tokio::time::timeout(support::DEADLINE, calls.recv()).await;
    assert_eq!(started.expect("the slow call started"), Some(1500));
    let ping = post(addr, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, JSON).await;
    assert_eq!(ping.json()["id"], 2);
    assert!(
        !slow.is_finished(),
        "the ping came back while the slow call was still running"
    );
    assert_eq!(
        slow.await.unwrap().json()["result"]["content"][0]["text"],
        "slept 1500 ms"
    );
}

#[tokio::test]
async fn the_route_is_a_tower_service() {
    use tower_service::Service;
    let server = McpServer::new(ServerOptions::new("svc", "1"));
    let mut routes = Routes::new(server, HttpOptions::default());
    let req = hyper::Request::post("/mcp")
        .header("content-type", JSON)
        .header("accept", JSON)
        .body(http_body_util::Full::new(bytes::Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )))
        .unwrap();
    futures::future::poll_fn(|cx| {
        Service::<hyper::Request<http_body_util::Full<bytes::Bytes>>>::poll_ready(&mut routes, cx)
    })
    .await
    .unwrap();
    let response = routes.call(req).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    assert_eq!(&body[..], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
}

#[tokio::test]
async fn the_binary_serves_http() {
    // The URL it prints on an ephemeral port is the signal that it listens.
    let (url, mut child) = spawn_listening(&["serve", "--http", "127.0.0.1:0"], "info").await;
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let up = tokio::net::TcpStream::connect(addr).await.is_ok();
    assert!(up, "server did not listen");
    // The binary serves sessions by default: initialize, then call with the minted id.
    let init = post(addr, INIT, JSON).await;
    let session = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let r = request(
        addr,
        Method::POST,
        "/mcp",
        &[("content-type", JSON), ("accept", JSON), ("mcp-session-id", &session)],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
    )
    .await;
    assert_eq!(r.json()["result"]["content"][0]["text"], "hi");
    // SIGTERM shuts down cleanly with exit 0.
    let pid = child.id().unwrap();
    std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .unwrap();
    let status = tokio::time::timeout(support::DEADLINE, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_declared_oversized_body_is_refused_before_it_is_sent() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = start(HttpOptions::default()).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 99999999999\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut reply = vec![0u8; 1024];
    let n = tokio::time::timeout(support::DEADLINE, stream.read(&mut reply))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    let text = String::from_utf8_lossy(&reply[..n]);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
}

/// An endpoint (stateless, with an `echo` tool) admitting connections by `serving`, and with
/// this body limit.
async fn start_admitting(
    max_body_bytes: usize,
    serving: orkestrel_mcp::native::http::ServeOptions,
) -> support::server::TestServer {
    use orkestrel_mcp::native::endpoint::EndpointOptions;
    #[derive(Deserialize, schemars::JsonSchema)]
    struct Text {
        text: String,
    }
    let server = McpServer::new(ServerOptions::new("http-test", "1.0.0"));
    server.tools().add(Tool::new("echo", |a: Text| async move {
        Ok::<_, String>(a.text)
    }));
    #[derive(Deserialize, schemars::JsonSchema)]
    struct Bytes {
        bytes: usize,
    }
    server.tools().add(Tool::new("big", |a: Bytes| async move {
        Ok::<_, String>("x".repeat(a.bytes.min(64 << 20)))
    }));
    let mut options = EndpointOptions {
        sessions: None,
        ..EndpointOptions::default()
    };
    options.http.max_body_bytes = max_body_bytes;
    support::server::start_with(server, options, serving).await
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A ping on an open keep-alive connection; its status.
async fn ping_on(
    sender: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    addr: SocketAddr,
) -> u16 {
    let request = hyper::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from_static(
            PING.as_bytes(),
        )))
        .unwrap();
    let response = tokio::time::timeout(support::DEADLINE, sender.send_request(request))
        .await
        .expect("an answer within the deadline")
        .expect("an answer");
    support::http::finish(response).await.status
}

async fn keep_alive(
    addr: SocketAddr,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>> {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
}

#[tokio::test]
async fn connections_beyond_the_cap_get_503_at_once_and_the_open_ones_go_on() {
    let serving = orkestrel_mcp::native::http::ServeOptions {
        max_connections: 2,
        ..Default::default()
    };
    let srv = start_admitting(1024, serving).await;
    let mut a = keep_alive(srv.addr).await;
    let mut b = keep_alive(srv.addr).await;
    assert_eq!(ping_on(&mut a, srv.addr).await, 200);
    assert_eq!(ping_on(&mut b, srv.addr).await, 200);
    // A third connection is answered at once and closed; its request is never served.
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{PING}",
        srv.addr,
        PING.len()
    );
    let (status, body) = support::http::raw(srv.addr, request.as_bytes()).await;
    assert_eq!(status, 503, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (error["id"].clone(), error["error"]["code"].clone()),
        (serde_json::Value::Null, json!(-32000))
    );
    // The open connections keep working.
    assert_eq!(ping_on(&mut a, srv.addr).await, 200);
    assert_eq!(ping_on(&mut b, srv.addr).await, 200);
    // Once one closes, its place is free again.
    drop(b);
    support::eventually_async(support::DEADLINE, "a place frees up", || async {
        pinged_on_a_new_connection(srv.addr).await
    })
    .await;
    assert_eq!(ping_on(&mut a, srv.addr).await, 200);
}

/// A client that stops reading a large answer does not hold its connection for ever: once a
/// write has waited `write_stall` for room, the connection ends and its place under the cap is
/// free again (it was held as long as the client stayed, with the answer buffered).
#[tokio::test]
async fn a_client_that_stops_reading_its_answer_loses_the_connection_after_the_write_stall() {
    use tokio::io::AsyncWriteExt;
    let serving = orkestrel_mcp::native::http::ServeOptions {
        max_connections: 1,
        write_stall: std::time::Duration::from_millis(500),
        linger: std::time::Duration::from_millis(100),
        ..Default::default()
    };
    let srv = start_admitting(1024, serving).await;
    // 32 MiB asked for (more than loopback's socket buffers hold), on a socket that reads
    // little, and then nothing at all.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(srv.addr).await.unwrap();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"bytes":33554432}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{call}",
        srv.addr,
        call.len()
    );
    stalled.write_all(request.as_bytes()).await.unwrap();
    support::eventually_async(
        support::DEADLINE,
        "the stalled connection's place frees up",
        || async { pinged_on_a_new_connection(srv.addr).await },
    )
    .await;
    drop(stalled);
}

/// A ping on a connection of its own (closed after it) is answered `200`.
async fn pinged_on_a_new_connection(addr: SocketAddr) -> bool {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{PING}",
        PING.len()
    );
    support::http::raw(addr, request.as_bytes()).await.0 == 200
}

/// Write a whole oversized request (head and `body_bytes` of body) before reading anything, as
/// a simple client does, then read the reply to the end.
async fn write_all_then_read(addr: SocketAddr, head: String, body: Vec<u8>) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await
    };
    tokio::time::timeout(support::DEADLINE, write)
        .await
        .expect("written within the deadline")
        .expect("the whole body is taken: no broken pipe, no reset");
    let mut out = Vec::new();
    tokio::time::timeout(support::DEADLINE, stream.read_to_end(&mut out))
        .await
        .expect("the reply within the deadline")
        .expect("the reply is read: no reset");
    support::http::split_reply(&out)
}

/// 12 MiB: more than loopback's socket buffers hold, so without a lingering close the server
/// would close on unread data and the client's write would fail.
const BIG: usize = 12 * 1024 * 1024;

#[tokio::test]
async fn a_client_still_writing_an_oversized_body_reads_the_413() {
    let srv = start_admitting(1024, Default::default()).await;
    // Declared: refused at the head, while the body is still coming.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {BIG}\r\n\r\n",
        srv.addr
    );
    let (status, body) = write_all_then_read(srv.addr, head, vec![b' '; BIG]).await;
    assert_eq!(status, 413, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32600);
    // Chunked: refused once the read passes the limit.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        srv.addr
    );
    let chunk = 64 * 1024;
    let mut body = Vec::with_capacity(BIG + 4096);
    for _ in 0..BIG / chunk {
        body.extend_from_slice(format!("{chunk:x}\r\n").as_bytes());
        body.extend(std::iter::repeat_n(b' ', chunk));
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let (status, body) = write_all_then_read(srv.addr, head, body).await;
    assert_eq!(status, 413, "{body}");
}

#[tokio::test]
async fn our_http_client_reports_a_413_as_a_typed_error() {
    use orkestrel_mcp::client::{ClientEra, ClientError};
    let srv = start_admitting(4096, Default::default()).await;
    let big = "x".repeat(1024 * 1024);
    // 2026-07-28: the body's JSON-RPC error (the exchange reads the 413's body), typed.
    let client = support::client::http_client_to(
        &srv.url(),
        support::client::era_options(ClientEra::Modern),
    );
    tokio::time::timeout(support::DEADLINE, client.connect())
        .await
        .unwrap()
        .unwrap();
    let small = client.call("echo", json!({"text": "hi"}));
    tokio::time::timeout(support::DEADLINE, small)
        .await
        .unwrap()
        .unwrap();
    let err = tokio::time::timeout(support::DEADLINE, client.call("echo", json!({"text": big})))
        .await
        .unwrap()
        .unwrap_err();
    match &err {
        ClientError::HttpStatus {
            status: 413,
            error: Some(e),
            ..
        } => assert_eq!(e.code.0, -32600, "{err}"),
        ClientError::Rpc(e) => {
            assert_eq!(e.code.0, -32600, "{err}");
            assert!(e.message.contains("body over 4096 bytes"), "{err}");
        }
        other => panic!("expected the 413's error, got {other:?}"),
    }
    // Handshake era: a transport error carrying the status; the client stays usable.
    let client = support::client::http_client_to(&srv.url(), support::client::options());
    tokio::time::timeout(support::DEADLINE, client.connect())
        .await
        .unwrap()
        .unwrap();
    let err = tokio::time::timeout(support::DEADLINE, client.call("echo", json!({"text": big})))
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(m) if m.contains("413")),
        "{err:?}"
    );
    let small = client.call("echo", json!({"text": "hi"}));
    tokio::time::timeout(support::DEADLINE, small)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn valid_json_beyond_parser_limits_gets_exactly_one_answer_in_both_eras() {
    let addr = start(HttpOptions::default()).await;
    let modern = format!(r#""_meta":{}"#, support::json::meta());
    for (extra, version) in [("", "2025-11-25"), (modern.as_str(), support::json::V)] {
        for (text, id, code) in support::json::beyond_limits(extra) {
            let r = request(
                addr,
                Method::POST,
                "/mcp",
                &[
                    ("content-type", JSON),
                    ("accept", BOTH),
                    ("mcp-protocol-version", version),
                    ("mcp-method", "tools/list"),
                ],
                text.clone(),
            )
            .await;
            let body = if r.header("content-type") == Some("text/event-stream") {
                support::http::parse_events(&r.body)
                    .into_iter()
                    .find(|e| !e.data.is_empty())
                    .expect("one event")
                    .data
            } else {
                r.body.clone()
            };
            support::json::check_limit_answer(&body, &id, code);
            let expected = if code == 0 { 200 } else { 400 };
            assert_eq!(r.status, expected, "{version}: {body}");
        }
    }
}

#[tokio::test]
async fn request_heads_over_the_bound_are_431() {
    let addr = start(HttpOptions::default()).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let big = format!("X-Big: {}", "a".repeat(http::MAX_HEAD_BYTES));
    let (status, _) = support::http::raw_post(addr, &[big.as_str()], ping).await;
    assert_eq!(status, 431);
    let many: Vec<String> = (0..=http::MAX_HEADERS)
        .map(|i| format!("X-H{i}: v"))
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let (status, _) = support::http::raw_post(addr, &many, ping).await;
    assert_eq!(status, 431);
    // Under the bounds the same request is served.
    let (status, body) = support::http::raw_post(addr, &["X-Small: a"], ping).await;
    assert_eq!((status, body.contains(r#""id":1"#)), (200, true), "{body}");
}

/// Every request gets exactly one answer, even one whose handler panics — at once or after a
/// wait — on either reply: a `-32603` error with its id, the SSE stream then ending.
#[tokio::test]
async fn a_panicking_handler_gets_an_error_with_its_id() {
    use orkestrel_mcp::prompts::Prompt;
    let server = McpServer::new(ServerOptions::new("http-test", "1.0.0"));
    server.prompts().add(Prompt::new("boom", |_, _| async {
        panic!("boom");
    }));
    server.prompts().add(Prompt::new("late", |_, _| async {
        tokio::task::yield_now().await;
        panic!("late");
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http::serve(
        listener,
        Routes::new(server, HttpOptions::default()),
        std::future::pending(),
    ));
    for (id, name) in [(1, "boom"), (2, "late")] {
        let body = json!({"jsonrpc":"2.0","id":id,"method":"prompts/get","params":{"name":name}})
            .to_string();
        for accept in [JSON, BOTH] {
            let r = post(addr, &body, accept).await;
            assert_eq!(r.status, 200, "{name} {accept}");
            let messages = r.messages();
            assert_eq!(messages.len(), 1, "{name} {accept}: {messages:?}");
            assert_eq!(messages[0]["id"], id, "{name} {accept}");
            assert_eq!(messages[0]["error"]["code"], -32603, "{name} {accept}");
        }
    }
}

// ---- JSON-RPC batches: a stateless POST at 2025-03-26 (header, or none) -------------------

const BATCH: &str = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}},{"jsonrpc":"2.0","id":3,"method":"nope"},4]"#;

/// POST `body` with `Accept: accept` and, when given, `MCP-Protocol-Version: version`.
async fn post_version(
    addr: SocketAddr,
    body: &str,
    accept: &str,
    version: Option<&str>,
) -> support::http::Reply {
    let mut headers = vec![("content-type", "application/json"), ("accept", accept)];
    if let Some(version) = version {
        headers.push(("mcp-protocol-version", version));
    }
    request(addr, Method::POST, "/mcp", &headers, body.to_owned()).await
}

#[tokio::test]
async fn a_stateless_batch_without_a_version_header_or_at_2025_03_26_is_answered_by_one_array() {
    let addr = start(HttpOptions::default()).await;
    for version in [None, Some("2025-03-26")] {
        let r = post_version(addr, BATCH, JSON, version).await;
        assert_eq!(r.status, 200, "{version:?}");
        assert_eq!(r.headers["content-type"], "application/json");
        assert_eq!(
            r.json(),
            json!([
                {"jsonrpc":"2.0","id":1,"result":{}},
                {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slept 1 ms"}]}},
                {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: nope"}},
                {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a message must be a JSON object"}}
            ]),
            "{version:?}"
        );
    }
    // SSE: each response its own event (the invalid element's error first), then the end.
    let r = post_version(addr, BATCH, BOTH, None).await;
    assert_eq!(r.headers["content-type"], "text/event-stream");
    let mut ids: Vec<String> = r.messages().iter().map(|m| m["id"].to_string()).collect();
    assert_eq!(ids[0], "null", "{ids:?}");
    ids.sort();
    assert_eq!(ids, ["1", "2", "3", "null"]);
    // Only notifications and responses: 202, no body.
    let quiet = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"s","result":{}}]"#;
    let r = post_version(addr, quiet, BOTH, None).await;
    assert_eq!((r.status, r.body.as_str()), (202, ""));
}

/// A `notifications/cancelled` in a stateless batch cancels the request it names, as in a
/// session or on stdio: the request gets no entry, the rest are answered (all cancelled: 202).
#[tokio::test]
async fn a_cancellation_in_a_stateless_batch_cancels_its_request() {
    let addr = start(HttpOptions::default()).await;
    let slow = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}"#;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let batch = format!(r#"[{slow},{{"jsonrpc":"2.0","id":2,"method":"ping"}},{cancel}]"#);
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        post_version(addr, &batch, JSON, None),
    )
    .await
    .expect("the cancelled call still ran");
    assert_eq!(r.json(), json!([{"jsonrpc":"2.0","id":2,"result":{}}]));
    let alone = format!("[{slow},{cancel}]");
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        post_version(addr, &alone, JSON, None),
    )
    .await
    .expect("the cancelled call still ran");
    assert_eq!((r.status, r.body.as_str()), (202, ""));
}

#[tokio::test]
async fn a_stateless_batch_at_another_revision_is_refused_with_400_as_before() {
    let addr = start(HttpOptions::default()).await;
    for version in ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let r = post_version(addr, BATCH, BOTH, Some(version)).await;
        assert_eq!(r.status, 400, "{version}");
        assert_eq!(
            r.body,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}}"#,
            "{version}"
        );
    }
    // Refused whole where received: initialize inside, an empty batch.
    let init = r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}]"#;
    let r = post_version(addr, init, JSON, None).await;
    assert_eq!(r.status, 400);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize must not be part"));
}

/// Once shutdown begins the listener is closed: a new connection is refused by the kernel at
/// once while the calls in flight drain (it completed its handshake into the still-open
/// listener's backlog and waited unanswered until the process exited); the call in flight is
/// still answered.
#[tokio::test]
async fn a_shutdown_refuses_new_connections_while_the_calls_in_flight_drain() {
    use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
    use std::sync::Arc;
    #[derive(Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let held = Arc::new(tokio::sync::Notify::new());
    let (entered_tx, mut entered) = unbounded_channel();
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let release = held.clone();
    server.tools().add(Tool::new("hold", move |_: Nothing| {
        let (release, entered_tx) = (release.clone(), entered_tx.clone());
        async move {
            let _ = entered_tx.send(());
            release.notified().await;
            Ok::<_, String>("released")
        }
    }));
    let options = EndpointOptions {
        sessions: None,
        ..EndpointOptions::default()
    };
    let endpoint = Endpoint::new(server, options).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    };
    let serving = tokio::spawn(http::serve_with(
        listener,
        endpoint,
        shutdown,
        http::ServeOptions::default(),
    ));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "hold", "arguments": {}}})
    .to_string();
    let call = tokio::spawn(async move {
        support::post(addr, &[("mcp-protocol-version", "2025-11-25")], &body).await
    });
    tokio::time::timeout(support::DEADLINE, entered.recv())
        .await
        .expect("the call starts")
        .unwrap();
    stop.send(()).unwrap();
    support::eventually_async(support::DEADLINE, "a new connection is refused", || async {
        tokio::net::TcpStream::connect(addr).await.is_err()
    })
    .await;
    assert!(!call.is_finished(), "the call in flight is still draining");
    held.notify_one();
    let reply = tokio::time::timeout(support::DEADLINE, call)
        .await
        .expect("the call is answered")
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body.contains("released"), "{}", reply.body);
    tokio::time::timeout(support::DEADLINE, serving)
        .await
        .expect("serving ends once drained")
        .unwrap()
        .unwrap();
}
