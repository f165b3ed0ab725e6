//! The rules of [`Connection`](super::Connection), on a local executor.
use std::sync::Mutex;

use futures::channel::oneshot;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use serde_json::{json, Value};

use super::*;
use crate::primitives::tools::Tool;
use crate::server::context::RequestContext;
use crate::server::ServerOptions;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// A server whose `wait` tool runs until the test releases it.
fn gated() -> (McpServer, Arc<Mutex<Vec<oneshot::Sender<()>>>>) {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let gates: Arc<Mutex<Vec<oneshot::Sender<()>>>> = Arc::default();
    let g = gates.clone();
    server.tools().add(Tool::new("wait", move |_: Empty| {
        let (tx, rx) = oneshot::channel();
        g.lock().unwrap().push(tx);
        async move {
            let _ = rx.await;
            Ok::<_, String>("released")
        }
    }));
    (server, gates)
}

fn release_all(gates: &Mutex<Vec<oneshot::Sender<()>>>) {
    for gate in gates.lock().unwrap().drain(..) {
        let _ = gate.send(());
    }
}

/// The messages pushed on the connection's outbound channel.
fn sink() -> (Outbound, Arc<Mutex<Vec<Value>>>) {
    let pushed: Arc<Mutex<Vec<Value>>> = Arc::default();
    let p = pushed.clone();
    let outbound: Outbound = Arc::new(move |m: JsonRpcMessage| {
        p.lock()
            .unwrap()
            .push(serde_json::from_str(&m.to_json()).unwrap());
        true
    });
    (outbound, pushed)
}

fn call_wait(id: u64) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"wait","arguments":{}}})
        .to_string()
        .into_bytes()
}

fn json_of(response: &JsonRpcResponse) -> Value {
    serde_json::from_str(&response.to_json()).unwrap()
}

/// Runs calls on a local pool and collects their answers.
struct Host {
    pool: LocalPool,
    answers: Rc<RefCell<Vec<Value>>>,
}

use std::cell::RefCell;
use std::rc::Rc;

impl Host {
    fn new() -> Self {
        Host {
            pool: LocalPool::new(),
            answers: Rc::default(),
        }
    }

    fn take(&mut self, received: Received) {
        match received {
            Received::Nothing => {}
            Received::Answer(response) => self.answers.borrow_mut().push(json_of(&response)),
            Received::Dispatch(mut call) => {
                let answers = self.answers.clone();
                self.pool
                    .spawner()
                    .spawn_local(async move {
                        if let Some(response) = (&mut call).await {
                            answers.borrow_mut().push(json_of(&response));
                        }
                        drop(call);
                    })
                    .unwrap();
            }
            Received::Batch(mut call) => {
                // The reply, one array, is one answer.
                let answers = self.answers.clone();
                self.pool
                    .spawner()
                    .spawn_local(async move {
                        if let Some(reply) = (&mut call).await {
                            answers
                                .borrow_mut()
                                .push(serde_json::from_str(&reply.to_json()).unwrap());
                        }
                        drop(call);
                    })
                    .unwrap();
            }
            Received::Wait(parked) => panic!("unexpected wait: {parked:?}"),
        }
    }

    fn run(&mut self) -> Vec<Value> {
        self.pool.run_until_stalled();
        std::mem::take(&mut *self.answers.borrow_mut())
    }
}

/// `conn` after the handshake (`initialize` at 2025-11-25, then `notifications/initialized`),
/// as every client does first.
fn initialized(conn: Connection) -> Connection {
    initialized_at(conn, "2025-11-25")
}

fn ids(answers: &[Value]) -> Vec<Value> {
    answers.iter().map(|a| a["id"].clone()).collect()
}

#[test]
fn refuse_answers_beyond_the_limit_at_once_and_takes_more_once_one_finishes() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::websocket(2),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    host.take(conn.receive(&call_wait(2)));
    assert!(host.run().is_empty());
    assert_eq!(conn.in_flight(), 2);
    assert!(conn.accepts_input(), "Refuse keeps reading");
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#));
    let busy = host.run();
    assert_eq!(busy.len(), 1);
    assert_eq!(
        (busy[0]["id"].clone(), busy[0]["error"]["code"].clone()),
        (json!(3), json!(-32000))
    );
    release_all(&gates);
    let answers = host.run();
    assert_eq!(ids(&answers), [json!(1), json!(2)]);
    assert_eq!(conn.in_flight(), 0);
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#));
    assert_eq!(host.run(), [json!({"jsonrpc":"2.0","id":4,"result":{}})]);
}

#[test]
fn pause_stops_input_at_the_limit_and_notifications_do_not_count() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(1),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    host.run();
    assert!(!conn.accepts_input());
    // A notification is not a request in flight.
    let note = conn.receive(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(matches!(&note, Received::Dispatch(call) if !call.is_request()));
    host.take(note);
    assert!(host.run().is_empty());
    assert_eq!(conn.in_flight(), 1);
    release_all(&gates);
    assert_eq!(ids(&host.run()), [json!(1)]);
    assert!(conn.accepts_input());
}

