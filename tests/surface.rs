//! The MCP surface beyond the seed's four methods (spec 2025-11-25): resources, prompts,
//! completion, logging, pagination, progress, cancellation, server→client requests and
//! list-change / resource-update pushes — driven in process through `dispatch_with`.
#![cfg(not(target_family = "wasm"))] // plain #[test]s: native only (tests/wasm_*.rs run on wasm)

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::executor::block_on;
use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::primitives::resources::{Resource, ResourceContents, ResourceTemplate};
use orkestrel_mcp::server::context::{LogLevel, Outbound};
use orkestrel_mcp::server::{Completion, ListKind};
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp::{Content, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Map, Value};
use support::DEADLINE;

fn capture() -> (Outbound, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let outbound: Outbound = Arc::new(move |m: JsonRpcMessage| {
        s.lock().unwrap().push(serde_json::to_value(&m).unwrap());
        true
    });
    (outbound, seen)
}

fn full_server(page_size: Option<usize>) -> McpServer {
    let mut options = ServerOptions::new("surface", "1")
        .with_logging()
        .with_completer(|params, _| async move {
            let prefix = params["argument"]["value"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            let values = ["alpha", "beta", "alphabet"]
                .iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| v.to_string())
                .collect();
            Ok(Completion {
                values,
                total: None,
                has_more: None,
            })
        });
    options.page_size = page_size;
    let server = McpServer::new(options);
    server
        .resources()
        .add(Resource::text("mem://a", "a", "text/plain", "A").with_description("first"));
    server
        .resources()
        .add(Resource::text("mem://b", "b", "text/plain", "B"));
    server
        .resources()
        .add(Resource::text("mem://c", "c", "text/plain", "C"));
    server.resources().add_template(ResourceTemplate::new(
        "mem://items/{id}",
        "item",
        |uri, vars, _| async move {
            Ok(vec![ResourceContents::text(
                uri,
                Some("text/plain"),
                format!("item {}", vars["id"].as_str().unwrap()),
            )])
        },
    ));
    server.prompts().add(
        Prompt::new("greet", |args, _| async move {
            Ok(GetPromptResult {
                description: Some("a greeting".into()),
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::text(format!("hello {}", args["who"].as_str().unwrap())),
                }],
            })
        })
        .with_argument("who", "who", true),
    );
    server
}

fn call(server: &McpServer, ctx: RequestContext, text: &str) -> Option<Value> {
    let message = JsonRpcMessage::from_slice(text.as_bytes()).unwrap();
    block_on(server.dispatch_with(message, ctx)).map(|r| serde_json::to_value(r).unwrap())
}

fn rpc(server: &McpServer, method: &str, params: Value) -> Value {
    let text = json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string();
    call(server, RequestContext::new(), &text).unwrap()
}

#[test]
fn capabilities_advertise_only_what_the_server_has() {
    let bare = McpServer::new(ServerOptions::new("bare", "1"));
    assert_eq!(bare.capabilities(), json!({"tools":{"listChanged":true}}));
    for method in [
        "resources/list",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
    ] {
        assert_eq!(
            rpc(&bare, method, json!({}))["error"]["code"],
            -32601,
            "{method}"
        );
    }
    let full = full_server(None);
    let init = rpc(
        &full,
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}),
    );
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"completions":{},"logging":{}})
    );
}

