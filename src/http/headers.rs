//! Every HTTP header name, media type, default and CORS list of Streamable HTTP, in one place
//! (spec `basic/transports`, <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>;
//! for `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` the 2026-07-28 transport,
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).
//! Names are lowercase (HTTP field names are case-insensitive; HTTP/2 requires lowercase).

use std::time::Duration;

/// `Mcp-Session-Id` (seed `MCP_SESSION_HEADER`): the session a request belongs to.
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version` (seed `MCP_PROTOCOL_VERSION_HEADER`): the revision a request speaks.
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method` (2026-07-28): mirrors the JSON-RPC `method`.
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): mirrors `params.name` (or `params.uri`) of a named request.
pub const MCP_NAME: &str = "mcp-name";
/// The prefix of the `Mcp-Param-{Name}` headers (2026-07-28): tool arguments a schema marks
/// with `x-mcp-header`.
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// `Last-Event-ID`: the last SSE event a client saw, to resume a stream after it.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `Location`: where a redirect leads (followed by the client on the endpoint's origin).
pub const LOCATION: &str = "location";
/// `WWW-Authenticate` (RFC 6750): the challenge of a `401` / `403`.
pub const WWW_AUTHENTICATE: &str = "www-authenticate";
/// `Authorization`: the bearer token of a request.
pub const AUTHORIZATION: &str = "authorization";
/// `Content-Type`.
pub const CONTENT_TYPE: &str = "content-type";
/// `Content-Encoding`: a request body's content coding (only `identity` is read).
pub const CONTENT_ENCODING: &str = "content-encoding";
/// `Content-Length`.
pub const CONTENT_LENGTH: &str = "content-length";
/// `Accept`.
pub const ACCEPT: &str = "accept";
/// `Allow`: the methods a `405` admits.
pub const ALLOW: &str = "allow";
/// `Retry-After`: seconds to wait after a `503`.
pub const RETRY_AFTER: &str = "retry-after";
/// `Cache-Control`.
pub const CACHE_CONTROL: &str = "cache-control";
/// `Origin`.
pub const ORIGIN: &str = "origin";
/// `Host`.
pub const HOST: &str = "host";
/// `X-Accel-Buffering`: `no` asks a reverse proxy (nginx) not to buffer an event stream.
pub const X_ACCEL_BUFFERING: &str = "x-accel-buffering";

/// `application/json`.
pub const APPLICATION_JSON: &str = "application/json";
/// `text/event-stream`.
pub const TEXT_EVENT_STREAM: &str = "text/event-stream";
/// `text/plain; charset=utf-8` (the `404` of an unknown path).
pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
/// The `Accept` of a client `POST`: both answers a server may give.
pub const ACCEPT_JSON_AND_SSE: &str = "application/json, text/event-stream";
/// `no-cache`: the `Cache-Control` of an event stream.
pub const NO_CACHE: &str = "no-cache";
/// The WebSocket subprotocol (`Sec-WebSocket-Protocol`) MCP over WebSocket negotiates (seed
/// `MCP_WEBSOCKET_SUBPROTOCOL`): the native server echoes it when offered, the clients require it.
pub const MCP_WEBSOCKET_SUBPROTOCOL: &str = "mcp";

/// The default path the route is mounted at (seed `DEFAULT_MCP_PATH`).
pub const DEFAULT_MCP_PATH: &str = "/mcp";
/// The default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The protocol version assumed when a request has no `MCP-Protocol-Version` header and no
/// session says otherwise (spec `basic/transports`, Protocol Version Header).
pub const DEFAULT_HTTP_PROTOCOL_VERSION: &str = "2025-03-26";
/// The default interval of SSE keep-alive comments: 15 s.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long a client may take to send a request's headers (and how long an idle keep-alive
/// connection stays open): 30 s.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a client may take to send a request body: 30 s (then `408`).
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The methods a CORS preflight admits.
pub const CORS_ALLOW_METHODS: &[&str] = &["GET", "POST", "DELETE", "OPTIONS"];
/// The request headers a CORS preflight admits by name; `Mcp-Param-*` headers are admitted by
/// their prefix ([`is_cors_allowed_header`]).
pub const CORS_ALLOW_HEADERS: &[&str] = &[
    CONTENT_TYPE,
    ACCEPT,
    AUTHORIZATION,
    MCP_SESSION_ID,
    MCP_PROTOCOL_VERSION,
    MCP_METHOD,
    MCP_NAME,
    LAST_EVENT_ID,
];
/// The response headers a page's script may read.
pub const CORS_EXPOSE_HEADERS: &[&str] = &[MCP_SESSION_ID, MCP_PROTOCOL_VERSION, WWW_AUTHENTICATE];

/// Whether a CORS preflight may admit request header `name` (any case): one of
/// [`CORS_ALLOW_HEADERS`] or an `Mcp-Param-*` header.
///
/// ```
/// use orkestrel_mcp::http::headers::is_cors_allowed_header;
/// assert!(is_cors_allowed_header("Mcp-Param-Region"));
/// assert!(is_cors_allowed_header("MCP-Protocol-Version"));
/// assert!(!is_cors_allowed_header("x-other"));
/// ```
pub fn is_cors_allowed_header(name: &str) -> bool {
    let name = name.trim();
    CORS_ALLOW_HEADERS
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
        || name
            .get(..MCP_PARAM_PREFIX.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(MCP_PARAM_PREFIX))
            && name.len() > MCP_PARAM_PREFIX.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_and_the_cors_lists_cover_the_wire() {
        let names = [
            MCP_SESSION_ID,
            MCP_PROTOCOL_VERSION,
            MCP_METHOD,
            MCP_NAME,
            MCP_PARAM_PREFIX,
            LAST_EVENT_ID,
            WWW_AUTHENTICATE,
            AUTHORIZATION,
            CONTENT_TYPE,
            CONTENT_ENCODING,
            CONTENT_LENGTH,
            ACCEPT,
            ALLOW,
            RETRY_AFTER,
            CACHE_CONTROL,
            ORIGIN,
            HOST,
            X_ACCEL_BUFFERING,
        ];
        for name in names {
            assert_eq!(name, name.to_ascii_lowercase(), "{name}");
        }
        for name in [MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, LAST_EVENT_ID] {
            assert!(is_cors_allowed_header(&name.to_ascii_uppercase()), "{name}");
        }
        assert!(is_cors_allowed_header("Mcp-Param-Region"));
        assert!(!is_cors_allowed_header("mcp-param-"));
        assert!(!is_cors_allowed_header("cookie"));
        assert!(CORS_EXPOSE_HEADERS.contains(&WWW_AUTHENTICATE));
        assert!(CORS_ALLOW_METHODS.contains(&"OPTIONS"));
    }
}
