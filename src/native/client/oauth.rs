//! OAuth 2.1 client credentials for machine clients ([`Authorizer`] of
//! [`HttpTransport`](super::http::HttpTransport)): on a `401` (or a `403 insufficient_scope`)
//! the protected resource metadata is found (the challenge's `resource_metadata`, else the
//! well-known URLs; its `resource` must name this server), then its authorization server's
//! metadata (issuer checked), and a token is asked for at its `token_endpoint` with
//! `grant_type=client_credentials`, the `resource` (RFC 8707) and the scope the challenge names
//! (else the configured one, else `scopes_supported`). The token is then sent with every
//! request until it expires.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::oauth::{
    protected_resource_metadata_urls, resource_matches, select_scope, AccessToken, BearerChallenge,
    TokenEndpointAuth,
};
use crate::http::exchange::{Authorizer, Challenge};
use crate::native::auth::{get_json, issuer_metadata, post_form};
use crate::BoxFuture;

/// A token is dropped this long before its `expires_in` runs out.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// What discovery found: where and how to ask for tokens.
#[derive(Clone)]
struct Found {
    token_endpoint: String,
    auth: TokenEndpointAuth,
    resource: String,
    scopes_supported: Value,
}

#[derive(Default)]
struct State {
    found: Option<Found>,
    token: Option<(String, Option<Instant>)>,
}

/// Client credentials toward one MCP server (cheap to clone).
#[derive(Clone)]
pub struct ClientCredentials {
    inner: Arc<Inner>,
}

struct Inner {
    server_url: String,
    client_id: String,
    client_secret: String,
    scope: Option<String>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("server_url", &self.inner.server_url)
            .field("client_id", &self.inner.client_id)
            .field("scope", &self.inner.scope)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// Tokens for the MCP server at `server_url`, as the confidential client `client_id` /
    /// `client_secret`, asking for `scope` unless a challenge names one.
    pub fn new(
        server_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        scope: Option<String>,
    ) -> Self {
        ClientCredentials {
            inner: Arc::new(Inner {
                server_url: server_url.into(),
                client_id: client_id.into(),
                client_secret: client_secret.into(),
                scope,
                state: Mutex::new(State::default()),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new token for `challenge`.
    ///
    /// # Errors
    /// What failed: discovery, a metadata that names another resource or issuer, the token
    /// endpoint's refusal. Never the secret or a token.
    pub async fn obtain(&self, challenge: &Challenge) -> Result<String, String> {
        let bearer = challenge
            .www_authenticate
            .as_deref()
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        let cached = self.state().found.clone();
        let found = match cached {
            Some(found) => found,
            None => {
                let found = self.discover(&bearer).await?;
                self.state().found = Some(found.clone());
                found
            }
        };
        let scope = select_scope(
            bearer.scope.as_deref(),
            self.inner.scope.as_deref(),
            &found.scopes_supported,
        );
        let i = &self.inner;
        let mut form = vec![
            ("grant_type", "client_credentials"),
            ("resource", found.resource.as_str()),
        ];
        if let Some(scope) = &scope {
            form.push(("scope", scope));
        }
        let answer = match found.auth {
            TokenEndpointAuth::ClientSecretBasic => {
                post_form(
                    &found.token_endpoint,
                    Some((&i.client_id, &i.client_secret)),
                    &form,
                )
                .await
            }
            TokenEndpointAuth::ClientSecretPost => {
                form.push(("client_id", &i.client_id));
                form.push(("client_secret", &i.client_secret));
                post_form(&found.token_endpoint, None, &form).await
            }
        };
        // A refused request answers 400 / 401 with an OAuth error body, which `post_form`
        // reports by status: the body's `error` is read when it came.
        let token =
            AccessToken::from_response(&answer.map_err(|e| {
                format!("the token request to {} failed: {e}", found.token_endpoint)
            })?)?;
        let expires = token
            .expires_in
            .map(|s| Instant::now() + Duration::from_secs(s).saturating_sub(EXPIRY_MARGIN));
        self.state().token = Some((token.token.clone(), expires));
        tracing::debug!(server = %i.server_url, scope = ?token.scope, "oauth: a token by client credentials");
        Ok(token.token)
    }

    /// Find the token endpoint: protected resource metadata, then its authorization server's.
    async fn discover(&self, bearer: &BearerChallenge) -> Result<Found, String> {
        let server = &self.inner.server_url;
        let mut urls: Vec<String> = bearer.resource_metadata.iter().cloned().collect();
        urls.extend(protected_resource_metadata_urls(server));
        let mut reasons = Vec::new();
        let mut metadata = None;
        for url in &urls {
            match get_json(url).await {
                Ok(doc) => {
                    metadata = Some(doc);
                    break;
                }
                Err(e) => reasons.push(format!("{url}: {e}")),
            }
        }
        let metadata = metadata.ok_or_else(|| {
            format!(
                "no protected resource metadata for {server} ({})",
                reasons.join("; ")
            )
        })?;
        let resource = metadata["resource"].as_str().unwrap_or_default().to_owned();
        if !resource_matches(&resource, server) {
            return Err(format!(
                "the protected resource metadata names resource {resource:?}, not {server}"
            ));
        }
        let issuer = metadata["authorization_servers"][0]
            .as_str()
            .ok_or("the protected resource metadata names no authorization server")?;
        let issuer_doc = issuer_metadata(issuer).await.map_err(|e| e.to_string())?;
        let token_endpoint = issuer_doc["token_endpoint"]
            .as_str()
            .ok_or_else(|| format!("{issuer} has no token_endpoint"))?
            .to_owned();
        if let Some(grants) = issuer_doc["grant_types_supported"].as_array() {
            if !grants.iter().any(|g| g == "client_credentials") {
                return Err(format!(
                    "{issuer} does not support the client_credentials grant"
                ));
            }
        }
        let auth = TokenEndpointAuth::choose(&issuer_doc).ok_or_else(|| {
            format!("{issuer} accepts neither client_secret_basic nor client_secret_post")
        })?;
        Ok(Found {
            token_endpoint,
            auth,
            resource,
            scopes_supported: metadata["scopes_supported"].clone(),
        })
    }
}

impl Authorizer for ClientCredentials {
    fn authorize(&self, challenge: &Challenge) -> BoxFuture<'_, Option<String>> {
        let challenge = challenge.clone();
        Box::pin(async move {
            match self.obtain(&challenge).await {
                Ok(token) => Some(token),
                Err(e) => {
                    tracing::warn!(error = %e, "oauth: no token");
                    None
                }
            }
        })
    }

    fn current(&self) -> Option<String> {
        let state = self.state();
        let (token, expires) = state.token.as_ref()?;
        expires
            .is_none_or(|at| Instant::now() < at)
            .then(|| token.clone())
    }
}
