//! The 2026-07-28 client rules over a scripted transport (no I/O): `_meta` on every request,
//! headers, the `-32022` retry, the probe's fallback signals, input-required rounds and state
//! echo, and listen demultiplexing.

use std::sync::Mutex;
use std::time::Duration;

use futures::executor::block_on;
use serde_json::{json, Value};

use crate::client::handlers::ClientHandler;
use crate::client::test_support::{Log, Reply, Scripted};
use crate::client::{ClientEra, ClientError, ClientOptions, McpClient};
use crate::era::{Era, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

struct Answers;
impl ClientHandler for Answers {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {}, "roots": {}})
    }
    fn elicit(&self, _params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"action":"accept","content":{"ok":true}})) })
    }
    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"roots":[]})) })
    }
}

fn discover() -> Reply {
    Reply::Result(
        json!({"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],
        "capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}),
    )
}

fn initialize() -> Reply {
    Reply::Result(json!({"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"old","version":"1"}}))
}

fn client(t: Scripted, era: ClientEra) -> McpClient {
    McpClient::new(
        t,
        ClientOptions::new("c", "1")
            .with_era(era)
            .with_timeout(Duration::from_millis(300))
            .with_handler(Answers),
    )
}

fn methods(log: &Log) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .map(|(v, _)| v["method"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn header<'a>(h: &'a Option<Vec<(String, String)>>, name: &str) -> Option<&'a str> {
    h.as_ref()?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn every_modern_request_carries_meta_and_matching_headers() {
    let (t, log) = Scripted::new(true, |method, _p, _n| match method {
        "server/discover" => discover(),
        "tools/list" => Reply::Result(json!({"tools":[
            {"name":"ok","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}]})),
        _ => Reply::Result(json!({"content":[]})),
    });
    let c = client(t, ClientEra::Modern);
    block_on(async {
        c.connect().await.unwrap();
        assert_eq!(c.era(), Some(Era::Modern));
        assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
        let tools = c.list_tools().await.unwrap();
        assert_eq!(
            tools.len(),
            1,
            "the tool with an invalid annotation is dropped"
        );
        c.call_tool("ok", json!({"region":"über"})).await.unwrap();
    });
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 3);
    for (v, h) in log.iter() {
        let meta = &v["params"]["_meta"];
        assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(
            meta[META_CLIENT_CAPABILITIES],
            json!({"elicitation": {}, "roots": {}})
        );
        assert_eq!(meta[META_CLIENT_INFO], json!({"name":"c","version":"1"}));
        assert_eq!(header(h, "MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(header(h, "Mcp-Method"), v["method"].as_str());
    }
    let call = &log[2].1;
    assert_eq!(header(call, "Mcp-Name"), Some("ok"));
    assert_eq!(
        header(call, "Mcp-Param-Region"),
        Some("=?base64?w7xiZXI=?=")
    );
}

#[test]
fn unsupported_version_is_retried_once_with_a_supported_one() {
    let rejection = |requested: &str| {
        Reply::Status(
            400,
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no",
            "data":{"supported":["2026-07-28"],"requested":requested}}}),
        )
    };
    // The first request of each kind is rejected once; the retry succeeds.
    let (t, log) = Scripted::new(true, move |method, _p, n| match (method, n) {
        ("server/discover", 1) => rejection("x"),
        ("server/discover", _) => discover(),
        ("tools/list", 1) => rejection("2026-07-28"),
        ("tools/list", _) => Reply::Result(json!({"tools":[]})),
        _ => rejection("2026-07-28"),
    });
    let c = client(t, ClientEra::Modern);
    block_on(async {
        c.connect().await.unwrap();
        c.list_tools().await.unwrap();
        // Always rejected: one retry, then the error.
        let e = c.call_tool("t", json!({})).await.unwrap_err();
        assert_eq!(e.code().map(|c| c.0), Some(-32022));
    });
    assert_eq!(
        methods(&log),
        [
            "server/discover",
            "server/discover",
            "tools/list",
            "tools/list",
            "tools/call",
            "tools/call"
        ]
    );
}

#[test]
fn auto_over_http_falls_back_on_non_modern_4xx() {
    for (reply, legacy) in [
        (Reply::Status(400, Value::Null), true),
        // rmcp before 2026-07-28 refuses a request without a session this way.
        (Reply::Status(422, Value::Null), true),
        (Reply::Status(415, Value::Null), true),
        (Reply::Status(404, Value::Null), true),
        (Reply::Status(405, Value::Null), true),
        (
            Reply::Status(
                400,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID"}}),
            ),
            true,
        ),
        (
            Reply::Status(
                404,
                json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}),
            ),
            false,
        ),
        (
            Reply::Status(
                400,
                json!({"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"hdr"}}),
            ),
            false,
        ),
        (discover(), false),
    ] {
        let reply = Mutex::new(Some(reply));
        let (t, log) = Scripted::new(true, move |method, _p, _n| match method {
            "server/discover" => reply.lock().unwrap().take().unwrap_or(Reply::Silence),
            "initialize" => initialize(),
            _ => Reply::Result(json!({"tools":[]})),
        });
        let c = client(t, ClientEra::Auto);
        block_on(c.connect()).unwrap();
        let want = if legacy { Era::Legacy } else { Era::Modern };
        assert_eq!(c.era(), Some(want), "{:?}", methods(&log));
        assert_eq!(methods(&log).contains(&"initialize".to_owned()), legacy);
    }
    // 401 is not an era signal, nor is a server error or "too many requests".
    for status in [401, 429, 503] {
        let (t, _) = Scripted::new(true, move |_, _, _| Reply::Status(status, Value::Null));
        let c = client(t, ClientEra::Auto);
        assert!(
            matches!(block_on(c.connect()), Err(ClientError::HttpStatus { status: s, .. }) if s == status),
            "{status}"
        );
    }
}

#[test]
fn auto_over_stdio_falls_back_on_other_errors_and_silence_and_caches_the_era() {
    for (reply, legacy) in [
        (
            Reply::Error(json!({"code":-32601,"message":"Method not found"})),
            true,
        ),
        (Reply::Error(json!({"code":-32602,"message":"no"})), true),
        (Reply::Silence, true),
        (
            Reply::Error(json!({"code":-32022,"message":"v","data":{"supported":["2026-07-28"]}})),
            false,
        ),
        (discover(), false),
    ] {
        let reply = Mutex::new(Some(reply));
        let (t, log) = Scripted::new(false, move |method, _p, _n| match method {
            "server/discover" => reply.lock().unwrap().take().unwrap_or_else(discover),
            "initialize" => initialize(),
            _ => Reply::Result(json!({"tools":[]})),
        });
        let c = client(t, ClientEra::Auto);
        block_on(c.connect()).unwrap();
        let want = if legacy { Era::Legacy } else { Era::Modern };
        assert_eq!(c.era(), Some(want));
        // A reconnect reuses the cached era: no second probe.
        block_on(c.disconnect());
        block_on(c.connect()).unwrap();
        let m = methods(&log);
        let probes = m.iter().filter(|m| *m == "server/discover").count();
        // Legacy: the reconnect goes straight to initialize. Modern: it discovers again (no
        // fallback is possible any more).
        if legacy {
            assert_eq!(probes, 1, "{m:?}");
            assert_eq!(m.iter().filter(|m| *m == "initialize").count(), 2);
        } else {
            assert!(
                probes >= 2 && !m.contains(&"initialize".to_owned()),
                "{m:?}"
            );
        }
        assert!(m.iter().all(|m| m != "notifications/cancelled"));
    }
    // Legacy mode never probes.
    let (t, log) = Scripted::new(false, |method, _p, _n| match method {
        "initialize" => initialize(),
        _ => Reply::Silence,
    });
    block_on(client(t, ClientEra::Legacy).connect()).unwrap();
    assert_eq!(methods(&log), ["initialize", "notifications/initialized"]);
}

#[test]
fn input_required_rounds_echo_state_with_new_ids_and_stay_bounded() {
    let (t, log) = Scripted::new(false, |method, p, n| match (method, p["name"].as_str()) {
        ("server/discover", _) => discover(),
        ("tools/call", Some("rounds")) if n <= 2 => {
            Reply::Result(json!({"resultType":"input_required",
            "inputRequests":{"who":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}},
            "requestState": format!("state {n} ✓")}))
        }
        ("tools/call", Some("rounds")) => {
            Reply::Result(json!({"content":[{"type":"text","text":"done"}]}))
        }
        ("tools/call", Some("forever")) => Reply::Result(json!({"resultType":"input_required",
            "inputRequests":{"r":{"method":"roots/list"}}})),
        ("tools/call", Some("odd")) => Reply::Result(json!({"resultType":"task"})),
        _ => Reply::Result(json!({"content":[]})),
    });
    let c = client(t, ClientEra::Modern);
    block_on(async {
        c.connect().await.unwrap();
        assert_eq!(
            c.call("rounds", json!({"a":1})).await.unwrap(),
            Some(json!("done"))
        );
        c.call_tool("plain", json!({})).await.unwrap();
        let e = c.call_tool("forever", json!({})).await.unwrap_err();
        assert!(matches!(e, ClientError::InvalidResponse(_)), "{e}");
        let e = c.call_tool("odd", json!({})).await.unwrap_err();
        assert!(matches!(e, ClientError::InvalidResponse(_)), "{e}");
    });
    let log = log.lock().unwrap();
    let calls: Vec<&Value> = log
        .iter()
        .map(|(v, _)| v)
        .filter(|v| v["method"] == "tools/call")
        .collect();
    let ids: Vec<&Value> = calls[..3].iter().map(|v| &v["id"]).collect();
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "a new id per retry");
    assert!(calls[0]["params"].get("requestState").is_none());
    assert!(calls[0]["params"].get("inputResponses").is_none());
    assert_eq!(calls[1]["params"]["requestState"], "state 1 ✓");
    assert_eq!(calls[2]["params"]["requestState"], "state 2 ✓");
    assert_eq!(calls[2]["params"]["arguments"], json!({"a":1}));
    assert_eq!(
        calls[1]["params"]["inputResponses"]["who"],
        json!({"action":"accept","content":{"ok":true}})
    );
    // The unrelated call carries no MRTR fields.
    assert!(calls[3]["params"].get("inputResponses").is_none());
    assert!(calls[3]["params"].get("requestState").is_none());
    // "forever" sent no state: none is invented; the loop stops after the bound.
    let forever: Vec<&&Value> = calls
        .iter()
        .filter(|v| v["params"]["name"] == "forever")
        .collect();
    assert_eq!(forever.len(), crate::client::mrtr::MAX_INPUT_ROUNDS + 1);
    assert!(forever
        .iter()
        .all(|v| v["params"].get("requestState").is_none()));
    assert_eq!(
        forever[1]["params"]["inputResponses"]["r"],
        json!({"roots":[]})
    );
}

#[test]
fn listen_is_acknowledged_and_demultiplexed() {
    let tag = |id: i64, method: &str| json!({"jsonrpc":"2.0","method":method,"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":id}}});
    let (t, log) = Scripted::new(false, move |method, _p, n| match (method, n) {
        ("server/discover", _) => discover(),
        // Listen id 2: ack, a foreign subscription's notification, ours, then the final result.
        ("subscriptions/listen", 1) => Reply::Notify(vec![
            json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
                "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"notifications":{"toolsListChanged":true}}}),
            tag(999, "notifications/prompts/list_changed"),
            tag(2, "notifications/tools/list_changed"),
            json!({"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}),
        ]),
        // Listen id 3: ack, then the server cancels it.
        ("subscriptions/listen", 2) => Reply::Notify(vec![
            json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
                "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":3},"notifications":{}}}),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}),
        ]),
        // Listen id 4: acknowledged, then cancelled by us.
        ("subscriptions/listen", _) => Reply::Notify(vec![
            json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
                "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":4},"notifications":{}}}),
        ]),
        _ => Reply::Silence,
    });
    let c = client(t, ClientEra::Modern);
    block_on(async {
        c.connect().await.unwrap();
        let mut s = c
            .listen(json!({"toolsListChanged": true, "promptsListChanged": true}))
            .await
            .unwrap();
        assert_eq!(s.id(), 2);
        assert_eq!(s.acknowledged(), &json!({"toolsListChanged": true}));
        let n = s.next().await.unwrap();
        assert_eq!(n.method, "notifications/tools/list_changed");
        assert!(s.next().await.is_none(), "the final result ends it");
        assert!(matches!(s.outcome(), Some(Ok(_))));
        let mut s = c.listen(json!({})).await.unwrap();
        assert!(s.next().await.is_none(), "a server cancel ends it");
        let s = c.listen(json!({})).await.unwrap();
        s.cancel().await;
    });
    let log = log.lock().unwrap();
    // The cancel of the third listen (id 4) was sent; a background cancel for an earlier,
    // already-ended request may interleave, so look for it rather than at the last entry.
    assert!(
        log.iter()
            .any(|m| m.0["method"] == "notifications/cancelled" && m.0["params"]["requestId"] == 4),
        "no notifications/cancelled for the cancelled listen: {log:?}"
    );
    let listen = &log[1].0;
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true})
    );
    assert_eq!(
        listen["params"]["_meta"][META_PROTOCOL_VERSION],
        "2026-07-28"
    );
}

