//! The HTTP security matrix with exact statuses: Origin, Host, Accept, Content-Type, body size,
//! MCP-Protocol-Version, CORS (spec `basic/transports`: Security Warning, Sending Messages,
//! Listening, Protocol Version Header).
#![cfg(all(feature = "native", not(target_arch = "wasm32")))]

mod support;

use orkestrel_mcp::native::endpoint::{cors_layer, Endpoint, EndpointOptions};
use orkestrel_mcp::native::security::SecurityOptions;
use serde_json::json;
use support::*;

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

async fn status_with(srv: &TestServer, method: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    send(srv.addr, method, headers, body).await.status
}

#[tokio::test]
async fn origin_on_a_loopback_bind_without_a_list() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    for (origin, want) in [
        (None, 200),
        (Some("http://localhost:5173"), 200),
        (Some("http://127.0.0.1"), 200),
        (Some("https://[::1]:8443"), 200),
        (Some("http://evil.example"), 403),
        (Some("http://localhost.evil.example"), 403),
        (Some("http://127.0.0.1.nip.io"), 403),
        (Some("null"), 403),
        (Some("localhost"), 403),
        (Some("file://localhost"), 403),
    ] {
        let mut headers: Vec<_> = POST.to_vec();
        headers.push(("mcp-session-id", &id));
        if let Some(o) = origin {
            headers.push(("origin", o));
        }
        let reply = send(srv.addr, "POST", &headers, PING).await;
        assert_eq!(reply.status, want, "POST origin {origin:?}");
        if want == 403 {
            assert_eq!(reply.header("content-type"), Some("application/json"));
            let body = reply.json();
            assert_eq!(body["id"], json!(null));
            assert_eq!(body["error"]["code"], -32000);
            assert_eq!(body["error"]["message"], "Forbidden: Origin not allowed");
        }
    }
    // Every verb, and before any session check.
    let evil = ("origin", "http://evil.example");
    let sse = ("accept", "text/event-stream");
    assert_eq!(
        status_with(&srv, "GET", &[evil, sse, ("mcp-session-id", &id)], "").await,
        403
    );
    assert_eq!(
        status_with(&srv, "DELETE", &[evil, ("mcp-session-id", &id)], "").await,
        403
    );
    assert_eq!(status_with(&srv, "POST", &[evil], PING).await, 403);
    let ok = [("origin", "http://localhost"), sse, ("mcp-session-id", &id)];
    assert_eq!(open(srv.addr, "GET", &ok, "").await.status(), 200);
}

#[tokio::test]
async fn origin_allowlist_is_exact() {
    let options = EndpointOptions {
        security: SecurityOptions {
            allowed_origins: Some(vec![
                "https://app.example.com".into(),
                "http://localhost:8080".into(),
            ]),
            loopback: true,
            ..SecurityOptions::default()
        },
        sessions: None,
        ..EndpointOptions::default()
    };
    let srv = start(server(), options).await;
    for (origin, want) in [
        ("https://app.example.com", 200),
        ("https://app.example.com:443", 200),
        ("HTTPS://APP.EXAMPLE.COM", 200),
        ("http://app.example.com", 403),
        ("https://app.example.com:8443", 403),
        ("https://app.example.com.evil.example", 403),
        ("https://evil-app.example.com", 403),
        ("http://localhost:8080", 200),
        ("http://localhost:8081", 403),
        ("http://localhost", 403),
    ] {
        let headers: Vec<_> = POST.iter().copied().chain([("origin", origin)]).collect();
        assert_eq!(
            send(srv.addr, "POST", &headers, PING).await.status,
            want,
            "{origin}"
        );
    }
}

#[tokio::test]
async fn host_on_a_loopback_bind() {
    let srv = start(
        server(),
        EndpointOptions {
            sessions: None,
            ..EndpointOptions::default()
        },
    )
    .await;
    let port = srv.addr.port().to_string();
    for (host, want) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        ("localhost".to_owned(), 200),
        (format!("[::1]:{port}"), 200),
        (format!("evil.example:{port}"), 403),
        (format!("localhost.evil.example:{port}"), 403),
        ("127.0.0.1:notaport".to_owned(), 403),
    ] {
        let headers: Vec<_> = POST
            .iter()
            .copied()
            .chain([("host", host.as_str())])
            .collect();
        let reply = send(srv.addr, "POST", &headers, PING).await;
        assert_eq!(reply.status, want, "{host}");
        if want == 403 {
            assert_eq!(
                reply.json()["error"]["message"],
                "Forbidden: Host not allowed"
            );
        }
    }
}

