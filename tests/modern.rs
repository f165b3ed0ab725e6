//! The 2026-07-28 (stateless) wire beside the handshake era, end to end: real HTTP on 127.0.0.1
//! through the [`Endpoint`] with sessions on (as `orkestrel-mcp serve --http` runs), and stdio
//! (the real binary, and `serve_with` over an in-memory duplex).
//!
//! Sources: `../shared/SPEC-2026-07-28.md` §2.2–2.6 (per-request `_meta`, versions, errors and
//! statuses, classification), §3.2–3.4 (standard and custom headers, cancellation), §4 (MRTR),
//! §5 (subscriptions/listen, per-request log level), §9 (checklist). Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::resources::{Resource, ResourceContents, ResourceTemplate};
use orkestrel_mcp::server::ListKind;
use orkestrel_mcp::{
    Content, ErrorObject, McpServer, RequestContext, ServerOptions, Tool,
    SUPPORTED_PROTOCOL_VERSIONS,
};
use serde_json::{json, Map, Value};
use support::{Reply, SseStream, DEADLINE, POST};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

const V: &str = "2026-07-28";
const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const INFO: &str = "io.modelcontextprotocol/clientInfo";
const LOG: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

// ---------------------------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------------------------

type Args = Map<String, Value>;

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn elicit(message: &str, field: &str) -> Value {
    json!({ "message": message, "requestedSchema": { "type": "object",
        "properties": { field: { "type": "string" } }, "required": [field] } })
}

fn sampling(prompt: &str) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 10 })
}

/// Reports its drop (the handler's future was dropped: the request was cancelled).
struct DropGuard(UnboundedSender<&'static str>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// A server with tools, resources (one template), prompts and logging, and a channel on which
/// the `forever*` tools report `started` and `dropped`.
fn fixture() -> (McpServer, UnboundedReceiver<&'static str>) {
    let server = McpServer::new(ServerOptions::new("modern-test", "1.2.3").with_logging());
    let (events, rx) = unbounded_channel();
    let t = server.tools();
    t.add(Tool::from_json("echo", no_args(), |_: Args, _| async {
        Ok::<_, String>("ok")
    }));
    t.add(Tool::from_json(
        "headers_tool",
        json!({ "type": "object", "properties": {
            "region": { "type": "string", "x-mcp-header": "Region" },
            "priority": { "type": "integer", "x-mcp-header": "Priority" },
            "verbose": { "type": ["boolean", "null"], "x-mcp-header": "Verbose" },
            "query": { "type": "string" }
        } }),
        |_: Args, _| async { Ok::<_, String>("headers ok") },
    ));
    t.add(Tool::from_json(
        "needs_sampling",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            let answer = ctx.create_message(sampling("hi")).await?;
            Ok::<_, ErrorObject>(answer.to_string())
        },
    ));
    t.add(Tool::from_json(
        "ask_name",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            let answer = ctx
                .input("user_name", "elicitation/create", elicit("Name?", "name"))
                .await?;
            Ok::<_, ErrorObject>(format!(
                "Hello, {}!",
                answer["content"]["name"].as_str().unwrap_or("stranger")
            ))
        },
    ));
    t.add(Tool::from_json(
        "ask_declared",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            let caps = ctx.client_capabilities.clone().unwrap_or_default();
            let (a, b, c) = futures::join!(
                async {
                    if caps.get("elicitation").is_some() {
                        ctx.input("user_name", "elicitation/create", elicit("Name?", "name"))
                            .await
                            .map(Some)
                    } else {
                        Ok(None)
                    }
                },
                async {
                    if caps.get("sampling").is_some() {
                        ctx.input("llm_answer", "sampling/createMessage", sampling("Hi"))
                            .await
                            .map(Some)
                    } else {
                        Ok(None)
                    }
                },
                async {
                    if caps.get("roots").is_some() {
                        ctx.input("roots", "roots/list", json!({})).await.map(Some)
                    } else {
                        Ok(None)
                    }
                },
            );
            let _ = (a?, b?, c?);
            Ok::<_, ErrorObject>("all declared inputs received")
        },
    ));
    t.add(Tool::from_json(
        "legacy_api_elicit",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            // The handshake-era API: a real request there, an input round on the modern wire.
            let answer = ctx.elicit(elicit("Name?", "name")).await?;
            Ok::<_, ErrorObject>(format!(
                "elicited {}",
                answer["content"]["name"].as_str().unwrap_or("?")
            ))
        },
    ));
    t.add(Tool::from_json(
        "stateful",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            if ctx.request_state().is_none() {
                ctx.set_request_state(json!({ "checkpoint": "state-ok" }));
            }
            ctx.input("confirm", "elicitation/create", elicit("Confirm?", "ok"))
                .await?;
            Ok::<_, ErrorObject>(
                ctx.request_state()
                    .and_then(|s| s["checkpoint"].as_str())
                    .unwrap_or("no-state")
                    .to_owned(),
            )
        },
    ));
    t.add(Tool::from_json(
        "multi_round",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            let round = ctx
                .request_state()
                .and_then(|s| s["round"].as_u64())
                .unwrap_or(0);
            match round {
                0 => {
                    ctx.set_request_state(json!({ "round": 1 }));
                    ctx.input("step1", "elicitation/create", elicit("Step 1", "name"))
                        .await?;
                    Err(ErrorObject::internal("step1 answered in round 1"))
                }
                1 => {
                    let answer = ctx
                        .input("step1", "elicitation/create", elicit("Step 1", "name"))
                        .await?;
                    let name = answer["content"]["name"].as_str().unwrap_or("?").to_owned();
                    ctx.set_request_state(json!({ "round": 2, "name": name }));
                    ctx.input("step2", "elicitation/create", elicit("Step 2", "color"))
                        .await?;
                    Err(ErrorObject::internal("step2 answered in round 2"))
                }
                _ => {
                    let answer = ctx
                        .input("step2", "elicitation/create", elicit("Step 2", "color"))
                        .await?;
                    let name = ctx
                        .request_state()
                        .and_then(|s| s["name"].as_str())
                        .unwrap_or("?")
                        .to_owned();
                    Ok(format!(
                        "{name} likes {}",
                        answer["content"]["color"].as_str().unwrap_or("?")
                    ))
                }
            }
        },
    ));
    t.add(Tool::from_json(
        "log_levels",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            use orkestrel_mcp::context::LogLevel::*;
            for level in [Debug, Info, Warning, Error] {
                ctx.log(level, Some("test"), json!(format!("{level:?}")));
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok::<_, String>("logged")
        },
    ));
    t.add(Tool::from_json(
        "progress",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            for p in [0.0, 25.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), None);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok::<_, String>("progressed")
        },
    ));
    let tx = events.clone();
    t.add(Tool::from_json(
        "forever",
        no_args(),
        move |_: Args, ctx: RequestContext| {
            let tx = tx.clone();
            async move {
                let _guard = DropGuard(tx.clone());
                let _ = tx.send("started");
                // A notification first, so the response is an open SSE stream.
                ctx.progress(1.0, None, Some("waiting forever"));
                std::future::pending::<()>().await;
                Ok::<_, String>("unreachable")
            }
        },
    ));
    let tx = events;
    t.add(Tool::from_json(
        "forever_silent",
        no_args(),
        move |_: Args, _| {
            let tx = tx.clone();
            async move {
                let _guard = DropGuard(tx.clone());
                let _ = tx.send("started");
                std::future::pending::<()>().await;
                Ok::<_, String>("unreachable")
            }
        },
    ));
    let r = server.resources();
    r.add(Resource::text(
        "test://static-text",
        "static-text",
        "text/plain",
        "static text",
    ));
    r.add(Resource::text(
        "test://watched",
        "watched",
        "text/plain",
        "watched text",
    ));
    r.add_template(ResourceTemplate::new(
        "test://template/{id}/data",
        "template",
        |uri, _vars, _| async move {
            Ok(vec![ResourceContents::text(uri, Some("text/plain"), "t")])
        },
    ));
    server.prompts().add(Prompt::new(
        "ask_prompt",
        |_, ctx: RequestContext| async move {
            let answer = ctx
                .input("topic", "elicitation/create", elicit("Topic?", "topic"))
                .await?;
            Ok(GetPromptResult {
                description: None,
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::text(format!(
                        "about {}",
                        answer["content"]["topic"].as_str().unwrap_or("?")
                    )),
                }],
            })
        },
    ));
    r.add(Resource::new(
        "test://needs-roots",
        "needs-roots",
        |uri, ctx: RequestContext| async move {
            let answer = ctx.input("roots", "roots/list", json!({})).await?;
            let n = answer["roots"].as_array().map_or(0, Vec::len);
            Ok(vec![ResourceContents::text(
                uri,
                Some("text/plain"),
                format!("{n} roots"),
            )])
        },
    ));
    server.prompts().add(Prompt::new("simple", |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![PromptMessage {
                role: Role::User,
                content: Content::text("simple"),
            }],
        })
    }));
    (server, rx)
}