#[test]
fn resources_list_read_and_templates() {
    let s = full_server(None);
    let list = rpc(&s, "resources/list", json!({}));
    assert_eq!(
        list["result"]["resources"][0],
        json!({"uri":"mem://a","name":"a","description":"first","mimeType":"text/plain"})
    );
    assert_eq!(
        rpc(&s, "resources/templates/list", json!({}))["result"]["resourceTemplates"][0]
            ["uriTemplate"],
        "mem://items/{id}"
    );
    assert_eq!(
        rpc(&s, "resources/read", json!({"uri":"mem://b"}))["result"],
        json!({"contents":[{"uri":"mem://b","mimeType":"text/plain","text":"B"}]})
    );
    assert_eq!(
        rpc(&s, "resources/read", json!({"uri":"mem://items/42"}))["result"]["contents"][0]["text"],
        "item 42"
    );
    let missing = rpc(&s, "resources/read", json!({"uri":"mem://zzz"}));
    assert_eq!(
        (
            missing["error"]["code"].clone(),
            missing["error"]["data"]["uri"].clone()
        ),
        (json!(-32002), json!("mem://zzz"))
    );
    assert_eq!(
        rpc(&s, "resources/read", json!({}))["error"]["code"],
        -32602
    );
    assert_eq!(
        rpc(&s, "resources/read", json!({"uri": 1}))["error"]["code"],
        -32602
    );
}

#[test]
fn pagination_walks_every_page_and_rejects_bad_cursors() {
    let s = full_server(Some(2));
    let first = rpc(&s, "resources/list", json!({}));
    assert_eq!(first["result"]["resources"].as_array().unwrap().len(), 2);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let second = rpc(&s, "resources/list", json!({"cursor": cursor}));
    assert_eq!(second["result"]["resources"][0]["uri"], "mem://c");
    assert!(
        second["result"].get("nextCursor").is_none(),
        "the last page has no cursor"
    );
    for bad in [json!("nonsense"), json!("o99"), json!(7)] {
        assert_eq!(
            rpc(&s, "resources/list", json!({"cursor": bad}))["error"]["code"],
            -32602,
            "{bad}"
        );
    }
    assert!(rpc(&s, "tools/list", json!({}))["result"]
        .get("nextCursor")
        .is_none());
}

#[test]
fn prompts_list_and_get() {
    let s = full_server(None);
    assert_eq!(
        rpc(&s, "prompts/list", json!({}))["result"]["prompts"][0]["arguments"][0]["required"],
        true
    );
    let got = rpc(
        &s,
        "prompts/get",
        json!({"name":"greet","arguments":{"who":"ada"}}),
    );
    assert_eq!(
        got["result"],
        json!({"description":"a greeting","messages":[{"role":"user","content":{"type":"text","text":"hello ada"}}]})
    );
    assert_eq!(
        rpc(&s, "prompts/get", json!({"name":"greet"}))["error"]["code"],
        -32602
    );
    assert_eq!(
        rpc(&s, "prompts/get", json!({"name":"nope"}))["error"]["code"],
        -32602
    );
    assert_eq!(
        rpc(&s, "prompts/get", json!({"name":"greet","arguments":[]}))["error"]["code"],
        -32602
    );
}

#[test]
fn completion_answers_and_validates() {
    let s = full_server(None);
    let r = rpc(
        &s,
        "completion/complete",
        json!({"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"al"}}),
    );
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["alpha", "alphabet"])
    );
    assert_eq!(
        rpc(&s, "completion/complete", json!({"argument":{}}))["error"]["code"],
        -32602
    );
}

