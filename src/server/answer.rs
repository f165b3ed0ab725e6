//! One request, from its first poll to its response (issue 15): what is known at once is done at
//! once, and the future left holds only what the method awaits.
//!
//! ```text
//!  start ─► span ─► prepare (listeners, _meta / era, scope, in-flight id)
//!             │        └─► answer ─┬─ a cached list, an early error    ─► ready
//!             │                    ├─ tools/call of a plain tool (2025) ─► the tool's own future
//!             │                    └─ any other method                  ─► call_era, boxed
//!             └─ (Abortable on a scope) ─► finished: the response, ToolResult → JSON text once
//! ```
//!
//! A panic in the answer's future becomes its request's `-32603` error, so every request gets
//! exactly one answer on every transport.
//!
//! The layers are plain functions returning combinators, not nested `async fn`s: an `async fn`
//! keeps its arguments (the request and its ~360-byte context) for its whole life and so does
//! each caller's, which made one request's future ~7 KiB, moved and boxed per message.

use std::sync::Arc;

use futures::future::{self, AbortHandle, Abortable, Either};
use futures::{Future, FutureExt};

use super::methods::{check_scopes, tool_call_params};
use super::{meta_of, McpServer};
use crate::era::{self, Era};
use crate::observe::Observation;
use crate::primitives::tools::Tool;
use crate::protocol::{params, TaskSupport, ToolResult};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorObject, JsonRpcRequest, JsonRpcResponse, ResultValue};
use serde_json::{Map, Value};

/// What a request's method answered, before its response is built.
pub(super) enum Answer {
    /// A result value (or JSON text already serialized).
    Result(ResultValue),
    /// A tool's result, serialized once when the response is built.
    Tool(ToolResult),
}

/// A method's answer or its error.
pub(super) type Answered = Result<Answer, ErrorObject>;

/// A request's response (`None`: cancelled) and, for a tool's result, whether it `isError`.
struct Finished {
    response: Option<JsonRpcResponse>,
    tool_error: Option<bool>,
}

impl Finished {
    fn error(id: crate::wire::jsonrpc::RequestId, error: ErrorObject) -> Finished {
        Finished {
            response: Some(JsonRpcResponse::error(Some(id), error)),
            tool_error: None,
        }
    }
}

impl McpServer {
    /// A request at its first poll: its span, then everything known at once, then the future of
    /// what is left, inside the span.
    pub(super) fn start(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> impl Future<Output = Option<JsonRpcResponse>> + '_ {
        let observed = Observation::server(
            &request.method,
            &request.id,
            request.params.as_ref(),
            ctx.session().map(|s| s.id()),
        );
        let tool_call = request.method == "tools/call";
        let running = observed.in_scope(|| self.prepare(request, ctx, &observed));
        observed.instrument(running).map(move |finished| {
            match finished.tool_error {
                Some(is_error) => observed.finish_tool(is_error),
                None => observed.finish_response(tool_call, finished.response.as_ref()),
            }
            finished.response
        })
    }

