//! The authorization machine: what an MCP client does between a `401` / `403` and a token,
//! with no I/O ([MCP authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)).
//!
//! The host feeds it the challenge ([`AuthFlow::challenge`]) and gets [`Action`]s back: perform
//! an HTTP request and feed its answer to [`AuthFlow::fetched`] (or [`AuthFlow::fetch_failed`]),
//! send the user to the authorization server and feed the redirect to
//! [`AuthFlow::redirected`], until [`Action::Ready`] (a token) or [`Action::Failed`].
//!
//! The rules are listed on [`AuthFlow`].

use std::collections::VecDeque;

use serde_json::Value;

use super::{
    protected_resource_metadata_urls, query_params, scope_set, union_scopes, Action,
    BearerChallenge, Grant, OAuthConfig, OAuthError, OAuthRequest, StoredCredentials, Tokens,
};

mod discovery;
mod grant;

/// At most this many authorization rounds within [`ROUND_WINDOW_SECS`]; one more fails with
/// [`OAuthError::Loop`].
pub const MAX_ROUNDS: usize = 3;
/// The window of [`MAX_ROUNDS`], in seconds.
pub const ROUND_WINDOW_SECS: u64 = 60;
/// A token is treated as expired this many seconds before its `expires_in` runs out.
pub const EXPIRY_MARGIN_SECS: u64 = 30;

/// Endpoints and rules read from the authorization server metadata.
#[derive(Clone, Debug)]
struct Server {
    /// The issuer identifier it was found by (what clients and tokens are bound to).
    asked: String,
    /// The issuer its metadata names (what `iss` is compared with).
    issuer: String,
    authorization_endpoint: Option<String>,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    /// The metadata (`Value::Null` under the 2025-03-26 default endpoints).
    metadata: Value,
}

#[derive(Clone)]
struct Client {
    id: String,
    secret: Option<String>,
    method: AuthMethod,
    signer: Option<std::sync::Arc<dyn super::ClientAssertionSigner>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AuthMethod {
    Basic,
    Post,
    PrivateKeyJwt,
    None,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
            AuthMethod::None => "none",
        }
    }
}

/// What an authorization round is for.
#[derive(Clone, Debug, Default)]
struct Round {
    /// The challenge's scope (with what was granted, for a step-up).
    scope: Option<String>,
    step_up: bool,
    /// Protected resource metadata URLs left to try.
    prm_urls: VecDeque<String>,
    prm_errors: Vec<String>,
    resource: Option<String>,
    scopes_supported: Value,
    /// The 2025-03-26 fallback: no protected resource metadata.
    legacy: bool,
    issuer: String,
    as_urls: VecDeque<String>,
    as_errors: Vec<String>,
    /// The scope asked for in this round.
    asked: Option<String>,
}

