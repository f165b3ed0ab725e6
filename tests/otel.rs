//! OpenTelemetry end to end (feature `otel`): a real OTLP/HTTP receiver on 127.0.0.1, decoding
//! the official protobuf messages (`opentelemetry-proto`), gets what the real binaries export —
//! `serve --http` and `call URL TOOL`, both with `OTEL_EXPORTER_OTLP_ENDPOINT` set. The spans
//! carry the MCP semantic conventions' names and attributes, the server's span is the child of
//! the client's (the context crossed in `params._meta`), a failing tool call is an error, and
//! the operation-duration histograms arrive. Every wait is bounded ([`DEADLINE`]).
#![cfg(all(feature = "otel", unix))]

mod support;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumberValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use support::server::{spawn_listening_env, BIN};
use support::{eventually, DEADLINE};

/// A span as received, with the `service.name` of the process that sent it.
#[derive(Clone, Debug)]
struct Got {
    service: String,
    span: Span,
}

impl Got {
    fn attr(&self, key: &str) -> Option<String> {
        text(&self.span.attributes, key)
    }
}

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?;
    match value.value.as_ref()? {
        AnyValue::StringValue(s) => Some(s.clone()),
        AnyValue::IntValue(n) => Some(n.to_string()),
        AnyValue::BoolValue(b) => Some(b.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<Got>,
    /// Metric name → (service, unit, number of recorded values).
    histograms: Vec<(String, String, String, u64)>,
    /// Counter name → (service, total).
    counters: Vec<(String, String, i64)>,
    bad: Vec<String>,
}

/// An OTLP/HTTP receiver (`POST /v1/traces`, `POST /v1/metrics`, protobuf bodies) on
/// 127.0.0.1; its endpoint URL and what it received.
async fn receiver() -> (String, Arc<Mutex<Received>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Received::default()));
    let store = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let store = store.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let store = store.clone();
                        async move {
                            let path = request.uri().path().to_owned();
                            let body = request.into_body().collect().await.map(|b| b.to_bytes());
                            let status = match body {
                                Ok(body) => accept(&path, &body, &store),
                                Err(_) => 400,
                            };
                            Ok::<_, Infallible>(
                                Response::builder()
                                    .status(status)
                                    .header("content-type", "application/x-protobuf")
                                    .body(Full::new(Bytes::new()))
                                    .unwrap(),
                            )
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}"), received)
}

fn service_of(resource: Option<&opentelemetry_proto::tonic::resource::v1::Resource>) -> String {
    resource
        .and_then(|r| text(&r.attributes, "service.name"))
        .unwrap_or_default()
}

fn accept(path: &str, body: &[u8], store: &Mutex<Received>) -> u16 {
    let mut store = store.lock().unwrap();
    match path {
        "/v1/traces" => match ExportTraceServiceRequest::decode(body) {
            Ok(request) => {
                for resource in request.resource_spans {
                    let service = service_of(resource.resource.as_ref());
                    for scope in resource.scope_spans {
                        for span in scope.spans {
                            store.spans.push(Got {
                                service: service.clone(),
                                span,
                            });
                        }
                    }
                }
                200
            }
            Err(e) => {
                store.bad.push(format!("traces: {e}"));
                400
            }
        },
        "/v1/metrics" => match ExportMetricsServiceRequest::decode(body) {
            Ok(request) => {
                for resource in request.resource_metrics {
                    let service = service_of(resource.resource.as_ref());
                    for scope in resource.scope_metrics {
                        for metric in scope.metrics {
                            if let Some(Data::Sum(sum)) = &metric.data {
                                let total = sum
                                    .data_points
                                    .iter()
                                    .map(|p| match p.value {
                                        Some(NumberValue::AsInt(n)) => n,
                                        _ => 0,
                                    })
                                    .sum();
                                store
                                    .counters
                                    .push((metric.name.clone(), service.clone(), total));
                            }
                            if let Some(Data::Histogram(h)) = &metric.data {
                                let count = h.data_points.iter().map(|p| p.count).sum();
                                store.histograms.push((
                                    metric.name.clone(),
                                    service.clone(),
                                    metric.unit.clone(),
                                    count,
                                ));
                            }
                        }
                    }
                }
                200
            }
            Err(e) => {
                store.bad.push(format!("metrics: {e}"));
                400
            }
        },
        other => {
            store.bad.push(format!("unexpected path {other}"));
            404
        }
    }
}