#[test]
fn a_request_keeps_its_place_until_its_answer_is_handed_over() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(1),
    ));
    let Received::Dispatch(mut call) = conn.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
    else {
        panic!("a request is dispatched");
    };
    assert!(call.is_request());
    let answer = futures::executor::block_on(&mut call).expect("a ping is answered");
    assert_eq!(
        json_of(&answer),
        json!({"jsonrpc":"2.0","id":1,"result":{}})
    );
    assert!(
        !conn.accepts_input(),
        "an answer not yet written still counts"
    );
    drop(call);
    assert!(conn.accepts_input());
}

#[test]
fn each_request_is_answered_once_by_id_in_completion_order() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::default(),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#));
    assert_eq!(ids(&host.run()), [json!("p")]);
    release_all(&gates);
    let answers = host.run();
    assert_eq!(ids(&answers), [json!(1)]);
    assert_eq!(answers[0]["result"]["content"][0]["text"], "released");
    assert!(host.run().is_empty(), "nothing is answered twice");
}

#[test]
fn notifications_cancelled_cancels_the_call_and_frees_its_place() {
    let (server, _gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(1),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(7)));
    host.run();
    assert_eq!(conn.in_flight(), 1);
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#,
    ));
    assert!(host.run().is_empty(), "a cancelled request gets no answer");
    assert_eq!(conn.in_flight(), 0);
    assert!(conn.accepts_input());
}

#[test]
fn dropping_the_connection_cancels_what_runs_and_a_dropped_call_frees_its_place() {
    let (server, _gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server.clone(),
        "t",
        outbound,
        ConnectionOptions::websocket(4),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    let Received::Dispatch(dropped) = conn.receive(&call_wait(2)) else {
        panic!("a request is dispatched");
    };
    host.run();
    assert_eq!(conn.in_flight(), 2);
    drop(dropped);
    assert_eq!(conn.in_flight(), 1);
    assert_eq!(conn.at_end(), AtEnd::Cancel);
    drop(conn);
    assert!(
        host.run().is_empty(),
        "the call in flight was cancelled, not answered"
    );
}

#[test]
fn drain_at_eof_answers_the_calls_in_flight() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(8),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    host.take(conn.receive(&call_wait(2)));
    host.run();
    // EOF: the host drains under AtEnd::Drain, then drops the connection.
    assert_eq!(conn.at_end(), AtEnd::Drain);
    release_all(&gates);
    assert_eq!(ids(&host.run()), [json!(1), json!(2)]);
    assert_eq!(conn.in_flight(), 0);
    drop(conn);
}

#[test]
fn a_handshake_initialize_attaches_the_connection_for_pushed_messages() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, pushed) = sink();
    let mut conn = Connection::new(server.clone(), "t", outbound, ConnectionOptions::default());
    let mut host = Host::new();
    assert_eq!(
        server.notify_list_changed(crate::server::ListKind::Tools),
        0
    );
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    ));
    assert_eq!(ids(&host.run()), [json!(1)]);
    assert_eq!(
        server.notify_list_changed(crate::server::ListKind::Tools),
        1
    );
    assert_eq!(
        pushed.lock().unwrap()[0]["method"],
        "notifications/tools/list_changed"
    );
    drop(conn);
    assert_eq!(
        server.notify_list_changed(crate::server::ListKind::Tools),
        0
    );
}

