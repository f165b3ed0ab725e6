//! The route plan pinned without sockets: each row of the decision tables in
//! [`super::route`] and [`super::sessions`], request in, answer out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::executor::block_on;
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::answer::{Answer, AnswerBody};
use super::headers::*;
use super::request::{Body, HttpRequest};
use super::route::{status_of, Head, Route, RouteOptions, Spawn};
use crate::http::session::{
    MintError, Session, SessionBackend, SessionOptions, SessionStore, Unavailable,
};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcNotification, JsonRpcResponse};
use crate::{McpServer, ServerOptions, Tool};

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const MODERN: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// Spawned work runs on a thread of its own (the plan only needs *a* spawner).
fn spawn() -> Spawn {
    Arc::new(|future| {
        std::thread::spawn(move || block_on(future));
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// Dropped when the tool's future is dropped (cancelled).
struct Flag(Arc<AtomicBool>);

impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn server(cancelled: Arc<AtomicBool>) -> McpServer {
    let server = McpServer::new(ServerOptions::new("plan", "1"));
    server.tools().add(Tool::new("echo", |a: Text| async move {
        Ok::<_, String>(a.text)
    }));
    server.tools().add(Tool::with_context(
        "note",
        |a: Text, ctx: RequestContext| async move {
            ctx.notify(JsonRpcNotification::new("notifications/message"));
            Ok::<_, String>(a.text)
        },
    ));
    let silent = cancelled.clone();
    server.tools().add(Tool::new("silent", move |_: Text| {
        let flag = Flag(silent.clone());
        async move {
            let _flag = flag;
            futures::future::pending::<()>().await;
            Ok::<_, String>(String::new())
        }
    }));
    server.tools().add(Tool::with_context(
        "hang",
        move |_: Text, ctx: RequestContext| {
            let flag = Flag(cancelled.clone());
            async move {
                ctx.notify(JsonRpcNotification::new("notifications/message"));
                let _flag = flag;
                futures::future::pending::<()>().await;
                Ok::<_, String>(String::new())
            }
        },
    ));
    server
}

/// Wait (bounded: 10 s) until the tool behind `cancelled` was dropped.
fn wait_until_cancelled(cancelled: &AtomicBool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !cancelled.load(Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool was not cancelled"
        );
        std::thread::yield_now();
    }
}

fn route() -> Route {
    Route::new(server(Arc::default()), RouteOptions::default(), spawn())
}

fn with_sessions(max_sessions: usize) -> Route {
    let options = SessionOptions {
        max_sessions,
        ..SessionOptions::default()
    };
    let store = Arc::new(SessionStore::new(options, Arc::new(|| 0)));
    route().with_sessions(store)
}

fn post(body: &str) -> HttpRequest {
    HttpRequest::new("POST", DEFAULT_MCP_PATH)
        .header("Content-Type", APPLICATION_JSON)
        .header("Accept", APPLICATION_JSON)
        .body(body)
}

fn answer(route: &Route, request: HttpRequest) -> Answer {
    block_on(route.respond(request))
}

fn json_of(answer: &Answer) -> Value {
    match &answer.body {
        AnswerBody::Json(text) => serde_json::from_str(text).unwrap(),
        other => panic!("not JSON: {other:?}"),
    }
}

fn code_of(answer: &Answer) -> i64 {
    json_of(answer)["error"]["code"].as_i64().unwrap()
}

fn events_of(answer: Answer) -> Vec<String> {
    match answer.body {
        AnswerBody::Events(events) => block_on(events.collect()),
        other => panic!("not an event stream: {other:?}"),
    }
}

#[test]
fn unknown_path_is_404_text() {
    let a = answer(&route(), HttpRequest::new("POST", "/other"));
    assert_eq!(a.status, 404);
    assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_PLAIN));
    assert!(matches!(a.body, AnswerBody::Text("Not Found")));
    let head = route().head("GET", "/other", &Vec::new());
    assert!(matches!(head, Head::Answer(a) if a.status == 404));
}

#[test]
fn other_verbs_are_405_with_allow_post() {
    for verb in ["GET", "DELETE", "PUT"] {
        let a = answer(&route(), HttpRequest::new(verb, DEFAULT_MCP_PATH));
        assert_eq!(a.status, 405, "{verb}");
        assert_eq!(a.header(ALLOW), Some("POST"));
        assert_eq!(code_of(&a), ErrorCode::SERVER_ERROR.0 as i64);
    }
}

#[test]
fn content_type_must_be_json() {
    let request = HttpRequest::new("POST", DEFAULT_MCP_PATH).body(PING);
    let a = answer(&route(), request);
    assert_eq!((a.status, code_of(&a)), (415, -32600));
    let request = HttpRequest::new("POST", DEFAULT_MCP_PATH)
        .header(CONTENT_TYPE, "text/plain")
        .body(PING);
    assert_eq!(answer(&route(), request).status, 415);
}

