//! The 2026-07-28 (stateless) wire end to end, shared by the `modern_*` tests: a fixture server
//! with tools, resources, prompts and logging, and well-formed requests (`_meta`, the
//! `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers) with their assertions
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>,
//! <https://modelcontextprotocol.io/seps/2243-http-standardization>).

use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::primitives::resources::{Resource, ResourceContents, ResourceTemplate};
use orkestrel_mcp::{Content, ErrorObject, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Map, Value};
use tokio::net::TcpStream;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::http::{send, Reply, SseStream, POST};
use super::json::{meta, modern_params, name_of, rpc, V};
use super::server::{start, TestServer};
use super::DEADLINE;

// ---------------------------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------------------------

/// A tool's arguments.
pub type Args = Map<String, Value>;

/// An empty object schema.
pub fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// `elicitation/create` params asking for one string `field`.
pub fn elicit(message: &str, field: &str) -> Value {
    json!({ "message": message, "requestedSchema": { "type": "object",
        "properties": { field: { "type": "string" } }, "required": [field] } })
}

/// `sampling/createMessage` params for one user `prompt`.
pub fn sampling(prompt: &str) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 10 })
}

/// Reports its drop (the handler's future was dropped: the request was cancelled).
pub struct DropGuard(UnboundedSender<&'static str>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// A server with tools, resources (one template), prompts and logging, and a channel on which
/// the `forever*` tools report `started` and `dropped`.
pub fn fixture() -> (McpServer, UnboundedReceiver<&'static str>) {
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
            use orkestrel_mcp::server::context::LogLevel::*;
            for level in [Debug, Info, Warning, Error] {
                ctx.log(level, Some("test"), json!(format!("{level:?}")));
                tokio::task::yield_now().await;
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
                tokio::task::yield_now().await;
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

/// The [`fixture`] behind an endpoint with sessions on (as `serve --http` runs); the running
/// server, the server handle and the `forever*` tools' events.
pub async fn start_fixture() -> (TestServer, McpServer, UnboundedReceiver<&'static str>) {
    let (server, events) = fixture();
    let s = start(server.clone(), EndpointOptions::default()).await;
    (s, server, events)
}

// ---------------------------------------------------------------------------------------------
// Requests and assertions
// ---------------------------------------------------------------------------------------------

/// Well-formed modern headers for `method` (plus `Mcp-Name` when given).
pub fn modern_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
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
pub async fn post_h(addr: SocketAddr, headers: &[(String, String)], body: &str) -> Reply {
    let mut all: Vec<(&str, &str)> = POST.to_vec();
    all.extend(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    send(addr, "POST", &all, body).await
}

/// A well-formed modern request (default `_meta` unless `params` has one).
pub async fn call(addr: SocketAddr, id: Value, method: &str, params: Value) -> Reply {
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
pub fn response(reply: &Reply) -> Value {
    reply
        .messages()
        .into_iter()
        .rev()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {reply:?}"))
}

/// Assert a modern error reply: `status`, `code`, the request id echoed; the error object.
pub fn assert_error(reply: &Reply, status: u16, code: i64, id: &Value) -> Value {
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
pub fn assert_ok(reply: &Reply, id: &Value) -> Value {
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
pub async fn open_conn(
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
pub async fn listen(
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

/// Wait (bounded) for the next event of the fixture's `forever*` tools.
pub async fn next_event(events: &mut UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(DEADLINE, events.recv())
        .await
        .expect("a tool event within the deadline")
        .expect("the event channel is open")
}

//END
