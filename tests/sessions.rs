//! Sessions and resumable streams over real HTTP on 127.0.0.1 (seed clauses 18, 19; spec
//! `basic/transports` Session Management, Resumability and Redelivery).
#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use orkestrel_mcp::http::session::SessionOptions;
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::{JsonRpcNotification, McpServer, RequestContext, ServerOptions, Tool};
use serde::Deserialize;
use serde_json::{json, Value};
use support::*;
use tokio::sync::Notify;

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn sid(id: &str) -> (&'static str, &str) {
    ("mcp-session-id", id)
}

#[tokio::test]
async fn the_full_session_sequence() {
    let srv = start(server(), EndpointOptions::default()).await;
    let addr = srv.addr;

    // Mint: a visible-ASCII id on the initialize answer.
    let reply = post(addr, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 200);
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    assert!(
        id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "{id}"
    );
    assert_eq!(
        reply.messages()[0]["result"]["protocolVersion"],
        "2025-06-18"
    );

    // Reuse.
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, &[sid(&id)], initialized).await.status, 202);
    let reply = post(addr, &[sid(&id)], LIST).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.messages()[0]["result"], json!({"tools": []}));

    // Missing → 400 (POST, GET, DELETE); unknown → 404.
    let reply = post(addr, &[], LIST).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32600);
    assert_eq!(reply.json()["id"], Value::Null);
    let sse = [("accept", "text/event-stream")];
    assert_eq!(send(addr, "GET", &sse, "").await.status, 400);
    assert_eq!(send(addr, "DELETE", &[], "").await.status, 400);
    let reply = post(addr, &[sid("no-such-session")], LIST).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["message"], "Session not found");

    // DELETE → 204, then 404 everywhere.
    assert_eq!(send(addr, "DELETE", &[sid(&id)], "").await.status, 204);
    assert_eq!(post(addr, &[sid(&id)], LIST).await.status, 404);
    assert_eq!(send(addr, "DELETE", &[sid(&id)], "").await.status, 404);
    assert_eq!(send(addr, "GET", &[sid(&id), sse[0]], "").await.status, 404);

    // An unknown id with an initialize is still 404 (spec: the client must drop the id).
    assert_eq!(
        post(addr, &[sid(&id)], &initialize(1, "2025-06-18"))
            .await
            .status,
        404
    );

    // Re-initialize without the header: a new id.
    let again = new_session(addr, "2025-06-18").await;
    assert_ne!(again, id);
    assert_eq!(post(addr, &[sid(&again)], LIST).await.status, 200);

    // Other verbs: 405 with Allow.
    let reply = send(addr, "PUT", &[sid(&again)], "").await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("GET, POST, DELETE"));
}

