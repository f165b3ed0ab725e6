//! Two servers sharing one task store that carries signals (as a shared store between
//! instances does): a task created on A is cancelled, answered and waited for on B.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::oneshot;
use serde_json::{json, Map, Value};

use super::*;
use crate::era::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::wire::jsonrpc::JsonRpcMessage;
use crate::{ServerOptions, Tool};

/// One instance's handle on a memory store shared by several, whose signals reach every
/// instance's listener (the sender's too, as on a pub/sub channel), and a test's tap.
struct Shared {
    memory: Arc<MemoryTaskStore>,
    listeners: Arc<Mutex<Vec<TaskListener>>>,
    tap: Sender<(String, TaskSignal)>,
}

impl TaskStore for Shared {
    fn create(&self, task: Task, now_ms: u64) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        self.memory.create(task, now_ms)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<Task>, TaskStoreError>> {
        self.memory.get(id, now_ms)
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
        change: &'a mut dyn TaskChange,
    ) -> BoxFuture<'a, Result<Task, TaskStoreError>> {
        self.memory.update(id, now_ms, change)
    }
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Vec<Task>, TaskStoreError>> {
        self.memory.list(owner, now_ms)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        self.memory.remove(id)
    }
    fn signal<'a>(&'a self, id: &'a str, signal: &'a TaskSignal) -> BoxFuture<'a, ()> {
        let listeners = lock(&self.listeners).clone();
        for listener in listeners {
            listener(id, signal.clone());
        }
        let _ = self.tap.send((id.to_owned(), signal.clone()));
        Box::pin(futures::future::ready(()))
    }
    fn subscribe(&self, listener: TaskListener) -> bool {
        lock(&self.listeners).push(listener);
        true
    }
}

/// What `gated` reports: `started`, then `dropped` when its future is dropped.
struct Dropped(Sender<&'static str>);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

struct Pair {
    a: McpServer,
    b: McpServer,
    /// Opens `gated` on A.
    gate: Mutex<Option<oneshot::Sender<()>>>,
    events: Receiver<&'static str>,
    signals: Receiver<(String, TaskSignal)>,
    listeners: Arc<Mutex<Vec<TaskListener>>>,
}

fn pair() -> Pair {
    let memory = Arc::new(MemoryTaskStore::default());
    let listeners = Arc::new(Mutex::new(Vec::new()));
    let (tap, signals) = channel();
    let (events, events_rx) = channel();
    let (gate, gate_rx) = oneshot::channel::<()>();
    let gate_rx = Arc::new(Mutex::new(Some(gate_rx)));
    let instance = |gate_rx: Arc<Mutex<Option<oneshot::Receiver<()>>>>| {
        let store = Shared {
            memory: memory.clone(),
            listeners: listeners.clone(),
            tap: tap.clone(),
        };
        let options = TaskOptions::new().with_store(Arc::new(store));
        let server = McpServer::new(ServerOptions::new("pair", "1").with_tasks(options));
        let events = events.clone();
        server.tools().add(
            Tool::from_json(
                "gated",
                json!({"type": "object"}),
                move |_: Map<_, _>, _| {
                    let (events, gate) = (events.clone(), lock(&gate_rx).take());
                    async move {
                        let _ = events.send("started");
                        let _dropped = Dropped(events);
                        if let Some(gate) = gate {
                            let _ = gate.await;
                        }
                        Ok::<_, String>("opened")
                    }
                },
            )
            .with_task_support(TaskSupport::Optional),
        );
        server.tools().add(
            Tool::from_json(
                "asks",
                json!({"type": "object"}),
                |_: Map<_, _>, ctx: RequestContext| async move {
                    let schema =
                        json!({"type": "object", "properties": {"name": {"type": "string"}}});
                    let answer = ctx
                        .elicit(json!({"message": "Name?", "requestedSchema": schema}))
                        .await
                        .map_err(|e| e.message)?;
                    Ok::<_, String>(answer["content"]["name"].as_str().unwrap_or("?").to_owned())
                },
            )
            .with_task_support(TaskSupport::Optional),
        );
        server
    };
    Pair {
        a: instance(gate_rx.clone()),
        b: instance(Arc::new(Mutex::new(None))),
        gate: Mutex::new(Some(gate)),
        events: events_rx,
        signals,
        listeners,
    }
}

const WAIT: Duration = Duration::from_secs(10);

fn modern_meta() -> Value {
    json!({
        META_PROTOCOL_VERSION: "2026-07-28",
        META_CLIENT_CAPABILITIES: {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}},
        META_CLIENT_INFO: {"name": "t", "version": "0"},
    })
}

