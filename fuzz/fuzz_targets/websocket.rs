//! The WebSocket message path: a core `Connection` under the WebSocket rules
//! (`ConnectionOptions::websocket`: refuse at the limit, answer text that is not JSON, cancel at
//! the close), fed text frames of any content (length-prefixed, so a frame may hold newlines or
//! several JSON values) interleaved with the host's own actions (run the calls, close, drop the
//! connection). Whatever the frames: no panic; every frame that deserves an answer by JSON-RPC
//! (text that is not JSON included: `-32700`) gets exactly one, carrying its id, at once or from
//! its call, unless the request was cancelled or is still running when the connection ends;
//! a request beyond the limit is refused at once with `-32000`; after `close` every frame is
//! ignored; nothing is answered once the connection is dropped; every pushed message is
//! JSON-RPC.
#![no_main]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::server::connection::{Connection, ConnectionOptions, Received};
use orkestrel_mcp::server::context::Outbound;
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::McpServer;
use orkestrel_mcp_fuzz::{check, check_batch_reply, expect, handshake_at, server, Expect};
use serde_json::Value;

type Outcome = Rc<RefCell<Option<Option<String>>>>;

struct Dispatched {
    frame: Vec<u8>,
    request: bool,
    /// A batch taken (its outcome is its reply array).
    batch: bool,
    outcome: Outcome,
}

