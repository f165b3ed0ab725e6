//! Tasks over real HTTP on 127.0.0.1, in both eras: the 2025-11-25 core feature
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks>) and the
//! 2026-07-28 extension `io.modelcontextprotocol/tasks` (SEP-2663), with their faults: a client
//! gone while its task runs, a task past its TTL (an injected clock, no sleeps), a cancel racing
//! the tool's end, a full store. Tools wait on gates the test opens; every wait is bounded.
#![cfg(feature = "native")]

mod support;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::protocol::TaskSupport;
use orkestrel_mcp::server::tasks::{MemoryTaskStore, TaskOptions, TaskStore};
use orkestrel_mcp::{ErrorObject, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Value};
use support::json::{meta_with, rpc};
use support::modern::{assert_error, assert_ok, call, elicit, Args};
use support::{eventually_async, manual_clock, post, send, TestServer, DEADLINE};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::Notify;

const EXT: &str = "io.modelcontextprotocol/tasks";

/// Per-label gates the `gated` tool waits on, and what the tools report.
#[derive(Clone)]
struct Gates {
    gates: Arc<Mutex<HashMap<String, Arc<Notify>>>>,
    events: UnboundedSender<String>,
}

impl Gates {
    fn gate(&self, label: &str) -> Arc<Notify> {
        self.gates
            .lock()
            .unwrap()
            .entry(label.to_owned())
            .or_default()
            .clone()
    }
    fn open(&self, label: &str) {
        self.gate(label).notify_one();
    }
}

/// Reports `dropped:<label>` when the tool's future goes (ended or dropped).
struct Dropped(UnboundedSender<String>, String);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.0.send(format!("dropped:{}", self.1));
    }
}

fn label_of(args: &Args) -> String {
    args.get("label")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// A server with tasks on `options` and the tools `gated` (optional: waits for its gate, then
/// answers `done <label>`), `big` (optional: a result of `size` bytes), `asks` (optional: one
/// elicitation), `plain` (forbidden) and `must` (required).
fn fixture(
    options: TaskOptions,
    clock: Option<orkestrel_mcp::host::Clock>,
) -> (McpServer, Gates, UnboundedReceiver<String>) {
    let mut server_options = ServerOptions::new("tasks-test", "1.0.0").with_tasks(options);
    if let Some(clock) = clock {
        server_options = server_options.with_clock(clock);
    }
    let server = McpServer::new(server_options);
    let (events, rx) = unbounded_channel();
    let gates = Gates {
        gates: Arc::default(),
        events,
    };
    let g = gates.clone();
    server.tools().add(
        Tool::from_json("gated", json!({"type":"object"}), move |args: Args, _| {
            let (g, label) = (g.clone(), label_of(&args));
            async move {
                let _dropped = Dropped(g.events.clone(), label.clone());
                let _ = g.events.send(format!("started:{label}"));
                g.gate(&label).notified().await;
                Ok::<_, String>(format!("done {label}"))
            }
        })
        .with_task_support(TaskSupport::Optional),
    );
    server.tools().add(
        Tool::from_json(
            "big",
            json!({"type":"object"}),
            |args: Args, _| async move {
                let size = args.get("size").and_then(Value::as_u64).unwrap_or(0) as usize;
                Ok::<_, String>("x".repeat(size))
            },
        )
        .with_task_support(TaskSupport::Optional),
    );
    server.tools().add(
        Tool::from_json(
            "asks",
            json!({"type":"object"}),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx
                    .input("name", "elicitation/create", elicit("Name?", "name"))
                    .await?;
                Ok::<_, ErrorObject>(format!("Hello, {}!", answer["content"]["name"]))
            },
        )
        .with_task_support(TaskSupport::Optional),
    );
    let g = gates.clone();
    server.tools().add(
        Tool::from_json(
            "impatient",
            json!({"type":"object"}),
            move |_: Args, ctx: RequestContext| {
                let g = g.clone();
                async move {
                    let asked = ctx.input("name", "elicitation/create", elicit("Name?", "name"));
                    let gate = g.gate("impatient");
                    let gave_up = gate.notified();
                    // The losing future is dropped with the select's output.
                    let outcome =
                        match futures::future::select(Box::pin(asked), Box::pin(gave_up)).await {
                            futures::future::Either::Left(_) => "answered",
                            futures::future::Either::Right(_) => "gave up",
                        };
                    g.gate("impatient-end").notified().await;
                    Ok::<_, ErrorObject>(outcome)
                }
            },
        )
        .with_task_support(TaskSupport::Optional),
    );
    server.tools().add(
        Tool::from_json(
            "later",
            json!({"type":"object"}),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx
                    .input("name", "elicitation/create", elicit("Name?", "name"))
                    .await?;
                let before = ctx.task_id();
                let became = ctx.run_as_task().await;
                Ok::<_, ErrorObject>(format!(
                    "{} {before:?} {became} {}",
                    answer["content"]["name"],
                    ctx.task_id().is_some()
                ))
            },
        )
        .with_task_on_demand(),
    );
    server.tools().add(Tool::from_json(
        "plain",
        json!({"type":"object"}),
        |_: Args, _| async { Ok::<_, String>("plain") },
    ));
    server.tools().add(
        Tool::from_json("must", json!({"type":"object"}), |_: Args, _| async {
            Ok::<_, String>("must")
        })
        .with_task_support(TaskSupport::Required),
    );
    (server, gates, rx)
}

