//! Signing in toward a protected server (MCP authorization): the OAuth options every client
//! command takes, the authorizer they build, and `login` / `logout`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use orkestrel_mcp::client::oauth::{canonical_resource, OAuthConfig, TokenStore};
use orkestrel_mcp::native::client::oauth::{
    FileTokenStore, LoopbackBrowser, OAuthClient, UserAgent,
};
use orkestrel_mcp::BoxFuture;

use super::error::CliError;

/// The environment variable holding `--client-id`'s secret (never a flag: the process list
/// would show it).
pub(crate) const CLIENT_SECRET_VAR: &str = "MCP_CLIENT_SECRET";

/// The OAuth options of the client commands (HTTP targets).
#[derive(Args, Clone, Debug, Default)]
pub struct OAuthArgs {
    /// HTTP: the OAuth client id the authorization server already knows (pre-registered; its
    /// secret, if any, from the environment variable MCP_CLIENT_SECRET) [default: dynamic
    /// registration].
    #[arg(long, value_name = "CLIENT_ID")]
    pub(crate) client_id: Option<String>,
    /// HTTP, with --client-id: its secret (prefer the environment variable MCP_CLIENT_SECRET: a
    /// flag shows in the process list) [default: $MCP_CLIENT_SECRET].
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// HTTP, with --client-id: sign in by the client credentials grant (a machine client, no
    /// user; the secret in MCP_CLIENT_SECRET is required).
    #[arg(long, requires = "client_id")]
    pub(crate) client_credentials: bool,
    /// HTTP: the HTTPS URL of this client's Client ID Metadata Document, used as its client id
    /// where the authorization server supports such documents [default: dynamic
    /// registration].
    #[arg(long, value_name = "URL")]
    pub(crate) client_metadata_url: Option<String>,
    /// HTTP: the scope to ask for when the server's challenge names none [default: the
    /// server's scopes_supported].
    #[arg(long, value_name = "SCOPE")]
    pub(crate) scope: Option<String>,
    /// HTTP: when the server asks for a sign-in, show the authorization URL and wait for the
    /// browser's redirect even when stderr is not a terminal [default: only on a terminal;
    /// otherwise stored tokens are used and a sign-in fails].
    #[arg(long)]
    pub(crate) sign_in: bool,
    /// HTTP: show the authorization URL but do not open a browser on it.
    #[arg(long)]
    pub(crate) no_browser: bool,
    /// HTTP: where signed-in tokens are kept (mode 0600) [default: $ORKESTREL_MCP_TOKENS,
    /// else $XDG_CONFIG_HOME/orkestrel-mcp/tokens.json, else ~/.config/orkestrel-mcp/tokens.json].
    #[arg(long, value_name = "FILE")]
    pub(crate) token_store: Option<PathBuf>,
}

/// A user agent for when no one can sign in: stored tokens and refreshes work, a sign-in
/// fails with what to do.
struct NoSignIn {
    url: String,
}

impl UserAgent for NoSignIn {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1/callback".into()
    }

    fn sign_in<'a>(&'a self, _url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            Err(format!(
                "{} asks for a sign-in: run `orkestrel-mcp login {}` (or pass --sign-in)",
                self.url, self.url
            ))
        })
    }
}

impl OAuthArgs {
    /// The token store, unless none can be placed.
    fn store(&self) -> Option<Arc<FileTokenStore>> {
        let path = self
            .token_store
            .clone()
            .or_else(FileTokenStore::default_path)?;
        Some(Arc::new(FileTokenStore::new(path)))
    }

