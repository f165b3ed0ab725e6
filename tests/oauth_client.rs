//! The native host of the client's authorization machine (`native::client::oauth`) against
//! authorization servers that misbehave as no real one does: scripted peers on 127.0.0.1
//! (`support::client::fake_http`). What the no-I/O machine decides is pinned by its unit tests
//! (src/client/oauth/flow_tests.rs); these pin what only the host shows: that it follows no
//! redirect, what a garbled, oversized or dropped answer becomes, and what its loopback
//! listener does with a callback that is not the one it waits for.
#![cfg(feature = "native")]

mod support;

use std::sync::{Arc, Mutex, OnceLock};

use hyper::Method;
use orkestrel_mcp::client::oauth::{query_params, OAuthConfig};
use orkestrel_mcp::http::exchange::Challenge;
use orkestrel_mcp::native::client::oauth::{AutoApprove, LoopbackBrowser, OAuthClient, UserAgent};
use orkestrel_mcp::BoxFuture;
use serde_json::{json, Value};
use support::client::{fake_http, json_reply, Reply, Seen};
use support::DEADLINE;

/// `http://ADDR` of a `fake_http` URL (`http://ADDR/mcp`).
fn origin(url: &str) -> String {
    url.trim_end_matches("/mcp").to_owned()
}

/// The path of a request target, without its query.
fn path(seen: &Seen) -> &str {
    seen.target.split('?').next().unwrap_or_default()
}

fn json_ok(doc: Value) -> Reply {
    json_reply("200 OK", "", &doc.to_string())
}

fn not_found() -> Reply {
    json_reply("404 Not Found", "", "{}")
}

fn redirect(status: &str, to: &str) -> Reply {
    Reply::Raw(format!(
        "HTTP/1.1 {status}\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    ))
}

/// A peer that closes the connection without answering.
fn hang_up() -> Reply {
    Reply::Raw(String::new())
}

/// A scripted peer that knows its own origin (`handler` gets it with each request).
async fn peer<F>(handler: F) -> (String, Arc<Mutex<Vec<Seen>>>)
where
    F: Fn(&str, &Seen) -> Reply + Send + Sync + 'static,
{
    let me = Arc::new(OnceLock::<String>::new());
    let known = me.clone();
    let (url, seen) = fake_http(move |s| handler(known.get().expect("the origin is set"), s)).await;
    me.set(origin(&url)).unwrap();
    (url, seen)
}

/// The requests a peer saw, as `METHOD PATH`.
fn lines(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s.method, path(s)))
        .collect()
}

