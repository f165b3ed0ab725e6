//! How a client words an HTTP answer: the status with its reason phrase, the error summary of a
//! failed answer, and whether a body answers a request.

use serde_json::Value;

use crate::wire::jsonrpc::RequestId;

/// The status as `"<code> <reason>"`, e.g. `"404 Not Found"` (the reason phrases of RFC 9110 and
/// its registry, as hyper prints a status; `"<unknown status code>"` for others).
pub fn status_text(status: u16) -> String {
    format!(
        "{status} {}",
        reason(status).unwrap_or("<unknown status code>")
    )
}

fn reason(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Payload Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        510 => "Not Extended",
        511 => "Network Authentication Required",
        _ => return None,
    })
}

/// The summary of a failed answer: `"HTTP <status text>: <detail>"`, the detail being the
/// body's JSON-RPC `error.message`, else its first 300 bytes trimmed (omitted when empty).
pub fn error_summary(status: u16, body: &[u8]) -> String {
    let detail = crate::wire::json_text::parse(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
            text.trim().to_owned()
        });
    if detail.is_empty() {
        format!("HTTP {}", status_text(status))
    } else {
        format!("HTTP {}: {detail}", status_text(status))
    }
}

/// Whether a `400`'s body speaks of the session (its JSON-RPC `error.message`, else its text,
/// names a session: "No valid session ID provided", "Invalid or missing session", …): the
/// servers that answer an unknown session with `400` rather than `404` say so, while a `400`
/// for anything else (a bad version header, a malformed request) says something else and is
/// that error, not an expired session.
pub fn speaks_of_a_session(value: Option<&Value>, body: &[u8]) -> bool {
    let text = match value
        .and_then(|v| v.pointer("/error/message"))
        .and_then(Value::as_str)
    {
        Some(message) => message.as_bytes(),
        None => body,
    };
    text.windows(7).any(|w| w.eq_ignore_ascii_case(b"session"))
}

/// Whether `value` (a message or a batch) holds a response to `id`.
pub fn answers(value: &Value, id: &RequestId) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|v| answers(v, id)),
        Value::Object(map) => {
            !map.contains_key("method")
                && map.get("id").and_then(RequestId::from_value).as_ref() == Some(id)
        }
        _ => false,
    }
}