/// A body the route would misread as UTF-8 JSON is refused naming why: another charset, a
/// content coding such as `gzip` (RFC 9110 section 8.4), or two different `Content-Type`s;
/// UTF-8 spelled any way and `identity` pass.
#[test]
fn a_charset_other_than_utf8_or_a_coded_body_is_refused_with_415() {
    let with = |content_type: &str, coding: Option<&str>| {
        let mut request = HttpRequest::new("POST", DEFAULT_MCP_PATH)
            .header(CONTENT_TYPE, content_type)
            .header("Accept", APPLICATION_JSON);
        if let Some(coding) = coding {
            request = request.header("Content-Encoding", coding);
        }
        answer(&route(), request.body(PING))
    };
    let latin1 = with("application/json; charset=ISO-8859-1", None);
    assert_eq!((latin1.status, code_of(&latin1)), (415, -32600));
    let message = json_of(&latin1)["error"]["message"].to_string();
    assert!(message.contains("ISO-8859-1"), "{message}");
    let gzip = with(APPLICATION_JSON, Some("gzip"));
    assert_eq!((gzip.status, code_of(&gzip)), (415, -32600));
    let message = json_of(&gzip)["error"]["message"].to_string();
    assert!(message.contains("gzip"), "{message}");
    for (content_type, coding) in [
        ("application/json; charset=utf-8", None),
        ("application/json;charset=\"UTF8\"", Some("identity")),
    ] {
        assert_eq!(with(content_type, coding).status, 200, "{content_type}");
    }
    // A repeated field adds its coding.
    let repeated = HttpRequest::new("POST", DEFAULT_MCP_PATH)
        .header(CONTENT_TYPE, APPLICATION_JSON)
        .header("Accept", APPLICATION_JSON)
        .header("Content-Encoding", "identity")
        .header("Content-Encoding", "br")
        .body(PING);
    assert_eq!(answer(&route(), repeated).status, 415);
    // Content-Type is one value: given twice, differently, which one holds cannot be known
    // (the first was taken); twice the same is that one.
    let twice = |second: &str| {
        let request = HttpRequest::new("POST", DEFAULT_MCP_PATH)
            .header(CONTENT_TYPE, APPLICATION_JSON)
            .header(CONTENT_TYPE, second)
            .header("Accept", APPLICATION_JSON)
            .body(PING);
        answer(&route(), request).status
    };
    assert_eq!(twice("text/plain"), 415);
    assert_eq!(twice(APPLICATION_JSON), 200);
}

#[test]
fn protocol_version_is_checked() {
    let conflicting = post(PING)
        .header(MCP_PROTOCOL_VERSION, "2025-06-18")
        .header(MCP_PROTOCOL_VERSION, "2025-03-26");
    let a = answer(&route(), conflicting);
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    assert!(json_of(&a)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("conflicting"));
    let mut not_text = post(PING);
    not_text
        .headers
        .push((MCP_PROTOCOL_VERSION.to_owned(), None));
    assert_eq!(answer(&route(), not_text).status, 400);
    // An unknown version is not a handshake-era one: the 2026-07-28 validation answers it.
    let a = answer(
        &route(),
        post(PING).header(MCP_PROTOCOL_VERSION, "1999-01-01"),
    );
    assert_eq!((a.status, code_of(&a)), (400, -32602));
    let a = answer(
        &route(),
        post(PING).header(MCP_PROTOCOL_VERSION, "2025-06-18"),
    );
    assert_eq!(a.status, 200);
}

#[test]
fn accept_must_admit_json_or_sse() {
    let mut request = post(PING);
    request.headers[1].1 = Some("text/html".into());
    let a = answer(&route(), request);
    assert_eq!((a.status, code_of(&a)), (406, -32600));
    let mut request = post(PING);
    request.headers[1].1 = None;
    assert_eq!(
        answer(&route(), request).status,
        406,
        "no text value admits nothing"
    );
}

#[test]
fn the_head_answers_before_the_body() {
    let r = route();
    let fields = post(PING).headers;
    assert!(matches!(
        r.head("POST", DEFAULT_MCP_PATH, &fields),
        Head::ReadBody { limit } if limit == DEFAULT_MAX_BODY_BYTES
    ));
    let mut big = fields.clone();
    big.push((CONTENT_LENGTH.to_owned(), Some("4194305".to_owned())));
    assert!(matches!(
        r.head("POST", DEFAULT_MCP_PATH, &big),
        Head::Answer(a) if a.status == 413
    ));
    assert!(matches!(
        r.head("POST", DEFAULT_MCP_PATH, &Vec::new()),
        Head::Answer(a) if a.status == 415
    ));
}

#[test]
fn body_refusals() {
    let r = route();
    let cases = [
        (Body::TooLarge, 413, -32600),
        (Body::Unreadable("reset".into()), 400, -32700),
        (Body::TimedOut(BODY_READ_TIMEOUT), 408, -32600),
        (
            Body::Bytes(vec![b' '; DEFAULT_MAX_BODY_BYTES + 1]),
            413,
            -32600,
        ),
    ];
    for (body, status, code) in cases {
        let mut request = post("");
        request.body = body;
        let a = answer(&r, request);
        assert_eq!((a.status, code_of(&a)), (status, code));
    }
}

