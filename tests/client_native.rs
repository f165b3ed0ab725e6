//! The client against our own servers (stdio, Streamable HTTP, WebSocket) and against faulty
//! peers. Every fault has a defined answer; `HANG_GUARD` only bounds a hang.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]
#![allow(clippy::result_large_err)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use orkestrel_mcp::client::{ClientError, McpClient, RequestOptions};
use orkestrel_mcp::native::client::http::{HttpClientOptions, HttpTransport};
use orkestrel_mcp::native::client::stdio::{StdioClientOptions, StdioTransport};
use orkestrel_mcp::native::client::ws::{WsClientOptions, WsTransport};
use orkestrel_mcp::{McpServer, ServerOptions, Tool};
use serde_json::{json, Value};
use support::client::*;
use support::server::{our_http_server, spawn_listening};
use support::{eventually, eventually_async};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

async fn exercise(client: &McpClient) {
    client.connect().await.unwrap();
    client.connect().await.unwrap();
    assert_eq!(
        client.protocol_version().as_deref(),
        Some(orkestrel_mcp::protocol::LATEST_PROTOCOL_VERSION)
    );
    let tools = client.tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names[..4], ["echo", "add", "fail", "sleep"]);
    assert_eq!(
        client.call("echo", json!({"text":"hi"})).await.unwrap(),
        Some(json!("hi"))
    );
    assert_eq!(
        client.call("add", json!({"a":2,"b":5})).await.unwrap(),
        Some(json!(7))
    );
    let whole = client.call_tool("add", json!({"a":2,"b":5})).await.unwrap();
    assert_eq!(whole.structured_content, Some(json!({"sum":7})));
    let err = client
        .call("fail", json!({"message":"boom"}))
        .await
        .unwrap_err();
    assert!(matches!(&err, ClientError::Tool { message, .. } if message == "boom"));
    let err = client.call("nope", json!({})).await.unwrap_err();
    assert_eq!(err.code().map(|c| c.0), Some(-32602));
    // A per-call deadline: the call fails, and the client keeps working.
    let late = client
        .call_with(
            "sleep",
            json!({"ms": 5_000}),
            RequestOptions::with_timeout(Duration::from_millis(100)),
        )
        .await;
    assert!(late.unwrap_err().is_timeout());
    // Concurrent calls route to their own callers.
    let (a, b) = tokio::join!(
        client.call("echo", json!({"text":"a"})),
        client.call("echo", json!({"text":"b"}))
    );
    assert_eq!(
        (a.unwrap(), b.unwrap()),
        (Some(json!("a")), Some(json!("b")))
    );
    client.ping().await.unwrap();
    client.disconnect().await;
    client.disconnect().await;
    assert!(!client.is_connected());
}

#[tokio::test]
async fn stdio_client_drives_our_stdio_server() {
    let client = our_stdio(options());
    let log = record(&client);
    timeout(HANG_GUARD, exercise(&client)).await.unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.first().map(String::as_str), Some("connect"));
    assert_eq!(
        log.last().map(String::as_str),
        Some("disconnect: the client disconnected")
    );
}

#[tokio::test]
async fn http_client_drives_our_http_server() {
    let (url, _server) = our_http_server().await;
    let client = http_client_to(&url, options());
    timeout(HANG_GUARD, exercise(&client)).await.unwrap();
}

#[tokio::test]
async fn ws_client_drives_our_websocket_server() {
    let (url, _server) = our_http_server().await;
    let client = ws_client_to(&url, options());
    timeout(HANG_GUARD, exercise(&client)).await.unwrap();
}