/// Text that is not JSON — outside the grammar, not UTF-8, a second value after the first —
/// is `-32700` on stdio and WebSocket alike (JSON-RPC 2.0 §5.1; the public bug reports against
/// other SDKs: a client whose line was dropped waits forever), with the id of a whole request
/// that starts it; `NotJson::Skip` still skips it. A leading byte order mark is ignored.
#[test]
fn invalid_input_follows_the_not_json_rule() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, _) = sink();
    let conn = |options| {
        initialized(Connection::new(
            server.clone(),
            "t",
            outbound.clone(),
            options,
        ))
    };
    let mut stdio = conn(ConnectionOptions::stdio(4));
    let mut ws = conn(ConnectionOptions::websocket(4));
    let mut skipping = conn(ConnectionOptions {
        not_json: NotJson::Skip,
        ..ConnectionOptions::stdio(4)
    });
    let answer = |conn: &mut Connection, bytes: &[u8]| match conn.receive(bytes) {
        Received::Answer(response) => json_of(&response),
        Received::Dispatch(call) => json_of(&futures::executor::block_on(call).expect("answered")),
        _ => panic!("no answer to {:?}", String::from_utf8_lossy(bytes)),
    };
    let not_json: [(&[u8], Value); 6] = [
        (b"not json", Value::Null),
        (b"\xff\xfe{}", Value::Null),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", Value::Null),
        (br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, json!(1)),
        (
            br#"{"jsonrpc":"2.0","id":"a","method":"ping"}{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            json!("a"),
        ),
        // Not a request first (a notification, a response): nothing to answer by id.
        (br#"{"jsonrpc":"2.0","method":"x"} {"#, Value::Null),
    ];
    for conn in [&mut stdio, &mut ws] {
        for (text, id) in &not_json {
            let parse = answer(conn, text);
            assert_eq!(parse["error"]["code"], -32700, "{parse}");
            assert_eq!(&parse["id"], id, "{parse}");
        }
        let bom = answer(
            conn,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}",
        );
        assert_eq!(bom, json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
        let Received::Answer(bad) = conn.receive(br#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#)
        else {
            panic!("an invalid request is answered");
        };
        assert_eq!(json_of(&bad)["id"], 5);
        // No JSON-RPC message, though id-less: -32600, id null (it was dropped); a
        // notification whose only fault is its params is still not answered.
        let Received::Answer(bad) = conn.receive(br#"{"jsonrpc":"2.0","method":5}"#) else {
            panic!("an id-less object that is no message is answered");
        };
        assert_eq!(json_of(&bad)["id"], Value::Null);
        assert_eq!(json_of(&bad)["error"]["code"], -32600);
        assert!(matches!(
            conn.receive(br#"{"jsonrpc":"2.0","method":"x","params":[1]}"#),
            Received::Nothing
        ));
    }
    for (text, _) in &not_json {
        assert!(matches!(skipping.receive(text), Received::Nothing));
    }
    // A line the host discarded for its length: `-32600` with the id its skim read (`null` when
    // none); a notification is not answered; skipped under `Skip`.
    let skimmed = |line: &str| {
        let mut decoder = crate::wire::framing::LineDecoder::new(16);
        match decoder.push(format!("{line}\n").as_bytes()).pop() {
            Some(crate::wire::framing::Frame::TooLong(line)) => line,
            other => panic!("{other:?}"),
        }
    };
    let padding = "x".repeat(80);
    let request = skimmed(&format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"id":1,"a":"{padding}"}},"id":"r-9"}}"#
    ));
    let Received::Answer(too_long) = stdio.too_long(64, &request) else {
        panic!("a request over the limit is answered");
    };
    assert_eq!(json_of(&too_long)["error"]["code"], -32600);
    assert_eq!(json_of(&too_long)["id"], "r-9");
    assert!(json_of(&too_long)["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("64-byte limit")));
    let unreadable = skimmed(&format!("[{{\"id\":1,\"a\":\"{padding}\"}}]"));
    let Received::Answer(too_long) = stdio.too_long(64, &unreadable) else {
        panic!("a line over the limit is answered");
    };
    assert_eq!(json_of(&too_long)["id"], Value::Null);
    let notification = skimmed(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"a":"{padding}"}}}}"#
    ));
    assert!(matches!(
        stdio.too_long(64, &notification),
        Received::Nothing
    ));
    assert!(matches!(skipping.too_long(64, &request), Received::Nothing));
    ws.close();
    assert!(ws.is_closing() && !ws.accepts_input());
    assert!(matches!(
        ws.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Received::Nothing
    ));
    assert!(matches!(
        ws.too_long(64, &crate::wire::framing::Overlong::default()),
        Received::Nothing
    ));
}

/// A server whose `ask` tool asks its client for input (a handshake-era server→client
/// `elicitation/create`), answering with what the client sent.
fn asking() -> McpServer {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    server.tools().add(Tool::from_json(
        "ask",
        json!({"type": "object"}),
        |_: serde_json::Map<String, Value>, ctx: RequestContext| async move {
            let answer = ctx
                .input(
                    "q",
                    "elicitation/create",
                    json!({"message": "name?", "requestedSchema": {"type": "object"}}),
                )
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(answer.to_string())
        },
    ));
    server
}

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}"#;

fn call_ask(id: u64) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"ask","arguments":{}}})
        .to_string()
        .into_bytes()
}

/// The last server→client request `pushed` holds.
fn last_request(pushed: &Mutex<Vec<Value>>) -> Value {
    let asked = pushed.lock().unwrap().last().cloned();
    let asked = asked.expect("the server asked its client");
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    asked
}

#[test]
fn a_request_reusing_the_id_of_a_request_in_flight_is_refused_and_the_first_stays_cancellable() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(8),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(1)));
    host.take(conn.receive(&call_wait(1)));
    let refused = host.run();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["id"], 1);
    assert_eq!(refused[0]["error"]["code"], -32600);
    assert_eq!(conn.in_flight(), 1, "the duplicate holds no place");
    // The one running is still the one `notifications/cancelled` names.
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ));
    assert!(host.run().is_empty());
    release_all(&gates);
    assert!(host.run().is_empty(), "request 1 was cancelled");
    assert_eq!(conn.in_flight(), 0);
    // Once it ended, its id may be used again.
    host.take(conn.receive(&call_wait(1)));
    assert!(host.run().is_empty());
    release_all(&gates);
    assert_eq!(ids(&host.run()), [json!(1)]);
}

#[test]
fn a_response_resolves_only_a_server_request_sent_on_its_own_connection() {
    let server = asking();
    let (out_a, pushed_a) = sink();
    let (out_b, _) = sink();
    let mut a = initialized(Connection::new(
        server.clone(),
        "a",
        out_a,
        ConnectionOptions::stdio(8),
    ));
    let mut b = initialized(Connection::new(
        server,
        "b",
        out_b,
        ConnectionOptions::stdio(8),
    ));
    let mut host = Host::new();
    host.take(a.receive(&call_ask(2)));
    assert!(host.run().is_empty(), "the tool waits for its client");
    let asked = last_request(&pushed_a);
    let answer = |name: &str| {
        json!({"jsonrpc":"2.0","id":asked["id"],"result":{"action":"accept","content":{"name":name}}})
            .to_string()
    };
    // Another connection (another peer of the same server) answers a's request: ignored.
    host.take(b.receive(answer("forged").as_bytes()));
    assert!(host.run().is_empty(), "a's tool took b's answer");
    // a's own answer resolves it.
    host.take(a.receive(answer("real").as_bytes()));
    let answers = host.run();
    assert_eq!(ids(&answers), [json!(2)]);
    let text = answers[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("real") && !text.contains("forged"), "{text}");
}

