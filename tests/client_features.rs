//! The client's handshake-era features end to end: server requests answered through a
//! `ClientHandler` over Streamable HTTP, progress callbacks, resources / prompts / completion /
//! logging calls against our own server, cancellation of an in-flight call, and the resumption
//! of an interrupted request stream with `Last-Event-ID` and the auto-mode fallback on a 422
//! (scripted peers). Servers listen on
//! 127.0.0.1; `HANG_GUARD` only bounds a hang; no assertion depends on timing.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]
#![allow(clippy::result_large_err)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use orkestrel_mcp::client::{
    apply_elicitation_defaults, ClientError, ClientEvent, ClientHandler, McpClient, Progress,
    RequestOptions,
};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::primitives::resources::Resource;
use orkestrel_mcp::server::Completion;
use orkestrel_mcp::wire::jsonrpc::ErrorObject;
use orkestrel_mcp::{BoxFuture, Content, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Value};
use support::client::*;
use support::server::{start, TestServer};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::timeout;

struct Answers;

impl ClientHandler for Answers {
    fn capabilities(&self) -> Value {
        json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {}})
    }
    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move {
            // An answer that takes a while: the reader must not be blocked meanwhile.
            tokio::time::sleep(Duration::from_millis(5)).await;
            let asked = params["messages"][0]["content"]["text"].clone();
            Ok(json!({"role": "assistant", "model": "test",
                "content": {"type": "text", "text": format!("sampled {}", asked.as_str().unwrap_or(""))}}))
        })
    }
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move {
            let mut content = json!({});
            apply_elicitation_defaults(&params, &mut content);
            Ok(json!({"action": "accept", "content": content}))
        })
    }
    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})) })
    }
}

/// Our server with every surface the client exercises.
fn full_server() -> McpServer {
    full_server_signalling().0
}

