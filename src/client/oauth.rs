//! The client's half of [MCP authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization),
//! as pure rules (no I/O): what a `401` says, where the protected resource metadata and the
//! authorization server metadata are, what the token request holds, and what its answer means.
//! The hosts fetch; the `native` module's client credentials authorizer (feature `native`)
//! drives these.

use base64::Engine;
use serde_json::Value;

use crate::wire::url::HttpUrl;

mod config;
pub mod dpop;
mod flow;

pub use config::{
    Action, ApplicationType, ClientAssertionSigner, ClientRegistration, Grant, OAuthConfig,
    OAuthError, OAuthRequest, StoredCredentials, TokenStore, Tokens, JWT_BEARER,
};
pub use flow::{AuthFlow, EXPIRY_MARGIN_SECS, MAX_ROUNDS, ROUND_WINDOW_SECS};

/// What a `WWW-Authenticate: Bearer …` challenge says (RFC 6750 §3, RFC 9728 §5.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: the URL of the protected resource metadata.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs.
    pub scope: Option<String>,
    /// `error` (`invalid_token`, `insufficient_scope`, …).
    pub error: Option<String>,
}

impl BearerChallenge {
    /// Read the `Bearer` (else `DPoP`) challenge of a `WWW-Authenticate` value (`None`:
    /// neither).
    /// Parameters are `name="quoted"` or `name=token`, comma-separated; names are compared
    /// without case; a backslash escapes the next character inside quotes.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        // RFC 9449 §7.1: a DPoP challenge carries the same parameters.
        let (at, scheme) = find_scheme(header, "bearer")
            .map(|at| (at, "bearer"))
            .or_else(|| find_scheme(header, "dpop").map(|at| (at, "dpop")))?;
        let mut rest = &header[at + scheme.len()..];
        let mut challenge = BearerChallenge::default();
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim().to_ascii_lowercase();
            if name.contains(' ') {
                // The next scheme begins (`Bearer …, Basic realm=…`).
                break;
            }
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut out = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                out.push(escaped);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => out.push(c),
                    }
                }
                value = out;
                rest = &quoted[end.min(quoted.len())..];
            } else {
                let end = rest.find([',', ' ']).unwrap_or(rest.len());
                value = rest[..end].to_owned();
                rest = &rest[end..];
            }
            match name.as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
        }
        Some(challenge)
    }
}

/// Where `scheme` begins as an auth-scheme in a challenge list (case-insensitive, at the start
/// or after a comma).
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let before = lower[..at].trim_end();
        let after = lower[at + scheme.len()..].chars().next();
        if (before.is_empty() || before.ends_with(',')) && after.is_none_or(|c| c == ' ') {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

/// The protected resource metadata URLs to try for the MCP server at `server_url`, in the
/// spec's order: the path-suffixed well-known URL, then the root one (RFC 9728 §3.1; MCP
/// 2025-11-25 authorization, Protected Resource Metadata Discovery).
pub fn protected_resource_metadata_urls(server_url: &str) -> Vec<String> {
    let (origin, path) = split(server_url);
    let path = path.trim_end_matches('/');
    let root = format!("{origin}/.well-known/oauth-protected-resource");
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{root}{path}"), root]
    }
}