async fn start_fixture() -> (
    support::TestServer,
    McpServer,
    UnboundedReceiver<&'static str>,
) {
    let (server, events) = fixture();
    let s = support::start(server.clone(), EndpointOptions::default()).await;
    (s, server, events)
}

// ---------------------------------------------------------------------------------------------
// Wire helpers
// ---------------------------------------------------------------------------------------------

/// Per-request `_meta` with `capabilities`.
fn meta_with(caps: Value) -> Value {
    json!({ PV: V, CAPS: caps, INFO: { "name": "modern-tests", "version": "0" } })
}

fn meta() -> Value {
    meta_with(json!({}))
}

fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// `params` with the default `_meta` when it has none.
fn modern_params(mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    params
}

/// The `Mcp-Name` a request needs (name or uri of the three named methods).
fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params[key].as_str().map(str::to_owned)
}

/// Well-formed modern headers for `method` (plus `Mcp-Name` when given).
fn modern_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("mcp-protocol-version".to_owned(), V.to_owned()),
        ("mcp-method".to_owned(), method.to_owned()),
    ];
    if let Some(name) = name {
        h.push(("mcp-name".to_owned(), name.to_owned()));
    }
    h
}

/// POST with the usual `Content-Type`/`Accept` plus `headers`.
async fn post_h(addr: SocketAddr, headers: &[(String, String)], body: &str) -> Reply {
    let mut all: Vec<(&str, &str)> = POST.to_vec();
    all.extend(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    support::send(addr, "POST", &all, body).await
}

/// A well-formed modern request (default `_meta` unless `params` has one).
async fn call(addr: SocketAddr, id: Value, method: &str, params: Value) -> Reply {
    let params = modern_params(params);
    let name = name_of(method, &params);
    post_h(
        addr,
        &modern_headers(method, name.as_deref()),
        &rpc(id, method, params),
    )
    .await
}

/// The JSON-RPC response in a reply (the last message with `result` or `error`).
fn response(reply: &Reply) -> Value {
    reply
        .messages()
        .into_iter()
        .rev()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {reply:?}"))
}

/// Assert a modern error reply: `status`, `code`, the request id echoed; the error object.
fn assert_error(reply: &Reply, status: u16, code: i64, id: &Value) -> Value {
    assert_eq!(reply.status, status, "{reply:?}");
    assert_eq!(
        reply.header("mcp-session-id"),
        None,
        "modern replies carry no session"
    );
    let r = response(reply);
    assert_eq!(r["error"]["code"], json!(code), "{r}");
    assert_eq!(&r["id"], id, "the error echoes the request id: {r}");
    assert!(r.get("result").is_none(), "{r}");
    r["error"].clone()
}

/// Assert a successful modern reply; the result.
fn assert_ok(reply: &Reply, id: &Value) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        reply.header("mcp-session-id"),
        None,
        "modern replies carry no session"
    );
    let r = response(reply);
    assert_eq!(&r["id"], id, "{r}");
    assert!(r.get("error").is_none(), "{r}");
    r["result"].clone()
}

/// Open a request whose body stays streaming; the connection task is returned, so aborting it
/// closes the TCP connection (the client "closes the stream").
async fn open_conn(
    addr: SocketAddr,
    headers: &[(String, String)],
    body: &str,
) -> (Response<Incoming>, tokio::task::JoinHandle<()>) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    let conn = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut request = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", addr.to_string());
    for (k, v) in POST {
        request = request.header(*k, *v);
    }
    for (k, v) in headers {
        request = request.header(k.as_str(), v.as_str());
    }
    let request = request
        .body(Full::new(bytes::Bytes::from(body.to_owned())))
        .unwrap();
    let response = tokio::time::timeout(DEADLINE, sender.send_request(request))
        .await
        .expect("response head within the deadline")
        .expect("response");
    (response, conn)
}

/// Open `subscriptions/listen` with `id` and `notifications`; the stream and its connection.
async fn listen(
    addr: SocketAddr,
    id: Value,
    notifications: Value,
) -> (SseStream, tokio::task::JoinHandle<()>) {
    let body = rpc(
        id,
        "subscriptions/listen",
        json!({ "_meta": meta(), "notifications": notifications }),
    );
    let (response, conn) =
        open_conn(addr, &modern_headers("subscriptions/listen", None), &body).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    assert!(response.headers().get("mcp-session-id").is_none());
    (SseStream::new(response), conn)
}

/// Wait (bounded) until `f` holds, polling.
async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let found = tokio::time::timeout(DEADLINE, async {
        while !f() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(found.is_ok(), "not within the deadline: {what}");
}

/// Wait (bounded) for the next event of the fixture's `forever*` tools.
async fn next_event(events: &mut UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(DEADLINE, events.recv())
        .await
        .expect("a tool event within the deadline")
        .expect("the event channel is open")
}

/// Send raw bytes (header names exactly as written) and read until the server closes;
/// `(status, body)`.
async fn raw_post(addr: SocketAddr, header_lines: &[&str], body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for line in header_lines {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.push_str(body);
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut out))
        .await
        .expect("raw reply within the deadline")
        .unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

// ---------------------------------------------------------------------------------------------
// server/discover and the per-request _meta envelope (§2.1–2.3)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn discover_returns_versions_capabilities_cache_hints_and_server_info() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(1);
    let reply = call(s.addr, id.clone(), "server/discover", json!({})).await;
    let result = assert_ok(&reply, &id);
    assert_eq!(result["resultType"], "complete", "{result}");
    let versions: Vec<&str> = result["supportedVersions"]
        .as_array()
        .expect("supportedVersions is an array")
        .iter()
        .map(|v| v.as_str().expect("versions are strings"))
        .collect();
    assert!(versions.contains(&V), "{versions:?}");
    for legacy in SUPPORTED_PROTOCOL_VERSIONS {
        assert!(versions.contains(legacy), "{legacy} missing: {versions:?}");
    }
    let caps = &result["capabilities"];
    assert!(caps.is_object(), "{result}");
    for cap in ["tools", "resources", "prompts", "logging"] {
        assert!(caps.get(cap).is_some(), "{cap} not advertised: {caps}");
    }
    assert!(
        result["ttlMs"].is_u64(),
        "ttlMs is an integer ≥ 0: {result}"
    );
    assert!(
        ["public", "private"].contains(&result["cacheScope"].as_str().unwrap_or_default()),
        "{result}"
    );
    assert_eq!(
        result["_meta"][SERVER_INFO],
        json!({ "name": "modern-test", "version": "1.2.3" }),
        "{result}"
    );
    assert!(
        result.get("serverInfo").is_none(),
        "serverInfo lives in _meta"
    );
}

#[tokio::test]
async fn missing_meta_is_400_invalid_params_with_the_request_id() {
    let (s, _server, _) = start_fixture().await;
    let id = json!("no-meta");
    let reply = post_h(
        s.addr,
        &modern_headers("tools/list", None),
        &rpc(id.clone(), "tools/list", json!({})),
    )
    .await;
    assert_error(&reply, 400, -32602, &id);
    // And with no params at all.
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    let reply = post_h(s.addr, &modern_headers("tools/list", None), &body).await;
    assert_error(&reply, 400, -32602, &json!(2));
}

#[tokio::test]
async fn missing_protocol_version_in_meta_is_400_invalid_params() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(17);
    let params = json!({ "_meta": { CAPS: {}, INFO: { "name": "t", "version": "0" } } });
    let reply = post_h(
        s.addr,
        &modern_headers("tools/list", None),
        &rpc(id.clone(), "tools/list", params),
    )
    .await;
    assert_error(&reply, 400, -32602, &id);
}

#[tokio::test]
async fn missing_client_capabilities_is_400_invalid_params() {
    let (s, _server, _) = start_fixture().await;
    let id = json!("caps");
    let params = json!({ "_meta": { PV: V, INFO: { "name": "t", "version": "0" } } });
    let reply = post_h(
        s.addr,
        &modern_headers("tools/list", None),
        &rpc(id.clone(), "tools/list", params),
    )
    .await;
    assert_error(&reply, 400, -32602, &id);
}

