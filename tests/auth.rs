//! The resource server's half of authorization, against a real authorization server: the
//! `oidc-provider` npm package (tests/auth/provider.mjs) on 127.0.0.1 issues JWT access tokens
//! with resource indicators; `orkestrel-mcp serve --http --auth-issuer` requires them.
//! tests/run.sh installs the package (`npm ci` in tests/auth) when it is missing.

#![cfg(all(feature = "native", unix))]

mod support;

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use hyper::Method;
use orkestrel_mcp::client::oauth::form_encode;
use orkestrel_mcp::client::ClientEra;
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use orkestrel_mcp::McpClient;
use serde_json::{json, Value};
use support::client::era_options;
use support::server::BIN;
use support::{eventually, DEADLINE};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const HERE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/auth");

/// `node provider.mjs`: the issuer URL and the process.
async fn authorization_server() -> (String, Child) {
    assert!(
        std::path::Path::new(HERE)
            .join("node_modules/oidc-provider")
            .exists(),
        "oidc-provider is not installed: run `npm ci` in tests/auth (tests/run.sh does)"
    );
    let mut child = Command::new("node")
        .arg(format!("{HERE}/provider.mjs"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let issuer = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(issuer) = line.strip_prefix("issuer ") {
                return issuer.to_owned();
            }
        }
        panic!("provider.mjs printed no issuer")
    })
    .await
    .expect("the authorization server within the deadline");
    // Keep reading: a closed stdout would end the provider at its next line.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (issuer, child)
}

/// `serve --http 127.0.0.1:0 ARGS…` with stderr kept: its URL, the child and its log.
async fn serve(args: &[&str]) -> (String, Child, Arc<Mutex<String>>) {
    serve_env(args, &[]).await
}

/// [`serve`] with these environment variables.
async fn serve_env(args: &[&str], env: &[(&str, &str)]) -> (String, Child, Arc<Mutex<String>>) {
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "debug")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = Arc::new(Mutex::new(String::new()));
    let url = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            log.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(i) = line.find("serving MCP at http://") {
                return line[i + "serving MCP at ".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .to_owned();
            }
        }
        panic!("serve printed no URL: {}", log.lock().unwrap())
    })
    .await
    .expect("the server within the deadline");
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    (url, child, log)
}

