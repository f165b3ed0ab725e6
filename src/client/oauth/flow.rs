//! The authorization machine: what an MCP client does between a `401` / `403` and a token,
//! with no I/O ([MCP authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)).
//!
//! The host feeds it the challenge ([`AuthFlow::challenge`]) and gets [`Action`]s back: perform
//! an HTTP request and feed its answer to [`AuthFlow::fetched`] (or [`AuthFlow::fetch_failed`]),
//! send the user to the authorization server and feed the redirect to
//! [`AuthFlow::redirected`], until [`Action::Ready`] (a token) or [`Action::Failed`].
//!
//! | step | rule |
//! |---|---|
//! | protected resource metadata | the challenge's `resource_metadata`, then the path-suffixed and root well-known URLs (RFC 9728 §3.1); its `resource` must name the server ([`resource_matches`]) |
//! | none found | the 2025-03-26 fallback: the server's origin is the authorization server |
//! | authorization server metadata | RFC 8414 then OpenID Connect Discovery URLs ([`authorization_server_metadata_urls`]); its `issuer` must equal the one asked for, by simple string comparison (RFC 8414 §3.3); under the 2025-03-26 fallback, none found means `/authorize`, `/token`, `/register` at the origin |
//! | PKCE | S256 only; metadata that does not list it in `code_challenge_methods_supported` is refused |
//! | client identity | a pre-registered client, else a Client ID Metadata Document URL when the server supports them, else dynamic registration (RFC 7591, `application_type` `native`); a client is bound to the issuer that knows it, and a new issuer in the metadata drops it and every token (SEP-2352) |
//! | scope | the challenge's (on `403 insufficient_scope` with what was granted before, SEP-2350), else the configured one, else `scopes_supported`; `offline_access` added when the authorization server lists it |
//! | authorization response | `state` must match; `iss` compared exactly with the issuer when present, and required when the metadata says `authorization_response_iss_parameter_supported` (RFC 9207) |
//! | token request | `resource` (RFC 8707) as in the authorization request; client authentication per the metadata (`client_secret_basic`, `client_secret_post`, `none`) |
//! | refresh | a `401` with a refresh token in hand first tries `grant_type=refresh_token`, then a new authorization |
//! | loops | a `403` for scopes already granted is not retried; more than [`MAX_ROUNDS`] authorizations within [`ROUND_WINDOW_SECS`] fail |

use std::collections::VecDeque;

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{
    authorization_server_metadata_urls, canonical_resource, encode_form, form_encode,
    protected_resource_metadata_urls, query_params, random_token, resource_matches, scope_set,
    select_scope, split, union_scopes, Action, BearerChallenge, Grant, OAuthConfig, OAuthError,
    OAuthRequest, StoredCredentials, Tokens,
};

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AuthMethod {
    Basic,
    Post,
    None,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
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
    Redirect { state: String, verifier: String },
    Token { refresh: bool },
}