/// A request's `result` (panics on an error answer).
fn ask(server: &McpServer, method: &str, mut params: Value, modern: bool) -> Value {
    if modern {
        params["_meta"] = modern_meta();
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let message = JsonRpcMessage::from_value(request).expect("a request");
    let response = futures::executor::block_on(server.dispatch(message)).expect("a response");
    let response = serde_json::to_value(&response).expect("serializes");
    assert!(response.get("error").is_none(), "{method}: {response}");
    response["result"].clone()
}

impl Pair {
    /// Wait for the signal that task `id` reached `status`.
    fn until_signal(&self, id: &str, status: TaskStatus) {
        loop {
            let (of, signal) = self.signals.recv_timeout(WAIT).expect("a signal in time");
            if of == id && signal == TaskSignal::Status(status) {
                return;
            }
        }
    }
}

#[test]
fn a_task_cancelled_on_b_stops_its_tool_on_a() {
    let pair = pair();
    let created = ask(&pair.a, "tools/call", json!({"name": "gated"}), true);
    let id = created["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(pair.events.recv_timeout(WAIT), Ok("started"));
    let got = ask(&pair.b, "tasks/get", json!({"taskId": id}), true);
    assert_eq!(got["status"], "working", "{got}");
    let ack = ask(&pair.b, "tasks/cancel", json!({"taskId": id}), true);
    assert_eq!(ack["resultType"], "complete", "{ack}");
    // A heard it through the store: its tool's future is dropped.
    assert_eq!(pair.events.recv_timeout(WAIT), Ok("dropped"));
    let got = ask(&pair.a, "tasks/get", json!({"taskId": id}), true);
    assert_eq!(got["status"], "cancelled", "{got}");
    // Opening the gate now changes nothing: the tool is gone, the status stays.
    drop(lock(&pair.gate).take());
    assert_eq!(
        ask(&pair.b, "tasks/get", json!({"taskId": id}), true)["status"],
        "cancelled"
    );
}

#[test]
fn answers_posted_to_b_reach_the_tool_waiting_on_a() {
    let pair = pair();
    let created = ask(&pair.a, "tools/call", json!({"name": "asks"}), true);
    let id = created["taskId"].as_str().expect("a task").to_owned();
    pair.until_signal(&id, TaskStatus::InputRequired);
    let got = ask(&pair.b, "tasks/get", json!({"taskId": id}), true);
    assert_eq!(got["status"], "input_required", "{got}");
    let requests = got["inputRequests"].as_object().expect("input requests");
    let key = requests.keys().next().expect("one request").clone();
    assert_eq!(requests[&key]["method"], "elicitation/create");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let update = json!({"taskId": id, "inputResponses": {key: answer}});
    let ack = ask(&pair.b, "tasks/update", update, true);
    assert_eq!(ack["resultType"], "complete", "{ack}");
    pair.until_signal(&id, TaskStatus::Completed);
    let got = ask(&pair.b, "tasks/get", json!({"taskId": id}), true);
    assert_eq!(got["result"]["content"][0]["text"], "Ada", "{got}");
}

#[test]
fn tasks_result_on_b_waits_for_the_end_of_a_task_running_on_a() {
    let pair = pair();
    let created = ask(
        &pair.a,
        "tools/call",
        json!({"name": "gated", "task": {}}),
        false,
    );
    let id = created["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let b = pair.b.clone();
    let waiting = {
        let id = id.clone();
        std::thread::spawn(move || ask(&b, "tasks/result", json!({"taskId": id}), false))
    };
    // Not before the end: the gate is still shut.
    assert_eq!(
        ask(&pair.b, "tasks/get", json!({"taskId": id}), false)["status"],
        "working"
    );
    let _ = lock(&pair.gate).take().expect("the gate").send(());
    let result = waiting.join().expect("tasks/result answers");
    assert_eq!(result["content"][0]["text"], "opened", "{result}");
    assert_eq!(result["_meta"][RELATED_TASK_META]["taskId"], id.as_str());
}

/// A message to `conn`, answered (the call driven to its end).
fn over(conn: &mut crate::server::connection::Connection, message: Value) -> Option<Value> {
    use crate::server::connection::Received;
    match conn.receive(message.to_string().as_bytes()) {
        Received::Dispatch(call) => futures::executor::block_on(call)
            .map(|r| serde_json::from_str(&r.to_json()).expect("JSON")),
        Received::Answer(r) => Some(serde_json::from_str(&r.to_json()).expect("JSON")),
        Received::Nothing => None,
        other => panic!("a single message: {other:?}"),
    }
}

#[test]
fn a_connections_tasks_in_a_shared_store_are_kept_under_its_scope_qualified_by_the_instance() {
    use crate::server::connection::{Connection, ConnectionOptions};
    let pair = pair();
    let pushed: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = pushed.clone();
    let outbound: crate::host::Outbound = Arc::new(move |m: JsonRpcMessage| {
        lock(&sink).push(serde_json::from_str(&m.to_json()).expect("JSON"));
        true
    });
    let mut conn = Connection::new(pair.a.clone(), "ws", outbound, ConnectionOptions::default());
    let scope = conn.scope().to_string();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    assert!(over(&mut conn, init).is_some());
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert!(over(&mut conn, done).is_none());
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "gated", "task": {}}});
    let created = over(&mut conn, call).expect("an answer");
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    // In the shared store, under the connection's scope and this instance's tag: another
    // instance's connection of the same name does not see it.
    let record = ask(&pair.a, "tasks/get", json!({"taskId": id}), false);
    assert_eq!(record["status"], "working");
    let tasks = pair.a.inner.tasks.as_ref().expect("tasks on").tasks();
    let kept = futures::executor::block_on(tasks.store().get(&id, tasks.now()))
        .expect("readable")
        .expect("kept");
    let owner = kept.owner.expect("an owner");
    assert_eq!(owner, format!("{scope}@{}", tasks.tag), "{owner}");
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/list"});
    let listed = over(&mut conn, list).expect("an answer");
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        id.as_str(),
        "{listed}"
    );
    // The status notification of its end reaches the connection.
    let _ = lock(&pair.gate).take().expect("the gate").send(());
    pair.until_signal(&id, TaskStatus::Completed);
    let statuses: Vec<Value> = (lock(&pushed).iter())
        .filter(|m| m["method"] == "notifications/tasks/status")
        .cloned()
        .collect();
    assert_eq!(statuses.len(), 1, "{statuses:?}");
    assert_eq!(statuses[0]["params"]["status"], "completed");
}

