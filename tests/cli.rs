//! The `orkestrel-mcp` command line as a newcomer meets it: exit codes (2 for a mistake in the
//! command line, like clap's own, 1 for a failure while running), `--http` with a host name,
//! one message for a refused connection whatever the scheme, `help`, and the defaults `--help`
//! shows.

#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use serde_json::json;
use support::client::{http_client_to, options, ws_client_to};
use support::json::initialize;
use support::server::{our_http_server, run_bin, spawn_listening, BIN};
use support::{post, HANG_GUARD};
use tokio::time::timeout;

/// A loopback port nothing listens on: bound, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Assert a usage error: exit 2, printed like clap's (`error: …`, the usage, the hint).
#[track_caller]
fn assert_usage(ran: &support::server::Ran, says: &str, usage: &str) {
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.starts_with("error: "), "{ran:?}");
    assert!(ran.stderr.contains(says), "{ran:?}");
    assert!(ran.stderr.contains(usage), "{ran:?}");
    assert!(
        ran.stderr.contains("For more information, try '--help'."),
        "{ran:?}"
    );
    assert_eq!(ran.stdout, "", "{ran:?}");
}

#[tokio::test]
async fn a_mistake_in_the_command_line_exits_2_like_clap() {
    let refused = format!("http://127.0.0.1:{}/mcp", closed_port());
    // clap's own: an unknown option.
    let ran = run_bin(&["tools", "--nope"]).await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
    let tools = "Usage: orkestrel-mcp tools";
    let call = "Usage: orkestrel-mcp call";
    assert_usage(&run_bin(&["tools"]).await, "missing target", tools);
    assert_usage(
        &run_bin(&["skills"]).await,
        "missing target",
        "Usage: orkestrel-mcp skills",
    );
    assert_usage(
        &run_bin(&["tools", &refused, "--", BIN, "serve"]).await,
        "give either a URL or `-- COMMAND`, not both",
        tools,
    );
    assert_usage(
        &run_bin(&["tools", "ftp://h/mcp"]).await,
        "not an http://",
        tools,
    );
    // A resource that is no URL would be published in every challenge.
    assert_usage(
        &run_bin(&[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth-issuer",
            &refused,
            "--auth-resource",
            "not a url",
        ])
        .await,
        "--auth-resource must be this server's http(s) URL",
        "Usage: orkestrel-mcp serve",
    );
    assert_usage(
        &run_bin(&["tools", "-H", "no colon", &refused]).await,
        "bad header",
        tools,
    );
    assert_usage(
        &run_bin(&["call", "echo"]).await,
        "missing the tool name",
        call,
    );
    assert_usage(
        &run_bin(&["call", "a", "b", "--", BIN, "serve"]).await,
        "give only the tool name",
        call,
    );
    // `--args` is checked before any connection: the refused URL is never tried.
    assert_usage(
        &run_bin(&["call", &refused, "echo", "--args", "{"]).await,
        "--args is not JSON",
        call,
    );
    assert_usage(
        &run_bin(&["call", &refused, "echo", "--args", "[1]"]).await,
        "--args must be a JSON object",
        call,
    );
    assert_usage(
        &run_bin(&["serve", "--http", "127.0.0.1:0", "--cors", "not an origin"]).await,
        "not an origin",
        "Usage: orkestrel-mcp serve",
    );
    // What this build lacks is named, not taken for an unknown option.
    #[cfg(not(feature = "redis"))]
    assert_usage(
        &run_bin(&[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--redis",
            "redis://127.0.0.1:9",
        ])
        .await,
        "--redis needs orkestrel-mcp built with the `redis` feature",
        "Usage: orkestrel-mcp serve",
    );
    #[cfg(not(feature = "tls"))]
    assert_usage(
        &run_bin(&["call", "https://127.0.0.1:9/mcp", "echo"]).await,
        "https:// needs orkestrel-mcp built with the `tls` feature",
        call,
    );
    // An HTTP-only option beside `--stdio` is refused, not silently dropped (clap lets an
    // option whose `requires` target conflicts with a given one through).
    for (command, option) in [
        ("serve", vec!["--stateless"]),
        ("serve", vec!["--cors", "http://127.0.0.1:8080"]),
        ("serve", vec!["--auth-issuer", "http://127.0.0.1:9"]),
        ("serve", vec!["--auth-scope", "mcp"]),
        ("bridge", vec!["--auth-issuer", "http://127.0.0.1:9"]),
    ] {
        let mut args = vec![command, "--stdio"];
        args.extend(option.iter().copied());
        if command == "bridge" {
            args.push(&refused);
        }
        assert_usage(
            &run_bin(&args).await,
            &format!("the argument '--stdio' cannot be used with '{}", option[0]),
            &format!("Usage: orkestrel-mcp {command}"),
        );
    }
    // A zero that would fail every request or refuse every connection.
    for args in [
        vec!["call", "http://127.0.0.1:9/mcp", "echo", "--timeout", "0"],
        vec!["serve", "--http", "127.0.0.1:0", "--max-connections", "0"],
    ] {
        let ran = run_bin(&args).await;
        assert_eq!(ran.code, Some(2), "{ran:?}");
        assert!(
            ran.stderr
                .contains("\"0\" is not a whole number of 1 or more"),
            "{ran:?}"
        );
    }
    // `logout` takes the URLs `login` takes.
    assert_usage(
        &run_bin(&["logout", "ws://127.0.0.1:9/mcp"]).await,
        "is not an http(s):// URL",
        "Usage: orkestrel-mcp logout",
    );
    // A listen address that is not HOST:PORT, or a name that resolves to nothing.
    let ran = run_bin(&["serve", "--http", "localhost"]).await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.contains("expected HOST:PORT"), "{ran:?}");
    for command in ["serve", "bridge"] {
        let mut args = vec![command, "--http", "no-such-host.invalid:3000"];
        if command == "bridge" {
            args.extend(["--", BIN, "serve", "--stdio"]);
        }
        let ran = run_bin(&args).await;
        assert_eq!(ran.code, Some(2), "{ran:?}");
        assert!(
            ran.stderr.contains("cannot resolve no-such-host.invalid"),
            "{ran:?}"
        );
    }
}