#[test]
fn a_request_waiting_for_its_client_keeps_the_input_read_and_one_beyond_the_limit_is_refused() {
    let server = asking();
    let (outbound, pushed) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(1),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&call_ask(2)));
    assert!(host.run().is_empty());
    let asked = last_request(&pushed);
    assert_eq!(conn.in_flight(), 1);
    assert!(
        conn.accepts_input(),
        "stdio pauses at the limit, but its one request waits for the client's answer"
    );
    assert!(
        futures::executor::block_on(futures::future::poll_immediate(conn.readable())).is_some()
    );
    // A new request cannot run (the limit) nor wait (the input must stay read): refused.
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#));
    let busy = host.run();
    assert_eq!(ids(&busy), [json!(3)]);
    assert_eq!(busy[0]["error"]["code"], -32000);
    // The client's answer is read and finishes the call.
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"action":"decline"}});
    host.take(conn.receive(answer.to_string().as_bytes()));
    assert_eq!(ids(&host.run()), [json!(2)]);
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn a_paused_host_is_woken_when_its_requests_start_waiting_for_the_client() {
    let server = asking();
    let (outbound, _) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(1),
    ));
    let mut host = Host::new();
    // Taken, not yet run: it can finish alone as far as anyone knows, so input pauses.
    host.take(conn.receive(&call_ask(2)));
    assert!(!conn.accepts_input());
    let woken = Arc::new(Flag::default());
    let waker = std::task::Waker::from(woken.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut readable = Box::pin(conn.readable());
    assert!(readable.as_mut().poll(&mut cx).is_pending());
    // The tool runs and sends its server→client request: the wait is woken and ends.
    host.pool.run_until_stalled();
    assert!(woken.0.load(Ordering::Acquire), "the host was not woken");
    assert!(readable.as_mut().poll(&mut cx).is_ready());
}

/// A waker that records that it was woken.
#[derive(Default)]
struct Flag(std::sync::atomic::AtomicBool);

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// `subscriptions/listen` params on the 2026-07-28 wire.
fn listen(id: u64) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen","params":{
        "notifications":{"toolsListChanged":true},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{},
                 "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}})
    .to_string()
    .into_bytes()
}

#[test]
fn listen_params_are_checked_and_its_uris_bounded_as_subscriptions_are() {
    use crate::server::{MAX_SUBSCRIPTIONS_PER_SCOPE, MAX_SUBSCRIPTION_URI_BYTES};
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, pushed) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(8),
    ));
    let too_many: Vec<String> = (0..=MAX_SUBSCRIPTIONS_PER_SCOPE)
        .map(|i| format!("file:///{i}"))
        .collect();
    let too_long = format!("file:///{}", "x".repeat(MAX_SUBSCRIPTION_URI_BYTES));
    for (id, notifications, message) in [
        (
            1,
            json!(5),
            r#""notifications" must be an object"#.to_owned(),
        ),
        (
            2,
            json!({"resourceSubscriptions": [1, null]}),
            r#""notifications.resourceSubscriptions[0]" must be a string"#.to_owned(),
        ),
        (
            3,
            json!({"resourceSubscriptions": too_many}),
            format!(
                r#""notifications.resourceSubscriptions" holds more than {MAX_SUBSCRIPTIONS_PER_SCOPE} URIs"#
            ),
        ),
        (
            4,
            json!({"resourceSubscriptions": ["file:///a", too_long]}),
            format!(
                r#""notifications.resourceSubscriptions[1]" must be a URI of 1 to {MAX_SUBSCRIPTION_URI_BYTES} bytes"#
            ),
        ),
    ] {
        let mut request: Value = serde_json::from_slice(&listen(id)).unwrap();
        request["params"]["notifications"] = notifications;
        let mut host = Host::new();
        host.take(conn.receive(request.to_string().as_bytes()));
        let responses = host.run();
        let response = &responses[0];
        assert_eq!(response["id"], id, "{response}");
        assert_eq!(response["error"]["code"], -32602, "{response}");
        let got = response["error"]["message"].as_str().unwrap();
        assert!(got.ends_with(&message), "{got}");
        assert!(got.len() < 200, "the message must not carry the value");
    }
    assert!(
        pushed.lock().unwrap().is_empty(),
        "no stream was acknowledged"
    );
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn listen_streams_at_the_limit_keep_the_input_read_so_their_cancellation_arrives() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, pushed) = sink();
    let mut conn = initialized(Connection::new(
        server,
        "t",
        outbound,
        ConnectionOptions::stdio(2),
    ));
    let mut host = Host::new();
    host.take(conn.receive(&listen(1)));
    host.take(conn.receive(&listen(2)));
    assert!(host.run().is_empty(), "a listen stream stays open");
    assert!(
        !pushed.lock().unwrap().is_empty(),
        "each stream was acknowledged"
    );
    assert_eq!(conn.in_flight(), 2);
    assert!(
        conn.accepts_input(),
        "stdio reads on: only the client can end them"
    );
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#));
    let busy = host.run();
    assert_eq!(
        (busy[0]["id"].clone(), busy[0]["error"]["code"].clone()),
        (json!(3), json!(-32000))
    );
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ));
    assert!(host.run().is_empty());
    assert_eq!(conn.in_flight(), 1, "the cancelled stream freed its place");
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#));
    assert_eq!(host.run(), [json!({"jsonrpc":"2.0","id":4,"result":{}})]);
}

