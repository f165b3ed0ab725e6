//! Correlation, deadline, close and event behaviour over a scripted in-memory transport: no I/O,
//! no runtime (futures' executor), and no timed assertions (an injected timer fires on demand).

use std::sync::{Arc, Mutex};

use futures::executor::block_on;
use futures::future::join;
use futures::FutureExt;
use serde_json::{json, Value};

use super::test_support::{manual_sleep, yield_now, Scripted, Stuck};
use super::*;
use crate::server::{McpServer, ServerOptions};
use crate::wire::jsonrpc::ErrorCode;
use crate::wire::jsonrpc::JsonRpcMessage;
use crate::ToolRegistry;

/// The test's side of a [`Scripted`] transport: it reads what the client sent, in order, and
/// answers through the client's sink.
struct Peer {
    transport: Arc<Scripted>,
}

impl Peer {
    async fn next(&self) -> JsonRpcMessage {
        self.transport.next().await
    }
    async fn request(&self, method: &str) -> JsonRpcRequest {
        self.transport.request(method).await
    }
    fn deliver(&self, value: Value) -> Vec<JsonRpcMessage> {
        self.transport.deliver(value)
    }
    fn reply(&self, id: &RequestId, result: Value) {
        self.deliver(json!({"jsonrpc":"2.0","id":id.to_value(),"result":result}));
    }
    async fn handshake(&self, version: &str) {
        let init = self.request("initialize").await;
        self.reply(
            &init.id,
            json!({"protocolVersion":version,"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}),
        );
        match self.next().await {
            JsonRpcMessage::Notification(n) => assert_eq!(n.method, "notifications/initialized"),
            other => panic!("expected notifications/initialized, got {other:?}"),
        }
    }
    fn sent_now(&self) -> Vec<JsonRpcMessage> {
        self.transport.unread_now()
    }
}

fn pair() -> (McpClient, Peer) {
    let transport = Arc::new(Scripted::default());
    let client = McpClient::with_transport(
        transport.clone(),
        ClientOptions::new("test-client", "0.0.1")
            .with_era(ClientEra::Legacy)
            .with_sleep(manual_sleep()),
    );
    let peer = Peer { transport };
    (client, peer)
}

fn connected() -> (McpClient, Peer) {
    let (client, peer) = pair();
    let (r, ()) = block_on(join(client.connect(), peer.handshake("2025-06-18")));
    r.unwrap();
    (client, peer)
}

fn events(client: &McpClient) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    client.on(move |e| {
        let entry = match e {
            ClientEvent::Disconnect { cause } => format!("disconnect: {cause}"),
            ClientEvent::Notification(n) => format!("notification: {}", n.method),
            ClientEvent::Error(err) => format!("error: {err}"),
            other => other.name().to_owned(),
        };
        l.lock().unwrap().push(entry);
    });
    log
}

#[test]
fn connect_sends_initialize_then_initialized_and_is_idempotent() {
    let (client, peer) = pair();
    let log = events(&client);
    let handshake = async {
        let init = peer.request("initialize").await;
        assert_eq!(init.id, RequestId::Number(1));
        let params = Value::Object(init.params.clone().unwrap());
        assert_eq!(
            params["protocolVersion"],
            crate::protocol::LATEST_PROTOCOL_VERSION
        );
        assert_eq!(params["capabilities"], json!({}));
        assert_eq!(params["clientInfo"]["name"], "test-client");
        peer.reply(
            &init.id,
            json!({"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}),
        );
        assert!(
            matches!(peer.next().await, JsonRpcMessage::Notification(n) if n.method == "notifications/initialized")
        );
    };
    let (r, ()) = block_on(join(client.connect(), handshake));
    r.unwrap();
    assert!(client.is_connected());
    assert_eq!(client.protocol_version().as_deref(), Some("2025-06-18"));
    block_on(client.connect()).unwrap();
    assert!(peer.sent_now().is_empty(), "a second connect sends nothing");
    assert_eq!(*log.lock().unwrap(), vec!["connect"]);
}

#[test]
fn an_unsupported_version_fails_connect_and_closes() {
    let (client, peer) = pair();
    let script = async {
        let init = peer.request("initialize").await;
        peer.reply(
            &init.id,
            json!({"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}),
        );
    };
    let (r, ()) = block_on(join(client.connect(), script));
    let err = r.unwrap_err();
    assert!(
        matches!(&err, ClientError::UnsupportedVersion { version, .. } if version == "1999-01-01")
    );
    assert!(err.to_string().contains("1999-01-01"));
    assert!(!client.is_connected());
    assert_eq!(peer.transport.closes(), 1);
    assert!(peer.sent_now().is_empty(), "no initialized notification");
}

#[test]
fn any_supported_version_is_accepted() {
    for version in SUPPORTED_PROTOCOL_VERSIONS {
        let (client, peer) = pair();
        let (r, ()) = block_on(join(client.connect(), peer.handshake(version)));
        r.unwrap();
        assert_eq!(client.protocol_version().as_deref(), Some(*version));
    }
}

#[test]
fn a_malformed_initialize_result_fails_connect() {
    let (client, peer) = pair();
    let script = async {
        let init = peer.request("initialize").await;
        peer.reply(&init.id, json!({"nope": true}));
    };
    let (r, ()) = block_on(join(client.connect(), script));
    assert!(matches!(r, Err(ClientError::InvalidResponse(_))));
}

#[test]
fn requests_before_connect_fail_at_once() {
    let (client, _peer) = pair();
    assert_eq!(block_on(client.ping()), Err(ClientError::NotConnected));
}

#[test]
fn concurrent_requests_route_to_their_own_pending_by_exact_id() {
    let (client, peer) = connected();
    let script = async {
        let a = peer.request("tools/call").await;
        let b = peer.request("tools/call").await;
        assert_ne!(a.id, b.id);
        // Ids are monotonic integers; a string id equal in text matches nothing.
        let RequestId::Number(n) = b.id else { panic!() };
        peer.deliver(json!({"jsonrpc":"2.0","id":n.to_string(),"result":{}}));
        peer.deliver(json!({"jsonrpc":"2.0","id":9999,"result":{}}));
        peer.reply(&b.id, json!({"content":[{"type":"text","text":"\"b\""}]}));
        peer.reply(&a.id, json!({"content":[{"type":"text","text":"\"a\""}]}));
        // A duplicate for an answered id is dropped.
        peer.reply(&a.id, json!({"content":[]}));
    };
    let calls = join(
        client.call("x", json!({"k": 1})),
        client.call("y", Value::Null),
    );
    let ((a, b), ()) = block_on(join(calls, script));
    assert_eq!(a.unwrap(), Some(json!("a")));
    assert_eq!(b.unwrap(), Some(json!("b")));
}

#[test]
fn a_response_with_both_or_neither_result_and_error_fails_as_invalid() {
    let (client, peer) = connected();
    for body in [
        json!({"result":{},"error":{"code":1,"message":"m"}}),
        json!({}),
        json!({"error":{"code":"x"}}),
    ] {
        let script = async {
            let r = peer.request("ping").await;
            let mut msg = body.clone();
            msg["jsonrpc"] = json!("2.0");
            msg["id"] = r.id.to_value();
            peer.deliver(msg);
        };
        let (r, ()) = block_on(join(client.ping(), script));
        assert!(
            matches!(r, Err(ClientError::InvalidResponse(_))),
            "{body}: {r:?}"
        );
    }
    // The client still works afterwards.
    let script = async {
        let r = peer.request("ping").await;
        peer.reply(&r.id, json!({}));
    };
    let (r, ()) = block_on(join(client.ping(), script));
    r.unwrap();
}

#[test]
fn an_error_response_keeps_code_and_data() {
    let (client, peer) = connected();
    let script = async {
        let r = peer.request("tools/call").await;
        peer.deliver(json!({"jsonrpc":"2.0","id":r.id.to_value(),"error":{"code":-32602,"message":"Unknown tool: z","data":{"x":1}}}));
    };
    let (r, ()) = block_on(join(client.call("z", json!({})), script));
    let err = r.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::INVALID_PARAMS));
    assert_eq!(err.to_string(), "MCP error -32602: Unknown tool: z");
    let ClientError::Rpc(obj) = err else { panic!() };
    assert_eq!(obj.data, Some(json!({"x":1})));
}

#[test]
fn server_ping_is_answered_and_other_server_requests_get_method_not_found() {
    let (client, peer) = connected();
    let replies = peer.deliver(json!({"jsonrpc":"2.0","id":"s1","method":"ping"}));
    assert_eq!(
        replies,
        vec![JsonRpcMessage::Response(JsonRpcResponse::result(
            "s1".into(),
            json!({})
        ))]
    );
    let replies = peer.deliver(json!({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage"}));
    let [JsonRpcMessage::Response(r)] = replies.as_slice() else {
        panic!("{replies:?}")
    };
    assert_eq!(r.id, Some(RequestId::Number(7)));
    assert_eq!(
        r.payload.as_ref().unwrap_err().code,
        ErrorCode::METHOD_NOT_FOUND
    );
    drop(client);
}

/// JSON-RPC 2.0 batch: the requests of a batch the client answers at once get one array, in
/// the batch's order, each exactly once; its notifications and responses are taken as alone and
/// answered by nothing; a batch of only those gets nothing; `[]` gets one `-32600`, id `null`.
#[test]
fn a_batch_of_server_requests_is_answered_by_one_array_and_an_empty_batch_by_one_error() {
    let (client, peer) = connected();
    let log = events(&client);
    let reply = peer.transport.deliver_reply(json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},
        {"jsonrpc":"2.0","id":"two","method":"roots/list"},
        {"jsonrpc":"2.0","id":99,"result":{}},
        {"jsonrpc":"2.0","id":3,"method":5}
    ]));
    let Some(SinkReply::Batch(batch)) = reply else {
        panic!("one array, not {reply:?}")
    };
    let answered: Vec<_> = batch
        .responses()
        .iter()
        .map(|r| (r.id.clone(), r.payload.as_ref().err().map(|e| e.code)))
        .collect();
    assert_eq!(
        answered,
        [
            (Some(RequestId::Number(1)), None),
            (
                Some(RequestId::String("two".into())),
                Some(ErrorCode::METHOD_NOT_FOUND)
            ),
            (Some(RequestId::Number(3)), Some(ErrorCode::INVALID_REQUEST)),
        ]
    );
    let text: Value = serde_json::from_str(&SinkReply::Batch(batch).to_json()).unwrap();
    assert_eq!(
        text.as_array().map(Vec::len),
        Some(3),
        "one JSON array: {text}"
    );
    assert!(log.lock().unwrap()[0].starts_with("notification: notifications/message"));
    // Nothing to answer: nothing is written (not an empty array).
    let quiet = peer.transport.deliver_reply(json!([
        {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"y"}},
        {"jsonrpc":"2.0","id":98,"result":{}}
    ]));
    assert_eq!(quiet, None);
    // An empty batch is invalid: one error, id null (not an array), and an error event.
    let empty = peer.transport.deliver_reply(json!([]));
    let Some(SinkReply::Message(JsonRpcMessage::Response(error))) = empty else {
        panic!("one error, not {empty:?}")
    };
    assert_eq!(error.id, None);
    assert_eq!(error.payload.unwrap_err().code, ErrorCode::INVALID_REQUEST);
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|e| e.contains("the server sent an empty batch")),
        "{log:?}"
    );
    // A single request still gets a single message.
    let single = peer
        .transport
        .deliver_reply(json!({"jsonrpc":"2.0","id":4,"method":"ping"}));
    assert!(matches!(single, Some(SinkReply::Message(_))), "{single:?}");
    assert!(
        peer.transport.take_batches().is_empty(),
        "every answer was returned, none sent later"
    );
    drop(client);
}