async fn start_fixture(
    options: TaskOptions,
    clock: Option<orkestrel_mcp::host::Clock>,
) -> (TestServer, Gates, UnboundedReceiver<String>) {
    let (server, gates, rx) = fixture(options, clock);
    (
        support::start(server, EndpointOptions::default()).await,
        gates,
        rx,
    )
}

async fn next_event(rx: &mut UnboundedReceiver<String>) -> String {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .expect("an event within the deadline")
        .expect("the events channel is open")
}

/// Wait for `want`, skipping other events.
async fn wait_event(rx: &mut UnboundedReceiver<String>, want: &str) {
    while next_event(rx).await != want {}
}

fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { EXT: {} } })
}

/// A 2026-07-28 request declaring the extension.
async fn modern(s: &TestServer, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta_with(caps());
    assert_ok(&call(s.addr, json!(id), method, params).await, &json!(id))
}

async fn modern_err(s: &TestServer, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta_with(caps());
    let reply = call(s.addr, json!(id), method, params).await;
    let r = support::modern::response(&reply);
    assert!(r.get("result").is_none(), "{r}");
    r["error"].clone()
}

async fn start_task(s: &TestServer, tool: &str, args: Value) -> String {
    let created = modern(
        s,
        1,
        "tools/call",
        json!({ "name": tool, "arguments": args }),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().expect("a taskId").to_owned()
}

async fn get(s: &TestServer, id: &str) -> Value {
    modern(s, 2, "tasks/get", json!({ "taskId": id })).await
}

/// Poll `tasks/get` (bounded) until the task has `status`.
async fn until_status(s: &TestServer, id: &str, status: &str) -> Value {
    let last = Arc::new(Mutex::new(Value::Null));
    eventually_async(DEADLINE, &format!("task {id} reaches {status}"), || {
        let last = last.clone();
        async move {
            let task = get(s, id).await;
            let reached = task["status"] == status;
            *last.lock().unwrap() = task;
            reached
        }
    })
    .await;
    let task = last.lock().unwrap().clone();
    task
}

// ---------------------------------------------------------------------------------------------
// The 2026-07-28 extension
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_task_is_created_at_once_polled_and_inlines_its_result() {
    let (s, gates, mut events) = start_fixture(TaskOptions::new(), None).await;
    let discovered = modern(&s, 9, "server/discover", json!({})).await;
    assert_eq!(discovered["capabilities"]["extensions"][EXT], json!({}));
    assert!(discovered["capabilities"].get("tasks").is_none());

    let id = start_task(&s, "gated", json!({ "label": "a" })).await;
    wait_event(&mut events, "started:a").await;
    let working = get(&s, &id).await;
    assert_eq!(
        (
            &working["status"],
            &working["resultType"],
            working.get("result")
        ),
        (&json!("working"), &json!("complete"), None),
        "{working}"
    );
    assert_eq!(working["ttlMs"], 3_600_000, "{working}");
    gates.open("a");
    let done = until_status(&s, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "done a", "{done}");
    assert!(done.get("error").is_none() && done.get("inputRequests").is_none());
}

#[tokio::test]
async fn input_inside_a_task_waits_for_tasks_update() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let id = start_task(&s, "asks", json!({})).await;
    let waiting = until_status(&s, &id, "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    // A malformed answer and an unknown key are ignored: still waiting.
    let ack = modern(
        &s,
        3,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": { "name": 12, "other": { "action": "accept" } } }),
    )
    .await;
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    assert_eq!(get(&s, &id).await["status"], "input_required");
    let answer = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
    modern(
        &s,
        4,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": answer }),
    )
    .await;
    let done = until_status(&s, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, \"Ada\"!");
}

#[tokio::test]
async fn without_the_extension_tools_run_plain_and_task_methods_are_refused() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let plain = assert_ok(
        &call(
            s.addr,
            json!(1),
            "tools/call",
            json!({ "name": "big", "arguments": { "size": 2 } }),
        )
        .await,
        &json!(1),
    );
    assert_eq!(plain["content"][0]["text"], "xx", "{plain}");
    let err = assert_error(
        &call(s.addr, json!(2), "tools/call", json!({ "name": "must" })).await,
        400,
        -32021,
        &json!(2),
    );
    assert_eq!(
        err["data"]["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
    for method in ["tasks/get", "tasks/cancel"] {
        let reply = call(s.addr, json!(3), method, json!({ "taskId": "x" })).await;
        assert_eq!(
            support::modern::response(&reply)["error"]["code"],
            -32021,
            "{method}"
        );
    }
    // With the extension: unknown ids are -32602; the removed methods are -32601.
    assert_eq!(
        modern_err(&s, 4, "tasks/get", json!({ "taskId": "nope" })).await["code"],
        -32602
    );
    assert_eq!(
        modern_err(&s, 5, "tasks/list", json!({})).await["code"],
        -32601
    );
}

#[tokio::test]
async fn an_input_request_the_tool_stops_waiting_for_is_withdrawn() {
    let (s, gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let id = start_task(&s, "impatient", json!({})).await;
    let waiting = until_status(&s, &id, "input_required").await;
    assert!(waiting["inputRequests"]["name"].is_object(), "{waiting}");
    gates.open("impatient");
    let working = until_status(&s, &id, "working").await;
    assert!(working.get("inputRequests").is_none(), "{working}");
    // A late answer to the withdrawn key is ignored.
    let late = json!({ "name": { "action": "accept", "content": { "name": "x" } } });
    modern(
        &s,
        3,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": late }),
    )
    .await;
    assert_eq!(get(&s, &id).await["status"], "working");
    gates.open("impatient-end");
    let done = until_status(&s, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "gave up", "{done}");
}

#[tokio::test]
async fn an_on_demand_tool_gathers_input_then_continues_as_a_task() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let round = modern(&s, 1, "tools/call", json!({ "name": "later" })).await;
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert!(round.get("taskId").is_none(), "{round}");
    let answers = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
    let created = modern(
        &s,
        2,
        "tools/call",
        json!({ "name": "later", "inputResponses": answers }),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let id = created["taskId"].as_str().unwrap().to_owned();
    let done = until_status(&s, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "\"Ada\" None true true",
        "{done}"
    );
    // Without the extension the same tool ends as a plain call.
    let mut params = json!({ "name": "later", "inputResponses": answers });
    params["_meta"] = meta_with(json!({ "elicitation": {} }));
    let plain = assert_ok(
        &call(s.addr, json!(3), "tools/call", params).await,
        &json!(3),
    );
    assert_eq!(
        plain["content"][0]["text"], "\"Ada\" None false false",
        "{plain}"
    );
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_task_outlives_its_session_and_is_polled_from_a_new_one() {
    let (s, gates, mut events) = start_fixture(TaskOptions::new(), None).await;
    let sid = support::new_session(s.addr, "2025-11-25").await;
    let call = rpc(
        json!(2),
        "tools/call",
        json!({ "name": "gated", "arguments": { "label": "s" }, "task": { "ttl": 60000 } }),
    );
    let reply = post(s.addr, &[("mcp-session-id", &sid)], &call).await;
    let created = &reply.messages()[0]["result"]["task"];
    assert_eq!(created["status"], "working", "{reply:?}");
    assert_eq!(created["ttl"], 60000, "{reply:?}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    wait_event(&mut events, "started:s").await;
    // The client ends its session while the task runs.
    assert_eq!(
        send(s.addr, "DELETE", &[("mcp-session-id", &sid)], "")
            .await
            .status,
        204
    );
    let other = support::new_session(s.addr, "2025-11-25").await;
    let ask = |id_: u64, method: &str, params: Value| {
        let (other, body) = (other.clone(), rpc(json!(id_), method, params));
        async move {
            post(s.addr, &[("mcp-session-id", &other)], &body)
                .await
                .messages()[0]
                .clone()
        }
    };
    let polled = ask(3, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(polled["result"]["status"], "working", "{polled}");
    // tasks/list shows a session only its own tasks.
    let listed = ask(4, "tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    // tasks/result waits for the end, then answers with the tool's result.
    let waiting = tokio::spawn(ask(5, "tasks/result", json!({ "taskId": id })));
    gates.open("s");
    let result = tokio::time::timeout(DEADLINE, waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "done s", "{result}");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let again = ask(6, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(again["error"]["code"], -32602, "terminal: {again}");
}

#[tokio::test]
async fn a_task_past_its_ttl_is_gone_and_its_tool_dropped() {
    let (now, clock) = manual_clock();
    let options = TaskOptions::new().with_ttl(5_000, 10_000);
    let (s, _gates, mut events) = start_fixture(options, Some(clock)).await;
    let id = start_task(&s, "gated", json!({ "label": "t" })).await;
    wait_event(&mut events, "started:t").await;
    now.fetch_add(4_999, Ordering::SeqCst);
    let alive = get(&s, &id).await;
    assert_eq!(
        (&alive["status"], &alive["ttlMs"]),
        (&json!("working"), &json!(5000))
    );
    now.fetch_add(1, Ordering::SeqCst);
    let gone = modern_err(&s, 3, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(gone["code"], -32602, "{gone}");
    wait_event(&mut events, "dropped:t").await;
}

/// Poll until the task is terminal; its final `tasks/get`.
async fn until_terminal(s: &TestServer, id: &str) -> Value {
    let last = Arc::new(Mutex::new(Value::Null));
    eventually_async(DEADLINE, &format!("task {id} ends"), || {
        let last = last.clone();
        async move {
            let task = get(s, id).await;
            let ended = ["completed", "failed", "cancelled"]
                .contains(&task["status"].as_str().unwrap_or(""));
            *last.lock().unwrap() = task;
            ended
        }
    })
    .await;
    let task = last.lock().unwrap().clone();
    task
}

#[tokio::test]
async fn cancel_racing_completion_settles_exactly_once() {
    let (s, gates, mut events) = start_fixture(TaskOptions::new(), None).await;
    // A cancel after the end changes nothing (terminal is final).
    let id = start_task(&s, "gated", json!({ "label": "first" })).await;
    gates.open("first");
    until_status(&s, &id, "completed").await;
    let ack = modern(&s, 3, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let still = get(&s, &id).await;
    assert_eq!(still["status"], "completed", "{still}");
    assert_eq!(still["result"]["content"][0]["text"], "done first");
    // The tool's end and a cancel at once: one terminal status, and it stays.
    for round in 0..12 {
        let label = format!("r{round}");
        let id = start_task(&s, "gated", json!({ "label": label })).await;
        wait_event(&mut events, &format!("started:{label}")).await;
        let cancel = modern(&s, 3, "tasks/cancel", json!({ "taskId": id }));
        let ((), ack) = tokio::join!(async { gates.open(&label) }, cancel);
        assert_eq!(ack["resultType"], "complete", "{ack}");
        let settled = until_terminal(&s, &id).await;
        wait_event(&mut events, &format!("dropped:{label}")).await;
        match settled["status"].as_str().unwrap() {
            "completed" => assert_eq!(
                settled["result"]["content"][0]["text"],
                json!(format!("done {label}"))
            ),
            "cancelled" => assert!(settled.get("result").is_none(), "{settled}"),
            other => panic!("{other}: {settled}"),
        }
        modern(&s, 4, "tasks/cancel", json!({ "taskId": id })).await;
        assert_eq!(get(&s, &id).await["status"], settled["status"], "{settled}");
    }
}

#[tokio::test]
async fn a_cancelled_task_drops_its_tool() {
    let (s, _gates, mut events) = start_fixture(TaskOptions::new(), None).await;
    let id = start_task(&s, "gated", json!({ "label": "c" })).await;
    wait_event(&mut events, "started:c").await;
    modern(&s, 3, "tasks/cancel", json!({ "taskId": id })).await;
    wait_event(&mut events, "dropped:c").await;
    assert_eq!(get(&s, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn a_full_store_refuses_clearly_and_evicts_nothing() {
    let store = Arc::new(MemoryTaskStore::new(2, 4_096));
    let (s, gates, _events) =
        start_fixture(TaskOptions::new().with_store(store.clone()), None).await;
    let a = start_task(&s, "gated", json!({ "label": "a" })).await;
    let b = start_task(&s, "gated", json!({ "label": "b" })).await;
    let full = modern_err(
        &s,
        3,
        "tools/call",
        json!({ "name": "gated", "arguments": { "label": "c" } }),
    )
    .await;
    assert_eq!(full["code"], -32603, "{full}");
    assert!(full["message"].as_str().unwrap().contains("full"), "{full}");
    assert_eq!(store.len(), 2);
    assert_eq!(get(&s, &a).await["status"], "working");
    assert_eq!(get(&s, &b).await["status"], "working");
    // A result beyond the byte bound fails its task; the others stay as they were.
    gates.open("a");
    until_status(&s, &a, "completed").await;
    modern(&s, 4, "tasks/cancel", json!({ "taskId": b })).await;
    assert!(store.remove(&a).await.unwrap());
    let big = start_task(&s, "big", json!({ "size": 10_000 })).await;
    let failed = until_status(&s, &big, "failed").await;
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("byte bound"),
        "{failed}"
    );
    assert_eq!(get(&s, &b).await["status"], "cancelled");
}

// ---------------------------------------------------------------------------------------------
// The 2025-11-25 rules
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn handshake_era_tasks_follow_the_tools_declaration() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let init = post(s.addr, &[], &support::initialize(1, "2025-11-25")).await;
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    let caps = &init.messages()[0]["result"]["capabilities"];
    assert_eq!(
        caps["tasks"]["requests"]["tools"]["call"],
        json!({}),
        "{caps}"
    );
    let ask = |method: &str, params: Value| {
        let (sid, body) = (sid.clone(), rpc(json!(7), method, params));
        async move {
            post(s.addr, &[("mcp-session-id", &sid)], &body)
                .await
                .messages()[0]
                .clone()
        }
    };
    let listed = ask("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap().clone();
    let support_of = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["execution"]["taskSupport"].clone()
    };
    assert_eq!(support_of("gated"), "optional");
    assert_eq!(support_of("must"), "required");
    assert_eq!(support_of("plain"), Value::Null, "forbidden is the default");
    let forbidden = ask("tools/call", json!({ "name": "plain", "task": {} })).await;
    assert_eq!(forbidden["error"]["code"], -32601, "{forbidden}");
    let required = ask("tools/call", json!({ "name": "must" })).await;
    assert_eq!(required["error"]["code"], -32601, "{required}");
    let optional = ask(
        "tools/call",
        json!({ "name": "big", "arguments": { "size": 1 } }),
    )
    .await;
    assert_eq!(
        optional["result"]["content"][0]["text"], "x",
        "plain when not asked: {optional}"
    );
    let task = ask("tools/call", json!({ "name": "must", "task": {} })).await;
    let id = task["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = ask("tasks/list", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        json!(id),
        "{listed}"
    );
    let result = ask("tasks/result", json!({ "taskId": id })).await;
    assert_eq!(result["result"]["content"][0]["text"], "must", "{result}");
    let got = ask("tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert!(
        got["result"].get("result").is_none(),
        "2025-11-25 does not inline: {got}"
    );
    assert!(
        got["result"]["pollInterval"].is_u64() && got["result"].get("pollIntervalMs").is_none()
    );
    let update = ask(
        "tasks/update",
        json!({ "taskId": id, "inputResponses": {} }),
    )
    .await;
    assert_eq!(update["error"]["code"], -32601, "{update}");
}

/// With a token, a task is bound to its authorization context (2025-11-25 tasks, "Task
/// Isolation and Access Control": receivers MUST bind tasks to said context and reject
/// `tasks/get`, `tasks/result` and `tasks/cancel` of other contexts; `tasks/list` shows only the
/// requestor's): another subject's request finds no such task, with or without sessions.
/// Without a token or a session, `tasks/list` is not declared and is `-32601` (it listed every
/// stateless client's tasks, handing out the ids that are their only protection).
#[tokio::test]
async fn a_task_is_bound_to_its_authorization_context() {
    for stateless in [false, true] {
        let (server, gates, _events) = fixture(TaskOptions::new(), None);
        let s = support::start(server, support::server::gated_by_people(stateless)).await;
        let session_of = |token: &'static str| async move {
            let bearer = format!("Bearer {token}");
            let init = post(
                s.addr,
                &[("authorization", &bearer)],
                &support::initialize(1, "2025-11-25"),
            )
            .await;
            let caps = init.messages()[0]["result"]["capabilities"]["tasks"].clone();
            assert_eq!(
                caps["list"],
                json!({}),
                "{token}: a context to list by: {caps}"
            );
            (bearer, init.header("mcp-session-id").map(str::to_owned))
        };
        let ask = |who: &(String, Option<String>), method: &str, params: Value| {
            let mut headers = vec![("authorization".to_owned(), who.0.clone())];
            if let Some(sid) = &who.1 {
                headers.push(("mcp-session-id".to_owned(), sid.clone()));
            }
            let body = rpc(json!(7), method, params);
            async move {
                let headers: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect();
                post(s.addr, &headers, &body).await.messages()[0].clone()
            }
        };
        let alice = session_of("alice").await;
        let bob = session_of("bob").await;
        let robot = session_of("robot").await;
        let task = ask(
            &alice,
            "tools/call",
            json!({ "name": "gated", "arguments": { "label": "a" }, "task": {} }),
        )
        .await;
        let id = task["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        for other in [&bob, &robot] {
            for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
                let refused = ask(other, method, json!({ "taskId": id })).await;
                assert_eq!(
                    refused["error"]["code"], -32602,
                    "{stateless} {method}: {refused}"
                );
                assert!(
                    refused["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("unknown taskId"),
                    "{refused}"
                );
            }
            let listed = ask(other, "tasks/list", json!({})).await;
            assert_eq!(
                listed["result"]["tasks"],
                json!([]),
                "{stateless}: {listed}"
            );
        }
        // Alice's own requests see it; nothing the others sent touched it.
        let got = ask(&alice, "tasks/get", json!({ "taskId": id })).await;
        assert_eq!(got["result"]["status"], "working", "{stateless}: {got}");
        let listed = ask(&alice, "tasks/list", json!({})).await;
        assert_eq!(
            listed["result"]["tasks"][0]["taskId"],
            json!(id),
            "{listed}"
        );
        gates.open("a");
        let result = ask(&alice, "tasks/result", json!({ "taskId": id })).await;
        assert_eq!(result["result"]["content"][0]["text"], "done a", "{result}");
    }
    // No token and no session: nothing to bind to, so no tasks/list.
    let (server, _gates, _events) = fixture(TaskOptions::new(), None);
    let options = EndpointOptions {
        sessions: None,
        ..EndpointOptions::default()
    };
    let s = support::start(server, options).await;
    let init = post(s.addr, &[], &support::initialize(1, "2025-11-25")).await;
    let caps = &init.messages()[0]["result"]["capabilities"]["tasks"];
    assert!(
        caps.get("list").is_none() && caps.get("cancel").is_some(),
        "{caps}"
    );
    let body = rpc(json!(2), "tasks/list", json!({}));
    let headers = [("mcp-protocol-version", "2025-11-25")];
    let listed = post(s.addr, &headers, &body).await.messages()[0].clone();
    assert_eq!(listed["error"]["code"], -32601, "{listed}");
}

/// A tool whose result is an error (`isError: true`) ends its task `failed` on 2025-11-25
/// (Task Status: "for tool calls … the tool call result has `isError` set to true"), with the
/// error's text as `statusMessage`, while `tasks/result` still returns that result; the tasks
/// extension (SEP-2663) keeps it `completed` with the result inlined.
#[tokio::test]
async fn a_tool_error_result_fails_a_handshake_era_task_and_completes_an_extension_one() {
    let (server, _gates, _events) = fixture(TaskOptions::new(), None);
    server.tools().add(
        Tool::from_json("oops", json!({"type":"object"}), |_: Args, _| async {
            Err::<String, _>("the disk is full".to_owned())
        })
        .with_task_support(TaskSupport::Optional),
    );
    let s = support::start(server, EndpointOptions::default()).await;
    let init = post(s.addr, &[], &support::initialize(1, "2025-11-25")).await;
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    let ask = |method: &str, params: Value| {
        let (sid, body) = (sid.clone(), rpc(json!(7), method, params));
        async move {
            post(s.addr, &[("mcp-session-id", &sid)], &body)
                .await
                .messages()[0]
                .clone()
        }
    };
    let task = ask("tools/call", json!({ "name": "oops", "task": {} })).await;
    let id = task["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = ask("tasks/result", json!({ "taskId": id })).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "the disk is full");
    let got = ask("tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
    assert_eq!(got["result"]["statusMessage"], "the disk is full", "{got}");
    let listed = ask("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["status"], "failed", "{listed}");

    let id = start_task(&s, "oops", json!({})).await;
    let done = until_terminal(&s, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
}

#[tokio::test]
async fn a_handshake_era_task_asks_the_client_over_its_connection() {
    let (server, _gates, _events) = fixture(TaskOptions::new(), None);
    let mut pipe = support::server::Pipe::serve(server);
    pipe.send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "t", "version": "0" } } }),
    )
    .await;
    assert_eq!(pipe.read().await["id"], 1);
    pipe.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    pipe.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "asks", "task": {} } }))
        .await;
    // Each status change comes to the connection as notifications/tasks/status.
    let mut statuses = Vec::new();
    let (mut task_id, mut asked) = (None, None);
    while task_id.is_none() || asked.is_none() {
        let message = pipe.read().await;
        if message["method"] == "notifications/tasks/status" {
            statuses.push(message["params"].clone());
        } else if message["id"] == 2 {
            task_id = message["result"]["task"]["taskId"]
                .as_str()
                .map(str::to_owned);
            assert!(task_id.is_some(), "{message}");
        } else if message["method"] == "elicitation/create" {
            asked = Some(message["id"].clone());
        } else {
            panic!("unexpected {message}");
        }
    }
    let (task_id, asked) = (task_id.unwrap(), asked.unwrap());
    pipe.send(json!({ "jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": { "taskId": task_id } }))
        .await;
    let got = read_answer(&mut pipe, &mut statuses).await;
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    pipe.send(json!({ "jsonrpc": "2.0", "id": asked,
        "result": { "action": "accept", "content": { "name": "Lin" } } }))
        .await;
    pipe.send(json!({ "jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": { "taskId": task_id } }))
        .await;
    let result = read_answer(&mut pipe, &mut statuses).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, \"Lin\"!",
        "{result}"
    );
    // The completion's notification may follow the result: read until it has come.
    while statuses.last().is_none_or(|s| s["status"] != "completed") {
        let message = pipe.read().await;
        assert_eq!(message["method"], "notifications/tasks/status", "{message}");
        statuses.push(message["params"].clone());
    }
    let seen: Vec<&Value> = statuses.iter().map(|s| &s["status"]).collect();
    assert_eq!(
        seen,
        ["input_required", "working", "completed"],
        "{statuses:?}"
    );
    for status in &statuses {
        assert_eq!(status["taskId"], task_id.as_str(), "{status}");
        assert!(status["createdAt"].is_string() && status["lastUpdatedAt"].is_string());
        assert!(status.get("ttl").is_some(), "2025-11-25 names: {status}");
    }
}

#[tokio::test]
async fn a_handshake_era_task_over_http_asks_on_the_sessions_get_stream() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "t", "version": "0" } } });
    let init = post(s.addr, &[], &init.to_string()).await;
    let sid = init.header("mcp-session-id").unwrap().to_owned();
    let session = [("mcp-session-id", sid.as_str())];
    let done = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(post(s.addr, &session, &done.to_string()).await.status, 202);
    let get = support::http::open(
        s.addr,
        "GET",
        &[("accept", "text/event-stream"), ("mcp-session-id", &sid)],
        "",
    )
    .await;
    assert_eq!(get.status(), 200);
    let mut stream = support::http::SseStream::new(get);
    // The handle comes back on the POST, which then ends; the task asks on the GET stream.
    let call = rpc(
        json!(2),
        "tools/call",
        json!({ "name": "asks", "task": {} }),
    );
    let created = post(s.addr, &session, &call).await.messages()[0].clone();
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let asked = tokio::time::timeout(DEADLINE, async {
        loop {
            let event = stream.next().await.expect("the GET stream stays open");
            if event.data.is_empty() {
                continue; // the priming event (an id to resume from)
            }
            let message = event.json();
            if message["method"] == "elicitation/create" {
                break message;
            }
            assert_eq!(message["method"], "notifications/tasks/status", "{message}");
        }
    })
    .await
    .expect("the task's elicitation/create comes on the GET stream");
    let answer = json!({ "jsonrpc": "2.0", "id": asked["id"],
        "result": { "action": "accept", "content": { "name": "Lin" } } });
    assert_eq!(
        post(s.addr, &session, &answer.to_string()).await.status,
        202
    );
    let result = rpc(json!(3), "tasks/result", json!({ "taskId": task_id }));
    let result = post(s.addr, &session, &result).await.messages()[0].clone();
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, \"Lin\"!",
        "{result}"
    );
}

