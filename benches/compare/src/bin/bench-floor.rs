//! The floors: `--http ADDR`, a bare hyper server that reads each request body and answers a
//! fixed JSON body; `--stdio`, a plain serde line loop (parse the line, answer the id with the
//! echo text), blocking std I/O with buffered writes flushed when input runs dry; `--ws ADDR`,
//! a bare tokio-tungstenite server (subprotocol `mcp` echoed) answering each text message with
//! the serde floor (`floor_call`; a fixed result for `initialize`, nothing for notifications),
//! one message after another.

use std::convert::Infallible;
use std::io::{BufRead, Write};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use orkestrel_mcp_bench::FLOOR_REPLY;
use serde_json::{json, Value};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--http") => {
            let addr = args.get(1).cloned().unwrap_or_else(|| "127.0.0.1:0".into());
            tokio::runtime::Runtime::new()?.block_on(http(addr))
        }
        Some("--ws") => {
            let addr = args.get(1).cloned().unwrap_or_else(|| "127.0.0.1:0".into());
            tokio::runtime::Runtime::new()?.block_on(ws(addr))
        }
        Some("--stdio") => line_loop(),
        _ => {
            eprintln!("usage: bench-floor --http ADDR | --ws ADDR | --stdio");
            std::process::exit(2)
        }
    }
}

async fn http(addr: String) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(|request: Request<hyper::body::Incoming>| async {
                    let _body = request.into_body().collect().await;
                    let mut response =
                        Response::new(Full::new(Bytes::from_static(FLOOR_REPLY.as_bytes())));
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(response)
                });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[allow(clippy::result_large_err)] // the handshake callback's signature is tungstenite's
async fn ws(addr: String) -> std::io::Result<()> {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::handshake::server::{
        Request as WsRequest, Response as WsResponse,
    };
    use tokio_tungstenite::tungstenite::Message;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let echo_protocol = |_: &WsRequest, mut response: WsResponse| {
                response.headers_mut().insert(
                    "sec-websocket-protocol",
                    hyper::header::HeaderValue::from_static("mcp"),
                );
                Ok(response)
            };
            let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(stream, echo_protocol).await
            else {
                return;
            };
            while let Some(Ok(message)) = socket.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let request: Value = match serde_json::from_str(text.as_str()) {
                    Ok(v) => v,
                    Err(_) => continue,
                };
                let reply = match request.get("method").and_then(Value::as_str) {
                    _ if request.get("id").is_none() => continue, // a notification
                    Some("initialize") => json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "serverInfo": {"name": "floor", "version": "0"}}})
                    .to_string(),
                    _ => String::from_utf8(orkestrel_mcp_bench::floor_call(text.as_bytes()))
                        .expect("serde writes UTF-8"),
                };
                if socket.send(Message::text(reply)).await.is_err() {
                    break;
                }
            }
        });
    }
}

fn line_loop() -> std::io::Result<()> {
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return output.flush();
        }
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id") else {
            continue; // a notification
        };
        let text = request
            .pointer("/params/arguments/text")
            .cloned()
            .unwrap_or(Value::Null);
        let reply = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": { "content": [ { "type": "text", "text": text } ] }
        });
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}