#[tokio::test]
async fn meta_without_client_info_is_served() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(3);
    let params = json!({ "_meta": { PV: V, CAPS: {} } });
    let reply = call(s.addr, id.clone(), "tools/list", params).await;
    let result = assert_ok(&reply, &id);
    assert_eq!(result["resultType"], "complete");
    assert!(result["tools"].is_array());
}

#[tokio::test]
async fn unsupported_version_is_400_with_requested_and_supported_subset_of_discover() {
    let (s, _server, _) = start_fixture().await;
    let discover = assert_ok(
        &call(s.addr, json!(1), "server/discover", json!({})).await,
        &json!(1),
    );
    let advertised = discover["supportedVersions"].as_array().unwrap().clone();
    let id = json!(2);
    let params = json!({ "_meta": { PV: "v999.0.0", CAPS: {} } });
    let headers = vec![
        ("mcp-protocol-version".to_owned(), "v999.0.0".to_owned()),
        ("mcp-method".to_owned(), "tools/list".to_owned()),
    ];
    let reply = post_h(s.addr, &headers, &rpc(id.clone(), "tools/list", params)).await;
    let error = assert_error(&reply, 400, -32022, &id);
    assert_eq!(error["data"]["requested"], "v999.0.0", "{error}");
    let supported = error["data"]["supported"]
        .as_array()
        .expect("data.supported is an array");
    assert!(!supported.is_empty());
    for v in supported {
        assert!(advertised.contains(v), "{v} not in discover {advertised:?}");
    }
}

#[tokio::test]
async fn header_version_differing_from_body_is_400_header_mismatch_before_version_support() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(4);
    let params = json!({ "_meta": { PV: "v999.0.0", CAPS: {} } });
    let reply = post_h(
        s.addr,
        &modern_headers("tools/list", None),
        &rpc(id.clone(), "tools/list", params),
    )
    .await;
    assert_error(&reply, 400, -32020, &id);
}

#[tokio::test]
async fn missing_protocol_version_header_with_modern_meta_is_400_header_mismatch() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(5);
    let headers = vec![("mcp-method".to_owned(), "tools/list".to_owned())];
    let reply = post_h(
        s.addr,
        &headers,
        &rpc(id.clone(), "tools/list", modern_params(json!({}))),
    )
    .await;
    assert_error(&reply, 400, -32020, &id);
}

// ---------------------------------------------------------------------------------------------
// Standard and custom headers (§3.2–3.3)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn missing_mcp_method_is_400_header_mismatch() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(6);
    let headers = vec![("mcp-protocol-version".to_owned(), V.to_owned())];
    let reply = post_h(
        s.addr,
        &headers,
        &rpc(id.clone(), "tools/list", modern_params(json!({}))),
    )
    .await;
    assert_error(&reply, 400, -32020, &id);
}

#[tokio::test]
async fn mismatched_mcp_method_is_400_header_mismatch() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(7);
    let reply = post_h(
        s.addr,
        &modern_headers("prompts/list", None),
        &rpc(id.clone(), "tools/list", modern_params(json!({}))),
    )
    .await;
    assert_error(&reply, 400, -32020, &id);
}

#[tokio::test]
async fn mcp_method_value_is_case_sensitive() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(8);
    let reply = post_h(
        s.addr,
        &modern_headers("TOOLS/LIST", None),
        &rpc(id.clone(), "tools/list", modern_params(json!({}))),
    )
    .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_error(&reply, 400, -32020, &id);
}

#[tokio::test]
async fn header_names_are_case_insensitive_on_the_wire() {
    let (s, _server, _) = start_fixture().await;
    let body = rpc(json!(9), "tools/list", modern_params(json!({})));
    for lines in [
        ["mcp-protocol-version: 2026-07-28", "mcp-method: tools/list"],
        ["MCP-PROTOCOL-VERSION: 2026-07-28", "MCP-METHOD: tools/list"],
        ["Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
    ] {
        let (status, text) = raw_post(s.addr, &lines, &body).await;
        assert_eq!(status, 200, "{lines:?}: {text}");
        let reply: Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("{lines:?}: not JSON ({e}): {text}"));
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    }
}

#[tokio::test]
async fn missing_or_mismatched_mcp_name_is_400_header_mismatch() {
    let (s, _server, _) = start_fixture().await;
    let params = modern_params(json!({ "name": "echo", "arguments": {} }));
    let reply = post_h(
        s.addr,
        &modern_headers("tools/call", None),
        &rpc(json!(10), "tools/call", params.clone()),
    )
    .await;
    assert_error(&reply, 400, -32020, &json!(10));
    let reply = post_h(
        s.addr,
        &modern_headers("tools/call", Some("other")),
        &rpc(json!(11), "tools/call", params),
    )
    .await;
    assert_error(&reply, 400, -32020, &json!(11));
}

#[tokio::test]
async fn mcp_name_with_surrounding_whitespace_passes() {
    let (s, _server, _) = start_fixture().await;
    let params = modern_params(json!({ "name": "echo", "arguments": {} }));
    let reply = post_h(
        s.addr,
        &modern_headers("tools/call", Some("  echo  ")),
        &rpc(json!(12), "tools/call", params),
    )
    .await;
    let result = assert_ok(&reply, &json!(12));
    assert_eq!(result["content"][0]["text"], "ok", "{result}");
    // Raw bytes too, in case a client library trims.
    let body = rpc(
        json!(13),
        "tools/call",
        modern_params(json!({ "name": "echo", "arguments": {} })),
    );
    let (status, text) = raw_post(
        s.addr,
        &[
            "mcp-protocol-version: 2026-07-28",
            "mcp-method: tools/call",
            "mcp-name: \t  echo  \t",
        ],
        &body,
    )
    .await;
    assert_eq!(status, 200, "{text}");
}

#[tokio::test]
async fn mcp_name_base64_sentinel_is_decoded() {
    let (s, _server, _) = start_fixture().await;
    let encoded = format!("=?base64?{}?=", STANDARD.encode("echo"));
    let params = modern_params(json!({ "name": "echo", "arguments": {} }));
    let reply = post_h(
        s.addr,
        &modern_headers("tools/call", Some(&encoded)),
        &rpc(json!(14), "tools/call", params),
    )
    .await;
    let result = assert_ok(&reply, &json!(14));
    assert_eq!(result["content"][0]["text"], "ok");
    // A URI with a space (an unsafe value) for resources/read.
    let uri = "test://template/a b/data";
    let encoded = format!("=?base64?{}?=", STANDARD.encode(uri));
    let params = modern_params(json!({ "uri": uri }));
    let reply = post_h(
        s.addr,
        &modern_headers("resources/read", Some(&encoded)),
        &rpc(json!(15), "resources/read", params),
    )
    .await;
    let result = assert_ok(&reply, &json!(15));
    assert_eq!(result["contents"][0]["uri"], uri, "{result}");
}

#[tokio::test]
async fn mcp_name_bad_base64_is_400() {
    let (s, _server, _) = start_fixture().await;
    let params = modern_params(json!({ "name": "echo", "arguments": {} }));
    // "echo" is "ZWNobw==": without its padding the sentinel is invalid strict base64.
    for bad in ["=?base64?ZWNobw?=", "=?base64?ZW!!Nobw==?="] {
        let reply = post_h(
            s.addr,
            &modern_headers("tools/call", Some(bad)),
            &rpc(json!(16), "tools/call", params.clone()),
        )
        .await;
        assert_error(&reply, 400, -32020, &json!(16));
    }
    // Prefix only: a literal, which does not equal "echo".
    let reply = post_h(
        s.addr,
        &modern_headers("tools/call", Some("=?base64?ZWNobw==")),
        &rpc(json!(17), "tools/call", params),
    )
    .await;
    assert_error(&reply, 400, -32020, &json!(17));
}

fn headers_call(args: Value) -> String {
    rpc(
        json!("h"),
        "tools/call",
        modern_params(json!({ "name": "headers_tool", "arguments": args })),
    )
}

fn with_params(params: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut h = modern_headers("tools/call", Some("headers_tool"));
    h.extend(
        params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    h
}

#[tokio::test]
async fn mcp_param_missing_for_a_non_null_value_is_400() {
    let (s, _server, _) = start_fixture().await;
    let body = headers_call(json!({ "region": "eu", "priority": 42 }));
    let reply = post_h(s.addr, &with_params(&[("mcp-param-priority", "42")]), &body).await;
    assert_error(&reply, 400, -32020, &json!("h"));
    // And a mismatched value.
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-region", "us"), ("mcp-param-priority", "42")]),
        &body,
    )
    .await;
    assert_error(&reply, 400, -32020, &json!("h"));
}