#[test]
fn a_handshake_era_request_before_initialize_is_refused_with_its_id() {
    let (server, _) = gated();
    let (outbound, _) = sink();
    for options in [ConnectionOptions::stdio(4), ConnectionOptions::websocket(4)] {
        let mut conn = Connection::new(server.clone(), "t", outbound.clone(), options);
        let mut host = Host::new();
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#));
        let refused = host.run();
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0]["id"], "early");
        assert_eq!(refused[0]["error"]["code"], -32600);
        assert!(
            refused[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("send initialize first"),
            "{refused:?}"
        );
        // ping may come first; a 2026-07-28 request carries its version and needs no handshake.
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        let modern = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
            "io.modelcontextprotocol/clientCapabilities":{}}}});
        host.take(conn.receive(modern.to_string().as_bytes()));
        let answers = host.run();
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert!(
            answers.iter().all(|a| a.get("result").is_some()),
            "{answers:?}"
        );
        // An initialize answered with an error leaves the connection uninitialized.
        host.take(conn.receive(
            br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":7}}"#,
        ));
        assert_eq!(host.run()[0]["error"]["code"], -32602);
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#));
        assert_eq!(host.run()[0]["error"]["code"], -32600);
        let mut conn = initialized(conn);
        host.take(conn.receive(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#));
        let listed = host.run();
        assert_eq!(
            listed[0]["result"]["tools"][0]["name"], "wait",
            "{listed:?}"
        );
    }
    // Without the rule (the seed's dispatch), any method goes at any time.
    let options = ConnectionOptions {
        require_initialize: false,
        ..ConnectionOptions::default()
    };
    let mut conn = Connection::new(server, "t", outbound, options);
    let mut host = Host::new();
    host.take(conn.receive(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#));
    assert!(host.run()[0].get("result").is_some());
}

/// Without the initialize rule the connection's scope lives from its start (a subscription and
/// a log level before `initialize` are kept) to its drop; a request of the connection arriving
/// after that (still on its way) is refused and brings none of it back.
#[test]
fn without_the_initialize_rule_the_scope_lives_from_the_start_to_the_drop() {
    let options = ServerOptions::new("t", "1")
        .with_declared_lists()
        .with_logging();
    let server = McpServer::new(options);
    let (outbound, _pushed) = sink();
    let options = ConnectionOptions {
        require_initialize: false,
        ..ConnectionOptions::default()
    };
    let mut conn = Connection::new(server.clone(), "t", outbound, options);
    let mut host = Host::new();
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://a"}}"#,
    ));
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#,
    ));
    let answers = host.run();
    assert!(
        answers.iter().all(|a| a["result"] == json!({})),
        "{answers:?}"
    );
    let scope = conn.scope.clone();
    let state = server.scope_state(&scope).expect("the connection's scope");
    assert_eq!(state.subscriptions, ["test://a"]);
    assert_eq!(state.log_level, Some(crate::protocol::LogLevel::Error));
    drop(conn);
    assert_eq!(server.scope_state(&scope), None);
    let late = crate::wire::jsonrpc::JsonRpcRequest::new(3, "resources/subscribe")
        .with_params(json!({"uri": "test://b"}));
    let ctx = RequestContext::new().with_scope(scope.clone());
    let reply =
        futures::executor::block_on(server.dispatch_with(JsonRpcMessage::Request(late), ctx));
    let error = reply.expect("an answer").payload.expect_err("refused");
    assert_eq!(error.code, ErrorCode::INVALID_REQUEST);
    assert_eq!(server.scope_state(&scope), None);
}

