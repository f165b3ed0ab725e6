//! Trace context in `params._meta`, and the names an MCP request's telemetry goes by (no I/O,
//! no OpenTelemetry: pure functions over JSON, for every target).
//!
//! The OpenTelemetry semantic conventions for MCP
//! ([opentelemetry.io/docs/specs/semconv/gen-ai/mcp](https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/))
//! carry a request's trace context inside the request itself, as the unprefixed keys
//! [`TRACEPARENT`], [`TRACESTATE`] and [`BAGGAGE`] of `params._meta` (the
//! [`_meta`](https://modelcontextprotocol.io/specification/2025-11-25/basic#meta) property bag;
//! SEP-414 reserves these three keys), in the W3C formats
//! ([Trace Context](https://www.w3.org/TR/trace-context/), [Baggage](https://www.w3.org/TR/baggage/)).
//! The transport's own context (an HTTP `traceparent` header) is another thing: one HTTP request
//! can carry many MCP messages.
//!
//! - Sending: [`TraceContext::inject`] writes the three keys into a request's params, creating
//!   `_meta` when absent and leaving every other key of it as it was.
//! - Receiving: [`TraceContext::from_meta`] reads them back. A malformed value is dropped, never
//!   an error to the peer: a request with a bad `traceparent` is served as one without it.
//!
//! Span names and attributes: [`span_target`], [`operation_name`], [`SpanName`],
//! [`ErrorType`]. With the `otel` feature, the server and the client open a `tracing` span per
//! request under [`SPAN_TARGET`] with these names (see the README, "Observability").

use std::fmt;

use serde_json::{Map, Value};

use crate::wire::jsonrpc::{ErrorObject, RequestId};

/// The `_meta` key of the W3C `traceparent` (`00-<trace-id>-<parent-id>-<flags>`).
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate` (vendor key/value list); kept only beside a valid
/// `traceparent`.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key of the W3C `baggage` (application key/value list).
pub const BAGGAGE: &str = "baggage";
/// The longest `tracestate` or `baggage` value read from a peer, in bytes (the W3C Baggage
/// limit, 8192); a longer one is dropped.
pub const MAX_TRACE_VALUE_LEN: usize = 8192;
/// The `tracing` target of the per-request spans (`RUST_LOG=orkestrel_mcp::trace=info` shows
/// them in logs; an OpenTelemetry layer exports them).
pub const SPAN_TARGET: &str = "orkestrel_mcp::trace";

/// A parsed W3C `traceparent` (Trace Context level 1, version `00`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The version byte read (`00`; a later version is read by its version-00 fields).
    pub version: u8,
    /// The 16-byte trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The 8-byte id of the caller's span (never all zero).
    pub parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Parse a `traceparent` value by the W3C rules: lowercase hex only; version `ff` is
    /// invalid; version `00` is exactly 55 characters; a later version may go on after a `-`;
    /// an all-zero trace id or parent id is invalid. `None` when it is not valid.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let b = text.as_bytes();
        if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return None;
        }
        let version = hex_byte(&b[0..2])?;
        match version {
            0xff => return None,
            0 if b.len() != 55 => return None,
            _ if b.len() > 55 && b[55] != b'-' => return None,
            _ => {}
        }
        let mut trace_id = [0u8; 16];
        for (i, out) in trace_id.iter_mut().enumerate() {
            *out = hex_byte(&b[3 + 2 * i..5 + 2 * i])?;
        }
        let mut parent_id = [0u8; 8];
        for (i, out) in parent_id.iter_mut().enumerate() {
            *out = hex_byte(&b[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&b[53..55])?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            version,
            trace_id,
            parent_id,
            flags,
        })
    }

    /// Whether the caller sampled the trace (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

/// The version-00 form, `00-<32 hex>-<16 hex>-<2 hex>` (what a later version is forwarded as).
impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for byte in self.trace_id {
            write!(f, "{byte:02x}")?;
        }
        f.write_str("-")?;
        for byte in self.parent_id {
            write!(f, "{byte:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(pair[0])? << 4 | digit(pair[1])?)
}

/// The three trace-context values of one request's `_meta`, as text (a propagator's carrier).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`, valid by [`TraceParent::parse`].
    pub traceparent: Option<String>,
    /// `tracestate`, only with a `traceparent`.
    pub tracestate: Option<String>,
    /// `baggage`.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// Read the keys of a request's `_meta`. Non-string values, an invalid `traceparent`, a
    /// `tracestate` without a valid `traceparent`, and values over [`MAX_TRACE_VALUE_LEN`]
    /// bytes or holding control characters are left out: a malformed context is ignored.
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> TraceContext {
        let Some(meta) = meta else {
            return TraceContext::default();
        };
        let text = |key: &str| {
            meta.get(key)
                .and_then(Value::as_str)
                .filter(|v| v.len() <= MAX_TRACE_VALUE_LEN && !v.chars().any(char::is_control))
        };
        let traceparent = text(TRACEPARENT).filter(|v| TraceParent::parse(v).is_some());
        TraceContext {
            tracestate: traceparent.and(text(TRACESTATE)).map(str::to_owned),
            traceparent: traceparent.map(str::to_owned),
            baggage: text(BAGGAGE).map(str::to_owned),
        }
    }

    /// [`TraceContext::from_meta`] of `params._meta`.
    pub fn from_params(params: Option<&Map<String, Value>>) -> TraceContext {
        TraceContext::from_meta(
            params
                .and_then(|p| p.get("_meta"))
                .and_then(Value::as_object),
        )
    }

    /// No key is set.
    pub fn is_empty(&self) -> bool {
        self.traceparent.is_none() && self.tracestate.is_none() && self.baggage.is_none()
    }

    /// The value under one of the three keys (a propagator's `Extractor::get`).
    pub fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            BAGGAGE => self.baggage.as_deref(),
            _ => None,
        }
    }

    /// Set one of the three keys (a propagator's `Injector::set`); `false` for any other key,
    /// which is not kept.
    pub fn set(&mut self, key: &str, value: String) -> bool {
        let slot = match key {
            TRACEPARENT => &mut self.traceparent,
            TRACESTATE => &mut self.tracestate,
            BAGGAGE => &mut self.baggage,
            _ => return false,
        };
        *slot = Some(value);
        true
    }

    /// The keys that are set, in the order `traceparent`, `tracestate`, `baggage`.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        [TRACEPARENT, TRACESTATE, BAGGAGE]
            .into_iter()
            .filter(|key| self.get(key).is_some())
    }

    /// Write the keys into `params._meta`: `_meta` is created when absent; a key the caller
    /// already put there is kept (theirs wins); every other key is left alone. `params` of
    /// `None` becomes `{"_meta": {...}}` when there is anything to write; params or a `_meta`
    /// that is not an object are returned unchanged (the request is invalid anyway).
    pub fn inject(&self, params: Option<Value>) -> Option<Value> {
        if self.is_empty() {
            return params;
        }
        let mut params = params.unwrap_or_else(|| Value::Object(Map::new()));
        if let Some(object) = params.as_object_mut() {
            let meta = object
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                for key in [TRACEPARENT, TRACESTATE, BAGGAGE] {
                    if let (Some(value), false) = (self.get(key), meta.contains_key(key)) {
                        meta.insert(key.to_owned(), Value::String(value.to_owned()));
                    }
                }
            }
        }
        Some(params)
    }
}