/// A 401 naming `resource_metadata` (none: no header).
fn challenge(resource_metadata: Option<&str>) -> Challenge {
    Challenge {
        status: 401,
        www_authenticate: resource_metadata
            .map(|url| format!(r#"Bearer resource_metadata="{url}""#)),
        dpop_nonce: None,
    }
}

/// One authorization round, bounded.
async fn obtain(client: &OAuthClient, challenge: &Challenge) -> Result<String, String> {
    tokio::time::timeout(DEADLINE, client.obtain(challenge))
        .await
        .expect("the round ends within the deadline")
}

#[tokio::test]
async fn redirects_are_not_followed_and_read_as_failed_candidates() {
    traced();
    // Another origin, serving what would pass, and counting what reaches it.
    let (elsewhere, reached) = peer(|me, s| match path(s) {
        "/prm" => json_ok(json!({"resource": format!("{me}/mcp"), "authorization_servers": [me]})),
        _ => json_ok(json!({"issuer": me, "token_endpoint": format!("{me}/token")})),
    })
    .await;
    let other = origin(&elsewhere);
    // The challenge's metadata URL and the first authorization server candidate redirect there;
    // the next candidate of each answers.
    let o = other.clone();
    let (url, seen) = peer(move |me, s| match (s.method.as_str(), path(s)) {
        ("GET", "/prm") => redirect("302 Found", &format!("{o}/prm")),
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(json!({
            "resource": format!("{me}/mcp"),
            "authorization_servers": [format!("{me}/as")],
        })),
        ("GET", "/.well-known/oauth-authorization-server/as") => redirect(
            "301 Moved Permanently",
            &format!("{o}/.well-known/oauth-authorization-server"),
        ),
        ("GET", "/.well-known/openid-configuration/as") => json_ok(json!({
            "issuer": format!("{me}/as"),
            "token_endpoint": format!("{me}/token"),
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        })),
        ("POST", "/token") => json_ok(json!({"access_token": "granted", "token_type": "Bearer"})),
        _ => not_found(),
    })
    .await;
    let me = origin(&url);
    let client = OAuthClient::client_credentials(&url, "machine", "machine-secret", None);
    let token = obtain(&client, &challenge(Some(&format!("{me}/prm")))).await;
    assert_eq!(token.as_deref(), Ok("granted"));
    assert_eq!(
        lines(&seen),
        [
            "GET /prm",
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server/as",
            "GET /.well-known/openid-configuration/as",
            "POST /token",
        ]
    );
    assert!(lines(&reached).is_empty(), "{:?}", lines(&reached));

    // Everything redirects there, the token endpoint too (a 307 would repeat the POST with the
    // client's secret): every candidate fails, the 2025-03-26 default endpoints are tried, and
    // the token endpoint's redirect is an error, not a second POST.
    let o = other.clone();
    let (url, seen) = peer(move |_, s| {
        let status = if s.method == "POST" {
            "307 Temporary Redirect"
        } else {
            "302 Found"
        };
        redirect(status, &format!("{o}{}", s.target))
    })
    .await;
    let me = origin(&url);
    let client = OAuthClient::client_credentials(&url, "machine", "machine-secret", None);
    let error = obtain(&client, &challenge(Some(&format!("{me}/prm"))))
        .await
        .unwrap_err();
    assert!(
        error.contains("the token endpoint") && error.contains("HTTP 307"),
        "{error}"
    );
    assert!(!error.contains("machine-secret"), "{error}");
    assert_eq!(
        lines(&seen),
        [
            "GET /prm",
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-protected-resource",
            "GET /.well-known/oauth-authorization-server",
            "GET /.well-known/openid-configuration",
            "POST /token",
        ]
    );
    assert!(lines(&reached).is_empty(), "{:?}", lines(&reached));
}

/// A user agent that must not be asked: it records the URL and refuses.
#[derive(Default)]
struct NoUser {
    asked: Mutex<Vec<String>>,
}

impl UserAgent for NoUser {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".into()
    }

    fn sign_in<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        self.asked.lock().unwrap().push(url.to_owned());
        Box::pin(async { Err("no user here".to_owned()) })
    }
}

/// The protected resource metadata of the MCP server at `me/mcp`, naming `me` its
/// authorization server.
fn protected_resource(me: &str) -> Value {
    json!({ "resource": format!("{me}/mcp"), "authorization_servers": [me] })
}

/// The metadata of the authorization server `me`: its endpoints under `me`, PKCE S256.
fn authorization_server(me: &str) -> Value {
    json!({
        "issuer": me,
        "authorization_endpoint": format!("{me}/authorize"),
        "token_endpoint": format!("{me}/token"),
        "registration_endpoint": format!("{me}/register"),
        "code_challenge_methods_supported": ["S256"],
    })
}

/// An authorization server (at the MCP server's origin) whose registration endpoint answers
/// `register`.
async fn registering(register: Reply) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let register = Mutex::new(Some(register));
    peer(move |me, s| match (s.method.as_str(), path(s)) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(protected_resource(me)),
        ("GET", "/.well-known/oauth-authorization-server") => json_ok(authorization_server(me)),
        ("POST", "/register") => register.lock().unwrap().take().unwrap_or_else(not_found),
        _ => not_found(),
    })
    .await
}

