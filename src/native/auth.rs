//! Bearer tokens checked natively ([`crate::http::auth::TokenVerifier`]): JWT access tokens
//! against the keys their issuer publishes.
//!
//! [`JwtVerifier::discover`] reads the issuer's metadata (RFC 8414
//! `/.well-known/oauth-authorization-server`, then OpenID Connect discovery, each with the
//! issuer's path inserted as the specs say), requires its `issuer` to be exactly the one asked
//! for (metadata that names another issuer is refused), and fetches its `jwks_uri`. A token is
//! then accepted when its signature verifies with one of those keys (an asymmetric algorithm
//! only: `RS*`, `PS*`, `ES*`, `EdDSA`; never `none` or a shared-secret `HS*`), its `iss` is the
//! issuer, its `aud` holds the audience (the MCP server's resource URI, RFC 8707; a token
//! without `aud` is refused when an audience is configured), and it is within `exp` / `nbf`
//! with 30 s of leeway. A token signed by a key not in the set makes the verifier fetch the set
//! again, so the issuer's key rotation is honoured: the first such token always does, later
//! ones at most every 10 s (the fetch at setup does not count, so a rotation soon after the
//! server starts is not refused for 10 s); tokens arriving while a fetch runs wait for that one,
//! and a failed fetch answers them `Unavailable` (`503`) until the 10 s pass; a key the new set
//! no longer holds is refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::Uri;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use crate::client::oauth::form_encode;
use crate::http::auth::{Identity, TokenError, TokenVerifier};
use crate::BoxFuture;

/// How long a metadata or key-set fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata document or key set read.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;
/// A token naming an unknown key fetches the set again at most this often (counted from the
/// last such fetch, not from the one at setup).
const REFETCH_EVERY: Duration = Duration::from_secs(10);
/// Clock skew allowed on `exp` and `nbf`, in seconds.
const LEEWAY_SECS: u64 = crate::http::auth::EXPIRY_LEEWAY_SECS;

/// Why a verifier could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AuthSetupError {
    /// The issuer's metadata could not be read (every well-known URL tried).
    #[error("cannot read the authorization server metadata of {issuer}: {reason}")]
    Metadata {
        /// The issuer asked for.
        issuer: String,
        /// What went wrong, per URL.
        reason: String,
    },
    /// The metadata names another issuer than the one asked for.
    #[error("the metadata at {url} names issuer {found:?}, not {expected:?}")]
    IssuerMismatch {
        /// Where it was read.
        url: String,
        /// The issuer asked for.
        expected: String,
        /// The issuer it names.
        found: String,
    },
    /// The key set could not be read or holds no usable key.
    #[error("cannot use the key set {url}: {reason}")]
    Keys {
        /// `jwks_uri`.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

/// One verification key.
struct Key {
    key: DecodingKey,
    /// The algorithm the key says it is for, when it says.
    algorithm: Option<Algorithm>,
    family: Family,
}

/// Which algorithms a key can verify.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Rsa,
    Ec,
    Okp,
}

struct Keys {
    by_id: HashMap<String, Arc<Key>>,
    unnamed: Vec<Arc<Key>>,
}

struct Inner {
    issuer: String,
    audience: Option<String>,
    jwks_uri: String,
    keys: Mutex<Keys>,
    /// The last time an unknown key made the set be fetched again (`None`: never), and why it
    /// failed if it did. An async lock: concurrent unknown keys share one fetch.
    refetched: tokio::sync::Mutex<Option<Refetch>>,
}

/// Verifies JWT access tokens against an issuer's published keys (cheap to clone).
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("jwks_uri", &self.inner.jwks_uri)
            .finish()
    }
}

