//! The stream-connection path (`orkestrel_mcp::connection::Connection`), fed as the stdio host
//! (bytes through `LineDecoder`, cut at arbitrary points) and the WebSocket host (one text frame
//! per `\n`-separated piece) feed it. Every request with a readable id is answered at most once,
//! with its id, and either answered, still running (a `subscriptions/listen`, a tool waiting for
//! the client) or cancelled by a `notifications/cancelled` naming it; notifications and
//! responses get no answer; every answer and every pushed message is well-formed JSON; nothing
//! is answered once the connection is dropped; no panic. A request reusing the id of one still
//! running is refused with `-32600` and its id; under the stdio rules input pauses at the
//! limit only while a request in flight can finish without the client.
#![no_main]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::server::connection::{Connection, ConnectionOptions, Received};
use orkestrel_mcp::server::context::Outbound;
use orkestrel_mcp::wire::framing::{Frame, LineDecoder};
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::McpServer;
use orkestrel_mcp_fuzz::{
    check, check_batch_reply, expect, handshake_at, readable_raw_id, server, Expect,
};
use serde_json::Value;

/// One dispatched call: its frame, whether it is a request, and its outcome once finished.
struct Dispatched {
    frame: Vec<u8>,
    /// Its readable request id, if any.
    id: Option<Value>,
    request: bool,
    /// A batch taken (its outcome is its reply array).
    batch: bool,
    outcome: Rc<RefCell<Option<Option<String>>>>,
}

fn frames(body: &[u8], websocket: bool, cut: usize) -> Vec<Vec<u8>> {
    if websocket {
        return body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    }
    let mut decoder = LineDecoder::new(4096);
    let mut out = Vec::new();
    let mut rest = body;
    let mut k = cut;
    while !rest.is_empty() {
        let n = (k % 13 + 1).min(rest.len());
        k = k.wrapping_mul(7).wrapping_add(3);
        let (chunk, tail) = rest.split_at(n);
        out.extend(decoder.push(chunk));
        rest = tail;
    }
    out.extend(decoder.finish());
    out.into_iter()
        .filter_map(|f| match f {
            Frame::Line(line) => Some(line),
            Frame::TooLong(_) => None,
        })
        .collect()
}

fn request_id(frame: &[u8]) -> Option<Value> {
    let value: Value = orkestrel_mcp_fuzz::parse(frame).ok()?;
    value.get("method")?;
    value
        .get("id")
        .filter(|id| readable_raw_id(frame, id))
        .cloned()
}

fn reuses_a_running_id(id: Option<&Value>, dispatched: &[Dispatched]) -> bool {
    let Some(id) = id else {
        return false;
    };
    dispatched
        .iter()
        .any(|d| d.request && d.outcome.borrow().is_none() && d.id.as_ref() == Some(id))
}

/// The ids named by the `notifications/cancelled` among `frames`.
fn cancelled(frames: &[Vec<u8>]) -> Vec<Value> {
    frames
        .iter()
        .filter_map(|f| orkestrel_mcp_fuzz::parse(f).ok())
        .filter(|v| v["method"] == "notifications/cancelled")
        .map(|v| v["params"]["requestId"].clone())
        .collect()
}

