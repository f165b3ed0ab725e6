//! `orkestrel-mcp bridge` as a gateway: every upstream kind (a stdio child, Streamable HTTP,
//! WebSocket) to every downstream kind (stdio, Streamable HTTP, WebSocket), both protocol eras
//! on both sides, with progress, cancellation, logs, list changes and server→client requests
//! carried across; and `--config` with several upstreams (one broken), `/healthz`, `/status`.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use orkestrel_mcp::client::{ClientEra, ClientEvent, ClientHandler, McpClient, RequestOptions};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::server::context::LogLevel;
use orkestrel_mcp::server::ListKind;
use orkestrel_mcp::wire::jsonrpc::ErrorObject;
use orkestrel_mcp::{BoxFuture, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Map, Value};
use support::client::{era_options, http_client_to, ws_client_to, BIN};
use support::server::{spawn_listening, start, TestServer};
use support::{eventually, HANG_GUARD};
use tokio::time::timeout;

/// The names of the tools `client` lists.
async fn tool_names(client: &McpClient) -> Vec<String> {
    let tools = client.list_tools().await.unwrap();
    tools.into_iter().map(|t| t.name).collect()
}

/// Answers elicitation with `{"name": "Ada"}` and lists one root.
struct Answers;

impl ClientHandler for Answers {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}, "roots": {}})
    }
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let asked = params["message"].as_str().unwrap_or_default().to_owned();
        Box::pin(async move {
            Ok(json!({"action": "accept", "content": {"name": format!("Ada ({asked})")}}))
        })
    }
    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})) })
    }
}

/// Signals when a `hold` call's future is dropped upstream (the call was cancelled).
struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

type Cancelled = Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>;

/// An in-process upstream with tools that ask, log, report progress and hold forever.
async fn upstream() -> (TestServer, McpServer, Cancelled) {
    let server = McpServer::new(ServerOptions::new("upstream", "7").with_logging());
    let object = json!({"type": "object"});
    // Three requests at once: one round on 2026-07-28 (where each retry carries only the last
    // round's answers), three concurrent server→client requests in the handshake era.
    server.tools().add(Tool::from_json(
        "ask",
        object.clone(),
        |_a: Map<String, Value>, ctx: RequestContext| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let (first, second, roots) = futures::join!(
                ctx.elicit(json!({"message": "first?", "requestedSchema": schema})),
                ctx.elicit(json!({"message": "second?", "requestedSchema": schema})),
                ctx.list_roots()
            );
            let (first, second, roots) = (first?, second?, roots?);
            Ok::<_, ErrorObject>(format!(
                "{} / {} / {}",
                first["content"]["name"].as_str().unwrap_or("?"),
                second["content"]["name"].as_str().unwrap_or("?"),
                roots["roots"][0]["uri"].as_str().unwrap_or("?")
            ))
        },
    ));
    server.tools().add(Tool::from_json(
        "count",
        object.clone(),
        |_a: Map<String, Value>, ctx: RequestContext| async move {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), Some("counting"));
            }
            ctx.log(LogLevel::Info, Some("up"), json!("counted"));
            Ok::<_, String>("counted 3")
        },
    ));
    let cancelled: Cancelled = Arc::new(Mutex::new(None));
    let slot = cancelled.clone();
    server.tools().add(Tool::from_json(
        "hold",
        object,
        move |_a: Map<String, Value>, _ctx| {
            let guard = Dropped(slot.lock().unwrap().take());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok::<_, String>("never")
            }
        },
    ));
    let started = start(server.clone(), EndpointOptions::default()).await;
    (started, server, cancelled)
}

/// Our client over stdio to `orkestrel-mcp bridge --stdio ARGS…`.
fn through_stdio_bridge(args: &[&str], era: ClientEra) -> McpClient {
    let mut argv = vec!["bridge", "--stdio"];
    argv.extend_from_slice(args);
    McpClient::new(
        StdioTransport::new(
            StdioClientOptions::new(BIN)
                .with_args(argv)
                .with_env([("RUST_LOG", "warn"), ("PATH", "/usr/bin:/bin")])
                .quiet(),
        ),
        era_options(era).with_handler(Answers),
    )
}

