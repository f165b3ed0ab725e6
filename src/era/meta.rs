//! The per-request [`_meta` envelope](https://modelcontextprotocol.io/specification/2026-07-28/basic) of a 2026-07-28 request, and the
//! [version checks](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning): header against body, then against what we serve.

use serde_json::{json, Map, Value};

use super::{
    supported_versions, HEADER_MISMATCH, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN_PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::params::printable;
use crate::protocol::LogLevel;
use crate::wire::jsonrpc::ErrorObject;

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
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!(
                        "unknown log level {}",
                        crate::wire::json_text::JsonText(level)
                    ))
                })?,
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
        format!("Unsupported protocol version: {}", printable(requested)),
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
                "MCP-Protocol-Version {:?} differs from _meta protocolVersion {:?}",
                printable(header),
                printable(&meta.protocol_version)
            )));
        }
    }
    if !MODERN_PROTOCOL_VERSIONS.contains(&meta.protocol_version.as_str()) {
        return Err(unsupported_version(&meta.protocol_version));
    }
    Ok(())
}
