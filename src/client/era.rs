//! The client side of the dual-era protocol: which era to speak ([`ClientEra`]), the probe that
//! picks one, and the 2026-07-28 request envelope (per-request `_meta`, the HTTP headers
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`, the `-32022` retry and
//! `resultType` handling). Transport-agnostic: the HTTP transport receives the headers through
//! [`ClientTransport::send_modern`](crate::client::ClientTransport::send_modern); stdio,
//! WebSocket and the wasm transports ignore them.
//!
//! Spec pages: the [`_meta` envelope](https://modelcontextprotocol.io/specification/2026-07-28/basic), [versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning) (auto mode, probe and
//! fallback), [Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http) and [`x-mcp-header`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools) (headers), [MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)
//! (results).
//!
//! ```text
//!  connect ─► Legacy: initialize handshake
//!          ─► Modern: server/discover (retry once on -32022) ─► version from supportedVersions
//!          ─► Auto:   server/discover ─► result / modern error ─► Modern
//!                                    └─► HTTP 4xx (not 401/403/407/408/429) without a modern error,
//!                                        stdio/WS: another error or a timeout ─► initialize
//! ```
mod envelope;
mod probe;
mod request;
mod state;

use std::fmt;
use std::str::FromStr;

pub use envelope::{
    header_annotations, is_complete, request_headers, request_meta, strip_envelope, with_meta,
    MRTR_METHODS,
};
pub use probe::{classify_probe, is_modern_error, pick_version, ProbeVerdict};
pub(crate) use state::EraState;
pub use state::{
    CACHED_METHODS, MAX_CACHED_RESULT_BYTES, MAX_CACHE_BYTES, MAX_CACHE_ENTRIES,
    MAX_QUEUED_LISTEN_NOTIFICATIONS,
};

/// How long the auto-mode probe waits for `server/discover` on stdio and WebSocket before it
/// falls back to `initialize` (capped by the client's own deadline): 10 000 ms.
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 10_000;

/// Which protocol era a client speaks (`--era auto|legacy|modern` on the command line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClientEra {
    /// Probe with `server/discover` (a modern first request); fall back to the `initialize`
    /// handshake only on the signals of [versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). The default.
    #[default]
    Auto,
    /// 2026-07-28 only: no handshake; every request carries its own `_meta`.
    Modern,
    /// The `initialize` handshake (2025-11-25 and earlier), no probe.
    Legacy,
}

impl fmt::Display for ClientEra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientEra::Auto => "auto",
            ClientEra::Modern => "modern",
            ClientEra::Legacy => "legacy",
        })
    }
}

impl FromStr for ClientEra {
    type Err = String;

    /// `auto`, `modern` or `legacy` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(ClientEra::Auto),
            "modern" => Ok(ClientEra::Modern),
            "legacy" => Ok(ClientEra::Legacy),
            other => Err(format!(
                "unknown era {other:?}: expected auto, legacy or modern"
            )),
        }
    }
}

