//! The Streamable HTTP route plan (`orkestrel_mcp::http::Route`), stateless or with sessions,
//! fed arbitrary requests (method, path, header pairs, body; see
//! `orkestrel_mcp_fuzz::http_requests` for the input format) the way a host drives it:
//! `Route::head`, then the body (cut to `TooLarge` over the limit it names) and
//! `Route::respond`, with what it spawns run to a standstill and any event stream read until it
//! ends or stalls. Whatever the request: no panic, a status in 100..=599, and a `POST` to the
//! path carrying a JSON-RPC request with an id gets an answer — never an empty body, JSON that
//! is one well-formed JSON-RPC response (with the request's id, or `null` when the answer is an
//! error the body was not read for), or an event stream with exactly one response carrying the
//! id once it ends (a stream that stays open must be a `subscriptions/listen` or be waiting for
//! the client's answer to a server→client request it sent). Every event is a JSON-RPC message.
#![no_main]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::http::session::{SessionOptions, SessionStore};
use orkestrel_mcp::http::{AnswerBody, Body, Head, HttpRequest, Route, RouteOptions, Spawn};
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::wire::sse::decode_all;
use orkestrel_mcp::BoxFuture;
use orkestrel_mcp_fuzz::{check_reply, expect, http_requests, server, Expect};
use serde_json::Value;

type Spawned = Arc<Mutex<Vec<BoxFuture<'static, ()>>>>;

/// The most rounds of "run what is ready, then what it spawned" per request.
const ROUNDS: usize = 64;

fn route(flags: u8, spawned: &Spawned) -> Route {
    let queue = spawned.clone();
    let spawn: Spawn = Arc::new(move |future| queue.lock().unwrap().push(future));
    let options = RouteOptions {
        streaming: flags & 2 == 0,
        prefer_json: flags & 4 != 0,
        max_body_bytes: if flags & 8 != 0 { 64 } else { 1 << 20 },
        ..RouteOptions::default()
    };
    static SERVER: OnceLock<orkestrel_mcp::McpServer> = OnceLock::new();
    let route = Route::new(SERVER.get_or_init(server).clone(), options, spawn);
    if flags & 1 == 1 {
        let options = SessionOptions {
            max_sessions: 4,
            ..SessionOptions::default()
        };
        route.with_sessions(Arc::new(SessionStore::new(options, Arc::new(|| 0))))
    } else {
        route
    }
}