#[tokio::test]
async fn cli_tools_and_call_print_json_and_fail_with_nonzero_exit() {
    let (url, _server) = our_http_server().await;
    let run = |args: Vec<String>| async move {
        let out = timeout(
            HANG_GUARD,
            tokio::process::Command::new(BIN).args(&args).output(),
        )
        .await
        .unwrap()
        .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let (code, out, _) = run(s(&["call", &url, "echo", "--args", r#"{"text":"hi"}"#])).await;
    assert_eq!((code, out.trim()), (Some(0), r#""hi""#));
    let ws = url.replacen("http://", "ws://", 1);
    let (code, out, _) = run(s(&["call", &ws, "add", "--args", r#"{"a":1,"b":1}"#])).await;
    assert_eq!((code, out.trim()), (Some(0), "2"));
    let (code, out, _) = run(s(&["tools", &url])).await;
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, listed[0]["name"].clone()), (Some(0), json!("echo")));
    let (code, out, _) = run(s(&[
        "call",
        "add",
        "--args",
        r#"{"a":1,"b":2}"#,
        "--",
        BIN,
        "serve",
        "--stdio",
    ]))
    .await;
    assert_eq!((code, out.trim()), (Some(0), "3"));
    let (code, out, err) = run(s(&[
        "call",
        &url,
        "fail",
        "--args",
        r#"{"message":"nope"}"#,
    ]))
    .await;
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(err.contains("nope"), "{err}");
    let (code, _, err) = run(s(&["call", "x", "--", "/nonexistent/server"])).await;
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot start"), "{err}");
    let (code, _, err) = run(s(&["call", &url, "echo", "--args", "{"])).await;
    assert_eq!(code, Some(2), "a usage error (tests/cli.rs)");
    assert!(err.contains("--args is not JSON"), "{err}");
}

#[tokio::test]
async fn bridge_serves_a_stdio_servers_tools_over_http() {
    let (url, _bridge) = spawn_listening(
        &[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--",
            BIN,
            "serve",
            "--stdio",
        ],
        "warn",
    )
    .await;
    // The bridge serves WebSocket on the same path.
    let ws = ws_client_to(&url, options());
    timeout(HANG_GUARD, async {
        ws.connect().await.unwrap();
        assert_eq!(
            ws.call("echo", json!({"text":"over ws"})).await.unwrap(),
            Some(json!("over ws"))
        );
        ws.disconnect().await;
    })
    .await
    .unwrap();
    let client = http_client_to(&url, options());
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(
            client.initialize_result().unwrap().server_info.name,
            "orkestrel-mcp"
        );
        assert!(client.list_tools().await.unwrap().len() >= 4);
        assert_eq!(
            client.call("add", json!({"a":20,"b":22})).await.unwrap(),
            Some(json!(42))
        );
        let whole = client
            .call_tool("fail", json!({"message":"x"}))
            .await
            .unwrap();
        assert!(whole.is_error());
        client.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn bridge_mirrors_a_tools_list_changed_notification() {
    // A scripted stdio server: one tool, then `list_changed`, then two tools.
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"changing","version":"1"}}}\n'
read initialized
read list
printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}\n'
printf '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
read list
printf '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}}\n'
exec sleep 60"#;
    // The script answers lines blindly in handshake order, so it cannot take a probe.
    let (url, mut bridge) = spawn_listening(
        &[
            "bridge",
            "--http",
            "127.0.0.1:0",
            "--era",
            "legacy",
            "--",
            "sh",
            "-c",
            script,
        ],
        "warn",
    )
    .await;
    let client = http_client_to(&url, options());
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        // Poll until the refresh lands (bounded, not timed).
        eventually_async(
            HANG_GUARD,
            "the bridge mirrors the new tool list",
            || async {
                let names: Vec<String> = client
                    .list_tools()
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|d| d.name)
                    .collect();
                assert!(names == ["a"] || names == ["a", "b"], "{names:?}");
                names == ["a", "b"]
            },
        )
        .await;
        client.disconnect().await;
    })
    .await
    .unwrap();
    // SIGTERM: the bridge shuts down and stops its stdio server (no orphan `sleep`).
    let pid = bridge.id().unwrap().to_string();
    let _ = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await;
    let status = timeout(HANG_GUARD, bridge.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
}

// ---- stdio faults ----

/// The child exits while a process it started still holds its stdout: the exit is seen (the
/// transport stayed open, every request waiting out its deadline).
#[tokio::test]
async fn a_child_that_exits_leaving_a_process_on_its_stdout_fails_connect_with_its_status() {
    // It reads the `initialize` first: the request is in flight when it exits.
    let (client, _transport) = sh_client("read line; sleep 30 & exit 3", HANG_GUARD);
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    let text = err.to_string();
    assert!(err.is_closed() && text.contains("exit status: 3"), "{text}");
    client.disconnect().await;
}

#[tokio::test]
async fn a_child_that_exits_at_once_fails_connect_with_its_status_and_stderr() {
    let (client, transport) = sh_client("echo 'fatal: bad config' >&2; exit 3", HANG_GUARD);
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("exit status: 3") && text.contains("fatal: bad config"),
        "{text}"
    );
    assert!(transport
        .stderr_tail()
        .contains(&"fatal: bad config".to_owned()));
}

#[tokio::test]
async fn a_missing_command_fails_connect() {
    let client = McpClient::new(
        StdioTransport::new(StdioClientOptions::new("/nonexistent/mcp-server")),
        options(),
    );
    let err = client.connect().await.unwrap_err();
    assert!(
        err.is_closed() && err.to_string().contains("cannot start"),
        "{err}"
    );
}

/// A working directory that is not one is named as the cause (the `chdir` before `exec` fails
/// with the same ENOENT, which read as the command's).
#[tokio::test]
async fn a_missing_working_directory_is_named_not_the_command() {
    let options_ = StdioClientOptions::new("sh").with_cwd("/nonexistent/work-dir");
    let client = McpClient::new(StdioTransport::new(options_), options());
    let err = client.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("working directory /nonexistent/work-dir is not a directory"),
        "{err}"
    );
}

#[tokio::test]
async fn a_child_that_never_answers_times_out_and_is_killed_on_disconnect() {
    let (client, _t) = sh_client("read line; exec sleep 60", Duration::from_millis(200));
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Timeout { method, .. } if method == "initialize"),
        "{err}"
    );
    // connect closed the transport: stdin closed, then SIGTERM; the sleep is gone.
    timeout(HANG_GUARD, client.disconnect()).await.unwrap();
}

