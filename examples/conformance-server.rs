//! The server fixture of the official `@modelcontextprotocol/conformance` suite, built on
//! orkestrel-mcp: every tool, resource, prompt and completion the server scenarios name.
//!
//! ```sh
//! cargo run --release --features native --example conformance-server -- 127.0.0.1:PORT
//! ```
//! serves `http://127.0.0.1:PORT/mcp`.

use std::net::SocketAddr;
use std::time::Duration;

use orkestrel_mcp::native::endpoint::{Endpoint, EndpointOptions};
use orkestrel_mcp::native::http;
use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::primitives::resources::{Resource, ResourceContents, ResourceTemplate};
use orkestrel_mcp::primitives::skills::Skill;
use orkestrel_mcp::server::context::LogLevel;
use orkestrel_mcp::server::tasks::TaskOptions;
use orkestrel_mcp::server::{Completion, ListKind};
use orkestrel_mcp::{
    Content, ErrorObject, McpServer, RequestContext, ServerOptions, Tool, ToolResult,
};
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[path = "fixtures/tasks.rs"]
mod tasks_fixture;

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

fn no_args() -> Value {
    json!({ "type": "object", "properties": {} })
}

type Args = Map<String, Value>;

fn fixed(name: &str, description: &str, result: ToolResult) -> Tool {
    Tool::from_json(name, no_args(), move |_: Args, _| {
        let result = result.clone();
        async move { Ok::<_, String>(result) }
    })
    .with_description(description)
}

fn content(blocks: Vec<Content>) -> ToolResult {
    ToolResult {
        content: blocks,
        ..ToolResult::default()
    }
}

