//! SSE streams across instances: resuming on another one, Redis restarts, `kill -9`, server requests
//! (elicitation) and list changes that cross instances.

use super::*;

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

/// Wait until the shared log of the stream event `event_id` belongs to (session `id`) holds at
/// least `n` entries (the log is written behind).
async fn logged(redis: &Redis, id: &str, event_id: &str, n: usize) {
    let stream = u64::from_str_radix(event_id.split_once('-').unwrap().0, 36).unwrap();
    let key = format!("orkestrel-mcp:events:{id}:{stream}");
    let r = redis.connection().await;
    eventually_async(DEADLINE, "the stream's events are in Redis", || {
        let (mut r, key) = (r.clone(), key.clone());
        async move {
            let len: usize = ::redis::cmd("LLEN")
                .arg(&key)
                .query_async(&mut r)
                .await
                .unwrap();
            len >= n
        }
    })
    .await;
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

/// A stream longer than the shared log's bound (here 8 events) is trimmed at its front; a
/// resume on another instance from a trimmed event replays what is left — through the result —
/// instead of a fresh standalone stream on which the result never came.
#[tokio::test]
async fn a_resume_from_a_trimmed_event_on_another_instance_still_gets_the_result() {
    use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
    use orkestrel_mcp::server::context::LogLevel;
    use orkestrel_mcp::{RequestContext, Tool};
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        sessions: SessionOptions {
            log_capacity: 8,
            ..SessionOptions::default()
        },
        ..RedisOptions::new(redis.url())
    };
    let mut addrs = Vec::new();
    for _ in 0..2 {
        let server = McpServer::new(ServerOptions::new("chatty", "1").with_logging());
        server.tools().add(Tool::with_context(
            "chatty",
            |_: Nothing, ctx: RequestContext| async move {
                for n in 1..=20 {
                    ctx.log(LogLevel::Info, None, json!(format!("line {n}")));
                }
                Ok::<_, String>("said 20 lines")
            },
        ));
        let backend = RedisSessions::connect(options.clone(), &server, system_clock())
            .await
            .unwrap();
        let endpoint =
            Endpoint::with_session_backend(server, EndpointOptions::default(), backend).unwrap();
        addrs.push(start_service(endpoint).await.0);
    }
    let (a, b) = (addrs[0], addrs[1]);
    let id = session(a, "2025-11-25").await;
    let headers: Vec<(&str, &str)> = POST
        .iter()
        .copied()
        .chain([
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ])
        .collect();
    let response = open(a, "POST", &headers, &call(2, "chatty", json!({}))).await;
    let mut on_a = SseStream::new(response);
    let _priming = on_a.next().await.unwrap();
    let first = on_a.next().await.unwrap();
    assert_eq!(first.json()["params"]["data"], "line 1");
    let all = on_a.rest().await;
    assert_eq!(all.last().unwrap().json()["id"], 2);
    // The shared log is written behind: wait until the stream's end is in it.
    let stream = first
        .id
        .clone()
        .unwrap()
        .split_once('-')
        .unwrap()
        .0
        .to_owned();
    let list = format!(
        "{}events:{id}:{}",
        orkestrel_mcp::native::redis::DEFAULT_PREFIX,
        u64::from_str_radix(&stream, 36).unwrap()
    );
    let connection = redis.connection().await;
    eventually_async(DEADLINE, "the stream's end is in the shared log", || {
        let (list, mut connection) = (list.clone(), connection.clone());
        async move {
            let entries: Vec<String> =
                ::redis::AsyncCommands::lrange(&mut connection, &list, 0, -1)
                    .await
                    .unwrap_or_default();
            entries.last().is_some_and(|e| e == "end")
        }
    })
    .await;
    let first_id = first.id.clone().unwrap();
    let rest = resume(b, &id, &first_id).await.rest().await;
    let result = rest.last().expect("a replay").json();
    assert_eq!(result["id"], 2, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "said 20 lines");
    assert!(rest.len() < 20, "the front was trimmed: {}", rest.len());
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
    logged(&redis, &id, &first, 4).await;
    a_child.kill().await.expect("kill -9 A");

    let mut on_b = resume(b, &id, &first).await;
    for expected in &seen[1..] {
        let event = on_b.next().await.unwrap();
        assert_eq!(event.id, expected.id);
        assert_eq!(step_of(&event), step_of(expected));
    }
    // A is gone, so the stream's `end` never comes: deleting the session ends the relay (it
    // relayed on, empty, for ever).
    let deleted = send(b, "DELETE", &sid(&id), "").await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    while on_b.next().await.is_some() {}
    assert_eq!(on_b.ended_cleanly(), Some(Ok(())), "the relayed stream");
}