#[test]
fn log_level_is_per_scope_and_filters_tool_logs() {
    let s = full_server(None);
    s.tools().add(Tool::from_json(
        "chatty",
        json!({"type":"object"}),
        |_: Map<String, Value>, ctx: RequestContext| async move {
            ctx.log(LogLevel::Debug, None, json!("debug line"));
            ctx.log(LogLevel::Error, None, json!("error line"));
            Ok::<_, String>("done")
        },
    ));
    let (outbound, seen) = capture();
    // The host opens its scope (as an `initialize` on it would); a scope the server does not
    // know records no level.
    s.attach(&Arc::from("conn-1"), outbound.clone());
    let ctx = || {
        RequestContext::new()
            .with_outbound(outbound.clone())
            .with_scope("conn-1")
    };
    let set = call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}"#,
    )
    .unwrap();
    assert_eq!(set["result"], json!({}));
    call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty"}}"#,
    );
    let logs: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["params"]["data"].clone())
        .collect();
    assert_eq!(logs, vec![json!("error line")]);
    let bad = call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}"#,
    )
    .unwrap();
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn subscriptions_route_resource_updates_and_list_changes_reach_attached_scopes() {
    let s = full_server(None);
    let (outbound, seen) = capture();
    let scope: Arc<str> = Arc::from("sess-1");
    s.attach(&scope, outbound.clone());
    let ctx = || {
        RequestContext::new()
            .with_outbound(outbound.clone())
            .with_scope(scope.clone())
    };
    assert_eq!(
        s.notify_resource_updated("mem://a"),
        0,
        "not subscribed yet"
    );
    call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"mem://a"}}"#,
    );
    assert_eq!(s.notify_resource_updated("mem://a"), 1);
    assert_eq!(s.notify_resource_updated("mem://b"), 0);
    call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"mem://a"}}"#,
    );
    assert_eq!(s.notify_resource_updated("mem://a"), 0);
    assert_eq!(s.notify_list_changed(ListKind::Tools), 1);
    let methods: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert_eq!(
        methods,
        vec![
            json!("notifications/resources/updated"),
            json!("notifications/tools/list_changed")
        ]
    );
    s.end_scope(&scope);
    assert_eq!(
        s.notify_list_changed(ListKind::Prompts),
        0,
        "an ended scope gets nothing"
    );
}

