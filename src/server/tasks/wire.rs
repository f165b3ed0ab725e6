//! The wire shapes of tasks in each era: the `Task` fields (`ttl` / `pollInterval` on
//! 2025-11-25, `ttlMs` / `pollIntervalMs` on 2026-07-28), `CreateTaskResult`, the `tasks/get`
//! result, and the extension's negotiation checks.

use serde_json::{json, Map, Value};

use super::store::{iso8601, Task, TaskStatus};
use crate::era::Era;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// The 2026-07-28 extension identifier (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The 2025-11-25 `_meta` key tying a message to its task.
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// A task's common fields in `era`'s names.
pub(super) fn task_fields(task: &Task, era: Era) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("taskId".into(), json!(task.task_id));
    // 2025-11-25 (`basic/utilities/tasks`, Task Status): a tool call whose result has
    // `isError: true` is `failed`, with a `statusMessage` saying why (Task Execution Errors);
    // `tasks/result` still returns that result. The tasks extension (SEP-2663) keeps it
    // `completed` with the result inlined, `failed` being for JSON-RPC errors only.
    let error_result = (era == Era::Legacy && task.status == TaskStatus::Completed)
        .then_some(task.result.as_ref())
        .flatten()
        .filter(|r| r.get("isError") == Some(&Value::Bool(true)));
    let status = match error_result {
        Some(_) => TaskStatus::Failed.as_str(),
        None => task.status.as_str(),
    };
    out.insert("status".into(), json!(status));
    let message = task
        .status_message
        .clone()
        .or_else(|| error_result.map(error_result_message));
    if let Some(message) = message {
        out.insert("statusMessage".into(), json!(message));
    }
    out.insert("createdAt".into(), json!(iso8601(task.created_at)));
    out.insert("lastUpdatedAt".into(), json!(iso8601(task.last_updated_at)));
    let (ttl, poll) = match era {
        Era::Modern => ("ttlMs", "pollIntervalMs"),
        Era::Legacy => ("ttl", "pollInterval"),
    };
    out.insert(ttl.into(), json!(task.ttl_ms));
    if let Some(interval) = task.poll_interval_ms {
        out.insert(poll.into(), json!(interval));
    }
    out
}

/// The `statusMessage` of a task whose tool result is an error: its first text, cut at 256
/// characters, or a note that the tool returned an error.
fn error_result_message(result: &Value) -> String {
    const MAX_CHARS: usize = 256;
    let text = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|block| {
            (block["type"] == "text")
                .then(|| block["text"].as_str())
                .flatten()
        });
    match text {
        Some(text) if text.chars().count() > MAX_CHARS => {
            format!("{}…", text.chars().take(MAX_CHARS).collect::<String>())
        }
        Some(text) if !text.is_empty() => text.to_owned(),
        _ => "the tool returned an error result (isError: true)".to_owned(),
    }
}

/// The `CreateTaskResult` of `era`: flat with `resultType: "task"` (2026-07-28), or `{ task }`.
pub(super) fn created(task: &Task, era: Era) -> Value {
    let mut fields = task_fields(task, era);
    match era {
        Era::Modern => {
            fields.insert("resultType".into(), json!("task"));
            Value::Object(fields)
        }
        Era::Legacy => json!({ "task": fields }),
    }
}

/// The `tasks/get` result: the task, and on 2026-07-28 its result, error or input requests.
pub(super) fn detailed(task: &Task, era: Era) -> Value {
    let mut fields = task_fields(task, era);
    if era == Era::Modern {
        match task.status {
            TaskStatus::Completed => {
                fields.insert("result".into(), task.result.clone().unwrap_or(json!({})));
            }
            TaskStatus::Failed => {
                let error = task
                    .error
                    .clone()
                    .unwrap_or_else(|| ErrorObject::internal("the task failed"));
                fields.insert("error".into(), json!(error));
            }
            TaskStatus::InputRequired => {
                fields.insert(
                    "inputRequests".into(),
                    Value::Object(task.input_requests.clone()),
                );
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
    }
    Value::Object(fields)
}

pub(super) fn task_id_param(params: Option<&Map<String, Value>>) -> Result<String, ErrorObject> {
    match params.and_then(|p| p.get("taskId")) {
        Some(Value::String(id)) => Ok(id.clone()),
        Some(_) => Err(ErrorObject::invalid_params(r#""taskId" must be a string"#)),
        None => Err(ErrorObject::invalid_params(r#"missing "taskId""#)),
    }
}

/// Whether a 2026-07-28 request's client capabilities declare the tasks extension.
pub(super) fn declares_extension(ctx: &RequestContext) -> bool {
    ctx.client_capabilities
        .as_ref()
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some()
}

/// `-32021` naming the tasks extension (SEP-2575 Missing Required Client Capability).
pub(super) fn missing_extension(what: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("{what} needs the client extension {TASKS_EXTENSION}, which the request did not declare"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }))
}