/// The authorization server metadata URLs of `issuer`, in the order the specs give: RFC 8414
/// (the issuer's path inserted after the well-known prefix), then OpenID Connect Discovery with
/// the path inserted, then with it appended.
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let (origin, path) = split(trimmed);
    let mut urls = vec![format!(
        "{origin}/.well-known/oauth-authorization-server{path}"
    )];
    if path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration"));
    } else {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// How long a sign-in (the user at the authorization URL, until the redirect comes back) gets
/// before its round fails: 300 s. Bounded in every host, so a sign-in nobody finishes never
/// holds the transport's authorization (a later challenge starts a new round).
pub const SIGN_IN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The canonical resource URI of the MCP server at `server_url` (RFC 8707, MCP "Canonical
/// Server URI"): scheme and host in lowercase, no fragment and no query; the path kept.
pub fn canonical_resource(server_url: &str) -> String {
    let url = server_url.split(['#', '?']).next().unwrap_or_default();
    let (origin, path) = split(url);
    format!("{}{path}", origin.to_ascii_lowercase())
}

/// Whether the metadata's `resource` names the server at `server_url` (RFC 9728 §3.3: it
/// must be the resource the client asked about; a trailing slash aside).
pub fn resource_matches(metadata_resource: &str, server_url: &str) -> bool {
    // An absolute http(s) URL with a host: `http:` alone is a prefix of every server's URL.
    if HttpUrl::parse(metadata_resource).is_none() {
        return false;
    }
    let a = canonical_resource(metadata_resource);
    let b = canonical_resource(server_url);
    a.trim_end_matches('/') == b.trim_end_matches('/')
        // A resource for the whole origin covers every path of it.
        || b.starts_with(&format!("{}/", a.trim_end_matches('/')))
}

/// The scope to ask for: the challenge's, else the configured one, else the metadata's
/// `scopes_supported`, else none (MCP 2025-11-25, Scope Selection Strategy).
pub fn select_scope(
    challenge: Option<&str>,
    configured: Option<&str>,
    scopes_supported: &Value,
) -> Option<String> {
    if let Some(scope) = challenge.filter(|s| !s.is_empty()) {
        return Some(scope.to_owned());
    }
    if let Some(scope) = configured.filter(|s| !s.is_empty()) {
        return Some(scope.to_owned());
    }
    let listed: Vec<&str> = scopes_supported
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    (!listed.is_empty()).then(|| listed.join(" "))
}

/// How the client authenticates at the token endpoint, from the metadata's
/// `token_endpoint_auth_methods_supported` (absent: `client_secret_basic`, RFC 8414 §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenEndpointAuth {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form.
    ClientSecretPost,
}

impl TokenEndpointAuth {
    /// The method to use with a secret: `client_secret_basic` when listed (or nothing is),
    /// else `client_secret_post` when listed; `None` when neither is.
    pub fn choose(metadata: &Value) -> Option<TokenEndpointAuth> {
        let Some(methods) = metadata["token_endpoint_auth_methods_supported"].as_array() else {
            return Some(TokenEndpointAuth::ClientSecretBasic);
        };
        let has = |m: &str| methods.iter().any(|v| v == m);
        if has("client_secret_basic") {
            Some(TokenEndpointAuth::ClientSecretBasic)
        } else if has("client_secret_post") {
            Some(TokenEndpointAuth::ClientSecretPost)
        } else {
            None
        }
    }
}

/// An access token from a token response (RFC 6749 §5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessToken {
    /// The token.
    pub token: String,
    /// Seconds it lives for, when the server said.
    pub expires_in: Option<u64>,
    /// The scope granted, when the server said.
    pub scope: Option<String>,
    /// `token_type` is `DPoP` (RFC 9449 §5): the token goes with a proof of the client's key.
    pub dpop: bool,
}

