//! The 2026-07-28 leg of the conformance client: what our client does for each client
//! scenario of `@modelcontextprotocol/conformance` 0.2.0-alpha (`--requirements 2026-07-28`; the
//! revision: <https://modelcontextprotocol.io/specification/2026-07-28>).
//!
//! Entry point: [`run_modern`]`(scenario, url, authorizer)`. The conformance client example includes this
//! file (`#[path = "conformance_client_modern.rs"] mod modern;`) and calls it when
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` is `2026-07-28`. Run on its own it is a complete client:
//!
//! ```text
//! conformance client --command "target/debug/examples/conformance_client_modern" \
//!     --requirements 2026-07-28 --scenario tools_call
//! ```
//!
//! (the suite appends the URL and sets `MCP_CONFORMANCE_SCENARIO` and, for
//! `http-custom-headers`, `MCP_CONFORMANCE_CONTEXT`).

use std::time::Duration;

use orkestrel_mcp::client::handlers::ClientHandler;
use orkestrel_mcp::client::{ClientEra, ClientOptions, McpClient, RequestOptions};
use orkestrel_mcp::native::client::{transport_for, Target};
use orkestrel_mcp::wire::jsonrpc::ErrorObject;
use orkestrel_mcp::BoxFuture;
use serde_json::{json, Map, Value};

/// Answers the scenarios' input requests: accepts elicitations (`confirmed: true`), samples a
/// fixed reply, lists no roots.
pub struct ConformanceHandler;

impl ClientHandler for ConformanceHandler {
    fn capabilities(&self) -> Value {
        json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {}})
    }

    fn create_message(&self, _params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async {
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "ok"},
                "model": "conformance-client", "stopReason": "endTurn"}),
            )
        })
    }

    fn elicit(&self, _params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"action": "accept", "content": {"confirmed": true}})) })
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { Ok(json!({"roots": []})) })
    }
}

