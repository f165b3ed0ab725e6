//! One session served by several instances, the live-session caps, and `503` while Redis is down.

use super::*;

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

/// Two session stores (two server instances) sharing one Redis with `options`.
async fn two_instances(options: RedisOptions) -> (Arc<RedisSessions>, Arc<RedisSessions>) {
    let connect = |name: &str| {
        let server = McpServer::new(ServerOptions::new(name, "1"));
        let options = options.clone();
        async move {
            RedisSessions::connect(options, &server, system_clock())
                .await
                .unwrap()
        }
    };
    (connect("one").await, connect("two").await)
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
    let (a, b) = two_instances(options).await;
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

/// A session minted on one instance carries the handshake TTL in Redis until a request names it
/// (on any instance), which sets the idle TTL; one never named leaves the cap when it expires.
#[tokio::test]
async fn a_session_never_named_after_initialize_expires_after_the_handshake_ttl() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        sessions: SessionOptions {
            max_sessions: 2,
            handshake_ttl_ms: Some(1_000),
            ..SessionOptions::default()
        },
        ..RedisOptions::new(redis.url())
    };
    let (a, b) = two_instances(options).await;
    let used = a.mint("2025-11-25").await.unwrap();
    let bare = a.mint("2025-11-25").await.unwrap();
    let r = redis.connection().await;
    let pttl = |id: String| {
        let key = a.record_key(&id);
        let mut r = r.clone();
        async move {
            let ttl: i64 = ::redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut r)
                .await
                .unwrap();
            ttl
        }
    };
    let minted = pttl(bare.id().to_owned()).await;
    assert!(minted > 0 && minted <= 1_000, "minted: {minted}");
    assert!(b.touch(used.id()).await.unwrap().is_some(), "named on B");
    let named = pttl(used.id().to_owned()).await;
    assert!(named > 1_000 && named <= 30 * 60 * 1000, "named: {named}");
    assert!(matches!(
        b.mint("2025-11-25").await,
        Err(MintError::AtCapacity)
    ));
    eventually_async(DEADLINE, "the bare session leaves the cap", || async {
        b.count().await == Ok(1)
    })
    .await;
    assert!(b.mint("2025-11-25").await.is_ok());
    assert!(a.touch(bare.id()).await.unwrap().is_none());
    assert!(a.touch(used.id()).await.unwrap().is_some());

    // With no idle TTL, the first request takes the handshake expiry off.
    let options = RedisOptions {
        prefix: "orkestrel-mcp-no-idle:".into(),
        sessions: SessionOptions {
            idle_ttl_ms: None,
            handshake_ttl_ms: Some(1_000),
            ..SessionOptions::default()
        },
        ..RedisOptions::new(redis.url())
    };
    let three = McpServer::new(ServerOptions::new("three", "1"));
    let c = RedisSessions::connect(options, &three, system_clock())
        .await
        .unwrap();
    let kept = c.mint("2025-11-25").await.unwrap();
    let key = c.record_key(kept.id());
    let mut r = redis.connection().await;
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 1_000, "minted: {ttl}");
    assert!(c.touch(kept.id()).await.unwrap().is_some());
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(ttl, -1, "no expiry once named");
    let score: String = ::redis::cmd("ZSCORE")
        .arg(c.live_key())
        .arg(kept.id())
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(score, "inf");
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

/// Two in-process instances sharing `redis`, each behind the [`support::server::People`] gate.
async fn two_gated_instances(redis: &Redis) -> [SocketAddr; 2] {
    let [(a, _), (b, _)] = two_gated_servers(redis).await;
    [a, b]
}

/// [`two_gated_instances`] with each instance's server.
async fn two_gated_servers(redis: &Redis) -> [(SocketAddr, McpServer); 2] {
    let mut instances = Vec::new();
    for _ in 0..2 {
        let server = support::server();
        let backend =
            RedisSessions::connect(RedisOptions::new(redis.url()), &server, system_clock())
                .await
                .unwrap();
        let endpoint = orkestrel_mcp::native::endpoint::Endpoint::with_session_backend(
            server.clone(),
            support::server::gated_by_people(false),
            backend,
        )
        .unwrap();
        let (addr, _task) = start_service(endpoint).await;
        instances.push((addr, server));
    }
    let b = instances.pop().unwrap();
    [instances.pop().unwrap(), b]
}

