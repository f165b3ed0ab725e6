//! Scale-out on Redis (issue 14): `orkestrel-mcp serve --http --redis …` instances that share one
//! real `redis-server` (Debian's, started here on a free 127.0.0.1 port; `tests/run.sh` installs
//! it when missing) serve one session between them, and answer `503` with `Retry-After` while
//! Redis is down.
#![cfg(all(feature = "redis", not(target_arch = "wasm32")))]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use orkestrel_mcp::client::{ClientHandler, Progress, RequestOptions};
use orkestrel_mcp::http::session::{MintError, SessionBackend, SessionOptions};
use orkestrel_mcp::native::endpoint::system_clock;
use orkestrel_mcp::native::redis::{RedisOptions, RedisSessions};
use orkestrel_mcp::ErrorObject;
use orkestrel_mcp::{BoxFuture, McpServer, ServerOptions};
use serde_json::{json, Value};
use support::client::http_client_to;
use support::redis::{
    asking_instance, changing_instance, get_stream, instance, instance_with, round_robin, session,
    Redis,
};
use support::*;

fn sid(id: &str) -> [(&'static str, &str); 2] {
    [
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-06-18"),
    ]
}

fn call(id: u64, name: &str, arguments: Value) -> String {
    json::rpc(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// The messages of a reply with this `method`.
fn with_method(reply: &Reply, method: &str) -> usize {
    (reply.messages().iter())
        .filter(|m| m["method"] == method)
        .count()
}

/// The response (the message with an `id`) of a reply.
fn response(reply: &Reply) -> Value {
    (reply.messages().into_iter())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no response in {:?}", reply.body))
}

#[tokio::test]
async fn redis_is_for_http_and_an_unreachable_one_at_start_exits_1() {
    let ran =
        support::server::run_bin(&["serve", "--stdio", "--redis", "redis://127.0.0.1:9"]).await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(
        ran.stderr
            .contains("the argument '--stdio' cannot be used with '--redis"),
        "{ran:?}"
    );
    // Nothing listens on the discard port: the instance refuses to start, saying why.
    let ran = support::server::run_bin(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--redis",
        "redis://127.0.0.1:9",
    ])
    .await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr.contains("--redis redis://127.0.0.1:9"),
        "{ran:?}"
    );
}

#[tokio::test]
async fn one_session_alternates_between_two_instances() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;

    let reply = post(a, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(
        post(b, &sid(&id), &json::initialized().to_string())
            .await
            .status,
        202
    );
    let list = post(
        b,
        &sid(&id),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(list.status, 200, "{}", list.body);
    let tools = response(&list)["result"]["tools"].clone();
    assert!(tools
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "echo"));

    let echo = post(a, &sid(&id), &call(3, "echo", json!({"text": "hi"}))).await;
    assert_eq!(response(&echo)["result"]["content"][0]["text"], "hi");

    // No level set: the tool's info logs reach the client, wherever it runs.
    let progress = json!({"steps": 2, "ms": 1});
    let logged = post(b, &sid(&id), &call(4, "progress", progress.clone())).await;
    assert_eq!(
        with_method(&logged, "notifications/message"),
        2,
        "{}",
        logged.body
    );
    // logging/setLevel on A is honoured on B, and the other way round.
    let set = |level: &str| json::rpc(json!(5), "logging/setLevel", json!({"level": level}));
    assert_eq!(
        response(&post(a, &sid(&id), &set("error")).await)["result"],
        json!({})
    );
    let quiet = post(b, &sid(&id), &call(6, "progress", progress.clone())).await;
    assert_eq!(
        with_method(&quiet, "notifications/message"),
        0,
        "{}",
        quiet.body
    );
    assert_eq!(
        response(&quiet)["result"]["content"][0]["text"],
        "done 2 steps"
    );
    assert_eq!(
        response(&post(b, &sid(&id), &set("debug")).await)["result"],
        json!({})
    );
    let loud = post(a, &sid(&id), &call(7, "progress", progress)).await;
    assert_eq!(
        with_method(&loud, "notifications/message"),
        2,
        "{}",
        loud.body
    );

    // What the record holds: the version, the client's capabilities, initialized, the level, a
    // subscription made on B; its expiry is the idle TTL.
    let subscribe = json::rpc(
        json!(8),
        "resources/subscribe",
        json!({"uri": "orkestrel://about"}),
    );
    assert_eq!(
        response(&post(b, &sid(&id), &subscribe).await)["result"],
        json!({})
    );
    let mut r = redis.connection().await;
    let key = format!("orkestrel-mcp:session:{id}");
    let record: std::collections::HashMap<String, String> = ::redis::cmd("HGETALL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(record["v"], "2025-06-18");
    assert_eq!(record["caps"], "{}");
    assert_eq!(record["init"], "1");
    assert_eq!(record["level"], "debug");
    assert_eq!(record["subs"], r#"["orkestrel://about"]"#);
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 30 * 60 * 1000, "{ttl}");
    // A request on either instance pushes the expiry back.
    let _: () = ::redis::cmd("PEXPIRE")
        .arg(&key)
        .arg(60_000)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(
        post(a, &sid(&id), &call(9, "echo", json!({"text": "x"})))
            .await
            .status,
        200
    );
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(ttl > 60_000, "touched: {ttl}");

    // A GET stream open on A ends when B ends the session; A then answers 404.
    let get = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    let stream = open(a, "GET", &get, "").await;
    assert_eq!(stream.status(), 200);
    let mut stream = SseStream::new(stream);
    let deleted = send(b, "DELETE", &sid(&id), "").await;
    assert_eq!(deleted.status, 204);
    assert_eq!(stream.rest().await.len(), 0, "the GET stream on A ended");
    let gone = post(
        a,
        &sid(&id),
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(gone.status, 404, "{}", gone.body);
    assert_eq!(
        post(b, &sid(&id), r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#)
            .await
            .status,
        404
    );
    let exists: bool = ::redis::cmd("EXISTS")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(!exists);
}

#[tokio::test]
async fn redis_down_answers_503_with_retry_after_then_service_resumes() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, mut a_child) = instance(&redis).await;
    let reply = post(a, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 200);
    let id = reply.header("mcp-session-id").unwrap().to_owned();

    let port = redis.kill().await;
    for reply in [
        post(a, &[], &initialize(2, "2025-06-18")).await,
        post(
            a,
            &sid(&id),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
        )
        .await,
        send(a, "DELETE", &sid(&id), "").await,
    ] {
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert!(reply.header("retry-after").is_some());
        assert_eq!(reply.json()["error"]["code"], -32000);
        assert_eq!(reply.json()["jsonrpc"], "2.0");
    }
    assert!(
        a_child.try_wait().unwrap().is_none(),
        "the instance is still up"
    );

    // Back (empty: no persistence): new sessions are minted again; the old one is gone.
    let _redis = Redis::start(Some(port)).await.expect("redis-server again");
    eventually_async(
        DEADLINE,
        "initialize succeeds once Redis is back",
        || async move { post(a, &[], &initialize(4, "2025-06-18")).await.status == 200 },
    )
    .await;
    let gone = post(
        a,
        &sid(&id),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn the_live_session_cap_counts_every_instance_and_refuses_at_it() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        sessions: SessionOptions {
            max_sessions: 2,
            ..SessionOptions::default()
        },
        ..RedisOptions::new(redis.url())
    };
    let one = McpServer::new(ServerOptions::new("one", "1"));
    let two = McpServer::new(ServerOptions::new("two", "1"));
    let a = RedisSessions::connect(options.clone(), &one, system_clock())
        .await
        .unwrap();
    let b = RedisSessions::connect(options, &two, system_clock())
        .await
        .unwrap();
    let first = a.mint("2025-06-18").await.unwrap();
    let second = b.mint("2025-11-25").await.unwrap();
    assert!(matches!(
        a.mint("2025-06-18").await,
        Err(MintError::AtCapacity)
    ));
    assert!(matches!(
        b.mint("2025-06-18").await,
        Err(MintError::AtCapacity)
    ));
    assert_eq!(a.count().await, Ok(2));
    // B serves A's session, with its negotiated version.
    let seen = b.touch(first.id()).await.unwrap().expect("live on B");
    assert_eq!(seen.protocol_version(), "2025-06-18");
    assert!(b.touch("no-such-session").await.unwrap().is_none());
    // Ending one on B makes room, and A's handle closes.
    assert!(b.end(first.id()).await.unwrap().is_some());
    assert!(b.end(first.id()).await.unwrap().is_none(), "ended once");
    eventually(DEADLINE, "A hears of the end", || first.is_closed()).await;
    assert!(a.touch(first.id()).await.unwrap().is_none());
    let third = a.mint("2025-06-18").await.unwrap();
    assert_ne!(third.id(), second.id());
    assert_eq!(b.count().await, Ok(2));
}

#[tokio::test]
async fn serve_max_sessions_caps_the_sessions_of_every_instance() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance_with(&redis, &["--max-sessions", "1"]).await;
    let (b, _b) = instance_with(&redis, &["--max-sessions", "1"]).await;
    let first = post(a, &[], &initialize(1, "2025-06-18")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let refused = post(b, &[], &initialize(2, "2025-06-18")).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(refused.json()["error"]["code"], -32000);
    let id = first.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(send(b, "DELETE", &sid(&id), "").await.status, 204);
    assert_eq!(post(b, &[], &initialize(3, "2025-06-18")).await.status, 200);
    let ran =
        support::server::run_bin(&["serve", "--http", "--stateless", "--max-sessions", "9"]).await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
}

#[tokio::test]
async fn an_instance_keeps_a_bounded_number_of_unused_local_sessions() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let server = McpServer::new(ServerOptions::new("one", "1"));
    let a = RedisSessions::connect(RedisOptions::new(redis.url()), &server, system_clock())
        .await
        .unwrap();
    // Held by the caller (a request running, say): kept whatever the count.
    let held = a.mint("2025-11-25").await.unwrap();
    for _ in 0..3000 {
        drop(a.mint("2025-11-25").await.unwrap());
    }
    assert!(
        a.local_len() <= 1024,
        "unused handles are dropped: {}",
        a.local_len()
    );
    assert_eq!(a.count().await, Ok(3001), "every session lives on in Redis");
    assert!(!held.is_closed());
    let again = a.touch(held.id()).await.unwrap().expect("still here");
    assert!(Arc::ptr_eq(&again, &held), "the held handle was kept");
    // A dropped handle is loaded again by the session's next request, with its state.
    let redis_ids: Vec<String> = ::redis::cmd("ZRANGE")
        .arg("orkestrel-mcp:sessions")
        .arg(0)
        .arg(-1)
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    for id in redis_ids.iter().take(50) {
        let session = a.touch(id).await.unwrap().expect("live in Redis");
        assert_eq!(session.protocol_version(), "2025-11-25");
    }
}

/// A `tools/call` of `progress` (`steps` log messages, `ms` apart) opened on `at` as an SSE
/// stream.
async fn progress_stream(at: SocketAddr, id: &str, steps: u32, ms: u64) -> SseStream {
    progress_call(at, id, 2, steps, ms).await
}

/// [`progress_stream`] as request `rpc_id`.
async fn progress_call(at: SocketAddr, id: &str, rpc_id: u64, steps: u32, ms: u64) -> SseStream {
    let headers: Vec<(&str, &str)> = POST
        .iter()
        .copied()
        .chain([
            ("mcp-session-id", id),
            ("mcp-protocol-version", "2025-11-25"),
        ])
        .collect();
    let body = call(rpc_id, "progress", json!({"steps": steps, "ms": ms}));
    let response = open(at, "POST", &headers, &body).await;
    assert_eq!(response.status(), 200);
    SseStream::new(response)
}

/// `GET` on `at` resuming after `last`.
async fn resume(at: SocketAddr, id: &str, last: &str) -> SseStream {
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-11-25"),
        ("last-event-id", last),
    ];
    let response = open(at, "GET", &headers, "").await;
    assert_eq!(response.status(), 200);
    SseStream::new(response)
}