#[tokio::test]
async fn a_registration_endpoint_answering_garbage_fails_before_any_sign_in() {
    traced();
    let huge = format!(
        "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {n}\r\nconnection: close\r\n\r\n{{\"client_id\":\"c\",\"pad\":\"{pad}\"}}",
        n = (2 << 20) + 26,
        pad = " ".repeat(2 << 20)
    );
    for (what, reply, expected) in [
        (
            "HTML",
            Reply::Raw("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 13\r\nconnection: close\r\n\r\n<html>oops</>".into()),
            "the registration endpoint refused: HTTP 200",
        ),
        (
            "no client_id",
            json_reply("201 Created", "", r#"{"client_id": 7, "client_secret": "s"}"#),
            "the registration endpoint refused: no client_id in its answer",
        ),
        (
            "an error",
            json_reply(
                "400 Bad Request",
                "",
                r#"{"error": "invalid_redirect_uri", "error_description": "loopback only"}"#,
            ),
            "the registration endpoint refused: invalid_redirect_uri (loopback only)",
        ),
        ("a hang-up", hang_up(), "/register: "),
        ("over 1 MiB", Reply::Raw(huge), "/register: reading the answer"),
    ] {
        let (url, seen) = registering(reply).await;
        let user = Arc::new(NoUser::default());
        let config = OAuthConfig::authorization_code(&url, String::new());
        let client = OAuthClient::authorization_code(config, user.clone());
        let error = obtain(&client, &challenge(None)).await.unwrap_err();
        assert!(error.contains(expected), "{what}: {error}");
        assert!(user.asked.lock().unwrap().is_empty(), "{what}: a sign-in was asked");
        assert_eq!(
            lines(&seen).last().map(String::as_str),
            Some("POST /register"),
            "{what}: nothing after the registration"
        );
    }
}

#[tokio::test]
async fn a_token_endpoint_that_hangs_up_or_answers_html_is_a_clear_error() {
    traced();
    for (what, reply, expected) in [
        ("a hang-up", hang_up(), "/token: "),
        (
            "HTML",
            Reply::Raw("HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 6\r\nconnection: close\r\n\r\n<html>".into()),
            "the token endpoint refused: HTTP 502",
        ),
    ] {
        let token = Mutex::new(Some(reply));
        let (url, seen) = peer(move |me, s| match (s.method.as_str(), path(s)) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(json!({
                "resource": format!("{me}/mcp"),
                "authorization_servers": [me],
            })),
            ("GET", "/.well-known/oauth-authorization-server") => json_ok(json!({
                "issuer": me,
                "token_endpoint": format!("{me}/token"),
            })),
            ("POST", "/token") => token.lock().unwrap().take().unwrap_or_else(not_found),
            _ => not_found(),
        })
        .await;
        let client = OAuthClient::client_credentials(&url, "machine", "machine-secret", None);
        let error = obtain(&client, &challenge(None)).await.unwrap_err();
        assert!(error.contains(expected), "{what}: {error}");
        assert!(!error.contains("machine-secret"), "{what}: {error}");
        // Sent once: a token request is not repeated on a new connection.
        let posts = lines(&seen).iter().filter(|l| *l == "POST /token").count();
        assert_eq!(posts, 1, "{what}");
    }
}

#[tokio::test]
async fn a_callback_with_another_state_is_refused_and_the_round_waits_for_its_own() {
    traced();
    let (url, seen) = peer(|me, s| match (s.method.as_str(), path(s)) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(protected_resource(me)),
        ("GET", "/.well-known/oauth-authorization-server") => json_ok(authorization_server(me)),
        ("POST", "/register") => json_reply("201 Created", "", r#"{"client_id": "registered"}"#),
        ("POST", "/token") => json_ok(json!({"access_token": "granted", "token_type": "Bearer"})),
        _ => not_found(),
    })
    .await;
    let (shown, mut urls) = tokio::sync::mpsc::unbounded_channel::<String>();
    let browser = LoopbackBrowser::bind(0, false, move |url| {
        let _ = shown.send(url.to_owned());
    })
    .unwrap();
    let loopback = browser.local_addr();
    let config = OAuthConfig::authorization_code(&url, String::new());
    let client = OAuthClient::authorization_code(config, Arc::new(browser));
    let state_of = |url: &str| {
        query_params(url)
            .into_iter()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v)
            .unwrap()
    };

    let round = tokio::spawn({
        let client = client.clone();
        async move { obtain(&client, &challenge(None)).await }
    });
    let authorization_url = tokio::time::timeout(DEADLINE, urls.recv())
        .await
        .unwrap()
        .unwrap();
    let state = state_of(&authorization_url);
    // Another path on the listener is not the callback: 404, and the sign-in goes on.
    let stray = support::http::request(loopback, Method::GET, "/favicon.ico", &[], "").await;
    assert_eq!(stray.status, 404);
    // A callback with a code and another state (a forged or a stale redirect): refused, its
    // code never exchanged, and the sign-in goes on.
    let target = format!("/callback?code=stolen-code&state=not-{state}");
    let page = support::http::request(loopback, Method::GET, &target, &[], "").await;
    assert_eq!(page.status, 400);
    assert!(!round.is_finished(), "a stray callback ended the round");
    // The round's own redirect, with its state: signed in with that code only.
    let target = format!("/callback?code=good-code&state={state}");
    support::http::request(loopback, Method::GET, &target, &[], "").await;
    assert_eq!(round.await.unwrap().as_deref(), Ok("granted"));
    let exchanged = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| path(s) == "/token")
        .map(|s| String::from_utf8_lossy(&s.raw).into_owned())
        .collect::<Vec<_>>();
    assert_eq!(exchanged.len(), 1, "{exchanged:?}");
    assert!(exchanged[0].contains("code=good-code"), "{exchanged:?}");
}