fuzz_target!(|data: &[u8]| {
    // Byte 0: the in-flight limit - 1 (bits 0-2), bit 3 set: no handshake first, bit 4 set: the
    // handshake at 2025-03-26 (JSON-RPC batches received); then actions: a length byte and that many
    // bytes of text (lengths 0..=249), or 250 run the calls, 251 close, 252 end the input.
    let Some((&head, mut rest)) = data.split_first() else {
        return;
    };
    let limit = usize::from(head & 7) + 1;
    static SERVER: OnceLock<McpServer> = OnceLock::new();
    let server = SERVER.get_or_init(server).clone();
    let pushed: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = pushed.clone();
    let outbound: Outbound = Arc::new(move |m: JsonRpcMessage| {
        sink.lock().unwrap().push(m.to_json());
        true
    });
    let mut conn = Connection::new(server, "ws", outbound, ConnectionOptions::websocket(limit));
    let mut batches = head & 8 == 0 && head & 16 != 0;
    if head & 8 == 0 {
        handshake_at(&mut conn, if batches { "2025-03-26" } else { "2025-11-25" });
    }
    let mut pool = LocalPool::new();
    let mut dispatched: Vec<Dispatched> = Vec::new();
    let mut cancelled: Vec<Value> = Vec::new();
    let mut closed = false;

    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        match op {
            250 => {
                pool.run_until_stalled();
                continue;
            }
            251 => {
                conn.close();
                closed = true;
                assert!(!conn.accepts_input(), "a closing connection takes input");
                continue;
            }
            252 => break,
            _ => {}
        }
        let n = usize::from(op).min(rest.len());
        let (frame, tail) = rest.split_at(n);
        rest = tail;
        // A text frame is UTF-8 (the driver closes with 1007 otherwise).
        let Ok(text) = std::str::from_utf8(frame) else {
            continue;
        };
        let frame = text.as_bytes();
        // Without a handshake first, an `initialize` at 2025-03-26 may make batches received
        // from then on (a repeat after an accepted one is refused: this over-approximates).
        batches |= orkestrel_mcp_fuzz::initializes_at(frame, "2025-03-26");
        let expected = expect(frame);
        if let Ok(v) = orkestrel_mcp_fuzz::parse(frame) {
            if v["method"] == "notifications/cancelled" {
                cancelled.push(v["params"]["requestId"].clone());
            }
        }
        assert!(
            conn.accepts_input() != closed,
            "the WebSocket rules read on at the limit, and stop at the close"
        );
        let at_limit = conn.in_flight() >= limit;
        let received = conn.receive(frame);
        if closed {
            assert!(
                matches!(received, Received::Nothing),
                "a frame after the close was taken"
            );
            continue;
        }
        match received {
            Received::Wait(_) => panic!("the WebSocket rules never wait"),
            Received::Batch(mut call) => {
                assert!(batches, "a batch taken at another revision");
                assert!(conn.in_flight() <= limit, "a batch ran past the limit");
                let outcome: Outcome = Rc::default();
                dispatched.push(Dispatched {
                    frame: frame.to_vec(),
                    request: true,
                    batch: true,
                    outcome: outcome.clone(),
                });
                pool.spawner()
                    .spawn_local(async move {
                        let answer = (&mut call).await.map(|r| r.to_json());
                        *outcome.borrow_mut() = Some(answer);
                        drop(call);
                    })
                    .expect("the pool runs");
            }
            Received::Nothing => assert_eq!(
                expected,
                Expect::Nothing,
                "no answer to a frame that deserves one\n  frame: {text}"
            ),
            Received::Answer(response) => {
                let json = response.to_json();
                check(frame, &expected, Some(&json));
                if at_limit && matches!(expected, Expect::Reply { .. }) {
                    let value: Value = orkestrel_mcp_fuzz::parse(json.as_bytes()).unwrap();
                    let code = &value["error"]["code"];
                    // At the limit a valid request is refused; an invalid one gets its own error.
                    if JsonRpcMessage::from_slice(frame).is_ok() {
                        assert_eq!(code, -32000, "at the limit: {json}");
                    }
                }
            }
            Received::Dispatch(mut call) => {
                assert!(
                    !(at_limit && call.is_request()),
                    "a request beyond the limit was dispatched"
                );
                let outcome: Outcome = Rc::default();
                dispatched.push(Dispatched {
                    frame: frame.to_vec(),
                    request: call.is_request(),
                    batch: false,
                    outcome: outcome.clone(),
                });
                pool.spawner()
                    .spawn_local(async move {
                        let answer = (&mut call).await.map(|r| r.to_json());
                        *outcome.borrow_mut() = Some(answer);
                        drop(call);
                    })
                    .expect("the pool runs");
            }
        }
    }
    pool.run_until_stalled();

    for call in &dispatched {
        let outcome = call.outcome.borrow().clone();
        if call.batch {
            // Its reply, or none (nothing to answer, every request cancelled, or still running).
            if let Some(Some(reply)) = outcome {
                check_batch_reply(&call.frame, &reply);
            }
            continue;
        }
        let expected = expect(&call.frame);
        if !call.request {
            assert_eq!(
                outcome,
                Some(None),
                "a notification or a response was answered or did not finish\n  frame: {}",
                String::from_utf8_lossy(&call.frame)
            );
            continue;
        }
        match outcome {
            None => {} // still running: a listen stream, a tool waiting for the client
            Some(Some(answer)) => check(&call.frame, &expected, Some(&answer)),
            Some(None) => {
                let Expect::Reply { id, .. } = &expected else {
                    panic!("a request that deserves no answer was dispatched")
                };
                assert!(
                    cancelled.contains(id),
                    "a request got no answer and was not cancelled\n  frame: {}",
                    String::from_utf8_lossy(&call.frame)
                );
            }
        }
    }
    for message in pushed.lock().unwrap().iter() {
        let value: Value = serde_json::from_str(message).expect("a pushed message is JSON");
        assert!(
            JsonRpcMessage::from_value(value).is_ok(),
            "a pushed message is not JSON-RPC: {message}"
        );
    }
    // The socket closes (AtEnd::Cancel): what still runs is dropped, never answered.
    let running: Vec<usize> = (0..dispatched.len())
        .filter(|&i| dispatched[i].outcome.borrow().is_none())
        .collect();
    drop(conn);
    pool.run_until_stalled();
    for i in running {
        assert!(
            !matches!(*dispatched[i].outcome.borrow(), Some(Some(_))),
            "answered after the connection ended\n  frame: {}",
            String::from_utf8_lossy(&dispatched[i].frame)
        );
    }
});
