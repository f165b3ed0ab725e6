//! The authorization machine's inputs and outputs: what it is configured with, what it asks
//! of its host ([`Action`]), what it hands back ([`Tokens`]) and why it fails
//! ([`OAuthError`]).

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How the client obtains its tokens.
#[derive(Clone, PartialEq, Eq)]
pub enum Grant {
    /// The authorization code grant with PKCE: a user signs in at the authorization server,
    /// which redirects to `redirect_uri` (OAuth 2.1 §4.1).
    AuthorizationCode {
        /// Where the authorization server sends the user back (a loopback URL for a native
        /// client, RFC 8252 §7.3).
        redirect_uri: String,
    },
    /// The client credentials grant, for a machine client with a pre-registered id and
    /// secret (OAuth 2.1 §4.2; the MCP client credentials extension, SEP-1046).
    ClientCredentials,
    /// The JWT bearer grant with an assertion the client already holds, such as a workload
    /// identity token (RFC 7523 §2.1; the MCP workload identity federation extension,
    /// SEP-1933). Its errors are reported, never retried with another grant.
    JwtBearer {
        /// The JWT whose audience is the authorization server.
        assertion: String,
    },
    /// Enterprise-managed authorization (the MCP extension, SEP-990): the user's ID token from
    /// the enterprise identity provider is exchanged there for an identity assertion
    /// authorization grant (ID-JAG, RFC 8693 token exchange) naming the authorization server
    /// and the MCP server, which the authorization server takes as a JWT bearer grant.
    EnterpriseManaged {
        /// The identity provider's token endpoint.
        idp_token_endpoint: String,
        /// This client's id at the identity provider.
        idp_client_id: String,
        /// Its secret there, if it has one.
        idp_client_secret: Option<String>,
        /// The user's ID token from the identity provider.
        id_token: String,
    },
}

impl Grant {
    /// Its `grant_type` at the authorization server's token endpoint.
    pub fn grant_type(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode { .. } => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::JwtBearer { .. } | Grant::EnterpriseManaged { .. } => JWT_BEARER,
        }
    }
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Assertions and ID tokens are credentials: only the kind shows.
        match self {
            Grant::AuthorizationCode { redirect_uri } => f
                .debug_struct("AuthorizationCode")
                .field("redirect_uri", redirect_uri)
                .finish(),
            Grant::ClientCredentials => f.write_str("ClientCredentials"),
            Grant::JwtBearer { .. } => f.write_str("JwtBearer"),
            Grant::EnterpriseManaged {
                idp_token_endpoint, ..
            } => f
                .debug_struct("EnterpriseManaged")
                .field("idp_token_endpoint", idp_token_endpoint)
                .finish_non_exhaustive(),
        }
    }
}

/// Signs the client's `private_key_jwt` assertions (RFC 7523 §2.2, OpenID Connect Core §9):
/// the machine builds the claims, the host's key signs them (pure computation, no I/O).
pub trait ClientAssertionSigner: crate::MaybeSend + crate::MaybeSync {
    /// The JWS algorithm (`ES256`, `RS256`, …).
    fn algorithm(&self) -> &str;
    /// The compact JWS of `claims`.
    ///
    /// # Errors
    /// Why it cannot sign.
    fn sign(&self, claims: &serde_json::Value) -> Result<String, String>;
}

/// What kind of client registers itself (`application_type`, OpenID Connect Dynamic Client
/// Registration §2): it decides which redirect URIs an authorization server accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApplicationType {
    /// An app on the user's device: the CLI, a desktop client (a loopback or private-use
    /// scheme redirect URI, RFC 8252).
    #[default]
    Native,
    /// A page in a browser (its redirect URI is a page of its origin).
    Web,
}

impl ApplicationType {
    /// The registration value: `"native"` or `"web"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }
}

/// A client the authorization server already knows (pre-registration).
#[derive(Clone)]
pub struct ClientRegistration {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
    /// A key that signs `private_key_jwt` assertions, used where the authorization server
    /// lists `private_key_jwt`.
    pub assertion_signer: Option<std::sync::Arc<dyn ClientAssertionSigner>>,
}

impl ClientRegistration {
    /// A client with an id only (a public client).
    pub fn public(client_id: impl Into<String>) -> Self {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret: None,
            assertion_signer: None,
        }
    }

    /// A confidential client with a secret.
    pub fn with_secret(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        ClientRegistration {
            client_secret: Some(client_secret.into()),
            ..ClientRegistration::public(client_id)
        }
    }
}

impl std::fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field(
                "assertion_signer",
                &self
                    .assertion_signer
                    .as_ref()
                    .map(|s| s.algorithm().to_owned()),
            )
            .finish()
    }
}

/// What the machine knows before it starts.
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    /// The MCP server's URL (the protected resource).
    pub server_url: String,
    /// How tokens are obtained.
    pub grant: Grant,
    /// A pre-registered client (required for [`Grant::ClientCredentials`]).
    pub client: Option<ClientRegistration>,
    /// An HTTPS URL of this client's Client ID Metadata Document, used as its `client_id`
    /// where the authorization server says `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// `application_type` for dynamic registration (default [`ApplicationType::Native`]).
    pub application_type: ApplicationType,
    /// The scope to ask for when no challenge names one.
    pub scope: Option<String>,
    /// A DPoP key (RFC 9449): where the authorization server lists its algorithm in
    /// `dpop_signing_alg_values_supported`, tokens are asked for bound to it and sent with a
    /// proof on every request.
    pub dpop: Option<std::sync::Arc<dyn super::dpop::DpopSigner>>,
}

impl std::fmt::Debug for dyn super::dpop::DpopSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DpopSigner({})", self.algorithm())
    }
}