#[test]
fn malformed_and_invalid_bodies_are_400() {
    let r = route();
    for (body, code, id) in [
        ("{", -32700, Value::Null),
        ("", -32700, Value::Null),
        ("[]", -32600, Value::Null),
        // More after a whole request: its id, so it is answered (as on stdio and WebSocket).
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"} {"#,
            -32700,
            json!(4),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
            -32602,
            json!(1),
        ),
    ] {
        let a = answer(&r, post(body));
        assert_eq!((a.status, code_of(&a)), (400, code), "{body}");
        assert_eq!(json_of(&a)["id"], id, "{body}");
    }
}

/// A body that starts with a UTF-8 byte order mark is read as if it had none (RFC 8259 §8.1).
#[test]
fn a_leading_byte_order_mark_is_ignored() {
    let r = route();
    let a = answer(
        &r,
        post("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"),
    );
    assert_eq!(a.status, 200);
    assert_eq!(
        json_of(&a),
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
}

#[test]
fn notifications_and_responses_are_202() {
    let r = route();
    for body in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
    ] {
        let a = answer(&r, post(body));
        assert_eq!(a.status, 202);
        assert!(matches!(a.body, AnswerBody::Empty));
        // Under a version no era speaks: `400`, `-32022`, as a request gets (an unsupported
        // version MUST get 400); under 2026-07-28, taken.
        let a = answer(&r, post(body).header(MCP_PROTOCOL_VERSION, "1999-01-01"));
        assert_eq!((a.status, code_of(&a)), (400, -32022), "{body}");
        assert_eq!(json_of(&a)["error"]["data"]["requested"], "1999-01-01");
        let a = answer(&r, post(body).header(MCP_PROTOCOL_VERSION, "2026-07-28"));
        assert_eq!(a.status, 202, "{body}");
    }
    // A malformed notification is not accepted: `400` with its error, id `null` (it was `202`).
    for (body, code) in [
        (r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#, -32600),
        (r#"{"method":"notifications/initialized"}"#, -32600),
        (r#"{"jsonrpc":"1.0","method":"x"}"#, -32600),
    ] {
        let a = answer(&r, post(body));
        assert_eq!((a.status, code_of(&a)), (400, code), "{body}");
        assert_eq!(json_of(&a)["id"], Value::Null, "{body}");
    }
}

#[test]
fn a_request_is_answered_by_json_or_one_sse_event() {
    let r = route();
    let a = answer(&r, post(PING));
    assert_eq!(a.status, 200);
    assert_eq!(a.header(CONTENT_TYPE), Some(APPLICATION_JSON));
    assert_eq!(
        json_of(&a),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    let mut request = post(PING);
    request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
    let a = answer(&r, request);
    assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_EVENT_STREAM));
    assert_eq!(a.header(CACHE_CONTROL), Some(NO_CACHE));
    // Whole when answered: nothing for a proxy's buffering to hold back.
    assert_eq!(a.header(X_ACCEL_BUFFERING), None);
    assert_eq!(
        events_of(a),
        ["event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"]
    );
    let json_first = Route::new(
        server(Arc::default()),
        RouteOptions {
            prefer_json: true,
            ..RouteOptions::default()
        },
        spawn(),
    );
    let mut request = post(PING);
    request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
    assert!(matches!(
        answer(&json_first, request).body,
        AnswerBody::Json(_)
    ));
}

#[test]
fn a_dispatch_done_at_once_is_its_notifications_then_its_response_all_known_at_once() {
    let r = route();
    let handshake = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"note","arguments":{"text":"hi"}}}"#;
    let modern = MODERN.replace("\"echo\"", "\"note\"");
    for (body, version) in [(handshake, None), (modern.as_str(), Some("2026-07-28"))] {
        let mut request = post(body);
        request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
        if let Some(version) = version {
            request = request
                .header(MCP_PROTOCOL_VERSION, version)
                .header(MCP_METHOD, "tools/call")
                .header(MCP_NAME, "note");
        }
        let a = answer(&r, request);
        assert_eq!(a.status, 200, "{body}");
        assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_EVENT_STREAM), "{body}");
        assert_eq!(a.header(X_ACCEL_BUFFERING), None);
        let AnswerBody::Events(events) = a.body else {
            panic!("an event stream: {body}");
        };
        // Every event is known when the answer is made: nothing left to wait for.
        assert_eq!(futures::Stream::size_hint(&events), (2, Some(2)), "{body}");
        let data = data_of(&block_on(events.collect::<Vec<_>>()));
        assert_eq!(data[0]["method"], "notifications/message", "{data:?}");
        assert!(data[1]["id"].is_number(), "{data:?}");
        assert_eq!(data[1]["result"]["content"][0]["text"], "hi", "{data:?}");
    }
}

#[test]
fn dropping_the_event_stream_cancels_the_dispatch() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let r = Route::new(server(cancelled.clone()), RouteOptions::default(), spawn());
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{"text":""}}}"#;
    let mut request = post(call);
    request.headers[1].1 = Some(TEXT_EVENT_STREAM.into());
    let a = answer(&r, request);
    let AnswerBody::Events(mut events) = a.body else {
        panic!("an event stream");
    };
    let first = block_on(events.next()).unwrap();
    assert!(first.contains("notifications/message"), "{first}");
    assert!(!cancelled.load(Ordering::SeqCst));
    drop(events);
    wait_until_cancelled(&cancelled);
}

