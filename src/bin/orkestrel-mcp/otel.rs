//! The binary's `tracing` subscriber: log lines on stderr (`RUST_LOG`, else `info` for the
//! servers and `warn` for the client commands), and — built with the `otel` feature, when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set — the
//! per-request spans and the operation metrics exported over OTLP (HTTP/protobuf; the standard
//! `OTEL_*` variables apply, `OTEL_SERVICE_NAME` defaulting to `orkestrel-mcp`), with W3C Trace
//! Context and Baggage as the propagators of `params._meta`. [`Telemetry`]'s drop flushes and
//! shuts the exporters down: keep it alive until the command has finished.

use tracing_subscriber::EnvFilter;

/// The exporters to flush at exit (nothing without OTLP export).
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    providers: Option<export::Providers>,
}

/// The stderr log filter: `RUST_LOG`, else `warn` (`quiet`) or `info`. The per-request spans
/// (target `orkestrel_mcp::trace`) stay out of the default log lines.
fn log_filter(quiet: bool) -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(if quiet {
            "warn"
        } else {
            "info,orkestrel_mcp::trace=warn"
        })
    })
}

/// Install the subscriber (and the OTLP exporters when configured); see the module docs.
pub(crate) fn init(quiet: bool) -> Telemetry {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    #[cfg(feature = "otel")]
    if let Some(providers) = export::configured() {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        use tracing_subscriber::Layer;
        let logs = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_filter(log_filter(quiet));
        tracing_subscriber::registry()
            .with(logs)
            .with(providers.layer())
            .init();
        return Telemetry {
            providers: Some(providers),
        };
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_env_filter(log_filter(quiet))
        .init();
    Telemetry {
        #[cfg(feature = "otel")]
        providers: None,
    }
}

#[cfg(feature = "otel")]
impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(providers) = self.providers.take() {
            providers.shutdown();
        }
    }
}

#[cfg(feature = "otel")]
mod export {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use opentelemetry_sdk::Resource;
    use orkestrel_mcp::protocol::trace::SPAN_TARGET;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::Layer;

    pub(super) struct Providers {
        traces: SdkTracerProvider,
        metrics: SdkMeterProvider,
    }

    fn set(name: &str) -> bool {
        std::env::var_os(name).is_some_and(|v| !v.is_empty())
    }

    /// The OTLP exporters, when an endpoint is configured and the SDK is not disabled
    /// (`OTEL_SDK_DISABLED=true`). An exporter that cannot be built is reported on stderr and
    /// the command runs without export.
    pub(super) fn configured() -> Option<Providers> {
        if !(set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            return None;
        }
        if std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let mut resource = Resource::builder();
        if !set("OTEL_SERVICE_NAME") {
            resource = resource.with_service_name("orkestrel-mcp");
        }
        let resource = resource.build();
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build();
        let measurements = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .build();
        let (spans, measurements) = match (spans, measurements) {
            (Ok(spans), Ok(measurements)) => (spans, measurements),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("orkestrel-mcp: OTLP export is off: {e}");
                return None;
            }
        };
        let traces = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_periodic_exporter(measurements)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_meter_provider(metrics.clone());
        opentelemetry::global::set_text_map_propagator(
            opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
        );
        Some(Providers { traces, metrics })
    }

    impl Providers {
        /// The layer exporting the per-request spans (and the warnings logged inside them, as
        /// span events).
        pub(super) fn layer<S>(&self) -> impl Layer<S>
        where
            S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
        {
            let tracer = self.traces.tracer("orkestrel-mcp");
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(
                    Targets::new()
                        .with_target(SPAN_TARGET, LevelFilter::INFO)
                        .with_default(LevelFilter::WARN),
                )
        }

        /// Flush what is buffered and stop the exporters (bounded by the SDK's export timeouts).
        pub(super) fn shutdown(self) {
            if let Err(e) = self.traces.shutdown() {
                eprintln!("orkestrel-mcp: flushing the spans failed: {e}");
            }
            if let Err(e) = self.metrics.shutdown() {
                eprintln!("orkestrel-mcp: flushing the metrics failed: {e}");
            }
        }
    }
}