/// A session opened with a bearer token is bound to the token's user (spec, Security Best
/// Practices, Session Hijacking: bind session ids to user-specific information): another user's
/// valid token with its id gets `404` on `POST`, `GET` (no replay of the owner's stream) and
/// `DELETE` (the session goes on); the owner, also with a fresh token of the same subject, is
/// served.
#[tokio::test]
async fn a_session_is_bound_to_the_user_who_opened_it() {
    let srv = start(server(), support::server::gated_by_people(false)).await;
    let addr = srv.addr;
    let alice = "Bearer alice";
    let init = post(
        addr,
        &[("authorization", alice)],
        &initialize(1, "2025-11-25"),
    )
    .await;
    assert_eq!(init.status, 200);
    let id = init.header("mcp-session-id").unwrap().to_owned();
    let version = ("mcp-protocol-version", "2025-11-25");
    let served = post(addr, &[("authorization", alice), sid(&id), version], LIST).await;
    assert_eq!(served.status, 200, "{}", served.body);
    for other in ["Bearer bob", "Bearer robot"] {
        let as_other = [("authorization", other), sid(&id), version];
        let refused = post(addr, &as_other, LIST).await;
        assert_eq!(refused.status, 404, "{other} POST: {}", refused.body);
        let get = [
            ("authorization", other),
            sid(&id),
            version,
            ("accept", "text/event-stream"),
            ("last-event-id", "0"),
        ];
        assert_eq!(send(addr, "GET", &get, "").await.status, 404, "{other} GET");
        assert_eq!(
            send(addr, "DELETE", &as_other, "").await.status,
            404,
            "{other} DELETE"
        );
    }
    // 2026-07-28 traffic naming another user's session is served without one, as with an
    // unknown id (a 404 there would tell which ids are live).
    let mut modern = support::modern::modern_headers("tools/list", None);
    modern.push(("authorization".into(), "Bearer bob".into()));
    modern.push(("mcp-session-id".into(), id.clone()));
    let params = support::json::modern_params(json!({}));
    let body = support::json::rpc(json!(9), "tools/list", params);
    let served = support::modern::post_h(addr, &modern, &body).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(served.header("mcp-session-id"), None);
    // A fresh token of the same user is the same user.
    let again = post(
        addr,
        &[("authorization", "Bearer alice-2"), sid(&id), version],
        LIST,
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let still = post(addr, &[("authorization", alice), sid(&id), version], LIST).await;
    assert_eq!(still.status, 200, "the session goes on: {}", still.body);
    let ended = send(
        addr,
        "DELETE",
        &[("authorization", alice), sid(&id), version],
        "",
    )
    .await;
    assert_eq!(ended.status, 204);
}

#[tokio::test]
async fn a_failed_initialize_mints_nothing() {
    let srv = start(server(), EndpointOptions::default()).await;
    let bad = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let reply = post(srv.addr, &[], bad).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("mcp-session-id"), None);
    assert_eq!(reply.messages()[0]["error"]["code"], -32602);
    // Refused by the route (415): the minted session is forgotten.
    let reply = send(
        srv.addr,
        "POST",
        &[("accept", "application/json")],
        &initialize(1, "2025-06-18"),
    )
    .await;
    assert_eq!(reply.status, 415);
    assert_eq!(reply.header("mcp-session-id"), None);
    assert_eq!(srv.endpoint.sessions().unwrap().len(), 0);
    // Malformed JSON without a session: the route's -32700.
    let reply = post(srv.addr, &[], "{nope").await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], -32700);
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

/// A server whose `both` tool pushes `a` on the session stream, sends `r1` on its own request
/// stream, pushes `b`, then answers; and whose `gate` tool sends `g1`, waits for the test, sends
/// `g2`, then answers.
fn two_stream_server(gate: Arc<Notify>) -> McpServer {
    let server = server();
    let note = |m: &str| {
        JsonRpcNotification::new("notifications/message")
            .with_params(json!({"level":"info","data":m}))
    };
    server.tools().add(Tool::with_context(
        "both",
        move |_: Empty, ctx: RequestContext| async move {
            assert!(ctx.push(&note("a")));
            assert!(ctx.notify(note("r1")));
            assert!(ctx.push(&note("b")));
            Ok::<_, String>("both done")
        },
    ));
    server.tools().add(Tool::with_context(
        "gate",
        move |_: Empty, ctx: RequestContext| {
            let gate = gate.clone();
            async move {
                ctx.notify(note("g1"));
                gate.notified().await;
                ctx.notify(note("g2"));
                Ok::<_, String>("gate done")
            }
        },
    ));
    server
}

fn call(id: u64, name: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{}}})
        .to_string()
}

fn data_of(event: &Event) -> String {
    let v = event.json();
    v["params"]["data"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| v.to_string())
}

