//! HTTP hygiene of the route plan, without sockets: single-value MCP fields repeated with
//! different values, `Host` on `HTTP/1.1` and `HTTP/1.0`, the target's authority in the guard.

use std::sync::Arc;

use futures::executor::block_on;
use serde_json::Value;

use super::answer::{Answer, AnswerBody};
use super::guard::{Guard, Refusal, SecurityOptions};
use super::headers::*;
use super::negotiate::{conflicting_fields, host_required};
use super::request::{HttpRequest, HttpVersion};
use super::route::{Head, Route, RouteOptions, Spawn};
use crate::http::session::{SessionOptions, SessionStore};
use crate::{McpServer, ServerOptions};

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

fn spawn() -> Spawn {
    Arc::new(|future| {
        std::thread::spawn(move || block_on(future));
    })
}

fn route() -> Route {
    let server = McpServer::new(ServerOptions::new("hygiene", "1"));
    Route::new(server, RouteOptions::default(), spawn())
}

fn with_sessions() -> Route {
    let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
    route().with_sessions(store)
}

fn post() -> HttpRequest {
    HttpRequest::new("POST", DEFAULT_MCP_PATH)
        .header("Content-Type", APPLICATION_JSON)
        .header("Accept", APPLICATION_JSON)
        .body(PING)
}

fn json_of(answer: &Answer) -> Value {
    match &answer.body {
        AnswerBody::Json(text) => serde_json::from_str(text).unwrap(),
        other => panic!("not JSON: {other:?}"),
    }
}