#[tokio::test]
async fn accept_content_type_and_size() {
    let mut options = EndpointOptions::default();
    options.http.max_body_bytes = 1024;
    let srv = start(server(), options).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let s = ("mcp-session-id", id.as_str());
    let json_ct = ("content-type", "application/json");
    for (accept, want, content_type) in [
        (Some("application/json"), 200, Some("application/json")),
        (Some("text/event-stream"), 200, Some("text/event-stream")),
        (
            Some("application/json, text/event-stream"),
            200,
            Some("text/event-stream"),
        ),
        (
            Some("application/json;q=0, text/event-stream"),
            200,
            Some("text/event-stream"),
        ),
        (Some("APPLICATION/JSON"), 200, Some("application/json")),
        (Some("*/*"), 200, Some("text/event-stream")),
        (None, 200, Some("text/event-stream")),
        (Some("text/html"), 406, Some("application/json")),
        (Some("application/json;q=0"), 406, Some("application/json")),
    ] {
        let mut headers = vec![s, json_ct];
        if let Some(a) = accept {
            headers.push(("accept", a));
        }
        let reply = send(srv.addr, "POST", &headers, PING).await;
        assert_eq!(
            (reply.status, reply.header("content-type")),
            (want, content_type),
            "Accept {accept:?}"
        );
    }
    // GET needs SSE.
    let reply = send(srv.addr, "GET", &[s, ("accept", "application/json")], "").await;
    assert_eq!(reply.status, 406);

    for (content_type, want) in [
        (Some("application/json; charset=utf-8"), 200),
        (Some("Application/JSON"), 200),
        (Some("text/plain"), 415),
        (Some("application/x-www-form-urlencoded"), 415),
        (Some("application/jsonx"), 415),
        (None, 415),
    ] {
        let mut headers = vec![s, ("accept", "application/json")];
        if let Some(ct) = content_type {
            headers.push(("content-type", ct));
        }
        let reply = send(srv.addr, "POST", &headers, PING).await;
        assert_eq!(reply.status, want, "Content-Type {content_type:?}");
        if want == 415 {
            assert_eq!(reply.json()["error"]["code"], -32600);
        }
    }

    // Without a session yet (an initialize's POST), a refused media type is answered at the
    // head: the body it announces is never waited for.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: text/plain\r\nAccept: application/json\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n",
        srv.addr
    );
    assert_eq!(support::http::raw(srv.addr, head.as_bytes()).await.0, 415);

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2000)
    );
    let reply = post(srv.addr, &[s], &big).await;
    assert_eq!(reply.status, 413);
    assert_eq!(reply.json()["error"]["code"], -32600);
    // Over the limit before any session check too.
    assert_eq!(post(srv.addr, &[], &big).await.status, 413);
}

#[tokio::test]
async fn the_protocol_version_header() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let s = ("mcp-session-id", id.as_str());
    let v = |x| ("mcp-protocol-version", x);
    for (headers, want) in [
        (vec![], 200),
        (vec![v("2025-06-18")], 200),
        (vec![v("2025-11-25")], 200),
        (vec![v("2025-06-18"), v("2025-06-18")], 200),
        (vec![v("2025-06-18, 2025-06-18")], 200),
        (vec![v("2025-06-18"), v("2025-03-26")], 400),
        (vec![v("1999-01-01")], 400),
        (vec![v("")], 400),
        (vec![v("2026-07-28")], 400),
    ] {
        let mut all = vec![s];
        all.extend(headers.iter().copied());
        let reply = post(srv.addr, &all, PING).await;
        assert_eq!(reply.status, want, "{headers:?}");
        if want == 400 {
            assert_eq!(reply.json()["error"]["code"], -32600);
        }
    }
    let sse = ("accept", "text/event-stream");
    assert_eq!(
        send(srv.addr, "GET", &[s, sse, v("1999-01-01")], "")
            .await
            .status,
        400
    );
    assert_eq!(
        send(srv.addr, "DELETE", &[s, v("1999-01-01")], "")
            .await
            .status,
        400
    );
    // Stateless too.
    let stateless = start(
        server(),
        EndpointOptions {
            sessions: None,
            ..EndpointOptions::default()
        },
    )
    .await;
    assert_eq!(
        post(stateless.addr, &[v("1999-01-01")], PING).await.status,
        400
    );
    assert_eq!(
        post(stateless.addr, &[v("2024-11-05")], PING).await.status,
        200
    );
}