#[tokio::test]
async fn mcp_param_needs_no_header_for_null_or_absent_values() {
    let (s, _server, _) = start_fixture().await;
    let body = headers_call(json!({ "region": "eu", "verbose": null, "query": "q" }));
    let reply = post_h(s.addr, &with_params(&[("Mcp-Param-Region", "eu")]), &body).await;
    let result = assert_ok(&reply, &json!("h"));
    assert_eq!(result["content"][0]["text"], "headers ok");
    let body = headers_call(json!({}));
    let reply = post_h(s.addr, &with_params(&[]), &body).await;
    assert_ok(&reply, &json!("h"));
}

#[tokio::test]
async fn mcp_param_integer_is_compared_numerically() {
    let (s, _server, _) = start_fixture().await;
    let body = headers_call(json!({ "region": "eu", "priority": 42 }));
    for value in ["42", "42.0"] {
        let reply = post_h(
            s.addr,
            &with_params(&[("mcp-param-region", "eu"), ("mcp-param-priority", value)]),
            &body,
        )
        .await;
        assert_ok(&reply, &json!("h"));
    }
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-region", "eu"), ("mcp-param-priority", "43")]),
        &body,
    )
    .await;
    assert_error(&reply, 400, -32020, &json!("h"));
}

// ---------------------------------------------------------------------------------------------
// Removed and unadvertised methods, capabilities (§1 M2/M5, §2.4, §2.6)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn removed_and_unknown_methods_are_404_method_not_found_on_the_modern_wire() {
    let (s, _server, _) = start_fixture().await;
    let cases = [
        (
            "initialize",
            json!({ "protocolVersion": V, "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
        ),
        ("ping", json!({})),
        ("logging/setLevel", json!({ "level": "debug" })),
        ("resources/subscribe", json!({ "uri": "test://watched" })),
        ("resources/unsubscribe", json!({ "uri": "test://watched" })),
        ("no/such/method", json!({})),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let id = json!(100 + i);
        let reply = call(s.addr, id.clone(), method, params).await;
        let error = assert_error(&reply, 404, -32601, &id);
        assert!(error["message"].is_string(), "{method}: {error}");
    }
}

#[tokio::test]
async fn prompts_list_without_prompts_is_404_method_not_found() {
    let server = McpServer::new(ServerOptions::new("no-prompts", "0"));
    server
        .tools()
        .add(Tool::from_json("echo", no_args(), |_: Args, _| async {
            Ok::<_, String>("ok")
        }));
    let s = support::start(server, EndpointOptions::default()).await;
    let discover = assert_ok(
        &call(s.addr, json!(1), "server/discover", json!({})).await,
        &json!(1),
    );
    assert!(discover["capabilities"].get("prompts").is_none());
    let reply = call(s.addr, json!(2), "prompts/list", json!({})).await;
    assert_error(&reply, 404, -32601, &json!(2));
}

#[tokio::test]
async fn tool_needing_undeclared_sampling_is_400_missing_capability() {
    let (s, _server, _) = start_fixture().await;
    let id = json!(20);
    let reply = call(
        s.addr,
        id.clone(),
        "tools/call",
        json!({ "name": "needs_sampling", "arguments": {} }),
    )
    .await;
    let error = assert_error(&reply, 400, -32021, &id);
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({ "sampling": {} }),
        "{error}"
    );
    // A capability declared on an earlier request is not carried over (§2.2).
    let mut params = json!({ "name": "ask_name", "arguments": {} });
    params["_meta"] = meta_with(json!({ "elicitation": {} }));
    let first = call(s.addr, json!(21), "tools/call", params).await;
    assert_eq!(
        assert_ok(&first, &json!(21))["resultType"],
        "input_required"
    );
    let again = call(
        s.addr,
        json!(22),
        "tools/call",
        json!({ "name": "ask_name", "arguments": {} }),
    )
    .await;
    let error = assert_error(&again, 400, -32021, &json!(22));
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({ "elicitation": {} })
    );
}

// ---------------------------------------------------------------------------------------------
// Result decoration (§1 M8, m5; §6.1)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn every_modern_result_has_result_type_and_cacheable_ones_carry_cache_hints() {
    let (s, _server, _) = start_fixture().await;
    let cacheable = [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({ "uri": "test://static-text" })),
    ];
    for (i, (method, params)) in cacheable.into_iter().enumerate() {
        let id = json!(200 + i);
        let result = assert_ok(&call(s.addr, id.clone(), method, params).await, &id);
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(result["ttlMs"].is_u64(), "{method}: ttlMs {result}");
        assert!(
            ["public", "private"].contains(&result["cacheScope"].as_str().unwrap_or_default()),
            "{method}: cacheScope {result}"
        );
        assert_eq!(
            result["_meta"][SERVER_INFO]["name"], "modern-test",
            "{method}: {result}"
        );
    }
    let others = [
        ("tools/call", json!({ "name": "echo", "arguments": {} })),
        ("prompts/get", json!({ "name": "simple" })),
    ];
    for (i, (method, params)) in others.into_iter().enumerate() {
        let id = json!(300 + i);
        let result = assert_ok(&call(s.addr, id.clone(), method, params).await, &id);
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert_eq!(result["_meta"][SERVER_INFO]["name"], "modern-test");
    }
}

#[tokio::test]
async fn input_required_result_carries_no_cache_hints() {
    let (s, _server, _) = start_fixture().await;
    let mut params = json!({ "name": "ask_name", "arguments": {} });
    params["_meta"] = meta_with(json!({ "elicitation": {} }));
    let result = assert_ok(
        &call(s.addr, json!(1), "tools/call", params).await,
        &json!(1),
    );
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert!(result.get("ttlMs").is_none(), "{result}");
    assert!(result.get("cacheScope").is_none(), "{result}");
}

// ---------------------------------------------------------------------------------------------
// Dual-era on one URL (§2.4, §3.5)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn modern_responses_never_carry_a_session_id() {
    let (s, _server, _) = start_fixture().await;
    let ok = call(s.addr, json!(1), "tools/list", json!({})).await;
    assert_ok(&ok, &json!(1));
    let sse = call(
        s.addr,
        json!(2),
        "tools/call",
        json!({ "name": "progress", "arguments": {},
            "_meta": { PV: V, CAPS: {}, "progressToken": "p" } }),
    )
    .await;
    assert_eq!(sse.header("content-type"), Some("text/event-stream"));
    assert_ok(&sse, &json!(2));
    let err = call(s.addr, json!(3), "ping", json!({})).await;
    assert_error(&err, 404, -32601, &json!(3));
    let bad = post_h(
        s.addr,
        &modern_headers("tools/list", None),
        &rpc(json!(4), "tools/list", json!({})),
    )
    .await;
    assert_error(&bad, 400, -32602, &json!(4));
    // A modern `initialize` mints nothing either.
    let init = call(
        s.addr,
        json!(5),
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
    )
    .await;
    assert_error(&init, 404, -32601, &json!(5));
    assert_eq!(s.endpoint.sessions().unwrap().len(), 0, "no session minted");
}