#[test]
fn list_results_are_cached_for_their_ttl_and_invalidated_by_list_changed() {
    let (t, log) = Scripted::new(true, |method, p, _n| match method {
        "server/discover" => discover(),
        "tools/list" => Reply::Result(json!({"tools":[],"ttlMs":60000,"cacheScope":"private"})),
        "prompts/list" => Reply::Result(json!({"prompts":[],"ttlMs":0,"cacheScope":"public"})),
        "tools/call" if p["name"] == "poke" => Reply::After(
            vec![json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})],
            json!({"content":[]}),
        ),
        _ => Reply::Result(json!({"content":[]})),
    });
    let c = client(t, ClientEra::Modern);
    block_on(async {
        c.connect().await.unwrap();
        c.list_tools().await.unwrap();
        c.list_tools().await.unwrap();
        for _ in 0..2 {
            c.request(
                "prompts/list",
                None,
                crate::client::RequestOptions::default(),
            )
            .await
            .unwrap();
        }
        c.call_tool("poke", json!({})).await.unwrap();
        c.list_tools().await.unwrap();
    });
    let m = methods(&log);
    let count = |name: &str| m.iter().filter(|x| *x == name).count();
    if cfg!(target_family = "wasm") {
        return;
    }
    assert_eq!(
        count("tools/list"),
        2,
        "cached once, re-fetched after list_changed: {m:?}"
    );
    assert_eq!(count("prompts/list"), 2, "ttlMs 0 is never cached");
}