#[tokio::test]
async fn junk_lines_before_valid_ones_are_skipped_and_reported() {
    let script = format!(
        "printf 'starting up...\\n\\357\\273\\277\\r\\n{{broken\\r\\n'; exec {BIN} serve --stdio"
    );
    let (client, _t) = sh_client(&script, HANG_GUARD);
    let log = record(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(
            client.call("echo", json!({"text":"ok"})).await.unwrap(),
            Some(json!("ok"))
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
    let log = log.lock().unwrap();
    let skipped = log.iter().filter(|l| l.contains("not JSON")).count();
    assert_eq!(skipped, 2, "{log:?}");
}

/// A response over the 64 MiB line limit is discarded unread, but the skim of its bytes finds
/// its top-level `id` (here at the end, as the TS SDK writes it): the call fails at once with
/// `-32700` naming the limit instead of waiting for its deadline, and the connection goes on.
#[tokio::test]
async fn a_response_over_the_line_limit_fails_its_call_at_once() {
    let script = format!(
        r#"read init
printf '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-06-18","capabilities":{{}},"serverInfo":{{"name":"huge","version":"1"}}}}}}\n'
read initialized
read call
id=$(printf '%s' "$call" | sed 's/.*"id":\([0-9]*\).*/\1/')
printf '{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"'
head -c {} /dev/zero | tr '\000' x
printf '"}}]}},"id":%s}}\n' "$id"
read ping
id=$(printf '%s' "$ping" | sed 's/.*"id":\([0-9]*\).*/\1/')
printf '{{"jsonrpc":"2.0","id":%s,"result":{{}}}}\n' "$id"
exec sleep 60"#,
        orkestrel_mcp::wire::framing::DEFAULT_MAX_LINE_BYTES
    );
    let (client, _t) = sh_client(&script, HANG_GUARD);
    let log = record(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("big", json!({})).await.unwrap_err();
        assert_eq!(err.code().map(|c| c.0), Some(-32700), "{err}");
        assert!(err.to_string().contains("-byte limit"), "{err}");
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .unwrap();
    let log = log.lock().unwrap();
    assert!(
        log.iter()
            .any(|l| l.contains("over the 67108864-byte limit")),
        "{log:?}"
    );
}

/// A server that floods requests and never reads its stdin again: our answers to it are queued
/// without waiting (then dropped and reported), so reading its stdout goes on, a request still
/// fails at its deadline, and `disconnect` closes stdin and ends the child even while a write
/// waits on the full pipe (it used to wait on that write forever).
#[tokio::test]
async fn a_child_that_stops_reading_its_stdin_never_hangs_the_client() {
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"deaf","version":"1"}}}\n'
read initialized
i=0
while [ $i -lt 4000 ]; do printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' $i; i=$((i+1)); done
printf '{"jsonrpc":"2.0","id":"big","method":"%s"}\n' "$(head -c 300000 /dev/zero | tr '\000' m)"
exec sleep 60"#;
    let (client, _t) = sh_client(script, Duration::from_millis(500));
    let log = record(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{err}");
        client.disconnect().await;
    })
    .await
    .expect("the client hung on a child that does not read its stdin");
    let log = log.lock().unwrap();
    assert!(
        log.iter().any(|l| l.contains("not reading its stdin")),
        "{log:?}"
    );
}

/// A response with more text after it on its line (`{…}{…}`) is not JSON as a whole, but its id
/// is readable: the call fails at once with `-32700`, as the server answers such a request,
/// instead of at its deadline.
#[tokio::test]
async fn a_response_with_more_text_on_its_line_fails_its_call_at_once() {
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"twice","version":"1"}}}\n'
read initialized
read call
id=$(printf '%s' "$call" | sed 's/.*"id":\([0-9]*\).*/\1/')
printf '{"jsonrpc":"2.0","id":%s,"result":{}}{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" "$id"
exec sleep 30"#;
    let (client, _t) = sh_client(script, HANG_GUARD);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("x", json!({})).await.unwrap_err();
        assert_eq!(err.code().map(|c| c.0), Some(-32700), "{err}");
        assert!(err.to_string().contains("more text follows"), "{err}");
        client.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_child_that_dies_mid_call_fails_every_pending_request_at_once() {
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"dying","version":"1"}}}\r\n'
read initialized
read call
echo 'crashing now' >&2
exit 7"#;
    let (client, _t) = sh_client(script, HANG_GUARD);
    let log = record(&client);
    timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap();
    let (a, b) = timeout(HANG_GUARD, async {
        tokio::join!(client.call("x", json!({})), client.ping())
    })
    .await
    .unwrap();
    for err in [a.unwrap_err(), b.unwrap_err()] {
        assert!(err.is_closed(), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("exit status: 7")
                || text.contains("crashing now")
                || text.contains("stdin"),
            "{text}"
        );
    }
    assert!(!client.is_connected());
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.starts_with("disconnect:")));
}

#[tokio::test]
async fn a_server_ping_over_stdio_is_answered_and_other_server_requests_get_method_not_found() {
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"asks","version":"1"}}}\n'
read initialized
printf '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n{"jsonrpc":"2.0","id":"srv-2","method":"roots/list"}\n'
read a
read b
echo "$a" >&2
echo "$b" >&2
exec sleep 60"#;
    let (client, transport) = sh_client(script, HANG_GUARD);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        eventually(HANG_GUARD, "both replies reach the script", || {
            transport.stderr_tail().len() >= 2
        })
        .await;
        client.disconnect().await;
    })
    .await
    .unwrap();
    let replies: Vec<Value> = transport
        .stderr_tail()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        replies[0],
        json!({"jsonrpc":"2.0","id":"srv-1","result":{}})
    );
    assert_eq!(replies[1]["id"], "srv-2");
    assert_eq!(replies[1]["error"]["code"], -32601);
}

