//! The client's authorization machine (`orkestrel_mcp::client::oauth::AuthFlow`): rounds that
//! start from a challenge (a status and arbitrary `WWW-Authenticate` text) and go on with
//! whatever the input says the host got back — answers with any status and a body (arbitrary
//! bytes, or the document the request looks for with fields dropped, changed or replaced by
//! arbitrary text), failures, redirects (the right callback, another state, an error, any URL)
//! — and, with the high bit of an op, any input whatever the machine asked for.
//!
//! Whatever the sequence: no panic; an `Action::Fetch` accepts an answer or a failure, and an
//! `Action::Authorize` a redirect, without `OutOfOrder` (every request is answerable); an
//! authorization URL carries PKCE S256 and a `state`; `Ready(token)` hands over the token of the
//! token answer just fed; a round ends in `Ready` or `Failed` within [`MAX_STEPS`] steps (when
//! the input runs out the host's every request fails and every redirect is refused); the
//! configured secret and the stored tokens show in no error and in no `Debug`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::client::oauth::{
    query_params, Action, AuthFlow, ClientRegistration, OAuthConfig, OAuthError, StoredCredentials,
    Tokens,
};
use serde_json::{json, Value};

/// Steps one round may take: 4 resource metadata URLs, 3 + 2 authorization server URLs, a
/// registration, an authorization and two token requests, with slack.
const MAX_STEPS: usize = 64;
/// Rounds per input.
const MAX_ROUNDS_PER_INPUT: usize = 8;
const SECRET: &str = "fz-client-secret-Q7";
const ACCESS: &str = "fz-access-A3";
const REFRESH: &str = "fz-refresh-R9";
const REDIRECT: &str = "http://127.0.0.1:7/callback";
const SERVERS: [&str; 3] = [
    "https://mcp.example/mcp",
    "https://mcp.example",
    "http://127.0.0.1:1/a/b/",
];
const ISSUERS: [&str; 3] = [
    "https://as.example",
    "https://as.example/tenant",
    "https://mcp.example",
];
const STATUSES: [u16; 8] = [200, 201, 400, 401, 404, 500, 302, 307];

/// The input bytes, read from the front.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    /// A length byte, then that many bytes, as text.
    fn text(&mut self) -> String {
        let n = usize::from(self.byte().unwrap_or(0));
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
}

fn pick<T: Clone>(items: &[T], b: u8) -> T {
    items[usize::from(b) % items.len()].clone()
}

fn config(flags: u8, server: &str) -> OAuthConfig {
    let mut config = if flags & 1 != 0 {
        OAuthConfig::client_credentials(server, "machine", SECRET)
    } else {
        OAuthConfig::authorization_code(server, REDIRECT)
    };
    if flags & 1 == 0 && flags & 2 != 0 {
        config.client = Some(ClientRegistration {
            client_secret: (flags & 4 != 0).then(|| SECRET.to_owned()),
            ..ClientRegistration::public("pre")
        });
    }
    if flags & 8 != 0 {
        config.client_metadata_url = Some("https://client.example/meta.json".into());
    }
    if flags & 0x10 != 0 {
        config.scope = Some("s1 s2".into());
    }
    config
}

