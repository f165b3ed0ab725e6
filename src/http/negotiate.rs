//! How the route reads a request's header fields and body, over plain data: the `Accept`
//! negotiation, the `MCP-Protocol-Version` field (spec `basic/transports`, Protocol Version
//! Header: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>), the
//! declared and read body size, the body's media type and coding, and the answers that refuse
//! each.

use crate::http::answer::Answer;
use crate::http::headers;
use crate::http::media::{foreign_charset, is_identity_coding, is_json_media_type, Accept};
use crate::http::request::{Body, Fields, HttpVersion, Occurrence};
use crate::protocol::is_supported_version;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// `400` for an `HTTP/1.1` request without a `Host` field (RFC 9112 §3.2: a server MUST answer
/// such a request `400`). `HTTP/1.0` may omit it (the `Host` guard still refuses it on a loopback
/// bind, [`crate::http::guard`]); HTTP/2 and HTTP/3 carry `:authority` instead; an unknown
/// version (`None`) is not judged.
pub fn host_required<H: Fields + ?Sized>(
    version: Option<HttpVersion>,
    fields: &H,
) -> Option<Answer> {
    (version == Some(HttpVersion::Http11) && !fields.has_field(headers::HOST)).then(|| {
        Answer::rpc_error(
            400,
            ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Bad Request: an HTTP/1.1 request must carry a Host header (RFC 9112 section 3.2)",
            ),
        )
    })
}

/// `415`, `-32600`, for a `POST` body the route cannot read as JSON text: a `Content-Type` that
/// is absent or not `application/json` (an absent one too: a browser may send a body without it
/// cross-origin and without a CORS preflight), one naming a `charset` other than UTF-8 (JSON text
/// is UTF-8, RFC 8259 section 8.1), or a `Content-Encoding` other than `identity` in any of its
/// fields (RFC 9110 section 8.4); the message names what is refused. `None` when it can.
pub fn unsupported_media<H: Fields + ?Sized>(fields: &H) -> Option<Answer> {
    let refuse = |message: String| {
        Some(Answer::rpc_error(
            415,
            ErrorObject::invalid_request(message),
        ))
    };
    let content_type = fields.field(headers::CONTENT_TYPE);
    if !content_type.is_some_and(is_json_media_type) {
        return refuse("Content-Type must be application/json".into());
    }
    // A singleton field (RFC 9110 §8.3): given twice with different values, which one the body
    // is cannot be known (a proxy may read the other), so none is picked.
    if fields.field_count(headers::CONTENT_TYPE) > 1
        && repeated_with_different_values(fields, headers::CONTENT_TYPE)
    {
        return refuse("Content-Type is given more than once, with different values".into());
    }
    if let Some(charset) = content_type.and_then(foreign_charset) {
        return refuse(format!(
            "Content-Type charset {charset} is not supported: JSON text is UTF-8"
        ));
    }
    // Read only when present (a repeated field adds a coding).
    if fields.field_count(headers::CONTENT_ENCODING) > 0 {
        for value in fields.field_values(headers::CONTENT_ENCODING) {
            if !value.is_some_and(is_identity_coding) {
                return refuse(format!(
                    "Content-Encoding {} is not supported: send the body uncompressed",
                    value.unwrap_or("(not text)")
                ));
            }
        }
    }
    None
}

/// The MCP header fields that carry one value: `Mcp-Session-Id`, `MCP-Protocol-Version`,
/// `Mcp-Method`, `Mcp-Name` (and every `Mcp-Param-{Name}`, by [`headers::MCP_PARAM_PREFIX`]).
pub const SINGLE_VALUE_FIELDS: &[&str] = &[
    headers::MCP_SESSION_ID,
    headers::MCP_PROTOCOL_VERSION,
    headers::MCP_METHOD,
    headers::MCP_NAME,
];

/// What the name of every single-value field starts with ([`SINGLE_VALUE_FIELDS`] and
/// [`headers::MCP_PARAM_PREFIX`]).
const MCP_PREFIX: &str = "mcp-";