    /// The authorizer toward the MCP server at `url` (`None`: nothing to sign in with).
    ///
    /// # Errors
    /// A usage error: `--client-credentials` without its secret, a loopback port that cannot
    /// be bound.
    pub(crate) fn authorizer(
        &self,
        url: &str,
        force_sign_in: bool,
    ) -> Result<Option<OAuthClient>, CliError> {
        let secret = self
            .client_secret
            .clone()
            .or_else(|| std::env::var(CLIENT_SECRET_VAR).ok());
        if self.client_credentials {
            let id = self.client_id.clone().unwrap_or_default();
            let secret = secret.ok_or_else(|| {
                CliError::usage(format!(
                    "--client-credentials needs its secret: --client-secret or {CLIENT_SECRET_VAR}"
                ))
            })?;
            return Ok(Some(OAuthClient::client_credentials(
                url,
                id,
                secret,
                self.scope.clone(),
            )));
        }
        let store = self.store();
        let kept = store
            .as_ref()
            .and_then(|s| s.load(&canonical_resource(url)));
        let interactive = force_sign_in || self.sign_in || std::io::stderr().is_terminal();
        let agent: Arc<dyn UserAgent> = if interactive {
            let shown = url.to_owned();
            let browser = LoopbackBrowser::bind(0, !self.no_browser, move |auth_url| {
                // The URL is built from the authorization server's metadata: escaped.
                eprintln!(
                    "orkestrel-mcp: {shown} asks for a sign-in; open this URL to sign in:\n  {}",
                    orkestrel_mcp::native::terminal::escape_controls(auth_url)
                );
            })
            .map_err(|e| {
                CliError::Runtime(format!("cannot listen for the sign-in redirect: {e}"))
            })?;
            Arc::new(browser)
        } else if kept.is_some() || self.client_id.is_some() {
            Arc::new(NoSignIn {
                url: url.to_owned(),
            })
        } else {
            // Nothing stored and no one to sign in: the 401 stands as the answer.
            return Ok(None);
        };
        let mut config = OAuthConfig::authorization_code(url, agent.redirect_uri());
        config.scope = self.scope.clone();
        config.client_metadata_url = self.client_metadata_url.clone();
        config.client =
            self.client_id
                .clone()
                .map(|id| orkestrel_mcp::client::oauth::ClientRegistration {
                    client_secret: secret,
                    ..orkestrel_mcp::client::oauth::ClientRegistration::public(id)
                });
        let client = OAuthClient::authorization_code(config, agent);
        Ok(Some(match store {
            Some(store) => client.with_store(store),
            None => client,
        }))
    }
}

/// `login URL`: sign in now (the server is asked for its tools, which a protected server
/// refuses without a token), and keep the tokens.
#[derive(Args)]
pub struct LoginArgs {
    /// The server URL (http or https).
    url: String,
    #[command(flatten)]
    oauth: OAuthArgs,
}

/// `logout URL`: forget the tokens and client kept for a server.
#[derive(Args)]
pub struct LogoutArgs {
    /// The server URL (http or https).
    url: String,
    /// Where the tokens are kept (as for the client commands).
    #[arg(long, value_name = "FILE")]
    token_store: Option<PathBuf>,
}

pub(crate) async fn login(args: LoginArgs) -> Result<(), CliError> {
    use orkestrel_mcp::client::McpClient;
    use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
    let authorizer = args
        .oauth
        .authorizer(&args.url, true)?
        .ok_or_else(|| CliError::usage("login needs an http(s) URL"))?;
    let transport = HttpTransport::new(HttpClientOptions::new(&args.url))?;
    transport.set_authorizer(Arc::new(authorizer.clone()));
    let sign_in = orkestrel_mcp::client::oauth::SIGN_IN_TIMEOUT.as_millis();
    let options = super::client::client_options(
        u64::try_from(sign_in).unwrap_or(u64::MAX),
        orkestrel_mcp::client::ClientEra::Auto,
    );
    let client = McpClient::new(transport, options);
    let outcome = async {
        client.connect().await?;
        client.list_tools().await
    }
    .await;
    client.disconnect().await;
    outcome?;
    match authorizer.tokens() {
        // The grant needs no user: each command signs in again with the same flags (nothing
        // is kept, as the secret is not).
        Some((issuer, _)) if args.oauth.client_credentials => eprintln!(
            "orkestrel-mcp: signed in to {} by the client credentials grant (authorization server {}); nothing is kept: give --client-credentials to each command",
            args.url,
            orkestrel_mcp::native::terminal::escape_controls(&issuer)
        ),
        Some((issuer, _)) => eprintln!(
            "orkestrel-mcp: signed in to {} (authorization server {})",
            args.url,
            orkestrel_mcp::native::terminal::escape_controls(&issuer)
        ),
        None => eprintln!("orkestrel-mcp: {} did not ask for a sign-in", args.url),
    }
    Ok(())
}

pub(crate) fn logout(args: LogoutArgs) -> Result<(), CliError> {
    // As `login`: tokens are kept only for http(s) servers, so any other URL is a typo.
    let scheme = args
        .url
        .split_once("://")
        .map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err(CliError::usage(format!(
            "{:?} is not an http(s):// URL",
            args.url
        )));
    }
    let path = args
        .token_store
        .clone()
        .or_else(FileTokenStore::default_path)
        .ok_or_else(|| CliError::usage("no token store: set --token-store or HOME"))?;
    let store = FileTokenStore::new(path);
    if store.remove(&canonical_resource(&args.url)) {
        eprintln!("orkestrel-mcp: signed out of {}", args.url);
    } else {
        eprintln!("orkestrel-mcp: nothing was kept for {}", args.url);
    }
    Ok(())
}