/// A challenge header: none, one of a few, or arbitrary text.
fn challenge_header(b: &mut Bytes, server: &str) -> Option<String> {
    let origin = server.split('/').take(3).collect::<Vec<_>>().join("/");
    match b.byte().unwrap_or(0) % 8 {
        0 => None,
        1 => Some(format!(
            r#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp", scope="s1""#
        )),
        2 => Some(r#"Bearer error="insufficient_scope", scope="s1 s3""#.into()),
        3 => Some(r#"Bearer realm="r", error="invalid_token""#.into()),
        4 => Some(format!(
            r#"Basic realm="x", Bearer resource_metadata="{}""#,
            b.text()
        )),
        _ => Some(b.text()),
    }
}

/// The issuer a metadata URL asks about (the path-insertion forms undone).
fn asked_issuer(url: &str) -> String {
    for well_known in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        if let Some(at) = url.find(well_known) {
            let (origin, rest) = url.split_at(at);
            let rest = &rest[well_known.len()..];
            return format!("{origin}{rest}");
        }
    }
    url.to_owned()
}

/// Remove the fields of `doc` whose bit is set in `drop`.
fn dropped(mut doc: Value, drop: u8) -> Value {
    if let Value::Object(map) = &mut doc {
        let keys: Vec<String> = map.keys().cloned().collect();
        for (i, key) in keys.iter().enumerate() {
            if i < 8 && drop & (1 << i) != 0 {
                map.remove(key);
            }
        }
    }
    doc
}

/// The document a request looks for, shaped by the input.
fn document(b: &mut Bytes, url: &str, method: &str, body: &[u8], server: &str, n: u32) -> Value {
    let shape = b.byte().unwrap_or(0);
    let drop = if shape & 0x80 != 0 {
        b.byte().unwrap_or(0)
    } else {
        0
    };
    let odd = if shape & 0x40 != 0 {
        Some(b.text())
    } else {
        None
    };
    let text = |default: String| odd.clone().unwrap_or(default);
    let server_metadata =
        url.contains("oauth-authorization-server") || url.contains("openid-configuration");
    let doc = if method == "GET" && !server_metadata {
        json!({
            "resource": text(pick(&[server, "https://mcp.example/other", "https://mcp.example"], shape).to_owned()),
            "authorization_servers": [text(pick(&ISSUERS, shape >> 2).to_owned())],
            "scopes_supported": ["s1", "s2"],
        })
    } else if method == "GET" {
        let issuer = asked_issuer(url);
        let origin = issuer.split('/').take(3).collect::<Vec<_>>().join("/");
        json!({
            "issuer": if shape & 1 != 0 { text(issuer.clone()) } else { issuer.clone() },
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": text(format!("{origin}/token")),
            "registration_endpoint": format!("{origin}/register"),
            "code_challenge_methods_supported": if shape & 2 != 0 { json!(["plain"]) } else { json!(["S256"]) },
            "grant_types_supported": if shape & 4 != 0 { json!(["authorization_code"]) } else { json!(["authorization_code", "client_credentials", "refresh_token"]) },
            "token_endpoint_auth_methods_supported": pick(&[json!(["none"]), json!(["client_secret_post"]), json!(["client_secret_basic"]), json!(["private_key_jwt"])], shape >> 3),
            "scopes_supported": ["s1", "offline_access"],
            "client_id_metadata_document_supported": shape & 0x20 != 0,
            "authorization_response_iss_parameter_supported": shape & 0x10 != 0,
        })
    } else if method == "POST" && body.first() == Some(&b'{') {
        json!({
            "client_id": text(format!("registered-{n}")),
            "client_secret": SECRET,
            "token_endpoint_auth_method": pick(&["none", "client_secret_post", "client_secret_basic", "other"], shape),
        })
    } else {
        json!({
            "access_token": text(format!("fz-at-{n}")),
            "token_type": pick(&["Bearer", "bearer", "DPoP", "mac"], shape),
            "expires_in": pick(&[json!(3600), json!(0), json!(-1), json!("soon"), json!(u64::MAX)], shape >> 2),
            "refresh_token": format!("fz-rt-{n}"),
            "scope": "s1 s2",
        })
    };
    dropped(doc, drop)
}

/// What the host feeds the machine.
enum Feed {
    Answer(u16, Vec<u8>),
    Failure,
    Redirect(String),
    Challenge(u16, Option<String>),
}

/// The secrets the machine holds that no error and no `Debug` may show.
fn assert_hidden(text: &str, check: bool) {
    if check {
        for secret in [SECRET, ACCESS, REFRESH, "fz-code-"] {
            assert!(!text.contains(secret), "a secret shows: {text}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Secrets are looked for only where the input could not have put them itself.
    let check = !data.windows(3).any(|w| w == b"fz-");
    let mut b = Bytes(data);
    let flags = b.byte().unwrap_or(0);
    let server = pick(&SERVERS, flags >> 6);
    let mut flow = AuthFlow::new(config(flags, server));
    if flags & 0x20 != 0 {
        let issuer = pick(&ISSUERS, b.byte().unwrap_or(0));
        flow.restore(StoredCredentials {
            issuer: issuer.to_owned(),
            client_id: Some("kept".into()),
            client_secret: Some(SECRET.into()),
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            tokens: Some(Tokens {
                access_token: ACCESS.into(),
                refresh_token: Some(REFRESH.into()),
                expires_at: Some(1_700_000_100),
                scope: Some("s1".into()),
                dpop: false,
            }),
        });
    }
    let mut now: u64 = 1_700_000_000;
    let mut n: u32 = 0;
    for _ in 0..MAX_ROUNDS_PER_INPUT {
        let status = match b.byte() {
            None => break,
            Some(s) => pick(&[401, 401, 403, 400, 500], s),
        };
        now += u64::from(b.byte().unwrap_or(0)) * 5;
        let header = challenge_header(&mut b, server);
        let mut action = flow.challenge(status, header.as_deref(), now);
        let mut steps = 0;
        // The last answer fed, for `Ready`'s token.
        let mut last_body: Vec<u8> = Vec::new();
        loop {
            steps += 1;
            assert!(
                steps <= MAX_STEPS,
                "no end after {MAX_STEPS} steps: {action:?}"
            );
            let (feed, in_order) = match &action {
                Action::Ready(token) => {
                    let answered: Option<Value> = serde_json::from_slice(&last_body).ok();
                    let expected = answered.as_ref().and_then(|d| d["access_token"].as_str());
                    assert_eq!(Some(token.as_str()), expected, "Ready with another token");
                    break;
                }
                Action::Failed(error) => {
                    assert_hidden(&error.to_string(), check);
                    break;
                }
                Action::Authorize(url) => {
                    assert!(url.contains("code_challenge_method=S256"), "no PKCE: {url}");
                    let state = query_params(url)
                        .into_iter()
                        .find(|(k, _)| k == "state")
                        .map(|(_, v)| v);
                    assert!(
                        state.as_deref().is_some_and(|s| !s.is_empty()),
                        "no state: {url}"
                    );
                    let state = state.unwrap_or_default();
                    match b.byte() {
                        None => (
                            Feed::Redirect(format!("{REDIRECT}?error=access_denied")),
                            true,
                        ),
                        Some(op) if op & 0x80 != 0 => (any(&mut b, op), false),
                        Some(op) => {
                            n += 1;
                            let iss = match (op >> 3) & 3 {
                                0 => String::new(),
                                1 => "&iss=https%3A%2F%2Fas.example".into(),
                                2 => "&iss=https%3A%2F%2Fmcp.example".into(),
                                _ => format!("&iss={}", b.text()),
                            };
                            let callback = match (op & 7) % 5 {
                                0 | 1 => format!("{REDIRECT}?code=fz-code-{n}&state={state}{iss}"),
                                2 => format!("{REDIRECT}?code=fz-code-{n}&state=x{state}{iss}"),
                                3 => format!("{REDIRECT}?error=access_denied&error_description=no&state={state}{iss}"),
                                _ => b.text(),
                            };
                            (Feed::Redirect(callback), true)
                        }
                    }
                }
                Action::Fetch(request) => {
                    assert!(
                        request.method == "GET" || request.method == "POST",
                        "{request:?}"
                    );
                    assert_hidden(&format!("{request:?}"), check);
                    match b.byte() {
                        None => (Feed::Failure, true),
                        Some(op) if op & 0x80 != 0 => (any(&mut b, op), false),
                        Some(op) => {
                            n += 1;
                            let feed = match op % 8 {
                                0..=3 => {
                                    let doc = document(
                                        &mut b,
                                        &request.url,
                                        request.method,
                                        &request.body,
                                        server,
                                        n,
                                    );
                                    let status = if op & 0x40 != 0 {
                                        u16::from_be_bytes([
                                            b.byte().unwrap_or(0),
                                            b.byte().unwrap_or(0),
                                        ])
                                    } else {
                                        200
                                    };
                                    Feed::Answer(status, doc.to_string().into_bytes())
                                }
                                4 | 5 => {
                                    let status = pick(&STATUSES, b.byte().unwrap_or(0));
                                    Feed::Answer(status, b.text().into_bytes())
                                }
                                _ => Feed::Failure,
                            };
                            (feed, true)
                        }
                    }
                }
            };
            action = match feed {
                Feed::Answer(status, body) => {
                    let next = flow.fetched(status, &body);
                    last_body = body;
                    next
                }
                Feed::Failure => flow.fetch_failed("connection refused"),
                Feed::Redirect(url) => flow.redirected(&url),
                Feed::Challenge(status, header) => {
                    // A new round (bounded in number by the machine's round limit).
                    steps = 0;
                    last_body.clear();
                    flow.challenge(status, header.as_deref(), now)
                }
            };
            if in_order {
                assert!(
                    !matches!(action, Action::Failed(OAuthError::OutOfOrder(_))),
                    "the machine's own request was not answerable: {action:?}"
                );
            }
        }
        // Between rounds: what a host reads.
        let _ = flow.current(now);
        let _ = flow.tokens();
        let kept = flow.credentials();
        assert_hidden(&format!("{flow:?}"), check);
        if let Some(kept) = kept {
            if b.byte().is_some_and(|x| x & 1 != 0) {
                let mut again = AuthFlow::new(flow.config().clone());
                again.restore(kept);
                flow = again;
            }
        }
    }
});

/// Any input, whatever the machine asked for.
fn any(b: &mut Bytes, op: u8) -> Feed {
    match op % 4 {
        0 => Feed::Answer(
            pick(&STATUSES, b.byte().unwrap_or(0)),
            b.text().into_bytes(),
        ),
        1 => Feed::Failure,
        2 => Feed::Redirect(b.text()),
        _ => Feed::Challenge(pick(&[401, 403], op >> 2), Some(b.text())),
    }
}
