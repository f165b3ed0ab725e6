//! The stateless 2026-07-28 revision beside the handshake era: per-request `_meta`, version and
//! header validation, header value encoding, and result decoration (`resultType`, cache hints,
//! `serverInfo`). No I/O: the HTTP route and the wasm fetch handler pass header values in.
//!
//! | file | what |
//! |---|---|
//! | `era.rs` | the constants (versions, `_meta` keys, codes, method lists), telling the eras apart, result decoration |
//! | `era/meta.rs` | the per-request `_meta` envelope and the version checks |
//! | `era/mrtr.rs` | [`mrtr`]: multi round-trip requests (input-required rounds, the sealed `requestState`) |
//! | `era/mcp_headers.rs` | `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`: value encoding and validation against the body |
//!
//! Spec pages: [versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning) (negotiation, telling the eras
//! apart, error codes), the [`_meta` envelope](https://modelcontextprotocol.io/specification/2026-07-28/basic),
//! [Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http) and
//! [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools) (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`),
//! [caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching).

mod mcp_headers;
mod meta;
pub mod mrtr;

use serde_json::{json, Map, Value};

use crate::protocol::SUPPORTED_PROTOCOL_VERSIONS;
use crate::wire::jsonrpc::ErrorCode;

pub use mcp_headers::{
    decode_header_value, encode_header_value, expected_name, header_params, header_text,
    validate_headers,
};
pub use meta::{
    check_version, header_mismatch, missing_capability, parse_meta, unsupported_version, ModernMeta,
};

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

/// The methods whose complete results carry `ttlMs` and `cacheScope` ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching);
/// `skills/list` and `skills/get`: the Skills extension, [SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension)).
pub const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "skills/list",
    "skills/get",
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
    use crate::wire::jsonrpc::JsonRpcRequest;

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
    fn a_mismatch_names_the_header_without_echoing_long_values() {
        let name = "n".repeat(20_000);
        let r = req(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name": name}}));
        let long = "h".repeat(16_000);
        let header = move |n: &str| match n {
            "mcp-method" => Some("tools/call".to_owned()),
            "mcp-name" => Some(long.clone()),
            _ => None,
        };
        let error = validate_headers(&header, &r, None).unwrap_err();
        assert_eq!(error.code, HEADER_MISMATCH);
        assert!(error.message.contains("Mcp-Name"), "{}", error.message);
        assert!(error.message.len() < 400, "{}", error.message.len());
        // A header the lookup did not give (absent, or not text) is named with why it may be so.
        let none = |n: &str| (n == "mcp-method").then(|| "tools/call".to_owned());
        let error = validate_headers(&none, &r, None).unwrap_err();
        assert!(
            error
                .message
                .contains("missing Mcp-Name (or its value is not ASCII text"),
            "{}",
            error.message
        );
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
        // An integer argument's header may be any JSON number equal to it, and nothing else.
        let priority = |value: &'static str| {
            move |name: &str| match name.to_ascii_lowercase().as_str() {
                "mcp-method" => Some("tools/call".to_owned()),
                "mcp-name" => Some("t".to_owned()),
                "mcp-param-region" => Some("eu".to_owned()),
                "mcp-param-priority" => Some(value.to_owned()),
                _ => None,
            }
        };
        for same in ["42", "42.0", "4.2e1", "420e-1"] {
            assert!(
                validate_headers(&priority(same), &r, Some(&schema)).is_ok(),
                "{same}"
            );
        }
        for other in ["+42", "042", "42.", "43", "0x2a", "4.2E1x"] {
            assert_eq!(
                validate_headers(&priority(other), &r, Some(&schema))
                    .unwrap_err()
                    .code,
                HEADER_MISMATCH,
                "{other}"
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
