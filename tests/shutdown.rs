//! Clean shutdowns of the real binary: SIGTERM during calls in flight on WebSocket and HTTP
//! (SSE), stdio EOF with an open listen stream, and the stdio client ending its child's whole
//! process group. Every wait is bounded ([`DEADLINE`]); nothing sleeps to synchronise.
#![cfg(all(feature = "native", unix))]

mod support;

use std::net::SocketAddr;

use futures::{SinkExt, StreamExt};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use support::json::{initialize, meta, SUB_ID};
use support::server::{spawn_listening, ChildServer};
use support::{new_session, SseStream, DEADLINE, POST};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A `progress` call of 3 steps, 300 ms apart, reporting progress under token `p`.
fn slow_call(id: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "progress", "arguments": { "steps": 3, "ms": 300 },
        "_meta": { "progressToken": "p" } } })
    .to_string()
}

async fn ws_next(ws: &mut Ws) -> Option<Message> {
    tokio::time::timeout(DEADLINE, ws.next())
        .await
        .expect("a frame within the deadline")
        .and_then(Result::ok)
}

/// The next text frame as JSON (pings skipped); panics on anything else.
async fn ws_json(ws: &mut Ws) -> Value {
    loop {
        match ws_next(ws).await {
            Some(Message::Text(t)) => return serde_json::from_str(&t).unwrap(),
            Some(Message::Ping(_) | Message::Pong(_)) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

fn is_progress(message: &Value) -> bool {
    message["method"] == "notifications/progress"
}

#[tokio::test]
async fn sigterm_answers_the_calls_in_flight_then_closes_websockets_with_1001_and_exits_0() {
    let (url, mut child) = spawn_listening(&["serve", "--http", "127.0.0.1:0"], "info").await;
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();

    // A WebSocket with a call in flight (its first progress notification shows it runs).
    let ws_url = url.replacen("http://", "ws://", 1);
    let (mut ws, _) = tokio::time::timeout(DEADLINE, tokio_tungstenite::connect_async(ws_url))
        .await
        .expect("handshake within the deadline")
        .expect("handshake");
    ws.send(Message::text(initialize(1, "2025-11-25")))
        .await
        .unwrap();
    assert_eq!(ws_json(&mut ws).await["id"], 1);
    ws.send(Message::text(
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
    ))
    .await
    .unwrap();
    ws.send(Message::text(slow_call(2))).await.unwrap();
    assert!(is_progress(&ws_json(&mut ws).await));

    // An HTTP call in flight on its SSE response.
    let session = new_session(addr, "2025-11-25").await;
    let headers: Vec<(&str, &str)> = POST
        .iter()
        .copied()
        .chain([
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ])
        .collect();
    let response = support::open(addr, "POST", &headers, &slow_call(7)).await;
    assert_eq!(response.status(), 200);
    let mut sse = SseStream::new(response);
    let first = loop {
        let event = sse.next().await.expect("an event");
        if !event.data.is_empty() {
            break event.json(); // the priming event has none
        }
    };
    assert!(is_progress(&first), "{first}");

    kill(Pid::from_raw(child.id().unwrap() as i32), Signal::SIGTERM).unwrap();

    // The HTTP call is answered on its stream, which then ends.
    let rest = sse.rest().await;
    let answer = rest
        .iter()
        .filter(|e| !e.data.is_empty())
        .map(support::Event::json)
        .find(|m| m["id"] == 7)
        .unwrap_or_else(|| panic!("the HTTP call was answered: {rest:?}"));
    assert!(answer["result"]["content"].is_array(), "{answer}");
    // The listener closed when the shutdown began (before the stream above ended): a new
    // connection is refused at once, not accepted by the kernel and left unanswered.
    let connected = tokio::time::timeout(DEADLINE, tokio::net::TcpStream::connect(addr))
        .await
        .expect("a connection attempt is answered at once");
    assert!(
        connected.is_err(),
        "a new connection during the drain was accepted"
    );

    // The WebSocket call is answered, a request sent now is refused, then close 1001.
    ws.send(Message::text(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }).to_string(),
    ))
    .await
    .unwrap();
    let (mut answered, mut refused) = (None, None);
    let close = loop {
        match ws_next(&mut ws).await {
            Some(Message::Text(t)) => {
                let m: Value = serde_json::from_str(&t).unwrap();
                if m["id"] == 2 {
                    answered = Some(m);
                } else if m["id"] == 3 {
                    refused = Some(m);
                }
            }
            Some(Message::Close(frame)) => break frame,
            Some(_) => {}
            None => panic!("the WebSocket ended without a close frame (1006)"),
        }
    };
    let answered = answered.expect("the WebSocket call in flight was answered");
    assert!(answered["result"]["content"].is_array(), "{answered}");
    if let Some(refused) = refused {
        // Sent during the drain: refused at once, never dropped.
        assert_eq!(refused["error"]["code"], -32000, "{refused}");
    }
    assert_eq!(close.expect("a close frame").code, CloseCode::Away);
    let _ = ws.close(None).await;

    let status = tokio::time::timeout(DEADLINE, child.wait())
        .await
        .expect("exits within the deadline")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn stdio_exits_at_eof_with_an_open_listen_stream_which_is_answered() {
    let mut c = ChildServer::spawn(&["serve", "--stdio"]);
    c.send(
        json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = c.read_json().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    c.close_stdin();
    let end = c.read_json().await;
    assert_eq!(end["id"], "L", "{end}");
    assert_eq!(end["result"]["resultType"], "complete", "{end}");
    assert_eq!(end["result"]["_meta"][SUB_ID], "L", "{end}");
    let status = tokio::time::timeout(DEADLINE, c.child.wait())
        .await
        .expect("exits on stdin EOF even with a listen open")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// `sh -c` script: write "`$$` `$!`" (the shell, which then becomes the server, and a
/// grandchild `sleep`) to `file`, then exec the real server.
fn wrapper(file: &std::path::Path) -> String {
    format!(
        "sleep 1000 & echo $$ $! > {}; exec {} serve --stdio",
        file.display(),
        support::server::BIN
    )
}

/// `orkestrel-mcp bridge --stdio -- <upstream>`, its stdin and stdout piped.
fn stdio_bridge(upstream: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(support::server::BIN)
        .args(["bridge", "--stdio", "--"])
        .args(upstream)
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn pid_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("orkestrel-{name}-{}.pids", std::process::id()))
}

/// The two pids the wrapper wrote (polled: the shell writes it as it starts).
async fn read_pids(file: &std::path::Path) -> Vec<i32> {
    let mut pids = Vec::new();
    support::eventually(DEADLINE, "the wrapper wrote its pids", || {
        pids = std::fs::read_to_string(file)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        pids.len() == 2
    })
    .await;
    let _ = std::fs::remove_file(file);
    pids
}

/// A process is gone: no `/proc/<pid>`, or only its zombie (dead, waiting to be reaped).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

#[tokio::test]
async fn closing_the_stdio_client_ends_the_childs_whole_process_group() {
    let file = pid_file("client");
    let (client, _transport) = support::client::sh_client(&wrapper(&file), DEADLINE);
    client
        .connect()
        .await
        .expect("connects through the wrapper");
    let pids = read_pids(&file).await;
    assert!(pids.iter().all(|&p| !gone(p)), "both run: {pids:?}");
    client.disconnect().await;
    support::eventually(DEADLINE, "the server and its grandchild are gone", || {
        pids.iter().all(|&p| gone(p))
    })
    .await;
}

#[tokio::test]
async fn a_bridge_killed_with_sigterm_ends_its_servers_process_group() {
    // SIGHUP (a closed terminal) too: with one upstream there is nothing to reload.
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let file = pid_file("bridge");
        let script = wrapper(&file);
        let (_url, mut bridge) = spawn_listening(
            &["bridge", "--http", "127.0.0.1:0", "--", "sh", "-c", &script],
            "info",
        )
        .await;
        let pids = read_pids(&file).await;
        assert!(pids.iter().all(|&p| !gone(p)), "both run: {pids:?}");
        kill(Pid::from_raw(bridge.id().unwrap() as i32), signal).unwrap();
        let status = tokio::time::timeout(DEADLINE, bridge.wait())
            .await
            .expect("the bridge exits within the deadline")
            .unwrap();
        assert!(status.success(), "{signal}: {status}");
        support::eventually(DEADLINE, "the server and its grandchild are gone", || {
            pids.iter().all(|&p| gone(p))
        })
        .await;
    }
}

#[tokio::test]
async fn a_bridge_stopped_while_its_server_starts_ends_it() {
    // The upstream never answers `initialize`: the bridge is still connecting.
    let file = pid_file("starting");
    let script = format!(
        "sleep 1000 & echo $$ $! > {}; exec sleep 1000",
        file.display()
    );
    let mut bridge = tokio::process::Command::new(support::server::BIN)
        .args(["bridge", "--http", "127.0.0.1:0", "--", "sh", "-c", &script])
        .env("RUST_LOG", "warn")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pids = read_pids(&file).await;
    kill(Pid::from_raw(bridge.id().unwrap() as i32), Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(DEADLINE, bridge.wait())
        .await
        .expect("the bridge exits within the deadline")
        .unwrap();
    assert!(status.success(), "{status}");
    support::eventually(
        DEADLINE,
        "the starting server and its child are gone",
        || pids.iter().all(|&p| gone(p)),
    )
    .await;
}

#[tokio::test]
async fn a_stdio_bridge_stopped_by_sigterm_exits_while_its_stdin_is_open() {
    let mut bridge = stdio_bridge(&[support::server::BIN, "serve", "--stdio"]);
    // Serving: it answers a ping (so the signal finds it past its start).
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut stdin = bridge.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let mut lines = tokio::io::BufReader::new(bridge.stdout.take().unwrap()).lines();
    let pong = tokio::time::timeout(DEADLINE, lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert!(pong.is_some_and(|l| l.contains("\"id\":1")));
    kill(Pid::from_raw(bridge.id().unwrap() as i32), Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(DEADLINE, bridge.wait())
        .await
        .expect("the bridge exits with its stdin still open")
        .unwrap();
    assert!(status.success(), "{status}");
    drop(stdin);
}

/// A stdio bridge whose upstream dies during a call answers the call (the upstream's end fails
/// it) before it exits: its serving ends as at the end of stdin, not dropped with the answer
/// unwritten. (A race: the answer and the end of the serving came at once; ten rounds.)
#[tokio::test]
async fn a_stdio_bridge_whose_upstream_dies_answers_the_call_in_flight_then_exits() {
    for round in 0..10 {
        upstream_dies_during_a_call(round).await;
    }
}

async fn upstream_dies_during_a_call(round: u32) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let file = pid_file(&format!("dying-{round}"));
    // No process left behind holding its output: the upstream's end is seen at once.
    let script = format!(
        "echo $$ $$ > {}; exec {} serve --stdio",
        file.display(),
        support::server::BIN
    );
    let mut bridge = stdio_bridge(&["sh", "-c", &script]);
    let pids = read_pids(&file).await;
    let mut stdin = bridge.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(bridge.stdout.take().unwrap()).lines();
    macro_rules! next {
        () => {
            tokio::time::timeout(DEADLINE, lines.next_line())
                .await
                .expect("a line within the deadline")
                .unwrap()
        };
    }
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    assert!(next!().is_some_and(|l| l.contains("\"id\":1")));
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"steps":1000,"ms":50},"_meta":{"progressToken":"p"}}}"#;
    stdin
        .write_all(
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n{call}\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    // The call runs upstream: its progress comes through.
    let progress = next!().expect("a progress notification");
    assert!(progress.contains("notifications/progress"), "{progress}");
    kill(Pid::from_raw(pids[0]), Signal::SIGKILL).unwrap();
    let answer = loop {
        let line = next!().expect("the call's answer before the bridge's stdout ends");
        if line.contains("\"id\":2") {
            break line;
        }
    };
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    let status = tokio::time::timeout(DEADLINE, bridge.wait())
        .await
        .expect("the bridge exits")
        .unwrap();
    assert_eq!(status.code(), Some(1), "the upstream is gone: {status}");
    drop(stdin);
}
