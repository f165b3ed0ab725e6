//! A tour of the client surface, for the client interop tests: connect to a server (an
//! `http(s)://` or `ws(s)://` URL, or a command after `--`), then list resources, read one, get a
//! prompt and call a tool that reports progress; print one JSON object with what came back.
//!
//! ```text
//! cargo run --features native --example client-tour -- URL|-- COMMAND... \
//!     (env: TOUR_RESOURCE, TOUR_PROMPT, TOUR_PROMPT_ARGS, TOUR_TOOL, TOUR_TOOL_ARGS)
//! ```
//!
//! Unset, they name what `orkestrel-mcp serve` offers: `orkestrel://about`, the prompt `greet`
//! (`{"name":"Ada"}`) and the tool `progress` (`{"steps":3,"ms":10}`).

use std::process::ExitCode;
use std::time::Duration;

use orkestrel_mcp::client::{ClientOptions, McpClient, RequestOptions};
use orkestrel_mcp::native::client::{transport_for, Target};
use serde_json::{json, Value};

/// The variable `name` as JSON, else `default` (unset or not JSON).
fn env_json(name: &str, default: Value) -> Value {
    std::env::var(name)
        .ok()
        .and_then(|v| serde_json::from_str(&v).ok())
        .unwrap_or(default)
}

/// The variable `name`, else `default`.
fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

async fn tour(target: Target) -> Result<Value, Box<dyn std::error::Error>> {
    let client = McpClient::with_transport(
        transport_for(&target)?,
        ClientOptions::new("client-tour", "1.0.0").with_timeout(Duration::from_secs(20)),
    );
    client.connect().await?;
    let resources = client.list_resources().await?;
    let uri = env_or("TOUR_RESOURCE", "orkestrel://about");
    let read = client.read_resource(&uri).await?;
    let prompts = client.list_prompts().await?;
    let prompt_name = env_or("TOUR_PROMPT", "greet");
    let prompt = client
        .get_prompt(
            &prompt_name,
            env_json("TOUR_PROMPT_ARGS", json!({"name": "Ada"})),
        )
        .await?;
    let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let p = progress.clone();
    let options = RequestOptions::default()
        .on_progress(move |update| {
            p.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(json!([update.progress, update.total]))
        })
        .reset_timeout_on_progress(Duration::from_secs(60));
    let tool = env_or("TOUR_TOOL", "progress");
    let result = client
        .call_with(
            &tool,
            env_json("TOUR_TOOL_ARGS", json!({"steps": 3, "ms": 10})),
            options,
        )
        .await?;
    client.disconnect().await;
    let progress = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(json!({
        "resources": resources.iter().map(|r| r["uri"].clone()).collect::<Vec<_>>(),
        "read": read["contents"][0]["text"],
        "prompts": prompts.iter().map(|p| p["name"].clone()).collect::<Vec<_>>(),
        "prompt": prompt["messages"][0]["content"]["text"],
        "result": result,
        "progress": progress,
    }))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = match args.split_first() {
        Some((first, rest)) if first == "--" => Target::Command(rest.to_vec()),
        Some((url, _)) => match Target::from_url(url) {
            Ok(target) => target,
            Err(e) => {
                eprintln!("client-tour: {e}");
                return ExitCode::from(2);
            }
        },
        None => {
            eprintln!("usage: client-tour URL | client-tour -- COMMAND...");
            return ExitCode::from(2);
        }
    };
    match tokio::time::timeout(Duration::from_secs(60), tour(target)).await {
        Ok(Ok(summary)) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("client-tour: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("client-tour: timed out");
            ExitCode::FAILURE
        }
    }
}