/// The client's authorization state for one MCP server: discovery, registration, the
/// authorization and token requests, and the tokens. See the [module docs](self).
pub struct AuthFlow {
    config: OAuthConfig,
    phase: Phase,
    round: Round,
    server: Option<Server>,
    client: Option<(String, Client)>,
    tokens: Option<(String, Tokens)>,
    rounds: VecDeque<u64>,
    now: u64,
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
                _ => AuthMethod::None,
            };
            let client = Client {
                id,
                secret: credentials.client_secret,
                method,
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
        self.now = now;
        let bearer = www_authenticate
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
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
        let doc: Option<Value> = serde_json::from_slice(body).ok();
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
            Phase::Token { refresh } => self.on_token(status, doc, refresh),
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
            Phase::Register | Phase::Token { .. } => {
                let url = match self.server.as_ref() {
                    Some(s) => s.token_endpoint.clone(),
                    None => String::new(),
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

    fn next_prm(&mut self) -> Action {
        match self.round.prm_urls.pop_front() {
            Some(url) => {
                self.phase = Phase::Prm(url.clone());
                Action::Fetch(get(url))
            }
            None => {
                // The 2025-03-26 fallback: the MCP server's origin is its authorization server.
                self.round.legacy = true;
                let (origin, _) = split(&self.config.server_url);
                let origin = origin.to_owned();
                self.begin_as(origin)
            }
        }
    }

    fn on_prm(&mut self, doc: Value) -> Action {
        let resource = doc["resource"].as_str().unwrap_or_default().to_owned();
        if !resource_matches(&resource, &self.config.server_url) {
            return self.fail(OAuthError::ResourceMismatch {
                resource,
                server: self.config.server_url.clone(),
            });
        }
        let Some(issuer) = doc["authorization_servers"][0].as_str().map(str::to_owned) else {
            return self.fail(OAuthError::Discovery {
                server: self.config.server_url.clone(),
                detail: "the protected resource metadata names no authorization server".into(),
            });
        };
        self.round.resource = Some(resource);
        self.round.scopes_supported = doc["scopes_supported"].clone();
        self.begin_as(issuer)
    }

    fn begin_as(&mut self, issuer: String) -> Action {
        // SEP-2352: a client and tokens are bound to their issuer.
        if self.client.as_ref().is_some_and(|(i, _)| *i != issuer)
            || self.tokens.as_ref().is_some_and(|(i, _)| *i != issuer)
        {
            self.client = None;
            self.tokens = None;
        }
        self.round.issuer = issuer.clone();
        if self.server.as_ref().is_some_and(|s| s.asked == issuer) {
            return self.proceed();
        }
        self.server = None;
        self.round.as_urls = authorization_server_metadata_urls(&issuer).into();
        self.next_as()
    }

    fn next_as(&mut self) -> Action {
        match self.round.as_urls.pop_front() {
            Some(url) => {
                self.phase = Phase::AsMetadata(url.clone());
                Action::Fetch(get(url))
            }
            None if self.round.legacy => {
                let origin = self.round.issuer.trim_end_matches('/').to_owned();
                self.server = Some(Server {
                    asked: self.round.issuer.clone(),
                    issuer: origin.clone(),
                    authorization_endpoint: Some(format!("{origin}/authorize")),
                    token_endpoint: format!("{origin}/token"),
                    registration_endpoint: Some(format!("{origin}/register")),
                    metadata: Value::Null,
                });
                self.proceed()
            }
            None => {
                let detail = std::mem::take(&mut self.round.as_errors).join("; ");
                self.fail(OAuthError::Discovery {
                    server: self.config.server_url.clone(),
                    detail: format!("no metadata for {}: {detail}", self.round.issuer),
                })
            }
        }
    }

    fn on_as_metadata(&mut self, url: String, doc: Value) -> Action {
        let mut issuer = self.round.issuer.clone();
        let found = doc["issuer"].as_str().unwrap_or_default();
        // Under the 2025-03-26 fallback the server's origin is the authorization base URL, and
        // servers of that revision name an issuer with a path on it: the same origin vouches.
        let asked = issuer.clone();
        if self.round.legacy && found != issuer && split(found).0 == issuer {
            issuer = found.to_owned();
        }
        if found != issuer {
            return self.fail(OAuthError::IssuerMismatch {
                url,
                expected: issuer,
                found: found.to_owned(),
            });
        }
        let unsupported = |reason: &str| OAuthError::Unsupported {
            issuer: issuer.clone(),
            reason: reason.to_owned(),
        };
        let Some(token_endpoint) = doc["token_endpoint"].as_str().map(str::to_owned) else {
            return self.fail(unsupported("its metadata has no token_endpoint"));
        };
        let grant = match self.config.grant {
            Grant::AuthorizationCode { .. } => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
        };
        if let Some(grants) = doc["grant_types_supported"].as_array() {
            if !grants.iter().any(|g| g == grant) {
                return self.fail(unsupported(&format!(
                    "it does not support the {grant} grant"
                )));
            }
        }
        if grant == "authorization_code" {
            let s256 = doc["code_challenge_methods_supported"]
                .as_array()
                .is_some_and(|m| m.iter().any(|v| v == "S256"));
            if !s256 {
                return self.fail(unsupported("its metadata does not list PKCE S256"));
            }
            if doc["authorization_endpoint"].as_str().is_none() {
                return self.fail(unsupported("its metadata has no authorization_endpoint"));
            }
        }
        self.server = Some(Server {
            asked,
            issuer,
            authorization_endpoint: doc["authorization_endpoint"].as_str().map(str::to_owned),
            token_endpoint,
            registration_endpoint: doc["registration_endpoint"].as_str().map(str::to_owned),
            metadata: doc,
        });
        self.proceed()
    }

    /// Discovery is done: refresh, identify the client, or authorize.
    fn proceed(&mut self) -> Action {
        let refresh = self
            .tokens
            .as_ref()
            .and_then(|(_, t)| t.refresh_token.clone())
            .filter(|_| !self.round.step_up && self.client.is_some());
        if let Some(refresh_token) = refresh {
            let mut form = vec![
                ("grant_type", "refresh_token".to_owned()),
                ("refresh_token", refresh_token),
            ];
            if let Some(resource) = &self.round.resource {
                form.push(("resource", resource.clone()));
            }
            return self.token_request(form, true);
        }
        self.identify()
    }

    fn identify(&mut self) -> Action {
        if self.client.is_some() {
            return self.authorize();
        }
        let server = self.server.clone().expect("discovery set the server");
        let supported = &server.metadata["token_endpoint_auth_methods_supported"];
        if let Some(pre) = &self.config.client {
            let method = match &pre.client_secret {
                None => AuthMethod::None,
                Some(_) => match super::TokenEndpointAuth::choose(&server.metadata) {
                    Some(super::TokenEndpointAuth::ClientSecretPost) => AuthMethod::Post,
                    Some(super::TokenEndpointAuth::ClientSecretBasic) => AuthMethod::Basic,
                    None => {
                        return self.fail(OAuthError::Unsupported {
                            issuer: server.issuer,
                            reason: "it accepts neither client_secret_basic nor client_secret_post"
                                .into(),
                        })
                    }
                },
            };
            let client = Client {
                id: pre.client_id.clone(),
                secret: pre.client_secret.clone(),
                method,
            };
            self.client = Some((server.asked, client));
            return self.authorize();
        }
        let Grant::AuthorizationCode { redirect_uri } = self.config.grant.clone() else {
            return self.fail(OAuthError::Unsupported {
                issuer: server.issuer,
                reason: "client credentials need a pre-registered client id and secret".into(),
            });
        };
        if let Some(url) = self
            .config
            .client_metadata_url
            .clone()
            .filter(|_| server.metadata["client_id_metadata_document_supported"] == true)
        {
            let client = Client {
                id: url,
                secret: None,
                method: AuthMethod::None,
            };
            self.client = Some((server.asked, client));
            return self.authorize();
        }
        let Some(endpoint) = server.registration_endpoint.clone() else {
            return self.fail(OAuthError::Unsupported {
                issuer: server.issuer,
                reason: "it offers no dynamic registration: pre-register a client id".into(),
            });
        };
        let lists = |m: &str| {
            supported
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == m))
        };
        let method = if supported.is_null() || lists("none") {
            "none"
        } else if lists("client_secret_basic") {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        // Refresh tokens are asked for where the server grants them (SEP-2207).
        let grants = &server.metadata["grant_types_supported"];
        let refresh = grants.is_null()
            || grants
                .as_array()
                .is_some_and(|a| a.iter().any(|g| g == "refresh_token"));
        let grant_types: &[&str] = if refresh {
            &["authorization_code", "refresh_token"]
        } else {
            &["authorization_code"]
        };
        let body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native",
        });
        self.phase = Phase::Register;
        Action::Fetch(OAuthRequest {
            method: "POST",
            url: endpoint,
            headers: vec![
                ("accept", "application/json".into()),
                ("content-type", "application/json".into()),
            ],
            body: body.to_string().into_bytes(),
        })
    }

    fn on_registered(&mut self, status: u16, doc: Option<Value>) -> Action {
        let doc = match doc {
            Some(doc) if (200..300).contains(&status) => doc,
            doc => {
                return self.fail(OAuthError::Endpoint {
                    endpoint: "the registration endpoint",
                    detail: endpoint_error(status, doc.as_ref()),
                })
            }
        };
        let Some(id) = doc["client_id"].as_str().filter(|s| !s.is_empty()) else {
            return self.fail(OAuthError::Endpoint {
                endpoint: "the registration endpoint",
                detail: "no client_id in its answer".into(),
            });
        };
        let secret = doc["client_secret"].as_str().map(str::to_owned);
        let server = self.server.as_ref().expect("discovery set the server");
        let method = match (doc["token_endpoint_auth_method"].as_str(), &secret) {
            (Some("none"), _) | (_, None) => AuthMethod::None,
            (Some("client_secret_post"), Some(_)) => AuthMethod::Post,
            (Some("client_secret_basic"), Some(_)) => AuthMethod::Basic,
            (_, Some(_)) => match super::TokenEndpointAuth::choose(&server.metadata) {
                Some(super::TokenEndpointAuth::ClientSecretPost) => AuthMethod::Post,
                _ => AuthMethod::Basic,
            },
        };
        let client = Client {
            id: id.to_owned(),
            secret,
            method,
        };
        self.client = Some((server.asked.clone(), client));
        self.authorize()
    }

    /// The scope to ask for in this round.
    fn scope(&self) -> Option<String> {
        let configured = self.config.scope.as_deref();
        let mut scope = select_scope(
            self.round.scope.as_deref(),
            configured,
            &self.round.scopes_supported,
        );
        // SEP-2207: ask for a refresh token where the authorization server offers one.
        let server = self.server.as_ref();
        let offline = server.is_some_and(|s| {
            s.metadata["scopes_supported"]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "offline_access"))
        });
        if offline && matches!(self.config.grant, Grant::AuthorizationCode { .. }) {
            scope = union_scopes(scope.as_deref(), Some("offline_access"));
        }
        scope
    }

    fn authorize(&mut self) -> Action {
        let scope = self.scope();
        self.round.asked = scope.clone();
        let Grant::AuthorizationCode { redirect_uri } = self.config.grant.clone() else {
            let mut form = vec![("grant_type", "client_credentials".to_owned())];
            if let Some(resource) = &self.round.resource {
                form.push(("resource", resource.clone()));
            }
            if let Some(scope) = scope {
                form.push(("scope", scope));
            }
            return self.token_request(form, false);
        };
        let (Some(server), Some((_, client))) = (self.server.as_ref(), self.client.as_ref()) else {
            return self.fail(OAuthError::OutOfOrder("an authorization"));
        };
        let (verifier, state) = match (random_token(), random_token()) {
            (Some(v), Some(s)) => (v, s),
            _ => {
                return self.fail(OAuthError::Fetch {
                    url: String::new(),
                    detail: "no randomness for PKCE".into(),
                })
            }
        };
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        let mut query = vec![
            ("response_type", "code".to_owned()),
            ("client_id", client.id.clone()),
            ("redirect_uri", redirect_uri),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256".to_owned()),
            ("state", state.clone()),
        ];
        if let Some(resource) = &self.round.resource {
            query.push(("resource", resource.clone()));
        } else {
            query.push(("resource", canonical_resource(&self.config.server_url)));
        }
        if let Some(scope) = scope {
            query.push(("scope", scope));
        }
        let endpoint = server.authorization_endpoint.clone().unwrap_or_default();
        let sep = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{sep}{}", encode_form(&query));
        self.phase = Phase::Redirect { state, verifier };
        Action::Authorize(url)
    }

    fn token_request(&mut self, mut form: Vec<(&'static str, String)>, refresh: bool) -> Action {
        let (Some(server), Some((_, client))) = (self.server.as_ref(), self.client.as_ref()) else {
            return self.fail(OAuthError::OutOfOrder("a token request"));
        };
        if self.round.resource.is_none() && !form.iter().any(|(k, _)| *k == "resource") {
            form.push(("resource", canonical_resource(&self.config.server_url)));
        }
        let mut headers = vec![
            ("accept", "application/json".to_owned()),
            (
                "content-type",
                "application/x-www-form-urlencoded".to_owned(),
            ),
        ];
        match (client.method, &client.secret) {
            (AuthMethod::Basic, Some(secret)) => {
                // RFC 6749 §2.3.1: form-encoded before the Basic encoding.
                let pair = format!("{}:{}", form_encode(&client.id), form_encode(secret));
                let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
                headers.push(("authorization", format!("Basic {b64}")));
            }
            (AuthMethod::Post, Some(secret)) => {
                form.push(("client_id", client.id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            _ => form.push(("client_id", client.id.clone())),
        }
        let url = server.token_endpoint.clone();
        self.phase = Phase::Token { refresh };
        Action::Fetch(OAuthRequest {
            method: "POST",
            url,
            headers,
            body: encode_form(&form).into_bytes(),
        })
    }

    fn on_token(&mut self, status: u16, doc: Option<Value>, refresh: bool) -> Action {
        let answer = match doc {
            Some(doc) if status == 200 => super::AccessToken::from_response(&doc).map(|t| (t, doc)),
            doc => Err(endpoint_error(status, doc.as_ref())),
        };
        let (token, doc) = match answer {
            Ok(answer) => answer,
            Err(_) if refresh => {
                // The refresh token is spent or revoked: authorize anew.
                if let Some((_, tokens)) = self.tokens.as_mut() {
                    tokens.refresh_token = None;
                }
                self.tokens = None;
                return self.identify();
            }
            Err(detail) => {
                return self.fail(OAuthError::Endpoint {
                    endpoint: "the token endpoint",
                    detail,
                })
            }
        };
        let old_refresh = self
            .tokens
            .as_ref()
            .and_then(|(_, t)| t.refresh_token.clone());
        let tokens = Tokens {
            access_token: token.token.clone(),
            refresh_token: doc["refresh_token"]
                .as_str()
                .map(str::to_owned)
                // RFC 6749 §6: a refresh answer without one keeps the old.
                .or(if refresh { old_refresh } else { None }),
            expires_at: token.expires_in.map(|s| self.now.saturating_add(s)),
            scope: token.scope.clone().or_else(|| self.round.asked.clone()),
        };
        let issuer = self.round.issuer.clone();
        self.tokens = Some((issuer, tokens));
        self.phase = Phase::Idle;
        Action::Ready(token.token)
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