#[tokio::test]
async fn replay_across_two_streams() {
    let srv = start(
        two_stream_server(Arc::new(Notify::new())),
        EndpointOptions::default(),
    )
    .await;
    let addr = srv.addr;
    let id = new_session(addr, "2025-11-25").await;
    let get = [sid(&id), ("accept", "text/event-stream")];

    // The standalone stream, primed: an id, a retry, empty data.
    let response = open(addr, "GET", &get, "").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut standalone = SseStream::new(response);
    let priming = standalone.next().await.unwrap();
    assert!(priming.id.is_some() && priming.data.is_empty());
    assert_eq!(priming.retry, Some(1000));

    // The POST stream: priming, r1, the response — every event with an id.
    let reply = post(addr, &[sid(&id)], &call(5, "both")).await;
    assert_eq!(reply.status, 200);
    let post_events = parse_events(&reply.body);
    assert_eq!(post_events.len(), 3, "{post_events:?}");
    assert!(post_events.iter().all(|e| e.id.is_some()));
    assert!(post_events[0].data.is_empty());
    assert_eq!(data_of(&post_events[1]), "r1");
    assert_eq!(post_events[2].json()["id"], 5);

    // The standalone stream got a and b only.
    let a = standalone.next().await.unwrap();
    let b = standalone.next().await.unwrap();
    assert_eq!((data_of(&a), data_of(&b)), ("a".into(), "b".into()));
    drop(standalone);

    // Ids are unique in the session and name their stream.
    let ids: Vec<String> = [&priming, &a, &b]
        .into_iter()
        .chain(&post_events)
        .map(|e| e.id.clone().unwrap())
        .collect();
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        ids.len(),
        "{ids:?}"
    );
    let stream_of = |id: &str| id.split_once('-').unwrap().0.to_owned();
    assert_ne!(stream_of(&ids[0]), stream_of(&ids[3]));

    // Resume the standalone stream after a: b only, none of the POST stream's events.
    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", a.id.as_deref().unwrap()),
    ];
    let mut resumed = SseStream::new(open(addr, "GET", &last, "").await);
    let replayed = resumed.next().await.unwrap();
    assert_eq!(
        (replayed.id.clone(), data_of(&replayed)),
        (b.id.clone(), "b".into())
    );
    drop(resumed);

    // Resume the (answered) POST stream after its priming: r1, the response, then the end.
    let cursor = post_events[0].id.clone().unwrap();
    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", cursor.as_str()),
    ];
    let rest = SseStream::new(open(addr, "GET", &last, "").await)
        .rest()
        .await;
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(data_of(&rest[0]), "r1");
    assert_eq!(rest[1].json()["result"]["content"][0]["text"], "both done");
    assert_eq!(rest[0].id, post_events[1].id);

    // An unknown id replays nothing: a fresh, primed standalone stream that gets new pushes.
    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", "zz-zz"),
    ];
    let mut fresh = SseStream::new(open(addr, "GET", &last, "").await);
    let primed = fresh.next().await.unwrap();
    assert!(primed.data.is_empty() && primed.id.is_some());
    assert_eq!(post(addr, &[sid(&id)], &call(6, "both")).await.status, 200);
    assert_eq!(data_of(&fresh.next().await.unwrap()), "a");
}

#[tokio::test]
async fn a_dropped_post_stream_is_resumed_by_get() {
    let gate = Arc::new(Notify::new());
    let srv = start(two_stream_server(gate.clone()), EndpointOptions::default()).await;
    let addr = srv.addr;
    let id = new_session(addr, "2025-11-25").await;
    let headers: Vec<_> = POST.iter().copied().chain([sid(&id)]).collect();
    let mut stream = SseStream::new(open(addr, "POST", &headers, &call(7, "gate")).await);
    let _priming = stream.next().await.unwrap();
    let g1 = stream.next().await.unwrap();
    assert_eq!(data_of(&g1), "g1");
    drop(stream); // the connection drops; the request goes on (spec: not a cancellation)

    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", g1.id.as_deref().unwrap()),
    ];
    let mut resumed = SseStream::new(open(addr, "GET", &last, "").await);
    gate.notify_one();
    let rest = resumed.rest().await;
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(data_of(&rest[0]), "g2");
    assert_eq!(rest[1].json()["id"], 7);
    assert_eq!(rest[1].json()["result"]["content"][0]["text"], "gate done");
}