fn step_of(event: &Event) -> String {
    let message = event.json();
    assert_eq!(message["method"], "notifications/message", "{message}");
    message["params"]["data"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_dropped_post_stream_resumes_on_the_other_instance_live_through_the_result() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;

    let mut on_a = progress_stream(a, &id, 5, 20).await;
    let priming = on_a.next().await.unwrap();
    assert!(priming.data.is_empty() && priming.id.is_some());
    let first = on_a.next().await.unwrap();
    assert_eq!(step_of(&first), "step 1 of 5");
    drop(on_a); // the client's connection to A drops; the tool goes on on A

    let first_id = first.id.clone().unwrap();
    let rest = resume(b, &id, &first_id).await.rest().await;
    let steps: Vec<String> = rest[..rest.len() - 1].iter().map(step_of).collect();
    assert_eq!(
        steps,
        ["step 2 of 5", "step 3 of 5", "step 4 of 5", "step 5 of 5"]
    );
    let result = rest.last().unwrap().json();
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "done 5 steps");
    // Every id names A's stream, and no two are the same.
    let stream_of = |e: &Event| e.id.clone().unwrap().split_once('-').unwrap().0.to_owned();
    assert!(rest.iter().all(|e| stream_of(e) == stream_of(&first)));
    let ids: std::collections::HashSet<_> = rest.iter().map(|e| e.id.clone()).collect();
    assert_eq!(ids.len(), rest.len());

    // Resumed again on A itself, after the result: nothing more, the stream is over.
    let last = rest.last().unwrap().id.clone().unwrap();
    assert!(resume(a, &id, &last).await.rest().await.is_empty());
    // An id no instance handed out resumes the standalone stream (primed), as on one instance.
    let mut standalone = resume(b, &id, "zz-0").await;
    let primed = standalone.next().await.unwrap();
    assert!(primed.data.is_empty() && primed.retry.is_some());
}