/// The next message that is not a `notifications/tasks/status` (those are kept in `statuses`).
async fn read_answer(pipe: &mut support::server::Pipe, statuses: &mut Vec<Value>) -> Value {
    loop {
        let message = pipe.read().await;
        if message["method"] == "notifications/tasks/status" {
            statuses.push(message["params"].clone());
        } else {
            return message;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The client half: McpClient and `orkestrel-mcp call --task`
// ---------------------------------------------------------------------------------------------

struct Names;

impl orkestrel_mcp::client::ClientHandler for Names {
    fn capabilities(&self) -> Value {
        json!({ "elicitation": {} })
    }
    fn elicit(
        &self,
        _params: Value,
    ) -> orkestrel_mcp::BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({ "action": "accept", "content": { "name": "Kay" } })) })
    }
}

fn task_client(s: &TestServer, era: orkestrel_mcp::client::ClientEra) -> orkestrel_mcp::McpClient {
    support::client::http_client_to(
        &s.url(),
        support::client::era_options(era).with_handler(Names),
    )
}

#[tokio::test]
async fn the_client_calls_a_task_answers_its_input_and_gets_the_result() {
    use orkestrel_mcp::client::{ClientEra, ToolCall};
    let (s, _gates, _events) = start_fixture(TaskOptions::new().with_poll_interval(5), None).await;
    let client = task_client(&s, ClientEra::Modern);
    client.connect().await.unwrap();
    let ToolCall::Task(task) = client
        .call_tool_as_task("asks", json!({}), None)
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    assert_eq!(task.poll_interval_ms, Some(5));
    let seen = Mutex::new(Vec::new());
    let result = client
        .wait_task(&task, &|t| seen.lock().unwrap().push(t.status.as_str()))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Hello, \"Kay\"!"));
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.last(), Some(&"completed"), "{seen:?}");
    // A plain call of the same tool stays plain (the client declared no tasks for it).
    let plain = client.call_tool("big", json!({ "size": 3 })).await.unwrap();
    assert_eq!(plain.content[0].as_text(), Some("xxx"));
    client.disconnect().await;
}

