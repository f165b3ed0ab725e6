//! The stateless 2026-07-28 revision beside the handshake era: per-request `_meta`, version and
//! header validation, header value encoding, and result decoration (`resultType`, cache hints,
//! `serverInfo`). No I/O: the HTTP route and the wasm fetch handler pass header values in.
//!
//! Spec pages: [versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning) (negotiation, telling the eras apart, error codes), the
//! [`_meta` envelope](https://modelcontextprotocol.io/specification/2026-07-28/basic), [Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http) and [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)
//! (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), [caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};

use crate::http::headers;
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcRequest};
use crate::protocol::LogLevel;
use crate::protocol::SUPPORTED_PROTOCOL_VERSIONS;

/// The stateless revision.
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";
/// Every modern (per-request `_meta`) revision this crate serves.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &[MODERN_PROTOCOL_VERSION];

/// `_meta` key: the request's protocol version (required on modern requests).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities (required on modern requests).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's `{name, version}` (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the per-request log level (optional; no level → no log notifications).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the server's identity on every modern result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key: the listen request id on every subscription notification.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `-32020` HeaderMismatch: an alias of [`ErrorCode::HEADER_MISMATCH`], its home.
pub const HEADER_MISMATCH: ErrorCode = ErrorCode::HEADER_MISMATCH;
/// `-32021` MissingRequiredClientCapability: an alias of
/// [`ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY`], its home.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode =
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY;
/// `-32022` UnsupportedProtocolVersion: an alias of [`ErrorCode::UNSUPPORTED_PROTOCOL_VERSION`],
/// its home.
pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;

/// The methods whose complete results carry `ttlMs` and `cacheScope` ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).
pub const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The methods the modern wire removed (answered `-32601`, HTTP 404).
pub const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Which revision family a message belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` handshake, sessions.
    #[default]
    Legacy,
    /// 2026-07-28: per-request `_meta`, no handshake, no sessions.
    Modern,
}

/// Every version a `server/discover` lists and a `-32022` offers: the modern ones, then the
/// handshake-era ones (a client that only knows those then knows to `initialize`).
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(SUPPORTED_PROTOCOL_VERSIONS)
        .copied()
        .collect()
}

/// Whether `version` is a handshake-era revision (then the legacy rules apply).
pub fn is_legacy_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// Whether the request carries modern per-request metadata (`_meta` with a protocol version):
/// the shape, never the method name, decides the era ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).
pub fn has_modern_meta(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(META_PROTOCOL_VERSION))
}

/// A modern request's validated metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ModernMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (an object).
    pub client_capabilities: Value,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`, when sent.
    pub log_level: Option<LogLevel>,
}

/// Read and check a modern request's `_meta` ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic)): `protocolVersion` (a string) and
/// `clientCapabilities` (an object) are required; `logLevel`, when present, must be a level.
///
/// # Errors
/// `-32602` naming what is missing or malformed (HTTP 400).
pub fn parse_meta(params: Option<&Map<String, Value>>) -> Result<ModernMeta, ErrorObject> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or_else(|| {
            ErrorObject::invalid_params("missing params._meta (required on 2026-07-28 requests)")
        })?;
    let protocol_version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )))
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{META_PROTOCOL_VERSION}\"]"
            )))
        }
    };
    let client_capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(caps @ Value::Object(_)) => caps.clone(),
        Some(_) => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
            )))
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{META_CLIENT_CAPABILITIES}\"]"
            )))
        }
    };
    let log_level = match meta.get(META_LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(level) => Some(
            level
                .as_str()
                .and_then(LogLevel::from_name)
                .ok_or_else(|| ErrorObject::invalid_params(format!("unknown log level {level}")))?,
        ),
    };
    Ok(ModernMeta {
        protocol_version,
        client_capabilities,
        client_info: meta.get(META_CLIENT_INFO).cloned(),
        log_level,
    })
}

/// `-32022` for an unsupported version, with `data.supported` and `data.requested`.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(json!({ "supported": supported_versions(), "requested": requested }))
}

/// `-32021` naming the capability the request needed, as an object (`{"sampling":{}}`).
pub fn missing_capability(capability: &str) -> ErrorObject {
    ErrorObject::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("the request needs the client capability `{capability}`, which it did not declare"),
    )
    .with_data(json!({ "requiredCapabilities": { capability: {} } }))
}