#[test]
fn no_server_request_but_ping_goes_out_before_notifications_initialized() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    server.tools().add(Tool::with_context(
        "roots",
        |_: Empty, ctx: RequestContext| async move {
            match ctx.request("roots/list", json!({})).await {
                Ok(roots) => Ok::<_, String>(roots.to_string()),
                Err(e) => Err(e.message),
            }
        },
    ));
    let (outbound, pushed) = sink();
    let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(4));
    let mut host = Host::new();
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}"#,
    ));
    assert_eq!(ids(&host.run()), [json!(1)]);
    let call = |id: u64| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"roots","arguments":{}}})
            .to_string()
    };
    host.take(conn.receive(call(2).as_bytes()));
    let early = host.run();
    assert_eq!(early[0]["result"]["isError"], true, "{early:?}");
    let text = early[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("notifications/initialized"), "{text}");
    assert!(pushed.lock().unwrap().is_empty(), "nothing went out");
    host.take(conn.receive(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
    host.take(conn.receive(call(3).as_bytes()));
    assert!(
        host.run().is_empty(),
        "the call waits for the client's roots"
    );
    let sent = pushed.lock().unwrap()[0].clone();
    assert_eq!(sent["method"], "roots/list");
    let answer = json!({"jsonrpc":"2.0","id":sent["id"],"result":{"roots":[]}});
    host.take(conn.receive(answer.to_string().as_bytes()));
    let done = host.run();
    assert_eq!(done[0]["id"], 3);
    assert_eq!(
        done[0]["result"]["content"][0]["text"], r#"{"roots":[]}"#,
        "{done:?}"
    );
}

// ---- JSON-RPC batches (2025-03-26 only) -------------------------------------------------

/// `conn` after `initialize` at `version` and `notifications/initialized`.
fn initialized_at(mut conn: Connection, version: &str) -> Connection {
    let init = json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{
        "protocolVersion":version,"capabilities":{"sampling":{},"roots":{},"elicitation":{}},
        "clientInfo":{"name":"t","version":"1"}}});
    let Received::Dispatch(call) = conn.receive(init.to_string().as_bytes()) else {
        panic!("initialize is dispatched")
    };
    let answer = futures::executor::block_on(call).expect("initialize is answered");
    assert_eq!(
        json_of(&answer)["result"]["protocolVersion"],
        version,
        "negotiated"
    );
    let done = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let Received::Dispatch(call) = conn.receive(done) else {
        panic!("a notification is dispatched")
    };
    assert!(futures::executor::block_on(call).is_none());
    conn
}

/// One handshake per connection: an `initialize` after one answered with a result is `-32600`
/// with its id, at once (nothing dispatched, the connection goes on); one after an `initialize`
/// answered with an error is taken; without the lifecycle rule (the seed's any-method-any-time)
/// a repeat is dispatched as before.
#[test]
fn a_repeat_initialize_is_refused_and_the_first_handshake_stands() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, _) = sink();
    let new = |options| Connection::new(server.clone(), "t", outbound.clone(), options);
    let mut conn = initialized(new(ConnectionOptions::stdio(4)));
    let Received::Answer(refused) = conn.receive(INIT) else {
        panic!("a repeat initialize is answered at once");
    };
    assert_eq!(json_of(&refused)["error"]["code"], -32600);
    assert_eq!(json_of(&refused)["id"], "init");
    let Received::Dispatch(ping) = conn.receive(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
    else {
        panic!("the connection goes on");
    };
    assert!(futures::executor::block_on(ping).is_some());
    // A failed handshake (no `capabilities`) leaves room for another.
    let mut conn = new(ConnectionOptions::websocket(4));
    let bad = br#"{"jsonrpc":"2.0","id":"bad","method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}}"#;
    let Received::Dispatch(call) = conn.receive(bad) else {
        panic!("an initialize is dispatched");
    };
    let failed = futures::executor::block_on(call).expect("answered");
    assert!(failed.payload.is_err(), "{}", failed.to_json());
    let Received::Dispatch(call) = conn.receive(INIT) else {
        panic!("an initialize after a failed one is dispatched");
    };
    let answer = futures::executor::block_on(call).expect("answered");
    assert!(answer.payload.is_ok(), "{}", answer.to_json());
    // Without the lifecycle rule, a repeat is dispatched.
    let mut seed = new(ConnectionOptions {
        require_initialize: false,
        ..ConnectionOptions::stdio(4)
    });
    for _ in 0..2 {
        let Received::Dispatch(call) = seed.receive(INIT) else {
            panic!("dispatched");
        };
        assert!(futures::executor::block_on(call).is_some_and(|a| a.payload.is_ok()));
    }
}

/// A batch of `n` pings, ids 1..=n.
fn pings(n: usize) -> Vec<u8> {
    let items: Vec<Value> = (1..=n)
        .map(|id| json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
        .collect();
    Value::Array(items).to_string().into_bytes()
}

/// The one answer `host` holds: a batch's reply array.
fn reply(host: &mut Host) -> Vec<Value> {
    let answers = host.run();
    assert_eq!(answers.len(), 1, "one reply: {answers:?}");
    match &answers[0] {
        Value::Array(items) => items.clone(),
        other => panic!("not an array: {other}"),
    }
}

#[test]
fn a_batch_at_2025_03_26_runs_each_element_and_answers_one_array() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(8)),
        "2025-03-26",
    );
    let mut host = Host::new();
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}},
        {"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
        {"jsonrpc":"2.0","id":"p","method":"ping"},
        {"jsonrpc":"1.0","id":3,"method":"ping"},
        {"jsonrpc":"2.0","id":"p","method":"tools/list"},
        {"jsonrpc":"2.0","method":5},
        {"jsonrpc":"2.0","id":"s-1","result":{}},
        42
    ]);
    host.take(conn.receive(batch.to_string().as_bytes()));
    assert!(host.run().is_empty(), "the reply waits for request 1");
    assert_eq!(
        conn.in_flight(),
        2,
        "request 1 and the answered ping keep their places"
    );
    release_all(&gates);
    let items = reply(&mut host);
    assert_eq!(
        ids(&items),
        [
            json!(1),
            json!("p"),
            json!(3),
            json!("p"),
            Value::Null,
            Value::Null
        ],
        "one entry per request and invalid element, in the batch's order: {items:?}"
    );
    assert_eq!(items[0]["result"]["content"][0]["text"], "released");
    assert_eq!(items[1]["result"], json!({}));
    assert_eq!(items[2]["error"]["code"], -32600);
    assert_eq!(
        items[3]["error"]["code"], -32600,
        "a duplicate id in the batch"
    );
    assert!(items[3]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("earlier request of this batch"));
    assert_eq!(items[4]["error"]["code"], -32600);
    assert_eq!(
        conn.in_flight(),
        0,
        "every place is free once the reply is handed over"
    );
}

