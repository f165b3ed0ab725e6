//! The client fixture for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client`): connects to the URL given as the last argument
//! over Streamable HTTP and acts out the scenario named in `MCP_CONFORMANCE_SCENARIO`.
//!
//! ```text
//! cargo run --features native --example conformance-client -- http://127.0.0.1:PORT/mcp
//! ```
//!
//! | scenario | what the client does |
//! |---|---|
//! | `initialize` | handshake, `tools/list`, disconnect |
//! | `tools_call` | handshake, `tools/list`, `tools/call add_numbers {a: 5, b: 3}` |
//! | `elicitation-sep1034-client-defaults` | calls the tool; accepts the elicitation with the schema's defaults applied |
//! | `json-schema-2020-12-preservation` | echoes the focal tool's `inputSchema` back verbatim, in both eras |
//! | `sep-2640-*` (Skills) | lists the skills; except for `sep-2640-client-no-prefetch`, loads each (its `SKILL.md` verified) and then reads its files, stopping at the first that fails verification |
//! | `sse-retry` | calls `test_reconnection`; the transport resumes the closed stream with `GET` + `Last-Event-ID` after `retry` |
//! | anything else | handshake, `tools/list`, calls each tool with `{}` (errors are reported, not fatal) |
//!
//! Exit status 0 when the scenario's steps succeeded, 1 otherwise (the suite scores the checks
//! its mock server records, not the status).

use std::process::ExitCode;
use std::time::Duration;

use orkestrel_mcp::client::oauth::dpop::DpopSigner;
use orkestrel_mcp::client::oauth::{ClientRegistration, Grant, OAuthConfig};
use orkestrel_mcp::client::{
    apply_elicitation_defaults, ClientError, ClientHandler, ClientOptions, McpClient,
};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::oauth::{AutoApprove, DpopKey, OAuthClient, PrivateKeyJwt};
use orkestrel_mcp::wire::jsonrpc::ErrorObject;
use orkestrel_mcp::BoxFuture;
use serde_json::{json, Value};

/// Accepts every elicitation with the schema's defaults, answers sampling with a canned text,
/// and lists one root.
struct Conformance;

impl ClientHandler for Conformance {
    fn capabilities(&self) -> Value {
        json!({ "sampling": {}, "elicitation": { "form": {} }, "roots": { "listChanged": true } })
    }

    fn create_message(&self, _params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async {
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": "This is a response from the conformance client." },
                "model": "conformance-client",
                "stopReason": "endTurn",
            }))
        })
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move {
            let mut content = json!({});
            apply_elicitation_defaults(&params, &mut content);
            Ok(json!({ "action": "accept", "content": content }))
        })
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async {
            Ok(json!({ "roots": [{ "uri": "file:///tmp/conformance", "name": "conformance" }] }))
        })
    }
}

#[path = "conformance_client_modern.rs"]
#[allow(dead_code)]
mod modern;

/// The CIMD URL the `auth/*` scenarios expect as a URL-based `client_id`.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client for `scenario` at `url`, from the scenario's context:
///
/// | scenario | grant |
/// |---|---|
/// | `auth/client-credentials-*` | client credentials: `client_secret` (basic / post), or `private_key_jwt` with `private_key_pem` and `signing_algorithm` |
/// | `auth/wif-*` | JWT bearer with the workload token `valid_jwt` |
/// | `auth/enterprise-managed-authorization`, `auth/cross-app-access-*` | the ID token `idp_id_token` exchanged at `idp_token_endpoint` for an ID-JAG, then JWT bearer |
/// | any other | the authorization code flow (DPoP-bound where the authorization server offers it), pre-registered when the context gives a `client_id`, signing in through the suite's authorization servers, which approve without a user |
fn authorizer(scenario: &str, url: &str) -> std::sync::Arc<OAuthClient> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let mut client = text("client_id").map(|id| ClientRegistration {
        client_secret: text("client_secret"),
        ..ClientRegistration::public(id)
    });
    if let (Some(client), Some(pem)) = (client.as_mut(), text("private_key_pem")) {
        let algorithm = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
        match PrivateKeyJwt::from_pem(&algorithm, pem.as_bytes()) {
            Ok(signer) => client.assertion_signer = Some(std::sync::Arc::new(signer)),
            Err(e) => eprintln!("conformance-client: the context's key: {e}"),
        }
    }
    let mut config = OAuthConfig::authorization_code(url, "");
    config.client_name = "orkestrel-conformance-client".into();
    config.client_metadata_url = Some(CLIENT_METADATA_URL.into());
    config.client = client;
    // DPoP where the authorization server offers it (the auth/dpop* scenarios).
    config.dpop = DpopKey::generate()
        .ok()
        .map(|k| std::sync::Arc::new(k) as std::sync::Arc<dyn DpopSigner>);
    let grant = if scenario.starts_with("auth/client-credentials") {
        Some(Grant::ClientCredentials)
    } else if let (true, Some(assertion)) = (scenario.starts_with("auth/wif"), text("valid_jwt")) {
        Some(Grant::JwtBearer { assertion })
    } else if let (Some(idp_token_endpoint), Some(idp_client_id), Some(id_token)) = (
        text("idp_token_endpoint"),
        text("idp_client_id"),
        text("idp_id_token"),
    ) {
        Some(Grant::EnterpriseManaged {
            idp_token_endpoint,
            idp_client_id,
            idp_client_secret: text("idp_client_secret"),
            id_token,
        })
    } else {
        None
    };
    if let Some(grant) = grant {
        config.grant = grant;
        return std::sync::Arc::new(OAuthClient::new(config, None));
    }
    let agent = std::sync::Arc::new(AutoApprove::new("http://localhost:3000/callback"));
    std::sync::Arc::new(OAuthClient::authorization_code(config, agent))
}

