//! How the route reads a request's header fields and body, over plain data: the `Accept`
//! negotiation, the `MCP-Protocol-Version` field (spec `basic/transports`, Protocol Version
//! Header: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>), the
//! declared and read body size, and the answers that refuse each.

use crate::http::answer::Answer;
use crate::http::headers;
use crate::http::media::Accept;
use crate::http::request::{Body, Fields};
use crate::protocol::is_supported_version;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// `413` at once when `Content-Length` already says the body is over `limit` bytes (no waiting
/// for a body the route would refuse).
pub fn declared_too_large<H: Fields + ?Sized>(fields: &H, limit: usize) -> Option<Answer> {
    let declared = fields
        .field(headers::CONTENT_LENGTH)?
        .trim()
        .parse::<u64>()
        .ok()?;
    (declared > limit as u64).then(|| Answer::too_large(limit))
}

/// The bytes of a body the host read, or the answer that refuses it: `413` over `limit` bytes,
/// `400` (`-32700`) when unreadable, `408` when it took too long.
///
/// # Errors
/// The refusing [`Answer`].
pub fn body_bytes(body: Body, limit: usize) -> Result<Vec<u8>, Answer> {
    match body {
        Body::Bytes(bytes) if bytes.len() > limit => Err(Answer::too_large(limit)),
        Body::Bytes(bytes) => Ok(bytes),
        Body::TooLarge => Err(Answer::too_large(limit)),
        Body::Unreadable(reason) => Err(Answer::rpc_error(
            400,
            ErrorObject::parse_error(format!("body read failed: {reason}")),
        )),
        Body::TimedOut(after) => Err(Answer::rpc_error(
            408,
            ErrorObject::invalid_request(format!("the body took over {} s", after.as_secs())),
        )),
    }
}

/// What the `Accept` fields admit ([`crate::http::media::Accept`]); fields present but none of them
/// text admit nothing, like an unknown range.
pub fn accept<H: Fields + ?Sized>(fields: &H) -> Accept {
    let values = fields.field_values(headers::ACCEPT);
    if !values.is_empty() && values.iter().all(Option::is_none) {
        return Accept {
            json: false,
            sse: false,
        };
    }
    Accept::parse(values.into_iter().flatten())
}

/// The `MCP-Protocol-Version` field: `None` when absent; repeated identical values are one.
///
/// # Errors
/// `-32600` when repeated with different values or not visible ASCII.
pub(crate) fn protocol_version_header<H: Fields + ?Sized>(
    fields: &H,
) -> Result<Option<String>, ErrorObject> {
    let mut found: Option<String> = None;
    for value in fields.field_values(headers::MCP_PROTOCOL_VERSION) {
        let value = value
            .ok_or_else(|| {
                ErrorObject::invalid_request("MCP-Protocol-Version is not visible ASCII")
            })?
            .trim()
            .to_owned();
        match &found {
            Some(seen) if *seen != value => {
                return Err(ErrorObject::invalid_request(
                    "conflicting MCP-Protocol-Version headers",
                ))
            }
            _ => found = Some(value),
        }
    }
    Ok(found)
}

/// Why an `MCP-Protocol-Version` header was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadProtocolVersion {
    /// Not a revision this server speaks (or not text).
    Unsupported(String),
    /// Repeated with different values.
    Conflicting,
}

impl BadProtocolVersion {
    /// The `400` (`-32600`) that refuses it (spec `basic/transports`, Protocol Version Header).
    pub fn answer(&self) -> Answer {
        let message = match self {
            BadProtocolVersion::Unsupported(v) => {
                format!("Bad Request: unsupported MCP-Protocol-Version {v:?}")
            }
            BadProtocolVersion::Conflicting => {
                "Bad Request: conflicting MCP-Protocol-Version headers".to_owned()
            }
        };
        Answer::rpc_error(400, ErrorObject::new(ErrorCode::INVALID_REQUEST, message))
    }
}

/// Read the `MCP-Protocol-Version` field(s): `Ok(None)` when absent; `Ok(Some(v))` when every
/// value (repeated fields, or comma-separated) is the same supported revision.
///
/// # Errors
/// [`BadProtocolVersion`] for an unsupported value or differing values (answer it with
/// [`BadProtocolVersion::answer`], `400`).
pub fn read_protocol_version<H: Fields + ?Sized>(
    fields: &H,
) -> Result<Option<String>, BadProtocolVersion> {
    let mut found: Option<String> = None;
    for value in fields.field_values(headers::MCP_PROTOCOL_VERSION) {
        let text = value.ok_or_else(|| BadProtocolVersion::Unsupported("<not text>".into()))?;
        for part in text.split(',') {
            let part = part.trim();
            if !is_supported_version(part) {
                return Err(BadProtocolVersion::Unsupported(part.to_owned()));
            }
            match &found {
                Some(v) if v != part => return Err(BadProtocolVersion::Conflicting),
                _ => found = Some(part.to_owned()),
            }
        }
    }
    Ok(found)
}