#[test]
fn a_batch_of_notifications_and_responses_is_answered_with_nothing() {
    let server = asking();
    let (outbound, pushed) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(8)),
        "2025-03-26",
    );
    let mut host = Host::new();
    host.take(conn.receive(&call_ask(2)));
    assert!(host.run().is_empty());
    let asked = last_request(&pushed);
    // The client's answer to the server's request, inside a batch with notifications.
    let batch = json!([
        {"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
        {"jsonrpc":"2.0","id":asked["id"],"result":{"action":"accept","content":{"name":"Ada"}}},
        {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}
    ]);
    let received = conn.receive(batch.to_string().as_bytes());
    assert!(
        matches!(&received, Received::Batch(call) if !call.holds_places()),
        "{received:?}"
    );
    host.take(received);
    let answers = host.run();
    assert_eq!(answers.len(), 1, "only the tool's own answer: {answers:?}");
    assert_eq!(answers[0]["id"], 2, "not an array: the batch wrote nothing");
    assert!(answers[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Ada"));
}

#[test]
fn a_batch_is_refused_before_initialize_and_at_every_other_revision() {
    let (server, _) = gated();
    let (outbound, _) = sink();
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    server.on_request(move |_, _| {
        c.fetch_add(1, Ordering::SeqCst);
    });
    let batch =
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    for options in [ConnectionOptions::stdio(4), ConnectionOptions::websocket(4)] {
        let mut conn = Connection::new(server.clone(), "t", outbound.clone(), options);
        let Received::Answer(early) = conn.receive(batch) else {
            panic!("refused at once")
        };
        let early = json_of(&early);
        assert_eq!(
            (early["id"].clone(), early["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        assert!(
            early["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batch before initialize"),
            "{early}"
        );
        for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
            let mut conn = initialized_at(
                Connection::new(server.clone(), "t", outbound.clone(), options),
                version,
            );
            let Received::Answer(refused) = conn.receive(batch) else {
                panic!("refused at once at {version}")
            };
            assert_eq!(
                refused.to_json(),
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}}"#,
                "unchanged at {version}"
            );
        }
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        12,
        "only the six handshakes ran (initialize and notifications/initialized each)"
    );
}

#[test]
fn initialize_in_a_batch_and_an_empty_batch_are_refused_whole() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    server.on_request(move |_, _| {
        c.fetch_add(1, Ordering::SeqCst);
    });
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::websocket(4)),
        "2025-03-26",
    );
    let ran = calls.load(Ordering::SeqCst);
    let with_initialize = json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
    ]);
    let Received::Answer(refused) = conn.receive(with_initialize.to_string().as_bytes()) else {
        panic!("refused whole")
    };
    let refused = json_of(&refused);
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize must not be part of a JSON-RPC batch"));
    assert_eq!(calls.load(Ordering::SeqCst), ran, "nothing in it ran");
    for (text, says) in [
        ("[]", "an empty batch"),
        (" [ ] ", "an empty batch"),
        ("[{\"jsonrpc\":\"2.0\",\"id\":1,", "Parse error"),
    ] {
        let Received::Answer(one) = conn.receive(text.as_bytes()) else {
            panic!("one error for {text}")
        };
        let one = json_of(&one);
        assert_eq!(one["id"], Value::Null);
        assert!(
            one["error"]["message"].as_str().unwrap().contains(says),
            "{one}"
        );
    }
    // Over the length limit: refused whole, before anything is read.
    let Received::Answer(long) = conn.receive(&pings(crate::wire::jsonrpc::MAX_BATCH_LEN + 1))
    else {
        panic!("refused whole")
    };
    assert!(json_of(&long)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("a batch of 1025 messages is over the limit of 1024"));
    assert_eq!(calls.load(Ordering::SeqCst), ran);
}

