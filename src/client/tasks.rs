//! Calling a tool as a task, in both eras: 2025-11-25
//! [`basic/utilities/tasks`](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks)
//! (the client asks with `params.task`) and the 2026-07-28 extension `io.modelcontextprotocol/tasks`
//! (SEP-2663: the client declares the extension; the server decides).
//!
//! ```text
//!  call_tool_as_task ─► ToolCall::Task(TaskInfo) ─► wait_task: tasks/get every pollInterval
//!        │                                            ├ input_required (2026-07-28) ─► handler ─► tasks/update
//!        └► ToolCall::Result (the server ran it plain) └ completed ─► the ToolResult (2025-11-25: tasks/result)
//!  cancel_task ─► tasks/cancel
//! ```

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::client::mrtr::answer_requests;
use crate::client::{ClientError, McpClient, RequestOptions};
use crate::era::Era;
use crate::protocol::ToolResult;
use crate::server::tasks::TaskStatus;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// The polling interval used when the server suggests none: 1 s.
pub const DEFAULT_TASK_POLL_MS: u64 = 1_000;

/// The shortest wait between two polls of a task, whatever its `pollInterval` asks: 50 ms (a
/// server that asked for 1 ms had the client send ~600 `tasks/get` a second).
pub const MIN_TASK_POLL_MS: u64 = 50;

/// What the client knows of a task, in either era's names (`ttl` / `ttlMs`, `pollInterval` /
/// `pollIntervalMs`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInfo {
    /// The server's task id.
    pub task_id: String,
    /// The status.
    pub status: TaskStatus,
    /// The server's note on the status.
    pub status_message: Option<String>,
    /// The TTL from creation (ms); `None`: unlimited.
    pub ttl_ms: Option<u64>,
    /// The polling interval the server suggests (ms).
    pub poll_interval_ms: Option<u64>,
    /// The tool's result, inlined by a 2026-07-28 `tasks/get` once `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error, inlined by a 2026-07-28 `tasks/get` once `failed`.
    pub error: Option<ErrorObject>,
    /// Outstanding input requests (2026-07-28, `input_required`).
    pub input_requests: Map<String, Value>,
}

impl TaskInfo {
    /// Read a task from its wire shape (a `Task`, a `CreateTaskResult` or a `tasks/get` result).
    ///
    /// # Errors
    /// [`ClientError::InvalidResponse`] without a string `taskId` or a known `status`.
    pub fn from_value(value: &Value) -> Result<TaskInfo, ClientError> {
        let bad = |why: &str| {
            ClientError::InvalidResponse(format!(
                "not a task ({why}): {}",
                crate::wire::json_text::JsonText(value)
            ))
        };
        let task_id = value["taskId"].as_str().ok_or_else(|| bad("taskId"))?;
        let status = serde_json::from_value(value["status"].clone()).map_err(|_| bad("status"))?;
        let number = |a: &str, b: &str| {
            value
                .get(a)
                .or_else(|| value.get(b))
                .and_then(Value::as_u64)
        };
        Ok(TaskInfo {
            task_id: task_id.to_owned(),
            status,
            status_message: value["statusMessage"].as_str().map(str::to_owned),
            ttl_ms: number("ttlMs", "ttl"),
            poll_interval_ms: number("pollIntervalMs", "pollInterval"),
            result: value.get("result").cloned(),
            error: value
                .get("error")
                .and_then(|e| serde_json::from_value(e.clone()).ok()),
            input_requests: value["inputRequests"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
        })
    }
}

/// A `tools/call` made as a task: the task, or the result when the server ran the tool plain.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolCall {
    /// The tool ran as a plain call.
    Result(ToolResult),
    /// The tool runs as this task.
    Task(TaskInfo),
}

fn tool_result(value: Value) -> Result<ToolResult, ClientError> {
    serde_json::from_value(value)
        .map_err(|e| ClientError::InvalidResponse(format!("tools/call result: {e}")))
}

fn task_options() -> RequestOptions {
    RequestOptions {
        declare_tasks: true,
        ..RequestOptions::default()
    }
}