/// What a `tracing` subscriber writes, kept.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

thread_local! {
    /// Where the global subscriber writes on this thread ([`CaptureHere`]); nowhere if `None`.
    static CAPTURE: std::cell::RefCell<Option<Captured>> = const { std::cell::RefCell::new(None) };
}

/// Install, once for the binary and before any test logs, one global subscriber at TRACE that
/// writes to the calling thread's [`CAPTURE`]. Every test calls it first: with a thread-local
/// subscriber (`set_default`) instead, a callsite another test's thread reached first cached
/// "never" while no subscriber existed, and the capture lost events (about 1 run in 10).
fn traced() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| ThreadWriter)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
    });
}

/// Capture this thread's events into a [`Captured`] until dropped.
struct CaptureHere;

impl CaptureHere {
    fn start(into: Captured) -> CaptureHere {
        CAPTURE.with(|c| *c.borrow_mut() = Some(into));
        CaptureHere
    }
}

impl Drop for CaptureHere {
    fn drop(&mut self) {
        CAPTURE.with(|c| *c.borrow_mut() = None);
    }
}

/// The global subscriber's writer: the current thread's capture, if any.
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| match &mut *c.borrow_mut() {
            Some(captured) => captured.write(bytes),
            None => Ok(bytes.len()),
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_secret_code_or_token_is_logged_even_at_trace() {
    traced();
    let captured = Captured::default();
    let _capturing = CaptureHere::start(captured.clone());
    // A registered confidential client, an authorization that approves at once, tokens that
    // expire at once (the second round refreshes); every secret says SECRET.
    let issued = Arc::new(Mutex::new(0));
    let (url, seen) = peer(move |me, s| match (s.method.as_str(), path(s)) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(json!({
            "resource": format!("{me}/mcp"),
            "authorization_servers": [me],
        })),
        ("GET", "/.well-known/oauth-authorization-server") => json_ok(json!({
            "issuer": me,
            "authorization_endpoint": format!("{me}/authorize"),
            "token_endpoint": format!("{me}/token"),
            "registration_endpoint": format!("{me}/register"),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        })),
        ("POST", "/register") => json_reply(
            "201 Created",
            "",
            r#"{"client_id": "registered", "client_secret": "SECRET-client", "token_endpoint_auth_method": "client_secret_basic"}"#,
        ),
        ("GET", "/authorize") => {
            let params = query_params(&format!("http://x{}", s.target));
            let get = |name: &str| {
                params
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let back = format!(
                "{}?code=SECRET-code&state={}",
                get("redirect_uri"),
                get("state")
            );
            redirect("302 Found", &back)
        }
        ("POST", "/token") => {
            let mut n = issued.lock().unwrap();
            *n += 1;
            json_ok(json!({
                "access_token": format!("SECRET-access-{n}"),
                "refresh_token": format!("SECRET-refresh-{n}"),
                "token_type": "Bearer",
                "expires_in": 1,
            }))
        }
        _ => not_found(),
    })
    .await;
    let agent = Arc::new(AutoApprove::new("http://127.0.0.1:9/callback"));
    let client = OAuthClient::authorization_code(OAuthConfig::authorization_code(&url, ""), agent);
    assert_eq!(
        obtain(&client, &challenge(None)).await.as_deref(),
        Ok("SECRET-access-1")
    );
    // The token expired (within the 30 s margin): the next 401 refreshes it.
    assert_eq!(
        obtain(&client, &challenge(None)).await.as_deref(),
        Ok("SECRET-access-2")
    );
    let refreshed = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| path(s) == "/token")
        .map(|s| String::from_utf8_lossy(&s.raw).into_owned())
        .collect::<Vec<_>>();
    assert!(
        refreshed.len() == 2 && refreshed[1].contains("refresh_token=SECRET-refresh-1"),
        "{refreshed:?}"
    );
    let log = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    assert!(log.contains("oauth: "), "nothing captured: {log}");
    assert!(!log.contains("SECRET"), "a secret in the log:\n{log}");
}