/// Arguments for a tool from its schema: each required property gets a value of its type.
fn sample_arguments(schema: &Value) -> Value {
    let mut args = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = schema
            .pointer(&format!("/properties/{name}/type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let value = match kind {
            "integer" | "number" => json!(1),
            "boolean" => json!(true),
            "object" => json!({}),
            "array" => json!([]),
            _ => json!("value"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

fn names(result: &Value, key: &str, field: &str) -> Vec<String> {
    result
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get(field).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Run one 2026-07-28 client scenario against `url`.
///
/// # Errors
/// A description of the first step that failed (the connection, a listing, a call the scenario
/// needs to succeed).
pub async fn run_modern(
    scenario: &str,
    url: &str,
    authorizer: Option<std::sync::Arc<dyn orkestrel_mcp::http::exchange::Authorizer>>,
) -> Result<(), String> {
    let target = Target::from_url(url).map_err(|e| e.to_string())?;
    let transport: std::sync::Arc<dyn orkestrel_mcp::client::ClientTransport> = match &target {
        Target::Http(http_url) => {
            use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
            let http =
                HttpTransport::new(HttpClientOptions::new(http_url)).map_err(|e| e.to_string())?;
            if let Some(authorizer) = authorizer {
                http.set_authorizer(authorizer);
            }
            std::sync::Arc::new(http)
        }
        _ => transport_for(&target).map_err(|e| e.to_string())?,
    };
    let options = ClientOptions::new("orkestrel-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .with_era(ClientEra::Modern)
        .with_timeout(Duration::from_secs(10))
        .with_handler(ConformanceHandler);
    let client = McpClient::with_transport(transport, options);
    client
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let outcome = scenario_steps(&client, scenario).await;
    client.disconnect().await;
    outcome
}

/// The Skills extension's client scenarios (SEP-2640), in either era: list the skills and
/// retrieve nothing (`sep-2640-client-no-prefetch`); otherwise load each skill (its `SKILL.md`
/// verified: size, digest, frontmatter) and only then read its other listed files, each
/// verified. A file that fails verification stops the scenario with the error (nothing after it
/// is read).
pub async fn skills_steps(client: &McpClient, scenario: &str) -> Result<(), String> {
    use orkestrel_mcp::primitives::skills::SkillResources;
    let entries = client
        .list_skills()
        .await
        .map_err(|e| format!("skills/list: {e}"))?;
    for entry in &entries {
        eprintln!(
            "skill {} ({}): {}",
            entry.name(),
            entry.uri,
            entry.description()
        );
    }
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    for entry in &entries {
        let loaded = client
            .load_skill(entry)
            .await
            .map_err(|e| format!("load {}: {e}", entry.uri))?;
        eprintln!(
            "loaded {}: {} bytes of instructions",
            entry.uri,
            loaded.body().len()
        );
        if let SkillResources::Listed(files) = &entry.resources {
            for file in files.iter().filter(|f| f.uri != entry.uri) {
                client
                    .read_skill_file(entry, &file.uri)
                    .await
                    .map_err(|e| format!("read {}: {e}", file.uri))?;
            }
        }
    }
    Ok(())
}

/// `json-schema-2020-12-preservation`, in either era: echo the focal tool's `inputSchema`, as
/// listed, back through `json_schema_echo` (`{"schema": …}`), so the suite can see that nothing
/// was lost or changed on the way in (SEP-1613: `$schema`, `$defs`, `additionalProperties`;
/// SEP-2106: `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`).
pub async fn echo_focal_schema(
    client: &McpClient,
    tools: &[orkestrel_mcp::protocol::ToolDescriptor],
) -> Result<(), orkestrel_mcp::client::ClientError> {
    let focal = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .map(|t| t.input_schema.clone())
        .unwrap_or(Value::Null);
    client
        .call_tool("json_schema_echo", json!({ "schema": focal }))
        .await
        .map(|_| ())
}

async fn scenario_steps(client: &McpClient, scenario: &str) -> Result<(), String> {
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    match scenario {
        "tools_call" => {
            client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await
                .map_err(|e| format!("tools/call add_numbers: {e}"))?;
        }
        "sep-2322-client-request-state" => {
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                client
                    .call_tool(name, json!({}))
                    .await
                    .map_err(|e| format!("tools/call {name}: {e}"))?;
            }
        }
        s if s.starts_with("sep-2640-") => skills_steps(client, s).await?,
        "json-schema-2020-12-preservation" => echo_focal_schema(client, &tools)
            .await
            .map_err(|e| format!("tools/call json_schema_echo: {e}"))?,
        "http-custom-headers" => {
            let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or(Value::Null);
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                let args = call.get("arguments").cloned().unwrap_or(json!({}));
                client
                    .call_tool(name, args)
                    .await
                    .map_err(|e| format!("tools/call {name}: {e}"))?;
            }
        }
        _ => {
            // Exercise everything the server lists: each tool (failures tolerated), each
            // resource, each prompt.
            for tool in &tools {
                if let Err(e) = client
                    .call_tool(&tool.name, sample_arguments(&tool.input_schema))
                    .await
                {
                    eprintln!("tools/call {}: {e}", tool.name);
                }
            }
            let caps = client
                .discover_result()
                .and_then(|d| d.get("capabilities").cloned())
                .unwrap_or(Value::Null);
            if caps.get("resources").is_some() {
                let listed = client
                    .request("resources/list", None, RequestOptions::default())
                    .await
                    .map_err(|e| format!("resources/list: {e}"))?;
                for uri in names(&listed, "resources", "uri") {
                    let read = client
                        .request(
                            "resources/read",
                            Some(json!({"uri": uri})),
                            RequestOptions::default(),
                        )
                        .await;
                    if let Err(e) = read {
                        eprintln!("resources/read {uri}: {e}");
                    }
                }
            }
            if caps.get("prompts").is_some() {
                let listed = client
                    .request("prompts/list", None, RequestOptions::default())
                    .await
                    .map_err(|e| format!("prompts/list: {e}"))?;
                for name in names(&listed, "prompts", "name") {
                    let got = client
                        .request(
                            "prompts/get",
                            Some(json!({"name": name})),
                            RequestOptions::default(),
                        )
                        .await;
                    if let Err(e) = got {
                        eprintln!("prompts/get {name}: {e}");
                    }
                }
            }
        }
    }
    Ok(())
}

/// Standalone: `conformance_client_modern [URL]` with `MCP_CONFORMANCE_SCENARIO` set.
#[allow(dead_code)]
fn main() -> std::process::ExitCode {
    let url = std::env::args().next_back().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run_modern(&scenario, &url, None)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance client ({scenario}): {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
