//! After discovery: refresh, the client's identity, the authorization request and the token
//! requests (the later rows of the [flow's rules](super)).

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::super::{
    canonical_resource, encode_form, form_encode, random_token, select_scope, union_scopes,
    AccessToken, Action, Grant, OAuthError, OAuthRequest, TokenEndpointAuth, Tokens, JWT_BEARER,
};
use super::{endpoint_error, AuthFlow, AuthMethod, Client, Phase};

impl AuthFlow {
    /// Discovery is done: refresh, identify the client, or authorize.
    pub(super) fn proceed(&mut self) -> Action {
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

    pub(super) fn identify(&mut self) -> Action {
        if self.client.is_some() {
            return self.authorize();
        }
        let server = self.server.clone().expect("discovery set the server");
        let supported = &server.metadata["token_endpoint_auth_methods_supported"];
        if let Some(pre) = &self.config.client {
            let lists_jwt = supported
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "private_key_jwt"));
            let method = match &pre.client_secret {
                _ if pre.assertion_signer.is_some() && lists_jwt => AuthMethod::PrivateKeyJwt,
                None => AuthMethod::None,
                Some(_) => match TokenEndpointAuth::choose(&server.metadata) {
                    Some(TokenEndpointAuth::ClientSecretPost) => AuthMethod::Post,
                    Some(TokenEndpointAuth::ClientSecretBasic) => AuthMethod::Basic,
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
                signer: pre.assertion_signer.clone(),
            };
            self.client = Some((server.asked, client));
            return self.authorize();
        }
        let Grant::AuthorizationCode { redirect_uri } = self.config.grant.clone() else {
            return self.fail(OAuthError::Unsupported {
                issuer: server.issuer,
                reason: format!(
                    "the {} grant needs a pre-registered client id",
                    self.config.grant.grant_type()
                ),
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
                signer: None,
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
            "application_type": self.config.application_type.as_str(),
        });
        self.phase = Phase::Register;
        Action::Fetch(OAuthRequest {
            method: "POST",
            url: endpoint,
            headers: vec![
                ("accept", "application/json".into()),
                ("content-type", "application/json".into()),
            ],
            body: crate::wire::json_text::to_text(&body).into_bytes(),
        })
    }

    pub(super) fn on_registered(&mut self, status: u16, doc: Option<Value>) -> Action {
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
            (_, Some(_)) => match TokenEndpointAuth::choose(&server.metadata) {
                Some(TokenEndpointAuth::ClientSecretPost) => AuthMethod::Post,
                _ => AuthMethod::Basic,
            },
        };
        let client = Client {
            id: id.to_owned(),
            secret,
            method,
            signer: None,
        };
        self.client = Some((server.asked.clone(), client));
        self.authorize()
    }