#[tokio::test]
async fn a_tool_closes_its_stream_and_the_client_polls_for_the_rest() {
    let gate = Arc::new(Notify::new());
    let server = server();
    let note = |m: &str| {
        JsonRpcNotification::new("notifications/message")
            .with_params(json!({"level":"info","data":m}))
    };
    let waiter = gate.clone();
    server.tools().add(Tool::with_context(
        "poll",
        move |_: Empty, ctx: RequestContext| {
            let gate = waiter.clone();
            async move {
                ctx.notify(note("c1"));
                assert!(ctx.close_sse_stream(), "the POST stream was live");
                assert!(!ctx.close_sse_stream(), "and is closed now");
                gate.notified().await;
                ctx.notify(note("c2"));
                Ok::<_, String>("polled")
            }
        },
    ));
    let srv = start(server, EndpointOptions::default()).await;
    let addr = srv.addr;
    let id = new_session(addr, "2025-11-25").await;
    let headers: Vec<_> = POST.iter().copied().chain([sid(&id)]).collect();
    // The POST stream: priming (with retry), c1, then the server ends it mid-call with a
    // `retry` field (no id, no data) and no response.
    let cut = SseStream::new(open(addr, "POST", &headers, &call(8, "poll")).await)
        .rest()
        .await;
    assert_eq!(cut.len(), 3, "{cut:?}");
    assert!(cut[0].data.is_empty() && cut[0].retry == Some(1000));
    assert_eq!(data_of(&cut[1]), "c1");
    assert!(cut[2].id.is_none() && cut[2].data.is_empty() && cut[2].retry == Some(1000));
    // The client reconnects with the last id it saw and gets the rest of the request.
    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", cut[1].id.as_deref().unwrap()),
    ];
    let mut resumed = SseStream::new(open(addr, "GET", &last, "").await);
    gate.notify_one();
    let rest = resumed.rest().await;
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(data_of(&rest[0]), "c2");
    assert_eq!(rest[1].json()["id"], 8);
    assert_eq!(rest[1].json()["result"]["content"][0]["text"], "polled");
}

#[tokio::test]
async fn older_clients_get_ids_but_no_priming() {
    let srv = start(
        two_stream_server(Arc::new(Notify::new())),
        EndpointOptions::default(),
    )
    .await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let reply = post(srv.addr, &[sid(&id)], &call(3, "both")).await;
    let events = parse_events(&reply.body);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.id.is_some() && !e.data.is_empty()));
}

#[tokio::test]
async fn json_replies_send_notifications_on_the_session_stream() {
    let srv = start(
        two_stream_server(Arc::new(Notify::new())),
        EndpointOptions::default(),
    )
    .await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let mut get = SseStream::new(
        open(
            srv.addr,
            "GET",
            &[sid(&id), ("accept", "text/event-stream")],
            "",
        )
        .await,
    );
    let json_only = [
        sid(&id),
        ("accept", "application/json"),
        ("content-type", "application/json"),
    ];
    let reply = send(srv.addr, "POST", &json_only, &call(4, "both")).await;
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["id"], 4);
    let got: Vec<String> = [
        get.next().await.unwrap(),
        get.next().await.unwrap(),
        get.next().await.unwrap(),
    ]
    .iter()
    .map(data_of)
    .collect();
    assert_eq!(got, ["a", "r1", "b"]);
}

#[tokio::test]
async fn delete_closes_the_sessions_streams() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-11-25").await;
    let mut get = SseStream::new(
        open(
            srv.addr,
            "GET",
            &[sid(&id), ("accept", "text/event-stream")],
            "",
        )
        .await,
    );
    assert!(get.next().await.unwrap().data.is_empty());
    assert_eq!(send(srv.addr, "DELETE", &[sid(&id)], "").await.status, 204);
    assert_eq!(get.next().await, None, "the stream ended");
}

