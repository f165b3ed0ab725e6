//! `bridge --config FILE`: the `mcpServers` JSON that desktop MCP hosts use, read into upstream
//! specs.
//!
//! ```json
//! { "mcpServers": {
//!     "files":   { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//!                  "env": { "TOKEN": "${FILES_TOKEN}" }, "cwd": "/tmp" },
//!     "weather": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${WEATHER_TOKEN}" },
//!                  "allow": ["forecast"], "ignore": [] } } }
//! ```
//!
//! `${VAR}` in `env` and `headers` values is replaced by our environment's `VAR` (a missing one
//! is an error). A child gets only a few of our variables (`PATH`, `HOME`, `USER`, `LANG`, …)
//! plus its `env`. `disabled: true` leaves a server out. `type` (`stdio`, `http`,
//! `streamable-http`, `ws`) is checked against the entry's shape; `sse` (the retired HTTP+SSE
//! transport) is refused. Keys of other hosts (`autoApprove`, `timeout`, …) are reported and
//! left unused.

use std::path::PathBuf;

use orkestrel_mcp::gateway::NameFilter;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The variables of ours a stdio child inherits (besides its configured `env`).
const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
    "SYSTEMROOT",
    "APPDATA",
    "USERPROFILE",
];

/// How to reach one upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// A stdio child.
    Command {
        /// The program and its arguments.
        argv: Vec<String>,
        /// Its whole environment (`None`: ours).
        env: Option<Vec<(String, String)>>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP or WebSocket URL, with extra headers.
    Url {
        /// The URL.
        url: String,
        /// Headers sent with each request (the WebSocket handshake).
        headers: Vec<(String, String)>,
    },
}

impl Reach {
    /// What `/status` shows of it: the program, or the URL without its query (no arguments,
    /// headers or environment, which may hold secrets).
    pub fn shown(&self) -> String {
        match self {
            Reach::Command { argv, .. } => argv.first().cloned().unwrap_or_default(),
            Reach::Url { url, .. } => {
                let url = url.split(['?', '#']).next().unwrap_or_default();
                // No `user:password@` either.
                match url.split_once("://") {
                    Some((scheme, rest)) => {
                        let authority_end = rest.find('/').unwrap_or(rest.len());
                        let rest = match rest[..authority_end].rfind('@') {
                            Some(at) => &rest[at + 1..],
                            None => rest,
                        };
                        format!("{scheme}://{rest}")
                    }
                    None => url.to_owned(),
                }
            }
        }
    }
}

/// One configured upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Its name: the path `/servers/NAME/mcp` and the prefix `NAME` + separator.
    pub name: String,
    /// How to reach it.
    pub reach: Reach,
    /// Which of its names are re-served.
    pub filter: NameFilter,
    /// The entry's keys this gateway does not use (logged as a warning).
    pub unused: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(rename = "mcpServers")]
    mcp_servers: Servers,
}

/// The `mcpServers` object, in order; a name given twice is refused (a JSON object would keep
/// the last silently).
struct Servers(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Servers {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = Servers;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of servers by name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Servers, A::Error> {
                let mut servers: Vec<(String, Value)> = Vec::new();
                while let Some((name, entry)) = map.next_entry::<String, Value>()? {
                    if servers.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "server {name:?} is named twice"
                        )));
                    }
                    servers.push((name, entry));
                }
                Ok(Servers(servers))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    env: Option<Map<String, Value>>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    headers: Option<Map<String, Value>>,
    allow: Option<Vec<String>>,
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    disabled: bool,
    /// Keys of other hosts (`autoApprove`, `timeout`, …) or typos: reported, not used.
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// Read the config text; `lookup` resolves `${VAR}`.
///
/// # Errors
/// A message naming the server and what is wrong with it.
pub fn parse(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Spec>, String> {
    // A byte order mark (editors on Windows write one) is not part of the JSON text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let file: File = serde_json::from_str(text)
        .map_err(|e| format!("the config is not an mcpServers file: {e}"))?;
    let mut specs = Vec::new();
    for (name, entry) in file.mcp_servers.0 {
        let entry: Entry =
            serde_json::from_value(entry).map_err(|e| format!("server {name}: {e}"))?;
        if !valid_name(&name) {
            return Err(format!(
                "server name {name:?}: use letters, digits, `-` and `_` (it is a URL path and a name prefix)"
            ));
        }
        if entry.disabled {
            continue;
        }
        let at = |what: &str| format!("server {name}: {what}");
        let reach = match (entry.command, entry.url) {
            (Some(_), Some(_)) => return Err(at("give `command` or `url`, not both")),
            (None, None) => return Err(at("give `command` (stdio) or `url` (HTTP, WebSocket)")),
            (Some(command), None) => {
                if !matches!(entry.kind.as_deref(), None | Some("stdio")) {
                    return Err(at(&format!(
                        "type {:?} does not go with `command`",
                        entry.kind.unwrap_or_default()
                    )));
                }
                if entry.headers.is_some() {
                    return Err(at("`headers` go with `url`, not `command`"));
                }
                let mut env: Vec<(String, String)> = INHERITED
                    .iter()
                    .filter_map(|k| lookup(k).map(|v| ((*k).to_owned(), v)))
                    .collect();
                for (key, value) in
                    pairs(entry.env, lookup).map_err(|e| at(&format!("env: {e}")))?
                {
                    env.retain(|(k, _)| *k != key);
                    env.push((key, value));
                }
                if command.trim().is_empty() {
                    return Err(at("`command` is empty"));
                }
                let mut argv = vec![command];
                argv.extend(entry.args);
                Reach::Command {
                    argv,
                    env: Some(env),
                    cwd: entry.cwd,
                }
            }
            (None, Some(url)) => {
                match entry.kind.as_deref() {
                    None | Some("http" | "streamable-http" | "streamableHttp" | "ws" | "websocket") => {}
                    Some("sse") => {
                        return Err(at("type sse (the retired HTTP+SSE transport) is not supported: use the server's Streamable HTTP URL"))
                    }
                    Some(other) => return Err(at(&format!("unknown type {other:?}"))),
                }
                if entry.env.is_some() || entry.cwd.is_some() || !entry.args.is_empty() {
                    return Err(at("`args`, `env` and `cwd` go with `command`, not `url`"));
                }
                orkestrel_mcp::native::client::Target::from_url(&url)
                    .map_err(|e| at(&e.to_string()))?;
                let headers =
                    pairs(entry.headers, lookup).map_err(|e| at(&format!("headers: {e}")))?;
                for (name, value) in &headers {
                    if hyper::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                        || hyper::header::HeaderValue::from_str(value).is_err()
                    {
                        return Err(at(&format!("headers: {name:?} is not a valid HTTP header")));
                    }
                }
                Reach::Url { url, headers }
            }
        };
        specs.push(Spec {
            name,
            reach,
            filter: NameFilter {
                allow: entry.allow,
                ignore: entry.ignore,
            },
            unused: entry.other.keys().cloned().collect(),
        });
    }
    if specs.is_empty() {
        return Err("the config names no enabled server".into());
    }
    Ok(specs)
}

/// Whether `name` is usable as a path segment and a prefix.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A JSON object of strings, with `${VAR}` expanded.
fn pairs(
    map: Option<Map<String, Value>>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    map.unwrap_or_default()
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => expand(&s, lookup).map(|s| (k, s)),
            other => Err(format!("{k} is {other}, not a string")),
        })
        .collect()
}