/// A request answered with JSON and cancelled by `notifications/cancelled` on its session still
/// gets one JSON object for its `POST` (the transport allows `202` only for notifications and
/// responses): `-32800` with its id.
#[test]
fn a_cancelled_request_answered_with_json_is_minus_32800_with_its_id() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let options = SessionOptions::default();
    let store = Arc::new(SessionStore::new(options, Arc::new(|| 0)));
    let r = Route::new(server(cancelled.clone()), RouteOptions::default(), spawn())
        .with_sessions(store);
    let id = session_id(&answer(&r, post(INIT)));
    let initialized = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .header(MCP_SESSION_ID, id.clone());
    assert_eq!(answer(&r, initialized).status, 202);
    let call = post(r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"hang","arguments":{"text":""}}}"#)
        .header(MCP_SESSION_ID, id.clone());
    let cancel =
        post(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}"#)
            .header(MCP_SESSION_ID, id);
    let (a, c) = block_on(async { futures::join!(r.respond(call), r.respond(cancel)) });
    assert_eq!(c.status, 202);
    assert!(cancelled.load(Ordering::SeqCst), "the tool was cancelled");
    assert_eq!(a.status, 200);
    assert_eq!(
        json_of(&a),
        json!({"jsonrpc": "2.0", "id": "c1", "error": {"code": -32800, "message": "Request cancelled"}})
    );
}

/// A handshake-era SSE reply whose dispatch waits is answered at once, before any event: its
/// status and head are known (`200 text/event-stream`), and a client's read timeout must not run
/// out under a tool that is slow to say anything. Dropping it still cancels the tool.
#[test]
fn a_handshake_era_stream_is_answered_before_its_first_event() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let r = Route::new(server(cancelled.clone()), RouteOptions::default(), spawn());
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"silent","arguments":{"text":""}}}"#;
    let mut request = post(call);
    request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
    let a = r
        .respond(request)
        .now_or_never()
        .expect("answered without waiting for an event");
    assert_eq!(a.status, 200);
    assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_EVENT_STREAM));
    assert_eq!(a.header(X_ACCEL_BUFFERING), Some("no"));
    let AnswerBody::Events(events) = a.body else {
        panic!("an event stream");
    };
    drop(events);
    wait_until_cancelled(&cancelled);
}

#[test]
fn modern_requests_validate_headers_and_get_their_status() {
    let r = route();
    let modern = |extra: &[(&str, &str)]| {
        let mut request = post(MODERN).header(MCP_PROTOCOL_VERSION, "2026-07-28");
        request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
        for (name, value) in extra {
            request = request.header(*name, *value);
        }
        request
    };
    let a = answer(&r, modern(&[]));
    assert_eq!((a.status, code_of(&a)), (400, -32020));
    assert_eq!(json_of(&a)["id"], 5);
    let a = answer(
        &r,
        modern(&[(MCP_METHOD, "tools/call"), (MCP_NAME, "echo")]),
    );
    assert_eq!(a.status, 200);
    assert_eq!(
        a.header(CONTENT_TYPE),
        Some(APPLICATION_JSON),
        "no notification: JSON"
    );
    assert_eq!(json_of(&a)["result"]["content"][0]["text"], "hi");
    let unknown = MODERN.replace("tools/call", "nope/nope");
    let mut request = post(&unknown)
        .header(MCP_PROTOCOL_VERSION, "2026-07-28")
        .header(MCP_METHOD, "nope/nope");
    request.headers[1].1 = Some(ACCEPT_JSON_AND_SSE.into());
    let a = answer(&r, request);
    assert_eq!((a.status, code_of(&a)), (404, -32601));
}

#[test]
fn status_of_maps_the_modern_errors() {
    let error = |code| JsonRpcResponse::error(None, ErrorObject::new(code, "x"));
    for (code, status) in [
        (crate::era::HEADER_MISMATCH, 400),
        (crate::era::MISSING_REQUIRED_CLIENT_CAPABILITY, 400),
        (crate::era::UNSUPPORTED_PROTOCOL_VERSION, 400),
        (ErrorCode::METHOD_NOT_FOUND, 404),
        (ErrorCode::INTERNAL_ERROR, 200),
    ] {
        assert_eq!(status_of(true, &error(code)), status, "{code:?}");
        assert_eq!(status_of(false, &error(code)), 200);
    }
}

fn session_id(answer: &Answer) -> String {
    answer
        .header(MCP_SESSION_ID)
        .expect("a session id")
        .to_owned()
}

#[test]
fn initialize_mints_a_session_and_the_id_is_required_after() {
    let r = with_sessions(8);
    let a = answer(&r, post(INIT));
    assert_eq!(a.status, 200);
    let id = session_id(&a);
    assert_eq!(block_on(r.sessions().unwrap().count()).unwrap(), 1);
    let a = answer(&r, post(PING));
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    let a = answer(&r, post(PING).header(MCP_SESSION_ID, "nope"));
    assert_eq!((a.status, code_of(&a)), (404, -32600));
    let a = answer(&r, post(PING).header(MCP_SESSION_ID, id.clone()));
    assert_eq!(a.status, 200);
    assert_eq!(session_id(&a), id);
    // Malformed JSON is left to the route.
    assert_eq!(code_of(&answer(&r, post("{"))), -32700);
    // A session minted by a request the route then refuses (415) is forgotten.
    let before = block_on(r.sessions().unwrap().count()).unwrap();
    let a = answer(&r, HttpRequest::new("POST", DEFAULT_MCP_PATH).body(INIT));
    assert_eq!((a.status, a.header(MCP_SESSION_ID)), (415, None));
    assert_eq!(block_on(r.sessions().unwrap().count()).unwrap(), before);
}

