//! The opt-in CORS layer (`native::endpoint::cors_layer`) in front of a real [`Endpoint`] on
//! 127.0.0.1: real preflights (`OPTIONS` with `Access-Control-Request-Method` /
//! `-Headers`) for both eras of Streamable HTTP, the 2026-07-28 headers (`Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`), and the headers a page's script may read. The lists come from
//! `orkestrel_mcp::http::headers`; the rules are the Fetch standard's CORS protocol
//! (<https://fetch.spec.whatwg.org/#http-cors-protocol>) over
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>.
#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use std::net::SocketAddr;

use orkestrel_mcp::http::headers::{
    CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, MCP_PARAM_PREFIX,
};
use orkestrel_mcp::native::endpoint::{cors_layer, Endpoint, EndpointOptions};
use serde_json::json;
use support::*;

const ORIGIN: &str = "http://127.0.0.1:8080";

/// The endpoint (origin allow-list = [`ORIGIN`]) wrapped in `cors_layer(&[ORIGIN])`.
async fn start_cors() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let mut options = EndpointOptions::default();
    options.security.allowed_origins = Some(vec![ORIGIN.into()]);
    let endpoint = Endpoint::new(server(), options).unwrap();
    let layer = cors_layer(&[ORIGIN.into()]).unwrap();
    start_service(tower_layer::Layer::layer(&layer, endpoint)).await
}

/// A preflight for a `POST` from `origin` asking for `headers` (a comma-separated list).
async fn preflight(addr: SocketAddr, origin: &str, headers: &str) -> Reply {
    let mut request = vec![
        ("origin", origin),
        ("access-control-request-method", "POST"),
    ];
    if !headers.is_empty() {
        request.push(("access-control-request-headers", headers));
    }
    send(addr, "OPTIONS", &request, "").await
}

/// A comma-separated header value as lowercase names.
fn names(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect()
}

#[tokio::test]
async fn a_preflight_admits_every_header_of_both_eras() {
    let (addr, task) = start_cors().await;
    // What a browser sends for a 2026-07-28 tools/call with an `x-mcp-header` argument, and for
    // a resumed GET stream of the handshake era (names as a page might spell them).
    let asked = "content-type, accept, Authorization, MCP-Protocol-Version, Mcp-Method, \
                 Mcp-Name, Mcp-Param-Region, mcp-param-x, Mcp-Session-Id, Last-Event-ID";
    let reply = preflight(addr, ORIGIN, asked).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(ORIGIN));
    let allowed = names(reply.header("access-control-allow-headers"));
    for name in names(Some(asked)) {
        assert!(allowed.contains(&name), "{name} not allowed: {allowed:?}");
    }
    let methods = names(reply.header("access-control-allow-methods"));
    for method in CORS_ALLOW_METHODS {
        assert!(
            methods.contains(&method.to_ascii_lowercase()),
            "{method}: {methods:?}"
        );
    }
    // The answer depends on the asked headers: a cache must key on them.
    let vary = names(reply.header("vary"));
    assert!(
        vary.contains(&"access-control-request-headers".to_owned()),
        "{vary:?}"
    );
    // Every named header of the core's list, alone.
    for name in CORS_ALLOW_HEADERS {
        let reply = preflight(addr, ORIGIN, name).await;
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some(ORIGIN),
            "{name}"
        );
        assert_eq!(names(reply.header("access-control-allow-headers")), [*name]);
    }
    // No headers asked: still a grant (a simple POST body type needs none).
    let reply = preflight(addr, ORIGIN, "").await;
    assert_eq!(reply.header("access-control-allow-origin"), Some(ORIGIN));
    task.abort();
}

#[tokio::test]
async fn a_preflight_asking_for_any_other_header_gets_no_grant() {
    let (addr, task) = start_cors().await;
    for asked in [
        "x-other",
        "content-type, mcp-method, x-other",
        "cookie",
        // The prefix alone names no parameter.
        MCP_PARAM_PREFIX,
        "mcp-parameter",
        "mcp-session",
    ] {
        let reply = preflight(addr, ORIGIN, asked).await;
        assert_eq!(
            reply.header("access-control-allow-origin"),
            None,
            "{asked}: {reply:?}"
        );
    }
    // Two header lines: both are checked.
    let reply = send(
        addr,
        "OPTIONS",
        &[
            ("origin", ORIGIN),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "mcp-method"),
            ("access-control-request-headers", "x-other"),
        ],
        "",
    )
    .await;
    assert_eq!(reply.header("access-control-allow-origin"), None);
    // Another origin asking for allowed headers: no grant either.
    let reply = preflight(addr, "https://evil.example", "mcp-method, mcp-name").await;
    assert_eq!(reply.header("access-control-allow-origin"), None);
    task.abort();
}

#[tokio::test]
async fn responses_expose_the_session_version_and_challenge_headers() {
    let (addr, task) = start_cors().await;
    let exposed_of = |reply: &Reply| names(reply.header("access-control-expose-headers"));
    // The handshake era: initialize mints a session the page must read.
    let reply = post(addr, &[("origin", ORIGIN)], &initialize(1, "2025-11-25")).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(ORIGIN));
    assert!(reply.header("mcp-session-id").is_some());
    let exposed = exposed_of(&reply);
    for name in CORS_EXPOSE_HEADERS {
        assert!(exposed.contains(&name.to_string()), "{name}: {exposed:?}");
    }
    assert!(
        exposed.contains(&"www-authenticate".to_owned()),
        "{exposed:?}"
    );
    // The 2026-07-28 era: a server/discover with its headers, through the layer.
    let discover = json!({
        "jsonrpc": "2.0", "id": 2, "method": "server/discover",
        "params": { "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        } }
    })
    .to_string();
    let reply = post(
        addr,
        &[
            ("origin", ORIGIN),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
        &discover,
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("access-control-allow-origin"), Some(ORIGIN));
    assert!(exposed_of(&reply).contains(&"mcp-protocol-version".to_owned()));
    let result = &reply.messages()[0]["result"];
    assert!(
        result["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{result}"
    );
    // Another origin: no grant, and the guard refuses it.
    let reply = post(
        addr,
        &[("origin", "https://evil.example")],
        &initialize(3, "2025-11-25"),
    )
    .await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    task.abort();
}
