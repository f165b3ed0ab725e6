use futures::executor::block_on;
use serde_json::{json, Value};

use super::*;

/// Accepts `good` (scope `mcp:tools`) and `weak` (no scope); `down` cannot be decided.
struct Fixed;

impl TokenVerifier for Fixed {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<Identity, TokenError>> {
        let outcome = match token {
            "good" => Ok(Identity {
                subject: Some("ada".into()),
                scopes: vec!["mcp:tools".into()],
                ..Identity::default()
            }),
            "weak" => Ok(Identity::default()),
            "down" => Err(TokenError::Unavailable("issuer unreachable".into())),
            _ => Err(TokenError::Invalid("unknown".into())),
        };
        Box::pin(async move { outcome })
    }
}

fn gate(required: &[&str]) -> Authorizer {
    Authorizer::new(
        ResourceMetadata {
            resource: "https://mcp.example.com/mcp".into(),
            authorization_servers: vec!["https://auth.example.com".into()],
            scopes_supported: vec!["mcp:tools".into()],
            required_scopes: required.iter().map(|s| (*s).to_owned()).collect(),
        },
        Fixed,
    )
}

fn post(authorization: Option<&str>) -> HttpRequest {
    let request = HttpRequest::new("POST", "/mcp");
    match authorization {
        Some(value) => request.header("Authorization", value),
        None => request,
    }
}

/// `(status, WWW-Authenticate, error message)` of a refusal.
fn refused(gate: &Authorizer, request: HttpRequest) -> (u16, String, String) {
    match block_on(gate.check(&request)) {
        Gate::Pass(identity) => panic!("passed as {identity:?}"),
        Gate::Answer(answer) => {
            let body: Value = match &answer.body {
                AnswerBody::Json(text) => serde_json::from_str(text).unwrap(),
                other => panic!("{other:?}"),
            };
            let message = body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (
                answer.status,
                answer
                    .header("www-authenticate")
                    .unwrap_or_default()
                    .to_owned(),
                message,
            )
        }
    }
}