#[tokio::test]
async fn server_to_client_requests_round_trip_and_fail_when_the_scope_ends() {
    let s = full_server(None);
    s.tools().add(Tool::from_json(
        "ask",
        json!({"type":"object"}),
        |_: Map<String, Value>, ctx: RequestContext| async move {
            let answer = ctx
                .create_message(json!({"messages":[],"maxTokens":5}))
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(answer["content"]["text"].as_str().unwrap_or("").to_owned())
        },
    ));
    let (outbound, seen) = capture();
    let ctx = RequestContext::new()
        .with_outbound(outbound.clone())
        .with_scope("conn-9");
    call(
        &s,
        ctx.clone(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    call(
        &s,
        ctx.clone(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let server = s.clone();
    let c2 = ctx.clone();
    let running = tokio::spawn(async move {
        let m = JsonRpcMessage::from_slice(
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .unwrap();
        server.dispatch_with(m, c2).await
    });
    let sampling = |seen: &Mutex<Vec<Value>>| {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == "sampling/createMessage")
            .cloned()
            .collect::<Vec<_>>()
    };
    support::eventually(DEADLINE, "the tool's sampling request", || {
        !sampling(&seen).is_empty()
    })
    .await;
    let request = sampling(&seen)[0].clone();
    let reply = json!({"jsonrpc":"2.0","id":request["id"],"result":{"role":"assistant","content":{"type":"text","text":"42"},"model":"m"}});
    assert_eq!(
        call(&s, ctx.clone(), &reply.to_string()),
        None,
        "responses are never answered"
    );
    let response = serde_json::to_value(running.await.unwrap().unwrap()).unwrap();
    assert_eq!(response["result"]["content"][0]["text"], "42");

    // A client without the capability is refused before anything is sent.
    let (o2, seen2) = capture();
    let ctx2 = RequestContext::new()
        .with_outbound(o2)
        .with_scope("conn-10");
    call(
        &s,
        ctx2.clone(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    let refused = call(
        &s,
        ctx2,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}"#,
    )
    .unwrap();
    assert_eq!(refused["result"]["isError"], true);
    assert!(seen2.lock().unwrap().is_empty());

    // Ending the scope fails a pending server→client request at once.
    let server = s.clone();
    let c3 = ctx.clone();
    let running = tokio::spawn(async move {
        let m = JsonRpcMessage::from_slice(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .unwrap();
        server.dispatch_with(m, c3).await
    });
    support::eventually(DEADLINE, "the second sampling request", || {
        sampling(&seen).len() == 2
    })
    .await;
    s.end_scope("conn-9");
    let outcome = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("no hang")
        .unwrap();
    assert!(
        outcome.is_none(),
        "the ended scope's call was cancelled, so it gets no response"
    );
}

#[tokio::test]
async fn notifications_cancelled_stops_the_running_tool_and_suppresses_its_response() {
    let s = full_server(None);
    let dropped = Arc::new(Mutex::new(false));
    let started = Arc::new(Mutex::new(false));
    let d = dropped.clone();
    let st = started.clone();
    s.tools().add(Tool::from_json(
        "forever",
        json!({"type":"object"}),
        move |_: Map<String, Value>, _| {
            let guard = DropFlag(d.clone());
            *st.lock().unwrap() = true;
            async move {
                let _guard = guard;
                futures::future::pending::<()>().await;
                Ok::<_, String>("never")
            }
        },
    ));
    let ctx = RequestContext::new().with_scope("conn-c");
    let server = s.clone();
    let c = ctx.clone();
    let running = tokio::spawn(async move {
        let m = JsonRpcMessage::from_slice(
            br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"forever"}}"#,
        )
        .unwrap();
        server.dispatch_with(m, c).await
    });
    support::eventually(DEADLINE, "the tool started", || *started.lock().unwrap()).await;
    // Another scope cannot cancel it.
    call(
        &s,
        RequestContext::new().with_scope("other"),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#,
    );
    // Had it been cancelled, the task would finish as soon as it runs again: let it run.
    support::settle().await;
    assert!(!running.is_finished());
    call(
        &s,
        ctx,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"user"}}"#,
    );
    let outcome = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("cancelled promptly")
        .unwrap();
    assert!(outcome.is_none());
    assert!(*dropped.lock().unwrap(), "the tool's future was dropped");
}

struct DropFlag(Arc<Mutex<bool>>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = true;
    }
}

#[test]
fn progress_notifications_follow_the_progress_token() {
    let s = full_server(None);
    s.tools().add(Tool::from_json(
        "steps",
        json!({"type":"object"}),
        |_: Map<String, Value>, ctx: RequestContext| async move {
            ctx.progress(1.0, Some(2.0), Some("half"));
            ctx.progress(2.0, Some(2.0), None);
            Ok::<_, String>("ok")
        },
    ));
    let (outbound, seen) = capture();
    call(
        &s,
        RequestContext::new().with_outbound(outbound.clone()),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"tok"}}}"#,
    );
    let progress: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(
        progress,
        vec![
            json!({"progressToken":"tok","progress":1,"total":2,"message":"half"}),
            json!({"progressToken":"tok","progress":2,"total":2})
        ]
    );
    seen.lock().unwrap().clear();
    call(
        &s,
        RequestContext::new().with_outbound(outbound),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps"}}"#,
    );
    assert!(seen.lock().unwrap().is_empty(), "no token, no progress");
}

#[test]
fn params_off_the_schema_are_refused_naming_the_member_never_echoing_the_value() {
    let s = full_server(None);
    let secret = "x".repeat(5000);
    for (method, params, member) in [
        (
            "tools/call",
            json!({"name": "echo", "arguments": [secret]}),
            r#""arguments" must be an object"#,
        ),
        (
            "tools/call",
            json!({"name": {"a": secret}}),
            r#""name" must be a string"#,
        ),
        (
            "resources/read",
            json!({"uri": 5}),
            r#""uri" must be a string"#,
        ),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": 1}}),
            r#""arguments.who" must be a string"#,
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "a"}}),
            r#"missing "argument.value""#,
        ),
        (
            "logging/setLevel",
            json!({"level": secret}),
            r#""level" must be one of"#,
        ),
        (
            "tools/list",
            json!({"_meta": {"progressToken": {"k": secret}}}),
            r#""_meta.progressToken" must be a string or an integer (of at most 64 bits)"#,
        ),
        (
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
            r#"missing "clientInfo""#,
        ),
        (
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}),
            r#"missing "clientInfo.version""#,
        ),
    ] {
        let reply = rpc(&s, method, params);
        assert_eq!(reply["error"]["code"], -32602, "{method}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(member), "{method}: {message}");
        assert!(
            !reply.to_string().contains("xxxxxxxx"),
            "{method}: the value is echoed"
        );
    }
    // A method the server does not serve stays -32601, whatever its params.
    let bare = McpServer::new(ServerOptions::new("bare", "1"));
    assert_eq!(
        rpc(&bare, "resources/read", json!({"uri": 5}))["error"]["code"],
        -32601
    );
}

