//! The authorization machine driven by hand: each answer is what a real authorization server
//! or MCP server would send, and each assertion pins a rule of the module docs.

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::super::{
    query_params, Action, ApplicationType, ClientRegistration, OAuthConfig, OAuthError,
};
use super::AuthFlow;

const MCP: &str = "http://rs.test/mcp";
const AS: &str = "https://as.test";
const PRM: &str = "http://rs.test/.well-known/oauth-protected-resource/mcp";
const CHALLENGE: &str =
    r#"Bearer resource_metadata="http://rs.test/.well-known/oauth-protected-resource/mcp""#;

fn flow() -> AuthFlow {
    AuthFlow::new(OAuthConfig::authorization_code(
        MCP,
        "http://127.0.0.1:9/callback",
    ))
}

fn prm() -> Value {
    json!({ "resource": MCP, "authorization_servers": [AS], "scopes_supported": ["mcp:read"] })
}

fn as_metadata() -> Value {
    json!({
        "issuer": AS,
        "authorization_endpoint": format!("{AS}/authorize"),
        "token_endpoint": format!("{AS}/token"),
        "registration_endpoint": format!("{AS}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    })
}

fn fetch(action: Action) -> super::OAuthRequest {
    match action {
        Action::Fetch(request) => request,
        other => panic!("expected a fetch, got {other:?}"),
    }
}

fn answer(flow: &mut AuthFlow, status: u16, doc: &Value) -> Action {
    flow.fetched(status, doc.to_string().as_bytes())
}

fn param(url_or_body: &str, name: &str) -> Option<String> {
    let text = if url_or_body.contains('?') {
        url_or_body.to_owned()
    } else {
        format!("?{url_or_body}")
    };
    query_params(&text)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// Discovery and registration up to the authorization URL.
fn to_authorize(flow: &mut AuthFlow, metadata: Value) -> String {
    let request = fetch(flow.challenge(401, Some(CHALLENGE), 1_000));
    assert_eq!(request.url, PRM);
    let request = fetch(answer(flow, 200, &prm()));
    assert_eq!(
        request.url,
        "https://as.test/.well-known/oauth-authorization-server"
    );
    let register = fetch(answer(flow, 200, &metadata));
    assert_eq!(
        (register.method, register.url.as_str()),
        ("POST", "https://as.test/register")
    );
    let body: Value = serde_json::from_slice(&register.body).unwrap();
    assert_eq!(body["application_type"], "native");
    assert_eq!(
        body["redirect_uris"],
        json!(["http://127.0.0.1:9/callback"])
    );
    assert_eq!(body["token_endpoint_auth_method"], "none");
    match answer(flow, 201, &json!({ "client_id": "c1" })) {
        Action::Authorize(url) => url,
        other => panic!("expected the authorization URL, got {other:?}"),
    }
}

#[test]
fn the_authorization_code_flow_with_pkce_and_the_resource() {
    let mut flow = flow();
    let url = to_authorize(&mut flow, as_metadata());
    assert!(url.starts_with("https://as.test/authorize?response_type=code&"));
    assert_eq!(param(&url, "client_id").as_deref(), Some("c1"));
    assert_eq!(param(&url, "resource").as_deref(), Some(MCP));
    assert_eq!(param(&url, "scope").as_deref(), Some("mcp:read"));
    assert_eq!(
        param(&url, "code_challenge_method").as_deref(),
        Some("S256")
    );
    let state = param(&url, "state").unwrap();
    let callback =
        format!("http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test");
    let token = fetch(flow.redirected(&callback));
    let body = String::from_utf8(token.body.clone()).unwrap();
    assert_eq!(
        param(&body, "grant_type").as_deref(),
        Some("authorization_code")
    );
    assert_eq!(param(&body, "resource").as_deref(), Some(MCP));
    assert_eq!(param(&body, "client_id").as_deref(), Some("c1"));
    let verifier = param(&body, "code_verifier").unwrap();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    assert_eq!(param(&url, "code_challenge"), Some(challenge));
    assert!(!token.headers.iter().any(|(k, _)| *k == "authorization"));
    let ready = answer(
        &mut flow,
        200,
        &json!({ "access_token": "T", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "R" }),
    );
    assert_eq!(ready, Action::Ready("T".into()));
    assert_eq!(flow.current(1_000), Some("T"));
    assert_eq!(flow.current(1_000 + 3600), None, "expired");
    // A later 401 refreshes first, with the same resource.
    let _prm = fetch(flow.challenge(401, Some(CHALLENGE), 5_000));
    let refresh = fetch(answer(&mut flow, 200, &prm()));
    let body = String::from_utf8(refresh.body).unwrap();
    assert_eq!(param(&body, "grant_type").as_deref(), Some("refresh_token"));
    assert_eq!(param(&body, "refresh_token").as_deref(), Some("R"));
    let ready = answer(
        &mut flow,
        200,
        &json!({ "access_token": "T2", "token_type": "bearer" }),
    );
    assert_eq!(ready, Action::Ready("T2".into()));
    assert_eq!(
        flow.tokens().unwrap().1.refresh_token.as_deref(),
        Some("R"),
        "kept"
    );
}

#[test]
fn authorization_responses_are_checked() {
    let cases = [
        ("code=k&state=WRONG&iss=https%3A%2F%2Fas.test", "state"),
        ("code=k&state={s}", "iss"),
        ("code=k&state={s}&iss=https%3A%2F%2Fas.test%2F", "iss"),
        (
            "error=access_denied&state={s}&iss=https%3A%2F%2Fas.test",
            "access_denied",
        ),
    ];
    for (query, word) in cases {
        let mut flow = flow();
        let url = to_authorize(&mut flow, as_metadata());
        let state = param(&url, "state").unwrap();
        let callback = format!(
            "http://127.0.0.1:9/callback?{}",
            query.replace("{s}", &state)
        );
        match flow.redirected(&callback) {
            Action::Failed(OAuthError::AuthorizationResponse(text)) => {
                assert!(text.contains(word), "{query}: {text}")
            }
            other => panic!("{query}: {other:?}"),
        }
    }
    // Not advertised and absent: accepted.
    let mut metadata = as_metadata();
    metadata["authorization_response_iss_parameter_supported"] = Value::Null;
    let mut flow = flow();
    let url = to_authorize(&mut flow, metadata);
    let state = param(&url, "state").unwrap();
    let token =
        fetch(flow.redirected(&format!("http://127.0.0.1:9/callback?code=k&state={state}")));
    assert_eq!(token.url, "https://as.test/token");
}

#[test]
fn metadata_that_lies_is_refused() {
    let mut f = flow();
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    let mut other = prm();
    other["resource"] = json!("https://evil.example/mcp");
    assert!(matches!(
        answer(&mut f, 200, &other),
        Action::Failed(OAuthError::ResourceMismatch { .. })
    ));
    let mut f = flow();
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    fetch(answer(&mut f, 200, &prm()));
    let mut metadata = as_metadata();
    metadata["issuer"] = json!("https://attacker.example");
    assert!(matches!(
        answer(&mut f, 200, &metadata),
        Action::Failed(OAuthError::IssuerMismatch { .. })
    ));
    let mut f = flow();
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    fetch(answer(&mut f, 200, &prm()));
    let mut metadata = as_metadata();
    metadata["code_challenge_methods_supported"] = json!(["plain"]);
    assert!(matches!(
        answer(&mut f, 200, &metadata),
        Action::Failed(OAuthError::Unsupported { .. })
    ));
}

#[test]
fn discovery_order_and_the_2025_03_26_fallback() {
    let mut f = flow();
    // No resource_metadata in the challenge: path-suffixed, then root.
    assert_eq!(fetch(f.challenge(401, None, 0)).url, PRM);
    assert_eq!(
        fetch(f.fetched(404, b"")).url,
        "http://rs.test/.well-known/oauth-protected-resource"
    );
    // None: the server's origin is the authorization server.
    assert_eq!(
        fetch(f.fetched(404, b"")).url,
        "http://rs.test/.well-known/oauth-authorization-server"
    );
    assert_eq!(
        fetch(f.fetch_failed("connection refused")).url,
        "http://rs.test/.well-known/openid-configuration"
    );
    // No metadata either: the default endpoints.
    let register = fetch(f.fetched(404, b"not json"));
    assert_eq!(register.url, "http://rs.test/register");
    match answer(&mut f, 201, &json!({ "client_id": "c" })) {
        Action::Authorize(url) => assert!(url.starts_with("http://rs.test/authorize?")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn step_up_asks_for_the_union_and_a_refused_grant_is_not_retried() {
    let mut f = flow();
    let url = to_authorize(&mut f, as_metadata());
    let state = param(&url, "state").unwrap();
    fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    answer(
        &mut f,
        200,
        &json!({ "access_token": "T", "token_type": "Bearer", "scope": "mcp:read" }),
    );
    let step_up = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
    fetch(f.challenge(403, Some(step_up), 10));
    // The metadata is known: straight to the authorization, no registration again.
    let url = match answer(&mut f, 200, &prm()) {
        Action::Authorize(url) => url,
        other => panic!("{other:?}"),
    };
    assert_eq!(param(&url, "scope").as_deref(), Some("mcp:read mcp:write"));
    let state = param(&url, "state").unwrap();
    fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    answer(
        &mut f,
        200,
        &json!({ "access_token": "T2", "token_type": "Bearer" }),
    );
    // Granted (the scope asked), and asked again: a loop.
    let again = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
    assert!(matches!(
        f.challenge(403, Some(again), 11),
        Action::Failed(OAuthError::Loop(_))
    ));
}

#[test]
fn rounds_are_bounded_in_time() {
    let mut f = flow();
    for t in 0..super::MAX_ROUNDS as u64 {
        fetch(f.challenge(401, Some(CHALLENGE), t));
    }
    assert!(matches!(
        f.challenge(401, Some(CHALLENGE), 5),
        Action::Failed(OAuthError::Loop(_))
    ));
    // A minute later, rounds may run again.
    fetch(f.challenge(401, Some(CHALLENGE), 5 + super::ROUND_WINDOW_SECS + 1));
}

#[test]
fn a_new_issuer_drops_the_client_and_tokens() {
    let mut config = OAuthConfig::authorization_code(MCP, "http://127.0.0.1:9/callback");
    config.client = Some(ClientRegistration::with_secret("pre", "s"));
    let mut f = AuthFlow::new(config);
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    fetch(answer(&mut f, 200, &prm()));
    let mut metadata = as_metadata();
    metadata["token_endpoint_auth_methods_supported"] = json!(["client_secret_post"]);
    let url = match answer(&mut f, 200, &metadata) {
        Action::Authorize(url) => url,
        other => panic!("{other:?}"),
    };
    assert_eq!(param(&url, "client_id").as_deref(), Some("pre"));
    let state = param(&url, "state").unwrap();
    let token = fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    let body = String::from_utf8(token.body).unwrap();
    assert_eq!(
        param(&body, "client_secret").as_deref(),
        Some("s"),
        "client_secret_post"
    );
    answer(
        &mut f,
        200,
        &json!({ "access_token": "T", "token_type": "Bearer", "refresh_token": "R" }),
    );
    // The resource moves to another authorization server: no refresh at the old one.
    fetch(f.challenge(401, Some(CHALLENGE), 100));
    let mut moved = prm();
    moved["authorization_servers"] = json!(["http://as2.test"]);
    let request = fetch(answer(&mut f, 200, &moved));
    assert_eq!(
        request.url,
        "http://as2.test/.well-known/oauth-authorization-server"
    );
    assert!(f.tokens().is_none());
}

#[test]
fn errors_never_show_secrets() {
    let mut f = flow();
    let url = to_authorize(&mut f, as_metadata());
    let state = param(&url, "state").unwrap();
    fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=SECRETCODE&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    let failed = answer(
        &mut f,
        400,
        &json!({ "error": "invalid_grant", "error_description": "expired" }),
    );
    let Action::Failed(e) = failed else {
        panic!("{failed:?}")
    };
    let text = e.to_string();
    assert!(
        text.contains("invalid_grant") && !text.contains("SECRETCODE"),
        "{text}"
    );
    assert!(!format!("{f:?}").contains("SECRETCODE"));
    // Out of order inputs are errors, not panics.
    assert!(matches!(
        flow().redirected("http://x/?code=1"),
        Action::Failed(OAuthError::OutOfOrder(_))
    ));
    assert!(matches!(
        flow().fetched(200, b"{}"),
        Action::Failed(OAuthError::OutOfOrder(_))
    ));
}

/// Signs with a fixed text, so the assertion's claims can be read back.
struct Echo;

impl super::super::ClientAssertionSigner for Echo {
    fn algorithm(&self) -> &str {
        "ES256"
    }
    fn sign(&self, claims: &Value) -> Result<String, String> {
        Ok(format!("signed:{claims}"))
    }
}

fn metadata_for(grant: &str, methods: Value) -> Value {
    let mut metadata = as_metadata();
    metadata["grant_types_supported"] = json!([grant]);
    metadata["token_endpoint_auth_methods_supported"] = methods;
    metadata
}

#[test]
fn machine_grants_private_key_jwt_jwt_bearer_and_enterprise_managed() {
    use super::super::{Grant, JWT_BEARER};
    // Client credentials with private_key_jwt: iss = sub = the client, aud = the issuer.
    let mut config = OAuthConfig::client_credentials(MCP, "svc", "unused");
    let mut client = ClientRegistration::public("svc");
    client.assertion_signer = Some(std::sync::Arc::new(Echo));
    config.client = Some(client);
    let mut f = AuthFlow::new(config);
    fetch(f.challenge(401, Some(CHALLENGE), 500));
    fetch(answer(&mut f, 200, &prm()));
    let token = fetch(answer(
        &mut f,
        200,
        &metadata_for("client_credentials", json!(["private_key_jwt"])),
    ));
    let body = String::from_utf8(token.body).unwrap();
    assert_eq!(
        param(&body, "grant_type").as_deref(),
        Some("client_credentials")
    );
    assert_eq!(
        param(&body, "client_assertion_type").as_deref(),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let claims: Value = serde_json::from_str(
        param(&body, "client_assertion")
            .unwrap()
            .strip_prefix("signed:")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (claims["iss"].as_str(), claims["sub"].as_str()),
        (Some("svc"), Some("svc"))
    );
    assert_eq!(claims["aud"], AS);
    assert_eq!(
        (claims["iat"].as_u64(), claims["exp"].as_u64()),
        (Some(500), Some(560))
    );
    assert!(param(&body, "client_secret").is_none());

    // JWT bearer with a held assertion; an error is reported, not retried.
    let mut config = OAuthConfig::client_credentials(MCP, "wl", "x");
    config.client = Some(ClientRegistration::public("wl"));
    config.grant = Grant::JwtBearer {
        assertion: "WORKLOAD".into(),
    };
    let mut f = AuthFlow::new(config);
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    fetch(answer(&mut f, 200, &prm()));
    let token = fetch(answer(
        &mut f,
        200,
        &metadata_for(JWT_BEARER, json!(["none"])),
    ));
    let body = String::from_utf8(token.body).unwrap();
    assert_eq!(param(&body, "grant_type").as_deref(), Some(JWT_BEARER));
    assert_eq!(param(&body, "assertion").as_deref(), Some("WORKLOAD"));
    let refused = answer(&mut f, 400, &json!({ "error": "invalid_grant" }));
    assert!(
        matches!(refused, Action::Failed(OAuthError::Endpoint { .. })),
        "{refused:?}"
    );
    assert!(
        !format!("{:?}", f.config()).contains("WORKLOAD"),
        "no assertion in Debug"
    );

    // Enterprise-managed: the ID token exchanged at the identity provider, then JWT bearer.
    let mut config = OAuthConfig::client_credentials(MCP, "app", "app-secret");
    config.grant = Grant::EnterpriseManaged {
        idp_token_endpoint: "http://idp.test/token".into(),
        idp_client_id: "idp-app".into(),
        idp_client_secret: None,
        id_token: "IDTOKEN".into(),
    };
    let mut f = AuthFlow::new(config);
    fetch(f.challenge(401, Some(CHALLENGE), 0));
    fetch(answer(&mut f, 200, &prm()));
    let exchange = fetch(answer(
        &mut f,
        200,
        &metadata_for(JWT_BEARER, json!(["client_secret_basic"])),
    ));
    assert_eq!(exchange.url, "http://idp.test/token");
    let body = String::from_utf8(exchange.body).unwrap();
    assert_eq!(param(&body, "subject_token").as_deref(), Some("IDTOKEN"));
    assert_eq!(param(&body, "audience").as_deref(), Some(AS));
    assert_eq!(param(&body, "resource").as_deref(), Some(MCP));
    assert_eq!(
        param(&body, "requested_token_type").as_deref(),
        Some("urn:ietf:params:oauth:token-type:id-jag")
    );
    let token = fetch(answer(
        &mut f,
        200,
        &json!({ "access_token": "JAG", "token_type": "N_A" }),
    ));
    assert_eq!(token.url, "https://as.test/token");
    let body = String::from_utf8(token.body).unwrap();
    assert_eq!(param(&body, "assertion").as_deref(), Some("JAG"));
    assert!(token
        .headers
        .iter()
        .any(|(k, v)| *k == "authorization" && v.starts_with("Basic ")));
    assert_eq!(
        answer(
            &mut f,
            200,
            &json!({ "access_token": "T", "token_type": "Bearer" })
        ),
        Action::Ready("T".into())
    );
}

#[test]
fn the_2025_03_26_fallback_accepts_a_same_origin_issuer_only() {
    let mut f = flow();
    fetch(f.challenge(401, None, 0));
    fetch(f.fetched(404, b""));
    fetch(f.fetched(404, b""));
    // The origin's metadata names an issuer with a path on the same origin: accepted.
    let mut metadata = as_metadata();
    metadata["issuer"] = json!("http://rs.test/oauth");
    metadata["registration_endpoint"] = json!("http://rs.test/oauth/register");
    let register = fetch(answer(&mut f, 200, &metadata));
    assert_eq!(register.url, "http://rs.test/oauth/register");
    // Another origin's issuer is not.
    let mut f = flow();
    fetch(f.challenge(401, None, 0));
    fetch(f.fetched(404, b""));
    fetch(f.fetched(404, b""));
    metadata["issuer"] = json!("http://evil.test");
    assert!(matches!(
        answer(&mut f, 200, &metadata),
        Action::Failed(OAuthError::IssuerMismatch { .. })
    ));
}

/// A DPoP "key" whose signature is the signing input's length, so proofs can be read back.
struct FakeKey;

impl super::super::dpop::DpopSigner for FakeKey {
    fn algorithm(&self) -> &str {
        "ES256"
    }
    fn public_jwk(&self) -> Value {
        json!({ "kty": "EC", "crv": "P-256", "x": "X", "y": "Y" })
    }
    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        Ok(input.len().to_be_bytes().to_vec())
    }
}

fn claims_of(proof: &str) -> (Value, Value) {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = proof.split('.');
    let mut next = || -> Value {
        serde_json::from_slice(&b64.decode(parts.next().unwrap()).unwrap()).unwrap()
    };
    (next(), next())
}

#[test]
fn dpop_proofs_at_the_token_endpoint_and_on_each_request_with_nonces() {
    let mut config = OAuthConfig::authorization_code(MCP, "http://127.0.0.1:9/callback");
    config.dpop = Some(std::sync::Arc::new(FakeKey));
    let mut f = AuthFlow::new(config);
    let mut metadata = as_metadata();
    metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    let url = to_authorize(&mut f, metadata);
    let state = param(&url, "state").unwrap();
    let token = fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    let proof = &token.headers.iter().find(|(k, _)| *k == "dpop").unwrap().1;
    let (header, claims) = claims_of(proof);
    assert_eq!(
        (header["typ"].as_str(), header["alg"].as_str()),
        (Some("dpop+jwt"), Some("ES256"))
    );
    assert_eq!(header["jwk"]["x"], "X");
    assert_eq!(
        (claims["htm"].as_str(), claims["htu"].as_str()),
        (Some("POST"), Some("https://as.test/token"))
    );
    assert!(claims.get("nonce").is_none() && claims.get("ath").is_none());
    // The authorization server wants a nonce: the same request again, once, with it.
    let again = fetch(f.fetched_with_nonce(
        400,
        Some("n1"),
        json!({ "error": "use_dpop_nonce" }).to_string().as_bytes(),
    ));
    assert_eq!(again.body, token.body, "the same form");
    let proof = &again.headers.iter().find(|(k, _)| *k == "dpop").unwrap().1;
    assert_eq!(claims_of(proof).1["nonce"], "n1");
    let refused = f.fetched_with_nonce(
        400,
        Some("n2"),
        json!({ "error": "use_dpop_nonce" }).to_string().as_bytes(),
    );
    assert!(
        matches!(refused, Action::Failed(_)),
        "not a third time: {refused:?}"
    );

    // A bound token: `DPoP` scheme and a fresh proof per request, with `ath`.
    let mut f = AuthFlow::new({
        let mut c = OAuthConfig::authorization_code(MCP, "http://127.0.0.1:9/callback");
        c.dpop = Some(std::sync::Arc::new(FakeKey));
        c
    });
    let mut metadata = as_metadata();
    metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    let url = to_authorize(&mut f, metadata);
    let state = param(&url, "state").unwrap();
    fetch(f.redirected(&format!(
        "http://127.0.0.1:9/callback?code=k&state={state}&iss=https%3A%2F%2Fas.test"
    )));
    answer(
        &mut f,
        200,
        &json!({ "access_token": "T", "token_type": "DPoP" }),
    );
    let headers = f.request_headers("POST", "http://rs.test/mcp?x=1", 1_000);
    assert_eq!(headers[0], ("authorization", "DPoP T".to_owned()));
    let (_, first) = claims_of(&headers[1].1);
    assert_eq!(first["htu"], "http://rs.test/mcp", "no query");
    assert_eq!(first["ath"], super::super::dpop::ath("T"));
    let (_, second) = claims_of(&f.request_headers("POST", MCP, 1_000)[1].1);
    assert_ne!(first["jti"], second["jti"], "fresh per request");
    // The resource server's nonce challenge: the same token at once, the nonce in the next proof.
    let nonce_challenge = r#"DPoP error="use_dpop_nonce", resource_metadata="http://rs.test/x""#;
    assert_eq!(
        f.challenge_with_nonce(401, Some(nonce_challenge), Some("rs1"), 1_000),
        Action::Ready("T".into())
    );
    let (_, third) = claims_of(&f.request_headers("POST", MCP, 1_000)[1].1);
    assert_eq!(third["nonce"], "rs1");
    // Without DPoP the token is a Bearer one.
    let mut plain = flow();
    plain.set_tokens(
        AS,
        super::super::Tokens {
            access_token: "B".into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            dpop: false,
        },
    );
    assert_eq!(
        plain.request_headers("GET", MCP, 0),
        vec![("authorization", "Bearer B".to_owned())]
    );
}

#[test]
fn a_web_client_registers_as_web() {
    let mut config = OAuthConfig::authorization_code(MCP, "https://app.test/callback.html");
    config.application_type = ApplicationType::Web;
    let mut flow = AuthFlow::new(config);
    let _prm = fetch(flow.challenge(401, Some(CHALLENGE), 1_000));
    let _as = fetch(answer(&mut flow, 200, &prm()));
    let register = fetch(answer(&mut flow, 200, &as_metadata()));
    let body: Value = serde_json::from_slice(&register.body).unwrap();
    assert_eq!(body["application_type"], "web");
    assert_eq!(
        body["redirect_uris"],
        json!(["https://app.test/callback.html"])
    );
}

#[test]
fn a_refresh_is_due_shortly_before_expiry_with_a_refresh_token_only() {
    let tokens = |refresh: Option<&str>, expires_at: Option<u64>| super::super::Tokens {
        access_token: "T".into(),
        refresh_token: refresh.map(str::to_owned),
        expires_at,
        scope: None,
        dpop: false,
    };
    let mut f = flow();
    assert!(!f.refresh_due(0), "no tokens");
    f.set_tokens(AS, tokens(Some("R"), Some(1_000)));
    assert!(!f.refresh_due(1_000 - super::EXPIRY_MARGIN_SECS - 1));
    assert!(f.refresh_due(1_000 - super::EXPIRY_MARGIN_SECS));
    assert!(f.refresh_due(5_000), "expired");
    f.set_tokens(AS, tokens(None, Some(1_000)));
    assert!(!f.refresh_due(5_000), "nothing to refresh with");
    f.set_tokens(AS, tokens(Some("R"), None));
    assert!(!f.refresh_due(5_000), "no expiry said");
}

/// An authorization server whose metadata names an endpoint that is not https (nor loopback
/// http, nor on the MCP server's origin) — `javascript:`, `data:`, plain http elsewhere — is
/// refused before anything is opened or sent there; a `resource` that is a bare scheme names
/// no server.
#[test]
fn endpoints_a_browser_or_a_request_would_reach_must_be_https() {
    for (member, url) in [
        (
            "authorization_endpoint",
            "javascript:alert(document.domain)//",
        ),
        ("authorization_endpoint", "data:text/html,x"),
        ("token_endpoint", "http://as.example/token"),
        ("registration_endpoint", "file:///tmp/r"),
    ] {
        let mut flow = flow();
        fetch(flow.challenge(401, Some(CHALLENGE), 1_000));
        fetch(answer(&mut flow, 200, &prm()));
        let mut metadata = as_metadata();
        metadata[member] = json!(url);
        match answer(&mut flow, 200, &metadata) {
            Action::Failed(OAuthError::Unsupported { reason, .. }) => {
                assert!(
                    reason.contains(member) && reason.contains("https"),
                    "{reason}"
                );
            }
            other => panic!("{member} {url}: {other:?}"),
        }
    }
    let mut flow = flow();
    fetch(flow.challenge(401, Some(CHALLENGE), 1_000));
    let bare = json!({ "resource": "http:", "authorization_servers": [AS] });
    assert!(matches!(answer(&mut flow, 200, &bare), Action::Failed(_)));
}