#[test]
fn after_lost_signals_a_resync_stops_a_tool_whose_task_was_cancelled_elsewhere() {
    let pair = pair();
    let created = ask(&pair.a, "tools/call", json!({"name": "gated"}), true);
    let id = created["taskId"].as_str().expect("a task").to_owned();
    assert_eq!(pair.events.recv_timeout(WAIT), Ok("started"));
    // Cancelled by another instance whose signal A never heard.
    let tasks = pair.b.inner.tasks.as_ref().expect("tasks on").tasks();
    let now = tasks.now();
    let mut cancel = |t: &mut Task| t.status = TaskStatus::Cancelled;
    futures::executor::block_on(tasks.store().update(&id, now, &mut cancel)).expect("updated");
    assert!(pair.events.try_recv().is_err(), "A's tool still runs");
    // The store's link is back: it tells its listeners to read again.
    let listeners = lock(&pair.listeners).clone();
    for listener in listeners {
        listener("", TaskSignal::Resync);
    }
    assert_eq!(pair.events.recv_timeout(WAIT), Ok("dropped"));
}

/// A task's end that the store could not take is written again 100 ms later, then doubling, at
/// most 5 s apart (`SETTLE_ATTEMPTS` writes: about 10 minutes).
#[test]
fn a_failed_end_write_is_retried_100_ms_later_doubling_to_5_s() {
    use std::time::Duration;
    let ms = |attempt| super::settle_pause(attempt);
    assert_eq!(ms(1), Duration::from_millis(100));
    assert_eq!(ms(2), Duration::from_millis(200));
    assert_eq!(ms(6), Duration::from_millis(3_200));
    assert_eq!(ms(7), Duration::from_millis(5_000));
    assert_eq!(ms(u32::MAX), Duration::from_millis(5_000));
    let total: Duration = (1..super::SETTLE_ATTEMPTS).map(ms).sum();
    assert!(
        total > Duration::from_secs(540) && total < Duration::from_secs(660),
        "{total:?}"
    );
}