#[test]
fn notifications_and_unmatched_errors_surface_as_events() {
    let (client, peer) = connected();
    let log = events(&client);
    assert!(peer
        .deliver(
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}})
        )
        .is_empty());
    peer.deliver(
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
    );
    peer.deliver(json!("junk"));
    let log = log.lock().unwrap();
    assert_eq!(log[0], "notification: notifications/message");
    assert!(log[1].starts_with("error: MCP error -32700"), "{log:?}");
    assert!(log[2].starts_with("error: invalid MCP response"), "{log:?}");
}

#[test]
fn a_deadline_fails_the_call_sends_cancelled_and_ignores_the_late_reply() {
    let (client, peer) = connected();
    let r = block_on(client.call_with(
        "slow",
        json!({}),
        RequestOptions::with_timeout(Duration::ZERO),
    ));
    assert_eq!(
        r,
        Err(ClientError::Timeout {
            method: "tools/call".into(),
            timeout_ms: 0
        })
    );
    let sent = peer.sent_now();
    let [JsonRpcMessage::Request(call), JsonRpcMessage::Notification(cancel)] = sent.as_slice()
    else {
        panic!("{sent:?}")
    };
    assert_eq!(cancel.method, "notifications/cancelled");
    assert_eq!(
        cancel.params.as_ref().unwrap()["requestId"],
        call.id.to_value()
    );
    // The late reply is ignored, and the client keeps working.
    peer.reply(&call.id, json!({"content":[]}));
    let script = async {
        let r = peer.request("ping").await;
        peer.reply(&r.id, json!({}));
    };
    let (r, ()) = block_on(join(client.ping(), script));
    r.unwrap();
}