/// Everything a gateway carries, through `client`: the upstream's tools, a call, progress,
/// a log, server→client requests (two elicitations and roots), a cancellation.
async fn carried_across(client: &McpClient, cancelled: &Cancelled, what: &str) {
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let logs = Arc::new(Mutex::new(Vec::<Value>::new()));
        let seen = logs.clone();
        client.on(move |event| {
            if let ClientEvent::Notification(n) = event {
                if n.method == "notifications/message" {
                    seen.lock()
                        .unwrap()
                        .push(n.params.clone().map(Value::Object).unwrap_or_default());
                }
            }
        });
        let names = tool_names(client).await;
        assert_eq!(names, ["ask", "count", "hold"], "{what}");

        let progress = Arc::new(Mutex::new(Vec::new()));
        let noted = progress.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |p: &orkestrel_mcp::client::Progress| {
                noted.lock().unwrap().push((p.progress, p.total));
            })),
            // A 2026-07-28 client asks for logs per request; a handshake-era one gets all.
            log_level: Some(LogLevel::Info),
            ..RequestOptions::default()
        };
        let counted = client.call_with("count", json!({}), options).await.unwrap();
        assert_eq!(counted, Some(json!("counted 3")), "{what}");
        assert_eq!(
            *progress.lock().unwrap(),
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "{what}: progress"
        );
        eventually(HANG_GUARD, "the upstream's log arrives", || {
            logs.lock()
                .unwrap()
                .iter()
                .any(|l| l["data"] == "counted" && l["logger"] == "up")
        })
        .await;

        let asked = client.call("ask", json!({})).await.unwrap();
        assert_eq!(
            asked,
            Some(json!("Ada (first?) / Ada (second?) / file:///work")),
            "{what}: elicitation twice and roots, answered by our client"
        );

        let (tx, rx) = tokio::sync::oneshot::channel();
        *cancelled.lock().unwrap() = Some(tx);
        let held = client
            .call_with(
                "hold",
                json!({}),
                RequestOptions::with_timeout(Duration::from_millis(300)),
            )
            .await;
        assert!(held.unwrap_err().is_timeout(), "{what}");
        timeout(HANG_GUARD, rx)
            .await
            .unwrap_or_else(|_| panic!("{what}: the upstream call is cancelled"))
            .unwrap();
        client.disconnect().await;
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: hung"));
}

#[tokio::test]
async fn stdio_downstream_reaches_http_and_websocket_upstreams_in_both_eras() {
    let (up, _server, cancelled) = upstream().await;
    for (upstream_url, toward) in [
        (up.url(), "legacy"),
        (up.url(), "modern"),
        (up.ws_url(), "auto"),
    ] {
        for downstream in [ClientEra::Legacy, ClientEra::Modern] {
            let what = format!("{upstream_url} ({toward}) → stdio ({downstream:?})");
            let client = through_stdio_bridge(&["--era", toward, &upstream_url], downstream);
            carried_across(&client, &cancelled, &what).await;
        }
    }
}

#[tokio::test]
async fn http_and_websocket_downstreams_reach_an_http_upstream() {
    let (up, _server, cancelled) = upstream().await;
    let (url, _bridge) =
        spawn_listening(&["bridge", "--http", "127.0.0.1:0", &up.url()], "warn").await;
    for era in [ClientEra::Legacy, ClientEra::Modern] {
        let http = http_client_to(&url, era_options(era).with_handler(Answers));
        carried_across(&http, &cancelled, &format!("http ({era:?})")).await;
    }
    let ws = ws_client_to(&url, era_options(ClientEra::Legacy).with_handler(Answers));
    carried_across(&ws, &cancelled, "ws").await;
}

#[tokio::test]
async fn an_upstream_list_change_is_mirrored_and_announced() {
    let (up, server, _cancelled) = upstream().await;
    let client = through_stdio_bridge(&[&up.url()], ClientEra::Legacy);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let announced = Arc::new(Mutex::new(0));
        let count = announced.clone();
        client.on(move |event| {
            if matches!(event, ClientEvent::Notification(n) if n.method == "notifications/tools/list_changed") {
                *count.lock().unwrap() += 1;
            }
        });
        server.tools().add(Tool::from_json("late", json!({"type": "object"}), |_a: Map<String, Value>, _c| async {
            Ok::<_, String>("late")
        }));
        server.notify_list_changed(ListKind::Tools);
        eventually(HANG_GUARD, "the bridge announces the change", || *announced.lock().unwrap() > 0).await;
        let names = tool_names(&client).await;
        assert!(names.contains(&"late".to_owned()), "{names:?}");
        assert_eq!(client.call("late", json!({})).await.unwrap(), Some(json!("late")));
        client.disconnect().await;
    })
    .await
    .unwrap();
}

