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
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .unwrap();
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
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .unwrap();
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