enum Phase {
    Idle,
    Prm(String),
    AsMetadata(String),
    Register,
    Redirect {
        state: String,
        verifier: String,
    },
    Token {
        refresh: bool,
        /// The form as first sent, to send again with a DPoP nonce (RFC 9449 §8), once.
        form: Vec<(&'static str, String)>,
        retried: bool,
    },
    /// Enterprise-managed authorization: the identity provider's token exchange.
    Exchange,
}

/// The client's authorization state for one MCP server: discovery, registration, the
/// authorization and token requests, and the tokens.
///
/// | step | rule |
/// |---|---|
/// | protected resource metadata | the challenge's `resource_metadata`, then the path-suffixed and root well-known URLs (RFC 9728 §3.1); its `resource` must name the server ([`resource_matches`](super::resource_matches)) |
/// | none found | the 2025-03-26 fallback: the server's origin is the authorization server |
/// | authorization server metadata | RFC 8414 then OpenID Connect Discovery URLs ([`authorization_server_metadata_urls`](super::authorization_server_metadata_urls)); its `issuer` must equal the one asked for, by simple string comparison (RFC 8414 §3.3); under the 2025-03-26 fallback, none found means `/authorize`, `/token`, `/register` at the origin |
/// | PKCE | S256 only; metadata that does not list it in `code_challenge_methods_supported` is refused |
/// | client identity | a pre-registered client, else a Client ID Metadata Document URL when the server supports them, else dynamic registration (RFC 7591, `application_type` `native` unless configured `web`); a client is bound to the issuer that knows it, and a new issuer in the metadata drops it and every token (SEP-2352) |
/// | scope | the challenge's (on `403 insufficient_scope` with what was granted before, SEP-2350), else the configured one, else `scopes_supported`; `offline_access` added when the authorization server lists it |
/// | authorization response | `state` must match; `iss` compared exactly with the issuer when present, and required when the metadata says `authorization_response_iss_parameter_supported` (RFC 9207) |
/// | token request | `resource` (RFC 8707) as in the authorization request; client authentication per the metadata (`client_secret_basic`, `client_secret_post`, `none`) |
/// | refresh | a `401` with a refresh token in hand first tries `grant_type=refresh_token`, then a new authorization |
/// | loops | a `403` for scopes already granted is not retried; more than [`MAX_ROUNDS`] authorizations within [`ROUND_WINDOW_SECS`] fail |
pub struct AuthFlow {
    config: OAuthConfig,
    phase: Phase,
    round: Round,
    server: Option<Server>,
    client: Option<(String, Client)>,
    tokens: Option<(String, Tokens)>,
    rounds: VecDeque<u64>,
    now: u64,
    /// The authorization server's and the resource server's last DPoP nonces.
    as_nonce: Option<String>,
    rs_nonce: Option<String>,
}

impl std::fmt::Debug for AuthFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthFlow")
            .field("server_url", &self.config.server_url)
            .field("issuer", &self.server.as_ref().map(|s| &s.issuer))
            .field("tokens", &self.tokens.as_ref().map(|t| &t.1))
            .finish_non_exhaustive()
    }
}