/// A storm of one kind of list change never crowds out another: an upstream answers a call with
/// 50 tool changes and one prompt change in one SSE chunk, and the bridge lists its prompts
/// again (changes coalesce per kind; a bounded queue of kinds dropped the prompt change for good).
#[tokio::test]
async fn a_storm_of_tool_changes_does_not_lose_a_prompt_change() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use support::client::{accepted, fake_http, json_reply, no_get_stream, result_reply, Reply};
    let mutated = Arc::new(AtomicBool::new(false));
    let m = mutated.clone();
    let (url, _seen) = fake_http(move |seen| {
        let id = seen.id();
        let result = |r: Value| result_reply(&id, r);
        match (seen.method.as_str(), seen.rpc_method()) {
            ("POST", Some("initialize")) => json_reply(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {"listChanged": true}, "prompts": {"listChanged": true}},
                    "serverInfo": {"name": "stormy", "version": "1"}}}).to_string(),
            ),
            ("POST", Some("tools/list")) => result(json!({"tools": [{"name": "mutate", "inputSchema": {"type": "object"}}]})),
            ("POST", Some("prompts/list")) => {
                let mut prompts = vec![json!({"name": "p1"})];
                if m.load(Ordering::SeqCst) {
                    prompts.push(json!({"name": "p2"}));
                }
                result(json!({"prompts": prompts}))
            }
            ("POST", Some("tools/call")) => {
                m.store(true, Ordering::SeqCst);
                let mut events = String::new();
                for _ in 0..50 {
                    events.push_str("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n");
                }
                events.push_str("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n\n");
                events.push_str(&format!(
                    "data: {}\n\n",
                    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "done"}]}})
                ));
                Reply::Raw(format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{events}"
                ))
            }
            ("GET", _) => no_get_stream(),
            _ => accepted(),
        }
    })
    .await;
    let client = through_stdio_bridge(&["--era", "legacy", &url], ClientEra::Legacy);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(client.list_prompts().await.unwrap().len(), 1);
        assert_eq!(
            client.call("mutate", json!({})).await.unwrap(),
            Some(json!("done"))
        );
        support::eventually_async(HANG_GUARD, "the bridge lists the new prompt", || {
            let client = client.clone();
            async move {
                client
                    .list_prompts()
                    .await
                    .is_ok_and(|p| p.iter().any(|p| p["name"] == "p2"))
            }
        })
        .await;
        client.disconnect().await;
    })
    .await
    .unwrap();
}

/// An upstream tool that runs only as a task (`taskSupport: "required"`) is served plain by
/// the bridge (it declares no tasks downstream): a plain call runs it upstream as a task, polled
/// to its result. A tool the upstream lists twice is served once (the first), not reported as a
/// collision.
#[tokio::test]
async fn a_tool_the_upstream_runs_only_as_a_task_is_served_plain() {
    use support::client::{accepted, fake_http, json_reply, no_get_stream, result_reply};
    let task = |status: &str| json!({"taskId": "T1", "status": status, "createdAt": "2026-12-05T00:00:00Z", "ttl": 60000, "pollInterval": 20});
    let (url, seen) = fake_http(move |seen| {
        let id = seen.id();
        let body = seen.body.clone().unwrap_or(Value::Null);
        let answer = |result: Value| result_reply(&id, result);
        match (seen.method.as_str(), seen.rpc_method()) {
            ("POST", Some("initialize")) => json_reply(
                "200 OK",
                "mcp-session-id: s-1\r\n",
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}}},
                    "serverInfo": {"name": "tasky", "version": "1"}}})
                .to_string(),
            ),
            ("POST", Some("tools/list")) => answer(json!({"tools": [
                {"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "echo", "description": "second echo", "inputSchema": {"type": "object"}},
            ]})),
            ("POST", Some("tools/call")) if body["params"].get("task").is_some() => {
                answer(json!({"task": task("working")}))
            }
            ("POST", Some("tools/call")) => json_reply(
                "200 OK",
                "",
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "job requires task augmentation"}}).to_string(),
            ),
            ("POST", Some("tasks/get")) => answer(task("completed")),
            ("POST", Some("tasks/result")) => {
                answer(json!({"content": [{"type": "text", "text": "job done"}]}))
            }
            ("GET", _) => no_get_stream(),
            _ => accepted(),
        }
    })
    .await;
    let client = through_stdio_bridge(&["--era", "legacy", &url], ClientEra::Legacy);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let tools = client.list_tools().await.unwrap();
        let shown: Vec<(String, Option<String>, bool)> = tools
            .iter()
            .map(|t| (t.name.clone(), t.description.clone(), t.execution.is_some()))
            .collect();
        assert_eq!(
            shown,
            [
                ("job".to_owned(), None, false),
                ("echo".to_owned(), None, false)
            ]
        );
        assert_eq!(
            client.call("job", json!({})).await.unwrap(),
            Some(json!("job done"))
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
    let tasks: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| s.rpc_method().map(str::to_owned))
        .filter(|m| m.starts_with("tasks/"))
        .collect();
    assert_eq!(tasks, ["tasks/get", "tasks/result"]);
}