/// The low-cardinality target of a request's span name: the tool of `tools/call`, the prompt of
/// `prompts/get` (`params.name`); `None` for any other method (a resource URI is left out of
/// the name, as the conventions advise).
pub fn span_target<'a>(method: &str, params: Option<&'a Map<String, Value>>) -> Option<&'a str> {
    match method {
        "tools/call" | "prompts/get" => params?.get("name")?.as_str(),
        _ => None,
    }
}

/// `gen_ai.operation.name`: `execute_tool` for `tools/call`, else `None` (not set).
pub fn operation_name(method: &str) -> Option<&'static str> {
    (method == "tools/call").then_some("execute_tool")
}

/// A span name, `"{method} {target}"` or the method alone (see [`span_target`]); written out
/// only when a subscriber asks for it.
#[derive(Clone, Copy, Debug)]
pub struct SpanName<'a> {
    /// `mcp.method.name`.
    pub method: &'a str,
    /// The tool or prompt name.
    pub target: Option<&'a str>,
}

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {target}", self.method),
            None => f.write_str(self.method),
        }
    }
}

/// A request id as `jsonrpc.request.id` writes it: a string id as its text, a number as its
/// digits.
#[derive(Clone, Copy, Debug)]
pub struct IdText<'a>(pub &'a RequestId);

impl fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            RequestId::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}

/// `error.type` of a failed request: the JSON-RPC error code as text, `tool_error` for a
/// `tools/call` result with `isError: true`, or a low-cardinality name of a local failure
/// (`timeout`, `cancelled`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    /// A JSON-RPC error response with this code (also `rpc.response.status_code`).
    Code(i32),
    /// A named failure: `tool_error`, `timeout`, `cancelled`, `transport_closed`, ….
    Named(&'static str),
}

impl ErrorType {
    /// The error type of an answer to `method`: `None` for a success.
    pub fn of(method: &str, answer: Result<&Value, &ErrorObject>) -> Option<ErrorType> {
        match answer {
            Err(error) => Some(ErrorType::Code(error.code.0)),
            Ok(result) if method == "tools/call" => result
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .then_some(ErrorType::Named("tool_error")),
            Ok(_) => None,
        }
    }
}