fuzz_target!(|data: &[u8]| {
    // Byte 0: bit 0 WebSocket (else stdio), bits 1-3 the in-flight limit - 1, bits 4-6 the
    // cuts, bit 7 the handshake at 2025-03-26 (JSON-RPC batches received) instead of 2025-11-25.
    let Some((&head, body)) = data.split_first() else {
        return;
    };
    let websocket = head & 1 == 1;
    let limit = usize::from((head >> 1) & 7) + 1;
    let batches = head & 0x80 != 0;
    let options = if websocket {
        ConnectionOptions::websocket(limit)
    } else {
        ConnectionOptions::stdio(limit)
    };
    let frames = frames(body, websocket, usize::from((head >> 4) & 7));
    let cancelled = cancelled(&frames);

    let pushed: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = pushed.clone();
    let outbound: Outbound = Arc::new(move |m: JsonRpcMessage| {
        sink.lock().unwrap().push(m.to_json());
        true
    });
    // One server for every input (building its tools' schemas per input would dominate): each
    // connection is its own scope, forgotten when it drops.
    static SERVER: OnceLock<McpServer> = OnceLock::new();
    let server = SERVER.get_or_init(server).clone();
    let mut conn = Connection::new(server, "fuzz", outbound, options);
    // Before `initialize` every request but ping and server/discover is refused (unit-tested in
    // the library): the fuzzer starts past the handshake.
    handshake_at(&mut conn, if batches { "2025-03-26" } else { "2025-11-25" });
    let mut pool = LocalPool::new();
    let mut dispatched = Vec::new();

    for frame in &frames {
        // Past the handshake a re-`initialize` is refused: the revision (and so whether batches
        // are received) stays the handshake's.
        let expected = expect(frame);
        let id = request_id(frame);
        let duplicate = reuses_a_running_id(id.as_ref(), &dispatched);
        let mut received = conn.receive(frame);
        if let Received::Wait(parked) = received {
            // A batch waiting for places (stdio): a host reads nothing more until they are
            // free; the fuzzer runs what it can, then takes it or, should it still wait, drops
            // it (its host would wait on).
            assert!(!websocket && batches, "only a paused connection waits");
            pool.run_until_stalled();
            received = conn.resume(parked);
            if matches!(received, Received::Wait(_)) {
                continue;
            }
        }
        // Refused at once (at the limit) or by its call (-32600), holding no place.
        let duplicate = duplicate && matches!(received, Received::Dispatch(_));
        match received {
            Received::Wait(_) => unreachable!("taken or skipped above"),
            Received::Batch(mut call) => {
                assert!(batches, "a batch taken at 2025-11-25");
                assert!(conn.in_flight() <= limit, "a batch ran past the limit");
                let outcome: Rc<RefCell<Option<Option<String>>>> = Rc::default();
                dispatched.push(Dispatched {
                    frame: frame.clone(),
                    id: None,
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
            Received::Nothing => {
                let skipped = matches!(expected, Expect::Reply { parse: true, .. }) && !websocket;
                assert!(
                    expected == Expect::Nothing || skipped,
                    "no answer to a message that deserves one ({expected:?})\n  frame: {}",
                    String::from_utf8_lossy(frame)
                );
            }
            Received::Answer(response) => check(frame, &expected, Some(&response.to_json())),
            Received::Dispatch(mut call) => {
                let outcome: Rc<RefCell<Option<Option<String>>>> = Rc::default();
                dispatched.push(Dispatched {
                    frame: frame.clone(),
                    id: id.clone(),
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
        pool.run_until_stalled();
        if duplicate {
            let last = dispatched.last().expect("a request is dispatched");
            let answer = last.outcome.borrow().clone().flatten();
            let answer: Value =
                orkestrel_mcp_fuzz::parse(answer.as_deref().unwrap_or("null").as_bytes()).unwrap();
            // -32600, or an error the request earned before its id was looked at (an
            // unsupported protocol version, say): an error with its id either way.
            assert!(
                &answer["id"] == id.as_ref().unwrap() && answer["error"]["code"].is_i64(),
                "a request reusing a running id was not refused: {answer}\n  frame: {}",
                String::from_utf8_lossy(frame)
            );
        }
        // Under `AtLimit::Pause` a host would stop reading here while `accepts_input` is false;
        // a request taken anyway still runs (`Connection::receive`), which lets the fuzzer go on.
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
            None => {} // still running (a listen stream, a tool waiting for the client)
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

    // The connection ends: what still runs is cancelled, never answered.
    let running: Vec<usize> = (0..dispatched.len())
        .filter(|&i| dispatched[i].outcome.borrow().is_none())
        .collect();
    drop(conn);
    pool.run_until_stalled();
    for i in running {
        let outcome = dispatched[i].outcome.borrow().clone();
        assert!(
            !matches!(outcome, Some(Some(_))),
            "answered after the connection ended\n  frame: {}",
            String::from_utf8_lossy(&dispatched[i].frame)
        );
    }
});