/// `GET path` on the bridge at `url`'s address: the status and the body as JSON (or text).
async fn get(url: &str, path: &str) -> (u16, Value) {
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let reply = support::http::request(addr, hyper::Method::GET, path, &[], "").await;
    let body = serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body.clone()));
    (reply.status, body)
}

#[tokio::test]
async fn a_config_of_three_servers_serves_the_two_live_ones_and_reports_the_broken_one() {
    let (up, _server, _cancelled) = upstream().await;
    let config = json!({"mcpServers": {
        "ours": {"command": BIN, "args": ["serve", "--stdio"], "env": {"RUST_LOG": "warn"}},
        "remote": {"type": "http", "url": up.url(), "ignore": ["hold"]},
        "broken": {"command": "/nonexistent/mcp-server", "autoApprove": []},
        "leaky": {"command": "sh", "args": ["-c", "echo STDERRSECRET >&2; exit 3"]},
        "creds": {"url": "http://user:PWSECRET@127.0.0.1:1/mcp?token=QSECRET"},
    }});
    let path = std::env::temp_dir().join(format!("orkestrel-bridge-{}.json", std::process::id()));
    std::fs::write(&path, config.to_string()).unwrap();
    let (url, _bridge) = spawn_listening(
        &[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--config",
            path.to_str().unwrap(),
        ],
        "warn",
    )
    .await;
    assert_eq!(get(&url, "/healthz").await, (200, json!("ok\n")));
    // Both live servers come up; the broken one is down with its error, and retried.
    support::eventually_async(
        HANG_GUARD,
        "two upstreams up, the broken one retried",
        || {
            let url = url.clone();
            async move {
                let (_, status) = get(&url, "/status").await;
                let by_name = |n: &str| {
                    status["upstreams"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|u| u["name"] == n)
                        .cloned()
                        .unwrap()
                };
                status["up"] == 2
                    && by_name("ours")["state"] == "up"
                    && by_name("remote")["tools"] == 2
                    && by_name("broken")["state"] != "up"
                    && by_name("broken")["restarts"].as_u64().unwrap_or(0) >= 1
                    && by_name("broken")["lastError"]
                        .as_str()
                        .is_some_and(|e| e.contains("nonexistent"))
                    && by_name("leaky")["restarts"].as_u64().unwrap_or(0) >= 1
                    && by_name("creds")["restarts"].as_u64().unwrap_or(0) >= 1
            }
        },
    )
    .await;
    let (_, status) = get(&url, "/status").await;
    let shown = status.to_string();
    for secret in ["RUST_LOG", "STDERRSECRET", "PWSECRET", "QSECRET"] {
        assert!(!shown.contains(secret), "{secret} in /status: {status}");
    }
    assert!(
        shown.contains("http://127.0.0.1:1/mcp") && shown.contains("exit status: 3"),
        "{status}"
    );
    // /status is under the endpoint's Host check, and only read.
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let rebound = support::http::request(
        addr,
        hyper::Method::GET,
        "/status",
        &[("host", "evil.example.com")],
        "",
    )
    .await;
    assert_eq!(rebound.status, 403);
    let posted = support::http::request(addr, hyper::Method::POST, "/status", &[], "").await;
    assert_eq!(posted.status, 405);

    // The merged endpoint: prefixed names from the two live servers, calls routed right.
    let merged = http_client_to(&url, era_options(ClientEra::Legacy).with_handler(Answers));
    timeout(HANG_GUARD, async {
        merged.connect().await.unwrap();
        let names = tool_names(&merged).await;
        for want in ["ours__echo", "ours__add", "remote__ask", "remote__count"] {
            assert!(names.contains(&want.to_owned()), "{want} in {names:?}");
        }
        assert!(
            !names
                .iter()
                .any(|n| n == "remote__hold" || n.starts_with("broken__")),
            "{names:?}"
        );
        // Its upstreams may come later: every list is declared from the start.
        let caps = merged.server_capabilities().unwrap();
        assert!(
            caps.get("prompts").is_some() && caps.get("resources").is_some(),
            "{caps}"
        );
        assert_eq!(
            merged
                .call("ours__echo", json!({"text": "routed"}))
                .await
                .unwrap(),
            Some(json!("routed"))
        );
        assert_eq!(
            merged.call("remote__count", json!({})).await.unwrap(),
            Some(json!("counted 3"))
        );
        let err = merged.call("remote__hold", json!({})).await.unwrap_err();
        assert_eq!(
            err.code().map(|c| c.0),
            Some(-32602),
            "an ignored tool is unknown"
        );
        merged.disconnect().await;
    })
    .await
    .unwrap();

    // Each server on its own path, unprefixed, in the other era.
    let own = http_client_to(
        &url.replace("/mcp", "/servers/remote/mcp"),
        era_options(ClientEra::Modern).with_handler(Answers),
    );
    timeout(HANG_GUARD, async {
        own.connect().await.unwrap();
        let names = tool_names(&own).await;
        assert_eq!(names, ["ask", "count"]);
        assert_eq!(
            own.call("ask", json!({})).await.unwrap(),
            Some(json!("Ada (first?) / Ada (second?) / file:///work"))
        );
    })
    .await
    .unwrap();
    // WebSocket on a server's own path too.
    let ws = ws_client_to(
        &url.replace("/mcp", "/servers/ours/mcp"),
        era_options(ClientEra::Legacy),
    );
    timeout(HANG_GUARD, async {
        ws.connect().await.unwrap();
        assert_eq!(
            ws.call("echo", json!({"text": "ws"})).await.unwrap(),
            Some(json!("ws"))
        );
        ws.disconnect().await;
    })
    .await
    .unwrap();
    let _ = std::fs::remove_file(&path);
}