/// `text` with each `${VAR}` replaced by its value.
fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("an unclosed ${{ in {text:?}"))?;
        let var = &after[..end];
        out.push_str(&lookup(var).ok_or_else(|| format!("the environment has no {var}"))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(key: &str) -> Option<String> {
        match key {
            "PATH" => Some("/bin".into()),
            "TOKEN" => Some("s3cret".into()),
            _ => None,
        }
    }

    #[test]
    fn a_command_and_a_url_entry_read_with_variables_expanded() {
        let text = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "x"], "env": {"KEY": "k-${TOKEN}"}, "cwd": "/tmp"},
            "web": {"type": "http", "url": "http://h/mcp?k=1", "headers": {"Authorization": "Bearer ${TOKEN}"}, "allow": ["a"], "ignore": ["b"]},
            "off": {"command": "x", "disabled": true}}}"#;
        let specs = parse(text, &env).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(
            specs[0].reach,
            Reach::Command {
                argv: vec!["npx".into(), "-y".into(), "x".into()],
                env: Some(vec![
                    ("PATH".into(), "/bin".into()),
                    ("KEY".into(), "k-s3cret".into())
                ]),
                cwd: Some("/tmp".into()),
            }
        );
        assert_eq!(
            specs[1].reach,
            Reach::Url {
                url: "http://h/mcp?k=1".into(),
                headers: vec![("Authorization".into(), "Bearer s3cret".into())]
            }
        );
        assert_eq!(specs[1].reach.shown(), "http://h/mcp");
        let with_userinfo = Reach::Url {
            url: "https://u:pw@h:1/p?t=s".into(),
            headers: Vec::new(),
        };
        assert_eq!(with_userinfo.shown(), "https://h:1/p");
        assert!(
            specs[1].filter.admits("a")
                && !specs[1].filter.admits("b")
                && !specs[1].filter.admits("c")
        );
        let other = parse(
            r#"{"mcpServers": {"s": {"command": "x", "autoApprove": []}}}"#,
            &env,
        )
        .unwrap();
        assert_eq!(other[0].unused, ["autoApprove"]);
        // A byte order mark before the JSON is not part of it (it was refused).
        let with_bom = format!("\u{feff}{text}");
        assert_eq!(parse(&with_bom, &env).unwrap(), specs);
    }

    #[test]
    fn bad_entries_are_refused_naming_the_server() {
        let cases = [
            (
                r#"{"mcpServers": {"a b": {"command": "x"}}}"#,
                "server name",
            ),
            (r#"{"mcpServers": {"s": {}}}"#, "server s: give `command`"),
            (
                r#"{"mcpServers": {"s": {"command": "x", "url": "http://h"}}}"#,
                "not both",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "sse", "url": "http://h"}}}"#,
                "not supported",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "env": {"A": "${NOPE}"}}}}"#,
                "has no NOPE",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "env": {"A": 1}}}}"#,
                "not a string",
            ),
            (r#"{"mcpServers": {}}"#, "no enabled server"),
            (
                r#"{"mcpServers": {"x": {"command": "a"}, "x": {"command": "b"}}}"#,
                "named twice",
            ),
            (
                r#"{"mcpServers": {"s": {"command": " "}}}"#,
                "`command` is empty",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "ftp://h/mcp"}}}"#,
                "server s:",
            ),
            // No host: it was retried forever.
            (
                r#"{"mcpServers": {"s": {"url": "http://"}}}"#,
                "names no host",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "ws:///mcp"}}}"#,
                "names no host",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h", "headers": {"a b": "x"}}}}"#,
                "not a valid HTTP header",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h", "headers": {"A": "x\ny"}}}}"#,
                "not a valid HTTP header",
            ),
            ("[]", "not an mcpServers file"),
        ];
        for (text, want) in cases {
            let error = parse(text, &env).unwrap_err();
            assert!(error.contains(want), "{text}: {error}");
        }
    }
}