#[tokio::test]
async fn legacy_session_keeps_working_between_modern_requests() {
    let (s, _server, _) = start_fixture().await;
    let session = support::new_session(s.addr, "2025-11-25").await;
    let legacy = |id: u64| {
        let session = session.clone();
        async move {
            let headers = vec![
                ("mcp-session-id".to_owned(), session),
                ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
            ];
            post_h(
                s.addr,
                &headers,
                &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }).to_string(),
            )
            .await
        }
    };
    let initialized = post_h(
        s.addr,
        &[
            ("mcp-session-id".to_owned(), session.clone()),
            ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
        ],
        &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
    )
    .await;
    assert_eq!(initialized.status, 202, "{initialized:?}");
    for round in 0..2u64 {
        let modern = call(s.addr, json!(10 + round), "tools/list", json!({})).await;
        let result = assert_ok(&modern, &json!(10 + round));
        assert_eq!(result["resultType"], "complete");
        let reply = legacy(20 + round).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        let r = response(&reply);
        assert_eq!(r["id"], json!(20 + round));
        assert!(r["result"]["tools"].is_array(), "{r}");
        assert!(
            r["result"].get("resultType").is_none(),
            "a legacy result is not decorated: {r}"
        );
    }
    // Removed-on-modern methods still work on the legacy session.
    let ping = post_h(
        s.addr,
        &[
            ("mcp-session-id".to_owned(), session.clone()),
            ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
        ],
        &json!({ "jsonrpc": "2.0", "id": 30, "method": "ping" }).to_string(),
    )
    .await;
    assert_eq!(ping.status, 200, "{ping:?}");
    assert_eq!(response(&ping)["result"], json!({}));
    assert_eq!(s.endpoint.sessions().unwrap().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// MRTR (§4)
// ---------------------------------------------------------------------------------------------

fn tool_call(name: &str, caps: Value, extra: Value) -> Value {
    let mut params = json!({ "name": name, "arguments": {}, "_meta": meta_with(caps) });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    params
}

#[tokio::test]
async fn mrtr_round_one_asks_then_a_retry_with_input_responses_completes() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {} });
    let first = assert_ok(
        &call(
            s.addr,
            json!(1),
            "tools/call",
            tool_call("ask_name", caps.clone(), json!({})),
        )
        .await,
        &json!(1),
    );
    assert_eq!(first["resultType"], "input_required", "{first}");
    let request = &first["inputRequests"]["user_name"];
    assert_eq!(request["method"], "elicitation/create", "{first}");
    assert!(request["params"]["requestedSchema"].is_object(), "{first}");
    assert!(
        request.get("id").is_none() && request.get("jsonrpc").is_none(),
        "{request}"
    );
    let answers = json!({ "inputResponses": { "user_name": { "action": "accept", "content": { "name": "Ada" } } } });
    let second = assert_ok(
        &call(
            s.addr,
            json!(2),
            "tools/call",
            tool_call("ask_name", caps, answers),
        )
        .await,
        &json!(2),
    );
    assert_eq!(second["resultType"], "complete", "{second}");
    assert_eq!(second["content"][0]["text"], "Hello, Ada!", "{second}");
}

#[tokio::test]
async fn mrtr_only_asks_for_inputs_the_client_declared() {
    let (s, _server, _) = start_fixture().await;
    for (caps, expected) in [
        (json!({ "sampling": {} }), vec!["llm_answer"]),
        (
            json!({ "elicitation": {}, "roots": {} }),
            vec!["roots", "user_name"],
        ),
        (
            json!({ "elicitation": {}, "sampling": {}, "roots": {} }),
            vec!["llm_answer", "roots", "user_name"],
        ),
    ] {
        let result = assert_ok(
            &call(
                s.addr,
                json!(1),
                "tools/call",
                tool_call("ask_declared", caps.clone(), json!({})),
            )
            .await,
            &json!(1),
        );
        assert_eq!(result["resultType"], "input_required", "{caps}: {result}");
        let mut keys: Vec<&str> = result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, expected, "{caps}");
    }
    let none = assert_ok(
        &call(
            s.addr,
            json!(2),
            "tools/call",
            tool_call("ask_declared", json!({}), json!({})),
        )
        .await,
        &json!(2),
    );
    assert_eq!(none["resultType"], "complete", "{none}");
}

#[tokio::test]
async fn mrtr_request_state_round_trips_opaque_and_tampering_is_an_error() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {} });
    let first = assert_ok(
        &call(
            s.addr,
            json!(1),
            "tools/call",
            tool_call("stateful", caps.clone(), json!({})),
        )
        .await,
        &json!(1),
    );
    assert_eq!(first["resultType"], "input_required");
    let state = first["requestState"]
        .as_str()
        .expect("requestState is a string")
        .to_owned();
    assert!(
        !state.contains("checkpoint") && !state.contains("state-ok"),
        "opaque: {state}"
    );
    let confirm = json!({ "confirm": { "action": "accept", "content": { "ok": "yes" } } });
    let done = assert_ok(
        &call(
            s.addr,
            json!(2),
            "tools/call",
            tool_call(
                "stateful",
                caps.clone(),
                json!({ "inputResponses": confirm, "requestState": state }),
            ),
        )
        .await,
        &json!(2),
    );
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["content"][0]["text"], "state-ok", "{done}");
    // Tampered: flip one character of the payload, and append junk.
    let mut bytes = state.clone().into_bytes();
    bytes[2] = if bytes[2] == b'A' { b'B' } else { b'A' };
    for tampered in [
        String::from_utf8(bytes).unwrap(),
        format!("{state}x"),
        "not-a-state".to_owned(),
    ] {
        let reply = call(
            s.addr,
            json!(3),
            "tools/call",
            tool_call(
                "stateful",
                caps.clone(),
                json!({ "inputResponses": confirm, "requestState": tampered }),
            ),
        )
        .await;
        let r = response(&reply);
        assert_eq!(r["id"], json!(3));
        assert!(r.get("result").is_none(), "tampered state accepted: {r}");
        assert!(r["error"]["code"].is_i64(), "{r}");
    }
    // A state issued for another tool is rejected too.
    let reply = call(
        s.addr,
        json!(4),
        "tools/call",
        tool_call(
            "ask_name",
            caps,
            json!({ "inputResponses": {}, "requestState": state }),
        ),
    )
    .await;
    assert!(
        response(&reply).get("error").is_some(),
        "transplanted state: {reply:?}"
    );
}

#[tokio::test]
async fn mrtr_wrong_or_malformed_input_responses_get_a_new_input_required() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {} });
    for (i, responses) in [
        json!({ "wrong_key": { "action": "accept", "content": { "name": "x" } } }),
        json!({ "user_name": 12345 }),
        Value::Null,
    ]
    .into_iter()
    .enumerate()
    {
        let id = json!(10 + i);
        let reply = call(
            s.addr,
            id.clone(),
            "tools/call",
            tool_call(
                "ask_name",
                caps.clone(),
                json!({ "inputResponses": responses }),
            ),
        )
        .await;
        let r = response(&reply);
        assert_eq!(r["id"], id);
        if let Some(result) = r.get("result") {
            assert_eq!(
                result["resultType"], "input_required",
                "{responses}: {result}"
            );
            assert!(
                result["inputRequests"].get("user_name").is_some(),
                "{result}"
            );
        } else {
            assert!(r["error"].is_object(), "{r}");
        }
    }
}

#[tokio::test]
async fn mrtr_multi_round_state_changes_between_rounds() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {} });
    let r1 = assert_ok(
        &call(
            s.addr,
            json!(1),
            "tools/call",
            tool_call("multi_round", caps.clone(), json!({})),
        )
        .await,
        &json!(1),
    );
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    assert!(r1["inputRequests"].get("step1").is_some(), "{r1}");
    let s1 = r1["requestState"].as_str().unwrap().to_owned();
    let r2 = assert_ok(
        &call(
            s.addr,
            json!(2),
            "tools/call",
            tool_call(
                "multi_round",
                caps.clone(),
                json!({ "requestState": s1,
                    "inputResponses": { "step1": { "action": "accept", "content": { "name": "Ada" } } } }),
            ),
        )
        .await,
        &json!(2),
    );
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    assert!(r2["inputRequests"].get("step2").is_some(), "{r2}");
    let s2 = r2["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2, "requestState changes between rounds");
    let r3 = assert_ok(
        &call(
            s.addr,
            json!(3),
            "tools/call",
            tool_call(
                "multi_round",
                caps,
                json!({ "requestState": s2,
                    "inputResponses": { "step2": { "action": "accept", "content": { "color": "blue" } } } }),
            ),
        )
        .await,
        &json!(3),
    );
    assert_eq!(r3["resultType"], "complete", "{r3}");
    assert_eq!(r3["content"][0]["text"], "Ada likes blue", "{r3}");
}

#[tokio::test]
async fn tools_list_never_returns_input_required() {
    let (s, _server, _) = start_fixture().await;
    let params = json!({ "_meta": meta_with(json!({ "elicitation": {}, "sampling": {}, "roots": {} })),
        "inputResponses": { "x": { "action": "accept" } }, "requestState": "junk" });
    for (i, method) in ["tools/list", "prompts/list", "resources/list"]
        .into_iter()
        .enumerate()
    {
        let id = json!(i);
        let result = assert_ok(&call(s.addr, id.clone(), method, params.clone()).await, &id);
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(result.get("inputRequests").is_none());
    }
}

// ---------------------------------------------------------------------------------------------
// Per-request logging and progress (§5.2, §3.1)
// ---------------------------------------------------------------------------------------------