#[test]
fn an_initialize_answered_with_an_error_mints_no_session() {
    // A version the route admits, params the server refuses (no `capabilities`).
    const BAD_INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"}}}"#;
    let r = with_sessions(1);
    for accept in [APPLICATION_JSON, ACCEPT_JSON_AND_SSE] {
        for _ in 0..3 {
            let mut request = post(BAD_INIT);
            request.headers[1].1 = Some(accept.into());
            let a = answer(&r, request);
            assert_eq!(a.status, 200, "{accept}");
            assert_eq!(
                a.header(MCP_SESSION_ID),
                None,
                "{accept}: no id for a failed handshake"
            );
            let response = match &a.body {
                AnswerBody::Json(_) => json_of(&a),
                AnswerBody::Events(_) => data_of(&events_of(a)).pop().unwrap(),
                other => panic!("{other:?}"),
            };
            assert_eq!(response["error"]["code"], -32602, "{response}");
            assert_eq!(block_on(r.sessions().unwrap().count()).unwrap(), 0);
        }
    }
    // The cap of one is still free for a handshake that succeeds.
    let a = answer(&r, post(INIT));
    assert_eq!(a.status, 200);
    let id = session_id(&a);
    // An initialize that waited, its id gone out with the head, then failed: the session's
    // first use ends it.
    let store = r.sessions().unwrap();
    let session = block_on(store.touch(&id)).unwrap().unwrap();
    session.record_initialize(false);
    let a = answer(&r, post(PING).header(MCP_SESSION_ID, id));
    assert_eq!((a.status, code_of(&a)), (404, -32600));
    assert_eq!(block_on(store.count()).unwrap(), 0);
}