#[tokio::test]
async fn a_second_get_takes_over_the_stream() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let headers = [sid(&id), ("accept", "text/event-stream")];
    let mut first = SseStream::new(open(srv.addr, "GET", &headers, "").await);
    let mut second = SseStream::new(open(srv.addr, "GET", &headers, "").await);
    assert_eq!(
        first.next().await,
        None,
        "replaced: never two live copies of one stream"
    );
    let session = srv.endpoint.sessions().unwrap().get(&id).unwrap();
    session.push(r#"{"jsonrpc":"2.0","method":"x"}"#);
    assert_eq!(second.next().await.unwrap().json()["method"], "x");
}

/// A client that initializes and never comes back holds a place under the cap for the
/// handshake TTL, not the idle TTL: a flood of bare `initialize` requests locks new clients out
/// that long after it stops, while a session its client used keeps the full idle TTL.
#[tokio::test]
async fn a_session_never_used_after_initialize_leaves_the_cap_after_the_handshake_ttl() {
    let (now, clock) = manual_clock();
    let options = EndpointOptions {
        sessions: Some(SessionOptions {
            idle_ttl_ms: Some(60_000),
            handshake_ttl_ms: Some(1_000),
            max_sessions: 2,
            ..SessionOptions::default()
        }),
        clock: Some(clock),
        ..EndpointOptions::default()
    };
    let srv = start(server(), options).await;
    let addr = srv.addr;
    let used = new_session(addr, "2025-11-25").await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, &[sid(&used)], initialized).await.status, 202);
    let bare = new_session(addr, "2025-11-25").await;
    let refused = post(addr, &[], &initialize(1, "2025-11-25")).await;
    assert_eq!(refused.status, 503, "at the cap");

    now.fetch_add(1_000, Ordering::SeqCst);
    let next = new_session(addr, "2025-11-25").await;
    assert_eq!(post(addr, &[sid(&bare)], LIST).await.status, 404);
    assert_eq!(post(addr, &[sid(&used)], LIST).await.status, 200);
    assert_eq!(post(addr, &[sid(&next)], LIST).await.status, 200);
    now.fetch_add(30_000, Ordering::SeqCst);
    assert_eq!(post(addr, &[sid(&used)], LIST).await.status, 200);
    assert_eq!(post(addr, &[sid(&next)], LIST).await.status, 200);
}