impl JwtVerifier {
    /// Read `issuer`'s metadata and keys; accept tokens for `audience` (`None`: any audience —
    /// not advisable, tokens for other servers would pass).
    ///
    /// # Errors
    /// [`AuthSetupError`]: no metadata at any well-known URL, an issuer mismatch, no usable key.
    pub async fn discover(issuer: &str, audience: Option<String>) -> Result<Self, AuthSetupError> {
        let metadata = issuer_metadata(issuer).await?;
        let jwks_uri = metadata["jwks_uri"]
            .as_str()
            .ok_or_else(|| AuthSetupError::Metadata {
                issuer: issuer.to_owned(),
                reason: "it has no jwks_uri".into(),
            })?
            .to_owned();
        let keys = fetch_keys(&jwks_uri)
            .await
            .map_err(|reason| AuthSetupError::Keys {
                url: jwks_uri.clone(),
                reason,
            })?;
        Ok(JwtVerifier {
            inner: Arc::new(Inner {
                issuer: issuer.to_owned(),
                audience,
                jwks_uri,
                keys: Mutex::new(keys),
                refetched: tokio::sync::Mutex::new(None),
            }),
        })
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    async fn check(&self, token: &str) -> Result<Identity, TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| TokenError::Invalid(format!("not a JWT ({e})")))?;
        if family_of(header.alg).is_none() {
            return Err(TokenError::Invalid(format!(
                "algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let key = match self.key_for(header.kid.as_deref(), header.alg) {
            Some(key) => key,
            None => {
                self.refetch().await?;
                self.key_for(header.kid.as_deref(), header.alg)
                    .ok_or_else(|| {
                        TokenError::Invalid("signed with a key the issuer does not publish".into())
                    })?
            }
        };
        if key.algorithm.is_some_and(|a| a != header.alg) {
            return Err(TokenError::Invalid("the algorithm is not the key's".into()));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.inner.issuer]);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        // `jsonwebtoken` checks `aud` only when the token has one: with an audience configured
        // it is a required claim too (RFC 9068 §4: a token whose `aud` does not name this
        // resource MUST be rejected; one without `aud` names nothing).
        match &self.inner.audience {
            Some(audience) => {
                validation.set_audience(&[audience]);
                validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            }
            None => {
                validation.validate_aud = false;
                validation.set_required_spec_claims(&["exp", "iss"]);
            }
        }
        let data = jsonwebtoken::decode::<Value>(token, &key.key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            TokenError::Invalid(
                match e.kind() {
                    ErrorKind::ExpiredSignature => "expired",
                    ErrorKind::ImmatureSignature => "not valid yet",
                    ErrorKind::InvalidAudience => "for another audience",
                    ErrorKind::InvalidIssuer => "from another issuer",
                    ErrorKind::InvalidSignature => "the signature does not verify",
                    ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
                    ErrorKind::InvalidAlgorithm => "the algorithm is not the key's",
                    _ => "malformed",
                }
                .to_owned(),
            )
        })?;
        identity(data.claims)
    }

    fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<Key>> {
        let keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        let family = family_of(alg)?;
        match kid {
            Some(kid) => keys.by_id.get(kid).filter(|k| k.family == family).cloned(),
            None => keys
                .unnamed
                .iter()
                .chain(keys.by_id.values())
                .find(|k| k.family == family)
                .cloned(),
        }
    }

    /// Fetch the key set again, unless an unknown key made it try within [`REFETCH_EVERY`]
    /// (then that try's outcome stands: a failed one is `Unavailable` again without a fetch).
    /// Concurrent callers wait for the one fetch in flight: tokens with unknown keys — anyone
    /// can send them — make at most one request to the issuer per interval, also while it is
    /// slow or down.
    async fn refetch(&self) -> Result<(), TokenError> {
        let mut last = self.inner.refetched.lock().await;
        if let Some(last) = last.as_ref().filter(|l| l.at.elapsed() < REFETCH_EVERY) {
            return match &last.failed {
                Some(reason) => Err(TokenError::Unavailable(reason.clone())),
                None => Ok(()),
            };
        }
        let fetched = fetch_keys(&self.inner.jwks_uri).await;
        let failed = fetched.as_ref().err().cloned();
        *last = Some(Refetch {
            at: Instant::now(),
            failed,
        });
        let fresh = fetched.map_err(TokenError::Unavailable)?;
        *self.inner.keys.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
        Ok(())
    }
}

