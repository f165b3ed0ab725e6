//! The 2026-07-28 standard and custom HTTP headers over real HTTP on 127.0.0.1: `Mcp-Method`,
//! `Mcp-Name` (with its base64 sentinel) and `Mcp-Param-*` checked against the body (§3.2–3.3).
//! Sources: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/seps/2243-http-standardization>. Every wait is bounded.
#![cfg(feature = "native")]

mod support;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use support::http::raw_post;
use support::json::{modern_params, rpc, V};
use support::modern::{assert_error, assert_ok, modern_headers, post_h, start_fixture};

/// A `tools/call` of the fixture's `headers_tool` (its schema maps `region`, `priority` and
/// `verbose` to `Mcp-Param-*` headers) with `args`.
fn headers_call(args: Value) -> String {
    rpc(
        json!("h"),
        "tools/call",
        modern_params(json!({ "name": "headers_tool", "arguments": args })),
    )
}

/// The modern headers of a `headers_tool` call plus `params`.
fn with_params(params: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut h = modern_headers("tools/call", Some("headers_tool"));
    h.extend(
        params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    h
}

// ---------------------------------------------------------------------------------------------
// Mcp-Method (§3.2)
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

// ---------------------------------------------------------------------------------------------
// Mcp-Name (§3.2)
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Mcp-Param-* (§3.3)
// ---------------------------------------------------------------------------------------------

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
