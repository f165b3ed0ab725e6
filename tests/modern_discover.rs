//! The 2026-07-28 (stateless) wire beside the handshake era over real HTTP on 127.0.0.1, through
//! the `Endpoint` with sessions on (as `orkestrel-mcp serve --http` runs): `server/discover`, the
//! per-request `_meta` envelope and versions, removed and unadvertised methods, capabilities,
//! result decoration, both eras on one URL. Sources: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/seps/2243-http-standardization>. Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use orkestrel_mcp::native::endpoint::EndpointOptions;
use orkestrel_mcp::{McpServer, ServerOptions, Tool, SUPPORTED_PROTOCOL_VERSIONS};
use serde_json::json;
use support::json::{meta_with, modern_params, rpc, CAPS, INFO, PV, SERVER_INFO, V};
use support::modern::{
    assert_error, assert_ok, call, modern_headers, no_args, post_h, response, start_fixture, Args,
};

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

// ---------------------------------------------------------------------------------------------
// Dual-era on one URL (§2.4, §3.5), notifications, concurrency
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