#[tokio::test]
async fn a_failure_while_running_exits_1() {
    let (url, _server) = our_http_server().await;
    let ran = run_bin(&["call", &url, "fail", "--args", r#"{"message":"nope"}"#]).await;
    assert_eq!((ran.code, ran.stdout.as_str()), (Some(1), ""), "{ran:?}");
    assert_eq!(ran.stderr, "orkestrel-mcp: nope\n");
    let ran = run_bin(&["call", &url, "fail", "--raw"]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stderr.contains("tool fail failed"), "{ran:?}");
    // A sum beyond a JSON number is the tool's failure, not a null it does not promise.
    let ran = run_bin(&["call", &url, "add", "--args", r#"{"a":1e308,"b":1e308}"#]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr.contains("beyond the range of a JSON number"),
        "{ran:?}"
    );
    // The server's answer to an unknown tool is not the command line's mistake.
    let ran = run_bin(&["call", &url, "no-such-tool"]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    let ran = run_bin(&["tools", "--", "/nonexistent/server"]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stderr.starts_with("orkestrel-mcp: "), "{ran:?}");
    // The port is taken: a runtime failure.
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let ran = run_bin(&["serve", "--http", &addr]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr.contains(&format!("cannot listen on {addr}")),
        "{ran:?}"
    );
    // And success is 0.
    let ran = run_bin(&["call", &url, "echo", "--args", r#"{"text":"hi"}"#]).await;
    assert_eq!(
        (ran.code, ran.stdout.trim()),
        (Some(0), r#""hi""#),
        "{ran:?}"
    );
}

#[tokio::test]
async fn a_refused_connection_reads_the_same_over_http_and_websocket() {
    let port = closed_port();
    let expected = format!("orkestrel-mcp: connection refused: 127.0.0.1:{port}\n");
    for scheme in ["http", "ws"] {
        let url = format!("{scheme}://127.0.0.1:{port}/mcp");
        for era in ["auto", "legacy", "modern"] {
            let ran = run_bin(&["tools", &url, "--era", era]).await;
            assert_eq!(ran.code, Some(1), "{ran:?}");
            assert_eq!(ran.stderr, expected, "{scheme} {era}");
        }
        let ran = run_bin(&["call", &url, "echo"]).await;
        assert_eq!(
            (ran.code, ran.stderr.as_str()),
            (Some(1), expected.as_str())
        );
    }
    // The address is the URL's host and port, a name as given.
    let ran = run_bin(&["tools", &format!("http://localhost:{port}/mcp")]).await;
    assert_eq!(
        ran.stderr,
        format!("orkestrel-mcp: connection refused: localhost:{port}\n")
    );
}

#[tokio::test]
async fn serve_http_listens_on_a_host_name_with_the_loopback_defaults() {
    let (url, _server) = spawn_listening(&["serve", "--http", "localhost:0"], "info").await;
    // It reports the address it bound: a loopback one.
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    assert!(addr.ip().is_loopback(), "{url}");
    // A client reaches it by the name too.
    let by_name = format!("http://localhost:{}/mcp", addr.port());
    for client in [
        http_client_to(&url, options()),
        http_client_to(&by_name, options()),
        ws_client_to(&by_name, options()),
    ] {
        timeout(HANG_GUARD, async {
            client.connect().await.unwrap();
            assert_eq!(
                client.call("echo", json!({"text":"hi"})).await.unwrap(),
                Some(json!("hi"))
            );
            client.disconnect().await;
        })
        .await
        .unwrap();
    }
    // The DNS-rebinding defaults of a loopback bind hold: a foreign Host or Origin is refused.
    let init = initialize(1, "2025-06-18");
    let ok = post(
        addr,
        &[("host", &format!("localhost:{}", addr.port()))],
        &init,
    )
    .await;
    assert_eq!(ok.status, 200, "{ok:?}");
    let host = post(addr, &[("host", "evil.example")], &init).await;
    assert_eq!(host.status, 403, "{host:?}");
    let origin = post(addr, &[("origin", "http://evil.example")], &init).await;
    assert_eq!(origin.status, 403, "{origin:?}");
}

#[tokio::test]
async fn bridge_http_listens_on_a_host_name() {
    let (url, _bridge) = spawn_listening(
        &[
            "bridge",
            "--http",
            "localhost:0",
            "--",
            BIN,
            "serve",
            "--stdio",
        ],
        "warn",
    )
    .await;
    let port = url.rsplit_once(':').unwrap().1.trim_end_matches("/mcp");
    let client = http_client_to(&format!("http://localhost:{port}/mcp"), options());
    timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        assert_eq!(
            client.call("add", json!({"a":2,"b":3})).await.unwrap(),
            Some(json!(5))
        );
        client.disconnect().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn help_works_as_a_subcommand_and_for_itself() {
    let ran = run_bin(&["help", "--help"]).await;
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        ran.stdout.contains("Usage: orkestrel-mcp help [COMMAND]"),
        "{ran:?}"
    );
    let overview = run_bin(&["--help"]).await;
    let ran = run_bin(&["help"]).await;
    assert_eq!((ran.code, &ran.stdout), (Some(0), &overview.stdout));
    assert!(
        overview.stdout.contains("Exit codes: 0 success"),
        "{overview:?}"
    );
    for command in ["serve", "tools", "call", "bridge", "skills", "help"] {
        let ran = run_bin(&["help", command]).await;
        let direct = run_bin(&[command, "--help"]).await;
        assert_eq!(
            (ran.code, &ran.stdout),
            (Some(0), &direct.stdout),
            "{command}"
        );
    }
    let ran = run_bin(&["help", "nosuch"]).await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains("unrecognized subcommand 'nosuch'"),
        "{ran:?}"
    );
}

#[tokio::test]
async fn help_shows_every_default() {
    let help = |command: &'static str| async move {
        let ran = run_bin(&[command, "--help"]).await;
        assert_eq!(ran.code, Some(0), "{ran:?}");
        ran.stdout
    };
    let serve = help("serve").await;
    for shown in [
        "[default when --http is not given]",
        "[default ADDR: 127.0.0.1:3000]",
        "[default: 1024]",
        "[default: 10]",
        "[default: on a loopback bind loopback origins only",
        "[default: on a loopback bind loopback names only",
    ] {
        assert!(
            serve.contains(shown),
            "serve --help lacks {shown:?}:\n{serve}"
        );
    }
    let bridge = help("bridge").await;
    for shown in [
        "[default: 127.0.0.1:3000]",
        "[default: 30000]",
        "[default: auto]",
    ] {
        assert!(
            bridge.contains(shown),
            "bridge --help lacks {shown:?}:\n{bridge}"
        );
    }
    for command in ["tools", "call", "skills"] {
        let text = help(command).await;
        assert!(text.contains("[default: 30000]"), "{command}:\n{text}");
        assert!(text.contains("[default: auto]"), "{command}:\n{text}");
    }
    assert!(help("call").await.contains("[default: {}]"));
}

/// The server's progress text reaches the terminal with its control characters escaped: an ANSI
/// escape or an OSC title sequence in it cannot drive the terminal (as every other text of a
/// server's the CLI shows).
#[tokio::test]
async fn call_escapes_control_characters_in_the_servers_progress_text() {
    let script = r#"read init
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"loud","version":"1"}}}\n'
read initialized
read call
id=$(printf '%s' "$call" | sed 's/.*"id":\([0-9]*\).*/\1/')
tok=$(printf '%s' "$call" | sed 's/.*"progressToken":\([^,}]*\).*/\1/')
printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"message":"\\u001b[31mred\\u001b]0;PWNED\\u0007"}}\n' "$tok"
printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}\n' "$id"
exec sleep 30"#;
    let ran = run_bin(&["call", "x", "--era", "legacy", "--", "sh", "-c", script]).await;
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        !ran.stderr.contains('\u{1b}') && !ran.stderr.contains('\u{7}'),
        "{ran:?}"
    );
    assert!(
        ran.stderr
            .contains(r"progress 1: \u{1b}[31mred\u{1b}]0;PWNED\u{7}"),
        "{ran:?}"
    );
}

