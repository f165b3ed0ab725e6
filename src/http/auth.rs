//! The resource server's half of [MCP authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization):
//! a bearer token is required on the MCP path, checked by a pluggable [`TokenVerifier`], and
//! the answers and the metadata document are the core's.
//!
//! - No `Authorization: Bearer …` → `401` with `WWW-Authenticate: Bearer
//!   resource_metadata="…"` (RFC 6750 §3, RFC 9728 §5.1), and `scope` when scopes are required.
//! - A token the verifier refuses → `401` with `error="invalid_token"`.
//! - A valid token lacking a required scope → `403` with `error="insufficient_scope"` and the
//!   scopes needed (RFC 6750 §3.1; the MCP spec's scope step-up).
//! - The verifier cannot decide (its issuer unreachable) → `503` with `Retry-After`.
//! - `GET /.well-known/oauth-protected-resource` and the path-suffixed form
//!   (`/.well-known/oauth-protected-resource/mcp`) → the [RFC 9728](https://www.rfc-editor.org/rfc/rfc9728)
//!   metadata: `resource`, `authorization_servers`, `scopes_supported`,
//!   `bearer_methods_supported`.
//!
//! Every refusal has a JSON-RPC error body (id `null`) besides the header, and never echoes
//! the token. A verified request carries its [`Identity`] into the request context
//! ([`RequestContext::identity`](crate::server::context::RequestContext::identity)).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::http::answer::{Answer, AnswerBody};
use crate::http::headers;
pub use crate::http::identity::Identity;
use crate::http::request::{Fields, HttpRequest};
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcResponse};
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// The well-known path of the protected resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

pub use crate::http::identity::EXPIRY_LEEWAY_SECS;

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Expired, not yet valid, forged, for another audience or issuer, malformed: `401
    /// invalid_token`. The text is for logs and the error body; it never holds the token.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The verifier could not decide (its issuer or introspection endpoint unreachable): `503`.
    #[error("cannot verify the token now: {0}")]
    Unavailable(String),
}

/// Checks bearer tokens: JWTs against the issuer's keys, introspection, or anything else.
pub trait TokenVerifier: MaybeSend + MaybeSync + 'static {
    /// The identity `token` speaks for.
    ///
    /// # Errors
    /// [`TokenError::Invalid`] for a token to refuse, [`TokenError::Unavailable`] when it
    /// cannot be decided now.
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<Identity, TokenError>>;
}

/// What the resource server says about itself, and what it requires.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The canonical URI of this MCP server (`https://mcp.example.com/mcp`): the `resource` of
    /// the metadata, and the audience tokens must carry.
    pub resource: String,
    /// The authorization servers' issuer URLs.
    pub authorization_servers: Vec<String>,
    /// The scopes listed in the metadata.
    pub scopes_supported: Vec<String>,
    /// The scopes every request's token must carry (`403 insufficient_scope` otherwise).
    pub required_scopes: Vec<String>,
}

impl ResourceMetadata {
    /// What is wrong with these URLs, if anything: `resource` must be an absolute http(s) URL
    /// without a fragment (RFC 9728 §2: it is named in every challenge's `resource_metadata`
    /// and is the token audience), each authorization server an http(s) URL (its issuer).
    /// `Err` names the field (`resource`, `authorization_servers[i]`) and says why.
    pub fn check_urls(&self) -> Result<(), (String, &'static str)> {
        let url = |u: &str| {
            crate::wire::url::HttpUrl::parse(u).is_some()
                && !u.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if !url(&self.resource) || self.resource.contains('#') {
            return Err((
                "resource".to_owned(),
                "must be this server's http(s) URL, without a fragment",
            ));
        }
        if let Some(i) = self.authorization_servers.iter().position(|a| !url(a)) {
            return Err((
                format!("authorization_servers[{i}]"),
                "must be an authorization server's http(s) URL (its issuer)",
            ));
        }
        Ok(())
    }
}

/// The bearer-token gate of one MCP endpoint (cheap to clone).
#[derive(Clone)]
pub struct Authorizer {
    metadata: Arc<ResourceMetadata>,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

/// What [`Authorizer::check`] decided.
#[derive(Debug)]
pub enum Gate {
    /// Go on, as this identity.
    Pass(Arc<Identity>),
    /// Answer this instead (the metadata document, or a refusal).
    Answer(Answer),
}

impl Authorizer {
    /// A gate requiring tokens `verifier` accepts, describing itself with `metadata`.
    pub fn new(metadata: ResourceMetadata, verifier: impl TokenVerifier) -> Self {
        Authorizer {
            metadata: Arc::new(metadata),
            verifier: Arc::new(verifier),
        }
    }

    /// The metadata.
    pub fn metadata(&self) -> &ResourceMetadata {
        &self.metadata
    }