#[tokio::test]
async fn env_replaces_the_parent_environment() {
    let transport = StdioTransport::new(
        StdioClientOptions::new("/bin/sh")
            .with_args(["-c", "echo \"HOME=${HOME:-unset} ONLY=$ONLY\" >&2; exit 0"])
            .with_env([("ONLY", "1")])
            .quiet(),
    );
    let transport = Arc::new(transport);
    let client = McpClient::with_transport(transport.clone(), options());
    let _ = timeout(HANG_GUARD, client.connect()).await.unwrap();
    assert_eq!(transport.stderr_tail(), vec!["HOME=unset ONLY=1"]);
}

// ---- HTTP faults ----

fn http_client(url: &str) -> McpClient {
    McpClient::new(
        HttpTransport::new(HttpClientOptions::new(url).with_header("Authorization", "Bearer t"))
            .unwrap(),
        options(),
    )
}

#[tokio::test]
async fn http_both_result_and_error_fails_the_call_as_invalid() {
    let (url, _) = fake_http(|seen| match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        Some("tools/call") => json_reply(
            "200 OK",
            "",
            &format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"error":{{"code":-1,"message":"m"}}}}"#,
                seen.id()
            ),
        ),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("x", json!({})).await.unwrap_err();
        assert!(matches!(err, ClientError::InvalidResponse(_)), "{err}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn http_sse_replies_split_byte_by_byte_are_decoded() {
    let (url, _) = fake_http(|seen| match seen.rpc_method() {
        Some("initialize") | Some("tools/call") => {
            let data = if seen.rpc_method() == Some("initialize") {
                init_result(&seen.id())
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"\"héllo 😀\""}}]}}}}"#,
                    seen.id()
                )
            };
            let body = format!(
                "\u{feff}: keep-alive\r\nevent: message\r\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"x\"}}}}\r\n\r\nid: 1\rdata: {data}\r\r"
            );
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            Reply::Bytewise([head.as_bytes(), body.as_bytes()].concat())
        }
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    let log = record(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(
            client.call("x", json!({})).await.unwrap(),
            Some(json!("héllo 😀"))
        );
    })
    .await
    .unwrap();
    let notes = log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.as_str() == "notification: notifications/message")
        .count();
    assert_eq!(notes, 2);
}

#[tokio::test]
async fn http_session_and_version_headers_are_sent_and_a_404_means_session_expired() {
    let (url, seen) = fake_http(|seen| match seen.rpc_method() {
        Some("initialize") => json_reply(
            "200 OK",
            "mcp-session-id: s-123\r\n",
            &init_result(&seen.id()),
        ),
        Some("ping") => json_reply(
            "200 OK",
            "",
            &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, seen.id()),
        ),
        Some("tools/list") => json_reply(
            "404 Not Found",
            "",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#,
        ),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(client.session_id().as_deref(), Some("s-123"));
        client.ping().await.unwrap();
        // This server forgets every session at tools/list: the client starts a new session and
        // sends the request once more (no loop), then reports the expiry.
        let err = client.list_tools().await.unwrap_err();
        assert_eq!(
            err,
            ClientError::SessionExpired {
                session: "s-123".into()
            }
        );
    })
    .await
    .unwrap();
    let seen = seen.lock().unwrap().clone();
    let posts: Vec<_> = seen.iter().filter(|s| s.method == "POST").collect();
    let methods: Vec<_> = posts
        .iter()
        .map(|s| s.rpc_method().unwrap_or("-"))
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "ping",
            "tools/list",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    for init in [posts[0], posts[4]] {
        assert_eq!(init.header("mcp-session-id"), None);
        assert_eq!(init.header("mcp-protocol-version"), None);
        assert_eq!(
            init.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(init.header("authorization"), Some("Bearer t"));
    }
    for later in seen.iter().filter(|s| s.rpc_method() != Some("initialize")) {
        assert_eq!(later.header("mcp-session-id"), Some("s-123"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
    }
}

/// The `initialize` answer to `seen` that starts session `s-{n}`.
fn session_n(n: usize, seen: &support::client::Seen) -> support::client::Reply {
    json_reply(
        "200 OK",
        &format!("mcp-session-id: s-{n}\r\n"),
        &init_result(&seen.id()),
    )
}

/// A `200` JSON answer of an empty `tools/list` page to `seen`.
fn no_tools(seen: &support::client::Seen) -> support::client::Reply {
    json_reply(
        "200 OK",
        "",
        &format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[]}}}}"#,
            seen.id()
        ),
    )
}

#[tokio::test]
async fn http_a_session_the_server_forgot_is_replaced_by_a_new_one_and_the_request_sent_again() {
    let inits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = inits.clone();
    let (url, seen) = fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            session_n(n, seen)
        }
        Some("tools/list") if seen.header("mcp-session-id") == Some("s-1") => json_reply(
            "404 Not Found",
            "",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#,
        ),
        Some("tools/list") => no_tools(seen),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(client.session_id().as_deref(), Some("s-1"));
        // Several requests see the session go at once: one new session serves them all.
        let (a, b) = futures_util::future::join(client.list_tools(), client.list_tools()).await;
        assert!(a.unwrap().is_empty() && b.unwrap().is_empty());
        assert_eq!(client.session_id().as_deref(), Some("s-2"));
        assert!(client.is_connected());
    })
    .await
    .unwrap();
    assert_eq!(inits.load(std::sync::atomic::Ordering::SeqCst), 2);
    let seen = seen.lock().unwrap().clone();
    let renewed = seen
        .iter()
        .filter(|s| {
            s.rpc_method() == Some("tools/list") && s.header("mcp-session-id") == Some("s-2")
        })
        .count();
    assert_eq!(renewed, 2, "each request sent once more on the new session");
}