fn log_messages(reply: &Reply) -> Vec<Value> {
    reply
        .messages()
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect()
}

#[tokio::test]
async fn no_log_messages_without_a_log_level() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "log_levels", "arguments": {} }),
    )
    .await;
    assert_ok(&reply, &json!(1));
    assert!(log_messages(&reply).is_empty(), "{reply:?}");
}

#[tokio::test]
async fn log_level_warning_sends_only_warning_and_above_on_that_request_stream() {
    let (s, _server, _) = start_fixture().await;
    let with_level = json!({ "name": "log_levels", "arguments": {},
        "_meta": { PV: V, CAPS: {}, LOG: "warning" } });
    let without = json!({ "name": "log_levels", "arguments": {} });
    let (a, b) = tokio::join!(
        call(s.addr, json!("with"), "tools/call", with_level),
        call(s.addr, json!("without"), "tools/call", without),
    );
    assert_eq!(a.header("content-type"), Some("text/event-stream"), "{a:?}");
    let messages = a.messages();
    let levels: Vec<&str> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["warning", "error"], "{messages:?}");
    assert!(
        messages.last().unwrap().get("result").is_some(),
        "the response comes last: {messages:?}"
    );
    assert_ok(&a, &json!("with"));
    assert_ok(&b, &json!("without"));
    assert!(
        log_messages(&b).is_empty(),
        "the other request got logs: {b:?}"
    );
}

#[tokio::test]
async fn bad_log_level_is_invalid_params() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "log_levels", "arguments": {}, "_meta": { PV: V, CAPS: {}, LOG: "loud" } }),
    )
    .await;
    let r = response(&reply);
    assert_eq!(r["id"], json!(1));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
}

#[tokio::test]
async fn progress_arrives_on_the_sse_stream_in_increasing_order_before_the_response() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "progress", "arguments": {},
            "_meta": { PV: V, CAPS: {}, "progressToken": "tok-1" } }),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    let messages = reply.messages();
    let (last, notes) = messages.split_last().unwrap();
    assert_eq!(last["id"], json!(1));
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    let progress: Vec<f64> = notes
        .iter()
        .map(|m| {
            assert_eq!(m["method"], "notifications/progress", "{m}");
            assert_eq!(m["params"]["progressToken"], "tok-1", "{m}");
            m["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress.len(), 4, "{messages:?}");
    assert!(
        progress.windows(2).all(|w| w[0] < w[1]),
        "increasing: {progress:?}"
    );
    // Without a token: no progress, a plain JSON reply.
    let plain = call(
        s.addr,
        json!(2),
        "tools/call",
        json!({ "name": "progress", "arguments": {} }),
    )
    .await;
    assert_eq!(plain.messages().len(), 1, "{plain:?}");
}

// ---------------------------------------------------------------------------------------------
// subscriptions/listen (§5.1)
// ---------------------------------------------------------------------------------------------

async fn first_event(stream: &mut SseStream) -> Value {
    stream.next().await.expect("an event").json()
}

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_a_string_request_id() {
    let (s, _server, _) = start_fixture().await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("listen-A"),
        json!({ "toolsListChanged": true, "promptsListChanged": true }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(ack.get("id").is_none(), "a notification: {ack}");
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("listen-A"), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true, "promptsListChanged": true })
    );
    conn.abort();
}

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_an_integer_request_id() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(s.addr, json!(7), json!({ "toolsListChanged": true })).await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(
        ack["params"]["_meta"][SUB_ID].is_u64(),
        "same JSON type: {ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!(7));
    assert_eq!(server.notify_list_changed(ListKind::Tools), 1);
    let change = first_event(&mut stream).await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(change["params"]["_meta"][SUB_ID], json!(7), "{change}");
    conn.abort();
}

#[tokio::test]
async fn listen_delivers_only_the_requested_kinds() {
    let (s, server, _) = start_fixture().await;
    let (mut prompts, c1) = listen(s.addr, json!("p"), json!({ "promptsListChanged": true })).await;
    let (mut tools, c2) = listen(s.addr, json!("t"), json!({ "toolsListChanged": true })).await;
    let ack = first_event(&mut prompts).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "promptsListChanged": true })
    );
    first_event(&mut tools).await;
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        1,
        "only the tools stream"
    );
    assert_eq!(
        server.notify_list_changed(ListKind::Prompts),
        1,
        "only the prompts stream"
    );
    let next = first_event(&mut prompts).await;
    assert_eq!(
        next["method"], "notifications/prompts/list_changed",
        "the prompts-only stream got {next}"
    );
    assert_eq!(next["params"]["_meta"][SUB_ID], json!("p"));
    let next = first_event(&mut tools).await;
    assert_eq!(next["method"], "notifications/tools/list_changed");
    assert_eq!(next["params"]["_meta"][SUB_ID], json!("t"));
    assert_eq!(
        server.notify_list_changed(ListKind::Resources),
        0,
        "nobody asked"
    );
    c1.abort();
    c2.abort();
}

#[tokio::test]
async fn listen_resource_updates_only_for_subscribed_uris() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("r"),
        json!({ "resourceSubscriptions": ["test://watched"] }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "resourceSubscriptions": ["test://watched"] })
    );
    assert_eq!(server.notify_resource_updated("test://static-text"), 0);
    assert_eq!(server.notify_resource_updated("test://watched"), 1);
    let update = first_event(&mut stream).await;
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "test://watched", "{update}");
    assert_eq!(update["params"]["_meta"][SUB_ID], json!("r"), "{update}");
    conn.abort();
}