    /// The metadata document (RFC 9728 §2).
    pub fn metadata_document(&self) -> Value {
        let m = &self.metadata;
        let mut doc = json!({
            "resource": m.resource,
            "authorization_servers": m.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !m.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(m.scopes_supported);
        }
        doc
    }

    /// The URL of the metadata document for the resource `resource`: the well-known path
    /// inserted before the resource's path (RFC 9728 §3.1), e.g.
    /// `https://h/.well-known/oauth-protected-resource/mcp`.
    pub fn metadata_url(&self) -> String {
        let resource = &self.metadata.resource;
        let (origin, path) = split_origin(resource);
        let path = path.trim_end_matches('/');
        format!("{origin}{PROTECTED_RESOURCE_METADATA_PATH}{path}")
    }

    /// Whether `path` is where the metadata is served: the well-known path alone or with the
    /// resource's path after it.
    pub fn is_metadata_path(&self, path: &str) -> bool {
        let (_, resource_path) = split_origin(&self.metadata.resource);
        let suffixed = format!(
            "{PROTECTED_RESOURCE_METADATA_PATH}{}",
            resource_path.trim_end_matches('/')
        );
        path == PROTECTED_RESOURCE_METADATA_PATH || path == suffixed
    }

    /// Decide one request: the metadata document for a `GET` of its path; else the request's
    /// bearer token verified and the required scopes checked.
    pub async fn check(&self, request: &HttpRequest) -> Gate {
        if self.is_metadata_path(&request.path) {
            return Gate::Answer(match request.method.as_str() {
                "GET" | "HEAD" => {
                    let mut answer = Answer::empty(200)
                        .with_header(headers::CONTENT_TYPE, headers::APPLICATION_JSON)
                        .with_header(headers::CACHE_CONTROL, "max-age=3600");
                    answer.body = AnswerBody::Json(crate::wire::json_text::to_text(
                        &self.metadata_document(),
                    ));
                    answer
                }
                _ => Answer::empty(405).with_header(headers::ALLOW, "GET, HEAD"),
            });
        }
        let token = match bearer_token(&request.field_values(headers::AUTHORIZATION)) {
            Ok(token) => token,
            Err(refusal) => return Gate::Answer(self.refuse(&refusal)),
        };
        match self.verifier.verify(token).await {
            Ok(identity) => {
                let missing: Vec<&String> = self
                    .metadata
                    .required_scopes
                    .iter()
                    .filter(|s| !identity.has_scope(s))
                    .collect();
                if missing.is_empty() {
                    Gate::Pass(Arc::new(identity))
                } else {
                    Gate::Answer(self.refuse(&Refusal::InsufficientScope))
                }
            }
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(%why, "auth: token refused");
                Gate::Answer(self.refuse(&Refusal::InvalidToken(why)))
            }
            Err(TokenError::Unavailable(why)) => {
                tracing::warn!(%why, "auth: cannot verify tokens");
                Gate::Answer(
                    Answer::rpc_error(
                        503,
                        ErrorObject::internal(
                            "the authorization server cannot be reached; retry later",
                        ),
                    )
                    .with_header(headers::RETRY_AFTER, "5"),
                )
            }
        }
    }

    /// `403 insufficient_scope` when `identity` lacks one of the endpoint's required scopes or
    /// of `also` (a tool's, [`crate::Tool::with_required_scopes`]); the challenge's `scope`
    /// names them all. `None` when it has them.
    pub fn check_scopes(&self, identity: &Identity, also: &[String]) -> Option<Answer> {
        let mut scopes = self.metadata.required_scopes.clone();
        scopes.extend(
            also.iter()
                .filter(|s| !scopes.contains(s))
                .cloned()
                .collect::<Vec<_>>(),
        );
        identity.lacks(&scopes)?;
        Some(self.refuse_with(&Refusal::InsufficientScope, &scopes))
    }

    /// The `401` / `403` answer for `refusal`.
    fn refuse(&self, refusal: &Refusal) -> Answer {
        self.refuse_with(refusal, &self.metadata.required_scopes)
    }

    fn refuse_with(&self, refusal: &Refusal, required: &[String]) -> Answer {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        let scopes = required.join(" ");
        let (status, message) = match refusal {
            Refusal::Missing => (
                401,
                "authorization required: send a bearer token".to_owned(),
            ),
            Refusal::OtherScheme => (
                401,
                "authorization required: send a bearer token (the Authorization header names another scheme)".to_owned(),
            ),
            Refusal::Malformed(why) => {
                challenge.push_str(", error=\"invalid_request\"");
                (401, format!("a malformed Authorization header: {why}"))
            }
            Refusal::InvalidToken(why) => {
                challenge.push_str(", error=\"invalid_token\"");
                (401, format!("the bearer token was refused: {why}"))
            }
            Refusal::InsufficientScope => {
                challenge.push_str(", error=\"insufficient_scope\"");
                (403, format!("the token lacks a required scope ({scopes})"))
            }
        };
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{scopes}\""));
        }
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, message);
        Answer::json(status, &JsonRpcResponse::error(None, error))
            .with_header(headers::WWW_AUTHENTICATE, challenge)
    }
}

/// Why a request is refused before its token is looked at, or after.
enum Refusal {
    Missing,
    /// An `Authorization` field of another scheme (`Basic …`): as [`Refusal::Missing`], no
    /// error code (RFC 6750 §3.1: a request that "attempted using an unsupported authentication
    /// method" lacks authentication information).
    OtherScheme,
    Malformed(&'static str),
    InvalidToken(String),
    InsufficientScope,
}

/// The token of the one `Authorization: Bearer <token>` field (RFC 6750 §2.1: the scheme is
/// case-insensitive, the token is `b64token`).
fn bearer_token<'a>(fields: &[Option<&'a str>]) -> Result<&'a str, Refusal> {
    let value = match fields {
        [] => return Err(Refusal::Missing),
        [Some(value)] => value.trim(),
        [None] => return Err(Refusal::Malformed("not text")),
        _ => return Err(Refusal::Malformed("more than one Authorization field")),
    };
    if value.is_empty() {
        return Err(Refusal::Missing); // an empty field carries no credentials
    }
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Refusal::OtherScheme);
    }
    let token = token.trim();
    let b64token = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    if token.is_empty() || !token.bytes().all(b64token) {
        return Err(Refusal::Malformed("the token is not a b64token"));
    }
    Ok(token)
}

/// `scheme://authority` and the path of a URL (no query).
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path_at = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    let path = &url[path_at..];
    let path = path.split(['?', '#']).next().unwrap_or_default();
    (&url[..path_at], path)
}

#[cfg(test)]
mod tests;