impl fmt::Display for ErrorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorType::Code(code) => write!(f, "{code}"),
            ErrorType::Named(name) => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_parses_and_prints_back() {
        let parent = TraceParent::parse(VALID).expect("valid");
        assert_eq!(parent.version, 0);
        assert_eq!(parent.trace_id[0], 0x4b);
        assert_eq!(parent.parent_id[7], 0xb7);
        assert!(parent.sampled());
        assert_eq!(parent.to_string(), VALID);
        // A later version: its version-00 fields, forwarded as 00.
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra";
        let parent = TraceParent::parse(later).expect("a later version");
        assert!(!parent.sampled());
        assert_eq!(
            parent.to_string(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
        );
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        for bad in [
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "0é-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn inject_keeps_the_other_meta_keys_and_the_callers_own_values() {
        let context = TraceContext {
            traceparent: Some(VALID.into()),
            tracestate: Some("rojo=00f067aa0ba902b7".into()),
            baggage: Some("userId=alice".into()),
        };
        let params = json!({"name": "echo", "_meta": {"progressToken": 7, "baggage": "mine=1"}});
        let params = context.inject(Some(params)).unwrap();
        assert_eq!(
            params,
            json!({"name": "echo", "_meta": {
                "progressToken": 7, "baggage": "mine=1",
                "traceparent": VALID, "tracestate": "rojo=00f067aa0ba902b7",
            }})
        );
        // No params: a `_meta` of its own; nothing to write: unchanged.
        assert_eq!(
            context.inject(None).unwrap()["_meta"]["traceparent"],
            json!(VALID)
        );
        assert_eq!(TraceContext::default().inject(None), None);
        // A `_meta` that is not an object is not replaced.
        let odd = json!({"_meta": 3});
        assert_eq!(context.inject(Some(odd.clone())), Some(odd));
    }

    #[test]
    fn malformed_incoming_values_are_ignored() {
        let meta = json!({
            "traceparent": "00-zz",
            "tracestate": "rojo=1",
            "baggage": 42,
        });
        let context = TraceContext::from_meta(meta.as_object());
        assert!(context.is_empty(), "{context:?}");
        let meta = json!({
            "traceparent": VALID,
            "tracestate": "x".repeat(MAX_TRACE_VALUE_LEN + 1),
            "baggage": "a=1\nb=2",
        });
        let context = TraceContext::from_meta(meta.as_object());
        assert_eq!(context.traceparent.as_deref(), Some(VALID));
        assert_eq!((context.tracestate, context.baggage), (None, None));
        let params =
            json!({"_meta": {"traceparent": VALID, "tracestate": "a=b", "baggage": "k=v"}});
        let context = TraceContext::from_params(params.as_object());
        assert_eq!(
            context.keys().collect::<Vec<_>>(),
            [TRACEPARENT, TRACESTATE, BAGGAGE]
        );
        assert_eq!(TraceContext::from_meta(None), TraceContext::default());
    }

    #[test]
    fn the_carrier_takes_only_the_three_keys() {
        let mut context = TraceContext::default();
        assert!(context.set(TRACEPARENT, VALID.into()));
        assert!(!context.set("x-other", "1".into()));
        assert_eq!(context.get(TRACEPARENT), Some(VALID));
        assert_eq!(context.get("x-other"), None);
    }

    #[test]
    fn span_names_attributes_and_error_types_follow_the_conventions() {
        let params = json!({"name": "echo"});
        let target = span_target("tools/call", params.as_object());
        assert_eq!(target, Some("echo"));
        let name = SpanName {
            method: "tools/call",
            target,
        };
        assert_eq!(name.to_string(), "tools/call echo");
        assert_eq!(span_target("resources/read", params.as_object()), None);
        assert_eq!(
            SpanName {
                method: "ping",
                target: None
            }
            .to_string(),
            "ping"
        );
        assert_eq!(operation_name("tools/call"), Some("execute_tool"));
        assert_eq!(operation_name("prompts/get"), None);
        assert_eq!(IdText(&RequestId::from(7)).to_string(), "7");
        assert_eq!(IdText(&RequestId::String("a".into())).to_string(), "a");
        let failed = json!({"content": [], "isError": true});
        assert_eq!(
            ErrorType::of("tools/call", Ok(&failed)).map(|e| e.to_string()),
            Some("tool_error".into())
        );
        assert_eq!(ErrorType::of("resources/read", Ok(&failed)), None);
        let error = ErrorObject::invalid_request("no");
        assert_eq!(
            ErrorType::of("ping", Err(&error)).map(|e| e.to_string()),
            Some("-32600".into())
        );
    }
}
