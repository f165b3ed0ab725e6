//! `MCPToolContext`: the second argument of a JS tool's `execute(args, context)` — the request's
//! id, its way back to the caller (progress and log notifications, sent live on an SSE reply) and
//! an `AbortSignal` that aborts when the call is abandoned.

use wasm_bindgen::prelude::*;

use super::convert::{from_js, to_js};
use crate::server::context::{LogLevel, RequestContext};

/// What a JS tool knows about the call it serves (the core [`RequestContext`]).
#[wasm_bindgen(js_name = MCPToolContext)]
pub struct ToolContext {
    ctx: RequestContext,
    signal: Option<web_sys::AbortSignal>,
}

impl ToolContext {
    /// Wrap a request's context for JS, with the signal the call's abandonment aborts (`None`
    /// where the host has no `AbortController`).
    pub fn new(ctx: RequestContext, signal: Option<web_sys::AbortSignal>) -> Self {
        ToolContext { ctx, signal }
    }
}

#[wasm_bindgen(js_class = MCPToolContext)]
impl ToolContext {
    /// The id of the `tools/call` request.
    #[wasm_bindgen(getter, js_name = requestId, unchecked_return_type = "RequestId | undefined")]
    pub fn request_id(&self) -> JsValue {
        self.ctx
            .id
            .as_ref()
            .map_or(JsValue::UNDEFINED, |id| to_js(&id.to_value()))
    }

    /// Aborted when the call is abandoned before the tool settles: the client went away (the
    /// response stream of a `fetch` reply was cancelled: how a 2026-07-28 client cancels), or a
    /// `notifications/cancelled` later in the same 2025-03-26 batch named it. Nothing else
    /// cancels here: `fetch` serves without sessions, and through `handle` / `dispatch` each
    /// message stands alone, so a `notifications/cancelled` in a message of its own names no
    /// request in flight (independent callers may reuse each other's ids) and is ignored. What
    /// the tool returns after an abort is dropped (spec `basic/utilities/cancellation`:
    /// <https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation>).
    /// `undefined` only where the host has no `AbortController`.
    #[wasm_bindgen(getter, unchecked_return_type = "AbortSignal | undefined")]
    pub fn signal(&self) -> JsValue {
        self.signal.clone().map_or(JsValue::UNDEFINED, Into::into)
    }

    /// Who the request's bearer token speaks for (`fetch` with the `auth` option), else
    /// `undefined`.
    #[wasm_bindgen(getter, unchecked_return_type = "MCPIdentity | undefined")]
    pub fn identity(&self) -> JsValue {
        self.ctx
            .identity
            .as_deref()
            .map_or(JsValue::UNDEFINED, super::auth::identity_to_js)
    }

    /// The caller's `params._meta.progressToken`, when it asked for progress.
    #[wasm_bindgen(getter, js_name = progressToken, unchecked_return_type = "string | number | bigint | undefined")]
    pub fn progress_token(&self) -> JsValue {
        self.ctx.progress_token().map_or(JsValue::UNDEFINED, to_js)
    }

    /// Send `notifications/progress` (`total` in the same unit, optional `message`); `false`
    /// when the caller sent no `progressToken` or there is no channel back (e.g. `handle`).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.ctx.progress(progress, total, message.as_deref())
    }

    /// Send `notifications/message` at `level` (`debug` … `emergency`) with `data` and an
    /// optional logger name; `false` when filtered out, the level is unknown, or there is no
    /// channel back.
    pub fn log(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'"
        )]
        level: &str,
        #[wasm_bindgen(unchecked_param_type = "unknown")] data: &JsValue,
        logger: Option<String>,
    ) -> bool {
        let Some(level) = LogLevel::from_name(level) else {
            return false;
        };
        let Ok(data) = from_js(data) else {
            return false;
        };
        self.ctx.log(level, logger.as_deref(), data)
    }
}