/// rmcp before 2026-02 answered a session it no longer held `401 Unauthorized: Session not
/// found`, with no `WWW-Authenticate` challenge: the client takes it as the 404 the spec names,
/// starts a new session and sends the request again.
#[tokio::test]
async fn http_a_bare_401_naming_the_session_renews_it_like_a_404() {
    let inits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = inits.clone();
    let (url, _seen) = fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            session_n(n, seen)
        }
        Some("tools/list") if seen.header("mcp-session-id") == Some("s-1") => {
            support::client::Reply::Raw(
                "HTTP/1.1 401 Unauthorized\r\ncontent-length: 31\r\nconnection: close\r\n\r\nUnauthorized: Session not found"
                    .into(),
            )
        }
        Some("tools/list") => no_tools(seen),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert!(client.list_tools().await.unwrap().is_empty());
        assert_eq!(client.session_id().as_deref(), Some("s-2"));
    })
    .await
    .unwrap();
    assert_eq!(inits.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn http_a_failed_session_renewal_is_tried_again_by_the_next_request() {
    let inits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = inits.clone();
    let (url, _seen) = fake_http(move |seen| match seen.rpc_method() {
        Some("initialize") => match counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 {
            2 => json_reply("500 Internal Server Error", "", r#"{"error":"restarting"}"#),
            n => session_n(n, seen),
        },
        Some("tools/list") if seen.header("mcp-session-id") == Some("s-1") => {
            json_reply("404 Not Found", "", "")
        }
        Some("tools/list") => no_tools(seen),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        // The server forgot s-1 and failed the new initialize: the request fails with that.
        let err = client.list_tools().await.unwrap_err();
        assert!(err.to_string().contains("500"), "{err}");
        assert!(client.is_connected());
        // The next request starts the new session first.
        assert!(client.list_tools().await.unwrap().is_empty());
        assert_eq!(client.session_id().as_deref(), Some("s-3"));
    })
    .await
    .unwrap();
    assert_eq!(inits.load(std::sync::atomic::Ordering::SeqCst), 3);
}

/// A `404` to a notification drops the session as well: the next message (a notification or a
/// request) starts a new session before it goes out, instead of going out with none (which the
/// server answers `400`).
#[tokio::test]
async fn http_a_session_a_notification_found_gone_is_replaced_before_the_next_request() {
    let inits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = inits.clone();
    let (url, seen) = fake_http(move |seen| {
        match (seen.rpc_method(), seen.header("mcp-session-id")) {
            (Some("initialize"), _) => {
                let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                session_n(n, seen)
            }
            (Some("notifications/roots/list_changed"), Some("s-1")) => {
                json_reply("404 Not Found", "", "")
            }
            (Some("tools/list"), Some("s-2")) => no_tools(seen),
            (Some("tools/list"), _) => json_reply(
                "400 Bad Request",
                "",
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"}}"#,
            ),
            _ => accepted(),
        }
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client
            .notify("notifications/roots/list_changed", None)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ClientError::SessionExpired {
                session: "s-1".into()
            }
        );
        client
            .notify("notifications/roots/list_changed", None)
            .await
            .unwrap();
        assert_eq!(client.session_id().as_deref(), Some("s-2"));
        assert!(client.list_tools().await.unwrap().is_empty());
    })
    .await
    .unwrap();
    assert_eq!(inits.load(std::sync::atomic::Ordering::SeqCst), 2);
    let seen = seen.lock().unwrap().clone();
    let notes: Vec<_> = seen
        .iter()
        .filter(|s| s.rpc_method() == Some("notifications/roots/list_changed"))
        .map(|s| s.header("mcp-session-id"))
        .collect();
    assert_eq!(notes, [Some("s-1"), Some("s-2")]);
    let lists: Vec<_> = seen
        .iter()
        .filter(|s| s.rpc_method() == Some("tools/list"))
        .map(|s| s.header("mcp-session-id"))
        .collect();
    assert_eq!(lists, [Some("s-2")], "sent once, on the new session");
}

#[tokio::test]
async fn http_server_stream_delivers_notifications_and_resumes_with_last_event_id() {
    let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let g = gets.clone();
    let (url, seen) = fake_http(move |seen| match (seen.method.as_str(), seen.rpc_method()) {
        ("POST", Some("initialize")) => json_reply("200 OK", "mcp-session-id: s-9\r\n", &init_result(&seen.id())),
        ("GET", _) if g.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => Reply::Raw(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\nid: 7\nretry: 5\ndata: \n\nid: 8\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n".into(),
        ),
        ("GET", _) => no_get_stream(),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    let log = record(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        eventually(HANG_GUARD, "the resumed GET", || {
            gets.load(std::sync::atomic::Ordering::SeqCst) >= 2
        })
        .await;
        eventually(HANG_GUARD, "the notification from the GET stream", || {
            log.lock()
                .unwrap()
                .iter()
                .any(|l| l == "notification: notifications/tools/list_changed")
        })
        .await;
        client.disconnect().await;
    })
    .await
    .unwrap();
    let seen = seen.lock().unwrap().clone();
    let gets: Vec<&Seen> = seen.iter().filter(|s| s.method == "GET").collect();
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    assert_eq!(gets[0].header("mcp-session-id"), Some("s-9"));
    assert_eq!(gets[0].header("last-event-id"), None);
    assert_eq!(gets[1].header("last-event-id"), Some("8"));
    // The session is ended with DELETE on disconnect.
    assert!(seen
        .iter()
        .any(|s| s.method == "DELETE" && s.header("mcp-session-id") == Some("s-9")));
}

#[tokio::test]
async fn an_http_exchange_timeout_fails_the_request_not_the_client() {
    // A peer that accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let client = McpClient::new(
        HttpTransport::new(HttpClientOptions::new(&url).with_timeout(Duration::from_millis(100)))
            .unwrap(),
        options(),
    );
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(t) if t.contains("timed out after 100 ms")),
        "{err}"
    );
}