#[tokio::test]
async fn the_handshake_era_client_waits_for_tasks_result_and_cancels() {
    use orkestrel_mcp::client::{ClientEra, ToolCall};
    use orkestrel_mcp::server::tasks::TaskStatus;
    let (s, gates, mut events) =
        start_fixture(TaskOptions::new().with_poll_interval(5), None).await;
    let client = task_client(&s, ClientEra::Legacy);
    client.connect().await.unwrap();
    let ToolCall::Task(task) = client
        .call_tool_as_task("gated", json!({ "label": "l" }), Some(30_000))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    assert_eq!(
        (task.status, task.ttl_ms),
        (TaskStatus::Working, Some(30_000))
    );
    wait_event(&mut events, "started:l").await;
    gates.open("l");
    let result = client.wait_task(&task, &|_| {}).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("done l"));
    let ToolCall::Task(other) = client
        .call_tool_as_task("gated", json!({ "label": "m" }), None)
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    client.cancel_task(&other.task_id).await.unwrap();
    assert_eq!(
        client.get_task(&other.task_id).await.unwrap().status,
        TaskStatus::Cancelled
    );
    let err = client.wait_task(&other, &|_| {}).await.unwrap_err();
    assert!(err.to_string().contains("cancelled"), "{err}");
    let plain = client
        .call_tool_as_task("plain", json!({}), None)
        .await
        .unwrap_err();
    assert!(
        plain.to_string().contains("does not run as a task"),
        "{plain}"
    );
    client.disconnect().await;
}

