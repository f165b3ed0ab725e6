//! The OpenTelemetry binding of the per-request telemetry (feature `otel`): the trace context of
//! `params._meta` ([`crate::protocol::trace::TraceContext`]) turned into the parent of the
//! server's span and written from the client's span, through the globally configured
//! [`TextMapPropagator`](opentelemetry::propagation::TextMapPropagator)
//! (`opentelemetry::global::set_text_map_propagator`; the binary installs W3C Trace Context and
//! Baggage), and the operation-duration histograms of the MCP semantic conventions.
//!
//! The spans reach OpenTelemetry through a `tracing_opentelemetry` layer in the subscriber; the
//! metrics through the global meter provider, read when the first request is measured (install
//! it before serving).

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::KeyValue;
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::protocol::trace::{operation_name, ErrorType, TraceContext};

/// A `_meta` trace context as a propagator reads it.
struct Reader<'a>(&'a TraceContext);

impl Extractor for Reader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().collect()
    }
}

/// A `_meta` trace context as a propagator writes it (only the three keys are kept).
struct Writer<'a>(&'a mut TraceContext);

impl Injector for Writer<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.set(key, value);
    }
}

/// Make the context of `params._meta` the parent of `span`. A missing or malformed context
/// leaves the span where it is (a child of the current span, or a root).
pub(crate) fn adopt_parent(span: &Span, params: Option<&Map<String, Value>>) {
    let carrier = TraceContext::from_params(params);
    if carrier.is_empty() {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Reader(&carrier)));
    if let Err(error) = span.set_parent(parent) {
        tracing::trace!(%error, "mcp: the request's trace context was not applied");
    }
}

/// The trace context of `span` as `_meta` carries it (empty without an OpenTelemetry layer).
pub(crate) fn context_of(span: &Span) -> TraceContext {
    let context = span.context();
    let mut carrier = TraceContext::default();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&context, &mut Writer(&mut carrier))
    });
    carrier
}

/// Which side measured an operation.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Server,
    Client,
}

struct Instruments {
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    server_requests: Counter<u64>,
    client_requests: Counter<u64>,
}

/// The bucket boundaries the conventions advise for the operation durations (seconds).
const DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter("orkestrel-mcp");
        let duration = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build()
        };
        let counter = |name: &'static str, description: &'static str| {
            meter
                .u64_counter(name)
                .with_unit("{request}")
                .with_description(description)
                .build()
        };
        Instruments {
            server_duration: duration(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver, from the time it was received until the result was ready",
            ),
            client_duration: duration(
                "mcp.client.operation.duration",
                "MCP request duration as observed on the sender, from the time it was sent until the response was received",
            ),
            server_requests: counter(
                "orkestrel.mcp.server.requests",
                "MCP requests answered by the server",
            ),
            client_requests: counter(
                "orkestrel.mcp.client.requests",
                "MCP requests sent by the client",
            ),
        }
    })
}

/// The start of one operation and the attributes its measurement carries.
pub(crate) struct Timer {
    side: Side,
    start: Instant,
    method: String,
    tool: Option<String>,
}

impl Timer {
    pub(crate) fn start(side: Side, method: &str, target: Option<&str>) -> Timer {
        Timer {
            side,
            start: Instant::now(),
            method: method.to_owned(),
            tool: target.filter(|_| method == "tools/call").map(str::to_owned),
        }
    }

    /// Record the duration (seconds) and one count, with `mcp.method.name`,
    /// `gen_ai.operation.name` and `gen_ai.tool.name` (tool calls) and `error.type` (failures).
    pub(crate) fn finish(self, error: Option<ErrorType>) {
        let seconds = self.start.elapsed().as_secs_f64();
        let mut attributes = Vec::with_capacity(4);
        if let Some(operation) = operation_name(&self.method) {
            attributes.push(KeyValue::new("gen_ai.operation.name", operation));
        }
        if let Some(tool) = self.tool {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool));
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error.to_string()));
        }
        attributes.push(KeyValue::new("mcp.method.name", self.method));
        let instruments = instruments();
        let (duration, count) = match self.side {
            Side::Server => (&instruments.server_duration, &instruments.server_requests),
            Side::Client => (&instruments.client_duration, &instruments.client_requests),
        };
        duration.record(seconds, &attributes);
        count.add(1, &attributes);
    }
}
