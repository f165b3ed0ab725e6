//! The 2026-07-28 request headers `Mcp-Method`, `Mcp-Name` and `Mcp-Param-{Name}`
//! ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http),
//! [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)): value encoding, which headers a request needs, and
//! their validation against the body.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use super::header_mismatch;
use crate::http::headers;
use crate::protocol::params::printable;
use crate::wire::json_text::json_number;
use crate::wire::jsonrpc::{ErrorObject, JsonRpcRequest};

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// Encode a header value ([`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools), Value Encoding): plain visible ASCII without leading or trailing
/// whitespace stays as it is; anything else (non-ASCII, controls, tab, edge spaces, or a value
/// that looks like the sentinel) becomes `=?base64?{base64 of UTF-8}?=`.
pub fn encode_header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with(SENTINEL_PREFIX) && value.ends_with(SENTINEL_SUFFIX));
    if plain {
        value.to_owned()
    } else {
        format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(value.as_bytes())
        )
    }
}

/// Decode a header value: the surrounding whitespace is stripped (RFC 9110 OWS), a full
/// `=?base64?…?=` sentinel is decoded with strict padded base64 and must be UTF-8; a value with
/// only the prefix or only the suffix is a literal.
///
/// # Errors
/// `-32020` for bad base64, non-UTF-8 contents, or control characters in a literal value.
pub fn decode_header_value(raw: &str) -> Result<String, ErrorObject> {
    let value = raw.trim_matches([' ', '\t']);
    if let Some(inner) = value
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|v| v.strip_suffix(SENTINEL_SUFFIX))
    {
        let bytes = STANDARD
            .decode(inner)
            .map_err(|e| header_mismatch(format!("bad base64 in {value:?}: {e}")))?;
        return String::from_utf8(bytes)
            .map_err(|_| header_mismatch(format!("{value:?} is not UTF-8")));
    }
    if value.chars().any(char::is_control) {
        return Err(header_mismatch(format!("control characters in {value:?}")));
    }
    Ok(value.to_owned())
}

/// The `Mcp-Name` a request must carry: `params.name` for `tools/call` and `prompts/get`,
/// `params.uri` for `resources/read`, `params.taskId` for `tasks/get`, `tasks/update` and
/// `tasks/cancel` (SEP-2663, routing headers); `None` for other methods.
pub fn expected_name(request: &JsonRpcRequest) -> Option<String> {
    let key = match request.method.as_str() {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    request
        .params
        .as_ref()?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}

/// The `x-mcp-header` annotations of a tool's input schema: `(header suffix, property path)`,
/// reachable only through `properties` chains ([`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)).
pub fn header_params(schema: &Value) -> Vec<(String, Vec<String>)> {
    fn walk(schema: &Value, path: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, prop) in props {
            path.push(name.clone());
            if let Some(header) = prop.get("x-mcp-header").and_then(Value::as_str) {
                out.push((header.to_owned(), path.clone()));
            }
            walk(prop, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

fn value_at<'a>(args: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(args, |v, key| v.get(key))
}

/// The header text for an argument value: strings as they are, integers in decimal, booleans as
/// `true`/`false`; `None` for null, absent or other types.
pub fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.fract() == 0.0)
            .map(|f| format!("{}", f as i64)),
        _ => None,
    }
}

/// The message for a header the body needs and the lookup did not give: absent, or a value
/// that is not text (a non-ASCII value is sent as `=?base64?…?=`).
fn missing(name: &str) -> String {
    format!(
        "missing {name} (or its value is not ASCII text: send a non-ASCII value as =?base64?…?=)"
    )
}

/// Validate the modern HTTP headers against the body ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http), [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)): `Mcp-Method`
/// equals `method` (values are case-sensitive), `Mcp-Name` equals the name or URI, and each
/// `Mcp-Param-{Name}` of the tool's `x-mcp-header` annotations matches its argument (an integer
/// also as an equal JSON number: `42.0`, `4.2e1`); a header is required when the argument is
/// non-null. `header(name)` returns a
/// header's value (names are case-insensitive).
///
/// # Errors
/// `-32020` naming the header.
pub fn validate_headers(
    header: &dyn Fn(&str) -> Option<String>,
    request: &JsonRpcRequest,
    tool_schema: Option<&Value>,
) -> Result<(), ErrorObject> {
    match header(headers::MCP_METHOD) {
        None => return Err(header_mismatch(missing("Mcp-Method"))),
        Some(m) if m.trim() != request.method => {
            return Err(header_mismatch(format!(
                "Mcp-Method {:?} differs from method {:?}",
                printable(&m),
                printable(&request.method)
            )))
        }
        Some(_) => {}
    }
    if let Some(name) = expected_name(request) {
        match header(headers::MCP_NAME) {
            None => return Err(header_mismatch(missing("Mcp-Name"))),
            Some(raw) => {
                let got = decode_header_value(&raw)?;
                if got != name {
                    return Err(header_mismatch(format!(
                        "Mcp-Name {:?} differs from {:?}",
                        printable(&got),
                        printable(&name)
                    )));
                }
            }
        }
    }
    let (Some(schema), "tools/call") = (tool_schema, request.method.as_str()) else {
        return Ok(());
    };
    let args = request
        .params
        .as_ref()
        .and_then(|p| p.get("arguments"))
        .cloned()
        .unwrap_or(Value::Null);
    for (suffix, path) in header_params(schema) {
        let expected = value_at(&args, &path).and_then(header_text);
        let got = header(&format!(
            "{}{}",
            headers::MCP_PARAM_PREFIX,
            suffix.to_ascii_lowercase()
        ));
        match (expected, got) {
            (None, _) => {}
            (Some(_), None) => {
                return Err(header_mismatch(missing(&format!("Mcp-Param-{suffix}"))))
            }
            (Some(expected), Some(raw)) => {
                let got = decode_header_value(&raw)?;
                let same = got == expected
                    || matches!((json_number(&got), json_number(&expected)), (Some(a), Some(b)) if a == b);
                if !same {
                    return Err(header_mismatch(format!(
                        "Mcp-Param-{suffix} {:?} differs from {:?}",
                        printable(&got),
                        printable(&expected)
                    )));
                }
            }
        }
    }
    Ok(())
}
