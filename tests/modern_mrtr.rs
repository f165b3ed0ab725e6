//! Multi round-trip requests (MRTR, §4) on the 2026-07-28 wire over real HTTP on 127.0.0.1:
//! `input_required`, retries with `inputResponses`, the sealed `requestState`, and the
//! handshake-era request APIs turned into input rounds. Sources: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/seps/2243-http-standardization>. Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::{ErrorObject, McpServer, RequestContext, ServerOptions, Tool};
use serde_json::{json, Value};
use support::json::{meta_with, tool_call};
use support::modern::{assert_ok, call, elicit, no_args, response, start_fixture, Args};

// ---------------------------------------------------------------------------------------------
// input_required and the retry (§4)
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// requestState (§4)
// ---------------------------------------------------------------------------------------------

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
        orkestrel_mcp::era::mrtr::REQUEST_STATE_TTL_MS + 1,
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
