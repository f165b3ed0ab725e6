//! One request's telemetry, for the server's dispatch and the client's request engine alike: a
//! `tracing` span named and attributed by the MCP semantic conventions
//! ([`crate::protocol::trace`]), and — with the `otel` feature on a native target — the trace
//! context read from / written into `params._meta` and the operation-duration metrics
//! (`native::otel`).
//!
//! Without a subscriber that wants [`SPAN_TARGET`] spans, the span is disabled: no field is
//! computed and nothing is allocated. Without the `otel` feature, nothing but that span exists.

use serde_json::{Map, Value};
use tracing::field::{display, Empty};
use tracing::Span;

#[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
use crate::native::otel as backend;
use crate::protocol::trace::{
    operation_name, span_target, ErrorType, IdText, SpanName, SPAN_TARGET,
};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcResponse, RequestId};

/// The span and (with `otel`) the clock reading and metric attributes of one request.
pub(crate) struct Observation {
    pub(crate) span: Span,
    #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
    timer: backend::Timer,
}

impl Observation {
    /// The server's span for a request it received (`SERVER` kind), a child of the context in
    /// `params._meta` when the `otel` feature binds one.
    pub(crate) fn server(
        method: &str,
        id: &RequestId,
        params: Option<&Map<String, Value>>,
        session: Option<&str>,
    ) -> Observation {
        let target = span_target(method, params);
        let span = tracing::info_span!(
            target: SPAN_TARGET,
            "mcp.server",
            otel.name = %SpanName { method, target },
            otel.kind = "server",
            mcp.method.name = method,
            jsonrpc.request.id = %IdText(id),
            mcp.protocol.version = Empty,
            mcp.session.id = session,
            gen_ai.operation.name = operation_name(method),
            gen_ai.tool.name = target.filter(|_| method == "tools/call"),
            gen_ai.prompt.name = target.filter(|_| method == "prompts/get"),
            mcp.resource.uri = resource_uri(method, params),
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.status_code = Empty,
            otel.status_description = Empty,
        );
        #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
        if !span.is_disabled() {
            backend::adopt_parent(&span, params);
        }
        Observation {
            #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
            timer: backend::Timer::start(backend::Side::Server, method, target),
            span,
        }
    }

    /// The client's span for a request it sends (`CLIENT` kind), a child of the current span.
    pub(crate) fn client(method: &str, id: i64, params: Option<&Value>) -> Observation {
        let params = params.and_then(Value::as_object);
        let target = span_target(method, params);
        let span = tracing::info_span!(
            target: SPAN_TARGET,
            "mcp.client",
            otel.name = %SpanName { method, target },
            otel.kind = "client",
            mcp.method.name = method,
            jsonrpc.request.id = %id,
            mcp.protocol.version = Empty,
            mcp.session.id = Empty,
            gen_ai.operation.name = operation_name(method),
            gen_ai.tool.name = target.filter(|_| method == "tools/call"),
            gen_ai.prompt.name = target.filter(|_| method == "prompts/get"),
            mcp.resource.uri = resource_uri(method, params),
            error.type = Empty,
            rpc.response.status_code = Empty,
            otel.status_code = Empty,
            otel.status_description = Empty,
        );
        Observation {
            #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
            timer: backend::Timer::start(backend::Side::Client, method, target),
            span,
        }
    }

    /// Whether a subscriber records the span (else recording anything is skipped). `false` at
    /// compile time where the level is compiled out (the wasm module: `max_level_off`), so the
    /// recording code — `tracing`'s field visitors, with the `Debug` of `str` and `core`'s Unicode
    /// tables behind it — is not in the module.
    pub(crate) fn enabled(&self) -> bool {
        tracing::Level::INFO <= tracing::level_filters::STATIC_MAX_LEVEL && !self.span.is_disabled()
    }

