//! Tasks on Redis: made on one instance, polled, listed, cancelled and awaited on another; the
//! task store's bounds.

use super::*;
use orkestrel_mcp::server::tasks::{
    Task, TaskChange, TaskListener, TaskSignal, TaskStore, TaskStoreError,
};

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
        authorization: None,
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

/// The Redis task store, reporting `unavailable` each time a change could not be written (Redis
/// did not answer), and with `reads` each read.
struct Watched {
    inner: Arc<dyn TaskStore>,
    events: tokio::sync::mpsc::UnboundedSender<&'static str>,
    /// Report reads too: `read`, or `read unavailable`.
    reads: bool,
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watched")
    }
}

impl TaskStore for Watched {
    fn create(&self, task: Task, now_ms: u64) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        self.inner.create(task, now_ms)
    }
    fn get<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        Box::pin(async move {
            let read = self.inner.get(task_id, now_ms).await;
            if self.reads {
                let _ = self.events.send(match &read {
                    Err(TaskStoreError::Unavailable(_)) => "read unavailable",
                    _ => "read",
                });
            }
            read
        })
    }
    fn update<'a>(
        &'a self,
        task_id: &'a str,
        now_ms: u64,
        change: &'a mut dyn TaskChange,
    ) -> BoxFuture<'a, Result<Task, TaskStoreError>> {
        Box::pin(async move {
            let changed = self.inner.update(task_id, now_ms, change).await;
            if let Err(TaskStoreError::Unavailable(_)) = &changed {
                let _ = self.events.send("unavailable");
            }
            changed
        })
    }
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<Task>, TaskStoreError>> {
        self.inner.list(owner, now_ms)
    }
    fn remove<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        self.inner.remove(task_id)
    }
    fn signal<'a>(&'a self, task_id: &'a str, signal: &'a TaskSignal) -> BoxFuture<'a, ()> {
        self.inner.signal(task_id, signal)
    }
    fn subscribe(&self, listener: TaskListener) -> bool {
        self.inner.subscribe(listener)
    }
}

/// A task whose tool ends while Redis does not answer (stalled) records its end once Redis is
/// back: it completes, with its result, instead of staying `working` until its ttl with the
/// result lost.
#[tokio::test]
async fn a_task_ending_while_redis_stalls_completes_once_redis_is_back() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let gate = Arc::new(tokio::sync::Notify::new());
    let (failures, mut failed) = tokio::sync::mpsc::unbounded_channel();
    let (a, mut on_a) = support::redis::tasking_instance_with(&redis, gate.clone(), move |inner| {
        Arc::new(Watched {
            inner,
            events: failures,
            reads: false,
        })
    })
    .await;
    let created = modern_task_request(a, 1, "tools/call", json!({"name": "gated"})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(next_event(&mut on_a).await, "started");
    redis.stall(true);
    gate.notify_waiters();
    assert_eq!(next_event(&mut on_a).await, "dropped");
    // The end's first write failed (Redis did not answer in time).
    assert_eq!(next_event(&mut failed).await, "unavailable");
    redis.stall(false);
    let done = until_status_on(a, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "opened", "{done}");
}

/// A 2025-11-25 `tasks/result` waiting for a task while Redis stalls waits on (its rechecks
/// fail) and answers with the result once the task ends: it answered `-32603` "the task store is
/// unavailable" at the first failed recheck, the task still working.
#[tokio::test]
async fn tasks_result_waits_through_a_redis_stall() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let gate = Arc::new(tokio::sync::Notify::new());
    let (reads, mut read) = tokio::sync::mpsc::unbounded_channel();
    let (a, mut on_a) = support::redis::tasking_instance_with(&redis, gate.clone(), move |inner| {
        Arc::new(Watched {
            inner,
            events: reads,
            reads: true,
        })
    })
    .await;
    let id = session(a, "2025-11-25").await;
    let params = json!({"name": "gated", "arguments": {}, "task": {"ttl": 60_000}});
    let created = in_session(a, &id, 2, "tools/call", params).await;
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(next_event(&mut on_a).await, "started");
    let waiting = tokio::spawn({
        let (id, task) = (id.clone(), task.clone());
        async move { in_session(a, &id, 3, "tasks/result", json!({"taskId": task})).await }
    });
    // Its first read found the task working; then Redis stalls, and a recheck fails.
    assert_eq!(next_event(&mut read).await, "read");
    redis.stall(true);
    while next_event(&mut read).await != "read unavailable" {}
    redis.stall(false);
    gate.notify_waiters();
    let result = tokio::time::timeout(DEADLINE, waiting)
        .await
        .expect("tasks/result answers")
        .unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "opened", "{result}");
}
