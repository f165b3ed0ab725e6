//! `skills TARGET`: a server's skills (the Skills extension, SEP-2640) — the entries as JSON,
//! or one skill loaded and verified (`--load URI`), or one of its files (`--file PATH`).

use std::io::Write;

use clap::Args;
use orkestrel_mcp::native::terminal::escape_controls;

use super::client::{connected, print_json, target, ConnectArgs};
use super::error::CliError;

#[derive(Args)]
pub struct SkillsArgs {
    /// The server URL (http, https, ws, wss); omit it and give `-- COMMAND [ARGS…]` instead.
    url: Option<String>,
    /// Load the skill whose SKILL.md is at URI (fetched with skills/get, so an unlisted skill
    /// loads too) and print its SKILL.md once its size, digest and frontmatter are verified.
    #[arg(long, value_name = "URI")]
    load: Option<String>,
    /// With --load: print this file of the skill instead (a path relative to the skill's
    /// root, e.g. references/FORMS.md, or a full URI), once its size and digest are verified.
    #[arg(long, value_name = "PATH", requires = "load")]
    file: Option<String>,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The stdio server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `skills TARGET`: the entries (`skills/list`, all pages) as a JSON array, no file fetched;
/// `--load URI [--file PATH]`: one verified file on stdout (a failed verification is an error
/// naming the file and what differs, and nothing is printed).
pub async fn skills(args: SkillsArgs) -> Result<(), CliError> {
    let target = target(args.url.as_deref(), &args.command).map_err(CliError::Usage)?;
    let client = connected(&target, &args.connect).await?;
    let outcome = run(&client, &args).await;
    client.disconnect().await;
    match outcome? {
        Output::Entries(entries) => print_json(&entries)?,
        Output::Bytes(bytes) => {
            // To a terminal, text is written with its controls escaped; to a file or a pipe, the
            // verified bytes as they are.
            let mut out = std::io::stdout().lock();
            match std::str::from_utf8(&bytes) {
                Ok(text) if std::io::IsTerminal::is_terminal(&out) => {
                    out.write_all(escape_controls(text).as_bytes())
                }
                _ => out.write_all(&bytes),
            }
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write to stdout: {e}"))?
        }
    }
    Ok(())
}

enum Output {
    Entries(serde_json::Value),
    Bytes(Vec<u8>),
}

async fn run(client: &orkestrel_mcp::McpClient, args: &SkillsArgs) -> Result<Output, CliError> {
    let Some(uri) = &args.load else {
        let entries = client.list_skills().await?;
        return Ok(serde_json::to_value(entries)
            .map(Output::Entries)
            .map_err(|e| e.to_string())?);
    };
    let entry = client.get_skill(uri).await?;
    let loaded = client.load_skill(&entry).await?;
    match &args.file {
        None => Ok(Output::Bytes(loaded.skill_md.into_bytes())),
        Some(path) => Ok(client
            .read_skill_file(&entry, path)
            .await
            .map(Output::Bytes)?),
    }
}