#[tokio::test]
async fn a_redis_restart_ends_the_streams_it_carries_cleanly_and_local_work_completes() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;
    let mut standalone = get_stream(a, &id).await;

    // A stream of a tool on A, resumed on B: B relays it live from Redis.
    let mut on_a = progress_call(a, &id, 2, 1000, 20).await;
    let _priming = on_a.next().await.unwrap();
    let first = on_a.next().await.unwrap();
    drop(on_a);
    let mut relayed = resume(b, &id, &first.id.clone().unwrap()).await;
    assert_eq!(step_of(&relayed.next().await.unwrap()), "step 2 of 1000");
    // A stream of a tool on A, read on A: nothing of it needs Redis but the shared log.
    let mut direct = progress_call(a, &id, 3, 40, 25).await;
    let _priming = direct.next().await.unwrap();
    assert_eq!(step_of(&direct.next().await.unwrap()), "step 1 of 40");

    let port = redis.kill().await;

    // The relay has nothing to relay from: its stream ends, at the end of its body.
    while relayed.next().await.is_some() {}
    assert_eq!(relayed.ended_cleanly(), Some(Ok(())), "the relayed stream");
    // The tool on A runs on and its own stream brings every step and the result.
    let rest = direct.rest().await;
    assert_eq!(direct.ended_cleanly(), Some(Ok(())), "the direct stream");
    let result = rest.last().unwrap().json();
    assert_eq!(result["id"], 3, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "done 40 steps");
    assert_eq!(rest.len(), 40, "steps 2..=40 and the result");

    // Back, empty (no persistence): the session is gone, so A ends its GET stream, cleanly;
    // both instances mint new sessions again.
    let _redis = Redis::start(Some(port)).await.expect("redis-server again");
    while standalone.next().await.is_some() {}
    assert_eq!(standalone.ended_cleanly(), Some(Ok(())), "the GET stream");
    for at in [a, b] {
        eventually_async(
            DEADLINE,
            "initialize succeeds once Redis is back",
            || async move { post(at, &[], &initialize(4, "2025-11-25")).await.status == 200 },
        )
        .await;
    }
    let gone = post(
        b,
        &sid(&id),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(gone.status, 404);
}