/// [`full_server`], and a channel on which its `forever` tool reports each start.
fn full_server_signalling() -> (McpServer, UnboundedReceiver<()>) {
    let (started, starts) = unbounded_channel();
    let server = McpServer::new(
        ServerOptions::new("features", "1")
            .with_logging()
            .with_page_size(1)
            .with_completer(|params: Value, _ctx| async move {
                let prefix = params["argument"]["value"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                let values = ["Ada", "Alan", "Grace"]
                    .iter()
                    .filter(|v| v.starts_with(&prefix))
                    .map(|v| (*v).to_owned())
                    .collect();
                Ok(Completion {
                    values,
                    total: None,
                    has_more: Some(false),
                })
            }),
    );
    for i in 1..=3 {
        server.resources().add(Resource::text(
            format!("test://r{i}"),
            format!("r{i}"),
            "text/plain",
            format!("resource {i}"),
        ));
    }
    server.prompts().add(
        Prompt::new("greet", |args, _ctx| {
            let name = args["name"].as_str().unwrap_or("").to_owned();
            async move {
                Ok(GetPromptResult {
                    description: None,
                    messages: vec![PromptMessage {
                        role: Role::User,
                        content: Content::text(format!("Hello {name}")),
                    }],
                })
            }
        })
        .with_argument("name", "who", true),
    );
    server
        .prompts()
        .add(Prompt::new("other", |_args, _ctx| async {
            Ok(GetPromptResult::default())
        }));
    server.tools().add(Tool::from_json(
        "ask",
        json!({"type": "object"}),
        |_args, ctx: RequestContext| async move {
            let sampled = ctx
                .create_message(json!({"messages": [{"role": "user",
                    "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}))
                .await
                .map_err(|e| e.message)?;
            let elicited = ctx
                .elicit(
                    json!({"message": "form", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string", "default": "Ada"},
                                   "n": {"type": "integer", "default": 3}}}}),
                )
                .await
                .map_err(|e| e.message)?;
            let roots = ctx.list_roots().await.map_err(|e| e.message)?;
            Ok::<_, String>(
                json!({"sampled": sampled["content"]["text"],
                "elicited": elicited, "roots": roots["roots"]})
                .to_string(),
            )
        },
    ));
    server.tools().add(Tool::from_json(
        "count",
        json!({"type": "object"}),
        |args, ctx: RequestContext| async move {
            let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
            for step in 1..=steps {
                ctx.progress(step as f64, Some(steps as f64), Some("step"));
                tokio::task::yield_now().await;
            }
            Ok::<_, String>(format!("counted {steps}"))
        },
    ));
    server.tools().add(Tool::from_json(
        "forever",
        json!({"type": "object"}),
        move |_args, _ctx| {
            let _ = started.send(());
            async move {
                std::future::pending::<()>().await;
                Ok::<_, String>("never")
            }
        },
    ));
    (server, starts)
}

/// `server` behind an endpoint on 127.0.0.1 (the loopback policy of `EndpointOptions::for_bind`).
async fn serve(server: McpServer) -> (TestServer, String) {
    let running = start(server, EndpointOptions::default()).await;
    let url = running.url();
    (running, url)
}

fn client_for(url: &str, handler: bool) -> McpClient {
    let transport = HttpTransport::new(HttpClientOptions::new(url)).unwrap();
    let mut options = options();
    if handler {
        options = options.with_handler(Answers);
    }
    McpClient::new(transport, options)
}

#[tokio::test]
async fn server_requests_are_answered_through_the_handler_over_http() {
    let (_server, url) = serve(full_server()).await;
    let client = client_for(&url, true);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let answer = client.call("ask", json!({})).await.unwrap().unwrap();
        assert_eq!(answer["sampled"], "sampled hi");
        assert_eq!(
            answer["elicited"],
            json!({"action": "accept", "content": {"name": "Ada", "n": 3}})
        );
        assert_eq!(
            answer["roots"],
            json!([{"uri": "file:///work", "name": "work"}])
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
    // Without a handler the client declares nothing, so the server's tool cannot ask.
    let bare = client_for(&url, false);
    timeout(HANG_GUARD, async {
        bare.connect().await.unwrap();
        let err = bare.call("ask", json!({})).await.unwrap_err();
        assert!(matches!(err, ClientError::Tool { .. }), "{err}");
        bare.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn resources_prompts_completion_logging_and_progress_against_our_server() {
    let (_server, url) = serve(full_server()).await;
    let client = client_for(&url, false);
    let notifications = Arc::new(Mutex::new(Vec::new()));
    let n = notifications.clone();
    client.on(move |event| {
        if let ClientEvent::Notification(note) = event {
            n.lock().unwrap().push(note.method.clone());
        }
    });
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        // Page size 1: the helpers walk every page.
        let resources = client.list_resources().await.unwrap();
        let uris: Vec<_> = resources
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(uris, ["test://r1", "test://r2", "test://r3"]);
        let read = client.read_resource("test://r2").await.unwrap();
        assert_eq!(read["contents"][0]["text"], "resource 2");
        let missing = client.read_resource("test://nope").await.unwrap_err();
        assert!(matches!(missing, ClientError::Rpc(_)), "{missing}");
        client.subscribe_resource("test://r1").await.unwrap();
        client.unsubscribe_resource("test://r1").await.unwrap();
        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts.len(), 2);
        let prompt = client
            .get_prompt("greet", json!({"name": "Ada"}))
            .await
            .unwrap();
        assert_eq!(prompt["messages"][0]["content"]["text"], "Hello Ada");
        let completion = client
            .complete(
                json!({"type": "ref/prompt", "name": "greet"}),
                "name",
                "A",
                None,
            )
            .await
            .unwrap();
        assert_eq!(completion["values"], json!(["Ada", "Alan"]));
        client.set_logging_level("debug").await.unwrap();
        assert!(client.list_resource_templates().await.unwrap().is_empty());
        // Progress reaches the call's callback, in order.
        let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let s = seen.clone();
        let options =
            RequestOptions::default().on_progress(move |p| s.lock().unwrap().push(p.clone()));
        let result = client
            .call_tool_with("count", json!({"steps": 4}), options)
            .await
            .unwrap();
        assert_eq!(
            orkestrel_mcp::client::result_value(result).unwrap(),
            Some(json!("counted 4"))
        );
        let progress: Vec<f64> = seen.lock().unwrap().iter().map(|p| p.progress).collect();
        assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
        assert!(seen.lock().unwrap().iter().all(|p| p.total == Some(4.0)));
        client.disconnect().await;
    })
    .await
    .unwrap();
    assert!(notifications
        .lock()
        .unwrap()
        .iter()
        .any(|m| m == "notifications/progress"));
}

#[tokio::test]
async fn an_aborted_call_ends_at_once_and_the_client_goes_on() {
    let (server, mut starts) = full_server_signalling();
    let (_server, url) = serve(server).await;
    let client = client_for(&url, false);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let c = client.clone();
        let (call, abort) =
            futures::future::abortable(async move { c.call("forever", json!({})).await });
        let call = tokio::spawn(call);
        // Abort once the call is in flight: its tool has started.
        starts.recv().await.expect("the forever tool started");
        abort.abort();
        assert!(call.await.unwrap().is_err());
        // The client still works (the cancelled request freed nothing it needs).
        assert_eq!(
            client.call("count", json!({"steps": 1})).await.unwrap(),
            Some(json!("counted 1"))
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
}

/// The tools/call id the scripted peer must answer on the resumed stream.
type Held = Arc<Mutex<Option<Value>>>;

#[tokio::test]
async fn an_interrupted_request_stream_is_resumed_with_last_event_id_after_retry() {
    let held: Held = Arc::default();
    let h = held.clone();
    let (url, seen) = fake_http(move |seen| match (seen.method.as_str(), seen.rpc_method()) {
        ("POST", Some("initialize")) => {
            json_reply("200 OK", "mcp-session-id: s-1\r\n", &init_result(&seen.id()))
        }
        ("POST", Some("tools/call")) => {
            *h.lock().unwrap() = Some(seen.id());
            // A priming event with an id and retry, then the stream ends without the answer.
            Reply::Raw("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nid: ev-1\nretry: 10\ndata: \n\n".into())
        }
        ("GET", _) if seen.header("last-event-id").is_some() => {
            let id = h.lock().unwrap().clone().unwrap_or(Value::Null);
            Reply::Raw(format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nid: ev-2\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"resumed\"}}]}}}}\n\n"
            ))
        }
        ("GET", _) => no_get_stream(),
        _ => accepted(),
    })
    .await;
    let client = client_for(&url, false);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(
            client.call("slow", json!({})).await.unwrap(),
            Some(json!("resumed"))
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
    let seen = seen.lock().unwrap().clone();
    let resumed: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.method == "GET" && s.header("last-event-id").is_some())
        .collect();
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].header("last-event-id"), Some("ev-1"));
    assert_eq!(resumed[0].header("mcp-session-id"), Some("s-1"));
}

#[tokio::test]
async fn a_stream_that_never_answers_is_resumed_a_bounded_number_of_times() {
    let (url, seen) = fake_http(move |seen| match (seen.method.as_str(), seen.rpc_method()) {
        ("POST", Some("initialize")) => json_reply("200 OK", "", &init_result(&seen.id())),
        ("POST", Some("tools/call")) | ("GET", _) if seen.method == "POST" || seen.header("last-event-id").is_some() => {
            Reply::Raw("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nid: again\nretry: 1\ndata: \n\n".into())
        }
        ("GET", _) => no_get_stream(),
        _ => accepted(),
    })
    .await;
    let client = client_for(&url, false);
    let err = timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        client.call("slow", json!({})).await.unwrap_err()
    })
    .await
    .unwrap();
    assert!(
        matches!(&err, ClientError::Transport(t) if t.contains("without a response")),
        "{err}"
    );
    let resumes = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "GET" && s.header("last-event-id").is_some())
        .count();
    assert_eq!(
        resumes,
        orkestrel_mcp::native::client::http::MAX_RESUMES as usize
    );
}

