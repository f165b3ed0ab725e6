//! OAuth 2.1 toward a protected MCP server: [`OAuthClient`] is the [`Authorizer`] of
//! [`HttpTransport`](super::http::HttpTransport) that drives the core's
//! [`AuthFlow`] with hyper (discovery, registration, the
//! token requests) and a [`UserAgent`] (the sign-in: a browser on a loopback redirect,
//! [`LoopbackBrowser`], or an authorization server that approves without a user,
//! [`AutoApprove`]). The rules are the core's; this module only performs what it asks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Full;

use crate::client::oauth::{
    canonical_resource, Action, AuthFlow, OAuthConfig, OAuthRequest, TokenStore, Tokens,
};
use crate::http::exchange::{Authorizer, Challenge};
use crate::BoxFuture;

mod loopback;
mod store;

pub use loopback::LoopbackBrowser;
pub use store::FileTokenStore;

/// A `private_key_jwt` signer ([`ClientAssertionSigner`](crate::client::oauth::ClientAssertionSigner))
/// with a PEM private key: `ES256` / `ES384` (an EC key, PKCS#8) or `RS256` / `RS384` /
/// `RS512` / `PS256` (an RSA key).
pub struct PrivateKeyJwt {
    algorithm: jsonwebtoken::Algorithm,
    name: String,
    key: jsonwebtoken::EncodingKey,
}

impl std::fmt::Debug for PrivateKeyJwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKeyJwt")
            .field("algorithm", &self.name)
            .finish_non_exhaustive()
    }
}

impl PrivateKeyJwt {
    /// A signer for `algorithm` with the PEM key `pem`.
    ///
    /// # Errors
    /// An algorithm it does not sign with, or a key that does not suit it.
    pub fn from_pem(algorithm: &str, pem: &[u8]) -> Result<Self, String> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let parsed: Algorithm = algorithm
            .parse()
            .map_err(|_| format!("unknown algorithm {algorithm:?}"))?;
        let key = match parsed {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
            _ => {
                return Err(format!(
                    "{algorithm} is not an asymmetric signing algorithm"
                ))
            }
        }
        .map_err(|e| format!("the {algorithm} key: {e}"))?;
        Ok(PrivateKeyJwt {
            algorithm: parsed,
            name: algorithm.to_owned(),
            key,
        })
    }
}

impl crate::client::oauth::ClientAssertionSigner for PrivateKeyJwt {
    fn algorithm(&self) -> &str {
        &self.name
    }

    fn sign(&self, claims: &serde_json::Value) -> Result<String, String> {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(self.algorithm),
            claims,
            &self.key,
        )
        .map_err(|e| e.to_string())
    }
}

/// One request to an authorization server gets this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// An authorization server's answer is read up to this many bytes.
const MAX_ANSWER_BYTES: usize = 1 << 20;
pub use crate::client::oauth::SIGN_IN_TIMEOUT;

/// The sign-in: sends the user to an authorization URL and returns where the authorization
/// server sent them back (the redirect URI with its `code`, `state` and `iss`).
pub trait UserAgent: Send + Sync {
    /// The redirect URI this agent receives (the `redirect_uri` of the flow).
    fn redirect_uri(&self) -> String;
    /// Send the user to `url`; resolve with the redirect the authorization server made.
    fn sign_in<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>>;
}

/// A [`UserAgent`] for an authorization server that approves without a user (a test's, the
/// conformance suite's, a machine account's): it requests the authorization URL itself and
/// reads the redirect from the answer's `Location`.
#[derive(Clone, Debug)]
pub struct AutoApprove {
    redirect_uri: String,
}

impl AutoApprove {
    /// Ask to be redirected to `redirect_uri` (nothing listens there: the redirect is read,
    /// not followed).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        AutoApprove {
            redirect_uri: redirect_uri.into(),
        }
    }
}

impl UserAgent for AutoApprove {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn sign_in<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let request = OAuthRequest {
                method: "GET",
                url: url.to_owned(),
                headers: Vec::new(),
                body: Vec::new(),
            };
            let answer = perform(&request).await?;
            match answer.location {
                Some(location) if (300..400).contains(&answer.status) => Ok(location),
                _ => Err(format!(
                    "the authorization endpoint answered HTTP {} without a redirect",
                    answer.status
                )),
            }
        })
    }
}

/// An HTTP answer, as the machine needs it.
struct Answer {
    status: u16,
    location: Option<String>,
    dpop_nonce: Option<String>,
    body: Bytes,
}