#[tokio::test]
async fn kill_9_of_the_instance_mid_stream_loses_no_logged_event() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, mut a_child) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;

    let mut on_a = progress_stream(a, &id, 1000, 20).await;
    let _priming = on_a.next().await.unwrap();
    let seen = [
        on_a.next().await.unwrap(),
        on_a.next().await.unwrap(),
        on_a.next().await.unwrap(),
    ];
    // Logged: the priming event and these three are in Redis (the log is written behind).
    let first = seen[0].id.clone().unwrap();
    let stream = u64::from_str_radix(first.split_once('-').unwrap().0, 36).unwrap();
    let key = format!("orkestrel-mcp:events:{id}:{stream}");
    let r = redis.connection().await;
    eventually_async(DEADLINE, "A's events are in Redis", || {
        let (mut r, key) = (r.clone(), key.clone());
        async move {
            let n: usize = ::redis::cmd("LLEN")
                .arg(&key)
                .query_async(&mut r)
                .await
                .unwrap();
            n >= 4
        }
    })
    .await;
    a_child.kill().await.expect("kill -9 A");

    let mut on_b = resume(b, &id, &first).await;
    for expected in &seen[1..] {
        let event = on_b.next().await.unwrap();
        assert_eq!(event.id, expected.id);
        assert_eq!(step_of(&event), step_of(expected));
    }
}

#[tokio::test]
async fn an_elicitation_raised_on_a_reaches_the_client_on_b_and_its_answer_posted_to_b_resolves_it()
{
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let a = asking_instance(&redis).await;
    let b = asking_instance(&redis).await;
    let init = json::rpc(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "t", "version": "0"}}),
    );
    let reply = post(a, &[], &init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    assert_eq!(
        post(b, &headers, &json::initialized().to_string())
            .await
            .status,
        202
    );

    // The tool runs on A; its request goes out on the POST stream, which the client drops.
    let all: Vec<(&str, &str)> = POST.iter().copied().chain(headers).collect();
    let response = open(a, "POST", &all, &call(2, "ask", json!({}))).await;
    let mut on_a = SseStream::new(response);
    let priming = on_a.next().await.unwrap();
    let asked = on_a.next().await.unwrap().json();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    drop(on_a);

    // Resumed on B: the request again, then — once the answer POSTed to B reached A — the result.
    let mut on_b = resume(b, &id, priming.id.as_deref().unwrap()).await;
    let again = on_b.next().await.unwrap().json();
    assert_eq!(again, asked);
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(post(b, &headers, &answer.to_string()).await.status, 202);
    let rest = on_b.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    let result = rest[0].json();
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "Ada", "{result}");
}

#[tokio::test]
async fn a_request_of_a_tool_answered_by_json_on_a_goes_out_on_the_get_stream_open_on_b() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let a = asking_instance(&redis).await;
    let b = asking_instance(&redis).await;
    let init = json::rpc(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "t", "version": "0"}}),
    );
    let id = post(a, &[], &init)
        .await
        .header("mcp-session-id")
        .unwrap()
        .to_owned();
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    assert_eq!(
        post(b, &headers, &json::initialized().to_string())
            .await
            .status,
        202
    );

    // The client's GET stream is on B (primed: attached).
    let get: Vec<(&str, &str)> = [("accept", "text/event-stream")]
        .into_iter()
        .chain(headers)
        .collect();
    let mut on_b = SseStream::new(open(b, "GET", &get, "").await);
    assert!(on_b.next().await.unwrap().data.is_empty());

    // A tools/call on A answered by JSON: its request has no stream of its own on A.
    let json_only: Vec<(String, String)> = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ]
    .into_iter()
    .chain(headers)
    .map(|(n, v)| (n.to_owned(), v.to_owned()))
    .collect();
    let call_on_a = tokio::spawn(async move {
        let headers: Vec<(&str, &str)> = json_only
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        send(a, "POST", &headers, &call(2, "ask", json!({}))).await
    });
    let asked = on_b.next().await.unwrap().json();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
                        "result": {"action": "accept", "content": {"name": "Grace"}}});
    assert_eq!(post(b, &headers, &answer.to_string()).await.status, 202);
    let reply = tokio::time::timeout(DEADLINE, call_on_a)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "Grace",
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn three_instances_serve_one_session_request_by_request() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let (c, _c) = instance(&redis).await;
    let at = [a, b, c];
    let reply = post(c, &[], &initialize(1, "2025-06-18")).await;
    let id = reply.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(
        post(a, &sid(&id), &json::initialized().to_string())
            .await
            .status,
        202
    );
    for n in 0..9u64 {
        let text = format!("n{n}");
        let reply = post(
            at[n as usize % 3],
            &sid(&id),
            &call(10 + n, "echo", json!({"text": text})),
        )
        .await;
        assert_eq!(
            response(&reply)["result"]["content"][0]["text"],
            text.as_str()
        );
        assert_eq!(response(&reply)["id"], 10 + n);
    }
    assert_eq!(send(b, "DELETE", &sid(&id), "").await.status, 204);
    for instance in at {
        let gone = post(
            instance,
            &sid(&id),
            r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#,
        )
        .await;
        assert_eq!(gone.status, 404);
    }
}