#[test]
fn an_initialize_in_an_initialized_session_is_refused_and_the_session_goes_on() {
    let r = with_sessions(8);
    let id = session_id(&answer(&r, post(INIT)));
    let again = INIT
        .replace(r#""id":1"#, r#""id":"again""#)
        .replace("2025-11-25", "2025-03-26");
    let a = answer(&r, post(&again).header(MCP_SESSION_ID, id.clone()));
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    assert_eq!(json_of(&a)["id"], "again");
    assert!(
        json_of(&a)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized"),
        "{}",
        json_of(&a)
    );
    let a = answer(&r, post(PING).header(MCP_SESSION_ID, id.clone()));
    assert_eq!(a.status, 200);
    assert_eq!(json_of(&a)["result"], json!({}));
    assert_eq!(block_on(r.sessions().unwrap().count()).unwrap(), 1);
}

#[test]
fn the_session_cap_answers_503() {
    let r = with_sessions(1);
    assert_eq!(answer(&r, post(INIT)).status, 200);
    let a = answer(&r, post(INIT));
    assert_eq!((a.status, code_of(&a)), (503, -32000));
    assert_eq!(a.header(RETRY_AFTER), Some("60"));
    // The refusal answers the initialize by its id (it was `null`).
    assert_eq!(json_of(&a)["id"], 1);
}

#[test]
fn modern_traffic_skips_sessions() {
    let r = with_sessions(8);
    let request = post(MODERN)
        .header(MCP_PROTOCOL_VERSION, "2026-07-28")
        .header(MCP_METHOD, "tools/call")
        .header(MCP_NAME, "echo")
        .header(MCP_SESSION_ID, "unknown");
    let a = answer(&r, request);
    assert_eq!(a.status, 200);
    assert_eq!(a.header(MCP_SESSION_ID), None);
    assert_eq!(block_on(r.sessions().unwrap().count()), Ok(0));
}

#[test]
fn get_resumes_the_session_stream_and_delete_ends_it() {
    let r = with_sessions(8);
    let id = session_id(&answer(&r, post(INIT)));
    let get = || HttpRequest::new("GET", DEFAULT_MCP_PATH).header(ACCEPT, TEXT_EVENT_STREAM);
    let a = answer(&r, get());
    assert_eq!((a.status, code_of(&a)), (400, -32600), "no session id");
    let a = answer(&r, get().header(MCP_SESSION_ID, "nope"));
    assert_eq!(a.status, 404);
    let a = answer(
        &r,
        HttpRequest::new("GET", DEFAULT_MCP_PATH)
            .header(ACCEPT, APPLICATION_JSON)
            .header(MCP_SESSION_ID, id.clone()),
    );
    assert_eq!((a.status, code_of(&a)), (406, -32600));
    let a = answer(
        &r,
        get()
            .header(MCP_SESSION_ID, id.clone())
            .header(MCP_PROTOCOL_VERSION, "1999-01-01"),
    );
    assert_eq!(a.status, 400);
    // The stateless revision is served, but not in a session: the message says so.
    let a = answer(
        &r,
        get()
            .header(MCP_SESSION_ID, id.clone())
            .header(MCP_PROTOCOL_VERSION, "2026-07-28"),
    );
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    let message = json_of(&a)["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("has no sessions"), "{message}");
    assert!(matches!(
        r.head("GET", DEFAULT_MCP_PATH, &Vec::new()),
        Head::NoBody
    ));
    let a = answer(&r, get().header(MCP_SESSION_ID, id.clone()));
    assert_eq!(a.status, 200);
    assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_EVENT_STREAM));
    assert_eq!(session_id(&a), id);
    let AnswerBody::Events(mut events) = a.body else {
        panic!("an event stream");
    };
    let priming = block_on(events.next()).unwrap();
    assert!(
        priming.starts_with("id: ") && priming.contains("retry: "),
        "{priming}"
    );
    let session = block_on(r.sessions().unwrap().touch(&id)).unwrap().unwrap();
    session.push(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    let pushed = block_on(events.next()).unwrap();
    assert!(pushed.contains("list_changed"), "{pushed}");
    let delete = || HttpRequest::new("DELETE", DEFAULT_MCP_PATH).header(MCP_SESSION_ID, id.clone());
    assert_eq!(answer(&r, delete()).status, 204);
    assert_eq!(
        block_on(events.next()),
        None,
        "the stream ends with the session"
    );
    assert_eq!(answer(&r, delete()).status, 404);
    let a = answer(&r, HttpRequest::new("DELETE", DEFAULT_MCP_PATH));
    assert_eq!(a.status, 400);
}

#[test]
fn session_verbs_are_405_with_allow() {
    let r = with_sessions(8);
    let a = answer(&r, HttpRequest::new("PUT", DEFAULT_MCP_PATH));
    assert_eq!((a.status, code_of(&a)), (405, -32000));
    assert_eq!(a.header(ALLOW), Some("GET, POST, DELETE"));
    assert!(matches!(
        r.head("PATCH", DEFAULT_MCP_PATH, &Vec::new()),
        Head::Answer(a) if a.status == 405
    ));
}

#[test]
fn a_session_post_streams_with_event_ids() {
    let r = with_sessions(8);
    let id = session_id(&answer(&r, post(INIT)));
    let mut request = post(PING).header(MCP_SESSION_ID, id.clone());
    request.headers[1].1 = Some(TEXT_EVENT_STREAM.into());
    let a = answer(&r, request);
    assert_eq!(session_id(&a), id);
    assert_eq!(a.header(X_ACCEL_BUFFERING), None);
    let events = events_of(a);
    assert_eq!(events.len(), 2, "priming, then the response: {events:?}");
    assert!(events[1].starts_with("id: ") && events[1].contains("\"result\":{}"));
}

/// A session idle after `initialize` and a request holds no state for its streams (their maps
/// are empty and hold no table) and room for only the events its log keeps; the server's scope
/// of it is filed under the session's own id text, not a copy.
#[test]
fn an_idle_session_holds_no_stream_state_and_its_scope_shares_its_id() {
    let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
    let r = route().with_sessions(store.clone());
    // As a 2025-06-18 client asks (the benchmarks' idle sessions): answered over SSE, the one
    // event logged by its id.
    let mut init = post(&INIT.replace("2025-11-25", "2025-06-18"));
    init.headers[1].1 = Some(format!("{APPLICATION_JSON}, {TEXT_EVENT_STREAM}"));
    let id = session_id(&answer(&r, init));
    let session = store.get(&id).expect("a live session");
    assert_eq!(
        session.stream_state(),
        (false, 1, 1),
        "its answer's id, room for one"
    );
    let key = r.server().scope_key(&id).expect("a scope");
    assert!(Arc::ptr_eq(&key, &session.scope()));
    for accept in [APPLICATION_JSON, TEXT_EVENT_STREAM] {
        let mut request = post(PING).header(MCP_SESSION_ID, id.clone());
        request.headers[1].1 = Some(accept.into());
        assert_eq!(answer(&r, request).status, 200);
        assert!(
            !session.stream_state().0,
            "idle again after a ping answered by {accept}"
        );
    }
}

/// A shared session store that cannot be reached (Redis down): every call is [`Unavailable`].
#[derive(Debug)]
struct Unreachable(SessionOptions);

impl SessionBackend for Unreachable {
    fn options(&self) -> &SessionOptions {
        &self.0
    }
    fn mint<'a>(&'a self, _: &'a str) -> crate::BoxFuture<'a, Result<Arc<Session>, MintError>> {
        Box::pin(async { Err(MintError::Unavailable(Unavailable("down".into()))) })
    }
    fn touch<'a>(&'a self, _: &'a str) -> crate::BoxFuture<'a, Lookup> {
        Box::pin(async { Err(Unavailable("down".into())) })
    }
    fn end<'a>(&'a self, _: &'a str) -> crate::BoxFuture<'a, Lookup> {
        Box::pin(async { Err(Unavailable("down".into())) })
    }
    fn expire_idle(&self) -> crate::BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(async { Err(Unavailable("down".into())) })
    }
    fn count(&self) -> crate::BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(async { Err(Unavailable("down".into())) })
    }
    fn disconnect_idle(&self) {}
    fn disconnect_all(&self) {}
}

