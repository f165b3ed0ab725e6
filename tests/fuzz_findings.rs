//! What the fuzz targets (`fuzz/`, `bash tests/fuzz.sh`) found, as plain tests of the core.
//!
//! Each test states the behaviour the library should have and fails today, so it is
//! `#[ignore]`d until the fix lands: run them with `cargo test --test fuzz_findings -- --ignored`,
//! and remove the `#[ignore]` with the fix.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use futures::channel::oneshot;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use orkestrel_mcp::connection::{Connection, ConnectionOptions, Received};
use orkestrel_mcp::context::Outbound;
use orkestrel_mcp::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::{McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Map, Value};

type Gates = Arc<Mutex<Vec<oneshot::Sender<()>>>>;

/// A server whose `wait` tool runs until the test opens its gate, and whose `ask` tool asks the
/// client for input (a server→client `elicitation/create` on the handshake wire).
fn server() -> (McpServer, Gates) {
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let gates: Gates = Arc::default();
    let g = gates.clone();
    server.tools().add(Tool::from_json(
        "wait",
        json!({"type": "object"}),
        move |_: Map<String, Value>, _ctx| {
            let (tx, rx) = oneshot::channel();
            g.lock().unwrap().push(tx);
            async move {
                let _ = rx.await;
                Ok::<_, String>("released")
            }
        },
    ));
    server.tools().add(Tool::from_json(
        "ask",
        json!({"type": "object"}),
        |_: Map<String, Value>, ctx: RequestContext| async move {
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
    (server, gates)
}

/// The messages a connection pushed (notifications, server→client requests).
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

/// Runs dispatched calls on a local pool and collects their answers.
#[derive(Default)]
struct Host {
    pool: LocalPool,
    answers: Rc<RefCell<Vec<Value>>>,
}

impl Host {
    fn take(&mut self, received: Received) {
        match received {
            Received::Nothing => {}
            Received::Answer(r) => self
                .answers
                .borrow_mut()
                .push(serde_json::from_str(&r.to_json()).unwrap()),
            Received::Dispatch(mut call) => {
                let answers = self.answers.clone();
                self.pool
                    .spawner()
                    .spawn_local(async move {
                        if let Some(r) = (&mut call).await {
                            answers
                                .borrow_mut()
                                .push(serde_json::from_str(&r.to_json()).unwrap());
                        }
                        drop(call);
                    })
                    .unwrap();
            }
        }
    }

    fn run(&mut self) -> Vec<Value> {
        self.pool.run_until_stalled();
        std::mem::take(&mut *self.answers.borrow_mut())
    }
}

const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}"#;

fn call(id: Value, tool: &str) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
        .to_string()
        .into_bytes()
}

/// Found by the `connection` target (kept out of it unless `FUZZ_DUPLICATE_IDS=1`).
///
/// Two requests with the same id in flight on one connection: the second's cancellation entry
/// overwrites the first's (`Peers::start` in src/peers.rs keys requests in flight by
/// `(scope, id)`), and when the first finishes, `Peers::finish` removes the entry, which is now
/// the second's. The second can then neither be cancelled by `notifications/cancelled` nor
/// cancelled when the connection ends (it answers after its connection is gone). The spec says
/// an id "MUST NOT have been previously used by the requestor within the same session"; a
/// duplicate should be refused (`-32600`, with its id) or tracked on its own.
#[test]
#[ignore = "fuzz finding: a duplicate id in flight escapes notifications/cancelled"]
fn a_request_reusing_a_running_id_is_refused_or_still_cancellable() {
    let (server, gates) = server();
    let (outbound, _) = sink();
    let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(8));
    let mut host = Host::default();
    host.take(conn.receive(&call(json!(1), "wait")));
    host.take(conn.receive(&call(json!(1), "wait")));
    let refused = host.run();
    // The first finishes; then the client cancels request 1 (the one still running).
    let first = gates.lock().unwrap().remove(0);
    first.send(()).unwrap();
    let answered = host.run();
    assert_eq!(answered.len(), 1, "{answered:?}");
    host.take(conn.receive(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    ));
    host.run();
    for gate in gates.lock().unwrap().drain(..) {
        let _ = gate.send(());
    }
    let late = host.run();
    let refused_at_once = refused.len() == 1 && refused[0]["error"]["code"] == -32600;
    assert!(
        refused_at_once || late.is_empty(),
        "the duplicate was neither refused ({refused:?}) nor cancelled: answered {late:?}"
    );
}