#[test]
fn a_cancellation_in_a_batch_cancels_the_request_before_it_and_an_id_in_flight_is_refused() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(8)),
        "2025-03-26",
    );
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(9)));
    assert!(host.run().is_empty());
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},
        {"jsonrpc":"2.0","id":9,"method":"ping"},
        {"jsonrpc":"2.0","id":2,"method":"ping"}
    ]);
    host.take(conn.receive(batch.to_string().as_bytes()));
    let items = reply(&mut host);
    assert_eq!(
        ids(&items),
        [json!(9), json!(2)],
        "request 1 was cancelled: {items:?}"
    );
    assert_eq!(
        items[0]["error"]["code"], -32600,
        "id 9 is in flight on the connection"
    );
    assert_eq!(items[1]["result"], json!({}));
    assert_eq!(conn.in_flight(), 1, "only the earlier line's request");
    release_all(&gates);
    assert_eq!(ids(&host.run()), [json!(9)]);
    // A batch whose every request is cancelled writes nothing.
    let batch = json!([
        {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{}}},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}
    ]);
    host.take(conn.receive(batch.to_string().as_bytes()));
    assert!(host.run().is_empty());
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn a_batch_never_runs_more_requests_than_the_limit() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::websocket(3)),
        "2025-03-26",
    );
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(100)));
    assert!(host.run().is_empty());
    // Refuse: taken at once, the requests beyond the free places answered -32000.
    host.take(conn.receive(&pings(4)));
    let items = reply(&mut host);
    assert_eq!(ids(&items), [json!(1), json!(2), json!(3), json!(4)]);
    let codes: Vec<Value> = items.iter().map(|i| i["error"]["code"].clone()).collect();
    assert_eq!(
        codes,
        [Value::Null, Value::Null, json!(-32000), json!(-32000)]
    );
    assert_eq!(conn.in_flight(), 1);
    release_all(&gates);
    host.run();
    // A batch of the longest length: at most the limit ever in flight, the rest refused.
    let n = crate::wire::jsonrpc::MAX_BATCH_LEN;
    let Received::Batch(mut call) = conn.receive(&pings(n)) else {
        panic!("taken")
    };
    assert_eq!(conn.in_flight(), 3);
    let items = futures::executor::block_on(&mut call)
        .unwrap()
        .into_responses();
    assert_eq!(conn.in_flight(), 3, "the answered pings keep their places");
    assert_eq!(items.len(), n);
    assert!(items[..3].iter().all(|r| r.payload.is_ok()));
    assert!(items[3..]
        .iter()
        .all(|r| r.payload.as_ref().unwrap_err().code == ErrorCode::SERVER_ERROR));
    drop(call);
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn under_pause_a_batch_waits_for_its_places_and_a_larger_one_for_all_of_them() {
    let (server, gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(3)),
        "2025-03-26",
    );
    let mut host = Host::new();
    host.take(conn.receive(&call_wait(100)));
    assert!(host.run().is_empty());
    assert!(conn.accepts_input(), "two places are free");
    // Three requests, two free places: the batch waits, whole.
    let Received::Wait(parked) = conn.receive(&pings(3)) else {
        panic!("waits")
    };
    let mut cx = Context::from_waker(futures::task::noop_waker_ref());
    assert!(Box::pin(conn.readable_for(&parked))
        .as_mut()
        .poll(&mut cx)
        .is_pending());
    assert_eq!(conn.in_flight(), 1, "nothing of it runs yet");
    release_all(&gates);
    assert_eq!(ids(&host.run()), [json!(100)]);
    assert!(Box::pin(conn.readable_for(&parked))
        .as_mut()
        .poll(&mut cx)
        .is_ready());
    host.take(conn.resume(parked));
    let items = reply(&mut host);
    assert!(
        items.iter().all(|i| i["result"] == json!({})),
        "all three ran: {items:?}"
    );
    // Five requests, a limit of three: taken once the connection is idle; two are refused.
    host.take(conn.receive(&call_wait(101)));
    host.run();
    let Received::Wait(parked) = conn.receive(&pings(5)) else {
        panic!("waits for every place")
    };
    release_all(&gates);
    host.run();
    host.take(conn.resume(parked));
    let items = reply(&mut host);
    let refused = items
        .iter()
        .filter(|i| i["error"]["code"] == -32000)
        .count();
    assert_eq!((items.len(), refused), (5, 2));
}

#[test]
fn answered_members_wait_for_the_client_with_the_one_that_asks_it() {
    let server = asking();
    let (outbound, pushed) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(2)),
        "2025-03-26",
    );
    let mut host = Host::new();
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}},
        {"jsonrpc":"2.0","id":2,"method":"ping"}
    ]);
    host.take(conn.receive(batch.to_string().as_bytes()));
    assert!(
        host.run().is_empty(),
        "the reply waits for the client's answer"
    );
    assert_eq!(conn.in_flight(), 2, "the limit");
    assert!(
        conn.accepts_input(),
        "the ping waits on its batch, the batch on the client: read on"
    );
    let asked = last_request(&pushed);
    let answer = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"action":"decline"}});
    host.take(conn.receive(answer.to_string().as_bytes()));
    let items = reply(&mut host);
    assert_eq!(ids(&items), [json!(1), json!(2)]);
    assert_eq!(conn.in_flight(), 0);
}

#[test]
fn a_draining_connection_answers_a_batch_s_requests_that_it_is_shutting_down() {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::stdio(4)),
        "2025-03-26",
    );
    conn.drain();
    let mut host = Host::new();
    host.take(conn.receive(&pings(2)));
    let items = reply(&mut host);
    assert!(items
        .iter()
        .all(|i| i["error"]["message"] == "the server is shutting down"));
    conn.close();
    assert!(matches!(conn.receive(&pings(2)), Received::Nothing));
}

#[test]
fn a_batch_still_running_when_the_connection_ends_answers_nothing() {
    let (server, _gates) = gated();
    let (outbound, _) = sink();
    let mut conn = initialized_at(
        Connection::new(server, "t", outbound, ConnectionOptions::websocket(4)),
        "2025-03-26",
    );
    let mut host = Host::new();
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}
    ]);
    host.take(conn.receive(batch.to_string().as_bytes()));
    assert!(host.run().is_empty());
    drop(conn);
    assert!(
        host.run().is_empty(),
        "the waiting call was cancelled, and the ping's answer is not sent"
    );
}