async fn run(scenario: &str, url: &str) -> Result<(), String> {
    let transport = HttpTransport::new(HttpClientOptions::new(url)).map_err(|e| e.to_string())?;
    transport.set_authorizer(authorizer(scenario, url));
    let options = ClientOptions::new("orkestrel-conformance-client", "1.0.0")
        .with_timeout(Duration::from_secs(30))
        .with_era(orkestrel_mcp::client::ClientEra::Legacy)
        .with_handler(Conformance);
    let client = McpClient::new(transport, options);
    client.connect().await.map_err(|e| e.to_string())?;
    let outcome = match scenario {
        // The Skills scenarios (SEP-2640) report which file failed verification.
        s if s.starts_with("sep-2640-") => modern::skills_steps(&client, s).await,
        _ => act(&client, scenario).await.map_err(|e| e.to_string()),
    };
    client.disconnect().await;
    outcome
}

async fn act(client: &McpClient, scenario: &str) -> Result<(), ClientError> {
    let tools = client.list_tools().await?;
    match scenario {
        "initialize" => Ok(()),
        "tools_call" => {
            let result = client
                .call_tool("add_numbers", json!({ "a": 5, "b": 3 }))
                .await?;
            eprintln!("add_numbers: {:?}", result.content);
            Ok(())
        }
        "elicitation-sep1034-client-defaults" => {
            let result = client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
            eprintln!("elicitation: {:?}", result.content);
            Ok(())
        }
        // Echo the focal tool's inputSchema back verbatim: nothing may be lost in parsing.
        "json-schema-2020-12-preservation" => modern::echo_focal_schema(client, &tools).await,
        "sse-retry" => {
            let result = client.call_tool("test_reconnection", json!({})).await?;
            eprintln!("reconnection: {:?}", result.content);
            Ok(())
        }
        _ => {
            for tool in tools {
                match client.call_tool(&tool.name, json!({})).await {
                    Ok(result) => eprintln!("{}: {:?}", tool.name, result.content),
                    Err(e) => eprintln!("{}: {e}", tool.name),
                }
            }
            Ok(())
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client URL   (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // The 2026-07-28 leg sets the version it wants; those scenarios run on the stateless wire.
    if std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() == Ok("2026-07-28") {
        return match tokio::time::timeout(
            Duration::from_secs(60),
            modern::run_modern(&scenario, &url, Some(authorizer(&scenario, &url))),
        )
        .await
        {
            Ok(Ok(())) => ExitCode::SUCCESS,
            Ok(Err(e)) => {
                eprintln!("conformance-client: scenario {scenario:?}: {e}");
                ExitCode::FAILURE
            }
            Err(_) => {
                eprintln!("conformance-client: scenario {scenario:?} timed out");
                ExitCode::FAILURE
            }
        };
    }
    match tokio::time::timeout(Duration::from_secs(60), run(&scenario, &url)).await {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance-client: scenario {scenario:?}: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("conformance-client: scenario {scenario:?} timed out");
            ExitCode::FAILURE
        }
    }
}
