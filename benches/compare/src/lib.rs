//! Shared pieces of the side-by-side benchmarks (issue 7): the request bytes, the same servers
//! built on orkestrel-mcp and on rmcp, the serde floor, and a check of every reply body.
//!
//! ```text
//!  benches/inprocess.rs   criterion: handle(tools/call echo), handle(tools/list, 100 tools)
//!                         ours vs serde floor vs rmcp (same bytes in, bytes out)
//!  src/bin/bench-ours     our library: Streamable HTTP (stateless, JSON) or stdio
//!  src/bin/bench-rmcp     rmcp: Streamable HTTP (stateless, JSON) or stdio / stdio_pipes
//!  src/bin/bench-floor    bare hyper answering a fixed JSON body, or a plain serde line loop
//!  src/bin/loadgen        HTTP load generator: N keep-alive connections, every body checked
//!  src/bin/stdio-driver   one stdio client for every server: pipelined or sequential
//!  src/bin/wsload         WebSocket: one socket, N in flight, every reply checked
//!  src/bin/memprobe       RSS per idle session / idle WebSocket connection (1,000 of them)
//!  src/bin/soak           soak and fault load for ../soak.sh (all transports, both eras)
//!  src/bin/profile-route  the core's HTTP route in process (no sockets), for profilers
//!  ../run.sh              builds, pins (taskset), runs both orders, prints one ratio table
//! ```

use std::sync::Arc;

use orkestrel_mcp::{McpServer, ServerOptions, Tool, ToolRegistry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod rmcp_server;
pub mod ws;

/// The text the echo tool is called with, and must answer.
pub const ECHO_TEXT: &str = "hello";

/// A `tools/call` of the echo tool, id 1.
pub const ECHO_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;

/// A `tools/list`, id 1.
pub const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// The fixed body of the bare hyper floor: what a server answers to [`ECHO_CALL`].
pub const FLOOR_REPLY: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}"#;

/// How many tools the `tools/list` benchmark registers (echo plus fillers).
pub const LIST_TOOLS: usize = 100;

/// The echo tool's arguments (the same schema on both servers).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// The `initialize` request every stdio run starts with (id 0).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"orkestrel-mcp-bench","version":"0"}}}"#;

/// The `notifications/initialized` notification sent after `initialize`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A `tools/call` of echo with this id (the load generators vary the id per request).
pub fn echo_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}}}}}}"#
    )
}

/// The name of filler tool `i` (for the 100-tool list).
pub fn filler_name(i: usize) -> String {
    format!("tool_{i:03}")
}

/// The description of filler tool `i`.
pub fn filler_description(i: usize) -> String {
    format!("Filler tool number {i} of the tools/list benchmark; it echoes its text back.")
}

/// Our server: `echo`, plus `fillers` more tools of the same shape.
pub fn ours(fillers: usize) -> McpServer {
    let tools = Arc::new(ToolRegistry::new());
    tools.add(
        Tool::new("echo", |args: EchoArgs| async move {
            Ok::<_, String>(args.text)
        })
        .with_description("Echo the text back."),
    );
    for i in 0..fillers {
        tools.add(
            Tool::new(filler_name(i), |args: EchoArgs| async move {
                Ok::<_, String>(args.text)
            })
            .with_description(filler_description(i)),
        );
    }
    McpServer::new(ServerOptions::new("orkestrel-mcp-bench", "0.0.0").with_tools(tools))
}

/// A JSON-RPC success reply borrowing its parts (what the floors serialize).
#[derive(Serialize)]
struct Reply<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: R,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a Value,
}

#[derive(Serialize)]
struct CallResult<'a> {
    content: [TextContent<'a>; 1],
}

#[derive(Serialize)]
struct ListResult<'a> {
    tools: &'a Value,
}

/// The serde floor for a `tools/call`: parse the request bytes, pick id and text, serialize the
/// reply bytes. What any JSON-RPC server must at least do.
pub fn floor_call(bytes: &[u8]) -> Vec<u8> {
    let request: Value = serde_json::from_slice(bytes).expect("the floor gets valid JSON");
    let text = request
        .pointer("/params/arguments/text")
        .unwrap_or(&Value::Null);
    let reply = Reply {
        jsonrpc: "2.0",
        id: request.get("id").unwrap_or(&Value::Null),
        result: CallResult {
            content: [TextContent { kind: "text", text }],
        },
    };
    serde_json::to_vec(&reply).expect("values serialize")
}

/// The serde floor for `tools/list`: parse the request bytes, serialize the same 100
/// descriptors (prebuilt as one JSON value, borrowed) around its id.
pub fn floor_list(bytes: &[u8], tools: &Value) -> Vec<u8> {
    let request: Value = serde_json::from_slice(bytes).expect("the floor gets valid JSON");
    let reply = Reply {
        jsonrpc: "2.0",
        id: request.get("id").unwrap_or(&Value::Null),
        result: ListResult { tools },
    };
    serde_json::to_vec(&reply).expect("values serialize")
}

/// Why a reply body failed the check.
#[derive(Debug)]
pub struct BadReply(pub String);

