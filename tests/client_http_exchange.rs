//! The native HTTP transport driving the core exchange (`orkestrel_mcp::http::exchange`) end to
//! end against a scripted peer on 127.0.0.1: the authorization seam (a `401` asks the
//! authorizer, the request is retried once with its bearer token; the `WWW-Authenticate`
//! challenge reaches it), a `401` without an authorizer, and a `400` to a request that carried a
//! session (session expired), the session's `DELETE` with the token. `HANG_GUARD` only bounds a hang; no assertion depends on timing.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]
#![allow(clippy::result_large_err)]

mod support;

use std::sync::{Arc, Mutex};

use orkestrel_mcp::client::{ClientError, McpClient};
use orkestrel_mcp::http::exchange::{Authorizer, Challenge};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::BoxFuture;
use support::client::*;
use tokio::time::timeout;

const CHALLENGE: &str =
    r#"Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource""#;

/// Hands out `token` and records each challenge it was shown.
struct Fixed {
    token: Option<&'static str>,
    seen: Arc<Mutex<Vec<Challenge>>>,
}

impl Authorizer for Fixed {
    fn authorize(&self, challenge: &Challenge) -> BoxFuture<'_, Option<String>> {
        self.seen.lock().unwrap().push(challenge.clone());
        let token = self.token.map(str::to_owned);
        Box::pin(async move { token })
    }
}

/// Holds the token `good` from the start (one obtained earlier, as a token store gives).
struct Kept;

impl Authorizer for Kept {
    fn authorize(&self, _: &Challenge) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }

    fn current(&self) -> Option<String> {
        Some("good".into())
    }
}

/// A peer that wants `Authorization: Bearer good` on every request.
fn guarded(seen: &Seen) -> Reply {
    if seen.header("authorization") != Some("Bearer good") {
        return Reply::Raw(format!(
            "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: {CHALLENGE}\r\ncontent-length: 12\r\nconnection: close\r\n\r\nunauthorized"
        ));
    }
    match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        Some("ping") => json_reply(
            "200 OK",
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, seen.id()),
        ),
        None if seen.method == "GET" => no_get_stream(),
        _ => accepted(),
    }
}

/// Connect, `ping`, disconnect, each of which must succeed (within `HANG_GUARD`).
async fn connect_ping_disconnect(client: &McpClient) {
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .unwrap();
}

fn client(url: &str) -> (McpClient, HttpTransport) {
    let transport = HttpTransport::new(HttpClientOptions::new(url)).unwrap();
    (McpClient::new(transport.clone(), options()), transport)
}

#[tokio::test]
async fn a_401_asks_the_authorizer_and_retries_once_with_its_token() {
    let (url, seen) = fake_http(guarded).await;
    let (client, transport) = client(&url);
    let challenges = Arc::new(Mutex::new(Vec::new()));
    transport.set_authorizer(Arc::new(Fixed {
        token: Some("good"),
        seen: challenges.clone(),
    }));
    connect_ping_disconnect(&client).await;
    let challenges = challenges.lock().unwrap().clone();
    assert!(!challenges.is_empty());
    assert_eq!(challenges[0].status, 401);
    assert_eq!(challenges[0].www_authenticate.as_deref(), Some(CHALLENGE));
    // Each refused POST was followed by exactly one retry carrying the token.
    let seen = seen.lock().unwrap().clone();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    let refused = posts
        .iter()
        .filter(|s| s.header("authorization").is_none())
        .count();
    let authorized = posts
        .iter()
        .filter(|s| s.header("authorization") == Some("Bearer good"))
        .count();
    assert_eq!(refused, challenges.len());
    assert_eq!(authorized, posts.len() - refused);
    assert!(authorized >= 3, "initialize, initialized, ping: {posts:?}");
}

/// [`guarded`] with a session: `initialize` opens `s1`, whose `DELETE` wants the token too.
fn guarded_session(seen: &Seen) -> Reply {
    if seen.header("authorization") != Some("Bearer good") {
        return guarded(seen);
    }
    match seen.rpc_method() {
        Some("initialize") => {
            json_reply("200 OK", "mcp-session-id: s1\r\n", &init_result(&seen.id()))
        }
        None if seen.method == "DELETE" => {
            Reply::Raw("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into())
        }
        _ => guarded(seen),
    }
}

#[tokio::test]
async fn the_sessions_delete_carries_the_token_obtained_for_the_session() {
    let (url, seen) = fake_http(guarded_session).await;
    let (client, transport) = client(&url);
    transport.set_authorizer(Arc::new(Kept));
    connect_ping_disconnect(&client).await;
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .all(|s| s.header("authorization") == Some("Bearer good")),
        "the token in hand goes with every request: {seen:?}"
    );
    let deletes: Vec<&Seen> = seen.iter().filter(|s| s.method == "DELETE").collect();
    assert_eq!(deletes.len(), 1, "{seen:?}");
    assert_eq!(deletes[0].header("mcp-session-id"), Some("s1"));
    assert_eq!(deletes[0].header("authorization"), Some("Bearer good"));
}