/// A 2025-11-25 session `who` (an `Authorization` field) initializes on `at`: its id.
async fn session_of(at: SocketAddr, who: (&'static str, &'static str)) -> String {
    let init = post(at, &[who], &initialize(1, "2025-11-25")).await;
    assert_eq!(init.status, 200, "{}", init.body);
    init.header("mcp-session-id").unwrap().to_owned()
}

/// The fields of a 2025-11-25 request of `who` in session `id`.
fn as_user<'a>(who: (&'static str, &'static str), id: &'a str) -> [(&'a str, &'a str); 3] {
    [
        who,
        ("mcp-session-id", id),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

/// `list` (a `tools/list`) posted to `at` with `headers` is answered with the tools.
async fn lists_tools(at: SocketAddr, headers: &[(&str, &str)], list: &str) {
    let served = post(at, headers, list).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert!(
        response(&served)["result"]["tools"].is_array(),
        "{}",
        served.body
    );
}

/// What one instance learnt of a session holds on the others: a repeat `initialize` on an
/// instance that did not see the first is refused (`400`, as on the one that did — it was
/// accepted and renegotiated the shared record's version), and a session opened with a token
/// is bound to its user there too (another user's token with its id gets `404`).
#[tokio::test]
async fn the_handshake_and_the_user_of_a_session_hold_on_every_instance() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let [a, b] = two_gated_instances(&redis).await;
    let alice = ("authorization", "Bearer alice");
    let id = session_of(a, alice).await;
    let headers = |who| as_user(who, &id);
    let again = post(b, &headers(alice), &initialize(2, "2025-03-26")).await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert!(again.body.contains("already initialized"), "{}", again.body);
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    let bob = ("authorization", "Bearer bob");
    assert_eq!(post(b, &headers(bob), list).await.status, 404);
    assert_eq!(send(b, "DELETE", &headers(bob), "").await.status, 404);
    lists_tools(b, &headers(alice), list).await;
}

/// An instance whose server forgot a session's scope while it kept the session's local handle
/// (what dropping an unused handle did to a request loading it again at that moment: the scope
/// was ended after the new one was restored) restores it from the record: the session's user
/// is still its only user there (another user's token got the session, the binding gone).
#[tokio::test]
async fn a_session_whose_scope_an_instance_forgot_keeps_its_user() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let [(a, _), (b, server_b)] = two_gated_servers(&redis).await;
    let alice = ("authorization", "Bearer alice");
    let id = session_of(a, alice).await;
    let headers = |who| as_user(who, &id);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(post(b, &headers(alice), list).await.status, 200);
    server_b.end_scope(&id);
    let bob = ("authorization", "Bearer bob");
    let refused = post(b, &headers(bob), list).await;
    assert_eq!(refused.status, 404, "{}", refused.body);
    lists_tools(b, &headers(alice), list).await;
}

/// A session whose record is gone from Redis (evicted, or expired with its `ended` never
/// announced) while this instance holds an open stream of it: the instance's keep-alive finds
/// it gone and ends the stream (it stayed open until a request named the session).
#[tokio::test]
async fn a_streamed_session_whose_record_is_gone_ends_its_streams() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let options = RedisOptions {
        sessions: SessionOptions {
            idle_ttl_ms: Some(3_000),
            ..SessionOptions::default()
        },
        ..RedisOptions::new(redis.url())
    };
    let server = McpServer::new(ServerOptions::new("one", "1"));
    let a = RedisSessions::connect(options, &server, system_clock())
        .await
        .unwrap();
    let session = a.mint("2025-11-25").await.unwrap();
    let _stream = session.resume(None).expect("a GET stream");
    let mut r = redis.connection().await;
    let removed: usize = ::redis::cmd("DEL")
        .arg(a.record_key(session.id()))
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(removed, 1);
    eventually(DEADLINE, "the session's streams here end", || {
        session.is_closed()
    })
    .await;
}