/// One try at fetching the key set again.
struct Refetch {
    at: Instant,
    /// Why it failed (`None`: it succeeded).
    failed: Option<String>,
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<Identity, TokenError>> {
        let token = token.to_owned();
        Box::pin(async move { self.check(&token).await })
    }
}

/// The identity a token's claims describe. `sub`, `client_id` and `azp` are read as text: a
/// number (some issuers mint numeric subjects) as its digits; any other kind refuses the token
/// (RFC 7519 §4.1.2: a `StringOrURI`) — dropped, the subject no longer bound its sessions and
/// tasks to their user.
fn identity(claims: Value) -> Result<Identity, TokenError> {
    let text = |k: &str| match &claims[k] {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        _ => Err(TokenError::Invalid(format!(
            "its {k} claim is not a string"
        ))),
    };
    let (subject, client_id, azp) = (text("sub")?, text("client_id")?, text("azp")?);
    let scopes = match (&claims["scope"], &claims["scp"]) {
        (Value::String(s), _) => s.split_whitespace().map(str::to_owned).collect(),
        (_, Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        (_, Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Ok(Identity {
        subject,
        client_id: client_id.or(azp),
        scopes,
        claims,
    })
}

fn family_of(alg: Algorithm) -> Option<Family> {
    use Algorithm::*;
    match alg {
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => Some(Family::Rsa),
        ES256 | ES384 => Some(Family::Ec),
        EdDSA => Some(Family::Okp),
        HS256 | HS384 | HS512 => None,
    }
}

/// The metadata URLs of `issuer`, in the order the specs give
/// ([`crate::client::oauth::authorization_server_metadata_urls`]).
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    crate::client::oauth::authorization_server_metadata_urls(issuer)
}

async fn fetch_keys(url: &str) -> Result<Keys, String> {
    let doc = get_json(url).await?;
    let set: JwkSet = serde_json::from_value(doc).map_err(|e| format!("not a JWK set: {e}"))?;
    let mut keys = Keys {
        by_id: HashMap::new(),
        unnamed: Vec::new(),
    };
    for jwk in &set.keys {
        let family = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => Family::Rsa,
            AlgorithmParameters::EllipticCurve(_) => Family::Ec,
            AlgorithmParameters::OctetKeyPair(_) => Family::Okp,
            // A shared secret is never a published verification key.
            AlgorithmParameters::OctetKey(_) => continue,
        };
        if matches!(
            &jwk.common.public_key_use,
            Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
        ) {
            continue;
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            continue;
        };
        let algorithm = jwk
            .common
            .key_algorithm
            .and_then(|a| serde_json::to_value(a).ok())
            .and_then(|v| v.as_str().and_then(|s| s.parse::<Algorithm>().ok()));
        let key = Arc::new(Key {
            key,
            algorithm,
            family,
        });
        match &jwk.common.key_id {
            Some(kid) => {
                keys.by_id.insert(kid.clone(), key);
            }
            None => keys.unnamed.push(key),
        }
    }
    if keys.by_id.is_empty() && keys.unnamed.is_empty() {
        return Err("it holds no signature verification key".into());
    }
    Ok(keys)
}

/// `GET url` as JSON: status 200, at most [`MAX_DOCUMENT_BYTES`], within [`FETCH_TIMEOUT`];
/// redirects are not followed.
pub(crate) async fn get_json(url: &str) -> Result<Value, String> {
    let uri: Uri = url.parse().map_err(|e| format!("not a URL ({e})"))?;
    fetch_json(|| {
        hyper::Request::get(uri.clone())
            .header(hyper::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())
    })
    .await
}

/// `POST url` of a form (`application/x-www-form-urlencoded`) with HTTP Basic client
/// authentication, as JSON (as [`get_json`]).
pub(crate) async fn post_form(
    url: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> Result<Value, String> {
    use base64::Engine;
    let uri: Uri = url.parse().map_err(|e| format!("not a URL ({e})"))?;
    // RFC 6749 §2.3.1: the id and secret are form-encoded before the Basic encoding.
    let authorization = basic.map(|(id, secret)| {
        let credentials = format!("{}:{}", form_encode(id), form_encode(secret));
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(credentials)
        )
    });
    let body: Vec<String> = form
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect();
    let body = Bytes::from(body.join("&"));
    fetch_json(|| {
        let mut request = hyper::Request::post(uri.clone())
            .header(hyper::header::ACCEPT, "application/json")
            .header(
                hyper::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
        if let Some(authorization) = &authorization {
            request = request.header(hyper::header::AUTHORIZATION, authorization);
        }
        request
            .body(Full::new(body.clone()))
            .map_err(|e| e.to_string())
    })
    .await
}

/// Send `request` (rebuilt by `make` for a retry) and read the JSON answer. A request whose
/// connection failed before any answer (reset, closed: the server dropped an idle
/// connection) is sent once more on a new connection; both are free of side effects (a
/// metadata or key read, an introspection).
async fn fetch_json(
    make: impl Fn() -> Result<hyper::Request<Full<Bytes>>, String>,
) -> Result<Value, String> {
    let first = fetch_once(make()?).await;
    match first {
        Err(Fetch::Connection(_)) => fetch_once(make()?).await.map_err(Fetch::text),
        other => other.map_err(Fetch::text),
    }
}

enum Fetch {
    /// No answer came: the connection failed.
    Connection(String),
    /// An answer came, and it is not a JSON document.
    Answer(String),
}

impl Fetch {
    fn text(self) -> String {
        match self {
            Fetch::Connection(text) | Fetch::Answer(text) => text,
        }
    }
}

async fn fetch_once(request: hyper::Request<Full<Bytes>>) -> Result<Value, Fetch> {
    use crate::native::client::http::{fetch_bounded, FetchError};
    let answer = fetch_bounded(request, MAX_DOCUMENT_BYTES, FETCH_TIMEOUT)
        .await
        .map_err(|e| match e {
            FetchError::Connection(text) => Fetch::Connection(text),
            other => Fetch::Answer(other.to_string()),
        })?;
    if answer.status != hyper::StatusCode::OK {
        return Err(Fetch::Answer(format!("HTTP {}", answer.status.as_u16())));
    }
    serde_json::from_slice(&answer.body).map_err(|e| Fetch::Answer(format!("not JSON: {e}")))
}

/// Reads the authorization server metadata of `issuer` (the first of [`metadata_urls`] that
/// answers), its `issuer` checked.
pub(crate) async fn issuer_metadata(issuer: &str) -> Result<Value, AuthSetupError> {
    let mut reasons = Vec::new();
    for url in metadata_urls(issuer) {
        match get_json(&url).await {
            Ok(doc) => {
                let found = doc["issuer"].as_str().unwrap_or_default().to_owned();
                if found != issuer {
                    return Err(AuthSetupError::IssuerMismatch {
                        url,
                        expected: issuer.to_owned(),
                        found,
                    });
                }
                return Ok(doc);
            }
            Err(e) => reasons.push(format!("{url}: {e}")),
        }
    }
    Err(AuthSetupError::Metadata {
        issuer: issuer.to_owned(),
        reason: reasons.join("; "),
    })
}

/// Checks opaque (or any) tokens by asking the issuer's introspection endpoint (RFC 7662),
/// authenticating as a client of it: a token is accepted when it is `active`, its `aud` holds
/// the audience, and `exp` has not passed. Cheap to clone.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Introspection>,
}

struct Introspection {
    endpoint: String,
    client_id: String,
    client_secret: String,
    audience: Option<String>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.inner.endpoint)
            .field("client_id", &self.inner.client_id)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Introspect at `issuer`'s `introspection_endpoint` (read from its metadata, whose issuer
    /// is checked) as `client_id` / `client_secret`; accept tokens for `audience`.
    ///
    /// # Errors
    /// [`AuthSetupError`]: no metadata, an issuer mismatch, no introspection endpoint.
    pub async fn discover(
        issuer: &str,
        client_id: &str,
        client_secret: &str,
        audience: Option<String>,
    ) -> Result<Self, AuthSetupError> {
        let metadata = issuer_metadata(issuer).await?;
        let endpoint = metadata["introspection_endpoint"]
            .as_str()
            .ok_or_else(|| AuthSetupError::Metadata {
                issuer: issuer.to_owned(),
                reason: "it has no introspection_endpoint".into(),
            })?
            .to_owned();
        Ok(IntrospectionVerifier {
            inner: Arc::new(Introspection {
                endpoint,
                client_id: client_id.to_owned(),
                client_secret: client_secret.to_owned(),
                audience,
            }),
        })
    }

    async fn check(&self, token: &str) -> Result<Identity, TokenError> {
        let i = &self.inner;
        let answer = post_form(
            &i.endpoint,
            Some((&i.client_id, &i.client_secret)),
            &[("token", token), ("token_type_hint", "access_token")],
        )
        .await
        .map_err(TokenError::Unavailable)?;
        if answer["active"] != Value::Bool(true) {
            return Err(TokenError::Invalid("not active".into()));
        }
        if let Some(audience) = &i.audience {
            let held = match &answer["aud"] {
                Value::String(aud) => aud == audience,
                Value::Array(auds) => auds.iter().any(|a| a == audience),
                _ => false,
            };
            if !held {
                return Err(TokenError::Invalid("for another audience".into()));
            }
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if answer["exp"]
            .as_u64()
            .is_some_and(|exp| exp + LEEWAY_SECS < now)
        {
            return Err(TokenError::Invalid("expired".into()));
        }
        identity(answer)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<Identity, TokenError>> {
        let token = token.to_owned();
        Box::pin(async move { self.check(&token).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_the_path_insertion_order() {
        assert_eq!(
            metadata_urls("https://auth.example.com"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
    }

    /// A P-256 key made for this test only (`openssl ecparam -name prime256v1 -genkey`).
    const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgZpyI1ffdvBRmBrtD
D0rhJ59L0GDWYMjHeWWp8AhDloahRANCAARC4pamZcRW4FKydcyPLhA7y1AXIGqy
59dHwhwpjcwBPSk+lxSmM7tBtfKoJTNUuhMNjgXe8uttHe+h6QfuwWX2
-----END PRIVATE KEY-----";
    const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQuKWpmXEVuBSsnXMjy4QO8tQFyBq
sufXR8IcKY3MAT0pPpcUpjO7QbXyqCUzVLoTDY4F3vLrbR3voekH7sFl9g==
-----END PUBLIC KEY-----";

    fn verifier(audience: Option<&str>) -> JwtVerifier {
        let key = Key {
            key: DecodingKey::from_ec_pem(TEST_PUBLIC_KEY.as_bytes()).unwrap(),
            algorithm: Some(Algorithm::ES256),
            family: Family::Ec,
        };
        JwtVerifier {
            inner: Arc::new(Inner {
                issuer: "https://as.example".into(),
                audience: audience.map(str::to_owned),
                jwks_uri: "http://127.0.0.1:9/jwks".into(),
                keys: Mutex::new(Keys {
                    by_id: HashMap::new(),
                    unnamed: vec![Arc::new(key)],
                }),
                refetched: tokio::sync::Mutex::new(Some(Refetch {
                    at: Instant::now(),
                    failed: None,
                })),
            }),
        }
    }

    fn signed(claims: &Value) -> String {
        let key = jsonwebtoken::EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap();
        let header = jsonwebtoken::Header::new(Algorithm::ES256);
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }

    /// With an audience configured, a token without `aud` is refused (`jsonwebtoken` checks
    /// `aud` only when present: such a token passed); one naming the audience is accepted.
    #[test]
    fn a_token_without_an_audience_is_refused_when_one_is_required() {
        use futures::executor::block_on;
        let exp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 300;
        let base = serde_json::json!({"iss": "https://as.example", "sub": "u", "exp": exp});
        let mut named = base.clone();
        named["aud"] = "https://mcp.example/mcp".into();
        let strict = verifier(Some("https://mcp.example/mcp"));
        assert_eq!(
            block_on(strict.check(&signed(&named)))
                .unwrap()
                .subject
                .as_deref(),
            Some("u")
        );
        let refused = block_on(strict.check(&signed(&base))).unwrap_err();
        assert_eq!(
            refused,
            TokenError::Invalid("a required claim is missing".into())
        );
        // Without a configured audience (not advisable) any token of the issuer passes.
        assert!(block_on(verifier(None).check(&signed(&base))).is_ok());
    }

    /// Tokens naming a key the set lacks — anyone can send them — fetch the set at most once
    /// per interval: concurrent ones share one fetch, and a failed fetch is not retried until
    /// the interval passes (each such token made the server fetch the set, also while the
    /// issuer was down).
    #[tokio::test]
    async fn unknown_keys_make_one_fetch_of_the_key_set_per_interval() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let fetches = Arc::new(AtomicUsize::new(0));
        let counted = fetches.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut head = [0u8; 1024];
                    let _ = socket.read(&mut head).await;
                    // Slow and failing: every caller arrives while the fetch is in flight.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let _ = socket
                        .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                });
            }
        });
        let mut verifier = verifier(Some("https://mcp.example/mcp"));
        let inner = Arc::get_mut(&mut verifier.inner).unwrap();
        inner.jwks_uri = format!("http://{addr}/jwks");
        inner.refetched = tokio::sync::Mutex::new(None);
        let mut header = jsonwebtoken::Header::new(Algorithm::ES256);
        header.kid = Some("rotated".into());
        let key = jsonwebtoken::EncodingKey::from_ec_pem(TEST_KEY.as_bytes()).unwrap();
        let token = jsonwebtoken::encode(
            &header,
            &serde_json::json!({"iss": "https://as.example"}),
            &key,
        )
        .unwrap();
        let tries = (0..20).map(|_| verifier.check(&token));
        for outcome in futures::future::join_all(tries).await {
            assert!(
                matches!(outcome, Err(TokenError::Unavailable(_))),
                "{outcome:?}"
            );
        }
        for _ in 0..5 {
            let outcome = verifier.check(&token).await;
            assert!(
                matches!(outcome, Err(TokenError::Unavailable(_))),
                "{outcome:?}"
            );
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let a =
            identity(serde_json::json!({"sub": "u", "scope": "a b", "client_id": "c"})).unwrap();
        assert_eq!(
            (a.subject.as_deref(), a.client_id.as_deref(), a.scopes),
            (Some("u"), Some("c"), vec!["a".to_owned(), "b".to_owned()])
        );
        let b = identity(serde_json::json!({"scp": ["x"], "azp": "d"})).unwrap();
        assert_eq!(
            (b.client_id.as_deref(), b.scopes),
            (Some("d"), vec!["x".to_owned()])
        );
    }

    /// A numeric subject is its digits (it was dropped, and the token's sessions and tasks were
    /// bound to its client, or to nobody); a subject of another kind refuses the token.
    #[test]
    fn a_numeric_subject_is_read_and_another_kind_refused() {
        let numeric = identity(serde_json::json!({"sub": 123, "client_id": "app"})).unwrap();
        assert_eq!(numeric.subject.as_deref(), Some("123"));
        let other = identity(serde_json::json!({"sub": 456, "client_id": "app"})).unwrap();
        assert_ne!(numeric.context(), other.context());
        for bad in [
            serde_json::json!(true),
            serde_json::json!({"id": 1}),
            serde_json::json!([1]),
        ] {
            let refused = identity(serde_json::json!({"sub": bad})).unwrap_err();
            assert_eq!(
                refused,
                TokenError::Invalid("its sub claim is not a string".into())
            );
        }
    }
}