#[cfg(test)]
#[path = "era_tests.rs"]
mod scripted;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientError;
    use crate::era::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
    use crate::wire::jsonrpc::{ErrorCode, ErrorObject};
    use serde_json::{json, Value};

    #[test]
    fn eras_parse() {
        assert_eq!("AUTO".parse::<ClientEra>(), Ok(ClientEra::Auto));
        assert_eq!("modern".parse::<ClientEra>(), Ok(ClientEra::Modern));
        assert_eq!("legacy".parse::<ClientEra>(), Ok(ClientEra::Legacy));
        assert!("new".parse::<ClientEra>().is_err());
        assert_eq!(ClientEra::default().to_string(), "auto");
    }

    #[test]
    fn headers_follow_the_method_and_encode() {
        let params = json!({"name":"my-hyphenated-tool","arguments":{"region":"us-west1","p":42,"v":false,"e":"","n":null,"u":"Hello, 世界","w":" padded ","i":"us west 1","f":3.5}});
        let ann = |s: &str, p: &str| (s.to_owned(), vec![p.to_owned()]);
        let headers = request_headers(
            "tools/call",
            &params,
            "2026-07-28",
            &[
                ann("Region", "region"),
                ann("Priority", "p"),
                ann("Verbose", "v"),
                ann("Empty", "e"),
                ann("Null", "n"),
                ann("Unicode", "u"),
                ann("Padded", "w"),
                ann("Inner", "i"),
                ann("Absent", "zz"),
            ],
        );
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(get("Mcp-Method"), Some("tools/call"));
        assert_eq!(get("Mcp-Name"), Some("my-hyphenated-tool"));
        assert_eq!(get("Mcp-Param-Region"), Some("us-west1"));
        assert_eq!(get("Mcp-Param-Priority"), Some("42"));
        assert_eq!(get("Mcp-Param-Verbose"), Some("false"));
        assert_eq!(get("Mcp-Param-Empty"), Some(""));
        assert_eq!(get("Mcp-Param-Null"), None);
        assert_eq!(get("Mcp-Param-Absent"), None);
        assert_eq!(
            get("Mcp-Param-Unicode"),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(get("Mcp-Param-Padded"), Some("=?base64?IHBhZGRlZCA=?="));
        assert_eq!(get("Mcp-Param-Inner"), Some("us west 1"));
        let read = request_headers(
            "resources/read",
            &json!({"uri":"file:///a%20b.txt"}),
            "v",
            &[],
        );
        assert_eq!(
            read[2],
            ("Mcp-Name".to_owned(), "file:///a%20b.txt".to_owned())
        );
        let list = request_headers("tools/list", &json!({}), "v", &[]);
        assert_eq!(list.len(), 2);
        let prompt = request_headers("prompts/get", &json!({"name":" p "}), "v", &[]);
        assert_eq!(prompt[2].1, "=?base64?IHAg?=");
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let tool = |prop: Value| json!({"type":"object","properties":{"a": prop}});
        let ok = header_annotations(&json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "query":{"type":"string"}}}))
        .unwrap();
        assert_eq!(
            ok,
            vec![
                ("Region".to_owned(), vec!["region".to_owned()]),
                ("N".to_owned(), vec!["nested".to_owned(), "n".to_owned()])
            ]
        );
        for bad in [
            tool(json!({"type":"string","x-mcp-header":""})),
            tool(json!({"type":"object","x-mcp-header":"Obj"})),
            tool(json!({"type":"array","x-mcp-header":"Arr"})),
            tool(json!({"type":"null","x-mcp-header":"Nul"})),
            tool(json!({"type":"number","x-mcp-header":"Num"})),
            tool(json!({"type":"string","x-mcp-header":"Has Space"})),
            tool(json!({"type":"string","x-mcp-header":"Has:Colon"})),
            tool(json!({"type":"string","x-mcp-header":"Ünï"})),
            tool(json!({"type":"string","x-mcp-header":"Ctl\u{1}"})),
            tool(json!({"type":"string","x-mcp-header":7})),
            tool(json!({"type":"array","items":{"type":"string","x-mcp-header":"Item"}})),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}),
            json!({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"X"}}}]}),
        ] {
            assert!(header_annotations(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn probe_failures_are_classified() {
        let rpc = |code: i32| ErrorObject::new(ErrorCode(code), "x");
        let http = |status: u16, error: Option<ErrorObject>| ClientError::HttpStatus {
            status,
            error,
            detail: String::new(),
        };
        let v22 = rpc(-32022).with_data(json!({"supported":["2026-07-28"],"requested":"x"}));
        assert_eq!(
            classify_probe(&http(400, Some(v22.clone())), true),
            ProbeVerdict::Modern(Some("2026-07-28".into()))
        );
        assert_eq!(
            classify_probe(&http(400, Some(rpc(-32020))), true),
            ProbeVerdict::Modern(None)
        );
        assert_eq!(
            classify_probe(&http(404, Some(rpc(-32601))), true),
            ProbeVerdict::Modern(None)
        );
        assert_eq!(
            classify_probe(&http(400, Some(rpc(-32000))), true),
            ProbeVerdict::Legacy
        );
        assert_eq!(classify_probe(&http(400, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(404, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(405, None), true), ProbeVerdict::Legacy);
        // Any other 4xx without a modern error: rmcp before 2026-07-28 answers 422.
        assert_eq!(classify_probe(&http(422, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(406, None), true), ProbeVerdict::Legacy);
        assert_eq!(
            classify_probe(&http(422, Some(rpc(-32600))), true),
            ProbeVerdict::Legacy
        );
        for status in [401, 403, 407, 408, 429, 500, 502, 503] {
            assert_eq!(
                classify_probe(&http(status, None), true),
                ProbeVerdict::Fail,
                "{status}"
            );
        }
        assert_eq!(classify_probe(&http(401, None), true), ProbeVerdict::Fail);
        assert_eq!(classify_probe(&http(500, None), true), ProbeVerdict::Fail);
        let timeout = ClientError::Timeout {
            method: "server/discover".into(),
            timeout_ms: 1,
        };
        assert_eq!(classify_probe(&timeout, true), ProbeVerdict::Fail);
        assert_eq!(classify_probe(&timeout, false), ProbeVerdict::Legacy);
        assert_eq!(
            classify_probe(&ClientError::Rpc(rpc(-32601)), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::Rpc(rpc(-32602)), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::Rpc(v22), false),
            ProbeVerdict::Modern(Some("2026-07-28".into()))
        );
        let legacy_only = rpc(-32022).with_data(json!({"supported":["2025-11-25"]}));
        assert_eq!(
            classify_probe(&ClientError::Rpc(legacy_only), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::closed("gone"), false),
            ProbeVerdict::Fail
        );
    }

    #[test]
    fn result_types() {
        assert!(is_complete(&json!({})).unwrap());
        assert!(is_complete(&json!({"resultType":"complete"})).unwrap());
        assert!(!is_complete(&json!({"resultType":"input_required"})).unwrap());
        assert!(is_complete(&json!({"resultType":"task"})).is_err());
    }

    #[test]
    fn meta_is_merged() {
        let meta = request_meta(
            "2026-07-28",
            &Value::Null,
            &json!({"name":"c","version":"1"}),
        );
        let p = with_meta(Some(json!({"name":"t","_meta":{"progressToken":1}})), &meta).unwrap();
        assert_eq!(p["_meta"]["progressToken"], 1);
        assert_eq!(p["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(p["_meta"][META_CLIENT_CAPABILITIES], json!({}));
        assert!(with_meta(Some(json!([1])), &meta).is_err());
    }
}