#[tokio::test]
async fn cors_is_opt_in_and_exposes_the_session_header() {
    // Off by default: no CORS headers.
    let srv = start(server(), EndpointOptions::default()).await;
    let reply = post(
        srv.addr,
        &[("origin", "http://localhost:5173")],
        &initialize(1, "2025-06-18"),
    )
    .await;
    assert_eq!(reply.header("access-control-allow-origin"), None);

    let origin = "https://app.example.com";
    let mut options = EndpointOptions::default();
    options.security.allowed_origins = Some(vec![origin.into()]);
    let endpoint = Endpoint::new(server(), options).unwrap();
    let service = tower_layer::Layer::layer(&cors_layer(&[origin.into()]).unwrap(), endpoint);
    let (addr, task) = start_service(service).await;

    let preflight = [
        ("origin", origin),
        ("access-control-request-method", "POST"),
        (
            "access-control-request-headers",
            "content-type, mcp-session-id, mcp-protocol-version",
        ),
    ];
    let reply = send(addr, "OPTIONS", &preflight, "").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some(origin));
    let allowed = reply
        .header("access-control-allow-headers")
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        allowed.contains("mcp-session-id") && allowed.contains("mcp-protocol-version"),
        "{allowed}"
    );

    let reply = post(addr, &[("origin", origin)], &initialize(1, "2025-06-18")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some(origin));
    let exposed = reply
        .header("access-control-expose-headers")
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");

    // Another origin: no CORS grant, and the guard refuses it.
    let reply = post(
        addr,
        &[("origin", "https://evil.example")],
        &initialize(1, "2025-06-18"),
    )
    .await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.header("access-control-allow-origin"), None);
    task.abort();
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