/// `(status, code, message)` of an answer with a JSON-RPC error body (id `null`).
fn refused(answer: &Answer) -> (u16, i64, String) {
    let body = json_of(answer);
    assert_eq!(body["id"], Value::Null, "{body}");
    (
        answer.status,
        body["error"]["code"].as_i64().unwrap(),
        body["error"]["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_single_value_field_repeated_with_different_values_is_400_naming_it() {
    let cases = [
        (MCP_SESSION_ID, "a1", "b2", "Mcp-Session-Id"),
        (
            MCP_PROTOCOL_VERSION,
            "2025-06-18",
            "2025-03-26",
            "MCP-Protocol-Version",
        ),
        (MCP_METHOD, "ping", "tools/list", "Mcp-Method"),
        (MCP_NAME, "echo", "other", "Mcp-Name"),
        ("Mcp-Param-Region", "eu", "us", "Mcp-Param-region"),
    ];
    for (name, first, second, shown) in cases {
        // Either spelling of the name, in both routes, at the head and when answering.
        let request = post()
            .header(name.to_ascii_uppercase(), first)
            .header(name, second);
        for route in [route(), with_sessions()] {
            let a = block_on(route.respond(request.clone()));
            let (status, code, message) = refused(&a);
            assert_eq!((status, code), (400, -32600), "{name}: {message}");
            assert!(
                message.contains(&format!("conflicting {shown} headers")),
                "{name}: {message}"
            );
            let head = route.head_of(&request, None);
            assert!(
                matches!(&head, Head::Answer(a) if a.status == 400),
                "{name}: {head:?}"
            );
        }
    }
}

#[test]
fn identical_repeated_values_are_one_value() {
    let request = post()
        .header(MCP_PROTOCOL_VERSION, "2025-06-18")
        .header(MCP_PROTOCOL_VERSION, " 2025-06-18")
        .header(MCP_METHOD, "ping")
        .header(MCP_METHOD, "ping");
    assert!(conflicting_fields(&request).is_none());
    let a = block_on(route().respond(request));
    assert_eq!(a.status, 200, "{:?}", a.body);
    // A comma-separated list of one version is that version; of two, a conflict.
    let listed = post().header(MCP_PROTOCOL_VERSION, "2025-06-18, 2025-06-18");
    assert_eq!(block_on(route().respond(listed)).status, 200);
    let listed = post().header(MCP_PROTOCOL_VERSION, "2025-06-18, 2025-03-26");
    assert!(refused(&block_on(route().respond(listed)))
        .2
        .contains("MCP-Protocol-Version"));
    // A value that is not text differs from any other.
    let mut not_text = post().header(MCP_METHOD, "ping");
    not_text.headers.push((MCP_METHOD.to_owned(), None));
    assert_eq!(block_on(route().respond(not_text)).status, 400);
}

#[test]
fn session_verbs_refuse_conflicting_session_ids_before_any_lookup() {
    let route = with_sessions();
    for verb in ["GET", "DELETE", "POST"] {
        let request = HttpRequest::new(verb, DEFAULT_MCP_PATH)
            .header(ACCEPT, TEXT_EVENT_STREAM)
            .header(CONTENT_TYPE, APPLICATION_JSON)
            .header(MCP_SESSION_ID, "one")
            .header(MCP_SESSION_ID, "two")
            .body(PING);
        let a = block_on(route.respond(request));
        let (status, _, message) = refused(&a);
        assert_eq!(status, 400, "{verb}: not 404 for the first id");
        assert!(message.contains("Mcp-Session-Id"), "{verb}: {message}");
    }
}

#[test]
fn http_1_1_without_host_is_400_and_http_1_0_or_unknown_is_not() {
    let mut request = post();
    request.version = Some(HttpVersion::Http11);
    let (status, code, message) = refused(&block_on(route().respond(request.clone())));
    assert_eq!((status, code), (400, -32600));
    assert!(message.contains("Host"), "{message}");
    assert!(matches!(route().head_of(&request, None), Head::Answer(a) if a.status == 400));
    assert!(host_required(Some(HttpVersion::Http11), &request).is_some());
    let with_host = request.clone().header(HOST, "127.0.0.1:3000");
    assert!(matches!(
        route().head_of(&with_host, None),
        Head::ReadBody { .. }
    ));
    for version in [Some(HttpVersion::Http10), Some(HttpVersion::Http2), None] {
        let mut request = post();
        request.version = version;
        assert!(host_required(version, &request).is_none(), "{version:?}");
        assert_eq!(
            block_on(route().respond(request)).status,
            200,
            "{version:?}"
        );
    }
}

fn fields(host: Option<&str>, origin: Option<&str>) -> Vec<(String, Option<String>)> {
    let mut h = Vec::new();
    if let Some(host) = host {
        h.push((HOST.to_owned(), Some(host.to_owned())));
    }
    if let Some(origin) = origin {
        h.push((ORIGIN.to_owned(), Some(origin.to_owned())));
    }
    h
}

#[test]
fn the_host_guard_needs_a_host_on_every_version_and_checks_the_target_authority() {
    let loopback = Guard::new(&SecurityOptions {
        loopback: true,
        ..SecurityOptions::default()
    })
    .unwrap();
    // No Host (an HTTP/1.0 request may omit it): refused where Host is checked.
    assert_eq!(loopback.check(&fields(None, None)), Err(Refusal::Host));
    let listed = Guard::new(&SecurityOptions {
        allowed_hosts: Some(vec!["api.example.com".into()]),
        ..SecurityOptions::default()
    })
    .unwrap();
    assert_eq!(listed.check(&fields(None, None)), Err(Refusal::Host));
    // Bound elsewhere with no list: Host is not checked, its absence passes.
    let open = Guard::new(&SecurityOptions::default()).unwrap();
    assert_eq!(open.check(&fields(None, None)), Ok(()));
    // The target's authority (absolute-form, HTTP/2 :authority) stands for Host and is checked
    // as well as every Host.
    assert_eq!(
        loopback.check_request(Some("127.0.0.1:3000"), &fields(None, None)),
        Ok(())
    );
    assert_eq!(
        loopback.check_request(Some("evil.example"), &fields(Some("localhost"), None)),
        Err(Refusal::Host)
    );
    assert_eq!(
        loopback.check_request(Some("localhost"), &fields(Some("evil.example"), None)),
        Err(Refusal::Host)
    );
    assert_eq!(
        loopback.check_request(Some("user@localhost"), &fields(None, None)),
        Err(Refusal::Host)
    );
    // Same-origin, bound elsewhere: the authority is the request's own origin.
    assert_eq!(
        open.check_request(
            Some("api.example.com"),
            &fields(None, Some("http://api.example.com"))
        ),
        Ok(())
    );
    assert_eq!(
        open.check_request(
            Some("api.example.com"),
            &fields(Some("other.example"), Some("http://other.example"))
        ),
        Err(Refusal::Origin)
    );
}