#[tokio::test]
async fn http_errors_fail_only_their_request() {
    let (url, _) = fake_http(|seen| match seen.rpc_method() {
        Some("initialize") => json_reply("200 OK", "", &init_result(&seen.id())),
        Some("tools/call") => Reply::Raw(
            "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nconnection: close\r\n\r\noops!".into(),
        ),
        Some("ping") => json_reply("200 OK", "", &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, seen.id())),
        _ => accepted(),
    })
    .await;
    let client = http_client(&url);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("x", json!({})).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Transport(t) if t.contains("500") && t.contains("oops!")),
            "{err}"
        );
        client.ping().await.unwrap();
    })
    .await
    .unwrap();
    // A refused connection fails connect, quickly.
    let refused = http_client("http://127.0.0.1:9/mcp");
    let err = timeout(HANG_GUARD, refused.connect())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::ConnectionRefused {
            addr: "127.0.0.1:9".into()
        }
    );
}

// ---- WebSocket ----

async fn ws_server(subprotocol: Option<&'static str>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::new(ServerOptions::new("ws-test", "1"));
    server.tools().add(Tool::from_json(
        "echo",
        json!({"type":"object"}),
        |args, _| async move { Ok::<_, String>(Value::Object(args).to_string()) },
    ));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let server = server.clone();
            tokio::spawn(async move {
                let callback = |req: &Request, mut resp: Response| {
                    assert_eq!(
                        req.headers()
                            .get("sec-websocket-protocol")
                            .and_then(|v| v.to_str().ok()),
                        Some("mcp")
                    );
                    if let Some(p) = subprotocol {
                        resp.headers_mut()
                            .insert("sec-websocket-protocol", HeaderValue::from_static(p));
                    }
                    Ok(resp)
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
                    return;
                };
                while let Some(Ok(msg)) = ws.next().await {
                    if let Message::Text(text) = msg {
                        if let Some(reply) = server.handle(text.as_str()).await {
                            if ws.send(Message::text(reply)).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    url
}

#[tokio::test]
async fn ws_client_speaks_subprotocol_mcp_one_text_frame_per_message() {
    let url = ws_server(Some("mcp")).await;
    for url in [url.clone(), url.replacen("ws://", "http://", 1)] {
        let client = McpClient::new(
            WsTransport::new(WsClientOptions::new(&url)).unwrap(),
            options(),
        );
        timeout(HANG_GUARD, async {
            client.connect().await.unwrap();
            assert_eq!(
                client.call("echo", json!({"k":"v"})).await.unwrap(),
                Some(json!({"k":"v"}))
            );
            client.disconnect().await;
        })
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn ws_client_refuses_a_server_that_picks_no_or_another_subprotocol() {
    for picked in [None, Some("other")] {
        let url = ws_server(picked).await;
        let client = McpClient::new(
            WsTransport::new(WsClientOptions::new(&url)).unwrap(),
            options(),
        );
        let err = timeout(HANG_GUARD, client.connect())
            .await
            .unwrap()
            .unwrap_err();
        assert!(err.is_closed(), "{err}");
        assert!(
            err.to_string().to_lowercase().contains("subprotocol"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn ws_a_server_that_never_answers_the_upgrade_fails_connect_within_the_timeout() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    // Takes the connection and reads the upgrade request, never answering it.
    let held = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut sink = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut sink).await;
    });
    let mut options = options();
    options.timeout = Duration::from_millis(300);
    let client = McpClient::new(
        WsTransport::new(WsClientOptions::new(&url)).unwrap(),
        options,
    );
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .expect("connect is bounded by the client's timeout")
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Transport(m) if m.contains("did not open within 300 ms")),
        "{err}"
    );
    held.abort();
}

#[tokio::test]
async fn ws_a_server_close_fails_pending_requests() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let callback = |_: &Request, mut resp: Response| {
            resp.headers_mut()
                .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
            Ok(resp)
        };
        let mut ws = tokio_tungstenite::accept_hdr_async(stream, callback)
            .await
            .unwrap();
        let Some(Ok(Message::Text(init))) = ws.next().await else {
            return;
        };
        let id = serde_json::from_str::<Value>(init.as_str()).unwrap()["id"].clone();
        ws.send(Message::text(init_result(&id))).await.unwrap();
        let _initialized = ws.next().await;
        let _call = ws.next().await;
        let _ = ws.close(None).await;
    });
    let client = McpClient::new(
        WsTransport::new(WsClientOptions::new(&url)).unwrap(),
        options(),
    );
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("x", json!({})).await.unwrap_err();
        assert!(err.is_closed(), "{err}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_reply_beyond_the_parsers_limits_fails_its_call_instead_of_hanging() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let init = init_result(&json!("__ID__")).replace("\"__ID__\"", "$id");
    let take_id = r#"id=$(printf %s "$l" | sed 's/.*"id":\([0-9]*\).*/\1/')"#;
    let script = format!(
        "read l; {take_id}; printf '%s\\n' '{init}' | sed \"s/\\$id/$id/\"; \
         read l; read l; {take_id}; \
         printf '{{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{{\"a\":{deep}}}}}\\n' \"$id\"; \
         exec sleep 60"
    );
    let (client, _t) = sh_client(&script, HANG_GUARD);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let err = client.call("echo", json!({})).await.unwrap_err();
        let text = err.to_string();
        assert!(
            !matches!(err, ClientError::Timeout { .. })
                && text.contains("could not be read")
                && text.contains("nest deeper than 127"),
            "{text}"
        );
        client.disconnect().await;
    })
    .await
    .expect("the call ends without waiting for its timeout");
}