/// A handshake-era server that refuses any request without a session the way rmcp before
/// 2026-07-28 did (`422 Unexpected message, expect initialize request`): auto mode takes that
/// for a legacy server and connects with `initialize`
/// ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning):
/// fall back on any error that does not mark a modern server).
#[tokio::test]
async fn auto_falls_back_to_initialize_on_a_422_to_the_probe() {
    let (url, seen) = fake_http(move |seen| match (seen.method.as_str(), seen.rpc_method()) {
        ("POST", Some("initialize")) => {
            json_reply("200 OK", "mcp-session-id: s-1\r\n", &init_result(&seen.id()))
        }
        ("POST", Some("tools/list")) if seen.header("mcp-session-id") == Some("s-1") => json_reply(
            "200 OK",
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[]}}}}"#, seen.id()),
        ),
        ("POST", Some(_)) if seen.header("mcp-session-id").is_none() => Reply::Raw(
            "HTTP/1.1 422 Unprocessable Entity\r\ncontent-length: 45\r\nconnection: close\r\n\r\nUnexpected message, expect initialize request".into(),
        ),
        ("GET", _) => no_get_stream(),
        _ => accepted(),
    })
    .await;
    let client = http_client_to(&url, era_options(orkestrel_mcp::client::ClientEra::Auto));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(client.era(), Some(orkestrel_mcp::era::Era::Legacy));
        assert!(client.list_tools().await.unwrap().is_empty());
        client.disconnect().await;
    })
    .await
    .unwrap();
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| s.rpc_method().map(str::to_owned))
        .collect();
    assert_eq!(
        methods[..2],
        ["server/discover", "initialize"],
        "{methods:?}"
    );
}