type Lookup = Result<Option<Arc<Session>>, Unavailable>;

#[test]
fn an_unreachable_session_store_answers_503_with_retry_after_not_404() {
    let r = route().with_sessions(Arc::new(Unreachable(SessionOptions::default())));
    let with_id = |method| HttpRequest::new(method, DEFAULT_MCP_PATH).header(MCP_SESSION_ID, "s");
    for request in [
        post(INIT),
        post(PING).header(MCP_SESSION_ID, "s"),
        with_id("GET").header(ACCEPT, "text/event-stream"),
        with_id("DELETE"),
    ] {
        let a = answer(&r, request);
        assert_eq!(a.status, 503);
        assert_eq!(code_of(&a), -32000);
        assert_eq!(a.header(RETRY_AFTER), Some("1"));
    }
    // A refused initialize is answered by its id.
    assert_eq!(json_of(&answer(&r, post(INIT)))["id"], 1);
}

#[test]
fn two_routes_over_one_store_share_their_sessions() {
    // Two instances behind one URL, one shared store: a session minted by one is answered by
    // the other, and a DELETE on the other ends it for both.
    let store = Arc::new(SessionStore::new(SessionOptions::default(), Arc::new(|| 0)));
    let (a, b) = (
        route().with_sessions(store.clone()),
        route().with_sessions(store),
    );
    let id = session_id(&answer(&a, post(INIT)));
    let ping = || post(PING).header(MCP_SESSION_ID, id.clone());
    assert_eq!(answer(&b, ping()).status, 200);
    let delete = HttpRequest::new("DELETE", DEFAULT_MCP_PATH).header(MCP_SESSION_ID, id.clone());
    assert_eq!(answer(&b, delete).status, 204);
    assert_eq!(answer(&a, ping()).status, 404);
}

// ---- JSON-RPC batches: received at 2025-03-26 only ---------------------------------------

const INIT_2025_03_26: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const BATCH: &str = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
    {"jsonrpc":"2.0","method":"notifications/initialized"},
    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}]"#;
const REFUSED: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported"}}"#;

fn sse(request: HttpRequest) -> HttpRequest {
    request.header("Accept", TEXT_EVENT_STREAM)
}

fn data_of(events: &[String]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[test]
fn a_stateless_batch_without_a_version_header_is_answered_by_one_json_array() {
    let r = route();
    for request in [
        post(BATCH),
        post(BATCH).header(MCP_PROTOCOL_VERSION, "2025-03-26"),
    ] {
        let a = answer(&r, request);
        assert_eq!(
            (a.status, a.header(CONTENT_TYPE)),
            (200, Some(APPLICATION_JSON))
        );
        assert_eq!(
            json_of(&a),
            json!([
                {"jsonrpc":"2.0","id":1,"result":{}},
                {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}
            ])
        );
    }
}

#[test]
fn a_batch_at_any_other_revision_gets_the_refusal_it_always_got() {
    let r = route();
    for version in ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"] {
        let a = answer(&r, post(BATCH).header(MCP_PROTOCOL_VERSION, version));
        assert_eq!(a.status, 400, "{version}");
        assert!(
            matches!(&a.body, AnswerBody::Json(text) if text == REFUSED),
            "{version}: {a:?}"
        );
    }
}

#[test]
fn a_batch_of_notifications_and_responses_is_202_and_errors_come_back_in_the_array() {
    let r = route();
    let a = answer(
        &r,
        post(
            r#"[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"s1","result":{}}]"#,
        ),
    );
    assert_eq!(a.status, 202);
    assert!(matches!(a.body, AnswerBody::Empty));
    // An invalid element among valid ones; a duplicate id; an id-less element that is no
    // JSON-RPC message (`-32600`, id `null`, as `3`).
    let a = answer(
        &r,
        post(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2,"method":"ping"},
                 {"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":5},3]"#,
        ),
    );
    assert_eq!(a.status, 200);
    let items = json_of(&a);
    let ids: Vec<Value> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [json!(1), json!(2), json!(1), Value::Null, Value::Null],
        "{items}"
    );
    assert_eq!(items[0]["result"], json!({}));
    for i in 1..5 {
        assert_eq!(items[i]["error"]["code"], -32600, "{items}");
    }
    // Only errors: still the array.
    let a = answer(&r, post("[1]"));
    assert_eq!(
        (a.status, json_of(&a)[0]["error"]["code"].clone()),
        (200, json!(-32600))
    );
}

#[test]
fn a_batch_that_cannot_run_is_refused_whole_with_400() {
    let r = route();
    for (body, says) in [
        ("[]", "an empty batch"),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
                {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}]"#,
            "initialize must not be part of a JSON-RPC batch",
        ),
        ("[{\"jsonrpc\":\"2.0\",", "Parse error"),
    ] {
        let a = answer(&r, post(body));
        assert_eq!(a.status, 400, "{body}");
        let error = json_of(&a);
        assert_eq!(error["id"], Value::Null);
        assert!(
            error["error"]["message"].as_str().unwrap().contains(says),
            "{error}"
        );
    }
}