/// The bytes a terminal acts on: C0 controls but `\n` and `\t`, DEL, C1 controls (in UTF-8).
fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.char_indices()
        .filter(|&(_, c)| c.is_control() && c != '\n' && c != '\t')
        .map(|(i, c)| format!("{c:?} at {i}"))
        .collect()
}

#[tokio::test]
async fn the_cli_never_writes_a_peers_control_characters_raw() {
    let run = |args: Vec<String>| async move {
        timeout(
            HANG_GUARD,
            tokio::process::Command::new(BIN).args(&args).output(),
        )
        .await
        .unwrap()
        .unwrap()
    };
    let hostile = "\u{1b}[31mred\u{1b}]0;title\u{7}\u{9b}2J\u{7f}\r";
    let args = json!({ "text": hostile }).to_string();
    // Tool text printed by `call`: JSON with every control escaped, the same value.
    let out = run([
        "call", "echo", "--args", &args, "--", BIN, "serve", "--stdio",
    ]
    .map(String::from)
    .to_vec())
    .await;
    assert_eq!(out.status.code(), Some(0));
    assert!(
        raw_controls(&out.stdout).is_empty(),
        "{:?}",
        raw_controls(&out.stdout)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, json!(hostile));
    // A peer's error message, its log lines (a junk stdout line) and its stderr.
    let fail = json!({ "message": hostile }).to_string();
    let script = format!(
        "printf '\\033[31mchild stderr\\007\\n' >&2; printf '\\033[2Jjunk\\n'; exec {BIN} serve --stdio"
    );
    let out = run(["call", "fail", "--args", &fail, "--", "sh", "-c", &script]
        .map(String::from)
        .to_vec())
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(raw_controls(&out.stdout).is_empty());
    assert!(
        raw_controls(&out.stderr).is_empty(),
        "{:?}",
        raw_controls(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r"\u{1b}[31mred") && err.contains(r"\u{1b}[31mchild stderr\u{7}"),
        "the controls are shown, escaped: {err}"
    );
}

#[tokio::test]
async fn a_stderr_line_without_end_is_remembered_cut() {
    let mut stdio = StdioClientOptions::new("sh")
        .with_args([
            "-c",
            "head -c 300000 /dev/zero | tr '\\0' x >&2; echo >&2; echo after >&2; exit 3",
        ])
        .quiet();
    stdio.max_stderr_line_bytes = 1024;
    let transport = Arc::new(StdioTransport::new(stdio));
    let client = McpClient::with_transport(transport.clone(), options());
    let err = timeout(HANG_GUARD, client.connect())
        .await
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("exit status: 3"), "{err}");
    let tail = transport.stderr_tail();
    assert_eq!(
        tail.len(),
        2,
        "one cut line, then the next: {:?}",
        tail.iter().map(String::len).collect::<Vec<_>>()
    );
    assert!(tail[0].starts_with(&"x".repeat(1024)) && tail[0].ends_with("… (cut at 1024 bytes)"));
    assert!(tail[0].len() < 1100);
    assert_eq!(tail[1], "after");
}

// ---- Batches from the server (2025-03-26): answered by one array ----

/// Answers `roots/list` with one root.
struct OneRoot;

impl orkestrel_mcp::client::ClientHandler for OneRoot {
    fn capabilities(&self) -> Value {
        json!({"roots":{}})
    }
    fn list_roots(
        &self,
    ) -> orkestrel_mcp::BoxFuture<'static, Result<Value, orkestrel_mcp::ErrorObject>> {
        Box::pin(async { Ok(json!({"roots":[{"uri":"file:///w"}]})) })
    }
}

/// The two batches every transport's test sends once the client is initialized: pings only
/// (answered at once), then a handler request, a notification and a ping (answered once the
/// handler has).
const PINGS: &str =
    r#"[{"jsonrpc":"2.0","id":"p1","method":"ping"},{"jsonrpc":"2.0","id":"p2","method":"ping"}]"#;
const MIXED: &str = r#"[{"jsonrpc":"2.0","id":"r1","method":"roots/list"},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":"p3","method":"tools/list"},{"jsonrpc":"2.0","id":"p4","method":"ping"}]"#;
const INIT_2025_03_26: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"batches","version":"1"}}}"#;