#[tokio::test]
async fn closing_the_listen_stream_unsubscribes() {
    let (s, server, _) = start_fixture().await;
    let (mut stream, conn) = listen(s.addr, json!(1), json!({ "toolsListChanged": true })).await;
    first_event(&mut stream).await;
    assert_eq!(server.notify_list_changed(ListKind::Tools), 1);
    drop(stream);
    conn.abort();
    eventually("a notify after the close reaches nobody", || {
        server.notify_list_changed(ListKind::Tools) == 0
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Cancellation by closing the stream (§3.4)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn closing_a_modern_sse_response_cancels_the_handler() {
    let (s, _server, mut events) = start_fixture().await;
    let params = json!({ "name": "forever", "arguments": {},
        "_meta": { PV: V, CAPS: {}, "progressToken": 1 } });
    let (response, conn) = open_conn(
        s.addr,
        &modern_headers("tools/call", Some("forever")),
        &rpc(json!(1), "tools/call", params),
    )
    .await;
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut stream = SseStream::new(response);
    assert_eq!(next_event(&mut events).await, "started");
    let progress = first_event(&mut stream).await;
    assert_eq!(progress["method"], "notifications/progress");
    drop(stream);
    conn.abort();
    assert_eq!(
        next_event(&mut events).await,
        "dropped",
        "the handler was cancelled"
    );
}

#[tokio::test]
async fn closing_the_connection_before_any_event_cancels_the_handler() {
    let (s, _server, mut events) = start_fixture().await;
    let body = rpc(
        json!(1),
        "tools/call",
        modern_params(json!({ "name": "forever_silent", "arguments": {} })),
    );
    let headers = modern_headers("tools/call", Some("forever_silent"));
    // No response head comes until the handler says something: write the request raw.
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        s.addr,
        body.len()
    );
    for (k, v) in &headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(&body);
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(next_event(&mut events).await, "started");
    drop(tcp);
    assert_eq!(
        next_event(&mut events).await,
        "dropped",
        "the handler was cancelled"
    );
}

// ---------------------------------------------------------------------------------------------
// stdio (§2.4 stdio classification)
// ---------------------------------------------------------------------------------------------

struct Child {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
}

impl Child {
    fn spawn() -> Child {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_orkestrel-mcp"))
            .args(["serve", "--stdio"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn orkestrel-mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Child {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(DEADLINE, self.stdout.read_line(&mut line))
            .await
            .expect("a line within the deadline")
            .unwrap();
        assert!(n > 0, "stdout closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    async fn ask(&mut self, message: Value) -> Value {
        let id = message["id"].clone();
        self.send(message).await;
        let reply = self.read().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

#[tokio::test]
async fn stdio_serves_modern_messages_statelessly_beside_a_legacy_initialize() {
    let mut c = Child::spawn();
    let modern = c
        .ask(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": { "_meta": meta() } }))
        .await;
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
    assert!(modern["result"]["ttlMs"].is_u64(), "{modern}");
    assert!(
        modern["result"]["_meta"][SERVER_INFO].is_object(),
        "{modern}"
    );
    let removed = c
        .ask(json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": meta() } }))
        .await;
    assert_eq!(removed["error"]["code"], json!(-32601), "{removed}");
    let init = c
        .ask(json!({ "jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    c.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    let legacy = c
        .ask(json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" }))
        .await;
    assert!(legacy["result"]["tools"].is_array(), "{legacy}");
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    let modern = c
        .ask(json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "text": "hi" }, "_meta": meta() } }))
        .await;
    assert_eq!(modern["result"]["resultType"], "complete", "{modern}");
    assert_eq!(modern["result"]["content"][0]["text"], "hi", "{modern}");
    let bad = c
        .ask(json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/list",
            "params": { "_meta": { PV: "v999.0.0", CAPS: {} } } }))
        .await;
    assert_eq!(bad["error"]["code"], json!(-32022), "{bad}");
    assert_eq!(bad["error"]["data"]["requested"], "v999.0.0");
    drop(c.stdin);
    let status = tokio::time::timeout(DEADLINE, c.child.wait())
        .await
        .expect("exits on stdin EOF")
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn stdio_always_answers_server_discover() {
    let mut c = Child::spawn();
    for (id, params) in [(1, json!({})), (2, json!({ "_meta": meta() }))] {
        let reply = c
            .ask(json!({ "jsonrpc": "2.0", "id": id, "method": "server/discover", "params": params }))
            .await;
        let versions = reply["result"]["supportedVersions"]
            .as_array()
            .unwrap_or_else(|| panic!("{reply}"));
        assert!(versions.contains(&json!(V)), "{reply}");
        assert_eq!(reply["result"]["resultType"], "complete");
    }
    let init = c
        .ask(json!({ "jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert!(init.get("result").is_some(), "{init}");
    let after = c
        .ask(json!({ "jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    assert!(after["result"]["supportedVersions"].is_array(), "{after}");
    // Also without params at all.
    let bare = c
        .ask(json!({ "jsonrpc": "2.0", "id": 5, "method": "server/discover" }))
        .await;
    assert!(bare["result"]["supportedVersions"].is_array(), "{bare}");
}

/// A stdio connection over an in-memory pipe: the server handle stays in the test.
struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Pipe {
    fn serve(server: McpServer) -> Pipe {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_side);
        tokio::spawn(async move {
            let _ = orkestrel_mcp::native::stdio::serve_with(
                server,
                sr,
                sw,
                orkestrel_mcp::native::stdio::StdioOptions::default(),
            )
            .await;
        });
        let (read, write) = tokio::io::split(client);
        Pipe {
            write,
            read: BufReader::new(read),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(DEADLINE, self.read.read_line(&mut line))
            .await
            .expect("a line within the deadline")
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// No line within `wait` (a bounded check that nothing was sent).
    async fn silent_for(&mut self, wait: Duration) -> Option<String> {
        let mut line = String::new();
        match tokio::time::timeout(wait, self.read.read_line(&mut line)).await {
            Err(_) => None,
            Ok(_) => Some(line),
        }
    }
}

#[tokio::test]
async fn stdio_listen_is_acknowledged_first_with_the_request_id() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true, "promptsListChanged": true } } }))
        .await;
    let ack = p.read().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("L"), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true, "promptsListChanged": true })
    );
    // Integer ids keep their JSON type on stdio too.
    p.send(
        json!({ "jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!(9), "{ack}");
}

#[tokio::test]
async fn stdio_listen_notifications_are_tagged_and_sent_once() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(
        json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        server.notify_list_changed(ListKind::Prompts),
        0,
        "not requested"
    );
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        1,
        "one listen stream"
    );
    let change = p.read().await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(change["params"]["_meta"][SUB_ID], json!("L"), "{change}");
    assert_eq!(
        p.silent_for(Duration::from_millis(200)).await,
        None,
        "one tagged notification only"
    );
}

#[tokio::test]
async fn stdio_modern_client_without_listen_gets_no_list_changed() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    let discover = p.read().await;
    assert!(discover["result"]["supportedVersions"].is_array());
    assert_eq!(
        server.notify_list_changed(ListKind::Tools),
        0,
        "nobody subscribed"
    );
    assert_eq!(
        p.silent_for(Duration::from_millis(300)).await,
        None,
        "no unrequested notification on a modern stdio connection (§5.1)"
    );
}

// ---------------------------------------------------------------------------------------------
// More of the §9 checklist
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn modern_notification_post_is_202_with_an_empty_body() {
    let (s, _server, _) = start_fixture().await;
    let body = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 1 } })
    .to_string();
    let reply = post_h(
        s.addr,
        &modern_headers("notifications/cancelled", None),
        &body,
    )
    .await;
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(reply.body, "");
    assert_eq!(reply.header("mcp-session-id"), None);
}

#[tokio::test]
async fn concurrent_modern_posts_are_all_served() {
    let (s, _server, _) = start_fixture().await;
    let replies = futures::future::join_all((0..8).map(|i| {
        call(
            s.addr,
            json!(i),
            "tools/call",
            json!({ "name": "progress", "arguments": {} }),
        )
    }))
    .await;
    for (i, reply) in replies.iter().enumerate() {
        let result = assert_ok(reply, &json!(i));
        assert_eq!(result["content"][0]["text"], "progressed");
    }
}

#[tokio::test]
async fn resource_not_found_is_invalid_params_with_the_uri() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "resources/read",
        json!({ "uri": "test://missing" }),
    )
    .await;
    let r = response(&reply);
    assert_eq!(r["id"], json!(1));
    assert_eq!(
        r["error"]["code"],
        json!(-32602),
        "never -32002 on 2026-07-28: {r}"
    );
    assert_eq!(r["error"]["data"]["uri"], "test://missing", "{r}");
}

#[tokio::test]
async fn legacy_protocol_version_in_modern_meta_is_unsupported_version() {
    let (s, _server, _) = start_fixture().await;
    let params = json!({ "_meta": { PV: "2025-11-25", CAPS: {} } });
    let headers = vec![
        ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
        ("mcp-method".to_owned(), "tools/list".to_owned()),
    ];
    let reply = post_h(s.addr, &headers, &rpc(json!(1), "tools/list", params)).await;
    let error = assert_error(&reply, 400, -32022, &json!(1));
    assert!(
        error["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(V)),
        "{error}"
    );
}

#[tokio::test]
async fn legacy_initialize_with_a_legacy_header_mints_a_session() {
    let (s, _server, _) = start_fixture().await;
    let reply = post_h(
        s.addr,
        &[("mcp-protocol-version".to_owned(), "2025-11-25".to_owned())],
        &support::initialize(1, "2025-11-25"),
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_some(), "{reply:?}");
    let r = response(&reply);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
}

#[tokio::test]
async fn sse_messages_are_one_data_line_each_with_no_event_ids() {
    let (s, _server, _) = start_fixture().await;
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        json!({ "name": "progress", "arguments": {},
            "_meta": { PV: V, CAPS: {}, "progressToken": "t" } }),
    )
    .await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = support::parse_events(&reply.body);
    assert!(events.len() >= 2, "{events:?}");
    for event in &events {
        assert_eq!(
            event.id, None,
            "no SSE event ids on the modern wire: {event:?}"
        );
        assert!(!event.data.contains('\n'), "one data line: {event:?}");
        assert!(event.json().is_object());
    }
    for message in reply.messages() {
        assert!(
            message.get("method").is_none() || message.get("id").is_none(),
            "no server-sent requests: {message}"
        );
    }
}

#[tokio::test]
async fn listen_stream_gets_keep_alive_comments_while_idle() {
    let (server, _) = fixture();
    let mut options = EndpointOptions::default();
    options.http.keep_alive = Some(Duration::from_millis(50));
    let s = support::start(server, options).await;
    let (mut stream, conn) = listen(s.addr, json!(1), json!({ "toolsListChanged": true })).await;
    first_event(&mut stream).await;
    let block = stream.next_block().await.expect("a keep-alive");
    assert!(
        block.data.is_empty() && !block.comments.is_empty(),
        "a comment line: {block:?}"
    );
    conn.abort();
}

#[tokio::test]
async fn tools_list_is_deterministic() {
    let (s, _server, _) = start_fixture().await;
    let a = assert_ok(
        &call(s.addr, json!(1), "tools/list", json!({})).await,
        &json!(1),
    );
    let b = assert_ok(
        &call(s.addr, json!(2), "tools/list", json!({})).await,
        &json!(2),
    );
    assert_eq!(a["tools"], b["tools"]);
    let names: Vec<&str> = a["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"headers_tool"), "{names:?}");
}

#[tokio::test]
async fn mrtr_expired_request_state_is_rejected() {
    let (now, clock) = support::manual_clock();
    let mut options = ServerOptions::new("clocked", "0");
    options.clock = Some(clock);
    let server = McpServer::new(options);
    server.tools().add(Tool::from_json(
        "stateful",
        no_args(),
        |_: Args, ctx: RequestContext| async move {
            ctx.set_request_state(json!({ "n": 1 }));
            ctx.input("confirm", "elicitation/create", elicit("Confirm?", "ok"))
                .await?;
            Ok::<_, ErrorObject>("done")
        },
    ));
    let s = support::start(server, EndpointOptions::default()).await;
    let caps = json!({ "elicitation": {} });
    let first = assert_ok(
        &call(
            s.addr,
            json!(1),
            "tools/call",
            tool_call("stateful", caps.clone(), json!({})),
        )
        .await,
        &json!(1),
    );
    let state = first["requestState"].as_str().unwrap().to_owned();
    now.fetch_add(
        orkestrel_mcp::mrtr::REQUEST_STATE_TTL_MS + 1,
        std::sync::atomic::Ordering::SeqCst,
    );
    let reply = call(
        s.addr,
        json!(2),
        "tools/call",
        tool_call(
            "stateful",
            caps,
            json!({ "requestState": state,
                "inputResponses": { "confirm": { "action": "accept", "content": { "ok": "y" } } } }),
        ),
    )
    .await;
    let r = response(&reply);
    assert!(r.get("result").is_none(), "expired state accepted: {r}");
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
}

#[tokio::test]
async fn handshake_era_elicit_api_becomes_an_input_round_on_the_modern_wire() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {} });
    let reply = call(
        s.addr,
        json!(1),
        "tools/call",
        tool_call("legacy_api_elicit", caps.clone(), json!({})),
    )
    .await;
    for message in reply.messages() {
        assert!(
            message.get("method").is_none() || message.get("id").is_none(),
            "no server→client request on the modern wire: {message}"
        );
    }
    let first = assert_ok(&reply, &json!(1));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{first}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let answers = json!({ "inputResponses": { key.as_str(): { "action": "accept", "content": { "name": "Bo" } } } });
    let done = assert_ok(
        &call(
            s.addr,
            json!(2),
            "tools/call",
            tool_call("legacy_api_elicit", caps, answers),
        )
        .await,
        &json!(2),
    );
    assert_eq!(done["content"][0]["text"], "elicited Bo", "{done}");
}