#[tokio::test]
async fn idle_ttl_and_the_cap_with_an_injected_clock() {
    let (now, clock) = manual_clock();
    let options = EndpointOptions {
        sessions: Some(SessionOptions {
            idle_ttl_ms: Some(1_000),
            max_sessions: 2,
            event_ttl_ms: 500,
            ..SessionOptions::default()
        }),
        clock: Some(clock),
        ..EndpointOptions::default()
    };
    let srv = start(server(), options).await;
    let addr = srv.addr;
    let a = new_session(addr, "2025-06-18").await;
    let b = new_session(addr, "2025-06-18").await;

    // At the cap: refused, nobody evicted.
    let reply = post(addr, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("retry-after"), Some("60"));
    assert_eq!(reply.json()["error"]["code"], -32000);
    assert_eq!(post(addr, &[sid(&a)], LIST).await.status, 200);

    // b idles past the TTL; a stays active.
    now.fetch_add(999, Ordering::SeqCst);
    assert_eq!(post(addr, &[sid(&a)], LIST).await.status, 200);
    now.fetch_add(1, Ordering::SeqCst);
    assert_eq!(
        post(addr, &[sid(&b)], LIST).await.status,
        404,
        "b expired (lazily)"
    );
    let c = new_session(addr, "2025-06-18").await;

    // A session with a live GET stream is never idle.
    let mut get =
        SseStream::new(open(addr, "GET", &[sid(&c), ("accept", "text/event-stream")], "").await);
    let session = srv.endpoint.sessions().unwrap().get(&c).unwrap();
    let pushed = session.push(r#"{"jsonrpc":"2.0","method":"one"}"#).unwrap();
    assert_eq!(get.next().await.unwrap().json()["method"], "one");
    session.push(r#"{"jsonrpc":"2.0","method":"two"}"#).unwrap();
    assert_eq!(get.next().await.unwrap().json()["method"], "two");
    assert_eq!(
        session.replay(&pushed.to_string()).len(),
        1,
        "two, after one"
    );
    now.fetch_add(10_000, Ordering::SeqCst);
    let d = new_session(addr, "2025-06-18").await; // a expired, c is busy
    assert_eq!(post(addr, &[sid(&a)], LIST).await.status, 404);
    assert_eq!(post(addr, &[sid(&c)], LIST).await.status, 200);
    assert_eq!(
        post(addr, &[], &initialize(1, "2025-06-18")).await.status,
        503
    );
    assert_eq!(post(addr, &[sid(&d)], LIST).await.status, 200);

    // Logged events expired after the event TTL (500 ms): the cursor is gone, nothing replays.
    assert!(session.replay(&pushed.to_string()).is_empty());
    drop(get);
}

#[tokio::test]
async fn keep_alive_comments_flow_on_idle_streams() {
    let mut options = EndpointOptions::default();
    options.http.keep_alive = Some(Duration::from_millis(20));
    let srv = start(server(), options).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let mut get = SseStream::new(
        open(
            srv.addr,
            "GET",
            &[sid(&id), ("accept", "text/event-stream")],
            "",
        )
        .await,
    );
    let block = get.next_block().await.unwrap();
    assert_eq!(block.comments, ["keep-alive"]);
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

#[tokio::test]
async fn tools_send_progress_and_logs_on_the_post_stream() {
    let server = McpServer::new(ServerOptions::new("t", "0").with_logging());
    server.tools().add(Tool::with_context(
        "count",
        |a: Steps, ctx: RequestContext| async move {
            for i in 1..=a.steps {
                ctx.progress(f64::from(i), Some(f64::from(a.steps)), None);
                ctx.log(
                    orkestrel_mcp::server::context::LogLevel::Info,
                    Some("count"),
                    json!(i),
                );
            }
            Ok::<_, String>("counted")
        },
    ));
    for stateless in [true, false] {
        let mut options = EndpointOptions::default();
        if stateless {
            options.sessions = None;
        }
        let srv = start(server.clone(), options).await;
        let mut extra = Vec::new();
        let id;
        if !stateless {
            id = new_session(srv.addr, "2025-06-18").await;
            extra.push(sid(&id));
        }
        let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
            "params":{"name":"count","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}});
        let reply = post(srv.addr, &extra, &body.to_string()).await;
        let messages = reply.messages();
        let methods: Vec<_> = messages
            .iter()
            .map(|m| m["method"].as_str().unwrap_or("response").to_owned())
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/progress",
                "notifications/message",
                "notifications/progress",
                "notifications/message",
                "response"
            ],
            "stateless={stateless}"
        );
        assert_eq!(
            messages[2]["params"],
            json!({"progressToken":"tok","progress":2,"total":2})
        );
        assert_eq!(
            messages[3]["params"],
            json!({"level":"info","logger":"count","data":2})
        );
    }
}

/// No sessions: no `Mcp-Session-Id`, `GET` answers 405 — so nothing could carry a list change
/// or a resource update, and `initialize` declares neither (`listChanged`, `subscribe`), and
/// `resources/subscribe` is not served; a server with sessions declares both.
#[tokio::test]
async fn the_stateless_mode_has_no_sessions() {
    let options = EndpointOptions {
        sessions: None,
        ..EndpointOptions::default()
    };
    let lists = || {
        let mut o = ServerOptions::new("test", "0.0.0");
        o.declare_lists = true;
        McpServer::new(o)
    };
    let srv = start(lists(), options).await;
    let reply = post(srv.addr, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("mcp-session-id"), None);
    assert_eq!(
        reply.messages()[0]["result"]["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}}),
        "{reply:?}"
    );
    assert_eq!(post(srv.addr, &[], LIST).await.status, 200);
    let subscribe =
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://a"}}"#;
    let reply = post(srv.addr, &[], subscribe).await;
    assert_eq!(reply.messages()[0]["error"]["code"], -32601, "{reply:?}");
    let reply = send(srv.addr, "GET", &[("accept", "text/event-stream")], "").await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    // With sessions, both are declared.
    let srv = start(lists(), EndpointOptions::default()).await;
    let reply = post(srv.addr, &[], &initialize(1, "2025-06-18")).await;
    let caps = &reply.messages()[0]["result"]["capabilities"];
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert_eq!(caps["tools"], json!({"listChanged": true}));
}

#[tokio::test]
async fn a_client_that_goes_away_is_detached() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let get = open(
        srv.addr,
        "GET",
        &[sid(&id), ("accept", "text/event-stream")],
        "",
    )
    .await;
    let session = srv.endpoint.sessions().unwrap().get(&id).unwrap();
    assert!(session.is_attached(0));
    drop(get);
    eventually(DEADLINE, "still attached after the deadline", || {
        !session.is_attached(0)
    })
    .await;
    // Pushed while nobody listens: logged, and replayed to whoever resumes from before it.
    let before = session.push(r#"{"jsonrpc":"2.0","method":"one"}"#).unwrap();
    session.push(r#"{"jsonrpc":"2.0","method":"two"}"#).unwrap();
    let last = [
        sid(&id),
        ("accept", "text/event-stream"),
        ("last-event-id", &before.to_string()),
    ];
    let mut resumed = SseStream::new(open(srv.addr, "GET", &last, "").await);
    assert_eq!(resumed.next().await.unwrap().json()["method"], "two");
    drop(resumed);
}

/// A server whose prompt `boom` panics at once and whose prompt `late` panics after a wait (its
/// request is then in a task of its own).
fn panicking_server() -> McpServer {
    use orkestrel_mcp::prompts::Prompt;
    let server = server();
    server.prompts().add(Prompt::new("boom", |_, _| async {
        panic!("boom");
    }));
    server.prompts().add(Prompt::new("late", |_, _| async {
        tokio::task::yield_now().await;
        panic!("late");
    }));
    server
}

fn get_prompt(id: u64, name: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"prompts/get","params":{"name":name}}).to_string()
}

#[tokio::test]
async fn a_panicking_handler_ends_its_stream_with_an_error() {
    let srv = start(panicking_server(), EndpointOptions::default()).await;
    let addr = srv.addr;
    let id = new_session(addr, "2025-11-25").await;
    for (n, name) in [(11, "boom"), (12, "late")] {
        // The request's stream: priming, then its -32603 error with its id, then the end (the
        // reply is read to its end within the deadline).
        let reply = post(addr, &[sid(&id)], &get_prompt(n, name)).await;
        assert_eq!(reply.status, 200, "{name}");
        assert_eq!(reply.header("content-type"), Some("text/event-stream"));
        let messages = reply.messages();
        assert_eq!(messages.len(), 1, "{name}: {messages:?}");
        assert_eq!(messages[0]["id"], n, "{name}");
        assert_eq!(messages[0]["error"]["code"], -32603, "{name}");
        // As JSON too.
        let json = [sid(&id), ("accept", "application/json")];
        let headers: Vec<_> = [("content-type", "application/json")]
            .into_iter()
            .chain(json)
            .collect();
        let reply = send(addr, "POST", &headers, &get_prompt(n + 10, name)).await;
        assert_eq!(reply.status, 200, "{name}");
        assert_eq!(reply.json()["id"], n + 10, "{name}");
        assert_eq!(reply.json()["error"]["code"], -32603, "{name}");
    }
    // The session goes on.
    assert_eq!(post(addr, &[sid(&id)], LIST).await.status, 200);
}

// ---- JSON-RPC batches: received in a session that negotiated 2025-03-26 -------------------

const BATCH: &str = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#;

/// POST `body` in session `id` accepting only JSON.
async fn post_json(addr: std::net::SocketAddr, id: Option<&str>, body: &str) -> Reply {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    if let Some(id) = id {
        headers.push(sid(id));
    }
    send(addr, "POST", &headers, body).await
}

#[tokio::test]
async fn a_session_at_2025_03_26_receives_batches_and_one_at_2025_06_18_refuses_them() {
    let srv = start(server(), EndpointOptions::default()).await;
    let addr = srv.addr;
    let old = new_session(addr, "2025-03-26").await;
    let r = post_json(addr, Some(&old), BATCH).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("mcp-session-id"), Some(old.as_str()));
    assert_eq!(
        r.json(),
        json!([
            {"jsonrpc":"2.0","id":1,"result":{}},
            {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}
        ])
    );
    // SSE: one session stream, each response an event with an id, then the end.
    let headers: Vec<_> = POST.iter().copied().chain([sid(&old)]).collect();
    let mut stream = SseStream::new(open(addr, "POST", &headers, BATCH).await);
    let events = stream.rest().await;
    assert_eq!(stream.ended_cleanly(), Some(Ok(())));
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.id.is_some()), "{events:?}");
    // Only notifications: 202.
    let quiet = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(post_json(addr, Some(&old), quiet).await.status, 202);
    // A 2025-06-18 session: refused as today.
    let new = new_session(addr, "2025-06-18").await;
    let r = post_json(addr, Some(&new), BATCH).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}}"#
    );
    // No session id: only initialize comes without one, and it cannot be in a batch.
    let r = post_json(addr, None, BATCH).await;
    assert_eq!(r.status, 400);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("mcp-session-id"));
    let r = post_json(addr, None, &format!("[{}]", initialize(3, "2025-03-26"))).await;
    assert_eq!(r.status, 400);
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize must not be part of a JSON-RPC batch"));
    assert_eq!(r.header("mcp-session-id"), None, "no session minted");
}