/// The servers of a `--config` file: each name a `serve --stdio` of ours.
fn ours(names: &[&str]) -> String {
    let servers: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                json!({"command": BIN, "args": ["serve", "--stdio"], "env": {"RUST_LOG": "warn"}}),
            )
        })
        .collect();
    json!({ "mcpServers": servers }).to_string()
}

#[tokio::test]
async fn sighup_reloads_the_config_touching_only_the_servers_that_changed() {
    use tokio::io::AsyncBufReadExt;
    let path = std::env::temp_dir().join(format!("orkestrel-reload-{}.json", std::process::id()));
    std::fs::write(&path, ours(&["a"])).unwrap();
    let mut bridge = tokio::process::Command::new(BIN)
        .args([
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--log-calls",
            "--config",
            path.to_str().unwrap(),
        ])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(bridge.stderr.take().unwrap()).lines();
    let url = timeout(HANG_GUARD, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("a serving line");
            if let Some(i) = line.find("http://") {
                return line[i..].split_whitespace().next().unwrap().to_owned();
            }
        }
    })
    .await
    .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    let status_of = |name: &'static str| {
        let url = url.clone();
        async move {
            let (_, status) = get(&url, "/status").await;
            status["upstreams"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["name"] == name)
                .cloned()
        }
    };
    support::eventually_async(HANG_GUARD, "a is up", || async {
        status_of("a").await.is_some_and(|a| a["state"] == "up")
    })
    .await;
    let merged = http_client_to(&url, era_options(ClientEra::Legacy));
    merged.connect().await.unwrap();
    assert_eq!(
        merged
            .call("a__echo", json!({"text": "before"}))
            .await
            .unwrap(),
        Some(json!("before"))
    );
    eventually(HANG_GUARD, "--log-calls logs the call", || {
        let log = log.lock().unwrap();
        log.lines()
            .any(|l| l.contains("call: ok") && l.contains("server=a") && l.contains("echo"))
    })
    .await;
    // A call its client gives up on is logged as cancelled.
    let late = merged
        .call_with(
            "a__sleep",
            json!({"ms": 5000}),
            RequestOptions::with_timeout(Duration::from_millis(200)),
        )
        .await;
    assert!(late.unwrap_err().is_timeout());
    eventually(HANG_GUARD, "--log-calls logs the cancelled call", || {
        let log = log.lock().unwrap();
        log.lines()
            .any(|l| l.contains("call: cancelled") && l.contains("sleep"))
    })
    .await;

    // b added, a unchanged: a goes on (same process, its two calls counted), b comes up.
    std::fs::write(&path, ours(&["a", "b"])).unwrap();
    let pid = nix::unistd::Pid::from_raw(bridge.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    support::eventually_async(HANG_GUARD, "b comes up", || async {
        status_of("b").await.is_some_and(|b| b["state"] == "up")
    })
    .await;
    let a = status_of("a").await.unwrap();
    assert_eq!(
        (a["calls"].as_u64(), a["restarts"].as_u64()),
        (Some(2), Some(0)),
        "{a}"
    );
    assert_eq!(
        merged
            .call("b__echo", json!({"text": "new"}))
            .await
            .unwrap(),
        Some(json!("new"))
    );

    // a removed: its names leave /mcp, b goes on; a broken file changes nothing.
    std::fs::write(&path, ours(&["b"])).unwrap();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    support::eventually_async(HANG_GUARD, "a leaves", || async {
        status_of("a").await.is_none()
    })
    .await;
    let names = tool_names(&merged).await;
    assert!(
        names.iter().all(|n| !n.starts_with("a__")) && names.contains(&"b__echo".to_owned()),
        "{names:?}"
    );
    std::fs::write(&path, "{ not json").unwrap();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    eventually(HANG_GUARD, "the broken file is reported", || {
        log.lock().unwrap().contains("config not reloaded")
    })
    .await;
    assert!(status_of("b").await.is_some_and(|b| b["state"] == "up"));
    merged.disconnect().await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn watch_reloads_the_config_when_the_file_changes() {
    let path = std::env::temp_dir().join(format!("orkestrel-watch-{}.json", std::process::id()));
    std::fs::write(&path, ours(&["a"])).unwrap();
    let (url, _bridge) = spawn_listening(
        &[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--watch",
            "--config",
            path.to_str().unwrap(),
        ],
        "warn",
    )
    .await;
    let names = |status: &Value| -> Vec<String> {
        status["upstreams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap().to_owned())
            .collect()
    };
    support::eventually_async(HANG_GUARD, "a listed", || async {
        names(&get(&url, "/status").await.1) == ["a"]
    })
    .await;
    std::fs::write(&path, ours(&["a", "c"])).unwrap();
    support::eventually_async(HANG_GUARD, "c listed without a signal", || async {
        names(&get(&url, "/status").await.1) == ["a", "c"]
    })
    .await;
    let _ = std::fs::remove_file(&path);
}

/// A config caught half written (here: a file that does not parse) is read again at the next
/// tick even when the finished file shows the same modification time and size: `std::fs::write`
/// truncates, then writes, and both can fall within one tick of the file system's clock.
#[tokio::test]
async fn watch_reads_a_file_that_did_not_parse_again_even_at_the_same_time_and_size() {
    use tokio::io::AsyncBufReadExt;
    let path =
        std::env::temp_dir().join(format!("orkestrel-watch-half-{}.json", std::process::id()));
    std::fs::write(&path, ours(&["a"])).unwrap();
    let mut bridge = tokio::process::Command::new(BIN)
        .args([
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--watch",
            "--config",
            path.to_str().unwrap(),
        ])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(bridge.stderr.take().unwrap()).lines();
    let url = timeout(HANG_GUARD, async {
        loop {
            let line = lines.next_line().await.unwrap().expect("a serving line");
            if let Some(i) = line.find("http://") {
                return line[i..].split_whitespace().next().unwrap().to_owned();
            }
        }
    })
    .await
    .unwrap();
    let names = |status: &Value| -> Vec<String> {
        status["upstreams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["name"].as_str().unwrap().to_owned())
            .collect()
    };
    support::eventually_async(HANG_GUARD, "a listed", || async {
        names(&get(&url, "/status").await.1) == ["a"]
    })
    .await;
    // The finished file, and a half-written one of the same size that does not parse.
    let finished = ours(&["a", "c"]);
    let half = format!("x{}", &finished[1..]);
    std::fs::write(&path, &half).unwrap();
    let half_time = std::fs::metadata(&path).unwrap().modified().unwrap();
    timeout(HANG_GUARD, async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the refusal's log line");
            if line.contains("config not reloaded") {
                break;
            }
        }
    })
    .await
    .expect("the half-written file refused within the guard");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    std::fs::write(&path, &finished).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(half_time)
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), half.len() as u64);
    support::eventually_async(
        HANG_GUARD,
        "c listed though time and size did not change",
        || async { names(&get(&url, "/status").await.1) == ["a", "c"] },
    )
    .await;
    let _ = std::fs::remove_file(&path);
}