#[tokio::test]
async fn modern_request_with_an_unknown_session_id_is_served_statelessly() {
    let (s, _server, _) = start_fixture().await;
    let mut headers = modern_headers("tools/list", None);
    headers.push(("mcp-session-id".to_owned(), "no-such-session".to_owned()));
    let reply = post_h(
        s.addr,
        &headers,
        &rpc(json!(1), "tools/list", modern_params(json!({}))),
    )
    .await;
    let result = assert_ok(&reply, &json!(1));
    assert_eq!(result["resultType"], "complete");
}

#[tokio::test]
async fn mrtr_works_on_prompts_get_and_resources_read() {
    let (s, _server, _) = start_fixture().await;
    let caps = json!({ "elicitation": {}, "roots": {} });
    let first = assert_ok(
        &call(
            s.addr,
            json!(1),
            "prompts/get",
            json!({ "name": "ask_prompt", "_meta": meta_with(caps.clone()) }),
        )
        .await,
        &json!(1),
    );
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(
        first["inputRequests"]["topic"]["method"],
        "elicitation/create"
    );
    let done = assert_ok(
        &call(
            s.addr,
            json!(2),
            "prompts/get",
            json!({ "name": "ask_prompt", "_meta": meta_with(caps.clone()),
                "inputResponses": { "topic": { "action": "accept", "content": { "topic": "rust" } },
                    "unknown_extra": { "ignored": true } } }),
        )
        .await,
        &json!(2),
    );
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(
        done["messages"][0]["content"]["text"], "about rust",
        "{done}"
    );
    let first = assert_ok(
        &call(
            s.addr,
            json!(3),
            "resources/read",
            json!({ "uri": "test://needs-roots", "_meta": meta_with(caps.clone()) }),
        )
        .await,
        &json!(3),
    );
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(first["inputRequests"]["roots"]["method"], "roots/list");
    assert!(first.get("ttlMs").is_none(), "{first}");
    let done = assert_ok(
        &call(
            s.addr,
            json!(4),
            "resources/read",
            json!({ "uri": "test://needs-roots", "_meta": meta_with(caps),
                "inputResponses": { "roots": { "roots": [{ "uri": "file:///a" }, { "uri": "file:///b" }] } } }),
        )
        .await,
        &json!(4),
    );
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["contents"][0]["text"], "2 roots", "{done}");
}

#[tokio::test]
async fn listen_acknowledges_only_the_kinds_the_server_supports() {
    let server = McpServer::new(ServerOptions::new("tools-only", "0"));
    let s = support::start(server, EndpointOptions::default()).await;
    let (mut stream, conn) = listen(
        s.addr,
        json!("k"),
        json!({ "toolsListChanged": true, "promptsListChanged": true,
            "resourcesListChanged": true, "resourceSubscriptions": ["test://x"] }),
    )
    .await;
    let ack = first_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true }),
        "{ack}"
    );
    conn.abort();
}

#[tokio::test]
async fn mcp_param_encoding_booleans_and_unsafe_values() {
    let (s, _server, _) = start_fixture().await;
    // A boolean needs its header; `true`/`false` text.
    let body = headers_call(json!({ "verbose": true }));
    let reply = post_h(s.addr, &with_params(&[]), &body).await;
    assert_error(&reply, 400, -32020, &json!("h"));
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-verbose", "true")]),
        &body,
    )
    .await;
    assert_ok(&reply, &json!("h"));
    // A non-ASCII value arrives base64-encoded.
    let body = headers_call(json!({ "region": "Zürich" }));
    let encoded = format!("=?base64?{}?=", STANDARD.encode("Zürich"));
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-region", &encoded)]),
        &body,
    )
    .await;
    assert_ok(&reply, &json!("h"));
    // A literal with a control character (tab) is refused; its base64 form passes.
    let body = headers_call(json!({ "region": "e\tu" }));
    let reply = post_h(s.addr, &with_params(&[("mcp-param-region", "e\tu")]), &body).await;
    assert_error(&reply, 400, -32020, &json!("h"));
    let encoded = format!("=?base64?{}?=", STANDARD.encode("e\tu"));
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-region", &encoded)]),
        &body,
    )
    .await;
    assert_ok(&reply, &json!("h"));
    // Strict base64 on Mcp-Param too.
    let body = headers_call(json!({ "region": "Hello" }));
    let reply = post_h(
        s.addr,
        &with_params(&[("mcp-param-region", "=?base64?SGVsbG8?=")]),
        &body,
    )
    .await;
    assert_error(&reply, 400, -32020, &json!("h"));
}

#[tokio::test]
async fn stdio_listen_is_cancelled_by_notifications_cancelled() {
    let (server, _) = fixture();
    let mut p = Pipe::serve(server.clone());
    p.send(
        json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": { "_meta": meta(), "notifications": { "toolsListChanged": true } } }),
    )
    .await;
    let ack = p.read().await;
    assert_eq!(ack["params"]["_meta"][SUB_ID], json!("L"), "{ack}");
    p.send(
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": "L" } }),
    )
    .await;
    // A request after the cancellation: once it is answered, the cancellation was processed.
    p.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": { "_meta": meta() } }))
        .await;
    loop {
        let line = p.read().await;
        if line["id"] == json!(2) {
            break;
        }
        assert_ne!(
            line["id"],
            json!("L"),
            "a cancelled request gets no response: {line}"
        );
    }
    server.notify_list_changed(ListKind::Tools);
    // Whatever else arrives (see the ignored stdio tests), nothing is tagged for "L" any more.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(300);
    while let Ok(Some(line)) = tokio::time::timeout_at(deadline, async {
        p.silent_for(Duration::from_millis(300)).await
    })
    .await
    {
        if line.is_empty() {
            break;
        }
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(
            message["params"]["_meta"][SUB_ID],
            json!("L"),
            "the cancelled subscription still receives: {message}"
        );
    }
}