#[tokio::test]
async fn the_cli_calls_a_tool_as_a_task_and_prints_its_statuses() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new().with_poll_interval(5), None).await;
    for era in ["legacy", "modern"] {
        let out = tokio::time::timeout(
            DEADLINE,
            tokio::process::Command::new(support::client::BIN)
                .args([
                    "call",
                    &s.url(),
                    "big",
                    "--task",
                    "--args",
                    r#"{"size":2}"#,
                    "--era",
                    era,
                ])
                .output(),
        )
        .await
        .expect("the CLI ends within the deadline")
        .expect("the CLI runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{era}: {stderr}");
        assert_eq!(stdout.trim(), "\"xx\"", "{era}: {stderr}");
        assert!(stderr.contains(": working"), "{era}: {stderr}");
        assert!(stderr.contains(": completed"), "{era}: {stderr}");
    }
}

/// `params.task.ttl` (2025-11-25): a number at or above 0 is taken (a fraction rounded down,
/// one past the maximum granted as the maximum); a negative one or another type is `-32602`
/// (`-1` got the default hour, silently).
#[tokio::test]
async fn a_requested_ttl_is_read_as_milliseconds_and_a_bad_one_refused() {
    let (s, _gates, _events) = start_fixture(TaskOptions::new(), None).await;
    let sid = support::new_session(s.addr, "2025-11-25").await;
    let ask = |n: u64, ttl: Value| {
        let call = rpc(
            json!(n),
            "tools/call",
            json!({ "name": "gated", "arguments": { "label": "t" }, "task": { "ttl": ttl } }),
        );
        let sid = sid.clone();
        async move {
            post(s.addr, &[("mcp-session-id", &sid)], &call)
                .await
                .messages()[0]
                .clone()
        }
    };
    for (n, ttl) in [
        (1, json!(-1)),
        (2, json!("60000")),
        (3, json!(-0.5)),
        (4, json!({})),
    ] {
        let refused = ask(n, ttl.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{ttl}: {refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("task.ttl"),
            "{refused}"
        );
    }
    let fraction = ask(5, json!(1500.9)).await;
    assert_eq!(fraction["result"]["task"]["ttl"], 1500, "{fraction}");
    let huge = ask(6, json!(1e300)).await;
    assert_eq!(huge["result"]["task"]["ttl"], 86_400_000, "{huge}");
    let null = ask(7, Value::Null).await;
    assert_eq!(null["result"]["task"]["ttl"], 3_600_000, "{null}");
}