/// `orkestrel-mcp call URL TOOL --args JSON --era ERA` exporting to `endpoint`; its exit status
/// and stdout.
async fn call(endpoint: &str, url: &str, tool: &str, args: &str, era: &str) -> (bool, String) {
    let output = tokio::time::timeout(
        DEADLINE,
        tokio::process::Command::new(BIN)
            .args(["call", url, tool, "--args", args, "--era", era])
            .envs(otel_env(endpoint, "otel-test-client"))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the call ends within the deadline")
    .expect("run orkestrel-mcp call");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn otel_env(endpoint: &str, service: &str) -> Vec<(String, String)> {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_SERVICE_NAME", service),
        // The receiver is on loopback: never through a proxy of the environment.
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// A `traceparent` of a trace none of the processes started.
const FOREIGN: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn find<'a>(spans: &'a [Got], service: &str, name: &str) -> Vec<&'a Got> {
    spans
        .iter()
        .filter(|g| g.service == service && g.span.name == name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_metrics_reach_an_otlp_receiver_with_the_client_span_as_the_server_spans_parent()
{
    let (endpoint, received) = receiver().await;
    let env = otel_env(&endpoint, "otel-test-server");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (url, mut server) =
        spawn_listening_env(&["serve", "--http", "127.0.0.1:0"], "info", &env).await;

    let (ok, out) = call(&endpoint, &url, "echo", r#"{"text":"traced"}"#, "auto").await;
    assert!(ok, "call echo: {out}");
    assert!(out.contains("traced"), "{out}");
    let (ok, _) = call(&endpoint, &url, "fail", r#"{"message":"boom"}"#, "legacy").await;
    assert!(!ok, "call fail exits non-zero");

    // Context from a peer that is no client of ours: a malformed `traceparent` is ignored (the
    // request is served, its span a root); a valid one from another trace is adopted.
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let session = support::new_session(addr, "2025-11-25").await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    for (id, meta) in [
        (
            41,
            json!({"traceparent": "00-not-a-trace", "tracestate": "x=1", "baggage": 7}),
        ),
        (42, json!({"traceparent": FOREIGN, "progressToken": "p"})),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": meta}});
        let reply = support::post(addr, &headers, &body.to_string()).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("an answer to {id}: {reply:?}"));
        assert!(answer["result"]["content"].is_array(), "{answer}");
    }
    // A JSON-RPC error (an unknown tool: -32602).
    let body = json!({"jsonrpc": "2.0", "id": 43, "method": "tools/call",
        "params": {"name": "no-such-tool", "arguments": {}}});
    let reply = support::post(addr, &headers, &body.to_string()).await;
    let answer = reply.messages().into_iter().find(|m| m["id"] == 43);
    assert_eq!(
        answer.as_ref().map(|a| a["error"]["code"].clone()),
        Some(json!(-32602)),
        "{reply:?}"
    );

    // The server flushes what it buffered on a graceful shutdown.
    kill(Pid::from_raw(server.id().unwrap() as i32), Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(DEADLINE, server.wait())
        .await
        .expect("the server exits within the deadline")
        .unwrap();
    assert!(status.success(), "{status}");

    eventually(DEADLINE, "both processes' spans and histograms", || {
        let r = received.lock().unwrap();
        let have = |service, name| !find(&r.spans, service, name).is_empty();
        let histogram = |name: &str, service: &str| {
            r.histograms
                .iter()
                .any(|(n, s, _, count)| n == name && s == service && *count > 0)
        };
        have("otel-test-client", "tools/call echo")
            && have("otel-test-server", "tools/call echo")
            && have("otel-test-client", "tools/call fail")
            && have("otel-test-server", "tools/call fail")
            && histogram("mcp.server.operation.duration", "otel-test-server")
            && histogram("mcp.client.operation.duration", "otel-test-client")
    })
    .await;

    let r = received.lock().unwrap();
    assert!(r.bad.is_empty(), "{:?}", r.bad);

    // The echo call: one client span, one server span, one trace, parent = the client span.
    let client = find(&r.spans, "otel-test-client", "tools/call echo");
    let server: Vec<&Got> = find(&r.spans, "otel-test-server", "tools/call echo")
        .into_iter()
        .filter(|g| g.attr("mcp.session.id").is_none()) // not the raw requests below
        .collect();
    assert_eq!(
        (client.len(), server.len()),
        (1, 1),
        "{client:?} {server:?}"
    );
    let (client, server) = (client[0], server[0]);
    assert_eq!(client.span.kind, SpanKind::Client as i32);
    assert_eq!(server.span.kind, SpanKind::Server as i32);
    assert_eq!(server.span.trace_id, client.span.trace_id, "one trace");
    assert_eq!(
        server.span.parent_span_id, client.span.span_id,
        "the client span is the parent"
    );
    for side in [client, server] {
        assert_eq!(side.attr("mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(
            side.attr("gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(side.attr("gen_ai.tool.name").as_deref(), Some("echo"));
        let id = side.attr("jsonrpc.request.id").expect("jsonrpc.request.id");
        assert!(id.parse::<i64>().is_ok(), "{id}");
        let version = side
            .attr("mcp.protocol.version")
            .unwrap_or_else(|| panic!("mcp.protocol.version: {side:?}"));
        assert!(version.starts_with("20"), "{version}");
        // 2026-07-28 (the `auto` era here) has no sessions.
        assert_eq!(side.attr("mcp.session.id"), None);
        assert_eq!(side.attr("error.type"), None, "{side:?}");
        let status = side.span.status.as_ref().map_or(0, |s| s.code);
        assert_ne!(status, StatusCode::Error as i32);
    }
    assert_eq!(
        client.attr("jsonrpc.request.id"),
        server.attr("jsonrpc.request.id")
    );

    let raw = |id: &str| {
        let spans: Vec<&Got> = r
            .spans
            .iter()
            .filter(|g| g.service == "otel-test-server")
            .filter(|g| g.attr("jsonrpc.request.id").as_deref() == Some(id))
            .filter(|g| g.attr("mcp.session.id").as_deref() == Some(session.as_str()))
            .collect();
        assert_eq!(spans.len(), 1, "{id}: {spans:?}");
        spans[0]
    };
    let malformed = raw("41");
    assert!(malformed.span.parent_span_id.is_empty(), "{malformed:?}");
    let refused = raw("43");
    assert_eq!(refused.span.name, "tools/call no-such-tool");
    assert_eq!(refused.attr("error.type").as_deref(), Some("-32602"));
    assert_eq!(
        refused.attr("rpc.response.status_code").as_deref(),
        Some("-32602")
    );
    let status = refused.span.status.as_ref().expect("a status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert!(status.message.contains("no-such-tool"), "{status:?}");
    let foreign = raw("42");
    assert_eq!(hex(&foreign.span.trace_id), FOREIGN[3..35]);
    assert_eq!(hex(&foreign.span.parent_span_id), FOREIGN[36..52]);

    // Every request the server served came from a client span (its other requests too, named
    // by the method alone): each server span is the child of the client span of its request.
    let client_spans: HashMap<&[u8], &Got> = r
        .spans
        .iter()
        .filter(|g| g.service == "otel-test-client")
        .map(|g| (g.span.span_id.as_slice(), g))
        .collect();
    let server_spans: Vec<&Got> = r
        .spans
        .iter()
        .filter(|g| g.service == "otel-test-server")
        .collect();
    assert!(server_spans.len() >= 4, "{server_spans:?}");
    let ours = |g: &&Got| {
        g.span.trace_id != foreign.span.trace_id
            && g.span.trace_id != malformed.span.trace_id
            && g.span.trace_id != refused.span.trace_id
            && !(g.span.name == "initialize" && g.span.parent_span_id.is_empty())
    };
    let raw_spans = server_spans.iter().filter(|g| !ours(g)).count();
    assert_eq!(
        raw_spans, 4,
        "the raw requests' spans: initialize, 41, 42, 43"
    );
    for span in server_spans.into_iter().filter(ours) {
        let parent = client_spans
            .get(span.span.parent_span_id.as_slice())
            .unwrap_or_else(|| panic!("no client span is the parent of {span:?}"));
        assert_eq!(parent.span.name, span.span.name);
        assert_eq!(parent.span.trace_id, span.span.trace_id);
    }

    // The failing tool call (handshake era, in a session): `error.type` = tool_error and an
    // error status, on both sides, and the session's id.
    let client = find(&r.spans, "otel-test-client", "tools/call fail")[0];
    let server = find(&r.spans, "otel-test-server", "tools/call fail")[0];
    assert_eq!(server.span.parent_span_id, client.span.span_id);
    for side in [client, server] {
        assert_eq!(
            side.attr("error.type").as_deref(),
            Some("tool_error"),
            "{side:?}"
        );
        let status = side.span.status.as_ref().expect("a status");
        assert_eq!(status.code, StatusCode::Error as i32, "{side:?}");
        let session = side.attr("mcp.session.id").expect("mcp.session.id");
        assert!(!session.is_empty());
        let version = side
            .attr("mcp.protocol.version")
            .expect("mcp.protocol.version");
        assert!(version.starts_with("2025-"), "{version}");
    }
    assert_eq!(client.attr("mcp.session.id"), server.attr("mcp.session.id"));

    // The request counters: the client process counted its requests, the server every one.
    let counted = |name: &str, service: &str| -> i64 {
        r.counters
            .iter()
            .filter(|(n, s, _)| n == name && s == service)
            .map(|(_, _, total)| total)
            .sum()
    };
    let client_requests = r
        .spans
        .iter()
        .filter(|g| g.service == "otel-test-client")
        .count();
    assert_eq!(
        counted("orkestrel.mcp.client.requests", "otel-test-client"),
        client_requests as i64
    );
    let server_requests = r
        .spans
        .iter()
        .filter(|g| g.service == "otel-test-server")
        .count();
    assert_eq!(
        counted("orkestrel.mcp.server.requests", "otel-test-server"),
        server_requests as i64
    );

    // The histograms are in seconds.
    for (name, service) in [
        ("mcp.server.operation.duration", "otel-test-server"),
        ("mcp.client.operation.duration", "otel-test-client"),
    ] {
        let (_, _, unit, _) = r
            .histograms
            .iter()
            .find(|(n, s, _, _)| n == name && s == service)
            .unwrap();
        assert_eq!(unit, "s", "{name}");
    }
}

/// Over stdio (the same dispatch, another transport): `call TOOL -- orkestrel-mcp serve --stdio`,
/// the child inheriting the OTLP settings; its server span, flushed when stdin ends, is the
/// child of the client's span.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_childs_server_span_is_the_child_of_the_client_span() {
    let (endpoint, received) = receiver().await;
    for era in ["auto", "legacy"] {
        let service = format!("otel-test-stdio-{era}");
        let output = tokio::time::timeout(
            DEADLINE,
            tokio::process::Command::new(BIN)
                .args([
                    "call",
                    "echo",
                    "--args",
                    r#"{"text":"piped"}"#,
                    "--era",
                    era,
                ])
                .args(["--", BIN, "serve", "--stdio"])
                .envs(otel_env(&endpoint, &service))
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the call ends within the deadline")
        .expect("run orkestrel-mcp call");
        assert!(output.status.success(), "{era}: {output:?}");

        let pair = |r: &Received| {
            let spans = find(&r.spans, &service, "tools/call echo");
            let client = spans
                .iter()
                .find(|g| g.span.kind == SpanKind::Client as i32)?;
            let server = spans
                .iter()
                .find(|g| g.span.kind == SpanKind::Server as i32)?;
            Some((client.span.clone(), server.span.clone()))
        };
        eventually(
            DEADLINE,
            "the client's and the stdio server's spans",
            || pair(&received.lock().unwrap()).is_some(),
        )
        .await;
        let (client, server) = pair(&received.lock().unwrap()).unwrap();
        assert_eq!(server.trace_id, client.trace_id, "{era}");
        assert_eq!(server.parent_span_id, client.span_id, "{era}");
        // No header says the version over stdio: the server takes it from the request's
        // `_meta` (2026-07-28) or the connection's `initialize` (handshake era).
        let version = |span: &Span| text(&span.attributes, "mcp.protocol.version");
        assert!(version(&server).is_some(), "{era}: {server:?}");
        assert_eq!(version(&server), version(&client), "{era}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_spans_client_bridge_and_server() {
    let (endpoint, received) = receiver().await;
    let service = "otel-test-bridge";
    // call → bridge (its downstream server span, its upstream client span) → serve: the bridge
    // and the server inherit the exporter's environment.
    let output = tokio::time::timeout(
        DEADLINE,
        tokio::process::Command::new(BIN)
            .args(["call", "echo", "--args", r#"{"text":"across"}"#])
            .args([
                "--", BIN, "bridge", "--stdio", "--", BIN, "serve", "--stdio",
            ])
            .envs(otel_env(&endpoint, service))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the call ends within the deadline")
    .expect("run orkestrel-mcp call");
    assert!(output.status.success(), "{output:?}");
    let chain = |r: &Received| -> Option<Vec<Span>> {
        let spans = find(&r.spans, service, "tools/call echo");
        let of = |kind: SpanKind| spans.iter().filter(move |g| g.span.kind == kind as i32);
        let clients: Vec<&Got> = of(SpanKind::Client).copied().collect();
        let servers: Vec<&Got> = of(SpanKind::Server).copied().collect();
        // The caller's client span is the root; each server span is a client span's child.
        let root = clients.iter().find(|c| c.span.parent_span_id.is_empty())?;
        let bridge_in = servers
            .iter()
            .find(|s| s.span.parent_span_id == root.span.span_id)?;
        let bridge_out = clients
            .iter()
            .find(|c| c.span.span_id != root.span.span_id)?;
        let last = servers
            .iter()
            .find(|s| s.span.parent_span_id == bridge_out.span.span_id)?;
        Some(vec![
            root.span.clone(),
            bridge_in.span.clone(),
            bridge_out.span.clone(),
            last.span.clone(),
        ])
    };
    eventually(DEADLINE, "the four spans of the call's trace", || {
        chain(&received.lock().unwrap()).is_some()
    })
    .await;
    let spans = chain(&received.lock().unwrap()).unwrap();
    let trace = &spans[0].trace_id;
    assert!(
        spans.iter().all(|s| &s.trace_id == trace),
        "one trace id: {spans:?}"
    );
}