/// The spelling of a single-value field in messages.
fn display_name(name: &str) -> String {
    match name {
        headers::MCP_SESSION_ID => "Mcp-Session-Id".to_owned(),
        headers::MCP_PROTOCOL_VERSION => "MCP-Protocol-Version".to_owned(),
        headers::MCP_METHOD => "Mcp-Method".to_owned(),
        headers::MCP_NAME => "Mcp-Name".to_owned(),
        other => match other.get(headers::MCP_PARAM_PREFIX.len()..) {
            Some(rest) if other.len() > headers::MCP_PARAM_PREFIX.len() => {
                format!("Mcp-Param-{rest}")
            }
            _ => other.to_owned(),
        },
    }
}

/// `400` (`-32600`, id `null`, the message naming the header) when a single-value MCP field
/// ([`SINGLE_VALUE_FIELDS`], `Mcp-Param-*`) is repeated with different values: which one the
/// request meant cannot be known, so none is picked ("first wins" would let a proxy and the
/// server read different requests). Repeated fields with the same value (after trimming
/// whitespace) are one value, as a proxy that duplicates a field does not change the request;
/// `MCP-Protocol-Version` also reads a comma-separated list, its values compared the same way.
/// A value that is not text counts as differing from any other.
pub fn conflicting_fields<H: Fields + ?Sized>(fields: &H) -> Option<Answer> {
    // Every single-value name starts with `mcp-`: when none of those repeats (one pass over the
    // fields), only a list in one `MCP-Protocol-Version` field can hold two values.
    if !fields.repeats_field_starting_with(MCP_PREFIX)
        && !fields
            .field(headers::MCP_PROTOCOL_VERSION)
            .is_some_and(|v| v.contains(','))
    {
        return None;
    }
    if let Some(name) = SINGLE_VALUE_FIELDS
        .iter()
        .find(|name| repeated_with_different_values(fields, name))
    {
        return Some(conflicting(name));
    }
    // The `Mcp-Param-*` names are listed only when the request has one (rarely).
    if !fields.has_field_starting_with(headers::MCP_PARAM_PREFIX) {
        return None;
    }
    fields
        .field_names()
        .into_iter()
        .filter(|n| n.starts_with(headers::MCP_PARAM_PREFIX))
        .find(|name| repeated_with_different_values(fields, name))
        .map(|name| conflicting(&name))
}

/// Whether the fields named `name` carry more than one value (see [`conflicting_fields`]).
fn repeated_with_different_values<'a, H: Fields + ?Sized>(fields: &'a H, name: &str) -> bool {
    // One field (the usual case) is one value, unless it is a list.
    match fields.field_count(name) {
        0 => return false,
        1 if name != headers::MCP_PROTOCOL_VERSION => return false,
        _ => {}
    }
    let mut seen: Option<Option<&'a str>> = None;
    for value in values_of(fields, name) {
        let differs = match value {
            Some(text) if name == headers::MCP_PROTOCOL_VERSION => text
                .split(',')
                .any(|part| differs_from(&mut seen, Some(part.trim()))),
            Some(text) => differs_from(&mut seen, Some(text.trim())),
            None => differs_from(&mut seen, None),
        };
        if differs {
            return true;
        }
    }
    false
}

/// Take one value of a single-value field: `true` when it differs from the first one seen (a
/// value that is not text differs from any other).
fn differs_from<'a>(seen: &mut Option<Option<&'a str>>, part: Option<&'a str>) -> bool {
    match *seen {
        None => {
            *seen = Some(part);
            false
        }
        Some(first) => first.is_none() || first != part,
    }
}

/// The `400` of [`conflicting_fields`] for the field `name`.
fn conflicting(name: &str) -> Answer {
    Answer::rpc_error(
        400,
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "Bad Request: conflicting {} headers (repeated with different values)",
                display_name(name)
            ),
        ),
    )
}

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
    match fields.occurrence(headers::ACCEPT) {
        Occurrence::Absent => return Accept::parse(std::iter::empty()),
        Occurrence::Once(Some(value)) => return Accept::parse_one(value),
        Occurrence::Once(None) => {
            return Accept {
                json: false,
                sse: false,
            }
        }
        Occurrence::Repeated => {}
    }
    let values = fields.field_values(headers::ACCEPT);
    if !values.is_empty() && values.iter().all(Option::is_none) {
        return Accept {
            json: false,
            sse: false,
        };
    }
    Accept::parse(values.into_iter().flatten())
}