fn embedded(uri: &str, mime: &str, text: &str) -> Content {
    Content::Resource {
        resource: json!({ "uri": uri, "mimeType": mime, "text": text }),
        annotations: None,
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn elicitation_text(result: &Value) -> String {
    format!(
        "Elicitation completed: action={}, content={}",
        result["action"].as_str().unwrap_or("unknown"),
        result.get("content").cloned().unwrap_or(Value::Null)
    )
}

fn tools(server: &McpServer) {
    let t = server.tools();
    t.add(fixed(
        "test_simple_text",
        "Returns simple text",
        ToolResult::text("This is a simple text response for testing."),
    ));
    t.add(fixed(
        "test_image_content",
        "Returns an image",
        content(vec![Content::image(PNG, "image/png")]),
    ));
    t.add(fixed(
        "test_audio_content",
        "Returns audio",
        content(vec![Content::Audio {
            data: WAV.into(),
            mime_type: "audio/wav".into(),
            annotations: None,
        }]),
    ));
    t.add(fixed(
        "test_embedded_resource",
        "Returns an embedded resource",
        content(vec![embedded(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )]),
    ));
    t.add(fixed(
        "test_multiple_content_types",
        "Returns text, an image and a resource",
        content(vec![
            Content::text("Multiple content types test:"),
            Content::image(PNG, "image/png"),
            embedded(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ]),
    ));
    t.add(
        Tool::from_json("test_error_handling", no_args(), |_: Args, _| async {
            Err::<ToolResult, _>("This tool intentionally returns an error for testing")
        })
        .with_description("Always fails"),
    );
    t.add(
        Tool::from_json(
            "test_tool_with_logging",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                ctx.log(
                    LogLevel::Info,
                    Some("conformance"),
                    json!("Tool execution started"),
                );
                sleep_ms(50).await;
                ctx.log(
                    LogLevel::Info,
                    Some("conformance"),
                    json!("Tool processing data"),
                );
                sleep_ms(50).await;
                ctx.log(
                    LogLevel::Info,
                    Some("conformance"),
                    json!("Tool execution completed"),
                );
                Ok::<_, String>("Tool with logging executed successfully")
            },
        )
        .with_description("Sends three log messages"),
    );
    t.add(
        Tool::from_json(
            "test_tool_with_progress",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                ctx.progress(0.0, Some(100.0), None);
                sleep_ms(50).await;
                ctx.progress(50.0, Some(100.0), None);
                sleep_ms(50).await;
                ctx.progress(100.0, Some(100.0), None);
                Ok::<_, String>("Tool with progress executed successfully")
            },
        )
        .with_description("Reports progress 0, 50, 100 of 100"),
    );
    // server-sse-polling (SEP-1699): close the SSE connection mid-call; the answer waits in the
    // session's log for the client's `GET` with `Last-Event-ID`.
    t.add(
        Tool::from_json(
            "test_reconnection",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                ctx.close_sse_stream();
                Ok::<_, String>("Reconnection test completed successfully")
            },
        )
        .with_description("Closes its SSE stream before answering; the answer comes on resume"),
    );
    t.add(
        Tool::with_context("test_sampling", |args: SamplingArgs, ctx: RequestContext| async move {
            let result = ctx
                .create_message(json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": args.prompt } }],
                    "maxTokens": 100
                }))
                .await
                .map_err(|e| e.message)?;
            let text = result["content"]["text"].as_str().unwrap_or_default().to_owned();
            Ok::<_, String>(format!("LLM response: {text}"))
        })
        .with_description("Asks the client's LLM"),
    );
    t.add(
        Tool::with_context(
            "test_elicitation",
            |args: ElicitationArgs, ctx: RequestContext| async move {
                let result = ctx
                    .elicit(json!({
                        "message": args.message,
                        "requestedSchema": {
                            "type": "object",
                            "properties": {
                                "username": { "type": "string", "description": "User's response" },
                                "email": { "type": "string", "description": "User's email address" }
                            },
                            "required": ["username", "email"]
                        }
                    }))
                    .await
                    .map_err(|e| e.message)?;
                Ok::<_, String>(format!(
                    "User response: action={}, content={}",
                    result["action"].as_str().unwrap_or("unknown"),
                    result.get("content").cloned().unwrap_or(Value::Null)
                ))
            },
        )
        .with_description("Asks the user"),
    );
    t.add(
        Tool::from_json("test_elicitation_sep1034_defaults", no_args(), |_: Args, ctx: RequestContext| async move {
            let result = ctx
                .elicit(json!({
                    "message": "Please review your profile",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "default": "John Doe" },
                            "age": { "type": "integer", "default": 30 },
                            "score": { "type": "number", "default": 95.5 },
                            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
                            "verified": { "type": "boolean", "default": true }
                        }
                    }
                }))
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(elicitation_text(&result))
        })
        .with_description("Elicitation with defaults for every primitive type"),
    );
    t.add(
        Tool::from_json("test_elicitation_sep1330_enums", no_args(), |_: Args, ctx: RequestContext| async move {
            let result = ctx
                .elicit(json!({
                    "message": "Pick options",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                            "titledSingle": { "type": "string", "oneOf": [
                                { "const": "value1", "title": "First Option" },
                                { "const": "value2", "title": "Second Option" },
                                { "const": "value3", "title": "Third Option" }
                            ] },
                            "legacyEnum": { "type": "string", "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"] },
                            "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                            "titledMulti": { "type": "array", "items": { "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" }
                            ] } }
                        }
                    }
                }))
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(elicitation_text(&result))
        })
        .with_description("Elicitation with every enum schema variant"),
    );
    t.add(
        Tool::from_json(
            "json_schema_2020_12_tool",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": { "address": { "$anchor": "addressDef", "type": "object", "properties": {
                    "street": { "type": "string" }, "city": { "type": "string" } } } },
                "properties": {
                    "name": { "type": "string" },
                    "address": { "$ref": "#/$defs/address" },
                    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                    "phone": { "type": "string" },
                    "email": { "type": "string" }
                },
                "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
                "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
                "then": { "required": ["phone"] },
                "else": { "required": ["email"] },
                "additionalProperties": false
            }),
            |args: Args, _| async move { Ok::<_, String>(Value::Object(args)) },
        )
        .with_description("Tool with JSON Schema 2020-12 features"),
    );
    t.add(
        Tool::from_json(
            "test_custom_headers",
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "x-mcp-header": "Region" },
                    "query": { "type": "string" }
                },
                "required": ["region"]
            }),
            |args: Args, _| async move {
                Ok::<_, String>(format!(
                    "region={}",
                    args.get("region")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                ))
            },
        )
        .with_description("Mirrors its region argument in the Mcp-Param-Region header"),
    );
}

/// The server, for the fixtures that change its lists.
static SERVER: std::sync::OnceLock<McpServer> = std::sync::OnceLock::new();

fn elicit_name(message: &str) -> Value {
    json!({ "message": message, "requestedSchema": { "type": "object",
        "properties": { "name": { "type": "string" } }, "required": ["name"] } })
}