/// A stdio server (sh) that answers `initialize` and then the `tools/call` with `answer`
/// (`%s` is the call's id).
fn answering_call(answer: &str) -> String {
    format!(
        r#"read init
printf '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"s","version":"1"}}}}}}\n'
read initialized
read call
id=$(printf '%s' "$call" | sed 's/.*"id":\([0-9]*\).*/\1/')
printf '{answer}\n' "$id"
exec sleep 30"#
    )
}

/// A failed tool whose result carries no text is still said to have failed (the message was
/// empty: `orkestrel-mcp: ` and nothing); a server's error text of 100 KB is cut, saying how
/// much (it was printed whole).
#[tokio::test]
async fn call_names_a_textless_failure_and_cuts_a_huge_error_message() {
    let textless =
        answering_call(r#"{"jsonrpc":"2.0","id":%s,"result":{"content":[],"isError":true}}"#);
    let ran = run_bin(&["call", "x", "--era", "legacy", "--", "sh", "-c", &textless]).await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("orkestrel-mcp: the tool failed (its result carries no text)"),
        "{ran:?}"
    );
    let huge = "x".repeat(100_000);
    let erring = answering_call(&format!(
        r#"{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32603,"message":"{huge}"}}}}"#
    ));
    let ran = run_bin(&["call", "x", "--era", "legacy", "--", "sh", "-c", &erring]).await;
    assert_eq!(
        ran.code,
        Some(1),
        "{}",
        &ran.stderr[..200.min(ran.stderr.len())]
    );
    assert!(ran.stderr.len() < 8_000, "{} bytes", ran.stderr.len());
    assert!(ran.stderr.contains("more bytes)"), "{}", &ran.stderr[..300]);
}

#[tokio::test]
async fn call_shows_the_tools_progress_on_stderr_and_its_value_on_stdout() {
    let ran = run_bin(&[
        "call",
        "progress",
        "--args",
        r#"{"steps":2,"ms":1}"#,
        "--",
        BIN,
        "serve",
    ])
    .await;
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(ran.stdout.trim(), "\"done 2 steps\"", "{ran:?}");
    let shown: Vec<&str> = (ran.stderr.lines())
        .filter(|l| l.starts_with("progress "))
        .collect();
    assert_eq!(
        shown,
        ["progress 1/2: step 1 of 2", "progress 2/2: step 2 of 2"],
        "{ran:?}"
    );
}