/// `-32020` with a reason.
pub fn header_mismatch(detail: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {detail}"))
}

/// Check the body version against the transport's (`MCP-Protocol-Version` on HTTP; `None` on
/// stdio), then against what we serve ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).
///
/// # Errors
/// `-32020` when they differ; `-32022` when the version is not a modern one we serve (a
/// handshake-era version in `_meta` fits neither era and gets `-32022` too).
pub fn check_version(meta: &ModernMeta, header: Option<&str>) -> Result<(), ErrorObject> {
    if let Some(header) = header {
        if header != meta.protocol_version {
            return Err(header_mismatch(format!(
                "MCP-Protocol-Version {header:?} differs from _meta protocolVersion {:?}",
                meta.protocol_version
            )));
        }
    }
    if !MODERN_PROTOCOL_VERSIONS.contains(&meta.protocol_version.as_str()) {
        return Err(unsupported_version(&meta.protocol_version));
    }
    Ok(())
}

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
/// `params.uri` for `resources/read`; `None` for other methods.
pub fn expected_name(request: &JsonRpcRequest) -> Option<String> {
    let key = match request.method.as_str() {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
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

/// Validate the modern HTTP headers against the body ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http), [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)): `Mcp-Method`
/// equals `method` (values are case-sensitive), `Mcp-Name` equals the name or URI, and each
/// `Mcp-Param-{Name}` of the tool's `x-mcp-header` annotations matches its argument (numerically
/// for integers); a header is required when the argument is non-null. `header(name)` returns a
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
        None => return Err(header_mismatch("missing Mcp-Method")),
        Some(m) if m.trim() != request.method => {
            return Err(header_mismatch(format!(
                "Mcp-Method {m:?} differs from method {:?}",
                request.method
            )))
        }
        Some(_) => {}
    }
    if let Some(name) = expected_name(request) {
        match header(headers::MCP_NAME) {
            None => return Err(header_mismatch("missing Mcp-Name")),
            Some(raw) => {
                let got = decode_header_value(&raw)?;
                if got != name {
                    return Err(header_mismatch(format!(
                        "Mcp-Name {got:?} differs from {name:?}"
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
            (Some(_), None) => return Err(header_mismatch(format!("missing Mcp-Param-{suffix}"))),
            (Some(expected), Some(raw)) => {
                let got = decode_header_value(&raw)?;
                let same = got == expected
                    || matches!((got.parse::<f64>(), expected.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
                if !same {
                    return Err(header_mismatch(format!(
                        "Mcp-Param-{suffix} {got:?} differs from {expected:?}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Decorate a modern result: `resultType` (`complete` unless already set), cache hints on the
/// cacheable methods, and `_meta.serverInfo`.
pub fn decorate_result(method: &str, result: &mut Value, server_info: &Value, ttl_ms: u64) {
    let Value::Object(map) = result else { return };
    let complete = !map.contains_key("resultType");
    if complete {
        map.insert("resultType".into(), json!("complete"));
    }
    if complete && CACHEABLE_METHODS.contains(&method) {
        map.entry("ttlMs").or_insert(json!(ttl_ms));
        map.entry("cacheScope").or_insert(json!("public"));
    }
    let meta = map.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.insert(META_SERVER_INFO.into(), server_info.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(v: Value) -> JsonRpcRequest {
        match crate::JsonRpcMessage::from_value(v).unwrap() {
            crate::JsonRpcMessage::Request(r) => r,
            _ => panic!(),
        }
    }

    #[test]
    fn meta_is_required_and_checked() {
        let ok = json!({"_meta":{META_PROTOCOL_VERSION:"2026-07-28",META_CLIENT_CAPABILITIES:{}}});
        let meta = parse_meta(ok.as_object()).unwrap();
        assert_eq!(
            (meta.protocol_version.as_str(), meta.log_level),
            ("2026-07-28", None)
        );
        for bad in [
            json!({}),
            json!({"_meta":{META_PROTOCOL_VERSION:"2026-07-28"}}),
            json!({"_meta":{META_CLIENT_CAPABILITIES:{}}}),
            json!({"_meta":{META_PROTOCOL_VERSION:"2026-07-28",META_CLIENT_CAPABILITIES:[]}}),
            json!({"_meta":{META_PROTOCOL_VERSION:"2026-07-28",META_CLIENT_CAPABILITIES:{},META_LOG_LEVEL:"loud"}}),
        ] {
            assert_eq!(
                parse_meta(bad.as_object()).unwrap_err().code,
                ErrorCode::INVALID_PARAMS,
                "{bad}"
            );
        }
    }

    #[test]
    fn version_checks_order_mismatch_before_support() {
        let meta = |v: &str| ModernMeta {
            protocol_version: v.into(),
            client_capabilities: json!({}),
            client_info: None,
            log_level: None,
        };
        assert!(check_version(&meta("2026-07-28"), Some("2026-07-28")).is_ok());
        assert_eq!(
            check_version(&meta("v999.0.0"), Some("2026-07-28"))
                .unwrap_err()
                .code,
            HEADER_MISMATCH
        );
        let e = check_version(&meta("v999.0.0"), Some("v999.0.0")).unwrap_err();
        assert_eq!(
            (e.code, e.data.as_ref().unwrap()["requested"].clone()),
            (UNSUPPORTED_PROTOCOL_VERSION, json!("v999.0.0"))
        );
        assert!(e.data.unwrap()["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25")));
        assert_eq!(
            check_version(&meta("2025-11-25"), None).unwrap_err().code,
            UNSUPPORTED_PROTOCOL_VERSION
        );
    }

    #[test]
    fn header_values_round_trip_and_base64_is_strict() {
        for v in [
            "plain",
            "with inner space",
            "ünïcode",
            " edge",
            "tab\there",
            "line\nbreak",
            "",
            "=?base64?x?=",
        ] {
            assert_eq!(
                decode_header_value(&encode_header_value(v)).unwrap(),
                v,
                "{v:?}"
            );
        }
        assert_eq!(encode_header_value("ünï"), "=?base64?w7xuw68=?=");
        assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert!(
            decode_header_value("=?base64?SGVsbG8?=").is_err(),
            "missing padding"
        );
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8=",
            "prefix only is a literal"
        );
        assert_eq!(decode_header_value("  name  ").unwrap(), "name");
    }

    #[test]
    fn headers_are_validated_against_the_body() {
        let schema = json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"Priority"},"v":{"type":"boolean","x-mcp-header":"Verbose"}}});
        let r = req(
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":"eu","n":42,"v":null}}}),
        );
        let headers = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let good = headers(&[
            ("Mcp-Method", "tools/call"),
            ("MCP-NAME", " t "),
            ("mcp-param-region", "eu"),
            ("Mcp-Param-Priority", "42.0"),
        ]);
        assert!(validate_headers(&good, &r, Some(&schema)).is_ok());
        for bad in [
            headers(&[
                ("Mcp-Name", "t"),
                ("mcp-param-region", "eu"),
                ("Mcp-Param-Priority", "42"),
            ]),
            headers(&[
                ("Mcp-Method", "TOOLS/CALL"),
                ("Mcp-Name", "t"),
                ("mcp-param-region", "eu"),
                ("Mcp-Param-Priority", "42"),
            ]),
            headers(&[
                ("Mcp-Method", "tools/call"),
                ("mcp-param-region", "eu"),
                ("Mcp-Param-Priority", "42"),
            ]),
            headers(&[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "u"),
                ("mcp-param-region", "eu"),
                ("Mcp-Param-Priority", "42"),
            ]),
            headers(&[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "t"),
                ("Mcp-Param-Priority", "42"),
            ]),
            headers(&[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "t"),
                ("mcp-param-region", "us"),
                ("Mcp-Param-Priority", "42"),
            ]),
        ] {
            assert_eq!(
                validate_headers(&bad, &r, Some(&schema)).unwrap_err().code,
                HEADER_MISMATCH
            );
        }
    }

    #[test]
    fn results_are_decorated() {
        let mut v = json!({"tools":[]});
        decorate_result("tools/list", &mut v, &json!({"name":"s","version":"1"}), 0);
        assert_eq!(
            v,
            json!({"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"public","_meta":{META_SERVER_INFO:{"name":"s","version":"1"}}})
        );
        let mut irr = json!({"resultType":"input_required","requestState":"x"});
        decorate_result("tools/call", &mut irr, &json!({}), 0);
        assert!(irr.get("ttlMs").is_none());
    }
}
