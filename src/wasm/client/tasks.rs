//! The JS client's task API: `callToolAsTask`, `getTask`, `cancelTask`, `waitTask` over the core
//! [`McpClient::call_tool_as_task`], [`McpClient::get_task`], [`McpClient::cancel_task`] and
//! [`McpClient::wait_task`] (both eras: 2025-11-25
//! [tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks) and the
//! 2026-07-28 extension `io.modelcontextprotocol/tasks`). The protocol lives in the core; this
//! file only turns JS values into its inputs and its outputs into JS values.
//!
//! ```text
//!  callToolAsTask(name, args, { ttl }) ─► { type: 'task', task } | { type: 'result', result }
//!  getTask(id) ─► MCPTask      cancelTask(id) ─► void
//!  waitTask(id, { onStatus }) ─► the tool's MCPToolResult (polls at the server's interval)
//! ```

use std::time::Duration;

use futures::channel::mpsc;
use futures::future::Either;
use futures::StreamExt;
use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{arguments, bad, client_error_to_js, member, timeout_member, Client};
use crate::client::{ClientError, TaskInfo, ToolCall};
use crate::wasm::convert::to_js;
use crate::wasm::error_to_js;
use crate::wire::jsonrpc::ErrorObject;

/// A task as JS sees it (`MCPTask`), in the 2026-07-28 names in both eras: `taskId`, `status`,
/// `statusMessage?`, `ttlMs?`, `pollIntervalMs?`, and what a 2026-07-28 `tasks/get` inlines:
/// `result?`, `error?`, `inputRequests?` (only when some are pending).
fn task_to_js(task: &TaskInfo) -> JsValue {
    let mut object = json!({ "taskId": task.task_id, "status": task.status.as_str() });
    let fields = [
        (
            "statusMessage",
            task.status_message.clone().map(Value::from),
        ),
        ("ttlMs", task.ttl_ms.map(Value::from)),
        ("pollIntervalMs", task.poll_interval_ms.map(Value::from)),
        ("result", task.result.clone()),
        (
            "error",
            task.error
                .as_ref()
                .and_then(|e| serde_json::to_value(e).ok()),
        ),
        (
            "inputRequests",
            (!task.input_requests.is_empty()).then(|| Value::Object(task.input_requests.clone())),
        ),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            object[key] = value;
        }
    }
    to_js(&object)
}

/// `options.ttl` of `callToolAsTask`: whole ms ≥ 0, or absent.
fn ttl_option(options: Option<JsValue>) -> Result<Option<u64>, ErrorObject> {
    let Some(options) = options.filter(JsValue::is_object) else {
        return Ok(None);
    };
    member(&options, "ttl", "options")?
        .map(|v| match v.as_f64() {
            Some(ms) if ms.is_finite() && ms >= 0.0 && ms.fract() == 0.0 => Ok(ms as u64),
            _ => Err(bad("options.ttl", "must be a whole number of ms ≥ 0")),
        })
        .transpose()
}

/// `options.onStatus` (a function) and `options.timeout` (ms ≥ 0) of `waitTask`, each optional.
fn wait_options(
    options: Option<JsValue>,
) -> Result<(Option<Function>, Option<Duration>), ErrorObject> {
    let Some(options) = options.filter(JsValue::is_object) else {
        return Ok((None, None));
    };
    let on_status = member(&options, "onStatus", "options")?
        .map(|f| {
            f.dyn_into::<Function>()
                .map_err(|_| bad("options.onStatus", "must be a function"))
        })
        .transpose()?;
    Ok((on_status, timeout_member(&options, "timeout", "options")?))
}