#[tokio::test]
async fn list_and_resource_changes_made_on_one_instance_reach_the_get_streams_on_every_instance() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, on_a) = changing_instance(&redis).await;
    let (b, _on_b) = changing_instance(&redis).await;
    // One session minted on each; each one's GET stream on the other instance, and each
    // subscribed to test://r through the instance that does not hold its stream.
    let one = session(a, "2025-11-25").await;
    let two = session(b, "2025-11-25").await;
    let mut one_on_b = get_stream(b, &one).await;
    let mut two_on_a = get_stream(a, &two).await;
    // And a 2026-07-28 listen stream on B.
    let (mut listening_on_b, _connection) = support::modern::listen(
        b,
        json!("L"),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://r"]}),
    )
    .await;
    let ack = listening_on_b.next().await.unwrap().json();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    let subscribe = json::rpc(json!(5), "resources/subscribe", json!({"uri": "test://r"}));
    for (at, id) in [(a, &one), (b, &two)] {
        let headers = [
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let reply = post(at, &headers, &subscribe).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }

    // Both changes made on A: each stream hears of each exactly once, in order.
    on_a.notify_list_changed(orkestrel_mcp::server::ListKind::Tools);
    on_a.notify_resource_updated("test://r");
    on_a.notify_resource_updated("test://not-subscribed");
    on_a.notify_list_changed(orkestrel_mcp::server::ListKind::Resources);
    for stream in [&mut one_on_b, &mut two_on_a] {
        let first = stream.next().await.unwrap().json();
        assert_eq!(
            first["method"], "notifications/tools/list_changed",
            "{first}"
        );
        let second = stream.next().await.unwrap().json();
        assert_eq!(
            second["method"], "notifications/resources/updated",
            "{second}"
        );
        assert_eq!(second["params"]["uri"], "test://r");
        let third = stream.next().await.unwrap().json();
        assert_eq!(
            third["method"], "notifications/resources/list_changed",
            "{third}"
        );
    }
    let first = listening_on_b.next().await.unwrap().json();
    assert_eq!(
        first["method"], "notifications/tools/list_changed",
        "{first}"
    );
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L",
        "{first}"
    );
    let second = listening_on_b.next().await.unwrap().json();
    assert_eq!(
        second["method"], "notifications/resources/updated",
        "{second}"
    );
    assert_eq!(second["params"]["uri"], "test://r");
}

/// An official SDK client's session checks against two instances behind a round-robin proxy.
/// Answers every elicitation with the name "Ada".
struct Ada;

impl ClientHandler for Ada {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}})
    }
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let asked = params["message"].clone();
        Box::pin(async move {
            assert_eq!(asked, "Name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
    }
}

#[tokio::test]
async fn our_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let (proxy, requests) = round_robin(vec![a, b]).await;
    let client = http_client_to(&format!("http://{proxy}/mcp"), support::client::options());
    tokio::time::timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let tools = client.tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert!(names.contains(&"progress"), "{names:?}");
        assert_eq!(
            client.call("add", json!({"a": 2, "b": 5})).await.unwrap(),
            Some(json!(7))
        );
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let options = RequestOptions::default()
            .on_progress(move |p: &Progress| record.lock().unwrap().push(p.progress));
        let done = client
            .call_with("progress", json!({"steps": 3, "ms": 5}), options)
            .await
            .unwrap();
        assert_eq!(done, Some(json!("done 3 steps")));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .expect("the client's session works through the proxy");
    let sent = requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(sent >= 7, "every request went through the proxy: {sent}");
    // Its DELETE (on whichever instance) ended the session in Redis for both.
    let live: usize = ::redis::cmd("ZCARD")
        .arg("orkestrel-mcp:sessions")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    assert_eq!(live, 0);

    // A tool on one instance elicits; the request reaches the client on its call's stream and
    // the client's answer, POSTed through the proxy to the other instance, resolves it.
    let (one, two) = (asking_instance(&redis).await, asking_instance(&redis).await);
    let (proxy, requests) = round_robin(vec![one, two]).await;
    let options = support::client::options().with_handler(Ada);
    let client = http_client_to(&format!("http://{proxy}/mcp"), options);
    tokio::time::timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        for _ in 0..2 {
            assert_eq!(
                client.call("ask", json!({})).await.unwrap(),
                Some(json!("Ada"))
            );
        }
        client.disconnect().await;
    })
    .await
    .expect("elicitation through the proxy");
    assert!(requests.load(std::sync::atomic::Ordering::SeqCst) >= 6);
}

