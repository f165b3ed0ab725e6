//! The client commands: `tools` and `call` (`skills` is in `skills.rs`, `bridge` in `bridge.rs`).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use orkestrel_mcp::client::{ClientEra, ClientOptions, McpClient, RequestOptions};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use orkestrel_mcp::native::client::Target;
use orkestrel_mcp::native::terminal::{escape_controls, escape_controls_json};
use orkestrel_mcp::ClientTransport;
use serde_json::Value;

use super::error::CliError;

/// A count or a duration that must be 1 or more (`--timeout`, `--max-connections`): 0 would
/// fail every request or refuse every connection.
pub(crate) fn at_least_one<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr + From<u8> + PartialEq,
{
    match text.parse::<T>() {
        Ok(n) if n != T::from(0) => Ok(n),
        _ => Err(format!("{text:?} is not a whole number of 1 or more")),
    }
}

/// Connection options shared by the client commands.
#[derive(Args, Clone)]
pub struct ConnectArgs {
    /// An extra HTTP / WebSocket handshake header, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// The per-request deadline in milliseconds (with --sign-in 300000 unless given, as for
    /// `login`: a browser sign-in happens within the request that needed it) [default: 30000].
    #[arg(long, value_name = "MS", value_parser = at_least_one::<u64>)]
    pub(crate) timeout: Option<u64>,
    /// The protocol era: `auto` probes with `server/discover` and falls back to the
    /// `initialize` handshake; `modern` speaks 2026-07-28 only; `legacy` only the handshake.
    #[arg(long, value_name = "auto|legacy|modern", default_value = "auto")]
    pub(crate) era: ClientEra,
    #[command(flatten)]
    pub(crate) oauth: super::sign_in::OAuthArgs,
}

impl ConnectArgs {
    /// The per-request deadline in milliseconds: `--timeout`, else 30 s, or with `--sign-in`
    /// the sign-in's own bound ([`orkestrel_mcp::client::oauth::SIGN_IN_TIMEOUT`]) — a sign-in
    /// the server asks for mid-request (the `initialize`'s `401`) counted against 30 s.
    pub(crate) fn timeout_ms(&self) -> u64 {
        let sign_in = orkestrel_mcp::client::oauth::SIGN_IN_TIMEOUT.as_millis();
        self.timeout.unwrap_or(if self.oauth.sign_in {
            u64::try_from(sign_in).unwrap_or(u64::MAX)
        } else {
            30_000
        })
    }

    /// The OAuth authorizer toward `url` (see [`super::sign_in::OAuthArgs::authorizer`]).
    ///
    /// # Errors
    /// As that.
    pub(crate) fn authorizer(
        &self,
        url: &str,
    ) -> Result<Option<orkestrel_mcp::native::client::oauth::OAuthClient>, CliError> {
        self.oauth.authorizer(url, false)
    }
}

#[derive(Args)]
pub struct ToolsArgs {
    /// The server URL (http, https, ws, wss); omit it and give `-- COMMAND [ARGS…]` instead.
    url: Option<String>,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The stdio server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Args)]
pub struct CallArgs {
    /// `URL TOOL`, or just `TOOL` when the server is a command after `--`.
    #[arg(required = true, num_args = 1..=2, value_name = "URL|TOOL")]
    positionals: Vec<String>,
    /// The tool arguments as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Print the whole `tools/call` result instead of its value.
    #[arg(long)]
    raw: bool,
    /// Call the tool as a task: print the task's id and each status it reaches on stderr, then
    /// its value (2025-11-25 `params.task`; 2026-07-28 the `io.modelcontextprotocol/tasks`
    /// extension, where the server may still run the tool plain).
    #[arg(long)]
    task: bool,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The stdio server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub(crate) fn target(url: Option<&str>, command: &[String]) -> Result<Target, String> {
    match (url, command.is_empty()) {
        (Some(_), false) => Err("give either a URL or `-- COMMAND`, not both".into()),
        (Some(url), true) => Target::from_url(url).map_err(|e| e.to_string()),
        (None, false) => Ok(Target::Command(command.to_vec())),
        (None, true) => Err("missing target: a URL, or `-- COMMAND [ARGS…]`".into()),
    }
}

pub(crate) fn headers(raw: &[String]) -> Result<Vec<(String, String)>, String> {
    raw.iter()
        .map(|h| {
            h.split_once(':')
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| format!("bad header {h:?}: expected `Name: value`"))
        })
        .collect()
}

fn transport(target: &Target, connect: &ConnectArgs) -> Result<Arc<dyn ClientTransport>, CliError> {
    let headers = headers(&connect.headers).map_err(CliError::Usage)?;
    // A bad URL or header is `ClientError::InvalidArguments`: a usage error.
    Ok(match target {
        Target::Http(url) => {
            let mut options = HttpClientOptions::new(url);
            options.headers = headers;
            let transport = HttpTransport::new(options)?;
            if let Some(authorizer) = connect.authorizer(url)? {
                transport.set_authorizer(Arc::new(authorizer));
            }
            Arc::new(transport)
        }
        Target::WebSocket(url) => {
            let mut options = WsClientOptions::new(url);
            options.headers = headers;
            Arc::new(WsTransport::new(options)?)
        }
        Target::Command(argv) => {
            let (command, args) = argv
                .split_first()
                .ok_or_else(|| CliError::usage("an empty command"))?;
            let mut options = StdioClientOptions::new(command).with_args(args.iter().cloned());
            options.escape_stderr = true;
            Arc::new(StdioTransport::new(options))
        }
    })
}