#[wasm_bindgen(js_class = MCPClient)]
impl Client {
    /// Call a tool as a task (`McpClient::call_tool_as_task`): on 2025-11-25 with
    /// `params.task` (`{ ttl }` from `options.ttl`, in ms), on 2026-07-28 declaring the tasks
    /// extension (the server decides; `ttl` is unused). Resolves to `{ type: 'task', task }`, or
    /// `{ type: 'result', result }` when the server ran the tool as a plain call.
    ///
    /// # Errors
    /// Rejects as `callTool` does (a tool that refuses a task: `kind: 'rpc'`, the server's
    /// code); a bad `options.ttl` rejects with `-32602` and `data.path`.
    #[wasm_bindgen(js_name = callToolAsTask, unchecked_return_type = "Promise<MCPToolCall>")]
    pub fn call_tool_as_task(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] args: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "MCPTaskCallOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.client.clone();
        let prepared = arguments(&args)
            .and_then(|a| Ok((a, ttl_option(options).map_err(|e| error_to_js(&e))?)));
        crate::wasm::promise(async move {
            let (args, ttl) = prepared?;
            let call = client
                .call_tool_as_task(&name, args, ttl)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            let shape = match call {
                ToolCall::Task(task) => {
                    let shape = to_js(&json!({ "type": "task" }));
                    js_sys::Reflect::set(&shape, &"task".into(), &task_to_js(&task))?;
                    shape
                }
                ToolCall::Result(result) => to_js(&json!({
                    "type": "result",
                    "result": serde_json::to_value(result).unwrap_or_default(),
                })),
            };
            Ok(shape)
        })
    }

    /// `tasks/get`: resolve to the task's current state (`MCPTask`).
    ///
    /// # Errors
    /// Rejects with `kind: 'rpc'` and the server's code (`-32602` for an unknown task id).
    #[wasm_bindgen(js_name = getTask, unchecked_return_type = "Promise<MCPTask>")]
    pub fn get_task(&self, #[wasm_bindgen(js_name = taskId)] task_id: String) -> Promise {
        let client = self.client.clone();
        crate::wasm::promise(async move {
            let task = client
                .get_task(&task_id)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(task_to_js(&task))
        })
    }

    /// `tasks/cancel`: ask the server to cancel the task (2026-07-28 acknowledges even a finished
    /// task; 2025-11-25 refuses one with `-32602`).
    ///
    /// # Errors
    /// Rejects with `kind: 'rpc'` and the server's code.
    #[wasm_bindgen(js_name = cancelTask, unchecked_return_type = "Promise<void>")]
    pub fn cancel_task(&self, #[wasm_bindgen(js_name = taskId)] task_id: String) -> Promise {
        let client = self.client.clone();
        crate::wasm::promise(async move {
            client
                .cancel_task(&task_id)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Wait for a task to end (`McpClient::wait_task`): `tasks/get` at once, then at the
    /// server's `pollInterval`; 2026-07-28 input requests are answered through the client's
    /// handler with `tasks/update`; `options.onStatus` sees each state (a throw is logged, never
    /// stopping the wait); `options.timeout` bounds the whole wait in ms (default: none, each
    /// poll keeps the client's per-request deadline). Resolves to the tool's `MCPToolResult`
    /// (on 2025-11-25 from `tasks/result`; an `isError` result resolves).
    ///
    /// # Errors
    /// Rejects with `kind: 'rpc'`: the task's JSON-RPC error when it failed, `-32000` when it was
    /// cancelled, the server's code for a poll it refused (`-32602` for an unknown task id), or
    /// `-32601` for an input request the client has no handler for; `kind: 'timeout'` (`-32001`)
    /// once `options.timeout` passed (the task runs on: cancel it with `cancelTask`); `-32602`
    /// with `data.path` for a bad `options.onStatus` or `options.timeout`.
    #[wasm_bindgen(js_name = waitTask, unchecked_return_type = "Promise<MCPToolResult>")]
    pub fn wait_task(
        &self,
        #[wasm_bindgen(js_name = taskId)] task_id: String,
        #[wasm_bindgen(unchecked_optional_param_type = "MCPWaitTaskOptions")] options: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.client.clone();
        let prepared = wait_options(options).map_err(|e| error_to_js(&e));
        crate::wasm::promise(async move {
            let (on_status, deadline) = prepared?;
            // The core reports states through a `Send + Sync` callback; a JS function is
            // neither, so states go through a channel drained here, next to the wait.
            let (sender, mut states) = mpsc::unbounded::<TaskInfo>();
            let wait = async move {
                let report = move |task: &TaskInfo| {
                    let _ = sender.unbounded_send(task.clone());
                };
                let task = client.get_task(&task_id).await?;
                report(&task);
                client.wait_task(&task, &report).await
            };
            // The whole wait's deadline: dropping the wait stops the polling.
            let wait = async move {
                let Some(limit) = deadline else {
                    return wait.await;
                };
                match futures::future::select(
                    Box::pin(wait),
                    Box::pin(crate::host::defaults::delay(limit)),
                )
                .await
                {
                    Either::Left((result, _)) => result,
                    Either::Right(_) => Err(ClientError::Timeout {
                        method: "tasks/get".into(),
                        timeout_ms: limit.as_millis().try_into().unwrap_or(u64::MAX),
                    }),
                }
            };
            let listen = async {
                while let Some(task) = states.next().await {
                    let Some(f) = &on_status else { continue };
                    if let Err(thrown) = f.call1(&JsValue::UNDEFINED, &task_to_js(&task)) {
                        web_sys::console::error_2(
                            &"MCPClient: the waitTask onStatus callback threw".into(),
                            &thrown,
                        );
                    }
                }
            };
            let (result, ()) = futures::future::join(wait, listen).await;
            let result = result.map_err(|e| client_error_to_js(&e))?;
            Ok(to_js(&serde_json::to_value(result).unwrap_or_default()))
        })
    }
}