/// A server mounted at `/mcp/` (Starlette's `Mount`) answers `/mcp` with `307` to `/mcp/`: the
/// client follows it on the same origin, method and body unchanged, as a browser's `fetch` does;
/// another origin is not followed (the caller's headers stay with the URL given), and a loop ends
/// after `MAX_REDIRECTS`.
#[tokio::test]
async fn a_redirect_on_the_same_origin_is_followed_and_another_origin_is_not() {
    use orkestrel_mcp::client::ClientEra;
    let redirect = |to: &str| {
        Reply::Raw(format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ))
    };
    let (url, seen) = fake_http(move |seen| {
        match (
            seen.target.as_str(),
            seen.method.as_str(),
            seen.rpc_method(),
        ) {
            ("/mcp", _, _) => redirect("/mcp/"),
            ("/mcp/", "POST", Some("initialize")) => json_reply(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                &init_result(&seen.id()),
            ),
            ("/mcp/", "POST", Some("tools/list")) => json_reply(
                "200 OK",
                "",
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[]}}}}"#,
                    seen.id()
                ),
            ),
            ("/mcp/", "GET", _) => no_get_stream(),
            ("/elsewhere", _, _) => redirect("http://127.0.0.2:9/mcp"),
            ("/loop", _, _) => redirect("/loop"),
            _ => accepted(),
        }
    })
    .await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert!(client.list_tools().await.unwrap().is_empty());
        client.disconnect().await;
    })
    .await
    .unwrap();
    let posts: Vec<(String, Option<String>)> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "POST" && s.rpc_method() == Some("tools/list"))
        .map(|s| {
            (
                s.target.clone(),
                s.header("mcp-session-id").map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        posts,
        [
            ("/mcp".to_owned(), Some("s-1".to_owned())),
            ("/mcp/".to_owned(), Some("s-1".to_owned()))
        ]
    );
    // The session's DELETE follows the redirect too (it was left at `/mcp`'s 307 and the
    // session to expire).
    assert_eq!(
        requests_of(&seen, "DELETE"),
        [
            ("/mcp".to_owned(), Some("s-1".to_owned())),
            ("/mcp/".to_owned(), Some("s-1".to_owned()))
        ]
    );
    for (path, says) in [
        ("elsewhere", "another origin"),
        ("loop", "more than 5 redirects"),
    ] {
        let other = url.replace("/mcp", &format!("/{path}"));
        let client = http_client_to(&other, era_options(ClientEra::Legacy));
        let err = timeout(HANG_GUARD, client.connect())
            .await
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains(says), "{path}: {err}");
    }
}

/// Each request of `method` the fake server saw: its path and session id, in order.
fn requests_of(seen: &Arc<Mutex<Vec<Seen>>>, method: &str) -> Vec<(String, Option<String>)> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == method)
        .map(|s| {
            (
                s.target.clone(),
                s.header("mcp-session-id").map(str::to_owned),
            )
        })
        .collect()
}