    /// The scope to ask for in this round.
    pub(super) fn scope(&self) -> Option<String> {
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

    pub(super) fn authorize(&mut self) -> Action {
        let scope = self.scope();
        self.round.asked = scope.clone();
        let redirect_uri = match self.config.grant.clone() {
            Grant::AuthorizationCode { redirect_uri } => redirect_uri,
            Grant::ClientCredentials => {
                let form = vec![("grant_type", "client_credentials".to_owned())];
                return self.token_request(self.with_resource_and_scope(form, scope), false);
            }
            Grant::JwtBearer { assertion } => {
                let form = vec![
                    ("grant_type", JWT_BEARER.to_owned()),
                    ("assertion", assertion),
                ];
                return self.token_request(self.with_resource_and_scope(form, scope), false);
            }
            Grant::EnterpriseManaged {
                idp_token_endpoint,
                idp_client_id,
                idp_client_secret,
                id_token,
            } => {
                // SEP-990 §4: the ID-JAG names the authorization server (audience) and the MCP
                // server (resource).
                let Some(server) = self.server.as_ref() else {
                    return self.fail(OAuthError::OutOfOrder("an authorization"));
                };
                let mut form = vec![
                    ("grant_type", TOKEN_EXCHANGE.to_owned()),
                    ("requested_token_type", ID_JAG.to_owned()),
                    ("subject_token", id_token),
                    ("subject_token_type", ID_TOKEN.to_owned()),
                    ("audience", server.issuer.clone()),
                    ("client_id", idp_client_id),
                ];
                if let Some(secret) = idp_client_secret {
                    form.push(("client_secret", secret));
                }
                let mut form = self.with_resource_and_scope(form, scope);
                if !form.iter().any(|(k, _)| *k == "resource") {
                    form.push(("resource", canonical_resource(&self.config.server_url)));
                }
                self.phase = Phase::Exchange;
                return Action::Fetch(OAuthRequest {
                    method: "POST",
                    url: idp_token_endpoint,
                    headers: vec![
                        ("accept", "application/json".to_owned()),
                        (
                            "content-type",
                            "application/x-www-form-urlencoded".to_owned(),
                        ),
                    ],
                    body: encode_form(&form).into_bytes(),
                });
            }
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

    pub(super) fn token_request(
        &mut self,
        form: Vec<(&'static str, String)>,
        refresh: bool,
    ) -> Action {
        self.send_token_request(form, refresh, false)
    }

    /// The same token request once more (with the DPoP nonce just received).
    pub(super) fn token_request_again(
        &mut self,
        form: Vec<(&'static str, String)>,
        refresh: bool,
    ) -> Action {
        self.send_token_request(form, refresh, true)
    }

    /// Whether tokens are asked for bound to the DPoP key: one is configured and the
    /// authorization server lists its algorithm.
    pub(super) fn dpop_active(&self) -> bool {
        let (Some(signer), Some(server)) = (self.config.dpop.as_deref(), self.server.as_ref())
        else {
            return false;
        };
        server.metadata["dpop_signing_alg_values_supported"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == signer.algorithm()))
    }

    fn send_token_request(
        &mut self,
        first: Vec<(&'static str, String)>,
        refresh: bool,
        retried: bool,
    ) -> Action {
        let mut form = first.clone();
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
            (AuthMethod::PrivateKeyJwt, _) if client.signer.is_some() => {
                // RFC 7523 §3: iss and sub the client, aud the issuer, short-lived, unique.
                let claims = json!({
                    "iss": client.id,
                    "sub": client.id,
                    "aud": server.issuer,
                    "iat": self.now,
                    "exp": self.now + 60,
                    "jti": random_token().unwrap_or_default(),
                });
                let signer = client.signer.as_ref().expect("checked above");
                match signer.sign(&claims) {
                    Ok(assertion) => {
                        form.push(("client_id", client.id.clone()));
                        form.push(("client_assertion_type", CLIENT_ASSERTION_JWT.to_owned()));
                        form.push(("client_assertion", assertion));
                    }
                    Err(e) => {
                        return self.fail(OAuthError::Endpoint {
                            endpoint: "the client assertion",
                            detail: format!("cannot sign: {e}"),
                        })
                    }
                }
            }
            _ => form.push(("client_id", client.id.clone())),
        }
        let url = server.token_endpoint.clone();
        if self.dpop_active() {
            let signer = self.config.dpop.as_deref().expect("dpop_active");
            match super::super::dpop::proof(
                signer,
                "POST",
                &url,
                None,
                self.as_nonce.as_deref(),
                self.now,
            ) {
                Ok(proof) => headers.push(("dpop", proof)),
                Err(e) => {
                    return self.fail(OAuthError::Endpoint {
                        endpoint: "the DPoP proof",
                        detail: e,
                    })
                }
            }
        }
        self.phase = Phase::Token {
            refresh,
            form: first,
            retried,
        };
        Action::Fetch(OAuthRequest {
            method: "POST",
            url,
            headers,
            body: encode_form(&form).into_bytes(),
        })
    }

    pub(super) fn on_token(&mut self, status: u16, doc: Option<Value>, refresh: bool) -> Action {
        let answer = match doc {
            Some(doc) if status == 200 => AccessToken::from_response(&doc).map(|t| (t, doc)),
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
            dpop: token.dpop,
        };
        let issuer = self.round.issuer.clone();
        self.tokens = Some((issuer, tokens));
        self.phase = Phase::Idle;
        Action::Ready(token.token)
    }

    /// The identity provider's answer to the token exchange: the ID-JAG, then the JWT bearer
    /// grant at the authorization server.
    pub(super) fn on_exchanged(&mut self, status: u16, doc: Option<Value>) -> Action {
        let jag = match &doc {
            Some(doc) if status == 200 => doc["access_token"].as_str().filter(|t| !t.is_empty()),
            _ => None,
        };
        let Some(jag) = jag.map(str::to_owned) else {
            return self.fail(OAuthError::Endpoint {
                endpoint: "the identity provider's token exchange",
                detail: endpoint_error(status, doc.as_ref()),
            });
        };
        let form = vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", jag)];
        let scope = self.round.asked.clone();
        self.token_request(self.with_resource_and_scope(form, scope), false)
    }

    /// `form` with this round's `resource` and `scope`.
    fn with_resource_and_scope(
        &self,
        mut form: Vec<(&'static str, String)>,
        scope: Option<String>,
    ) -> Vec<(&'static str, String)> {
        if let Some(resource) = &self.round.resource {
            form.push(("resource", resource.clone()));
        }
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        form
    }
}

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
const CLIENT_ASSERTION_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The token exchange grant (RFC 8693 §2.1).
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The identity assertion authorization grant's token type (SEP-990).
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// An OpenID Connect ID token's token type (RFC 8693 §3).
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