/// The values of the fields named `name`, in order, without listing them when there is one
/// field (the usual case): what [`Fields::field_values`] holds.
fn values_of<'a, H: Fields + ?Sized>(fields: &'a H, name: &str) -> Values<'a> {
    match fields.occurrence(name) {
        Occurrence::Absent => Values::One(None),
        Occurrence::Once(value) => Values::One(Some(value)),
        Occurrence::Repeated => Values::Many(fields.field_values(name).into_iter()),
    }
}

/// [`values_of`]'s iterator.
enum Values<'a> {
    One(Option<Option<&'a str>>),
    Many(std::vec::IntoIter<Option<&'a str>>),
}

impl<'a> Iterator for Values<'a> {
    type Item = Option<&'a str>;

    fn next(&mut self) -> Option<Option<&'a str>> {
        match self {
            Values::One(value) => value.take(),
            Values::Many(values) => values.next(),
        }
    }
}

/// The `MCP-Protocol-Version` field: `None` when absent; repeated identical values (as repeated
/// fields or a comma-separated list) are one.
///
/// # Errors
/// `-32600` when repeated with different values or not visible ASCII.
pub(crate) fn protocol_version_header<H: Fields + ?Sized>(
    fields: &H,
) -> Result<Option<String>, ErrorObject> {
    protocol_version_header_str(fields).map(|v| v.map(str::to_owned))
}

/// [`protocol_version_header`] borrowed from the fields.
pub(crate) fn protocol_version_header_str<H: Fields + ?Sized>(
    fields: &H,
) -> Result<Option<&str>, ErrorObject> {
    let mut found: Option<&str> = None;
    for value in values_of(fields, headers::MCP_PROTOCOL_VERSION) {
        let text = value.ok_or_else(|| {
            ErrorObject::invalid_request("MCP-Protocol-Version is not visible ASCII")
        })?;
        for part in text.split(',') {
            let part = part.trim();
            match found {
                Some(seen) if seen != part => {
                    return Err(ErrorObject::invalid_request(
                        "conflicting MCP-Protocol-Version headers",
                    ))
                }
                _ => found = Some(part),
            }
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
            BadProtocolVersion::Unsupported(v)
                if crate::era::MODERN_PROTOCOL_VERSIONS.contains(&v.as_str()) =>
            {
                format!(
                    "Bad Request: MCP-Protocol-Version {v:?} has no sessions (that revision is \
                     stateless): a POST at it goes without Mcp-Session-Id; a session's requests, \
                     GET and DELETE carry the session's negotiated version"
                )
            }
            BadProtocolVersion::Unsupported(v) => {
                format!(
                    "Bad Request: unsupported MCP-Protocol-Version {:?}",
                    crate::protocol::params::printable(v)
                )
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
    read_protocol_version_str(fields).map(|v| v.map(str::to_owned))
}

/// [`read_protocol_version`] borrowed from the fields.
pub(crate) fn read_protocol_version_str<H: Fields + ?Sized>(
    fields: &H,
) -> Result<Option<&str>, BadProtocolVersion> {
    let mut found: Option<&str> = None;
    for value in values_of(fields, headers::MCP_PROTOCOL_VERSION) {
        let text = value.ok_or_else(|| BadProtocolVersion::Unsupported("<not text>".into()))?;
        for part in text.split(',') {
            let part = part.trim();
            if !is_supported_version(part) {
                return Err(BadProtocolVersion::Unsupported(part.to_owned()));
            }
            match found {
                Some(v) if v != part => return Err(BadProtocolVersion::Conflicting),
                _ => found = Some(part),
            }
        }
    }
    Ok(found)
}