/// A permanent redirect (`308`, RFC 9110 §15.4.9) moves the endpoint: after the `initialize`
/// that met it, every request, the GET stream and the session's DELETE go to the new URL at
/// once (each took two round trips, and the DELETE was left at the old one).
#[tokio::test]
async fn a_permanent_redirect_moves_the_endpoint_for_every_later_request() {
    use orkestrel_mcp::client::ClientEra;
    let (url, seen) = fake_http(move |seen| {
        match (
            seen.target.as_str(),
            seen.method.as_str(),
            seen.rpc_method(),
        ) {
            ("/mcp", _, _) => Reply::Raw(
                "HTTP/1.1 308 Permanent Redirect\r\nlocation: /v2/mcp\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            ),
            ("/v2/mcp", "POST", Some("initialize")) => json_reply(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                &init_result(&seen.id()),
            ),
            ("/v2/mcp", "POST", Some("tools/list")) => {
                result_reply(&seen.id(), json!({"tools": []}))
            }
            ("/v2/mcp", "GET", _) => no_get_stream(),
            _ => accepted(),
        }
    })
    .await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert!(client.list_tools().await.unwrap().is_empty());
        assert!(client.list_tools().await.unwrap().is_empty());
        client.disconnect().await;
    })
    .await
    .unwrap();
    let at_old: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.target == "/mcp")
        .map(|s| format!("{} {}", s.method, s.rpc_method().unwrap_or_default()))
        .collect();
    assert_eq!(
        at_old,
        ["POST initialize"],
        "only the first request met the 308"
    );
    assert_eq!(
        requests_of(&seen, "DELETE"),
        [("/v2/mcp".to_owned(), Some("s-1".to_owned()))]
    );
}

/// A 2025-11-25 task that needs input (the TS and Python SDK servers' way): the server hands its
/// request to the client only on the `tasks/result` stream, so on `input_required` the client
/// calls `tasks/result` at once (spec: the requestor SHOULD) — polling `tasks/get` alone waited
/// forever.
#[tokio::test]
async fn a_task_that_needs_input_is_read_with_tasks_result_at_once() {
    use orkestrel_mcp::client::{ClientEra, ToolCall};
    let task = |status: &str| json!({"taskId": "T1", "status": status, "createdAt": "2026-12-05T00:00:00Z", "ttl": 60000, "pollInterval": 20});
    let (url, seen) = fake_http(move |seen| {
        let id = seen.id();
        let answer = |result: Value| result_reply(&id, result);
        match seen.rpc_method() {
            Some("initialize") => json_reply(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}, "list": {}, "cancel": {}}},
                    "serverInfo": {"name": "asking", "version": "1"}}})
                .to_string(),
            ),
            Some("tools/call") => answer(json!({"task": task("working")})),
            Some("tasks/get") => answer(task("input_required")),
            Some("tasks/result") => {
                answer(json!({"content": [{"type": "text", "text": "answered"}]}))
            }
            _ => accepted(),
        }
    })
    .await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    let statuses = Arc::new(Mutex::new(Vec::new()));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let ToolCall::Task(running) = client
            .call_tool_as_task("ask", json!({}), None)
            .await
            .unwrap()
        else {
            panic!("a task");
        };
        let seen_statuses = statuses.clone();
        let result = client
            .wait_task(&running, &move |t| {
                seen_statuses
                    .lock()
                    .unwrap()
                    .push(t.status.as_str().to_owned())
            })
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("answered"));
        client.disconnect().await;
    })
    .await
    .expect("the client polled a task that needs input forever");
    assert_eq!(*statuses.lock().unwrap(), ["input_required"]);
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| s.rpc_method().map(str::to_owned))
        .filter(|m| m.starts_with("tasks/"))
        .collect();
    assert_eq!(methods, ["tasks/get", "tasks/result"]);
}

/// One tool a server lists that does not parse (a `taskSupport` no revision defines, a title
/// that is not a string) is left out with a warning; the server's other tools are still listed
/// (it used to fail the whole listing, and the bridge took the upstream down with it).
#[tokio::test]
async fn a_tool_that_does_not_parse_is_left_out_of_the_listing() {
    use orkestrel_mcp::client::ClientEra;
    let (url, _seen) = fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        Some("tools/list") => json_reply(
            "200 OK",
            "",
            &json!({"jsonrpc": "2.0", "id": seen.id(), "result": {"tools": [
                {"name": "odd", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "sometimes"}},
                {"name": "good", "inputSchema": {"type": "object"}},
                {"name": "titled", "title": 5, "inputSchema": {"type": "object"}},
            ]}})
            .to_string(),
        ),
        _ => accepted(),
    })
    .await;
    let client = http_client_to(&url, era_options(ClientEra::Legacy));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["good"]);
        client.disconnect().await;
    })
    .await
    .unwrap();
}