impl OAuthConfig {
    /// An authorization code client for the server at `server_url`, redirected to
    /// `redirect_uri`, that registers itself as `orkestrel-mcp` when it must.
    pub fn authorization_code(
        server_url: impl Into<String>,
        redirect_uri: impl Into<String>,
    ) -> Self {
        OAuthConfig {
            server_url: server_url.into(),
            grant: Grant::AuthorizationCode {
                redirect_uri: redirect_uri.into(),
            },
            client: None,
            client_metadata_url: None,
            client_name: "orkestrel-mcp".into(),
            application_type: ApplicationType::Native,
            scope: None,
            dpop: None,
        }
    }

    /// A client credentials client for the server at `server_url`.
    pub fn client_credentials(
        server_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        OAuthConfig {
            server_url: server_url.into(),
            grant: Grant::ClientCredentials,
            client: Some(ClientRegistration::with_secret(client_id, client_secret)),
            client_metadata_url: None,
            client_name: "orkestrel-mcp".into(),
            application_type: ApplicationType::Native,
            scope: None,
            dpop: None,
        }
    }
}

/// Tokens from a token endpoint (RFC 6749 §5.1).
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch (`None`: not said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scope granted (the one asked for when the answer does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// A DPoP-bound token (RFC 9449): sent as `Authorization: DPoP …` with a proof.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dpop: bool,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("refresh_token", &self.refresh_token.is_some())
            .finish_non_exhaustive()
    }
}

/// An HTTP request the host performs for the machine. Redirects must not be followed.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthRequest {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The absolute URL.
    pub url: String,
    /// Headers to send (`Accept`, `Content-Type`, `Authorization`).
    pub headers: Vec<(&'static str, String)>,
    /// The body (empty for `GET`).
    pub body: Vec<u8>,
}

impl std::fmt::Debug for OAuthRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The body and the Authorization header hold secrets: only the request line shows.
        write!(f, "{} {}", self.method, self.url)
    }
}

/// What the host does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Perform this request; give its answer to [`AuthFlow::fetched`](super::AuthFlow::fetched) (or its failure to
    /// [`AuthFlow::fetch_failed`](super::AuthFlow::fetch_failed)).
    Fetch(OAuthRequest),
    /// Send the user to this authorization URL; give the URL the authorization server
    /// redirects back to (the redirect URI with `code`, `state`, `iss`) to
    /// [`AuthFlow::redirected`](super::AuthFlow::redirected).
    Authorize(String),
    /// Authorized: send this access token as `Authorization: Bearer …`.
    Ready(String),
    /// No token; the original answer stands.
    Failed(OAuthError),
}

/// Why no token came. The text never holds a secret, a code or a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// No protected resource metadata and no usable fallback.
    #[error("no authorization server found for {server}: {detail}")]
    Discovery {
        /// The MCP server.
        server: String,
        /// What each URL answered.
        detail: String,
    },
    /// The protected resource metadata names another resource (RFC 9728 §3.3).
    #[error("the protected resource metadata names resource {resource:?}, not {server}")]
    ResourceMismatch {
        /// The `resource` it names.
        resource: String,
        /// The MCP server.
        server: String,
    },
    /// The authorization server metadata names another issuer (RFC 8414 §3.3).
    #[error("the metadata at {url} names issuer {found:?}, not {expected:?}")]
    IssuerMismatch {
        /// Where the metadata was read.
        url: String,
        /// The issuer asked about.
        expected: String,
        /// The one it names.
        found: String,
    },
    /// The authorization server does what the client may not use.
    #[error("the authorization server {issuer} cannot be used: {reason}")]
    Unsupported {
        /// The issuer.
        issuer: String,
        /// What is missing (PKCE S256, a grant, an authentication method, an endpoint).
        reason: String,
    },
    /// The authorization response was refused: a `state` or `iss` mismatch, an `error`.
    #[error("the authorization response was refused: {0}")]
    AuthorizationResponse(String),
    /// An endpoint answered with an error (`error`, `error_description`) or nonsense.
    #[error("{endpoint} refused: {detail}")]
    Endpoint {
        /// Which endpoint (registration, token).
        endpoint: &'static str,
        /// Its `error` and `error_description`, or what was malformed.
        detail: String,
    },
    /// A request could not be made.
    #[error("{url}: {detail}")]
    Fetch {
        /// Its URL.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The server asks again for scopes it was already granted, or authorizations repeat
    /// too often: retrying would loop.
    #[error("authorization loop: {0}")]
    Loop(String),
    /// The host called an input the machine was not waiting for.
    #[error("the authorization machine was not waiting for {0}")]
    OutOfOrder(&'static str),
}

/// What a token store keeps for one MCP server: the issuer, the client it knows, the tokens.
/// Every field but `issuer` may be absent.
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredCredentials {
    /// The authorization server (issuer identifier) the client and tokens are bound to.
    pub issuer: String,
    /// The client id it knows (registered, pre-registered, or a metadata document URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// The tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

impl std::fmt::Debug for StoredCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredCredentials")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("tokens", &self.tokens)
            .finish_non_exhaustive()
    }
}

/// Where an OAuth client keeps what it obtained, per MCP server (keyed by its canonical
/// resource URI, [`canonical_resource`](super::canonical_resource)). In memory by default;
/// the native CLI keeps a file (`native::client::oauth::FileTokenStore`).
pub trait TokenStore: crate::MaybeSend + crate::MaybeSync {
    /// What is kept for `resource`.
    fn load(&self, resource: &str) -> Option<StoredCredentials>;
    /// Keep `credentials` for `resource` (replacing what was there).
    fn save(&self, resource: &str, credentials: &StoredCredentials);
    /// Forget `resource`; whether anything was kept.
    fn remove(&self, resource: &str) -> bool;
}