fn addr_of(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A client_credentials token from `issuer` for `resource` with `scope`.
async fn token(issuer: &str, resource: &str, scope: &str) -> String {
    token_with(issuer, resource, scope, &[]).await
}

/// [`token`] with `extra` form fields (provider.mjs's `test_exp`, `test_nbf`).
async fn token_with(issuer: &str, resource: &str, scope: &str, extra: &[(&str, &str)]) -> String {
    let mut body = format!(
        "grant_type=client_credentials&resource={}&scope={}",
        form_encode(resource),
        form_encode(scope)
    );
    for (name, value) in extra {
        body.push_str(&format!("&{name}={}", form_encode(value)));
    }
    // machine:machine-secret
    let basic = "Basic bWFjaGluZTptYWNoaW5lLXNlY3JldA==";
    let reply = support::http::request(
        addr_of(issuer),
        Method::POST,
        "/token",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("authorization", basic),
        ],
        body,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["access_token"].as_str().unwrap().to_owned()
}

/// A POST of `ping` to the MCP path with `authorization`: status, `WWW-Authenticate`, body.
async fn ping(url: &str, authorization: Option<&str>) -> (u16, String, Value) {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(value) = authorization {
        headers.push(("authorization", value));
    }
    let reply = support::http::request(
        addr_of(url),
        Method::POST,
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    )
    .await;
    let challenge = reply
        .header("www-authenticate")
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
    (reply.status, challenge, body)
}

/// Our client over HTTP (or WebSocket) sending `Authorization: Bearer token`.
fn client(url: &str, token: &str, websocket: bool) -> McpClient {
    let header = vec![("Authorization".to_owned(), format!("Bearer {token}"))];
    let options = era_options(ClientEra::Auto);
    if websocket {
        let mut ws = WsClientOptions::new(url.replacen("http://", "ws://", 1));
        ws.headers = header;
        McpClient::new(WsTransport::new(ws).unwrap(), options)
    } else {
        let mut http = HttpClientOptions::new(url);
        http.headers = header;
        McpClient::new(HttpTransport::new(http).unwrap(), options)
    }
}

#[tokio::test]
async fn tokens_from_a_real_authorization_server_are_required_and_checked() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _server, log) = serve(&["--auth-issuer", &issuer, "--auth-scope", "mcp:tools"]).await;
    let resource = url.clone();
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        addr_of(&url)
    );

    // No token: 401 naming the metadata and the scope; the metadata names the issuer.
    let (status, challenge, body) = ping(&url, None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        challenge,
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp:tools""#)
    );
    assert_eq!(body["error"]["code"], -32600);
    let doc = support::http::request(
        addr_of(&url),
        Method::GET,
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    )
    .await;
    assert_eq!(
        doc.json(),
        json!({"resource": resource, "authorization_servers": [issuer], "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:tools"]})
    );

    // A valid token: the tool sees who it speaks for, over HTTP and WebSocket.
    let good = token(&issuer, &resource, "mcp:tools").await;
    for websocket in [false, true] {
        let client = client(&url, &good, websocket);
        client.connect().await.unwrap();
        let me = client.call("whoami", json!({})).await.unwrap().unwrap();
        assert_eq!(
            me,
            json!({"subject": "machine", "clientId": "machine", "scopes": ["mcp:tools"]}),
            "websocket {websocket}"
        );
        client.disconnect().await;
    }

    // Valid but without the scope: 403 insufficient_scope.
    let weak = token(&issuer, &resource, "mcp:admin").await;
    let (status, challenge, _) = ping(&url, Some(&format!("Bearer {weak}"))).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );

    // For another resource, forged, or from another issuer: 401 invalid_token.
    let elsewhere = token(&issuer, "http://other.test/mcp", "mcp:tools").await;
    let forged = forge(&good);
    let (other_issuer, _other) = authorization_server().await;
    let foreign = token(&other_issuer, &resource, "mcp:tools").await;
    for (what, bad, reason) in [
        ("another audience", &elsewhere, "for another audience"),
        (
            "a forged signature",
            &forged,
            "the signature does not verify",
        ),
        // Signed by the same (development) key: only its `iss` is wrong.
        ("another issuer", &foreign, "from another issuer"),
    ] {
        let (status, challenge, body) = ping(&url, Some(&format!("Bearer {bad}"))).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(
            body["error"]["message"].as_str().unwrap().contains(reason),
            "{what}: {body}"
        );
    }
    // A WebSocket upgrade without a token is refused the same way.
    let anonymous = McpClient::new(
        WsTransport::new(WsClientOptions::new(url.replacen("http://", "ws://", 1))).unwrap(),
        era_options(ClientEra::Legacy),
    );
    assert!(anonymous.connect().await.is_err());

    // No token ever reaches the log, even at debug.
    eventually(DEADLINE, "the log has the refusals", || {
        log.lock().unwrap().contains("token refused")
    })
    .await;
    let log = log.lock().unwrap().clone();
    for secret in [&good, &weak, &elsewhere, &forged, &foreign] {
        let signature = secret.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token in the log");
    }
}

/// `token` with one signature character changed (still base64url).
fn forge(token: &str) -> String {
    let (head, signature) = token.rsplit_once('.').unwrap();
    let mut bytes = signature.as_bytes().to_vec();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    format!("{head}.{}", String::from_utf8(bytes).unwrap())
}

/// The whole `Bearer` of a 401 for `token`: status, challenge, the error message.
async fn refused(url: &str, token: &str) -> (u16, String, String) {
    let (status, challenge, body) = ping(url, Some(&format!("Bearer {token}"))).await;
    let message = body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (status, challenge, message)
}

/// `whoami` over HTTP with `token`: the identity, or the error's text.
async fn whoami(url: &str, token: &str) -> Result<Value, String> {
    let client = client(url, token, false);
    client.connect().await.map_err(|e| e.to_string())?;
    let me = client.call("whoami", json!({})).await;
    client.disconnect().await;
    me.map(|v| v.unwrap_or(Value::Null))
        .map_err(|e| e.to_string())
}