/// A server that answers `initialize` and never answers the `notifications/initialized`
/// POST (no status line): `connect` fails within the client's timeout, naming the
/// notification (it hung for good: nothing bounded a POST that carries no request).
#[tokio::test]
async fn a_notification_the_server_never_answers_fails_within_the_timeout() {
    let (url, _seen) = fake_http(|seen: &Seen| match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        _ => Reply::Silent,
    })
    .await;
    let client = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        options().with_timeout(std::time::Duration::from_millis(300)),
    );
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .expect("connect ends")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Timeout { method, .. } if method == "notifications/initialized"),
        "{err}"
    );
}

/// A server whose `GET` stream sends 40 pings at once and that never takes the answers: at most
/// `MAX_ANSWERS_IN_FLIGHT` answer POSTs are open at once, each further one is dropped with an
/// `error` event (each ping opened its own connection, without bound: a bridge ran out of
/// file descriptors).
#[tokio::test]
async fn answers_the_server_never_takes_are_bounded_in_flight() {
    use orkestrel_mcp::client::ClientEvent;
    use orkestrel_mcp::http::exchange::MAX_ANSWERS_IN_FLIGHT;
    use std::sync::atomic::{AtomicBool, Ordering};
    const PINGS: usize = 40;
    let streamed = AtomicBool::new(false);
    let (url, seen) = fake_http(move |seen: &Seen| match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        None if seen.method == "GET" && !streamed.swap(true, Ordering::SeqCst) => {
            let events: String = (0..PINGS)
                .map(|i| format!("data: {{\"jsonrpc\":\"2.0\",\"id\":\"p{i}\",\"method\":\"ping\"}}\n\n"))
                .collect();
            Reply::Raw(format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
                events.len()
            ))
        }
        None if seen.method == "GET" => no_get_stream(),
        // The answers (no method): never taken.
        None => Reply::Silent,
        _ => accepted(),
    })
    .await;
    let client = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url)).unwrap(),
        options(),
    );
    let dropped = Arc::new(Mutex::new(0usize));
    let counter = dropped.clone();
    client.on(move |event| {
        if let ClientEvent::Error(e) = event {
            if e.to_string()
                .contains("an answer to the server was dropped")
            {
                *counter.lock().unwrap() += 1;
            }
        }
    });
    timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap();
    let answers = || {
        let seen = seen.lock().unwrap();
        seen.iter()
            .filter(|s| s.method == "POST" && s.rpc_method().is_none())
            .count()
    };
    // Every ping is either answered (a POST the server holds) or dropped with a report.
    timeout(HANG_GUARD, async {
        while answers() + *dropped.lock().unwrap() < PINGS {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("every ping answered or dropped");
    assert_eq!(answers(), MAX_ANSWERS_IN_FLIGHT);
    assert_eq!(*dropped.lock().unwrap(), PINGS - MAX_ANSWERS_IN_FLIGHT);
    client.disconnect().await;
}

#[tokio::test]
async fn a_401_without_a_token_fails_the_request_with_the_status() {
    let (url, seen) = fake_http(guarded).await;
    let (client, transport) = client(&url);
    let challenges = Arc::new(Mutex::new(Vec::new()));
    transport.set_authorizer(Arc::new(Fixed {
        token: None,
        seen: challenges.clone(),
    }));
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(t) if t.contains("HTTP 401 Unauthorized: unauthorized")),
        "{err}"
    );
    assert_eq!(challenges.lock().unwrap().len(), 1);
    assert_eq!(seen.lock().unwrap().len(), 1, "no retry without a token");
}

#[tokio::test]
async fn a_400_to_a_request_in_a_session_means_the_session_expired() {
    let (url, _seen) = fake_http(|seen| match seen.rpc_method() {
        Some("initialize") => {
            json_reply("200 OK", "mcp-session-id: s-400\r\n", &init_result(&seen.id()))
        }
        Some("tools/list") => Reply::Raw(
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 41\r\nconnection: close\r\n\r\nBad Request: No valid session ID provided"
                .into(),
        ),
        None if seen.method == "GET" => no_get_stream(),
        _ => accepted(),
    })
    .await;
    let (client, _transport) = client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(client.session_id().as_deref(), Some("s-400"));
        let err = client.list_tools().await.unwrap_err();
        assert_eq!(
            err,
            ClientError::SessionExpired {
                session: "s-400".into()
            }
        );
        assert_eq!(client.session_id(), None);
    })
    .await
    .unwrap();
}