/// Found while writing the `connection` target (what may resolve a server→client request).
///
/// A response resolves the server→client request with its id whatever connection it comes from:
/// `Pending::resolve` (src/peers.rs) ignores the scope it stored at `register`, and the ids are
/// a counter (`"s-1"`, `"s-2"`, …), so one peer of a shared server (another WebSocket
/// connection, another session) can answer — forge — an elicitation or a sampling request sent
/// to another peer.
#[test]
#[ignore = "fuzz finding: a response from another connection resolves a server→client request"]
fn a_response_from_another_connection_does_not_answer_a_server_request() {
    let (server, _) = server();
    let (out_a, pushed_a) = sink();
    let (out_b, _) = sink();
    let mut a = Connection::new(server.clone(), "a", out_a, ConnectionOptions::stdio(8));
    let mut b = Connection::new(server, "b", out_b, ConnectionOptions::stdio(8));
    let mut host = Host::default();
    host.take(a.receive(INIT));
    assert_eq!(host.run().len(), 1);
    host.take(a.receive(&call(json!(2), "ask")));
    assert!(host.run().is_empty(), "the tool waits for its client");
    let asked = pushed_a
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("a asked its client");
    assert_eq!(asked["method"], "elicitation/create");
    // Connection b answers a's request.
    let forged = json!({"jsonrpc":"2.0","id":asked["id"],"result":{"action":"accept","content":{"name":"forged"}}});
    host.take(b.receive(forged.to_string().as_bytes()));
    let answers = host.run();
    assert!(answers.is_empty(), "a's tool took b's answer: {answers:?}");
}

/// Found while writing the `connection` target (how the stdio host feeds a connection).
///
/// Under `AtLimit::Pause` the host reads nothing while the limit of requests runs
/// (`Connection::accepts_input`), but a request that waits on its client — a tool's
/// server→client request, a handshake-era elicitation — needs the client's response read to
/// finish. With the limit of such requests running, the stdio connection stops for good: the
/// responses (and the `notifications/cancelled` that could free it) are never read. The same
/// holds for 2026-07-28 `subscriptions/listen` streams, which run until the connection ends:
/// `max_in_flight` of them and a stdio connection reads nothing more.
#[test]
#[ignore = "fuzz finding: stdio pauses its input while its requests wait for the client's responses"]
fn a_request_waiting_for_its_client_does_not_stop_the_input() {
    let (server, _) = server();
    let (outbound, pushed) = sink();
    let mut conn = Connection::new(server, "t", outbound, ConnectionOptions::stdio(1));
    let mut host = Host::default();
    host.take(conn.receive(INIT));
    assert_eq!(host.run().len(), 1);
    host.take(conn.receive(&call(json!(2), "ask")));
    assert!(host.run().is_empty());
    assert!(pushed
        .lock()
        .unwrap()
        .iter()
        .any(|m| m["method"] == "elicitation/create"));
    assert!(
        conn.accepts_input(),
        "the host stops reading, so the client's answer is never read: the connection hangs"
    );
}

/// Found by the `sse` target's round trip (`decode(encode_event(id, data)) == data`).
///
/// `encode_event` (src/sse.rs) splits `data` into `data:` lines at `\n` only, but a `\r` is a
/// line end to every SSE parser: data holding a `\r` is cut short, and what follows the `\r`
/// is read as a field of its own. The library passes only serialized JSON (which escapes `\r`),
/// but the function is public: `data` of `"x\rid: 9\revent: e"` sets the stream's last event id
/// (sent back as `Last-Event-ID` on reconnection) and the event type.
#[test]
#[ignore = "fuzz finding: a CR in SSE data injects fields"]
fn a_cr_in_event_data_injects_no_field() {
    let text = orkestrel_mcp::sse::encode_event(Some("1"), "x\rid: 9\revent: e");
    let events = orkestrel_mcp::sse::decode_all(text.as_bytes());
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].id.as_deref(), Some("1"), "{events:?}");
    assert_eq!(events[0].event, "message", "{events:?}");
}