/// Check one echo reply: JSON (or one SSE `data:` event carrying JSON), `result.content[0].text`
/// equal to [`ECHO_TEXT`], and, when `id` is given, the same id.
pub fn check_echo_reply(body: &[u8], id: Option<u64>) -> Result<(), BadReply> {
    let json = sse_data(body).unwrap_or(body);
    let value: Value = serde_json::from_slice(json)
        .map_err(|e| BadReply(format!("not JSON ({e}): {}", String::from_utf8_lossy(body))))?;
    let text = value
        .pointer("/result/content/0/text")
        .and_then(Value::as_str);
    if text != Some(ECHO_TEXT) {
        return Err(BadReply(format!(
            "no echo text: {}",
            String::from_utf8_lossy(body)
        )));
    }
    if let Some(id) = id {
        if value.get("id").and_then(Value::as_u64) != Some(id) {
            return Err(BadReply(format!("wanted id {id}: {value}")));
        }
    }
    Ok(())
}

/// The payload of the last `data:` line of an SSE body, if it is one.
fn sse_data(body: &[u8]) -> Option<&[u8]> {
    let text = std::str::from_utf8(body).ok()?;
    if !(text.starts_with("event:") || text.starts_with("data:") || text.starts_with("id:")) {
        return None;
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .map(str::as_bytes)
}

/// One `POST` of a JSON body on a keep-alive HTTP/1.1 connection (with `mcp-session-id` when
/// given); the status, headers and whole body.
pub async fn post_json(
    sender: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    addr: &str,
    path: &str,
    body: String,
    session: Option<&str>,
) -> Result<(hyper::StatusCode, hyper::HeaderMap, bytes::Bytes), String> {
    post_json_in(sender, addr, path, body, session, PROTOCOL_VERSION).await
}

/// The protocol version the load generators speak unless told otherwise.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// [`post_json`] with `MCP-Protocol-Version: {version}`.
pub async fn post_json_in(
    sender: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    addr: &str,
    path: &str,
    body: String,
    session: Option<&str>,
    version: &str,
) -> Result<(hyper::StatusCode, hyper::HeaderMap, bytes::Bytes), String> {
    use http_body_util::BodyExt;
    let mut request = hyper::Request::builder()
        .method(hyper::Method::POST)
        .uri(path)
        .header(hyper::header::HOST, addr)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((parts.status, parts.headers, body))
}

/// Check an `initialize` reply: JSON (or SSE carrying JSON) with id 0 and a `result` naming a
/// `protocolVersion`.
pub fn check_initialize_reply(body: &[u8]) -> Result<(), BadReply> {
    let json = sse_data(body).unwrap_or(body);
    let value: Value = serde_json::from_slice(json)
        .map_err(|e| BadReply(format!("not JSON ({e}): {}", String::from_utf8_lossy(body))))?;
    if value.get("id").and_then(Value::as_u64) != Some(0)
        || value.pointer("/result/protocolVersion").is_none()
    {
        return Err(BadReply(format!("not an initialize result: {value}")));
    }
    Ok(())
}

/// Open an MCP session on a connection as a client does: `initialize` without
/// `mcp-session-id` (a `200` whose body is an initialize result and whose headers carry the id),
/// then `notifications/initialized` with the id (any `2xx`). Returns the session id.
pub async fn open_session(
    sender: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    addr: &str,
    path: &str,
) -> Result<String, String> {
    open_session_in(sender, addr, path, PROTOCOL_VERSION).await
}

/// [`open_session`] negotiating protocol `version` (a `2025-11-25` session primes every
/// request's stream with an event of its own).
pub async fn open_session_in(
    sender: &mut hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    addr: &str,
    path: &str,
    version: &str,
) -> Result<String, String> {
    let initialize = INITIALIZE.replace(PROTOCOL_VERSION, version);
    let (status, headers, body) =
        post_json_in(sender, addr, path, initialize, None, version).await?;
    if status != hyper::StatusCode::OK {
        return Err(format!(
            "initialize: status {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    check_initialize_reply(&body).map_err(|e| e.0)?;
    let id = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .ok_or("initialize: no mcp-session-id header")?
        .to_owned();
    let (status, _, body) = post_json_in(
        sender,
        addr,
        path,
        INITIALIZED.to_owned(),
        Some(&id),
        version,
    )
    .await?;
    if !status.is_success() {
        return Err(format!(
            "notifications/initialized: status {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    Ok(id)
}

/// Current resident set size (`VmRSS`) of a process, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Peak resident set size (`VmHWM`) of a process, in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_reply_is_what_we_answer() {
        let reply = futures::executor::block_on(ours(0).handle(ECHO_CALL));
        assert_eq!(reply.as_deref(), Some(FLOOR_REPLY));
        assert_eq!(floor_call(ECHO_CALL.as_bytes()), FLOOR_REPLY.as_bytes());
        check_echo_reply(FLOOR_REPLY.as_bytes(), Some(1)).unwrap();
        check_echo_reply(
            format!("event: message\ndata: {FLOOR_REPLY}\n\n").as_bytes(),
            Some(1),
        )
        .unwrap();
        assert!(check_echo_reply(b"{}", None).is_err());
        assert_eq!(echo_call(1), ECHO_CALL);
    }
}