impl McpClient {
    /// Call a tool as a task: on 2025-11-25 with `params.task` (`{ ttl }` when `ttl_ms` is
    /// given), on 2026-07-28 declaring the extension (the server decides; `ttl_ms` is unused).
    ///
    /// # Errors
    /// As [`McpClient::call_tool`].
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        ttl_ms: Option<u64>,
    ) -> Result<ToolCall, ClientError> {
        let arguments = match arguments {
            Value::Null => json!({}),
            args @ Value::Object(_) => args,
            other => {
                return Err(ClientError::InvalidArguments(format!(
                    "tool arguments must be a JSON object, not {}",
                    crate::wire::json_text::JsonText(&other)
                )))
            }
        };
        let mut params = json!({ "name": name, "arguments": arguments });
        if self.era() != Some(Era::Modern) {
            params["task"] = match ttl_ms {
                Some(ttl) => json!({ "ttl": ttl }),
                None => json!({}),
            };
        }
        let value = self
            .request("tools/call", Some(params), task_options())
            .await?;
        if value["resultType"] == "task" {
            return TaskInfo::from_value(&value).map(ToolCall::Task);
        }
        if let Some(task) = value.get("task").filter(|t| t.is_object()) {
            return TaskInfo::from_value(task).map(ToolCall::Task);
        }
        tool_result(value).map(ToolCall::Result)
    }

    /// `tasks/get`: the task's current state.
    ///
    /// # Errors
    /// As [`McpClient::request`] (`-32602` for an unknown task id).
    pub async fn get_task(&self, task_id: &str) -> Result<TaskInfo, ClientError> {
        let value = self
            .request(
                "tasks/get",
                Some(json!({ "taskId": task_id })),
                task_options(),
            )
            .await?;
        TaskInfo::from_value(&value)
    }

    /// `tasks/cancel`: ask the server to cancel the task (2026-07-28 acknowledges even a
    /// finished task; 2025-11-25 refuses one with `-32602`).
    ///
    /// # Errors
    /// As [`McpClient::request`].
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ClientError> {
        self.request(
            "tasks/cancel",
            Some(json!({ "taskId": task_id })),
            task_options(),
        )
        .await
        .map(|_| ())
    }

    /// Poll a task until it ends, every `pollInterval` the server suggests (else
    /// [`DEFAULT_TASK_POLL_MS`]; at least [`MIN_TASK_POLL_MS`]), on the client's timer ([`ClientOptions::sleep`](crate::ClientOptions::sleep)),
    /// calling `on_status` with each state seen; answer 2026-07-28 input requests through the
    /// client's handler with `tasks/update`; on 2025-11-25 `input_required` call `tasks/result`
    /// at once, whose stream carries the server's requests (answered by the handler) and then
    /// the result. The tool's result (2025-11-25: from `tasks/result`).
    ///
    /// # Errors
    /// [`ClientError::Rpc`] with the task's JSON-RPC error when it failed, or a `-32000` error
    /// when it was cancelled or is still not done once the waits between polls add up past its
    /// `ttl`; [`ClientError::InvalidArguments`] when the client has no timer;
    /// as [`McpClient::request`] for each poll.
    pub async fn wait_task(
        &self,
        task: &TaskInfo,
        on_status: &(dyn Fn(&TaskInfo) + Send + Sync),
    ) -> Result<ToolResult, ClientError> {
        let sleep = self.inner.options.sleep.clone().ok_or_else(|| {
            ClientError::InvalidArguments(
                "polling a task needs a timer (ClientOptions::sleep)".into(),
            )
        })?;
        let modern = self.era() == Some(Era::Modern);
        let mut answered: Vec<String> = Vec::new();
        let mut info = task.clone();
        // The time spent waiting between polls: past the task's `ttl` (counted from its
        // creation, before the first poll) the server may have deleted it, and a task it still
        // calls working then is one to stop waiting for.
        let mut waited_ms: u64 = 0;
        // The ttl the task was created with (the first one seen): a server raising it at every
        // poll does not push the end out for ever.
        let mut ttl_ms = task.ttl_ms;
        loop {
            match info.status {
                TaskStatus::Completed if modern => {
                    return tool_result(info.result.unwrap_or_else(|| json!({})))
                }
                TaskStatus::Failed if modern => {
                    return Err(ClientError::Rpc(info.error.unwrap_or_else(|| {
                        ErrorObject::internal(format!("task {} failed", info.task_id))
                    })))
                }
                TaskStatus::Completed | TaskStatus::Failed => {
                    let value = self
                        .request(
                            "tasks/result",
                            Some(json!({ "taskId": info.task_id })),
                            task_options(),
                        )
                        .await?;
                    return tool_result(value);
                }
                TaskStatus::Cancelled => {
                    return Err(ClientError::Rpc(ErrorObject::new(
                        ErrorCode::SERVER_ERROR,
                        format!("task {} was cancelled", info.task_id),
                    )))
                }
                TaskStatus::InputRequired if modern => {
                    let open: Map<String, Value> = info
                        .input_requests
                        .iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !open.is_empty() {
                        answered.extend(open.keys().cloned());
                        let handler = self.inner.options.handler.clone();
                        let responses = answer_requests(handler, open).await?;
                        self.request(
                            "tasks/update",
                            Some(json!({ "taskId": info.task_id, "inputResponses": responses })),
                            task_options(),
                        )
                        .await?;
                        info = self.get_task(&info.task_id).await?;
                        on_status(&info);
                        continue;
                    }
                }
                TaskStatus::InputRequired => {
                    // 2025-11-25: the server delivers the input it needs on the `tasks/result`
                    // stream, which the requestor SHOULD call on seeing `input_required`
                    // (spec tasks, Input Required Status); polling alone waited forever. It
                    // blocks until the task ends; cut by the request deadline, polling goes on.
                    match self
                        .request(
                            "tasks/result",
                            Some(json!({ "taskId": info.task_id })),
                            task_options(),
                        )
                        .await
                    {
                        Ok(value) => return tool_result(value),
                        Err(e) if e.is_timeout() => {}
                        Err(e) => return Err(e),
                    }
                }
                TaskStatus::Working => {}
            }
            ttl_ms = ttl_ms.or(info.ttl_ms);
            if let Some(ttl) = ttl_ms.filter(|&ttl| waited_ms > ttl) {
                return Err(ClientError::Rpc(ErrorObject::new(
                    ErrorCode::SERVER_ERROR,
                    format!(
                        "task {} is still {} after its ttl of {ttl} ms; stopped waiting for it",
                        info.task_id,
                        info.status.as_str()
                    ),
                )));
            }
            let wait = info
                .poll_interval_ms
                .unwrap_or(DEFAULT_TASK_POLL_MS)
                .clamp(MIN_TASK_POLL_MS, 60_000);
            sleep(Duration::from_millis(wait)).await;
            waited_ms = waited_ms.saturating_add(wait);
            info = self.get_task(&info.task_id).await?;
            on_status(&info);
        }
    }
}