/// Asserts no token's signature is in `log`.
fn assert_not_logged(log: &Mutex<String>, tokens: &[&String]) {
    let log = log.lock().unwrap().clone();
    for token in tokens {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!log.contains(signature), "a token in the log:\n{log}");
    }
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_refused_within_the_leeway() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _server, log) = serve(&["--auth-issuer", &issuer, "--auth-scope", "mcp:tools"]).await;
    // Signed by the issuer for this server, with `exp` an hour past / `nbf` an hour ahead.
    let expired = token_with(&issuer, &url, "mcp:tools", &[("test_exp", "-3600")]).await;
    let early = token_with(&issuer, &url, "mcp:tools", &[("test_nbf", "3600")]).await;
    for (what, bad, reason) in [
        ("expired", &expired, "expired"),
        ("early", &early, "not valid yet"),
    ] {
        let (status, challenge, message) = refused(&url, bad).await;
        assert_eq!(status, 401, "{what}: {message}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(message.contains(reason), "{what}: {message}");
    }
    // Expired 5 s ago: within the 30 s leeway, still accepted.
    let lately = token_with(&issuer, &url, "mcp:tools", &[("test_exp", "-5")]).await;
    let me = whoami(&url, &lately).await.unwrap();
    assert_eq!(me["clientId"], "machine");
    eventually(DEADLINE, "the log has the refusals", || {
        log.lock().unwrap().contains("token refused")
    })
    .await;
    assert_not_logged(&log, &[&expired, &early, &lately]);
}

/// The `kid` in a JWT's header.
fn kid_of(token: &str) -> String {
    use base64::Engine;
    let head = token.split('.').next().unwrap();
    let head = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .unwrap();
    serde_json::from_slice::<Value>(&head).unwrap()["kid"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_the_removed_one_refused() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _server, log) = serve(&["--auth-issuer", &issuer, "--auth-scope", "mcp:tools"]).await;
    let before = token(&issuer, &url, "mcp:tools").await;
    assert_eq!(whoami(&url, &before).await.unwrap()["clientId"], "machine");
    // The issuer rotates: its key set now holds only a new key, and it signs with that.
    let rotated = support::http::request(addr_of(&issuer), Method::POST, "/test/rotate", &[], "")
        .await
        .json();
    let after = token(&issuer, &url, "mcp:tools").await;
    assert_eq!(kid_of(&after), rotated["kid"].as_str().unwrap());
    assert_ne!(kid_of(&after), kid_of(&before));
    // A token by the new key: the verifier fetches the set again (at once, though it read the
    // set moments ago, at setup) and accepts it.
    match whoami(&url, &after).await {
        Ok(me) => assert_eq!(me["clientId"], "machine"),
        Err(e) => panic!("the new key is refused: {e}\n{}", log.lock().unwrap()),
    }
    // A token by the removed key: refused, though its signature, issuer and audience are good.
    let (status, challenge, message) = refused(&url, &before).await;
    assert_eq!(status, 401, "{message}");
    assert!(
        challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
    assert!(
        message.contains("signed with a key the issuer does not publish"),
        "{message}"
    );
    eventually(DEADLINE, "the log has the refusal", || {
        log.lock().unwrap().contains("token refused")
    })
    .await;
    assert_not_logged(&log, &[&before, &after]);
}

#[tokio::test]
async fn metadata_that_names_another_issuer_stops_the_server() {
    let (issuer, _provider) = authorization_server().await;
    // The same server under another name: its metadata says 127.0.0.1, not localhost.
    let aliased = issuer.replace("127.0.0.1", "localhost");
    let output = tokio::time::timeout(
        DEADLINE,
        Command::new(BIN)
            .args(["serve", "--http", "127.0.0.1:0", "--auth-issuer", &aliased])
            .env("RUST_LOG", "warn")
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("names issuer") && stderr.contains(&issuer),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_bridge_requires_tokens_of_its_downstream_clients() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _bridge) = support::server::spawn_listening(
        &[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &issuer,
            "--",
            BIN,
            "serve",
            "--stdio",
        ],
        "warn",
    )
    .await;
    let (status, challenge, _) = ping(&url, None).await;
    assert_eq!(status, 401);
    assert!(
        challenge.starts_with("Bearer resource_metadata="),
        "{challenge}"
    );
    let good = token(&issuer, &url, "mcp:tools").await;
    let client = client(&url, &good, false);
    client.connect().await.unwrap();
    assert_eq!(
        client
            .call("echo", json!({"text": "signed in"}))
            .await
            .unwrap(),
        Some(json!("signed in"))
    );
    client.disconnect().await;
}

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection() {
    let (issuer, _provider) = authorization_server().await;
    let resource = "http://opaque.test/mcp";
    let (url, _server, log) = serve_env(
        &[
            "--auth-issuer",
            &issuer,
            "--auth-resource",
            resource,
            "--auth-introspection-client",
            "machine",
        ],
        &[("MCP_AUTH_CLIENT_SECRET", "machine-secret")],
    )
    .await;
    let opaque = token(&issuer, resource, "mcp:tools").await;
    assert_eq!(
        opaque.matches('.').count(),
        0,
        "an opaque token, not a JWT: {opaque}"
    );
    let client = client(&url, &opaque, false);
    if let Err(e) = client.connect().await {
        panic!("{e}\n{}", log.lock().unwrap());
    }
    let me = match client.call("whoami", json!({})).await {
        Ok(me) => me.unwrap(),
        Err(e) => panic!("{e}\n{}", log.lock().unwrap()),
    };
    assert_eq!(me["clientId"], "machine");
    assert_eq!(me["scopes"], json!(["mcp:tools"]));
    client.disconnect().await;
    // Unknown to the issuer, or active but for another resource: 401.
    let (status, challenge, body) = ping(&url, Some("Bearer made-up-token")).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        challenge.contains("invalid_token") && body.to_string().contains("not active"),
        "{challenge} {body}"
    );
    let elsewhere = token(&issuer, "http://opaque-other.test/mcp", "mcp:tools").await;
    let (status, _, body) = ping(&url, Some(&format!("Bearer {elsewhere}"))).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.to_string().contains("another audience"), "{body}");
}