#[tokio::test]
async fn a_server_request_is_answered_inside_a_batch_over_http() {
    let server = server();
    server.tools().add(Tool::with_context(
        "roots",
        |_: Empty, ctx: RequestContext| async move {
            ctx.request("roots/list", json!({}))
                .await
                .map(|roots| roots.to_string())
                .map_err(|e| e.message)
        },
    ));
    let srv = start(server, EndpointOptions::default()).await;
    let addr = srv.addr;
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{"roots":{}},
        "clientInfo":{"name":"t","version":"1"}}});
    let reply = post(addr, &[], &init.to_string()).await;
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, &[sid(&id)], initialized).await.status, 202);
    // The tool call, in a batch answered on an event stream: the server's request comes first.
    let headers: Vec<_> = POST.iter().copied().chain([sid(&id)]).collect();
    let calls = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}]"#;
    let mut stream = SseStream::new(open(addr, "POST", &headers, calls).await);
    let asked = stream.next().await.unwrap().json();
    assert_eq!(asked["method"], "roots/list", "{asked}");
    // Its answer, inside a batch with a request of its own.
    let answer = json!([
        {"jsonrpc":"2.0","id":asked["id"],"result":{"roots":[{"uri":"file:///x"}]}},
        {"jsonrpc":"2.0","id":2,"method":"ping"}
    ]);
    let r = post_json(addr, Some(&id), &answer.to_string()).await;
    assert_eq!(r.json(), json!([{"jsonrpc":"2.0","id":2,"result":{}}]));
    let rest = stream.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    let done = rest[0].json();
    assert_eq!(done["id"], 1);
    assert!(done["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("file:///x"));
}