    /// Run `f` inside the span.
    pub(crate) fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        #[cfg(not(target_family = "wasm"))]
        return self.span.in_scope(f);
        // The wasm module compiles tracing's levels out (Cargo.toml: `max_level_off`): the span
        // is never a real one, so there is nothing to enter.
        #[cfg(target_family = "wasm")]
        f()
    }

    /// `future` inside the span (entered at each poll). On wasm, where the span is never a real
    /// one (see [`Observation::in_scope`]), `future` itself: no `Instrumented` layer around it.
    pub(crate) fn instrument<F: std::future::Future>(
        &self,
        future: F,
    ) -> impl std::future::Future<Output = F::Output> {
        #[cfg(not(target_family = "wasm"))]
        return tracing::Instrument::instrument(future, self.span.clone());
        #[cfg(target_family = "wasm")]
        future
    }

    /// Record `mcp.session.id`.
    pub(crate) fn session_id(&self, session: Option<&str>) {
        if let (Some(session), true) = (session, self.enabled()) {
            self.span.record("mcp.session.id", session);
        }
    }

    /// Record `mcp.protocol.version`.
    pub(crate) fn protocol_version(&self, version: Option<&str>) {
        if let (Some(version), true) = (version, self.enabled()) {
            self.span.record("mcp.protocol.version", version);
        }
    }

    /// The request's params with this span's trace context in `_meta` (`otel` feature; else the
    /// params unchanged).
    pub(crate) fn inject(&self, params: Option<Value>) -> Option<Value> {
        #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
        if self.enabled() {
            return backend::context_of(&self.span).inject(params);
        }
        params
    }

    /// End with the server's response (`None`: the request was cancelled, no response);
    /// `tool_call`: the method was `tools/call`, whose `isError` result is a failure.
    pub(crate) fn finish_response(self, tool_call: bool, response: Option<&JsonRpcResponse>) {
        match response.map(|r| &r.payload) {
            None => self.finish(ErrorType::of_named("cancelled"), None),
            // Only a tool call's result is read (`isError`): any other may be JSON text that
            // reading would parse (a cached listing).
            Some(Ok(result)) if tool_call => {
                self.finish(ErrorType::of("tools/call", Ok(result)), None)
            }
            Some(Ok(_)) => self.finish(None, None),
            Some(Err(error)) => {
                self.finish(ErrorType::of("", Err(error)), Some(error.message.as_str()))
            }
        }
    }

    /// End with a tool's result, a failure when it `isError`.
    pub(crate) fn finish_tool(self, is_error: bool) {
        self.finish(is_error.then_some(ErrorType::Named("tool_error")), None)
    }

    /// End with the answer to `method`, a JSON-RPC error, or a local failure.
    pub(crate) fn finish_error(self, error: ErrorType, message: Option<&str>) {
        self.finish(Some(error), message)
    }

    /// End with a success result of `method` (a `tools/call` with `isError` still fails).
    pub(crate) fn finish_result(self, method: &str, result: &Value) {
        self.finish(ErrorType::of(method, Ok(result)), None)
    }

    /// End with an error object of the peer.
    pub(crate) fn finish_object(self, method: &str, error: &ErrorObject) {
        self.finish(
            ErrorType::of(method, Err(error)),
            Some(error.message.as_str()),
        )
    }

    fn finish(self, error: Option<ErrorType>, message: Option<&str>) {
        if let (Some(error), true) = (error, self.enabled()) {
            self.span.record("error.type", display(error));
            if let ErrorType::Code(code) = error {
                self.span.record("rpc.response.status_code", display(code));
            }
            self.span.record("otel.status_code", "error");
            if let Some(message) = message {
                self.span.record("otel.status_description", message);
            }
        }
        #[cfg(all(feature = "otel", not(target_arch = "wasm32")))]
        self.timer.finish(error);
    }
}

impl ErrorType {
    fn of_named(name: &'static str) -> Option<ErrorType> {
        Some(ErrorType::Named(name))
    }
}

/// `mcp.resource.uri` of the methods that carry one (`resources/read`, `resources/subscribe`,
/// `resources/unsubscribe`).
fn resource_uri<'a>(method: &str, params: Option<&'a Map<String, Value>>) -> Option<&'a str> {
    match method {
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            params?.get("uri")?.as_str()
        }
        _ => None,
    }
}
