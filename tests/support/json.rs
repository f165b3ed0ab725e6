//! JSON-RPC and MCP message builders, and the 2026-07-28 per-request `_meta` keys
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).

use serde_json::{json, Value};

/// The stateless protocol revision.
pub const V: &str = "2026-07-28";
/// `_meta` key: the request's protocol version.
pub const PV: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version.
pub const INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the request's log level.
pub const LOG: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key (results): the server's name and version.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key (listen notifications): the `subscriptions/listen` request id.
pub const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A handshake-era `initialize` request for a protocol version.
pub fn initialize(id: u64, version: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    })
    .to_string()
}

/// The `initialize` request a test client sends first (2025-11-25, id `"init"`, declaring
/// sampling, elicitation and roots).
pub fn handshake_request() -> Value {
    json!({
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
            "clientInfo": {"name": "t", "version": "0"}}
    })
}

/// `notifications/initialized`.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A server's `initialize` response (2025-06-18, tools) to request `id`, as text.
pub fn init_result(id: &Value) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake","version":"1"}}}}}}"#
    )
}

/// A JSON-RPC request, as text.
pub fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// Per-request `_meta` (2026-07-28) declaring `caps`.
pub fn meta_with(caps: Value) -> Value {
    json!({ PV: V, CAPS: caps, INFO: { "name": "modern-tests", "version": "0" } })
}

/// Per-request `_meta` declaring no capabilities.
pub fn meta() -> Value {
    meta_with(json!({}))
}

/// `params` with the default `_meta` when it has none.
pub fn modern_params(mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    params
}

/// The `Mcp-Name` a request needs (name or uri of the three named methods, the task id of
/// `tasks/get`, `tasks/update`, `tasks/cancel`).
pub fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params[key].as_str().map(str::to_owned)
}

/// `tools/call` params for `name` with no arguments, `_meta` declaring `caps`, and the members
/// of `extra` (e.g. `inputResponses`, `requestState`).
pub fn tool_call(name: &str, caps: Value, extra: Value) -> Value {
    let mut params = json!({ "name": name, "arguments": {}, "_meta": meta_with(caps) });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    params
}

/// Valid JSON beyond the parser's limits (nesting past 127, a number past `f64`, a lone
/// surrogate escape) and integer ids past 64 bits, each as `(text, the raw id its one answer
/// must carry, the error code or 0 for a result)`. `params_extra` is spliced into each request's
/// `params` (e.g. a modern `_meta`, or empty).
pub fn beyond_limits(params_extra: &str) -> Vec<(String, String, i64)> {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let long = "1234567890".repeat(4);
    let p = |members: &str| {
        if params_extra.is_empty() {
            format!("{{{members}}}")
        } else if members.is_empty() {
            format!("{{{params_extra}}}")
        } else {
            format!("{{{members},{params_extra}}}")
        }
    };
    vec![
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}}"#,
                p(&format!(r#""a":{deep}"#))
            ),
            "1".into(),
            -32600,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#),
            "null".into(),
            -32700,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":"s","method":"tools/list","params":{}}}"#,
                p(r#""a":"\ud800""#)
            ),
            r#""s""#.into(),
            -32600,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}}"#,
                p(r#""n":1e999"#)
            ),
            "2".into(),
            -32600,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":{long},"method":"tools/list","params":{}}}"#,
                p("")
            ),
            long.clone(),
            0,
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":-{long},"method":"tools/list","params":{}}}"#,
                p("")
            ),
            format!("-{long}"),
            0,
        ),
    ]
}

/// Check one answer (its raw text) to a [`beyond_limits`] case: exactly the id, and the code.
pub fn check_limit_answer(text: &str, id: &str, code: i64) {
    assert!(
        text.contains(&format!(r#""id":{id},"#)),
        "the answer must carry the id {id} exactly: {text}"
    );
    let v: Value = serde_json::from_str(text).unwrap();
    if code == 0 {
        assert!(v.get("result").is_some(), "{text}");
    } else {
        assert_eq!(v["error"]["code"], code, "{text}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("exceeds a limit of this parser") && message.contains("line 1 column"),
            "the message names the limit and where: {message}"
        );
    }
}