/// A relayed stream whose instance was killed ends once its session is gone from Redis (expired:
/// no request named it for the idle TTL; here its record is removed), not only on a `DELETE`.
#[tokio::test]
async fn a_relay_ends_when_its_session_is_gone_from_redis() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, mut a_child) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;
    let mut on_a = progress_stream(a, &id, 1000, 20).await;
    let _priming = on_a.next().await.unwrap();
    let first = on_a.next().await.unwrap().id.unwrap();
    // The priming event and the first step are in Redis (the log is written behind).
    logged(&redis, &id, &first, 2).await;
    a_child.kill().await.expect("kill -9 A");
    let mut on_b = resume(b, &id, &first).await;
    let removed: usize = ::redis::cmd("DEL")
        .arg(format!("orkestrel-mcp:session:{id}"))
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    assert_eq!(removed, 1);
    while on_b.next().await.is_some() {}
    assert_eq!(on_b.ended_cleanly(), Some(Ok(())), "the relayed stream");
    let listed = post(
        b,
        &sid(&id),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(listed.status, 404, "the session is gone: {}", listed.body);
}

/// Two instances serving the `ask` tool (it elicits a name) and a 2025-11-25 session that
/// declares elicitation, initialized on the first and `notifications/initialized` on the second:
/// `(a, b, session id)`.
async fn asking_pair(redis: &Redis) -> (SocketAddr, SocketAddr, String) {
    let a = asking_instance(redis).await;
    let b = asking_instance(redis).await;
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
    let initialized = post(b, &headers, &json::initialized().to_string()).await;
    assert_eq!(initialized.status, 202, "{}", initialized.body);
    (a, b, id)
}

#[tokio::test]
async fn an_elicitation_raised_on_a_reaches_the_client_on_b_and_its_answer_posted_to_b_resolves_it()
{
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, b, id) = asking_pair(&redis).await;
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];

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
    let (a, b, id) = asking_pair(&redis).await;
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];

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

/// A `notifications/cancelled` that reaches another instance than the one running the request
/// cancels it there (handed on through Redis): the tool stops and its stream ends without a
/// result. It was ignored: the tool ran to its end and answered.
#[tokio::test]
async fn a_cancellation_sent_to_the_other_instance_cancels_the_request() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;
    let mut on_a = progress_call(a, &id, 7, 1000, 20).await;
    let _priming = on_a.next().await.unwrap();
    assert_eq!(step_of(&on_a.next().await.unwrap()), "step 1 of 1000");
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"enough"}}"#;
    let sent = post(b, &sid(&id), cancel).await;
    assert_eq!(sent.status, 202, "{}", sent.body);
    let rest = on_a.rest().await;
    assert!(
        rest.iter().all(|e| e.json().get("id").is_none()),
        "no result after the cancellation: {:?}",
        rest.last().map(Event::json)
    );
    assert!(
        rest.len() < 999,
        "the tool stopped: {} more steps",
        rest.len()
    );
}

/// One stream, one connection, across instances as on one (spec `basic/transports`: a message
/// goes out on one stream only): a request's stream resumed on B ends the connection still open
/// to A (it got every event too, the response included), and a `GET` on B ends the one on A
/// (both got every pushed message).
#[tokio::test]
async fn a_stream_taken_over_on_another_instance_ends_the_first_connection() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let id = session(a, "2025-11-25").await;

    let mut on_a = progress_call(a, &id, 2, 1000, 5).await;
    let _priming = on_a.next().await.unwrap();
    let first = on_a.next().await.unwrap();
    let mut on_b = resume(b, &id, &first.id.clone().unwrap()).await;
    assert!(on_b.next().await.is_some(), "B relays the stream");
    let rest_on_a = on_a.rest().await;
    assert!(
        rest_on_a.iter().all(|e| e.json().get("id").is_none()),
        "A's connection ended before the result: {} events",
        rest_on_a.len()
    );
    let rest_on_b = on_b.rest().await;
    let result = rest_on_b.last().unwrap().json();
    assert_eq!(result["result"]["content"][0]["text"], "done 1000 steps");

    let mut get_a = get_stream(a, &id).await;
    let _get_b = get_stream(b, &id).await;
    while get_a.next().await.is_some() {}
    assert_eq!(get_a.ended_cleanly(), Some(Ok(())), "A's GET stream");

    // A relay is one of those connections: a second resume on B ends B's first relay, and a
    // resume on A ends B's second one (each relay got every event, the response included).
    let mut on_a = progress_call(a, &id, 3, 1000, 5).await;
    let _priming = on_a.next().await.unwrap();
    let first = on_a.next().await.unwrap().id.unwrap();
    drop(on_a);
    let mut relay_1 = resume(b, &id, &first).await;
    assert!(relay_1.next().await.is_some(), "B relays the stream");
    let mut relay_2 = resume(b, &id, &first).await;
    let rest_1 = relay_1.rest().await;
    assert!(
        rest_1.iter().all(|e| e.json().get("id").is_none()),
        "B's first relay ended before the result: {} events",
        rest_1.len()
    );
    assert!(relay_2.next().await.is_some(), "B relays the stream again");
    let on_a = resume(a, &id, &first).await.rest().await;
    let rest_2 = relay_2.rest().await;
    assert!(
        rest_2.iter().all(|e| e.json().get("id").is_none()),
        "B's second relay ended before the result: {} events",
        rest_2.len()
    );
    let result = on_a.last().unwrap().json();
    assert_eq!(result["result"]["content"][0]["text"], "done 1000 steps");
}