#[test]
fn a_version_rejected_twice_fails_connect() {
    let (t, log) = Scripted::new(true, |_, _, _| {
        Reply::Status(
            400,
            json!({"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no",
            "data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}),
        )
    });
    let c = client(t, ClientEra::Auto);
    let e = block_on(c.connect()).unwrap_err();
    assert_eq!(e.code().map(|c| c.0), Some(-32022), "{e}");
    assert_eq!(methods(&log), ["server/discover", "server/discover"]);
    assert!(!c.is_connected());
}

/// A task the server calls working for ever, asking to be polled every 1 ms: the polls are at
/// least `MIN_TASK_POLL_MS` apart, and the client stops once its waits add up past the task's
/// `ttl` (it polled ~600 times a second, for good).
#[test]
fn a_task_working_for_ever_is_polled_at_the_floor_and_given_up_past_its_ttl() {
    use crate::client::tasks::{TaskInfo, MIN_TASK_POLL_MS};
    use std::sync::Arc;
    let working = json!({"taskId":"t1","status":"working","ttl":200,"pollInterval":1,
        "createdAt":"2026-12-06T00:00:00Z","lastUpdatedAt":"2026-12-06T00:00:00Z"});
    let answer = working.clone();
    // Each poll's answer names a longer ttl: the one the task was created with still counts.
    let (t, log) = Scripted::new(false, move |method, _p, n| match method {
        "initialize" => initialize(),
        "tasks/get" => {
            let mut grown = answer.clone();
            grown["ttl"] = json!(200 + 1_000 * n as u64);
            Reply::Result(grown)
        }
        _ => Reply::Result(json!({})),
    });
    let waits = Arc::new(Mutex::new(Vec::new()));
    let recorded = waits.clone();
    // Poll waits (under a second) pass at once and are recorded; request deadlines never fire.
    let sleep: crate::client::Sleep = Arc::new(move |d: Duration| -> BoxFuture<'static, ()> {
        if d < Duration::from_secs(1) {
            recorded.lock().unwrap().push(d);
            Box::pin(futures::future::ready(()))
        } else {
            Box::pin(futures::future::pending())
        }
    });
    let c = McpClient::new(
        t,
        ClientOptions::new("c", "1")
            .with_era(ClientEra::Legacy)
            .with_timeout(Duration::from_secs(30))
            .with_sleep(sleep),
    );
    block_on(async {
        c.connect().await.unwrap();
        let task = TaskInfo::from_value(&working).unwrap();
        let err = c.wait_task(&task, &|_| {}).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("task t1 is still working after its ttl of 200 ms"),
            "{err}"
        );
    });
    let waits = waits.lock().unwrap().clone();
    assert!(
        waits
            .iter()
            .all(|d| *d == Duration::from_millis(MIN_TASK_POLL_MS)),
        "{waits:?}"
    );
    // 5 waits of 50 ms (250 > 200), a poll after each.
    assert_eq!(waits.len(), 5);
    let polls = methods(&log).iter().filter(|m| *m == "tasks/get").count();
    assert_eq!(polls, 5);
}