#[test]
fn a_server_sends_no_log_or_list_change_it_did_not_declare() {
    // No `logging` capability: a tool's logs go nowhere; progress (asked for) still does.
    let s = McpServer::new(ServerOptions::new("quiet", "1"));
    s.tools().add(Tool::with_context(
        "talk",
        |_: Map<String, Value>, ctx: RequestContext| async move {
            let logged = ctx.log(LogLevel::Error, None, json!("nobody hears this"));
            let progressed = ctx.progress(1.0, None, None);
            Ok::<_, String>(format!("{logged} {progressed}"))
        },
    ));
    let (outbound, seen) = capture();
    let scope: Arc<str> = Arc::from("peer-1");
    s.attach(&scope, outbound.clone());
    let ctx = || {
        RequestContext::new()
            .with_outbound(outbound.clone())
            .with_scope(scope.clone())
    };
    let init = call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    )
    .unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": true}})
    );
    let reply = call(
        &s,
        ctx(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"talk","_meta":{"progressToken":"p"}}}"#,
    )
    .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "false true");
    // Resources and prompts were not declared to this peer: their list changes are not sent to
    // it, even after the registries fill (the next peer's initialize declares them).
    s.resources()
        .add(Resource::text("mem://z", "z", "text/plain", "Z"));
    s.prompts().add(Prompt::new("p", |_, _| async move {
        Ok(GetPromptResult {
            description: None,
            messages: vec![],
        })
    }));
    assert_eq!(s.notify_list_changed(ListKind::Resources), 0);
    assert_eq!(s.notify_list_changed(ListKind::Prompts), 0);
    assert_eq!(s.notify_list_changed(ListKind::Tools), 1);
    let methods: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert_eq!(
        methods,
        vec![
            json!("notifications/progress"),
            json!("notifications/tools/list_changed")
        ]
    );
}

#[test]
fn a_plain_tools_list_goes_out_as_shared_text_that_follows_the_registry() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}
    let server = McpServer::new(ServerOptions::new("t", "1"));
    server
        .tools()
        .add(Tool::new("a", |_: Empty| async { Ok::<_, String>("a") }));
    let list = |text: &str| {
        let message = JsonRpcMessage::from_slice(text.as_bytes()).unwrap();
        block_on(server.dispatch(message)).expect("a response")
    };
    let plain = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let first = list(plain);
    let result = first.payload.as_ref().expect("a result");
    assert!(result.is_raw(), "served from the cached text");
    assert_eq!(result["tools"][0]["name"], "a");
    let text = first.to_json();
    assert!(
        text.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a""#),
        "{text}"
    );
    // A cursor gets a page written for it from the same listing: the same text here.
    let paged = list(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"o0"}}"#);
    assert!(paged.payload.as_ref().unwrap().is_raw());
    assert_eq!(paged.to_json(), text);
    // A change to the registry is in the next answer.
    server
        .tools()
        .add(Tool::new("b", |_: Empty| async { Ok::<_, String>("b") }));
    let after = list(plain);
    assert_eq!(after.payload.as_ref().unwrap()["tools"][1]["name"], "b");
    server.tools().remove("a");
    let after = list(plain);
    assert_eq!(
        after.payload.as_ref().unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Params to check are checked: a bad `_meta` is still -32602.
    let bad = list(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":1.5}}}"#,
    );
    assert_eq!(bad.payload.unwrap_err().code.0, -32602);
}