#[test]
fn the_default_timer_really_expires() {
    let transport = Arc::new(Scripted::default());
    let client = McpClient::with_transport(
        transport.clone(),
        ClientOptions::new("c", "1")
            .with_era(ClientEra::Legacy)
            .with_timeout(Duration::from_millis(20)),
    );
    let peer = Peer { transport };
    // The server answers initialize, then never answers again.
    let (r, ()) = block_on(join(client.connect(), peer.handshake("2025-06-18")));
    r.unwrap();
    assert!(block_on(client.ping()).unwrap_err().is_timeout());
}

/// A message's text with a leading byte order mark (a WebSocket frame, a stdio line, a custom
/// transport's string) is read as the message (RFC 8259 §8.1), not skipped as "not JSON".
#[test]
fn a_message_text_with_a_byte_order_mark_is_read() {
    use futures::FutureExt;
    let (client, peer) = connected();
    let mut ping = Box::pin(client.ping());
    assert!(ping.as_mut().now_or_never().is_none(), "sent, waiting");
    let request = block_on(peer.request("ping"));
    let answer = json!({"jsonrpc": "2.0", "id": request.id, "result": {}});
    let text = format!("\u{feff}{answer}");
    assert!(peer
        .transport
        .sink()
        .receive_text(text.as_bytes())
        .is_none());
    let pinged = ping.now_or_never().expect("the ping is answered");
    pinged.unwrap();
}