/// What the client wrote back for [`PINGS`] and [`MIXED`]: each one JSON array answering every
/// request of its batch once, in the batch's order.
fn assert_batch_answers(pings: &Value, mixed: &Value) {
    assert_eq!(
        pings,
        &json!([
            {"jsonrpc":"2.0","id":"p1","result":{}},
            {"jsonrpc":"2.0","id":"p2","result":{}}
        ])
    );
    let mixed = mixed.as_array().expect("one array");
    let ids: Vec<&Value> = mixed.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("r1"), &json!("p3"), &json!("p4")], "{mixed:?}");
    assert_eq!(mixed[0]["result"]["roots"][0]["uri"], "file:///w");
    assert_eq!(mixed[1]["error"]["code"], -32601);
    assert_eq!(mixed[2]["result"], json!({}));
}

#[tokio::test]
async fn a_batch_from_a_stdio_server_is_answered_by_one_array_line() {
    // The script hands each line the client writes back to it as a log notification's data.
    let script = format!(
        r#"read init
printf '%s\n' '{INIT_2025_03_26}'
read initialized
printf '%s\n' '{PINGS}'
read a
printf '{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":%s}}}}\n' "$a"
printf '%s\n' '{MIXED}'
read b
printf '{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":%s}}}}\n' "$b"
exec sleep 60"#
    );
    let mut o = StdioClientOptions::new("sh")
        .with_args(["-c", script.as_str()])
        .quiet();
    o.grace = Duration::from_millis(300);
    let client = McpClient::new(StdioTransport::new(o), options().with_handler(OneRoot));
    let written = echoed(&client);
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let pings = written.recv().await;
        let mixed = written.recv().await;
        assert_batch_answers(&pings, &mixed);
        client.disconnect().await;
    })
    .await
    .unwrap();
}

/// The log notifications' data that are arrays (what the scripted peer echoes back), in order.
struct Echoed(tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<Value>>);

impl Echoed {
    async fn recv(&self) -> Value {
        self.0.lock().await.recv().await.expect("echoed")
    }
}

fn echoed(client: &McpClient) -> Echoed {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    client.on(move |e| {
        if let orkestrel_mcp::client::ClientEvent::Notification(n) = e {
            let data = n.params.as_ref().and_then(|p| p.get("data"));
            if let Some(data) = data.filter(|d| d.is_array()) {
                let _ = tx.send(data.clone());
            }
        }
    });
    Echoed(tokio::sync::Mutex::new(rx))
}

#[tokio::test]
async fn a_batch_from_a_websocket_server_is_answered_by_one_text_frame() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    // Every frame the client writes after its handshake, as JSON.
    let (frames_tx, mut frames) = tokio::sync::mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let callback = |_: &Request, mut resp: Response| {
            resp.headers_mut()
                .insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
            Ok(resp)
        };
        let mut ws = tokio_tungstenite::accept_hdr_async(stream, callback)
            .await
            .unwrap();
        let mut forwarded = 0;
        while let Some(Ok(message)) = ws.next().await {
            let Message::Text(text) = message else {
                continue;
            };
            let value: Value = serde_json::from_str(text.as_str()).unwrap();
            let next = match value["method"].as_str() {
                Some("initialize") => Some(INIT_2025_03_26),
                Some("notifications/initialized") => Some(PINGS),
                _ => {
                    let _ = frames_tx.send(value);
                    forwarded += 1;
                    (forwarded == 1).then_some(MIXED)
                }
            };
            if let Some(next) = next {
                ws.send(Message::text(next)).await.unwrap();
            }
        }
    });
    let client = McpClient::new(
        WsTransport::new(WsClientOptions::new(&url)).unwrap(),
        options().with_handler(OneRoot),
    );
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let pings = frames.recv().await.unwrap();
        let mixed = frames.recv().await.unwrap();
        assert_batch_answers(&pings, &mixed);
        client.disconnect().await;
    })
    .await
    .unwrap();
    assert!(
        frames.try_recv().is_err(),
        "no answer went out twice or alone"
    );
}

#[tokio::test]
async fn a_batch_on_the_http_get_stream_is_answered_by_one_post_of_an_array() {
    let gets = std::sync::atomic::AtomicUsize::new(0);
    let (posted_tx, mut posted) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let (url, _) = fake_http(move |seen| match (seen.method.as_str(), &seen.body) {
        ("POST", Some(body)) if body["method"] == "initialize" => json_reply(
            "200 OK",
            "",
            &INIT_2025_03_26.replace(r#""id":1"#, &format!(r#""id":{}"#, seen.id())),
        ),
        ("POST", Some(body)) if body["method"] == "notifications/initialized" => accepted(),
        ("POST", Some(body)) => {
            let _ = posted_tx.send(body.clone());
            accepted()
        }
        ("GET", _) if gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Reply::Raw(format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {PINGS}\n\ndata: {MIXED}\n\n"
            ))
        }
        _ => no_get_stream(),
    })
    .await;
    let client = http_client_to(&url, options().with_handler(OneRoot));
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let (a, b) = (posted.recv().await.unwrap(), posted.recv().await.unwrap());
        // Two POSTs on their way at once: either may arrive first.
        let (pings, mixed) = if a[0]["id"] == "p1" { (a, b) } else { (b, a) };
        assert_batch_answers(&pings, &mixed);
        client.disconnect().await;
    })
    .await
    .unwrap();
    assert!(
        posted.try_recv().is_err(),
        "no answer went out twice or alone"
    );
}