/// Perform `request` once: redirects not followed, the body bounded, within
/// [`FETCH_TIMEOUT`].
async fn perform(request: &OAuthRequest) -> Result<Answer, String> {
    let uri: hyper::Uri = request
        .url
        .parse()
        .map_err(|e| format!("not a URL ({e})"))?;
    let mut builder = hyper::Request::builder().method(request.method).uri(uri);
    for (name, value) in &request.headers {
        builder = builder.header(*name, value);
    }
    let http_request = builder
        .body(Full::new(Bytes::from(request.body.clone())))
        .map_err(|e| e.to_string())?;
    let answer = super::http::fetch_bounded(http_request, MAX_ANSWER_BYTES, FETCH_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    let text = |name: &str| {
        (answer.headers.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Ok(Answer {
        status: answer.status.as_u16(),
        location: text("location"),
        dpop_nonce: text("dpop-nonce"),
        body: answer.body,
    })
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The OAuth client of one MCP server (cheap to clone): holds its tokens and the registered
/// client, and signs in again when the server asks.
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

struct Inner {
    flow: Mutex<AuthFlow>,
    /// One round at a time: concurrent challenges wait for the round in progress...
    round: tokio::sync::Mutex<()>,
    /// ...and take its token when it brought one (the count of rounds that did).
    rounds_done: std::sync::atomic::AtomicU64,
    agent: Option<Arc<dyn UserAgent>>,
    store: Option<Arc<dyn TokenStore>>,
    /// The store's key: the server's canonical resource URI.
    resource: String,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OAuthClient").field(&*self.flow()).finish()
    }
}

impl OAuthClient {
    /// The authorization code flow for `config` (its redirect URI is the agent's), signing in
    /// through `agent`.
    pub fn authorization_code(mut config: OAuthConfig, agent: Arc<dyn UserAgent>) -> Self {
        config.grant = crate::client::oauth::Grant::AuthorizationCode {
            redirect_uri: agent.redirect_uri(),
        };
        OAuthClient::with_flow(AuthFlow::new(config), Some(agent))
    }

    /// A client for `config` as it is (any [`Grant`](crate::client::oauth::Grant)); `agent`
    /// signs in where the grant needs a user (the authorization code grant: its redirect URI
    /// must be the agent's).
    pub fn new(config: OAuthConfig, agent: Option<Arc<dyn UserAgent>>) -> Self {
        OAuthClient::with_flow(AuthFlow::new(config), agent)
    }

    /// Client credentials toward the MCP server at `server_url`, as the confidential client
    /// `client_id` / `client_secret`, asking for `scope` unless a challenge names one.
    pub fn client_credentials(
        server_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        scope: Option<String>,
    ) -> Self {
        let mut config = OAuthConfig::client_credentials(server_url, client_id, client_secret);
        config.scope = scope;
        OAuthClient::with_flow(AuthFlow::new(config), None)
    }

    fn with_flow(flow: AuthFlow, agent: Option<Arc<dyn UserAgent>>) -> Self {
        let resource = canonical_resource(&flow.config().server_url);
        OAuthClient {
            inner: Arc::new(Inner {
                flow: Mutex::new(flow),
                round: tokio::sync::Mutex::new(()),
                rounds_done: std::sync::atomic::AtomicU64::new(0),
                agent,
                store: None,
                resource,
            }),
        }
    }

    /// Keep what is obtained in `store`, starting from what it holds for this server.
    /// (Call before sharing the client: a clone made earlier keeps no store.)
    pub fn with_store(self, store: Arc<dyn TokenStore>) -> Self {
        let config = self.flow().config().clone();
        let mut flow = std::mem::replace(&mut *self.flow(), AuthFlow::new(config));
        if let Some(kept) = store.load(&self.inner.resource) {
            flow.restore(kept);
        }
        OAuthClient {
            inner: Arc::new(Inner {
                flow: Mutex::new(flow),
                round: tokio::sync::Mutex::new(()),
                rounds_done: std::sync::atomic::AtomicU64::new(0),
                agent: self.inner.agent.clone(),
                store: Some(store),
                resource: self.inner.resource.clone(),
            }),
        }
    }

    /// Whether it holds a live token or one to refresh.
    pub fn signed_in(&self) -> bool {
        let flow = self.flow();
        flow.current(now()).is_some()
            || flow
                .tokens()
                .is_some_and(|(_, t)| t.refresh_token.is_some())
    }

    fn flow(&self) -> std::sync::MutexGuard<'_, AuthFlow> {
        self.inner.flow.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tokens in hand and their issuer.
    pub fn tokens(&self) -> Option<(String, Tokens)> {
        self.flow().tokens().map(|(i, t)| (i.to_owned(), t.clone()))
    }

    /// Restore tokens issued by `issuer` (from a token store).
    pub fn set_tokens(&self, issuer: &str, tokens: Tokens) {
        self.flow().set_tokens(issuer, tokens);
    }

    /// A token for `challenge`: one authorization round.
    ///
    /// # Errors
    /// Why none came ([`OAuthError`](crate::client::oauth::OAuthError)'s text: never a secret,
    /// a code or a token).
    pub async fn obtain(&self, challenge: &Challenge) -> Result<String, String> {
        use std::sync::atomic::Ordering;
        let seen = self.inner.rounds_done.load(Ordering::Acquire);
        let _round = self.inner.round.lock().await;
        if self.inner.rounds_done.load(Ordering::Acquire) != seen {
            // A round finished while this one waited: its token answers this challenge too
            // (a request sent before it was refused for the same reason).
            if let Some(token) = self.flow().current(now()) {
                return Ok(token.to_owned());
            }
        }
        let mut action = self.flow().challenge_with_nonce(
            challenge.status,
            challenge.www_authenticate.as_deref(),
            challenge.dpop_nonce.as_deref(),
            now(),
        );
        loop {
            action = match action {
                Action::Fetch(request) => {
                    tracing::debug!(request = ?request, "oauth: fetch");
                    match perform(&request).await {
                        Ok(answer) => self.flow().fetched_with_nonce(
                            answer.status,
                            answer.dpop_nonce.as_deref(),
                            &answer.body,
                        ),
                        Err(e) => self.flow().fetch_failed(&e),
                    }
                }
                Action::Authorize(url) => {
                    let Some(agent) = self.inner.agent.clone() else {
                        return Err("a sign-in is needed and this client has no user agent".into());
                    };
                    let redirect = tokio::time::timeout(SIGN_IN_TIMEOUT, agent.sign_in(&url))
                        .await
                        .map_err(|_| format!("no sign-in within {SIGN_IN_TIMEOUT:?}"))??;
                    self.flow().redirected(&redirect)
                }
                Action::Ready(token) => {
                    tracing::debug!("oauth: authorized");
                    self.inner.rounds_done.fetch_add(1, Ordering::Release);
                    if let Some(store) = &self.inner.store {
                        if let Some(kept) = self.flow().credentials() {
                            store.save(&self.inner.resource, &kept);
                        }
                    }
                    return Ok(token);
                }
                Action::Failed(e) => return Err(e.to_string()),
            };
        }
    }
}

impl Authorizer for OAuthClient {
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
        self.flow().current(now()).map(str::to_owned)
    }

    fn prepare(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.flow().refresh_due(now()) {
                return;
            }
            // A refresh before the token lapses: the same round a 401 would start (it
            // refreshes first); a failure leaves the 401 to ask again.
            let before = Challenge {
                status: 401,
                www_authenticate: None,
                dpop_nonce: None,
            };
            if let Err(e) = self.obtain(&before).await {
                tracing::debug!(error = %e, "oauth: no early refresh");
            }
        })
    }

    fn request_headers(&self, method: &str, url: &str) -> Vec<(String, String)> {
        self.flow()
            .request_headers(method, url, now())
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect()
    }
}

