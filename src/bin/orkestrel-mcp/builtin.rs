//! The built-in example tools `orkestrel-mcp serve` exposes: `echo`, `add`, `fail`, `sleep`.

use std::time::Duration;

use orkestrel_mcp::{RequestContext, Structured, Tool, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct AddOutput {
    /// `a + b`.
    sum: Value,
}

#[derive(Deserialize, JsonSchema)]
struct FailArgs {
    /// The error message the tool fails with.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct ProgressArgs {
    /// How many steps to report.
    steps: u32,
    /// The pause before each step, in milliseconds.
    ms: u64,
}

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to wait, in milliseconds.
    ms: u64,
}

/// A number as JSON: integral values within ±2^53 as integers (`5`, not `5.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

/// Register the five example tools; with `tasks`, `sleep` and `progress` may run as tasks.
pub fn register(tools: &ToolRegistry, tasks: bool) {
    let task = |tool: Tool| match tasks {
        true => tool.with_task_support(orkestrel_mcp::protocol::TaskSupport::Optional),
        false => tool,
    };
    tools.add(
        Tool::new("echo", |args: EchoArgs| async move {
            Ok::<_, String>(args.text)
        })
        .with_description("Echo the text back as a text block."),
    );
    tools.add(
        Tool::new("add", |args: AddArgs| async move {
            let sum = args.a + args.b;
            if !sum.is_finite() {
                // JSON has no infinity: the schema's number would go out as null.
                return Err(format!(
                    "the sum of {} and {} is beyond the range of a JSON number",
                    args.a, args.b
                ));
            }
            let sum = number(sum);
            let mut result = Structured(AddOutput { sum: sum.clone() }).into_result();
            result.content = vec![orkestrel_mcp::Content::text(sum.to_string())];
            Ok::<_, String>(result)
        })
        .with_description("Add two numbers; the sum as text and as structuredContent {\"sum\": …}.")
        .with_output_schema::<AddOutputSchema>(),
    );
    tools.add(
        Tool::new("fail", |args: FailArgs| async move {
            Err::<ToolResult, _>(args.message)
        })
        .with_description("Fail with the given message (a tool result with isError: true)."),
    );
    tools.add(task(
        Tool::new("sleep", |args: SleepArgs| async move {
            tokio::time::sleep(Duration::from_millis(args.ms)).await;
            Ok::<_, String>(format!("slept {} ms", args.ms))
        })
        .with_description("Wait for `ms` milliseconds, then answer \"slept <ms> ms\"."),
    ));
    tools.add(task(
        Tool::with_context(
            "progress",
            |args: ProgressArgs, ctx: RequestContext| async move {
                let steps = args.steps.min(1000);
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(args.ms)).await;
                    let message = format!("step {step} of {steps}");
                    ctx.progress(f64::from(step), Some(f64::from(steps)), Some(&message));
                    ctx.log(
                        orkestrel_mcp::server::context::LogLevel::Info,
                        Some("progress"),
                        Value::String(message),
                    );
                }
                Ok::<_, String>(format!("done {steps} steps"))
            },
        )
        .with_description(
            "Count `steps` steps (at most 1000), `ms` milliseconds apart, sending a progress \
             notification (when the caller gave a progressToken) and a log message for each; \
             then answer \"done <steps> steps\".",
        ),
    ));
}

/// The output schema of `add`: `{ "sum": number }`.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct AddOutputSchema {
    /// `a + b`.
    sum: f64,
}

trait IntoResult {
    fn into_result(self) -> ToolResult;
}

impl<T: Serialize> IntoResult for Structured<T> {
    fn into_result(self) -> ToolResult {
        orkestrel_mcp::primitives::tools::IntoToolResult::into_tool_result(self)
    }
}

/// The text of the built-in resource `orkestrel://about`.
pub const ABOUT_TEXT: &str = "orkestrel-mcp: a Rust MCP server and client.";

/// Register the built-in resource (`orkestrel://about`, text), resource template
/// (`orkestrel://echo/{text}`: reads as its `text`) and prompt (`greet`, with a required `name`
/// argument: one user message "Please greet <name>.").
pub fn register_extras(server: &orkestrel_mcp::McpServer) {
    use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
    use orkestrel_mcp::primitives::resources::{Resource, ResourceContents, ResourceTemplate};
    server.resources().add(
        Resource::text("orkestrel://about", "about", "text/plain", ABOUT_TEXT)
            .with_description("What this server is."),
    );
    server.resources().add_template(
        ResourceTemplate::new("orkestrel://echo/{text}", "echo", |uri, vars, _ctx| {
            let text = vars
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            async move { Ok(vec![ResourceContents::text(uri, Some("text/plain"), text)]) }
        })
        .with_description("Reads as the text in its URI.")
        .with_mime_type("text/plain"),
    );
    server.prompts().add(
        Prompt::new("greet", |args, _ctx| {
            let name = args
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("world")
                .to_owned();
            async move {
                Ok(GetPromptResult {
                    description: Some("A greeting".into()),
                    messages: vec![PromptMessage {
                        role: Role::User,
                        content: orkestrel_mcp::Content::text(format!("Please greet {name}.")),
                    }],
                })
            }
        })
        .with_description("Ask for a greeting.")
        .with_argument("name", "Who to greet", true),
    );
}