/// Run the pool and what was spawned until nothing more can progress.
fn settle(pool: &mut LocalPool, spawned: &Spawned) {
    for _ in 0..ROUNDS {
        pool.run_until_stalled();
        let more: Vec<_> = std::mem::take(&mut *spawned.lock().unwrap());
        if more.is_empty() {
            return;
        }
        for future in more {
            pool.spawner().spawn_local(future).expect("the pool runs");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let spawned: Spawned = Arc::default();
    let route = route(flags, &spawned);
    let mut pool = LocalPool::new();
    let mut session: Option<String> = None;
    for mut request in http_requests(rest) {
        // The session the last answer assigned stands in for `$SID` (see http_requests).
        for (_, value) in request.headers.iter_mut() {
            if let (Some(v), Some(id)) = (value.as_mut(), session.as_deref()) {
                if v == "$SID" {
                    *v = id.to_owned();
                }
            }
        }
        let is_post = request.method == "POST" && request.path == route.options().path;
        let body = match &request.body {
            Body::Bytes(b) => b.clone(),
            _ => Vec::new(),
        };
        let waits = waits_for_the_client(&body);
        let answer = match route.head(&request.method, &request.path, &request) {
            Head::Answer(answer) => Some(answer),
            Head::ReadBody { limit } => {
                if body.len() > limit {
                    request.body = Body::TooLarge;
                }
                respond(&route, request, &mut pool, &spawned)
            }
            Head::NoBody => {
                request.body = Body::Bytes(Vec::new());
                respond(&route, request, &mut pool, &spawned)
            }
        };
        let Some(answer) = answer else {
            assert!(
                waits,
                "respond never finished, yet the plan waits on nothing but what it spawned\n  body: {}",
                String::from_utf8_lossy(&body)
            );
            continue;
        };
        assert!(
            (100..=599).contains(&answer.status),
            "status {}",
            answer.status
        );
        if let Some(id) = answer.header("mcp-session-id") {
            session = Some(id.to_owned());
        }
        let request_id = match expect(&body) {
            Expect::Reply { id, parse: false } if is_post && has_method(&body) => Some(id),
            _ => None,
        };
        let status = answer.status;
        match answer.body {
            AnswerBody::Empty => assert!(
                request_id.is_none(),
                "a request got HTTP {status} with no body\n  body: {}",
                String::from_utf8_lossy(&body)
            ),
            AnswerBody::Text(_) => assert!(
                request_id.is_none() || status >= 400,
                "a request got text with HTTP {status}"
            ),
            AnswerBody::Json(text) => {
                let reply: Value =
                    orkestrel_mcp_fuzz::parse(text.as_bytes()).expect("a JSON answer is JSON");
                if let Some(id) = &request_id {
                    check_reply(&body, &reply, &text);
                    let got = &reply["id"];
                    assert!(
                        got == id || (got.is_null() && status >= 400),
                        "the answer's id differs (HTTP {status})\n  body: {}\n  answer: {text}",
                        String::from_utf8_lossy(&body)
                    );
                }
            }
            AnswerBody::Events(stream) => {
                let texts: Rc<RefCell<Vec<String>>> = Rc::default();
                let ended = Rc::new(RefCell::new(false));
                let (t, e) = (texts.clone(), ended.clone());
                pool.spawner()
                    .spawn_local(async move {
                        let mut stream = stream;
                        while let Some(text) = stream.next().await {
                            t.borrow_mut().push(text);
                        }
                        *e.borrow_mut() = true;
                    })
                    .expect("the pool runs");
                settle(&mut pool, &spawned);
                let joined = texts.borrow().concat();
                let messages: Vec<Value> = decode_all(joined.as_bytes())
                    .into_iter()
                    .filter(|event| !event.data.is_empty())
                    .map(|event| {
                        let value: Value = orkestrel_mcp_fuzz::parse(event.data.as_bytes())
                            .unwrap_or_else(|e| {
                                panic!("an event is not JSON ({e}): {}", event.data)
                            });
                        assert!(
                            JsonRpcMessage::from_value(value.clone()).is_ok(),
                            "an event is not JSON-RPC: {}",
                            event.data
                        );
                        value
                    })
                    .collect();
                if let Some(id) = &request_id {
                    let answers = messages
                        .iter()
                        .filter(|m| m.get("method").is_none() && m.get("id") == Some(id))
                        .count();
                    assert!(answers <= 1, "answered {answers} times: {joined}");
                    if *ended.borrow() {
                        assert_eq!(answers, 1, "the stream ended unanswered: {joined}");
                    } else if answers == 0 {
                        let asks = messages
                            .iter()
                            .any(|m| m.get("method").is_some() && m.get("id").is_some());
                        assert!(
                            waits || asks,
                            "the stream stalled unanswered\n  body: {}\n  events: {joined}",
                            String::from_utf8_lossy(&body)
                        );
                    }
                }
            }
        }
    }
});

/// `Route::respond` run to a standstill: its answer, or `None` when it is still waiting.
fn respond(
    route: &Route,
    request: HttpRequest,
    pool: &mut LocalPool,
    spawned: &Spawned,
) -> Option<orkestrel_mcp::http::Answer> {
    let slot: Rc<RefCell<Option<orkestrel_mcp::http::Answer>>> = Rc::default();
    let out = slot.clone();
    let route = route.clone();
    pool.spawner()
        .spawn_local(async move {
            *out.borrow_mut() = Some(route.respond(request).await);
        })
        .expect("the pool runs");
    settle(pool, spawned);
    let answer = slot.borrow_mut().take();
    answer
}

fn json_of(body: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match orkestrel_mcp_fuzz::parse(body).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A JSON-RPC request (or an attempt at one): an object with a `method` member.
fn has_method(body: &[u8]) -> bool {
    json_of(body).is_some_and(|m| m.contains_key("method"))
}

/// A request that may legitimately wait for the client: a `subscriptions/listen` stream, or a
/// call of the fuzz server's `ask` tool (a server→client request in a session).
fn waits_for_the_client(body: &[u8]) -> bool {
    match orkestrel_mcp_fuzz::parse(body) {
        Ok(Value::Object(map)) => member_waits(&map),
        // A batch (2025-03-26) waits for the client when any of its requests does: its reply
        // comes once every request is answered. A response in the same batch need not free it
        // (it may answer an id the server has not used yet, or answer before the request asks).
        Ok(Value::Array(items)) => items
            .iter()
            .any(|item| item.as_object().is_some_and(member_waits)),
        _ => false,
    }
}

/// [`waits_for_the_client`] of one message.
fn member_waits(map: &serde_json::Map<String, Value>) -> bool {
    match map.get("method").and_then(Value::as_str) {
        Some("subscriptions/listen") => true,
        Some("tools/call") => map
            .get("params")
            .and_then(|p| p.get("name"))
            .is_some_and(|n| n == "ask"),
        _ => false,
    }
}