/// A DPoP key pair (P-256, `ES256`; RFC 9449), made fresh for this process: the
/// [`DpopSigner`](crate::client::oauth::dpop::DpopSigner) of a native client. Tokens bound
/// to it are useless to anyone who copies them.
pub struct DpopKey {
    key: p256::ecdsa::SigningKey,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("alg", &"ES256")
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new random key.
    ///
    /// # Errors
    /// No randomness from the operating system.
    pub fn generate() -> Result<Self, String> {
        loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
            // A scalar outside the curve's order (about 2^-128 of draws) is drawn again.
            if let Ok(key) = p256::ecdsa::SigningKey::from_bytes(&bytes.into()) {
                return Ok(DpopKey { key });
            }
        }
    }
}

impl crate::client::oauth::dpop::DpopSigner for DpopKey {
    fn algorithm(&self) -> &str {
        "ES256"
    }

    fn public_jwk(&self) -> serde_json::Value {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate =
            |c: Option<&p256::FieldBytes>| c.map(|c| b64.encode(c)).unwrap_or_default();
        serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": coordinate(point.x()),
            "y": coordinate(point.y()),
        })
    }

    fn sign(&self, signing_input: &[u8]) -> Result<Vec<u8>, String> {
        use p256::ecdsa::signature::Signer;
        let signature: p256::ecdsa::Signature = self.key.sign(signing_input);
        Ok(signature.to_bytes().to_vec())
    }
}
