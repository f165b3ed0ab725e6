//! The 2026-07-28 request envelope: per-request `_meta`, the HTTP headers `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (from the tools' `x-mcp-header` annotations), and
//! reading `resultType`
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).

use serde_json::{json, Map, Value};

use crate::client::ClientError;
use crate::era::{
    encode_header_value, header_text, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
};

/// The per-request `_meta` fields: `protocolVersion`, `clientCapabilities` (`{}` when none) and
/// `clientInfo`.
pub fn request_meta(version: &str, capabilities: &Value, info: &Value) -> Map<String, Value> {
    let capabilities = match capabilities {
        Value::Object(_) => capabilities.clone(),
        _ => json!({}),
    };
    let mut meta = Map::new();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
    meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities);
    meta.insert(META_CLIENT_INFO.into(), info.clone());
    meta
}

/// `params` with the modern fields merged into `params._meta` (other `_meta` keys such as
/// `progressToken` are kept; ours win).
///
/// # Errors
/// [`ClientError::InvalidArguments`] when `params` is neither an object nor absent.
pub fn with_meta(params: Option<Value>, meta: &Map<String, Value>) -> Result<Value, ClientError> {
    let mut params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ClientError::InvalidArguments(format!(
                "request params must be a JSON object, not {}",
                crate::wire::json_text::JsonText(&other)
            )))
        }
    };
    let entry = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(existing) = entry {
        for (k, v) in meta {
            existing.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(params))
}

/// The HTTP headers of a modern request ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)): `MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name` (`tools/call`, `prompts/get`: the name; `resources/read`: the uri; `tasks/get`, `tasks/update`, `tasks/cancel`: the task id) and one
/// `Mcp-Param-{Name}` per `x-mcp-header` annotated argument that is present and not null, with
/// the `=?base64?…?=` encoding where a value needs it.
pub fn request_headers(
    method: &str,
    params: &Value,
    version: &str,
    annotations: &[(String, Vec<String>)],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    if let Some(name) = name_key.and_then(|k| params.get(k)).and_then(Value::as_str) {
        headers.push(("Mcp-Name".to_owned(), encode_header_value(name)));
    }
    if method == "tools/call" {
        let args = params.get("arguments").unwrap_or(&Value::Null);
        for (suffix, path) in annotations {
            let value = path.iter().try_fold(args, |v, key| v.get(key));
            if let Some(text) = value.and_then(header_text) {
                headers.push((format!("Mcp-Param-{suffix}"), encode_header_value(&text)));
            }
        }
    }
    headers
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Check a tool's `x-mcp-header` annotations against [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools) and return them as
/// `(header suffix, property path)`: each is a non-empty RFC 9110 token, unique
/// case-insensitively, on a `string`, `integer` or `boolean` property reachable only through
/// `properties` chains.
///
/// # Errors
/// Why the tool is invalid (the client then drops it from `tools/list`).
pub fn header_annotations(schema: &Value) -> Result<Vec<(String, Vec<String>)>, String> {
    fn walk(
        schema: &Value,
        path: &mut Vec<String>,
        reachable: bool,
        out: &mut Vec<(String, Vec<String>)>,
    ) -> Result<(), String> {
        match schema {
            Value::Object(map) => {
                if let Some(annotation) = map.get("x-mcp-header") {
                    if !reachable || path.is_empty() {
                        return Err(format!(
                            "x-mcp-header at {:?} is not reachable through `properties` alone",
                            path.join(".")
                        ));
                    }
                    let name = annotation.as_str().ok_or_else(|| {
                        format!(
                            "x-mcp-header {} is not a string",
                            crate::wire::json_text::JsonText(annotation)
                        )
                    })?;
                    if name.is_empty() {
                        return Err("an empty x-mcp-header".into());
                    }
                    if !name.chars().all(is_tchar) {
                        return Err(format!("x-mcp-header {name:?} is not an HTTP token"));
                    }
                    match map.get("type").and_then(Value::as_str) {
                        Some("string" | "integer" | "boolean") => {}
                        other => {
                            return Err(format!(
                                "x-mcp-header {name:?} is on a property of type {}, not string, integer or boolean",
                                other.map_or_else(|| "(none)".to_owned(), str::to_owned)
                            ))
                        }
                    }
                    if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                        return Err(format!("x-mcp-header {name:?} is not unique"));
                    }
                    out.push((name.to_owned(), path.clone()));
                }
                for (key, value) in map {
                    if key == "properties" {
                        if let Value::Object(props) = value {
                            for (name, prop) in props {
                                path.push(name.clone());
                                walk(prop, path, reachable, out)?;
                                path.pop();
                            }
                        }
                    } else if key != "x-mcp-header"
                        && key != "const"
                        && key != "default"
                        && key != "enum"
                        && key != "examples"
                    {
                        path.push(format!("[{key}]"));
                        walk(value, path, false, out)?;
                        path.pop();
                    }
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter()
                .try_for_each(|item| walk(item, path, false, out)),
            _ => Ok(()),
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut out)?;
    Ok(out)
}

/// Whether a result completes its request: `resultType` absent or `"complete"` → `Ok(true)`;
/// `"input_required"` → `Ok(false)`.
///
/// # Errors
/// [`ClientError::InvalidResponse`] for any other `resultType` ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr): unknown values are invalid).
pub fn is_complete(result: &Value) -> Result<bool, ClientError> {
    match result.get("resultType") {
        None | Some(Value::Null) => Ok(true),
        Some(Value::String(s)) if s == "complete" => Ok(true),
        Some(Value::String(s)) if s == "input_required" => Ok(false),
        Some(other) => Err(ClientError::InvalidResponse(format!(
            "unknown resultType {}",
            crate::wire::json_text::JsonText(other)
        ))),
    }
}

/// Remove the per-result envelope (`_meta["io.modelcontextprotocol/serverInfo"]`, and `_meta`
/// when nothing else is left) so a result reads the same in both eras (a bridge re-serving it
/// must not pass the remote server's identity on as its own).
pub fn strip_envelope(mut value: Value) -> Value {
    if let Some(map) = value.as_object_mut() {
        let empty = match map.get_mut("_meta") {
            Some(Value::Object(meta)) => {
                meta.remove(crate::era::META_SERVER_INFO);
                meta.is_empty()
            }
            _ => false,
        };
        if empty {
            map.remove("_meta");
        }
    }
    value
}

/// The methods whose results may be `input_required` (its home: [`crate::era::mrtr::MRTR_METHODS`]).
pub use crate::era::mrtr::MRTR_METHODS;
