//! `--auth-issuer URL` (`serve --http`, `bridge --http`): the HTTP endpoint requires bearer
//! tokens issued by URL (JWT access tokens checked against its published keys, for this
//! server's resource URI); `serve` adds a `whoami` tool that shows who a token speaks for.

use std::net::SocketAddr;

use clap::Args;
use orkestrel_mcp::http::auth::{Authorizer, ResourceMetadata};
use orkestrel_mcp::native::auth::{IntrospectionVerifier, JwtVerifier};
use orkestrel_mcp::{McpServer, RequestContext, Tool};
use serde_json::{json, Map, Value};

use super::error::CliError;

/// Bearer-token options of an HTTP endpoint.
#[derive(Args)]
pub struct AuthArgs {
    /// HTTP: require bearer tokens (JWT access tokens) issued by this authorization server
    /// (its issuer URL; its metadata and keys are read at start). Without it, no token is
    /// required.
    #[arg(long, value_name = "URL", requires = "http", conflicts_with = "stdio")]
    auth_issuer: Option<String>,
    /// HTTP, with --auth-issuer: this server's resource URI, as tokens name it in `aud` and the
    /// protected resource metadata gives it (`--auth-audience` is the same option: the audience
    /// an MCP server's tokens carry is its resource URI, RFC 8707) [default: http://ADDR/mcp,
    /// the bound address].
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        conflicts_with = "stdio",
        visible_alias = "auth-audience"
    )]
    auth_resource: Option<String>,
    /// HTTP, with --auth-issuer: a scope every token must carry (repeatable; 403
    /// insufficient_scope otherwise) [default: none].
    #[arg(
        long,
        value_name = "SCOPE",
        requires = "auth_issuer",
        conflicts_with = "stdio"
    )]
    auth_scope: Vec<String>,
    /// HTTP, with --auth-issuer: check tokens by the issuer's introspection endpoint (RFC
    /// 7662; opaque tokens too) as this client, whose secret is read from the environment
    /// variable MCP_AUTH_CLIENT_SECRET [default: JWT access tokens checked against the
    /// issuer's keys].
    #[arg(
        long,
        value_name = "CLIENT_ID",
        requires = "auth_issuer",
        conflicts_with = "stdio"
    )]
    auth_introspection_client: Option<String>,
}

/// The environment variable holding `--auth-introspection-client`'s secret (never a flag: the
/// process list would show it).
const CLIENT_SECRET_VAR: &str = "MCP_AUTH_CLIENT_SECRET";

impl AuthArgs {
    /// The gate for an endpoint bound at `local`, with `whoami` added to `server`; `None`
    /// without `--auth-issuer`.
    ///
    /// # Errors
    /// A runtime error when the issuer's metadata or keys cannot be read or lie about the
    /// issuer.
    pub async fn authorizer(
        &self,
        local: SocketAddr,
        server: &McpServer,
    ) -> Result<Option<Authorizer>, CliError> {
        let gate = self.gate(local).await?;
        if gate.is_some() {
            server.tools().add(whoami());
        }
        Ok(gate)
    }

    /// The gate alone (`bridge`: its tools are the upstream's).
    ///
    /// # Errors
    /// As [`AuthArgs::authorizer`].
    pub async fn gate(&self, local: SocketAddr) -> Result<Option<Authorizer>, CliError> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let resource = self.auth_resource.clone().unwrap_or_else(|| {
            format!(
                "http://{local}{}",
                orkestrel_mcp::native::http::DEFAULT_MCP_PATH
            )
        });
        let metadata = ResourceMetadata {
            resource: resource.clone(),
            authorization_servers: vec![issuer.clone()],
            scopes_supported: self.auth_scope.clone(),
            required_scopes: self.auth_scope.clone(),
        };
        if let Err((field, why)) = metadata.check_urls() {
            let flag = match field.as_str() {
                "resource" => "--auth-resource",
                _ => "--auth-issuer",
            };
            return Err(CliError::usage(format!("{flag} {why}")));
        }
        let setup = |e| CliError::Runtime(format!("--auth-issuer: {e}"));
        let gate = match &self.auth_introspection_client {
            Some(client) => {
                let secret = std::env::var(CLIENT_SECRET_VAR).map_err(|_| {
                    CliError::usage(format!(
                        "--auth-introspection-client needs its secret in {CLIENT_SECRET_VAR}"
                    ))
                })?;
                let verifier = IntrospectionVerifier::discover(
                    issuer,
                    client,
                    &secret,
                    Some(resource.clone()),
                )
                .await
                .map_err(setup)?;
                Authorizer::new(metadata, verifier)
            }
            None => {
                let verifier = JwtVerifier::discover(issuer, Some(resource.clone()))
                    .await
                    .map_err(setup)?;
                Authorizer::new(metadata, verifier)
            }
        };
        tracing::info!(%issuer, %resource, scopes = ?self.auth_scope, "requiring bearer tokens");
        Ok(Some(gate))
    }
}

/// `whoami`: who the request's bearer token speaks for.
fn whoami() -> Tool {
    Tool::from_json(
        "whoami",
        json!({"type": "object"}),
        |_args: Map<String, Value>, ctx: RequestContext| async move {
            Ok::<_, String>(orkestrel_mcp::Json(match &ctx.identity {
                Some(identity) => json!({
                    "subject": identity.subject,
                    "clientId": identity.client_id,
                    "scopes": identity.scopes,
                }),
                None => Value::Null,
            }))
        },
    )
    .with_description("Who the request's bearer token speaks for: subject, client id, scopes.")
}