async fn sdk_client_behind_a_round_robin_proxy(python: bool) {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let (proxy, requests) = support::redis::round_robin(vec![a, b]).await;
    let url = format!("http://{proxy}/mcp");
    let Some(run) = support::redis::sdk_sessions(python, &url).await else {
        return;
    };
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{out}\n{err}");
    assert!(
        out.contains("all checks passed") && !out.contains("FAIL"),
        "{out}\n{err}"
    );
    let requests = requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        requests >= 6,
        "{requests} requests: both instances served several"
    );
}

#[tokio::test]
async fn the_typescript_sdk_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy(
) {
    sdk_client_behind_a_round_robin_proxy(false).await;
}

#[tokio::test]
async fn the_python_sdk_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy() {
    sdk_client_behind_a_round_robin_proxy(true).await;
}

/// A 2025-11-25 request of session `id` on `at`: its response.
async fn in_session(at: SocketAddr, id: &str, n: u64, method: &str, params: Value) -> Value {
    let headers = [
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let reply = post(at, &headers, &json::rpc(json!(n), method, params)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    response(&reply)
}

/// `sleep` for `ms` as a 2025-11-25 task of session `id` on `at`: the task id.
async fn sleep_task(at: SocketAddr, id: &str, n: u64, ms: u64) -> String {
    let params = json!({"name": "sleep", "arguments": {"ms": ms}, "task": {"ttl": 60_000}});
    let created = in_session(at, id, n, "tools/call", params).await;
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    created["result"]["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

fn listed(reply: &Value) -> Vec<String> {
    (reply["result"]["tasks"].as_array().expect("tasks").iter())
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_task_made_on_one_instance_is_polled_listed_cancelled_and_awaited_on_the_other() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = support::redis::task_instance(&redis).await;
    let (b, _b) = support::redis::task_instance(&redis).await;
    let id = session(a, "2025-11-25").await;

    let long = sleep_task(a, &id, 2, 60_000).await;
    let got = in_session(b, &id, 3, "tasks/get", json!({"taskId": long})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(
        listed(&in_session(b, &id, 4, "tasks/list", json!({})).await),
        [long.as_str()]
    );
    // Another session's tasks/list does not show it.
    let other = session(b, "2025-11-25").await;
    assert!(listed(&in_session(b, &other, 5, "tasks/list", json!({})).await).is_empty());

    // What Redis holds: the record (its owner the session), expiring at the TTL.
    let mut r = redis.connection().await;
    let key = format!("orkestrel-mcp:task:{long}");
    let record: std::collections::HashMap<String, String> = ::redis::cmd("HGETALL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    let task: Value = serde_json::from_str(&record["task"]).unwrap();
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["owner"], id.as_str(), "{task}");
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");

    // Cancelled on B: settled once, seen so on A.
    let cancelled = in_session(b, &id, 6, "tasks/cancel", json!({"taskId": long})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let got = in_session(a, &id, 7, "tasks/get", json!({"taskId": long})).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let again = in_session(b, &id, 8, "tasks/result", json!({"taskId": long})).await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{again}"
    );

    // The session's GET stream is on B; a task running on A ends: B's tasks/result, waiting,
    // gets its result, and the stream hears of the end.
    let mut on_b = get_stream(b, &id).await;
    let short = sleep_task(a, &id, 9, 300).await;
    let result = in_session(b, &id, 10, "tasks/result", json!({"taskId": short})).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "slept 300 ms",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        short.as_str()
    );
    loop {
        let event = on_b.next().await.expect("a status notification").json();
        if event["method"] == "notifications/tasks/status" && event["params"]["taskId"] == short {
            assert_eq!(event["params"]["status"], "completed", "{event}");
            break;
        }
    }
    assert_eq!(
        listed(&in_session(a, &id, 11, "tasks/list", json!({})).await),
        [short.as_str(), long.as_str()],
        "newest first"
    );
}

/// A 2026-07-28 request on `at` declaring the tasks extension and elicitation: its result.
async fn modern_task_request(at: SocketAddr, n: u64, method: &str, mut params: Value) -> Value {
    let caps = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    params["_meta"] = json::meta_with(caps);
    support::modern::assert_ok(
        &support::modern::call(at, json!(n), method, params).await,
        &json!(n),
    )
}

/// Poll `tasks/get` on `at` (bounded) until the task has `status`; the task.
async fn until_status_on(at: SocketAddr, id: &str, status: &str) -> Value {
    let last = std::sync::Arc::new(std::sync::Mutex::new(Value::Null));
    eventually_async(DEADLINE, &format!("task {id} reaches {status}"), || {
        let last = last.clone();
        async move {
            let task = modern_task_request(at, 90, "tasks/get", json!({"taskId": id})).await;
            let reached = task["status"] == status;
            *last.lock().unwrap() = task;
            reached
        }
    })
    .await;
    let task = last.lock().unwrap().clone();
    task
}

async fn next_event(rx: &mut tokio::sync::mpsc::UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .expect("an event in time")
        .expect("the tool's channel is open")
}

#[tokio::test]
async fn a_task_cancelled_on_b_stops_its_tool_on_a_and_answers_posted_to_b_reach_the_tool_on_a() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let (a, mut on_a) = support::redis::tasking_instance(&redis, gate.clone()).await;
    let (b, _on_b) = support::redis::tasking_instance(&redis, Default::default()).await;

    let created = modern_task_request(a, 1, "tools/call", json!({"name": "gated"})).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(next_event(&mut on_a).await, "started");
    let got = modern_task_request(b, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "working", "{got}");
    modern_task_request(b, 3, "tasks/cancel", json!({"taskId": id})).await;
    // A heard of it through Redis: the tool's future is dropped, unfinished.
    assert_eq!(next_event(&mut on_a).await, "dropped");
    gate.notify_waiters();
    let got = modern_task_request(a, 4, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "cancelled", "{got}");

    // A task of A waits for input; the answer goes to B.
    let created = modern_task_request(a, 5, "tools/call", json!({"name": "asks"})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = until_status_on(b, &id, "input_required").await;
    let requests = waiting["inputRequests"]
        .as_object()
        .expect("input requests");
    assert_eq!(requests.len(), 1, "{waiting}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create", "{request}");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let update = json!({"taskId": id, "inputResponses": {key.as_str(): answer}});
    modern_task_request(b, 6, "tasks/update", update).await;
    let done = until_status_on(b, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Ada", "{done}");
}

#[tokio::test]
async fn with_redis_down_a_task_call_gets_a_json_rpc_error() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _on_a) = support::redis::tasking_instance(&redis, Default::default()).await;
    let created = modern_task_request(a, 1, "tools/call", json!({"name": "gated"})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    redis.kill().await;
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    for (n, method, params) in [
        (2, "tools/call", json!({"name": "gated"})),
        (3, "tasks/get", json!({"taskId": id})),
    ] {
        let mut params = params;
        params["_meta"] = json::meta_with(caps.clone());
        let reply = support::modern::call(a, json!(n), method, params).await;
        let r = support::modern::response(&reply);
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains("task store is unavailable"), "{message}");
    }
}

fn a_task(id: &str, at: u64, owner: Option<&str>) -> orkestrel_mcp::server::tasks::Task {
    orkestrel_mcp::server::tasks::Task {
        task_id: id.into(),
        status: orkestrel_mcp::server::tasks::TaskStatus::Working,
        status_message: None,
        created_at: at,
        last_updated_at: at,
        ttl_ms: Some(60_000),
        poll_interval_ms: None,
        result: None,
        error: None,
        input_requests: Default::default(),
        owner: owner.map(str::to_owned),
    }
}

#[tokio::test]
async fn the_redis_task_store_bounds_count_and_bytes_over_every_instance() {
    use orkestrel_mcp::native::redis::RedisTasks;
    use orkestrel_mcp::server::tasks::{TaskStatus, TaskStore, TaskStoreError};
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        max_tasks: 2,
        max_task_bytes: 4_096,
        ..RedisOptions::new(redis.url())
    };
    let a = RedisTasks::connect(&options).await.unwrap();
    let b = RedisTasks::connect(&options).await.unwrap();
    let now = 1_000;
    a.create(a_task("t1", now, Some("s1")), now).await.unwrap();
    b.create(a_task("t2", now + 1, Some("s1")), now)
        .await
        .unwrap();
    assert_eq!(
        a.create(a_task("t3", now, None), now).await,
        Err(TaskStoreError::Full(2))
    );
    assert_eq!(
        b.create(a_task("t3", now, None), now).await,
        Err(TaskStoreError::Full(2))
    );
    // One owner's tasks, newest first, from either instance.
    let ids = |tasks: Vec<orkestrel_mcp::server::tasks::Task>| {
        tasks.into_iter().map(|t| t.task_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(b.list(Some("s1"), now).await.unwrap()), ["t2", "t1"]);
    assert!(a.list(Some("s2"), now).await.unwrap().is_empty());
    // An update past the byte bound leaves the task as it was.
    let big = json!("x".repeat(8_000));
    let mut grow = |t: &mut orkestrel_mcp::server::tasks::Task| t.result = Some(big.clone());
    assert_eq!(
        a.update("t1", now, &mut grow).await,
        Err(TaskStoreError::TooLarge(4_096))
    );
    assert_eq!(b.get("t1", now).await.unwrap().unwrap().result, None);
    // Updates on both instances race by compare-and-set: each applies once, in some order.
    let mut cancel = |t: &mut orkestrel_mcp::server::tasks::Task| {
        if !t.status.is_terminal() {
            t.status = TaskStatus::Cancelled;
        }
    };
    let mut complete = |t: &mut orkestrel_mcp::server::tasks::Task| {
        if !t.status.is_terminal() {
            t.status = TaskStatus::Completed;
        }
    };
    let (one, two) = tokio::join!(
        a.update("t2", now, &mut cancel),
        b.update("t2", now, &mut complete)
    );
    let (one, two) = (one.unwrap().status, two.unwrap().status);
    assert_eq!(one, two, "both see the one terminal status");
    assert_eq!(a.get("t2", now).await.unwrap().unwrap().status, one);
    // Removed on B: room on A; gone from the owner's list.
    assert!(b.remove("t1").await.unwrap());
    assert!(!a.remove("t1").await.unwrap());
    assert!(a.get("t1", now).await.unwrap().is_none());
    assert_eq!(
        a.update("t1", now, &mut |_| {}).await,
        Err(TaskStoreError::NotFound)
    );
    a.create(a_task("t3", now, None), now).await.unwrap();
    assert_eq!(ids(a.list(Some("s1"), now).await.unwrap()), ["t2"]);
    assert_eq!(ids(b.list(None, now).await.unwrap()), ["t3"]);
    // A task past its TTL is absent.
    assert!(a.get("t3", now + 60_000).await.unwrap().is_none());
}

/// The sum of the live tasks' weights as Redis holds them, and the running total the scripts
/// keep beside them (`None` when not kept).
async fn task_bytes(redis: &Redis) -> (u64, Option<u64>) {
    let mut r = redis.connection().await;
    let weights: Vec<u64> = ::redis::cmd("HVALS")
        .arg("orkestrel-mcp:task-bytes")
        .query_async(&mut r)
        .await
        .unwrap();
    let total: Option<u64> = ::redis::cmd("GET")
        .arg("orkestrel-mcp:task-bytes-total")
        .query_async(&mut r)
        .await
        .unwrap();
    (weights.iter().sum(), total)
}

#[tokio::test]
async fn the_task_byte_bound_keeps_a_running_total_through_creates_updates_removes_and_expiry() {
    use orkestrel_mcp::native::redis::RedisTasks;
    use orkestrel_mcp::server::tasks::{Task, TaskStore, TaskStoreError};
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        max_tasks: 100,
        max_task_bytes: 8_192,
        ..RedisOptions::new(redis.url())
    };
    let a = RedisTasks::connect(&options).await.unwrap();
    let b = RedisTasks::connect(&options).await.unwrap();
    let consistent = |(sum, total): (u64, Option<u64>)| {
        assert_eq!(Some(sum), total, "the kept total is the weights' sum");
        sum
    };
    let clock = system_clock();
    let now = clock();
    let heavy = |id: &str, ttl_ms: u64| Task {
        result: Some(json!("x".repeat(3_000))),
        ttl_ms: Some(ttl_ms),
        ..a_task(id, now, None)
    };
    a.create(heavy("h1", 60_000), now).await.unwrap();
    b.create(heavy("h2", 60_000), now).await.unwrap();
    let two = consistent(task_bytes(&redis).await);
    assert!(two > 6_000, "{two}");
    assert_eq!(
        a.create(heavy("h3", 60_000), now).await,
        Err(TaskStoreError::TooLarge(8_192))
    );
    // An update that shrinks a task gives its bytes back.
    let mut shrink = |t: &mut Task| t.result = None;
    b.update("h1", now, &mut shrink).await.unwrap();
    let one = consistent(task_bytes(&redis).await);
    assert!(one < two - 2_900, "{one} after {two}");
    a.create(heavy("h3", 60_000), now).await.unwrap();
    consistent(task_bytes(&redis).await);
    // A remove gives its bytes back (once, whichever instance removes it).
    assert!(a.remove("h3").await.unwrap());
    assert!(!b.remove("h3").await.unwrap());
    assert_eq!(consistent(task_bytes(&redis).await), one);

    // A task past its TTL gives its bytes back at the next create: h4 expires in 1 ms (Redis's
    // clock), and a heavy create then fits where it would not beside it.
    a.create(heavy("h4", 1), now).await.unwrap();
    let mut created = false;
    for _ in 0..200 {
        match b.create(heavy("h5", 60_000), clock()).await {
            Ok(()) => {
                created = true;
                break;
            }
            Err(TaskStoreError::TooLarge(_)) => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(created, "h4's bytes came back after its TTL");
    let sum = consistent(task_bytes(&redis).await);

    // A store written before the total was kept: the next create sums the weights once.
    let mut r = redis.connection().await;
    let _: () = ::redis::cmd("DEL")
        .arg("orkestrel-mcp:task-bytes-total")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(
        a.create(heavy("h6", 60_000), now).await,
        Err(TaskStoreError::TooLarge(8_192)),
        "the weights summed again: h2 and h5 leave no room for h6"
    );
    assert_eq!(consistent(task_bytes(&redis).await), sum);
}