#[tokio::test]
async fn the_version_a_request_is_served_under() {
    use orkestrel_mcp::{RequestContext, Tool};
    let server = server();
    server.tools().add(Tool::with_context(
        "version",
        |_: Empty, ctx: RequestContext| async move {
            Ok::<_, String>(ctx.protocol_version.unwrap_or_default())
        },
    ));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"version","arguments":{}}}"#;
    let served = |reply: Reply| {
        reply.messages()[0]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let srv = start(server.clone(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-06-18").await;
    let s = ("mcp-session-id", id.as_str());
    assert_eq!(
        served(post(srv.addr, &[s], call).await),
        "2025-06-18",
        "absent: the negotiated version"
    );
    let header = ("mcp-protocol-version", "2025-11-25");
    assert_eq!(
        served(post(srv.addr, &[s, header], call).await),
        "2025-11-25",
        "the header wins"
    );

    let stateless = start(
        server,
        EndpointOptions {
            sessions: None,
            ..EndpointOptions::default()
        },
    )
    .await;
    assert_eq!(
        served(post(stateless.addr, &[], call).await),
        "2025-03-26",
        "no session: 2025-03-26"
    );
}

/// A raw request to `target` with these header lines and a ping body.
fn raw_ping(request_line: &str, header_lines: &[&str]) -> Vec<u8> {
    let mut head = format!(
        "{request_line}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        PING.len()
    );
    for line in header_lines {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.push_str(PING);
    head.into_bytes()
}

#[tokio::test]
async fn host_is_required_on_http_1_1_and_checked_on_http_1_0() {
    use support::http::raw;
    let stateless = EndpointOptions {
        sessions: None,
        ..EndpointOptions::default()
    };
    let srv = start(server(), stateless).await;
    let host = format!("Host: {}", srv.addr);
    // HTTP/1.1 without Host: 400 (RFC 9112 §3.2), the body a JSON-RPC error naming it.
    let (status, body) = raw(srv.addr, &raw_ping("POST /mcp HTTP/1.1", &[])).await;
    assert_eq!(status, 400, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32600);
    assert!(error["error"]["message"].as_str().unwrap().contains("Host"));
    // The WebSocket upgrade too.
    let upgrade = b"GET /mcp HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";
    let mut stream = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, upgrade)
        .await
        .unwrap();
    let mut reply = vec![0u8; 1024];
    let n = tokio::time::timeout(
        DEADLINE,
        tokio::io::AsyncReadExt::read(&mut stream, &mut reply),
    )
    .await
    .expect("an answer within the deadline")
    .unwrap();
    let text = String::from_utf8_lossy(&reply[..n]);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    // HTTP/1.0 may omit Host, but the loopback bind's Host guard still applies: 403.
    let (status, body) = raw(srv.addr, &raw_ping("POST /mcp HTTP/1.0", &[])).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Forbidden: Host not allowed"), "{body}");
    let (status, _) = raw(
        srv.addr,
        &raw_ping("POST /mcp HTTP/1.0", &["Host: evil.example"]),
    )
    .await;
    assert_eq!(status, 403);
    let (status, body) = raw(srv.addr, &raw_ping("POST /mcp HTTP/1.0", &[&host])).await;
    assert_eq!(status, 200, "{body}");
    // An absolute-form target names the host the request is for: checked as well as Host.
    let line = "POST http://evil.example/mcp HTTP/1.1";
    assert_eq!(raw(srv.addr, &raw_ping(line, &[&host])).await.0, 403);
    let line = format!("POST http://{}/mcp HTTP/1.1", srv.addr);
    assert_eq!(raw(srv.addr, &raw_ping(&line, &[&host])).await.0, 200);
    // Bound elsewhere with no Host list, HTTP/1.0 without Host is served; HTTP/1.1 is still 400.
    let open = EndpointOptions {
        security: SecurityOptions::default(),
        sessions: None,
        ..EndpointOptions::default()
    };
    let srv = start(server(), open).await;
    assert_eq!(
        raw(srv.addr, &raw_ping("POST /mcp HTTP/1.0", &[])).await.0,
        200
    );
    assert_eq!(
        raw(srv.addr, &raw_ping("POST /mcp HTTP/1.1", &[])).await.0,
        400
    );
}

#[tokio::test]
async fn mcp_headers_repeated_with_different_values_are_400_naming_the_header() {
    let srv = start(server(), EndpointOptions::default()).await;
    let id = new_session(srv.addr, "2025-11-25").await;
    let cases = [
        ("mcp-session-id", id.as_str(), "other", "Mcp-Session-Id"),
        (
            "mcp-protocol-version",
            "2025-11-25",
            "2025-06-18",
            "MCP-Protocol-Version",
        ),
        ("mcp-method", "ping", "tools/list", "Mcp-Method"),
        ("mcp-name", "a", "b", "Mcp-Name"),
    ];
    for (name, first, second, shown) in cases {
        let mut headers = vec![(name, first), (name, second)];
        if name != "mcp-session-id" {
            headers.push(("mcp-session-id", id.as_str()));
        }
        let reply = post(srv.addr, &headers, PING).await;
        assert_eq!(reply.status, 400, "{name}: {}", reply.body);
        let error = reply.json();
        assert_eq!(error["id"], serde_json::Value::Null);
        assert_eq!(error["error"]["code"], -32600);
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("conflicting {shown} headers")),
            "{message}"
        );
    }
    // GET and DELETE of the session too; the session is still there afterwards.
    let sse = ("accept", "text/event-stream");
    let two = [
        sse,
        ("mcp-session-id", id.as_str()),
        ("mcp-session-id", "other"),
    ];
    assert_eq!(send(srv.addr, "GET", &two, "").await.status, 400);
    assert_eq!(send(srv.addr, "DELETE", &two, "").await.status, 400);
    // The same value twice is one value.
    let same = [
        ("mcp-session-id", id.as_str()),
        ("mcp-session-id", id.as_str()),
    ];
    let reply = post(srv.addr, &same, PING).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}