#[test]
fn a_request_without_a_token_gets_401_naming_the_metadata() {
    let (status, challenge, _) = refused(&gate(&[]), post(None));
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#
    );
    let (_, challenge, _) = refused(&gate(&["mcp:tools"]), post(None));
    assert!(challenge.ends_with(r#", scope="mcp:tools""#), "{challenge}");
}

#[test]
fn malformed_and_refused_tokens_get_401_without_echoing_the_token() {
    // No credentials sent (an empty field, another scheme): no error code (RFC 6750 §3.1).
    for header in ["", "Basic dXNlcjpwdw==", "Negotiate"] {
        let (status, challenge, _) = refused(&gate(&[]), post(Some(header)));
        assert_eq!(status, 401, "{header}");
        assert!(!challenge.contains("error="), "{header:?}: {challenge}");
    }
    for (header, error) in [
        ("Bearer", "invalid_request"),
        ("Bearer two words", "invalid_request"),
        ("Bearer tok\u{e9}n", "invalid_request"),
        ("Bearer forged-secret", "invalid_token"),
    ] {
        let (status, challenge, message) = refused(&gate(&[]), post(Some(header)));
        assert_eq!(status, 401, "{header}");
        assert!(
            challenge.contains(&format!("error=\"{error}\"")),
            "{header}: {challenge}"
        );
        assert!(
            !message.contains("secret") && !challenge.contains("secret"),
            "{message}"
        );
    }
    let twice = post(Some("Bearer good")).header("Authorization", "Bearer good");
    assert_eq!(refused(&gate(&[]), twice).0, 401);
}

#[test]
fn a_valid_token_passes_with_its_identity_and_a_missing_scope_is_403() {
    match block_on(gate(&["mcp:tools"]).check(&post(Some("bearer good")))) {
        Gate::Pass(identity) => assert_eq!(identity.subject.as_deref(), Some("ada")),
        Gate::Answer(answer) => panic!("{answer:?}"),
    }
    let (status, challenge, _) = refused(&gate(&["mcp:tools"]), post(Some("Bearer weak")));
    assert_eq!(status, 403);
    assert!(
        challenge.contains(r#"error="insufficient_scope""#)
            && challenge.contains(r#"scope="mcp:tools""#),
        "{challenge}"
    );
    let (status, _, _) = refused(&gate(&[]), post(Some("Bearer down")));
    assert_eq!(status, 503);
}

#[test]
fn the_metadata_is_served_at_both_well_known_paths() {
    let gate = gate(&[]);
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        match block_on(gate.check(&HttpRequest::new("GET", path))) {
            Gate::Answer(answer) => {
                assert_eq!(answer.status, 200, "{path}");
                let AnswerBody::Json(text) = &answer.body else {
                    panic!()
                };
                let doc: Value = serde_json::from_str(text).unwrap();
                assert_eq!(
                    doc,
                    json!({
                        "resource": "https://mcp.example.com/mcp",
                        "authorization_servers": ["https://auth.example.com"],
                        "bearer_methods_supported": ["header"],
                        "scopes_supported": ["mcp:tools"],
                    })
                );
            }
            Gate::Pass(_) => panic!("{path} passed"),
        }
    }
    assert!(!gate.is_metadata_path("/.well-known/oauth-protected-resource/other"));
    match block_on(gate.check(&HttpRequest::new(
        "POST",
        "/.well-known/oauth-protected-resource",
    ))) {
        Gate::Answer(answer) => assert_eq!(answer.status, 405),
        Gate::Pass(_) => panic!(),
    }
}

#[test]
fn a_tool_may_require_its_own_scopes() {
    use crate::http::route::{Route, RouteOptions};
    use crate::{McpServer, ServerOptions, Tool};
    let server = McpServer::new(ServerOptions::new("t", "1"));
    let object = json!({"type": "object"});
    server.tools().add(Tool::from_json(
        "echo",
        object.clone(),
        |_a: serde_json::Map<String, Value>, _c| async { Ok::<_, String>("echoed") },
    ));
    server.tools().add(
        Tool::from_json(
            "admin",
            object,
            |_a: serde_json::Map<String, Value>, _c| async { Ok::<_, String>("done") },
        )
        .with_required_scopes(["mcp:admin"]),
    );
    let spawn: crate::http::route::Spawn = Arc::new(futures::executor::block_on);
    let route =
        Route::new(server.clone(), RouteOptions::default(), spawn).with_auth(gate(&["mcp:tools"]));
    let call = |tool: &str| {
        let mut request = post(Some("Bearer good"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#));
        block_on(async {
            match route.authorize(&mut request).await {
                Some(answer) => answer,
                None => route.respond(request).await,
            }
        })
    };
    assert_eq!(call("echo").status, 200);
    let refused = call("admin");
    assert_eq!(refused.status, 403);
    let challenge = refused.header("www-authenticate").unwrap();
    assert!(
        challenge.contains(r#"error="insufficient_scope""#)
            && challenge.contains(r#"scope="mcp:tools mcp:admin""#),
        "{challenge}"
    );
    // Without HTTP (an identity on the context), the dispatch refuses it too.
    let ctx =
        crate::server::context::RequestContext::new().with_identity(Some(Arc::new(Identity {
            scopes: vec!["mcp:tools".into()],
            ..Identity::default()
        })));
    let message = crate::wire::jsonrpc::JsonRpcMessage::from_slice(
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin","arguments":{}}}"#,
    )
    .unwrap();
    let answer = block_on(server.dispatch_with(message, ctx)).unwrap();
    let error = answer.payload.unwrap_err();
    assert_eq!(error.code, crate::wire::jsonrpc::ErrorCode::INVALID_REQUEST);
    assert!(error.message.contains("mcp:admin"), "{}", error.message);
}