#[test]
fn a_transport_close_fails_every_pending_request_at_once() {
    let (client, peer) = connected();
    let log = events(&client);
    let script = async {
        peer.request("ping").await;
        peer.request("tools/call").await;
        let sink = peer.transport.sink();
        sink.closed("server process exited with status 3");
    };
    let ((a, b), ()) = block_on(join(
        join(client.ping(), client.call("x", json!({}))),
        script,
    ));
    for r in [a.map(|_| ()), b.map(|_| ())] {
        assert_eq!(
            r,
            Err(ClientError::closed("server process exited with status 3"))
        );
    }
    assert!(!client.is_connected());
    assert_eq!(
        *log.lock().unwrap(),
        vec!["disconnect: server process exited with status 3"]
    );
    // Later calls fail at once with the same cause.
    assert!(block_on(client.ping()).unwrap_err().is_closed());
    // disconnect after a transport close releases the transport but fires nothing more.
    block_on(client.disconnect());
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn a_fatal_send_failure_fails_all_pending_and_a_per_request_one_only_its_own() {
    let (client, peer) = connected();
    peer.transport
        .fail_sends(Some(ClientError::Transport("HTTP 500".into())));
    assert_eq!(
        block_on(client.ping()),
        Err(ClientError::Transport("HTTP 500".into()))
    );
    assert!(client.is_connected());
    peer.transport.fail_sends(None);
    let script = async {
        peer.request("tools/call").await;
        peer.transport
            .fail_sends(Some(ClientError::closed("broken pipe")));
    };
    let ((pending, failed), ()) = block_on(join(
        async {
            let first = client.call("x", json!({}));
            let second = async {
                // Let the first request go out before the pipe breaks.
                yield_now().await;
                client.ping().await
            };
            join(first, second).await
        },
        script,
    ));
    assert_eq!(pending, Err(ClientError::closed("broken pipe")));
    assert_eq!(failed, Err(ClientError::closed("broken pipe")));
    assert!(!client.is_connected());
}

#[test]
fn disconnect_fails_pending_closes_once_and_fires_once() {
    let (client, peer) = connected();
    let log = events(&client);
    let script = async {
        peer.request("ping").await;
        client.disconnect().await;
    };
    let (r, ()) = block_on(join(client.ping(), script));
    assert!(r.unwrap_err().is_closed());
    block_on(client.disconnect());
    assert_eq!(peer.transport.closes(), 1);
    assert_eq!(
        *log.lock().unwrap(),
        vec!["disconnect: the client disconnected"]
    );
}

#[test]
fn a_panicking_listener_never_breaks_the_client() {
    let transport = Arc::new(Scripted::default());
    let reported = Arc::new(Mutex::new(Vec::new()));
    let r2 = reported.clone();
    let client = McpClient::with_transport(
        transport.clone(),
        ClientOptions::new("c", "1")
            .with_era(ClientEra::Legacy)
            .with_sleep(manual_sleep())
            .with_error_handler(move |msg, event| {
                r2.lock().unwrap().push(format!("{event}: {msg}"))
            }),
    );
    client.on(|_| panic!("listener boom"));
    let log = events(&client);
    let peer = Peer { transport };
    let (r, ()) = block_on(join(client.connect(), peer.handshake("2025-06-18")));
    r.unwrap();
    peer.deliver(json!({"jsonrpc":"2.0","method":"notifications/x"}));
    assert_eq!(
        *reported.lock().unwrap(),
        vec!["connect: listener boom", "notification: listener boom"]
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec!["connect", "notification: notifications/x"]
    );
}

#[test]
fn call_semantics_follow_the_seed() {
    let text = |t: &str| Content::text(t);
    let ok = |content: Vec<Content>| ToolResult {
        content,
        ..ToolResult::default()
    };
    assert_eq!(
        result_value(ok(vec![text("{\"a\":"), text("1}")])).unwrap(),
        Some(json!({"a":1}))
    );
    assert_eq!(
        result_value(ok(vec![text("hello")])).unwrap(),
        Some(json!("hello"))
    );
    assert_eq!(result_value(ok(vec![text("7")])).unwrap(), Some(json!(7)));
    assert_eq!(result_value(ok(vec![])).unwrap(), None);
    assert_eq!(
        result_value(ok(vec![Content::image("AA==", "image/png")])).unwrap(),
        None
    );
    let structured = ToolResult {
        structured_content: Some(json!({"sum":3})),
        ..ToolResult::default()
    };
    assert_eq!(result_value(structured).unwrap(), Some(json!({"sum":3})));
    let err = result_value(ToolResult::error("boom")).unwrap_err();
    assert_eq!(err.to_string(), "boom");
    assert!(matches!(err, ClientError::Tool { result, .. } if result.is_error()));
}

#[test]
fn non_object_arguments_are_refused_before_sending() {
    let (client, peer) = connected();
    let r = block_on(client.call("x", json!([1])));
    assert!(matches!(r, Err(ClientError::InvalidArguments(_))));
    assert!(peer.sent_now().is_empty());
}

#[test]
fn a_dropped_call_leaves_nothing_pending() {
    let (client, peer) = connected();
    {
        let mut call = Box::pin(client.ping());
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(call.poll_unpin(&mut cx).is_pending());
    }
    assert!(client.inner.lock().pending.is_empty());
    // The ping, and (from a background task, maybe not yet) its notifications/cancelled.
    let sent = peer.sent_now();
    assert!(matches!(&sent[0], JsonRpcMessage::Request(r) if r.method == "ping"));
    assert!(sent[1..].iter().all(
        |m| matches!(m, JsonRpcMessage::Notification(n) if n.method == "notifications/cancelled")
    ));
}

#[test]
fn remote_tools_are_re_served_through_a_local_registry() {
    // A "remote" server with one tool, a client to it, and a second server re-serving its tools.
    let remote = McpServer::new(ServerOptions::new("remote", "1"));
    remote.tools().add(
        Tool::from_json(
            "shout",
            json!({"type":"object","properties":{"t":{"type":"string"}}}),
            |args, _| async move {
                let t = args
                    .get("t")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_uppercase();
                if t.is_empty() {
                    Err("nothing to shout".to_owned())
                } else {
                    Ok(format!("\"{t}\""))
                }
            },
        )
        .with_description("Upper-case the text"),
    );
    let client = McpClient::new(MemoryTransport::new(remote), ClientOptions::new("c", "1"));
    block_on(client.connect()).unwrap();
    let tools = block_on(client.tools()).unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0].descriptor().description.as_deref(),
        Some("Upper-case the text")
    );
    let registry = Arc::new(ToolRegistry::new());
    for tool in tools {
        registry.add(tool);
    }
    let front = McpServer::new(ServerOptions::new("front", "1").with_tools(registry));
    let listed =
        block_on(front.handle(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)).unwrap();
    assert!(listed.contains(r#""name":"shout""#) && listed.contains(r#""t":{"type":"string"}"#));
    let called = block_on(front.handle(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"t":"hi"}}}"#,
    ))
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&called).unwrap(),
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"\"HI\""}]}})
    );
    // A remote tool failure stays a tool failure (isError) through the bridge.
    let failed = block_on(front.handle(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{}}}"#,
    ))
    .unwrap();
    assert!(failed.contains(r#""isError":true"#) && failed.contains("nothing to shout"));
    assert_eq!(
        block_on(client.call("shout", json!({"t":"a"}))).unwrap(),
        Some(json!("A"))
    );
}

#[test]
fn default_options_use_the_seed_defaults() {
    let o = ClientOptions::default();
    assert_eq!(o.info.name, DEFAULT_MCP_CLIENT_NAME);
    assert_eq!(o.info.version, DEFAULT_MCP_CLIENT_VERSION);
    assert_eq!(
        o.timeout,
        Duration::from_millis(DEFAULT_MCP_REQUEST_TIMEOUT_MS)
    );
    assert_eq!(o.timeout.as_millis(), 30_000);
    // The spec's rule over the seed's: the latest version spoken is offered (the seed's
    // `2025-06-18` stays an option).
    assert_eq!(o.protocol_version, crate::protocol::LATEST_PROTOCOL_VERSION);
    let seed = ClientOptions::default().with_protocol_version(MCP_PROTOCOL_VERSION);
    assert_eq!(seed.protocol_version, "2025-06-18");
}

#[test]
fn a_close_fails_a_request_whose_send_is_still_in_flight() {
    let client = McpClient::new(
        Stuck,
        ClientOptions::new("c", "1")
            .with_era(ClientEra::Legacy)
            .with_sleep(manual_sleep()),
    );
    // The handshake itself is stuck in `send`; disconnect must fail it at once.
    let (r, ()) = block_on(join(client.connect(), async {
        yield_now().await;
        client.inner.on_closed("the server went away".into());
    }));
    assert_eq!(r, Err(ClientError::closed("the server went away")));
}

#[test]
fn list_tools_follows_next_cursor_pages() {
    let server = McpServer::new(ServerOptions::new("paged", "1").with_page_size(2));
    for name in ["a", "b", "c", "d", "e"] {
        server.tools().add(Tool::from_json(
            name,
            json!({"type":"object"}),
            |_, _| async { Ok::<_, String>("") },
        ));
    }
    let client = McpClient::new(MemoryTransport::new(server), ClientOptions::default());
    block_on(client.connect()).unwrap();
    let names: Vec<String> = block_on(client.list_tools())
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    // An empty result is `None`.
    assert_eq!(block_on(client.call("a", Value::Null)).unwrap(), None);
}

#[test]
fn a_cursor_that_repeats_ends_the_listing_instead_of_looping() {
    let (client, peer) = connected();
    let script = async {
        for _ in 0..2 {
            let r = peer.request("tools/list").await;
            peer.reply(&r.id, json!({"tools":[{"name":"x"}],"nextCursor":"same"}));
        }
    };
    let (r, ()) = block_on(join(client.list_tools(), script));
    assert_eq!(r.unwrap().len(), 2);
}

#[test]
fn a_listing_that_grows_past_its_byte_bound_fails_instead_of_filling_memory() {
    let (client, peer) = connected();
    // Pages of a little over 8 MiB, each naming a new page: the eighth passes 64 MiB (a ninth
    // would end the list, so a walk without the bound ends too, with a list, not a hang).
    let big = "x".repeat(8 * 1024 * 1024);
    let script = async {
        for page in 0..9 {
            let r = peer.request("tools/list").await;
            let mut result = json!({"tools":[{"name":"x","description":big}]});
            if page < 8 {
                result["nextCursor"] = json!(format!("p{page}"));
            }
            peer.reply(&r.id, result);
        }
        futures::future::pending::<()>().await;
    };
    let r = block_on(async {
        futures::pin_mut!(script);
        let listed = client.list_tools();
        futures::pin_mut!(listed);
        match futures::future::select(listed, script).await {
            futures::future::Either::Left((r, _)) => r,
            futures::future::Either::Right(((), listed)) => listed.await,
        }
    });
    let err = r.unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidResponse(m) if m == &format!("tools/list listed more than {MAX_LIST_BYTES} bytes")),
        "{err}"
    );
}