impl AccessToken {
    /// Read a token endpoint's JSON answer.
    ///
    /// # Errors
    /// The server's `error` (and `error_description`), or what is malformed; the text never
    /// holds a token.
    pub fn from_response(value: &Value) -> Result<AccessToken, String> {
        if let Some(error) = value["error"].as_str() {
            let description = value["error_description"].as_str().unwrap_or_default();
            return Err(if description.is_empty() {
                format!("the token endpoint refused: {error}")
            } else {
                format!("the token endpoint refused: {error} ({description})")
            });
        }
        let token = value["access_token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or("the token response has no access_token")?;
        let kind = value["token_type"].as_str().unwrap_or_default();
        let dpop = kind.eq_ignore_ascii_case("dpop");
        if !kind.eq_ignore_ascii_case("bearer") && !dpop {
            return Err("the token response is neither a Bearer nor a DPoP token".into());
        }
        Ok(AccessToken {
            token: token.to_owned(),
            expires_in: value["expires_in"].as_u64(),
            scope: value["scope"].as_str().map(str::to_owned),
            dpop,
        })
    }
}

/// The scopes of a space-separated list.
pub(crate) fn scope_set(scope: Option<&str>) -> Vec<&str> {
    scope
        .map(|s| s.split_whitespace().collect())
        .unwrap_or_default()
}

/// The union of two space-separated scope lists, in order of first appearance.
pub fn union_scopes(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in scope_set(a).into_iter().chain(scope_set(b)) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// 32 random bytes, base64url: a PKCE verifier (RFC 7636 §4.1: 43 characters) or a `state`.
pub(crate) fn random_token() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

pub(crate) fn encode_form(pairs: &[(&str, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The decoded `name=value` pairs of a URL's query (`+` is a space, `%XX` a byte).
pub fn query_params(url: &str) -> Vec<(String, String)> {
    let query = url.split('#').next().unwrap_or_default();
    let Some((_, query)) = query.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    use crate::wire::percent::{decode, Plus};
    decode(text, Plus::Space).unwrap_or_else(|| text.to_owned())
}

/// `application/x-www-form-urlencoded` text of `text` (the WHATWG form encoding: unreserved
/// bytes kept, space as `+`, every other byte `%XX`).
pub fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether an authorization server endpoint (from its metadata) may be used: `https`, or `http`
/// on a loopback host (MCP authorization: every authorization server endpoint is served over
/// HTTPS; loopback for development). Anything else — `javascript:`, `data:`, `file:`, plain
/// `http` elsewhere — is refused before a browser or a request ever sees it.
pub fn endpoint_allowed(url: &str) -> bool {
    HttpUrl::parse(url).is_some_and(|url| url.scheme == "https" || url.is_loopback())
}

/// `scheme://authority` and the path of a URL (leniently: no scheme, or another, is kept as is).
fn split(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bearer_challenges_are_read_with_their_parameters() {
        let c = BearerChallenge::parse(
            r#"Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b", error="insufficient_scope""#,
        )
        .unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://h/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            (c.scope.as_deref(), c.error.as_deref()),
            (Some("a b"), Some("insufficient_scope"))
        );
        let other =
            BearerChallenge::parse(r#"Basic realm="x", bearer error=invalid_token, scope="q\"s""#)
                .unwrap();
        assert_eq!(
            (other.error.as_deref(), other.scope.as_deref()),
            (Some("invalid_token"), Some("q\"s"))
        );
        assert_eq!(
            BearerChallenge::parse("Bearer"),
            Some(BearerChallenge::default())
        );
        assert_eq!(BearerChallenge::parse(r#"Basic realm="bearer""#), None);
        assert_eq!(BearerChallenge::parse("Bearerx a=b"), None);
    }

    #[test]
    fn metadata_urls_follow_the_specs_order() {
        assert_eq!(
            protected_resource_metadata_urls("https://h:8/p/mcp"),
            [
                "https://h:8/.well-known/oauth-protected-resource/p/mcp",
                "https://h:8/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_metadata_urls("https://h"),
            ["https://h/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            authorization_server_metadata_urls("https://a/t1"),
            [
                "https://a/.well-known/oauth-authorization-server/t1",
                "https://a/.well-known/openid-configuration/t1",
                "https://a/t1/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn only_https_or_loopback_http_endpoints_are_used() {
        for ok in [
            "https://as.example/authorize",
            "HTTPS://AS.example:8443/t",
            "http://127.0.0.1:9000/token",
            "http://localhost/authorize",
            "http://[::1]:80/r",
        ] {
            assert!(endpoint_allowed(ok), "{ok}");
        }
        for refused in [
            "javascript:alert(document.domain)//?x",
            "data:text/html,hi",
            "file:///etc/passwd",
            "http://as.example/authorize",
            "http://localhost.evil.example/x",
            "http://127.evil.example/x",
            "https://",
            "//as.example/authorize",
            "",
        ] {
            assert!(!endpoint_allowed(refused), "{refused}");
        }
    }

    #[test]
    fn resources_scopes_and_token_answers() {
        assert_eq!(
            canonical_resource("HTTPS://H.example/mcp?x#y"),
            "https://h.example/mcp"
        );
        assert!(resource_matches("https://h/mcp/", "https://h/mcp"));
        assert!(resource_matches("https://h", "https://h/mcp"));
        assert!(!resource_matches("https://evil/mcp", "https://h/mcp"));
        assert!(!resource_matches("https://h/mc", "https://h/mcp"));
        // A bare scheme, or no host, names no resource (it prefixed every server's URL).
        for bare in ["http:", "https:", "http://", "https:///mcp", "h/mcp", ""] {
            assert!(!resource_matches(bare, "http://h/mcp"), "{bare:?}");
        }
        assert_eq!(
            select_scope(Some("a"), Some("b"), &json!(["c"])).as_deref(),
            Some("a")
        );
        assert_eq!(
            select_scope(None, None, &json!(["c", "d"])).as_deref(),
            Some("c d")
        );
        assert_eq!(select_scope(None, None, &json!(null)), None);
        assert_eq!(
            TokenEndpointAuth::choose(&json!({})),
            Some(TokenEndpointAuth::ClientSecretBasic)
        );
        assert_eq!(
            TokenEndpointAuth::choose(
                &json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]})
            ),
            Some(TokenEndpointAuth::ClientSecretPost)
        );
        let token = AccessToken::from_response(
            &json!({"access_token": "t", "token_type": "bearer", "expires_in": 60}),
        )
        .unwrap();
        assert_eq!((token.token.as_str(), token.expires_in), ("t", Some(60)));
        let refused = AccessToken::from_response(&json!({"error": "invalid_client"})).unwrap_err();
        assert!(refused.contains("invalid_client"));
        assert!(
            AccessToken::from_response(&json!({"access_token": "t", "token_type": "mac"})).is_err()
        );
    }
}