impl AuthFlow {
    /// A machine for `config`, with no tokens yet.
    pub fn new(config: OAuthConfig) -> Self {
        AuthFlow {
            config,
            phase: Phase::Idle,
            round: Round::default(),
            server: None,
            client: None,
            tokens: None,
            rounds: VecDeque::new(),
            now: 0,
            as_nonce: None,
            rs_nonce: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The access token to send now (`now`: seconds since the Unix epoch), unless none was
    /// obtained or it expired ([`EXPIRY_MARGIN_SECS`] early).
    pub fn current(&self, now: u64) -> Option<&str> {
        let (_, tokens) = self.tokens.as_ref()?;
        let live = tokens
            .expires_at
            .is_none_or(|at| now + EXPIRY_MARGIN_SECS < at);
        live.then_some(tokens.access_token.as_str())
    }

    /// Whether the token in hand is about to expire (within [`EXPIRY_MARGIN_SECS`] of `now`, or
    /// past it) and a refresh token could replace it: a host may then begin a round at once
    /// ([`AuthFlow::challenge`] with no challenge: it refreshes before any sign-in).
    pub fn refresh_due(&self, now: u64) -> bool {
        self.tokens.as_ref().is_some_and(|(_, t)| {
            t.refresh_token.is_some()
                && t.expires_at
                    .is_some_and(|at| now + EXPIRY_MARGIN_SECS >= at)
        })
    }

    /// The headers that carry the current token on a `method` request to `url` at `now`:
    /// `Authorization: Bearer …`, or for a DPoP-bound token `Authorization: DPoP …` and a fresh
    /// `DPoP` proof (with `ath`, and the server's last nonce); none without a live token.
    pub fn request_headers(
        &self,
        method: &str,
        url: &str,
        now: u64,
    ) -> Vec<(&'static str, String)> {
        let Some(token) = self.current(now) else {
            return Vec::new();
        };
        let bound = self.tokens.as_ref().is_some_and(|(_, t)| t.dpop);
        match (bound, self.config.dpop.as_deref()) {
            (true, Some(signer)) => {
                match super::dpop::proof(
                    signer,
                    method,
                    url,
                    Some(token),
                    self.rs_nonce.as_deref(),
                    now,
                ) {
                    Ok(proof) => vec![("authorization", format!("DPoP {token}")), ("dpop", proof)],
                    Err(e) => {
                        tracing::warn!(error = %e, "oauth: no DPoP proof");
                        Vec::new()
                    }
                }
            }
            _ => vec![("authorization", format!("Bearer {token}"))],
        }
    }

    /// The tokens in hand and the issuer that issued them (for a token store).
    pub fn tokens(&self) -> Option<(&str, &Tokens)> {
        self.tokens.as_ref().map(|(i, t)| (i.as_str(), t))
    }

    /// Restore tokens issued by `issuer` (from a token store).
    pub fn set_tokens(&mut self, issuer: impl Into<String>, tokens: Tokens) {
        self.tokens = Some((issuer.into(), tokens));
    }

    /// What a token store keeps: the issuer, the client and the tokens (`None` before any).
    pub fn credentials(&self) -> Option<StoredCredentials> {
        let issuer = self
            .tokens
            .as_ref()
            .map(|(i, _)| i)
            .or(self.client.as_ref().map(|(i, _)| i))?
            .clone();
        let client = self
            .client
            .as_ref()
            .filter(|(i, _)| *i == issuer)
            .map(|(_, c)| c);
        Some(StoredCredentials {
            client_id: client.map(|c| c.id.clone()),
            client_secret: client.and_then(|c| c.secret.clone()),
            token_endpoint_auth_method: client.map(|c| c.method.name().to_owned()),
            tokens: self
                .tokens
                .as_ref()
                .filter(|(i, _)| *i == issuer)
                .map(|(_, t)| t.clone()),
            issuer,
        })
    }

    /// Restore what a token store kept (see [`AuthFlow::credentials`]).
    pub fn restore(&mut self, credentials: StoredCredentials) {
        if let Some(id) = credentials.client_id {
            let method = match credentials.token_endpoint_auth_method.as_deref() {
                Some("client_secret_basic") => AuthMethod::Basic,
                Some("client_secret_post") => AuthMethod::Post,
                Some("private_key_jwt") => AuthMethod::PrivateKeyJwt,
                _ => AuthMethod::None,
            };
            let signer = self
                .config
                .client
                .as_ref()
                .filter(|c| c.client_id == id)
                .and_then(|c| c.assertion_signer.clone());
            let client = Client {
                id,
                secret: credentials.client_secret,
                method,
                signer,
            };
            self.client = Some((credentials.issuer.clone(), client));
        }
        self.tokens = credentials.tokens.map(|t| (credentials.issuer, t));
    }

    /// Forget every token and the registered client (a logout).
    pub fn forget(&mut self) {
        self.tokens = None;
        self.client = None;
    }

    /// The MCP server answered `status` (`401` or `403`) with `www_authenticate`: begin a
    /// round. `now` is seconds since the Unix epoch.
    pub fn challenge(&mut self, status: u16, www_authenticate: Option<&str>, now: u64) -> Action {
        self.challenge_with_nonce(status, www_authenticate, None, now)
    }

    /// [`AuthFlow::challenge`] with the answer's `DPoP-Nonce` header: a `use_dpop_nonce`
    /// challenge with a live DPoP token is answered with that token at once (the next proof
    /// carries the nonce, RFC 9449 §9), without a round.
    pub fn challenge_with_nonce(
        &mut self,
        status: u16,
        www_authenticate: Option<&str>,
        dpop_nonce: Option<&str>,
        now: u64,
    ) -> Action {
        self.now = now;
        let bearer = www_authenticate
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        if let Some(nonce) = dpop_nonce {
            self.rs_nonce = Some(nonce.to_owned());
            if bearer.error.as_deref() == Some("use_dpop_nonce") {
                if let Some(token) = self.current(now).map(str::to_owned) {
                    return Action::Ready(token);
                }
            }
        }
        let granted = self.tokens.as_ref().and_then(|(_, t)| t.scope.clone());
        let step_up = status == 403 || bearer.error.as_deref() == Some("insufficient_scope");
        if step_up && self.tokens.is_some() {
            if let Some(wanted) = &bearer.scope {
                let held = scope_set(granted.as_deref());
                if wanted.split_whitespace().all(|s| held.contains(&s)) {
                    return self.fail(OAuthError::Loop(format!(
                        "the server refuses scope {wanted:?}, which was granted"
                    )));
                }
            }
        }
        while self
            .rounds
            .front()
            .is_some_and(|t| now.saturating_sub(*t) > ROUND_WINDOW_SECS)
        {
            self.rounds.pop_front();
        }
        if self.rounds.len() >= MAX_ROUNDS {
            return self.fail(OAuthError::Loop(format!(
                "{MAX_ROUNDS} authorizations within {ROUND_WINDOW_SECS} s"
            )));
        }
        self.rounds.push_back(now);
        let scope = if step_up {
            union_scopes(granted.as_deref(), bearer.scope.as_deref())
        } else {
            bearer.scope.clone()
        };
        let mut prm_urls: VecDeque<String> = bearer.resource_metadata.into_iter().collect();
        for url in protected_resource_metadata_urls(&self.config.server_url) {
            if !prm_urls.contains(&url) {
                prm_urls.push_back(url);
            }
        }
        self.round = Round {
            scope,
            step_up,
            prm_urls,
            ..Round::default()
        };
        self.next_prm()
    }

    /// The answer to the last [`Action::Fetch`]: its status and body.
    pub fn fetched(&mut self, status: u16, body: &[u8]) -> Action {
        self.fetched_with_nonce(status, None, body)
    }

    /// [`AuthFlow::fetched`] with the answer's `DPoP-Nonce` header (RFC 9449 §8), if any.
    pub fn fetched_with_nonce(
        &mut self,
        status: u16,
        dpop_nonce: Option<&str>,
        body: &[u8],
    ) -> Action {
        let doc = crate::wire::json_text::parse(body).ok();
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Prm(url) => match doc.filter(|d| status == 200 && d.is_object()) {
                Some(doc) => self.on_prm(doc),
                None => {
                    self.round.prm_errors.push(format!("{url}: HTTP {status}"));
                    self.next_prm()
                }
            },
            Phase::AsMetadata(url) => match doc.filter(|d| status == 200 && d.is_object()) {
                Some(doc) => self.on_as_metadata(url, doc),
                None => {
                    self.round.as_errors.push(format!("{url}: HTTP {status}"));
                    self.next_as()
                }
            },
            Phase::Register => self.on_registered(status, doc),
            Phase::Token {
                refresh,
                form,
                retried,
            } => {
                let challenged =
                    status == 400 && doc.as_ref().is_some_and(|d| d["error"] == "use_dpop_nonce");
                match dpop_nonce {
                    Some(nonce) if challenged && !retried => {
                        self.as_nonce = Some(nonce.to_owned());
                        self.token_request_again(form, refresh)
                    }
                    _ => self.on_token(status, doc, refresh),
                }
            }
            Phase::Exchange => self.on_exchanged(status, doc),
            Phase::Idle | Phase::Redirect { .. } => {
                self.fail(OAuthError::OutOfOrder("an HTTP answer"))
            }
        }
    }

    /// The last [`Action::Fetch`] got no answer (`detail`: what failed).
    pub fn fetch_failed(&mut self, detail: &str) -> Action {
        match std::mem::replace(&mut self.phase, Phase::Idle) {
            Phase::Prm(url) => {
                self.round.prm_errors.push(format!("{url}: {detail}"));
                self.next_prm()
            }
            Phase::AsMetadata(url) => {
                self.round.as_errors.push(format!("{url}: {detail}"));
                self.next_as()
            }
            phase @ (Phase::Register | Phase::Token { .. } | Phase::Exchange) => {
                let url = match (self.server.as_ref(), phase) {
                    (Some(s), Phase::Register) => {
                        s.registration_endpoint.clone().unwrap_or_default()
                    }
                    (_, Phase::Exchange) => match &self.config.grant {
                        super::Grant::EnterpriseManaged {
                            idp_token_endpoint, ..
                        } => idp_token_endpoint.clone(),
                        _ => String::new(),
                    },
                    (Some(s), _) => s.token_endpoint.clone(),
                    (None, _) => String::new(),
                };
                self.fail(OAuthError::Fetch {
                    url,
                    detail: detail.to_owned(),
                })
            }
            Phase::Idle | Phase::Redirect { .. } => {
                self.fail(OAuthError::OutOfOrder("an HTTP failure"))
            }
        }
    }

    /// The user came back: `callback_url` is the redirect URI as the authorization server
    /// sent it (its query holds `code`, `state`, and `iss` or `error`).
    pub fn redirected(&mut self, callback_url: &str) -> Action {
        let Phase::Redirect { state, verifier } = std::mem::replace(&mut self.phase, Phase::Idle)
        else {
            return self.fail(OAuthError::OutOfOrder("a redirect"));
        };
        let params = query_params(callback_url);
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if get("state") != Some(state.as_str()) {
            return self.fail(OAuthError::AuthorizationResponse(
                "the state does not match".into(),
            ));
        }
        let Some(server) = self.server.clone() else {
            return self.fail(OAuthError::OutOfOrder("a redirect"));
        };
        // RFC 9207 §2.4: a present `iss` is compared exactly; an advertised one is required.
        match get("iss") {
            Some(iss) if iss != server.issuer => {
                return self.fail(OAuthError::AuthorizationResponse(format!(
                    "iss {iss:?} is not the issuer {:?}",
                    server.issuer
                )));
            }
            None if server.metadata["authorization_response_iss_parameter_supported"] == true => {
                return self.fail(OAuthError::AuthorizationResponse(
                    "the issuer said it sends iss, and none came".into(),
                ));
            }
            _ => {}
        }
        if let Some(error) = get("error") {
            let description = get("error_description").unwrap_or_default();
            return self.fail(OAuthError::AuthorizationResponse(
                if description.is_empty() {
                    error.to_owned()
                } else {
                    format!("{error} ({description})")
                },
            ));
        }
        let Some(code) = get("code").filter(|c| !c.is_empty()) else {
            return self.fail(OAuthError::AuthorizationResponse("no code".into()));
        };
        let Grant::AuthorizationCode { redirect_uri } = &self.config.grant else {
            return self.fail(OAuthError::OutOfOrder("a redirect"));
        };
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", redirect_uri.clone()),
            ("code_verifier", verifier),
        ];
        if let Some(resource) = &self.round.resource {
            form.push(("resource", resource.clone()));
        }
        self.token_request(form, false)
    }

    fn fail(&mut self, error: OAuthError) -> Action {
        self.phase = Phase::Idle;
        Action::Failed(error)
    }
}

fn get(url: String) -> OAuthRequest {
    OAuthRequest {
        method: "GET",
        url,
        headers: vec![("accept", "application/json".into())],
        body: Vec::new(),
    }
}

/// An endpoint's `error` and `error_description`, else its status.
fn endpoint_error(status: u16, doc: Option<&Value>) -> String {
    match doc.and_then(|d| d["error"].as_str()) {
        Some(error) => match doc.and_then(|d| d["error_description"].as_str()) {
            Some(description) => format!("{error} ({description})"),
            None => error.to_owned(),
        },
        None => format!("HTTP {status}"),
    }
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