#[test]
fn pending_requests_are_bounded_with_a_typed_error() {
    let transport = Arc::new(Scripted::default());
    let mut options = ClientOptions::new("test-client", "0.0.1")
        .with_era(ClientEra::Legacy)
        .with_sleep(manual_sleep());
    options.max_pending = 2;
    let client = McpClient::with_transport(transport.clone(), options);
    let peer = Peer { transport };
    let (r, ()) = block_on(join(client.connect(), peer.handshake("2025-06-18")));
    r.unwrap();
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut first = Box::pin(client.ping());
    let mut second = Box::pin(client.ping());
    assert!(first.poll_unpin(&mut cx).is_pending() && second.poll_unpin(&mut cx).is_pending());
    let sent = peer.sent_now();
    assert_eq!(sent.len(), 2);
    let refused = block_on(client.ping()).unwrap_err();
    assert!(
        matches!(refused, ClientError::TooManyPending { limit: 2 }),
        "{refused}"
    );
    assert!(refused
        .to_string()
        .contains("2 requests are already waiting"));
    assert!(
        peer.sent_now().is_empty(),
        "the refused request was not sent"
    );
    // An answer frees a slot.
    let id = match &sent[0] {
        JsonRpcMessage::Request(r) => r.id.clone(),
        other => panic!("{other:?}"),
    };
    peer.transport
        .deliver(json!({"jsonrpc":"2.0","id":id,"result":{}}));
    assert!(matches!(
        first.poll_unpin(&mut cx),
        std::task::Poll::Ready(Ok(()))
    ));
    let mut third = Box::pin(client.ping());
    assert!(third.poll_unpin(&mut cx).is_pending());
}