    /// The request listeners, the context filled from the request and its scope, the
    /// 2026-07-28 checks, the in-flight id on a scope; then the answer's future. Inlined into
    /// [`McpServer::start`], its one caller: when LLVM chose to call it instead, its future was
    /// built, returned and moved with five `memcpy`s a request (callgrind, ~300 instructions).
    #[inline]
    fn prepare(
        &self,
        request: JsonRpcRequest,
        mut ctx: RequestContext,
        observed: &Observation,
    ) -> impl Future<Output = Finished> + '_ {
        self.emit_request(&request.method, Some(&request.id));
        ctx.id = Some(request.id.clone());
        ctx.method.clone_from(&request.method);
        ctx.meta = meta_of(request.params.as_ref());
        ctx.pending = Some(self.inner.pending.clone());
        ctx.logging_undeclared = !self.inner.options.logging;
        // `has_modern_meta` over the `_meta` just read (one lookup of it, not two).
        let modern_meta = ctx
            .meta
            .as_ref()
            .is_some_and(|m| m.contains_key(era::META_PROTOCOL_VERSION));
        if ctx.era == Era::Modern || modern_meta {
            ctx.era = Era::Modern;
            if let Err(error) = self.prepare_modern(&request, &mut ctx) {
                return Either::Left(future::ready(Finished::error(request.id, error)));
            }
        } else if let Some(scope) = &ctx.scope {
            if let Some((caps, level, initialized)) = self.inner.peers.read(scope, |p| {
                (
                    p.client_capabilities.as_deref().cloned(),
                    p.log_level,
                    p.initialized,
                )
            }) {
                ctx.client_capabilities = ctx.client_capabilities.or(caps);
                ctx.log_level = ctx.log_level.or(level);
                ctx.client_initialized = initialized;
            }
        }
        if observed.enabled() {
            observed.protocol_version(self.served_version(&ctx).as_deref());
        }
        let id = request.id.clone();
        let scope = ctx.in_flight_scope();
        let registration = match &scope {
            None => None,
            Some(_) => {
                let (handle, registration) = AbortHandle::new_pair();
                if !self.inner.peers.start(scope.clone(), id.clone(), handle) {
                    // Two requests with one id in flight could not be told apart by a
                    // cancellation or an answer: the later one is refused, with its id.
                    tracing::debug!(%id, "a request reuses the id of a request in flight");
                    return Either::Left(future::ready(Finished::error(
                        id,
                        ErrorObject::invalid_request(
                            "the request id is already in use by a request in flight",
                        ),
                    )));
                }
                Some(registration)
            }
        };
        // A handler that panics (a prompt's, a resource's, a method's; a tool's own panic is
        // already its `isError` result) still answers its request, with `-32603`: every
        // request gets exactly one answer on every transport, and a session's request stream
        // ends.
        let answer = std::panic::AssertUnwindSafe(self.answer(request, ctx)).catch_unwind();
        let answered = |answered: std::thread::Result<Answered>| {
            answered.unwrap_or_else(|panic| Err(panicked(&*panic)))
        };
        let finish = move |outcome: Option<Answered>| {
            if scope.is_some() {
                self.inner.peers.finish(&scope, &id);
            }
            finished(id, outcome)
        };
        // One `map` each way, not three: a `Map` moves its whole state when it completes.
        Either::Right(match registration {
            None => Either::Left(answer.map(move |a| finish(Some(answered(a))))),
            Some(registration) => Either::Right(
                Abortable::new(answer, registration).map(move |a| finish(a.ok().map(answered))),
            ),
        })
    }

    /// A request's answer: a cacheable list from its registry's cached listing (`lists.rs`), a
    /// plain tool's own future for a 2025 `tools/call`, else what its method returns (boxed).
    fn answer(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> impl Future<Output = Answered> + '_ {
        if let Some(listed) = self.answer_list(&request, &ctx) {
            return Either::Left(future::ready(listed.map(Answer::Result)));
        }
        if ctx.era != Era::Modern && request.method == "tools/call" {
            let params = request.params.as_ref();
            if let Err(error) = params::check_request("tools/call", params) {
                return Either::Left(future::ready(Err(error)));
            }
            if let Some(tool) = self.plain_tool(params) {
                return match self.run_plain(tool, request.params, ctx) {
                    Ok(run) => Either::Right(Either::Left(run.map(|r| r.map(Answer::Tool)))),
                    Err(error) => Either::Left(future::ready(Err(error))),
                };
            }
        }
        let slow: crate::BoxFuture<'_, _> = Box::pin(self.call_era(request, ctx));
        Either::Right(Either::Right(
            slow.map(|r| r.map(|value| Answer::Result(value.into()))),
        ))
    }

    /// The tool a 2025 `tools/call` names when it runs as a plain call whatever its `task`
    /// param: the server runs no tasks, or the tool never runs as one and no task was asked
    /// for. Anything else (a task, an unknown tool, a bad name) goes the tasks way
    /// (`tasks.rs`), which answers it.
    fn plain_tool(&self, params: Option<&Map<String, Value>>) -> Option<Arc<Tool>> {
        let params = params?;
        let tool = self.tools().get(params.get("name")?.as_str()?)?;
        let plain = self.inner.tasks.is_none()
            || (tool.descriptor().task_support() == TaskSupport::Forbidden
                && !params.contains_key("task"));
        plain.then_some(tool)
    }

    /// Start a plain tool call: its arguments read, the caller's scopes checked.
    fn run_plain(
        &self,
        tool: Arc<Tool>,
        params: Option<Map<String, Value>>,
        ctx: RequestContext,
    ) -> Result<impl Future<Output = Result<ToolResult, ErrorObject>>, ErrorObject> {
        let (name, arguments) = tool_call_params(params)?;
        check_scopes(&tool, &name, &ctx)?;
        Ok(tool.run(arguments, ctx))
    }
}

/// The error of a request whose handler panicked (the panic's text goes to the log only).
fn panicked(panic: &(dyn std::any::Any + Send)) -> ErrorObject {
    let message = crate::primitives::tools::panic_message(panic);
    tracing::error!(%message, "a request's handler panicked");
    ErrorObject::internal("the request's handler panicked")
}

/// The response to request `id` from its answer (`None`: cancelled); a tool's result is
/// serialized here, once, straight to JSON text.
fn finished(id: crate::wire::jsonrpc::RequestId, outcome: Option<Answered>) -> Finished {
    let (payload, tool_error) = match outcome {
        None => {
            tracing::debug!(%id, "request cancelled; no response");
            return Finished {
                response: None,
                tool_error: None,
            };
        }
        Some(Ok(Answer::Result(result))) => (Ok(result), None),
        Some(Ok(Answer::Tool(result))) => match serde_json::value::to_raw_value(&result) {
            Ok(text) => (Ok(ResultValue::from(text)), Some(result.is_error())),
            Err(error) => (
                Err(ErrorObject::internal(format!(
                    "the tool result did not serialize: {error}"
                ))),
                None,
            ),
        },
        Some(Err(error)) => (Err(error), None),
    };
    Finished {
        response: Some(JsonRpcResponse {
            id: Some(id),
            payload,
        }),
        tool_error,
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{size_of, size_of_val};

    use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcRequest};
    use crate::{McpServer, RequestContext, ServerOptions};

    /// A request's future holds its message and context until its first poll, and then only
    /// what its method awaits: nested `async fn`s had made it ~7 KiB, each layer keeping its
    /// own copy of the request and the context (issue 15).
    #[test]
    fn a_request_future_is_about_its_message_and_context() {
        let server = McpServer::new(ServerOptions::new("t", "0"));
        let message = JsonRpcMessage::Request(JsonRpcRequest::new(1, "tools/call"));
        let future = server.dispatch_with(message, RequestContext::new());
        let held = size_of::<JsonRpcMessage>() + size_of::<RequestContext>();
        assert!(
            size_of_val(&future) <= 2 * held,
            "{} bytes, for a message and a context of {held}",
            size_of_val(&future)
        );
        let reply = futures::executor::block_on(future).expect("a response");
        assert!(reply.is_error(), "no params: -32602");
    }
}