#[tokio::test]
async fn our_client_signs_in_by_client_credentials_on_a_401() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _server, _log) =
        serve(&["--auth-issuer", &issuer, "--auth-scope", "mcp:tools"]).await;
    let run = |args: Vec<String>, secret: &'static str| async move {
        let output = tokio::time::timeout(
            DEADLINE,
            Command::new(BIN)
                .args(args)
                .env("MCP_CLIENT_SECRET", secret)
                .env("RUST_LOG", "warn")
                .output(),
        )
        .await
        .unwrap()
        .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    // Directly, then through a stdio bridge that signs in toward its upstream.
    for args in [
        s(&[
            "call",
            &url,
            "whoami",
            "--client-credentials",
            "--client-id",
            "machine",
        ]),
        s(&[
            "call",
            "whoami",
            "--",
            BIN,
            "bridge",
            "--stdio",
            "--client-credentials",
            "--client-id",
            "machine",
            &url,
        ]),
    ] {
        let (code, stdout, stderr) = run(args.clone(), "machine-secret").await;
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let me: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(me["clientId"], "machine", "{args:?}");
        assert_eq!(
            me["scopes"],
            json!(["mcp:tools"]),
            "the challenge's scope: {args:?}"
        );
    }
    // `login` checks the credentials and says that nothing is kept (the grant needs no user:
    // each command signs in again); no token file is written.
    let store = std::env::temp_dir().join(format!("orkestrel-cc-store-{}", std::process::id()));
    let (code, _, stderr) = run(
        s(&[
            "login",
            &url,
            "--client-credentials",
            "--client-id",
            "machine",
            "--token-store",
            store.to_str().unwrap(),
        ]),
        "machine-secret",
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("by the client credentials grant") && stderr.contains("nothing is kept"),
        "{stderr}"
    );
    assert!(!store.exists());
    // The secret as a flag wins over the environment's.
    let (code, stdout, stderr) = run(
        s(&[
            "call",
            &url,
            "whoami",
            "--client-credentials",
            "--client-id",
            "machine",
            "--client-secret",
            "machine-secret",
        ]),
        "wrong-secret",
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["clientId"],
        "machine"
    );
    // A wrong secret: no token, the 401 reported, the secret not shown.
    let (code, _, stderr) = run(
        s(&[
            "call",
            &url,
            "whoami",
            "--client-credentials",
            "--client-id",
            "machine",
        ]),
        "wrong-secret",
    )
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains("wrong-secret"), "{stderr}");
}