#[test]
fn a_stateless_batch_on_sse_sends_each_response_as_its_own_event_then_ends() {
    let r = route();
    let a = answer(
        &r,
        sse(post(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},7,{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        )),
    );
    assert_eq!(a.header(CONTENT_TYPE), Some(TEXT_EVENT_STREAM));
    let events = data_of(&events_of(a));
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["error"]["code"], -32600, "the errors first");
    let mut ids: Vec<i64> = events[1..]
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    // Dropping the stream cancels what still runs.
    let cancelled = Arc::new(AtomicBool::new(false));
    let r = Route::new(server(cancelled.clone()), RouteOptions::default(), spawn());
    let a = answer(
        &r,
        sse(post(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{"text":""}}}]"#,
        )),
    );
    let AnswerBody::Events(mut events) = a.body else {
        panic!("an event stream")
    };
    let mut seen = Vec::new();
    while seen.len() < 2 {
        seen.push(block_on(events.next()).expect("an event"));
    }
    assert!(seen.iter().any(|e| e.contains("\"id\":1")), "{seen:?}");
    assert!(
        seen.iter().any(|e| e.contains("notifications/message")),
        "{seen:?}"
    );
    drop(events);
    // The dispatch runs on a thread of the test's spawner: wait for it to see the drop.
    wait_until_cancelled(&cancelled);
}

#[test]
fn a_batch_runs_at_most_its_bound_of_requests() {
    let r = route();
    let n = super::route::MAX_BATCH_IN_FLIGHT + 4;
    let items: Vec<Value> = (0..n)
        .map(|id| json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
        .collect();
    let a = answer(&r, post(&Value::Array(items).to_string()));
    let reply = json_of(&a);
    let reply = reply.as_array().unwrap();
    assert_eq!(reply.len(), n);
    let refused: Vec<i64> = reply
        .iter()
        .filter(|i| i["error"]["code"] == -32000)
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        refused,
        (super::route::MAX_BATCH_IN_FLIGHT as i64..n as i64).collect::<Vec<_>>()
    );
}

#[test]
fn a_session_at_2025_03_26_takes_batches_and_one_at_another_revision_refuses_them() {
    let r = with_sessions(8);
    let old = session_id(&answer(&r, post(INIT_2025_03_26)));
    let new = session_id(&answer(&r, post(INIT)));
    let a = answer(&r, post(BATCH).header(MCP_SESSION_ID, old.clone()));
    assert_eq!((a.status, session_id(&a)), (200, old.clone()));
    assert_eq!(json_of(&a).as_array().unwrap().len(), 2);
    // SSE: one session stream, every event with an id (no priming at 2025-03-26).
    let a = answer(&r, sse(post(BATCH).header(MCP_SESSION_ID, old.clone())));
    let events = events_of(a);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.starts_with("id: ")), "{events:?}");
    // The header names another revision than the session's: refused.
    let a = answer(
        &r,
        post(BATCH)
            .header(MCP_SESSION_ID, old.clone())
            .header(MCP_PROTOCOL_VERSION, "2025-06-18"),
    );
    assert_eq!(a.status, 400);
    // A 2025-11-25 session: refused as before, with or without its header.
    for request in [
        post(BATCH).header(MCP_SESSION_ID, new.clone()),
        post(BATCH)
            .header(MCP_SESSION_ID, new.clone())
            .header(MCP_PROTOCOL_VERSION, "2025-11-25"),
    ] {
        let a = answer(&r, request);
        assert_eq!(a.status, 400);
        assert!(
            matches!(&a.body, AnswerBody::Json(text) if text == REFUSED),
            "{a:?}"
        );
    }
    // No session id: a session is required (and an initialize cannot be batched).
    let a = answer(&r, post(BATCH));
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    assert!(json_of(&a)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("mcp-session-id"));
    let a = answer(&r, post(&format!("[{INIT_2025_03_26}]")));
    assert_eq!(a.status, 400);
    assert!(json_of(&a)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize must not be part"));
    assert_eq!(
        block_on(r.sessions().unwrap().count()).unwrap(),
        2,
        "none minted"
    );
}

#[test]
fn a_request_id_in_flight_in_the_session_is_refused_inside_a_batch() {
    let r = with_sessions(8);
    let id = session_id(&answer(&r, post(INIT_2025_03_26)));
    // A call that never ends, on its own stream (spawned): id 5 stays in flight.
    let hang = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hang","arguments":{"text":""}}}"#;
    let a = answer(&r, sse(post(hang).header(MCP_SESSION_ID, id.clone())));
    assert!(matches!(a.body, AnswerBody::Events(_)));
    let a = answer(
        &r,
        post(r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]"#)
            .header(MCP_SESSION_ID, id),
    );
    let items = json_of(&a);
    assert_eq!(items[0]["id"], 5);
    assert_eq!(items[0]["error"]["code"], -32600);
    assert!(items[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already in use"));
    assert_eq!(items[1]["result"], json!({}));
}

#[test]
fn a_request_with_an_id_beyond_64_bits_still_needs_a_session() {
    // Read as the route reads it (from its text), not as a parsed value that holds the id only
    // rounded: it is a request like any other, and it needs a session.
    let r = with_sessions(8);
    let call = r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    let a = answer(&r, post(call));
    assert_eq!((a.status, code_of(&a)), (400, -32600));
    assert!(json_of(&a)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("mcp-session-id"));
}