fn answered_name(answer: &Value) -> String {
    answer["content"]["name"]
        .as_str()
        .unwrap_or("stranger")
        .to_owned()
}

fn sampling_params(prompt: &str) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }], "maxTokens": 100 })
}

/// The 2026-07-28 fixtures: capability checks, per-request logging, list-change triggers and
/// multi round-trip requests.
fn modern_tools(server: &McpServer) {
    let t = server.tools();
    t.add(
        Tool::from_json(
            "test_missing_capability",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx.create_message(sampling_params("Say hello")).await?;
                Ok::<_, ErrorObject>(format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                ))
            },
        )
        .with_description("Needs the sampling capability"),
    );
    t.add(
        Tool::from_json(
            "test_streaming_elicitation",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx
                    .input(
                        "user_name",
                        "elicitation/create",
                        elicit_name("What is your name?"),
                    )
                    .await?;
                Ok::<_, ErrorObject>(format!("Hello, {}!", answered_name(&answer)))
            },
        )
        .with_description("Asks for input without sending requests on the stream"),
    );
    t.add(
        Tool::from_json(
            "test_logging_tool",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                ctx.log(
                    LogLevel::Info,
                    Some("conformance"),
                    json!("logging tool ran"),
                );
                Ok::<_, String>("logged (when the request asked for a log level)")
            },
        )
        .with_description("Logs only when the request carries a logLevel"),
    );
    t.add(
        Tool::from_json(
            "test_trigger_tool_change",
            no_args(),
            |_: Args, _| async move {
                if let Some(server) = SERVER.get() {
                    server.tools().add(fixed(
                        "test_transient_tool",
                        "Added by test_trigger_tool_change",
                        ToolResult::text("transient"),
                    ));
                    server.notify_list_changed(ListKind::Tools);
                }
                Ok::<_, String>("tool list changed")
            },
        )
        .with_description("Changes the tool list"),
    );
    t.add(
        Tool::from_json(
            "test_trigger_prompt_change",
            no_args(),
            |_: Args, _| async move {
                if let Some(server) = SERVER.get() {
                    server.prompts().add(
                        Prompt::new("test_transient_prompt", |_, _| async {
                            Ok(GetPromptResult {
                                description: None,
                                messages: vec![user(Content::text("transient"))],
                            })
                        })
                        .with_description("Added by test_trigger_prompt_change"),
                    );
                    server.notify_list_changed(ListKind::Prompts);
                }
                Ok::<_, String>("prompt list changed")
            },
        )
        .with_description("Changes the prompt list"),
    );
    t.add(
        Tool::from_json(
            "test_input_required_result_elicitation",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx
                    .input(
                        "user_name",
                        "elicitation/create",
                        elicit_name("What is your name?"),
                    )
                    .await?;
                Ok::<_, ErrorObject>(format!("Hello, {}!", answered_name(&answer)))
            },
        )
        .with_description("Asks for the user's name"),
    );
    t.add(
        Tool::from_json(
            "test_input_required_result_sampling",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx
                    .input(
                        "llm_answer",
                        "sampling/createMessage",
                        sampling_params("What is the capital of France?"),
                    )
                    .await?;
                Ok::<_, ErrorObject>(format!(
                    "LLM says: {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                ))
            },
        )
        .with_description("Asks the client's LLM"),
    );
    t.add(
        Tool::from_json(
            "test_input_required_result_list_roots",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let answer = ctx.input("roots", "roots/list", json!({})).await?;
                Ok::<_, ErrorObject>(format!(
                    "{} roots",
                    answer["roots"].as_array().map_or(0, Vec::len)
                ))
            },
        )
        .with_description("Asks for the client's roots"),
    );
    for name in [
        "test_input_required_result_request_state",
        "test_input_required_result_tampered_state",
    ] {
        t.add(
            Tool::from_json(name, no_args(), |_: Args, ctx: RequestContext| async move {
                if ctx.request_state().is_none() {
                    ctx.set_request_state(json!({ "checkpoint": "state-ok" }));
                }
                let confirm = json!({ "message": "Please confirm", "requestedSchema": { "type": "object",
                    "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] } });
                ctx.input("confirm", "elicitation/create", confirm).await?;
                let state = ctx.request_state().and_then(|s| s["checkpoint"].as_str()).unwrap_or("no-state").to_owned();
                Ok::<_, ErrorObject>(state)
            })
            .with_description("Round-trips requestState"),
        );
    }
    t.add(
        Tool::from_json(
            "test_input_required_result_multiple_inputs",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                ctx.set_request_state(json!({ "inputs": 3 }));
                let (name, llm, roots) = futures::join!(
                    ctx.input(
                        "user_name",
                        "elicitation/create",
                        elicit_name("What is your name?")
                    ),
                    ctx.input(
                        "llm_answer",
                        "sampling/createMessage",
                        sampling_params("Say hi")
                    ),
                    ctx.input("roots", "roots/list", json!({})),
                );
                let (name, _llm, _roots) = (name?, llm?, roots?);
                Ok::<_, ErrorObject>(format!("All inputs received, {}", answered_name(&name)))
            },
        )
        .with_description("Asks for three inputs at once"),
    );
    t.add(
        Tool::from_json("test_input_required_result_multi_round", no_args(), |_: Args, ctx: RequestContext| async move {
            let round = ctx.request_state().and_then(|s| s["round"].as_u64()).unwrap_or(0);
            match round {
                0 => {
                    ctx.set_request_state(json!({ "round": 1 }));
                    ctx.input("step1", "elicitation/create", elicit_name("Step 1: What is your name?")).await?;
                    Err(ErrorObject::internal("unreachable: step1 is never answered in round 1"))
                }
                1 => {
                    let name = answered_name(&ctx.input("step1", "elicitation/create", elicit_name("Step 1: What is your name?")).await?);
                    ctx.set_request_state(json!({ "round": 2, "name": name }));
                    let color = json!({ "message": "Step 2: What is your favorite color?", "requestedSchema": { "type": "object",
                        "properties": { "color": { "type": "string" } }, "required": ["color"] } });
                    ctx.input("step2", "elicitation/create", color).await?;
                    Err(ErrorObject::internal("unreachable: step2 is never answered in round 2"))
                }
                _ => {
                    let color = json!({ "message": "Step 2: What is your favorite color?", "requestedSchema": { "type": "object",
                        "properties": { "color": { "type": "string" } }, "required": ["color"] } });
                    let answer = ctx.input("step2", "elicitation/create", color).await?;
                    let name = ctx.request_state().and_then(|s| s["name"].as_str()).unwrap_or_default().to_owned();
                    Ok(format!("{name} likes {}", answer["content"]["color"].as_str().unwrap_or("a color")))
                }
            }
        })
        .with_description("Three rounds with evolving requestState"),
    );
    t.add(
        Tool::from_json(
            "test_input_required_result_capabilities",
            no_args(),
            |_: Args, ctx: RequestContext| async move {
                let caps = ctx.client_capabilities.clone().unwrap_or_default();
                let wants_elicitation = caps.get("elicitation").is_some();
                let wants_sampling = caps.get("sampling").is_some();
                let (a, b) = futures::join!(
                    async {
                        if wants_elicitation {
                            ctx.input("user_name", "elicitation/create", elicit_name("Name?"))
                                .await
                                .map(Some)
                        } else {
                            Ok(None)
                        }
                    },
                    async {
                        if wants_sampling {
                            ctx.input(
                                "llm_answer",
                                "sampling/createMessage",
                                sampling_params("Hi"),
                            )
                            .await
                            .map(Some)
                        } else {
                            Ok(None)
                        }
                    },
                );
                let (_a, _b) = (a?, b?);
                Ok::<_, ErrorObject>("inputs for the declared capabilities received")
            },
        )
        .with_description("Only asks for what the client declared"),
    );
    server.prompts().add(
        Prompt::new("test_input_required_result_prompt", |_, ctx: RequestContext| async move {
            let ask = json!({ "message": "What context should the prompt use?", "requestedSchema": { "type": "object",
                "properties": { "context": { "type": "string" } }, "required": ["context"] } });
            let answer = ctx.input("user_context", "elicitation/create", ask).await?;
            let context = answer["content"]["context"].as_str().unwrap_or("none").to_owned();
            Ok(GetPromptResult { description: None, messages: vec![user(Content::text(format!("Use this context: {context}")))] })
        })
        .with_description("A prompt that needs input"),
    );
}

fn resources(server: &McpServer) {
    let r = server.resources();
    r.add(
        Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .with_description("A static text resource"),
    );
    r.add(
        Resource::new(
            "test://static-binary",
            "static-binary",
            |uri, _| async move { Ok(vec![ResourceContents::blob(uri, Some("image/png"), PNG)]) },
        )
        .with_mime_type("image/png")
        .with_description("A static binary resource"),
    );
    r.add(
        Resource::text(
            "test://watched-resource",
            "watched-resource",
            "text/plain",
            "Watched resource content.",
        )
        .with_description("A resource to subscribe to"),
    );
    r.add_template(
        ResourceTemplate::new(
            "test://template/{id}/data",
            "template",
            |uri, vars, _| async move {
                let id = vars
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let text =
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
                        .to_string();
                Ok(vec![ResourceContents::text(
                    uri,
                    Some("application/json"),
                    text,
                )])
            },
        )
        .with_mime_type("application/json")
        .with_description("A templated resource"),
    );
}

/// The Skills extension (SEP-2640): one skill with a supporting file in a subdirectory, so
/// `resources/directory/read` has a subdirectory to list.
fn skills(server: &McpServer) {
    let skill = Skill::new(
        "pdf-processing",
        "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\n---\n\n# PDF processing\n\nRead references/FORMS.md before filling a form.\n",
    )
    .and_then(|s| s.with_file("references/FORMS.md", "# Forms\n\nEvery field, in order.\n"))
    .expect("the fixture skill is valid");
    server.skills().add(skill);
}

fn user(content: Content) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

fn prompts(server: &McpServer) {
    let p = server.prompts();
    p.add(
        Prompt::new("test_simple_prompt", |_, _| async {
            Ok(GetPromptResult {
                description: None,
                messages: vec![user(Content::text("This is a simple prompt for testing."))],
            })
        })
        .with_description("A simple prompt"),
    );
    p.add(
        Prompt::new("test_prompt_with_arguments", |args, _| async move {
            let get = |k: &str| {
                args.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            let text = format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                get("arg1"),
                get("arg2")
            );
            Ok(GetPromptResult {
                description: None,
                messages: vec![user(Content::text(text))],
            })
        })
        .with_description("A prompt with arguments")
        .with_argument("arg1", "First test argument", true)
        .with_argument("arg2", "Second test argument", true),
    );
    p.add(
        Prompt::new("test_prompt_with_embedded_resource", |args, _| async move {
            let uri = args
                .get("resourceUri")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Ok(GetPromptResult {
                description: None,
                messages: vec![
                    user(embedded(
                        &uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    )),
                    user(Content::text("Please process the embedded resource above.")),
                ],
            })
        })
        .with_description("A prompt with an embedded resource")
        .with_argument("resourceUri", "URI of the resource to embed", true),
    );
    p.add(
        Prompt::new("test_prompt_with_image", |_, _| async {
            Ok(GetPromptResult {
                description: None,
                messages: vec![
                    user(Content::image(PNG, "image/png")),
                    user(Content::text("Please analyze the image above.")),
                ],
            })
        })
        .with_description("A prompt with an image"),
    );
}

async fn complete(params: Value, _: RequestContext) -> Result<Completion, ErrorObject> {
    let prefix = params["argument"]["value"].as_str().unwrap_or_default();
    let values: Vec<String> = ["test", "testing", "tested", "value1", "value2"]
        .iter()
        .filter(|v| v.starts_with(prefix))
        .map(|v| (*v).to_owned())
        .collect();
    Ok(Completion {
        total: Some(values.len() as u64),
        has_more: Some(false),
        values,
    })
}

/// The conformance fixture server.
pub fn conformance_server() -> McpServer {
    let options = ServerOptions::new("orkestrel-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .with_logging()
        .with_completer(complete)
        .with_tasks(TaskOptions::new());
    let server = McpServer::new(options);
    tools(&server);
    resources(&server);
    skills(&server);
    prompts(&server);
    modern_tools(&server);
    tasks_fixture::task_tools(&server);
    let _ = SERVER.set(server.clone());
    server
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3001".into())
        .parse()
        .map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("bad address: {e}"),
            )
        })?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "conformance server at http://{}/mcp",
        listener.local_addr()?
    );
    let options = EndpointOptions::for_bind(listener.local_addr()?);
    let endpoint = Endpoint::new(conformance_server(), options)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    http::serve(listener, endpoint, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}