pub(crate) fn client_options(timeout_ms: u64, era: ClientEra) -> ClientOptions {
    ClientOptions::new("orkestrel-mcp", env!("CARGO_PKG_VERSION"))
        .with_timeout(Duration::from_millis(timeout_ms))
        .with_era(era)
}

pub(crate) async fn connected(
    target: &Target,
    connect: &ConnectArgs,
) -> Result<McpClient, CliError> {
    let client = McpClient::with_transport(
        transport(target, connect)?,
        client_options(connect.timeout_ms(), connect.era),
    );
    client.connect().await?;
    Ok(client)
}

pub(crate) fn print_json(value: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    // serde_json escapes C0 controls; DEL, C1 and bidi controls are escaped here.
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", escape_controls_json(&text)).and_then(|()| out.flush()) {
        // The reader went away (`… | head`): what it read was what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write to stdout: {e}")),
        Ok(()) => Ok(()),
    }
}

/// `tools TARGET`: the descriptors as a JSON array.
pub async fn tools(args: ToolsArgs) -> Result<(), CliError> {
    let target = target(args.url.as_deref(), &args.command).map_err(CliError::Usage)?;
    let client = connected(&target, &args.connect).await?;
    let listed = client.list_tools().await;
    client.disconnect().await;
    let listed = listed?;
    Ok(print_json(
        &serde_json::to_value(listed).map_err(|e| e.to_string())?,
    )?)
}

/// `call TARGET TOOL [--args JSON]`: the value (or with `--raw` the whole result).
pub async fn call(args: CallArgs) -> Result<(), CliError> {
    let (url, tool) = match (args.positionals.as_slice(), args.command.is_empty()) {
        ([tool], false) => (None, tool.clone()),
        ([url, tool], true) => (Some(url.as_str()), tool.clone()),
        ([_], true) => {
            return Err(CliError::usage(
                "missing the tool name (or the `-- COMMAND` target)",
            ))
        }
        _ => {
            return Err(CliError::usage(
                "with `-- COMMAND`, give only the tool name before it",
            ))
        }
    };
    let arguments: Value = serde_json::from_str(&args.args)
        .map_err(|e| CliError::usage(format!("--args is not JSON: {e}")))?;
    if !arguments.is_object() {
        return Err(CliError::usage(format!(
            "--args must be a JSON object, e.g. '{{\"text\":\"hi\"}}', not {}",
            json_kind(&arguments)
        )));
    }
    let target = target(url, &args.command).map_err(CliError::Usage)?;
    let client = connected(&target, &args.connect).await?;
    let result = if args.task {
        call_as_task(&client, &tool, arguments).await
    } else {
        let options = RequestOptions::default().on_progress(show_progress);
        client.call_tool_with(&tool, arguments, options).await
    };
    client.disconnect().await;
    let result = result?;
    if args.raw {
        let failed = result.is_error();
        print_json(&serde_json::to_value(&result).map_err(|e| e.to_string())?)?;
        return if failed {
            Err(CliError::Runtime(format!("tool {tool} failed")))
        } else {
            Ok(())
        };
    }
    let value = orkestrel_mcp::client::result_value(result)?;
    Ok(print_json(&value.unwrap_or(Value::Null))?)
}

/// A progress notification of the call, on stderr: `progress 2/5: step 2 of 5` (the total and
/// the message when the server sends them; the server's text with its control characters
/// escaped, so it cannot drive the terminal).
fn show_progress(p: &orkestrel_mcp::client::Progress) {
    let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
    match &p.message {
        Some(message) => eprintln!(
            "progress {}{total}: {}",
            p.progress,
            escape_controls(message)
        ),
        None => eprintln!("progress {}{total}", p.progress),
    }
}

/// What kind of JSON value `value` is, for a message.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `call --task`: the task's statuses on stderr as they change, then its result.
async fn call_as_task(
    client: &McpClient,
    tool: &str,
    arguments: Value,
) -> Result<orkestrel_mcp::ToolResult, orkestrel_mcp::ClientError> {
    use orkestrel_mcp::client::{TaskInfo, ToolCall};
    let task = match client.call_tool_as_task(tool, arguments, None).await? {
        ToolCall::Result(result) => {
            eprintln!("the server ran {tool} without a task");
            return Ok(result);
        }
        ToolCall::Task(task) => task,
    };
    // The server's task id and message with their control characters escaped.
    let show = |t: &TaskInfo| {
        let id = escape_controls(&t.task_id);
        match &t.status_message {
            Some(message) => eprintln!(
                "task {id}: {} ({})",
                t.status.as_str(),
                escape_controls(message)
            ),
            None => eprintln!("task {id}: {}", t.status.as_str()),
        }
    };
    show(&task);
    let last = std::sync::Mutex::new(task.status);
    client
        .wait_task(&task, &|t| {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if *last != t.status {
                *last = t.status;
                show(t);
            }
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::ConnectArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Connect {
        #[command(flatten)]
        connect: ConnectArgs,
    }

    fn timeout_of(args: &[&str]) -> u64 {
        let argv = std::iter::once("t").chain(args.iter().copied());
        Connect::try_parse_from(argv).unwrap().connect.timeout_ms()
    }

    /// The deadline is 30 s, `--timeout` when given, and with `--sign-in` the sign-in's own
    /// 300 s: a sign-in the server asks for on `initialize` happens within that request, and
    /// failed at 30 s.
    #[test]
    fn a_sign_in_gets_the_sign_in_bound_unless_a_timeout_is_given() {
        assert_eq!(timeout_of(&[]), 30_000);
        assert_eq!(timeout_of(&["--timeout", "5"]), 5);
        assert_eq!(timeout_of(&["--sign-in"]), 300_000);
        assert_eq!(timeout_of(&["--sign-in", "--timeout", "5"]), 5);
    }
}