/// Runs `orkestrel-mcp ARGS…` to its end within the deadline: exit code, stdout, stderr.
async fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let output = tokio::time::timeout(
        DEADLINE,
        Command::new(BIN)
            .args(args)
            .env("RUST_LOG", "warn")
            .env_remove("MCP_CLIENT_SECRET")
            .output(),
    )
    .await
    .expect("the command within the deadline")
    .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn our_cli_signs_in_as_a_user_keeps_and_refreshes_the_tokens() {
    let (issuer, _provider) = authorization_server().await;
    let (url, _server, _log) =
        serve(&["--auth-issuer", &issuer, "--auth-scope", "mcp:tools"]).await;
    let dir = tempdir();
    let store = dir.join("tokens.json");
    let store_arg = store.to_str().unwrap().to_owned();
    // `login`: the authorization URL is shown; a user (sign_in.mjs) signs in at the provider's
    // pages, and the provider redirects to the CLI's loopback listener.
    let mut login = Command::new(BIN)
        .args(["login", &url, "--no-browser", "--token-store", &store_arg])
        .env("RUST_LOG", "warn")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(login.stderr.take().unwrap()).lines();
    let mut shown = String::new();
    let authorization_url = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            shown.push_str(&format!("{line}\n"));
            if let Some(at) = line.find(&format!("{issuer}/auth?")) {
                return line[at..].trim().to_owned();
            }
        }
        panic!("login showed no authorization URL: {shown}")
    })
    .await
    .unwrap();
    for (name, value) in [
        ("code_challenge_method", "S256"),
        ("resource", url.as_str()),
    ] {
        assert!(
            authorization_url.contains(&format!("{name}={}", form_encode(value))),
            "{name}: {authorization_url}"
        );
    }
    let signed = Command::new("node")
        .arg(format!("{HERE}/sign_in.mjs"))
        .arg(&authorization_url)
        .output()
        .await
        .unwrap();
    assert!(
        signed.status.success(),
        "{}",
        String::from_utf8_lossy(&signed.stderr)
    );
    let status = tokio::time::timeout(DEADLINE, login.wait())
        .await
        .unwrap()
        .unwrap();
    let mut rest = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest.push_str(&format!("{line}\n"));
    }
    assert!(status.success(), "{rest}");
    assert!(rest.contains("signed in to"), "{rest}");
    // Kept: readable by its owner only, bound to the issuer, a refresh token with it.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&store).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let kept: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    let entry = &kept[&url];
    assert_eq!(entry["issuer"], issuer.as_str());
    assert!(entry["tokens"]["refresh_token"].is_string(), "{kept}");
    // A later call, with no terminal and no sign-in flags, uses the kept token.
    let (code, stdout, stderr) = cli(&["call", &url, "whoami", "--token-store", &store_arg]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let me: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(me["subject"], "alice");
    assert_eq!(me["clientId"], entry["client_id"], "the registered client");
    assert_eq!(me["scopes"], json!(["mcp:tools"]));
    // A stdio bridge toward the server uses the same kept token (a desktop host's view).
    let (code, stdout, stderr) = cli(&[
        "call",
        "whoami",
        "--",
        BIN,
        "bridge",
        "--stdio",
        "--token-store",
        &store_arg,
        &url,
    ])
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    let me: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(me["subject"], "alice", "through the bridge");
    // The access token expires: the next call refreshes it (no sign-in) and keeps the new one.
    let mut expired = kept.clone();
    expired[&url]["tokens"]["expires_at"] = json!(1);
    std::fs::write(&store, serde_json::to_vec(&expired).unwrap()).unwrap();
    let (code, _, stderr) = cli(&["call", &url, "whoami", "--token-store", &store_arg]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let refreshed: Value = serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    assert_ne!(
        refreshed[&url]["tokens"]["access_token"], entry["tokens"]["access_token"],
        "a new access token"
    );
    assert!(refreshed[&url]["tokens"]["expires_at"].as_u64().unwrap() > 1);
    // The token never shows in what the CLI prints.
    let token = entry["tokens"]["access_token"].as_str().unwrap();
    assert!(!rest.contains(token) && !stderr.contains(token));
    // `logout`: forgotten; without a terminal the 401 stands (nothing to sign in with).
    let (code, _, stderr) = cli(&["logout", &url, "--token-store", &store_arg]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("signed out"), "{stderr}");
    let (code, _, stderr) = cli(&["call", &url, "whoami", "--token-store", &store_arg]).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A fresh folder under the system's temporary one.
fn tempdir() -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("orkestrel-auth-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
