//! The WebSocket server (seed clause 16, `createWebSocketServer`): MCP over one RFC 6455
//! connection, upgraded from a request on the same hyper server and path as Streamable HTTP.
//!
//! [`handshake`] decides what an incoming request is (the seed's decline rules):
//!
//! | request | answer |
//! |---|---|
//! | no `Upgrade: websocket`, another path, or not `GET` | not a WebSocket request: the HTTP service answers it |
//! | `Upgrade: websocket` over HTTP/1.0, without `Connection: upgrade` or without a valid `Sec-WebSocket-Key` | `400` |
//! | `Sec-WebSocket-Version` other than `13` | `426` with `Sec-WebSocket-Version: 13` |
//! | otherwise | `101`, echoing the subprotocol `mcp` when the client offered it (exactly: `MCP` is another name) |
//!
//! Then [`run`] pumps the connection: every text frame is one JSON-RPC message, handed to the
//! connection body shared with stdio ([`crate::server::connection`], driven by `native::connection`) under
//! the WebSocket rules: requests are dispatched concurrently (several in flight, each answered by
//! id, in completion order); notifications and responses get no reply; an invalid message gets
//! its JSON-RPC error (text that is not JSON: `-32700` with id `null`; a broken notification:
//! nothing, it is logged). Tools' notifications (progress, logs) go out on the socket, through an
//! output queue of at most 1024 messages (answers wait for room; a notification that finds it full
//! is refused). Frames:
//!
//! | peer sends | server does |
//! |---|---|
//! | ping | pong (tungstenite answers it) |
//! | pings past the budget (64 at once, one more a second: [`PingBudget`]), each owing a pong a non-reading peer would let pile up | close `1008` "too many pings" |
//! | close | close in reply, then the connection ends |
//! | a binary message | close `1003` (unsupported data) |
//! | text that is not UTF-8 | close `1007` (invalid payload) |
//! | a message over the size limit (default 4 MiB) | close `1009` (message too big) |
//! | a protocol violation | close `1002` |
//! | (the upgrade's bearer token expires: its `exp` plus 30 s) | close `1008` "the access token expired" |
//! | nothing: the TCP peer vanished | the connection task ends, its in-flight requests are dropped |
//! | nothing for [`WebSocketOptions::ping_interval`] (default 30 s) | a ping; nothing again for one more interval (no pong, no message): the peer is dead, the server sends close `1001` "ping timeout" (without waiting for a reply) and ends the connection, its in-flight requests dropped ([`crate::server::liveness`]) |
//! | a request while `max_in_flight` (default 256) are running | at once `-32000` "too many requests in flight" with its id |
//!
//! After the server sends a close it waits at most [`CLOSE_GRACE`] for the peer's reply (and at
//! most as long for the close to go out to a peer that reads nothing). At a
//! server shutdown the connection first drains (at most [`WebSocketOptions::drain`]): the calls
//! in flight get their answers, then close `1001` ([`run_draining`]).

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::native::connection::{Driver, Output};
use crate::native::http::{empty, plain, ResponseBody, DEFAULT_MAX_BODY_BYTES, DEFAULT_MCP_PATH};
use crate::server::connection::ConnectionOptions;
use crate::server::liveness::{Beat, Liveness, PingBudget};
use crate::server::McpServer;

/// The subprotocol the transports negotiate (seed `MCP_WEBSOCKET_SUBPROTOCOL`; its one home is
/// [`crate::http::headers`]).
pub use crate::http::headers::MCP_WEBSOCKET_SUBPROTOCOL;
/// How long the server waits for the peer's close reply after sending a close: 5 s.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// tungstenite's read buffer per connection: 4 KiB. Its default (128 KiB) is zero-filled on
/// the first read, so every idle connection kept ~137 KiB resident (1,000 idle connections:
/// 140 KB each). With 8 KiB an idle, initialized connection took ~14.2 KB; with 4 KiB ~10.1 KB
/// (`memprobe`; ~8.9 KB since the server's state of a scope is compact), at the same server CPU per message with 64 in flight — since answers are
/// flushed once per burst, not once each, a smaller buffer costs a few more reads, not half
/// the messages/s as it did with a flush per answer. A message larger than the buffer still
/// arrives whole — the buffer grows to fit the frame — it just takes more reads.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

/// The most a connection's output may hold unwritten (what the peer has not read yet), on the
/// server's connections and the native client's alike: 64 MiB
/// beyond tungstenite's 128 KiB write buffer. Past it a message cannot be queued (the
/// connection ends) and an automatic pong waits alone, the newest replacing the older ones —
/// so a peer that pings within its [`PingBudget`] and never reads is still bounded. A single
/// answer larger than 64 MiB cannot go out over a WebSocket (tungstenite's own clients refuse
/// messages over 64 MiB by default).
pub const MAX_WRITE_BUFFER_BYTES: usize = 64 * 1024 * 1024 + 128 * 1024;

/// Options (seed `WebSocketServerOptions`).
#[derive(Clone, Debug)]
pub struct WebSocketOptions {
    /// The upgrade path (default `/mcp`).
    pub path: String,
    /// The subprotocol echoed when offered (default `mcp`).
    pub subprotocol: String,
    /// The largest message (and frame) accepted, in bytes (default 4 MiB); a larger one → close
    /// `1009`.
    pub max_message_bytes: usize,
    /// The most requests in flight on one connection (default 256); a request beyond it is
    /// answered at once with `-32000` "too many requests in flight" (nothing runs).
    pub max_in_flight: usize,
    /// Ping the peer after this long without a frame from it, and end the connection when one
    /// more interval passes without one (default [`DEFAULT_PING_INTERVAL`], 30 s; `None`: never
    /// ping, a silent peer stays until TCP notices).
    pub ping_interval: Option<Duration>,
    /// When the server shuts down, how long the connection waits for its calls in flight to be
    /// answered before it closes with `1001` anyway (default [`DEFAULT_DRAIN`], 10 s).
    pub drain: Duration,
}

/// The default of [`WebSocketOptions::ping_interval`]: 30 s.
pub const DEFAULT_PING_INTERVAL: Duration = crate::server::liveness::DEFAULT_PING_INTERVAL;

/// The default of [`WebSocketOptions::drain`]: 10 s.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(10);

/// The default of [`WebSocketOptions::max_in_flight`] (the connection body's default).
pub const DEFAULT_MAX_IN_FLIGHT: usize = crate::server::connection::DEFAULT_MAX_IN_FLIGHT;

impl Default for WebSocketOptions {
    fn default() -> Self {
        WebSocketOptions {
            path: DEFAULT_MCP_PATH.to_owned(),
            subprotocol: MCP_WEBSOCKET_SUBPROTOCOL.to_owned(),
            max_message_bytes: DEFAULT_MAX_BODY_BYTES,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            ping_interval: Some(DEFAULT_PING_INTERVAL),
            drain: DEFAULT_DRAIN,
        }
    }
}

/// What a request is to the WebSocket server.
#[derive(Debug)]
pub enum Handshake {
    /// Not a WebSocket upgrade for this path: let the HTTP service answer.
    NotWebSocket,
    /// A WebSocket upgrade that is refused with this answer (`400` / `426`).
    Refuse(Response<ResponseBody>),
    /// A valid upgrade: accept it with [`upgrade`].
    Accept,
}

/// Whether the comma-separated field `name` holds `token`, compared as `same` does.
fn lists(
    headers: &HeaderMap,
    name: header::HeaderName,
    token: &str,
    same: fn(&str, &str) -> bool,
) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| same(t.trim(), token)))
    })
}

/// A case-insensitive token (`Upgrade`, `Connection`: RFC 9110 §7.8, §7.6.1).
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    lists(headers, name, token, str::eq_ignore_ascii_case)
}

/// The request's path without the query (seed `upgradeRequestPath`).
pub fn upgrade_request_path<B>(request: &Request<B>) -> &str {
    request.uri().path()
}

/// Classify a request (see the module table).
pub fn handshake<B>(request: &Request<B>, options: &WebSocketOptions) -> Handshake {
    let headers = request.headers();
    if !has_token(headers, header::UPGRADE, "websocket")
        || upgrade_request_path(request) != options.path
        || request.method() != Method::GET
    {
        return Handshake::NotWebSocket;
    }
    // RFC 6455 §4.2.1: the opening handshake is an HTTP/1.1 (or later) GET; an HTTP/1.0
    // connection would get a 101 it cannot keep.
    if request.version() < hyper::Version::HTTP_11 {
        return Handshake::Refuse(plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: a WebSocket upgrade needs HTTP/1.1",
        ));
    }
    if !has_token(headers, header::CONNECTION, "upgrade") {
        return Handshake::Refuse(plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: Connection: upgrade is required",
        ));
    }
    let key_ok = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .and_then(|k| k.to_str().ok())
        .is_some_and(|k| k.len() == 24 && k.ends_with("=="));
    if !key_ok {
        return Handshake::Refuse(plain(
            StatusCode::BAD_REQUEST,
            "Bad Request: a valid Sec-WebSocket-Key is required",
        ));
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v.as_bytes() != b"13")
    {
        let mut response = empty(StatusCode::UPGRADE_REQUIRED);
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return Handshake::Refuse(response);
    }
    Handshake::Accept
}

/// Accept a request [`handshake`] classified as [`Handshake::Accept`]: answer `101` and spawn the
/// connection ([`run`]) once hyper hands over the socket. `shutdown` turning `true` closes the
/// connection with `1001` (going away).
pub fn upgrade<B>(
    server: McpServer,
    mut request: Request<B>,
    options: &WebSocketOptions,
    shutdown: watch::Receiver<bool>,
) -> Response<ResponseBody> {
    let headers = request.headers();
    let accept = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|k| derive_accept_key(k.as_bytes()))
        .unwrap_or_default();
    // Subprotocol names compare exactly (RFC 6455 §4.2.2: the server echoes one of the
    // client's values; RFC 7936): `MCP` is not `mcp`, and echoing `mcp` to it failed the client.
    let offered = lists(
        headers,
        header::SEC_WEBSOCKET_PROTOCOL,
        &options.subprotocol,
        |a, b| a == b,
    );
    let on_upgrade = hyper::upgrade::on(&mut request);
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_write_buffer_size(MAX_WRITE_BUFFER_BYTES)
        .max_message_size(Some(options.max_message_bytes))
        .max_frame_size(Some(options.max_message_bytes));
    let (max_in_flight, drain) = (options.max_in_flight, options.drain);
    let identity = request
        .extensions()
        .get::<Arc<crate::http::identity::Identity>>()
        .cloned();
    let ping_interval = options.ping_interval;
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let io = hyper_util::rt::TokioIo::new(upgraded);
                let ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
                run_as(
                    server,
                    ws,
                    shutdown,
                    max_in_flight,
                    drain,
                    ping_interval,
                    identity,
                )
                .await;
            }
            Err(e) => tracing::debug!(error = %e, "ws: upgrade failed"),
        }
    });
    let mut response = empty(StatusCode::SWITCHING_PROTOCOLS);
    let out = response.headers_mut();
    out.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    out.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        out.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if offered {
        if let Ok(protocol) = HeaderValue::from_str(&options.subprotocol) {
            out.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol);
        }
    }
    response
}

fn close_frame(code: CloseCode, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// Pump one established connection until it ends (see the module tables), with at most
/// `max_in_flight` requests running at once, no pings ([`run_pinging`] pings), draining for at
/// most [`DEFAULT_DRAIN`] at a shutdown ([`run_draining`]). In-flight requests are dropped
/// (cancelled) when it ends.
pub async fn run<S>(
    server: McpServer,
    ws: WebSocketStream<S>,
    shutdown: watch::Receiver<bool>,
    max_in_flight: usize,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    run_with(server, ws, shutdown, max_in_flight, DEFAULT_DRAIN, None).await;
}

/// [`run`] with its shutdown drain bound. When `shutdown` turns `true` the connection drains:
/// a new request is answered at once with `-32000` "the server is shutting down", answers to
/// the server's own requests are still taken, listen streams are answered and end, and the
/// calls in flight finish and get their answers; once none is left (or `drain` passed) the
/// server sends close `1001` (going away) and waits at most [`CLOSE_GRACE`] for the reply.
pub async fn run_draining<S>(
    server: McpServer,
    ws: WebSocketStream<S>,
    shutdown: watch::Receiver<bool>,
    max_in_flight: usize,
    drain: Duration,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    run_with(server, ws, shutdown, max_in_flight, drain, None).await;
}

/// [`run`], pinging the peer after `ping_interval` of silence and ending the connection when it
/// stays silent one more interval (see [`WebSocketOptions::ping_interval`]).
pub async fn run_pinging<S>(
    server: McpServer,
    ws: WebSocketStream<S>,
    shutdown: watch::Receiver<bool>,
    max_in_flight: usize,
    ping_interval: Option<Duration>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    run_with(
        server,
        ws,
        shutdown,
        max_in_flight,
        DEFAULT_DRAIN,
        ping_interval,
    )
    .await;
}

/// [`run`] with both bounds: the shutdown `drain` ([`run_draining`]) and the `ping_interval`
/// ([`run_pinging`]); what [`upgrade`] runs with the [`WebSocketOptions`] (as the identity
/// its gated upgrade verified, when it has one).
pub async fn run_with<S>(
    server: McpServer,
    ws: WebSocketStream<S>,
    shutdown: watch::Receiver<bool>,
    max_in_flight: usize,
    drain: Duration,
    ping_interval: Option<Duration>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    run_as(
        server,
        ws,
        shutdown,
        max_in_flight,
        drain,
        ping_interval,
        None,
    )
    .await;
}

/// [`run_with`], every request run as `identity` (the upgrade's verified bearer token).
async fn run_as<S>(
    server: McpServer,
    mut ws: WebSocketStream<S>,
    mut shutdown: watch::Receiver<bool>,
    max_in_flight: usize,
    drain: Duration,
    ping_interval: Option<Duration>,
    identity: Option<Arc<crate::http::identity::Identity>>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let opened = tokio::time::Instant::now();
    let mut liveness = ping_interval.map(|interval| Liveness::new(interval, Duration::ZERO));
    let mut pings = PingBudget::new(Duration::ZERO);
    let (out_tx, mut out_rx) = Output::new();
    let rules = ConnectionOptions::websocket(max_in_flight);
    let mut conn = Driver::new(server, "ws", rules, out_tx);
    // A connection authorized by a token ends when the token does.
    let expires = identity
        .as_ref()
        .and_then(|i| i.valid_until())
        .map(|until| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            tokio::time::Instant::now() + Duration::from_secs(until.saturating_sub(now))
        });
    conn.set_identity(identity);
    let mut closing: Option<tokio::time::Instant> = None;
    let mut draining: Option<tokio::time::Instant> = None;
    // Answers are fed to the socket without a flush; the flush comes when the peer has no
    // more frames for us yet ([`next_or_flush`]), so a burst of answers is one write.
    let mut unflushed = false;
    // One timer for the liveness rule, moved only when it fires (the rule then says how long is
    // left): a message heard costs no timer registration.
    let far = tokio::time::Instant::now() + Duration::from_secs(86_400);
    let beat = tokio::time::sleep_until(liveness.map_or(far, |l| opened + l.due()));
    tokio::pin!(beat);
    loop {
        if let Some(until) = draining.filter(|_| closing.is_none()) {
            if conn.in_flight() == 0 || tokio::time::Instant::now() >= until {
                while let Ok(queued) = out_rx.try_recv() {
                    if ws.send(Message::text(queued.text)).await.is_err() {
                        break;
                    }
                }
                let close = close_frame(CloseCode::Away, "server shutting down");
                if !send_within(&mut ws, close, CLOSE_GRACE).await {
                    break;
                }
                conn.close();
                closing = Some(tokio::time::Instant::now() + CLOSE_GRACE);
            }
        }
        let drained =
            draining.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400));
        let deadline =
            closing.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400));
        tokio::select! {
            incoming = next_or_flush(&mut ws, &mut unflushed) => {
                if let (Some(Ok(_)), Some(l)) = (&incoming, liveness.as_mut()) {
                    l.heard(opened.elapsed());
                }
                let close = match incoming {
                    None => break,
                    Some(Ok(Message::Text(text))) => {
                        conn.ready().await;
                        if let Some(answer) = conn.receive(text.as_bytes()) {
                            if ws.feed(Message::text(answer)).await.is_err() {
                                break;
                            }
                            unflushed = true;
                        }
                        None
                    }
                    Some(Ok(Message::Binary(_))) => {
                        Some(close_frame(CloseCode::Unsupported, "binary messages are not supported"))
                    }
                    Some(Ok(Message::Ping(_))) if closing.is_none() && !pings.ping(opened.elapsed()) => {
                        tracing::warn!("ws: the peer sends pings faster than its budget; closing (1008)");
                        Some(close_frame(CloseCode::Policy, "too many pings"))
                    }
                    Some(Ok(_)) => None, // ping (answered), pong, close (answered), raw frame
                    Some(Err(WsError::Capacity(CapacityError::MessageTooLong { .. })))
                    | Some(Err(WsError::Capacity(_))) => {
                        Some(close_frame(CloseCode::Size, "message too big"))
                    }
                    Some(Err(WsError::Utf8(_))) => {
                        Some(close_frame(CloseCode::Invalid, "text is not UTF-8"))
                    }
                    Some(Err(WsError::Protocol(e))) => {
                        tracing::debug!(error = %e, "ws: protocol error");
                        Some(close_frame(CloseCode::Protocol, "protocol error"))
                    }
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "ws: connection ended");
                        break;
                    }
                };
                if let Some(frame) = close {
                    if closing.is_some() {
                        break;
                    }
                    if !send_within(&mut ws, frame, CLOSE_GRACE).await {
                        break;
                    }
                    conn.close();
                    closing = Some(tokio::time::Instant::now() + CLOSE_GRACE);
                }
            }
            Some(queued) = out_rx.recv(), if closing.is_none() => {
                // With whatever else is queued already: one flush for all of them. A message's
                // share of the output budget is freed once it is in the socket's own buffer.
                if ws.feed(Message::text(queued.text)).await.is_err() {
                    break;
                }
                let mut fed = true;
                while let Ok(queued) = out_rx.try_recv() {
                    if ws.feed(Message::text(queued.text)).await.is_err() {
                        fed = false;
                        break;
                    }
                }
                if !fed {
                    break;
                }
                unflushed = true;
            }
            changed = shutdown.changed(), if closing.is_none() && draining.is_none() => {
                if changed.is_err() || *shutdown.borrow() {
                    conn.drain();
                    draining = Some(tokio::time::Instant::now() + drain);
                }
            }
            () = tokio::time::sleep_until(drained), if closing.is_none() && draining.is_some() => {}
            () = tokio::time::sleep_until(expires.unwrap_or(far)), if closing.is_none() && expires.is_some() => {
                tracing::info!("ws: the connection's token expired; closing (1008)");
                let close = close_frame(CloseCode::Policy, "the access token expired");
                if !send_within(&mut ws, close, CLOSE_GRACE).await {
                    break;
                }
                conn.close();
                closing = Some(tokio::time::Instant::now() + CLOSE_GRACE);
            }
            () = tokio::time::sleep_until(deadline), if closing.is_some() => break,
            () = &mut beat, if closing.is_none() && liveness.is_some() => {
                if !ping(&mut ws, liveness.as_mut(), opened.elapsed()).await {
                    break;
                }
                if let Some(l) = liveness {
                    beat.as_mut().reset(opened + l.due());
                }
            }
        }
    }
    conn.end(None).await;
    tracing::debug!("ws: connection closed");
}

/// The peer's next frame; while none has arrived yet, the answers fed since the last flush go
/// out (`unflushed` then turns `false`): a line loop's "flush when the input runs dry", so a
/// burst of requests is answered in one write instead of one per answer. A failed flush is the
/// stream's error, as a failed read would be.
fn next_or_flush<'a, S>(
    ws: &'a mut WebSocketStream<S>,
    unflushed: &'a mut bool,
) -> impl std::future::Future<Output = Option<Result<Message, WsError>>> + 'a
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    futures::future::poll_fn(move |cx| {
        if let Poll::Ready(incoming) = ws.poll_next_unpin(cx) {
            return Poll::Ready(incoming);
        }
        if *unflushed {
            match ws.poll_flush_unpin(cx) {
                Poll::Ready(Ok(())) => *unflushed = false,
                Poll::Ready(Err(e)) => return Poll::Ready(Some(Err(e))),
                Poll::Pending => {}
            }
        }
        Poll::Pending
    })
}

/// Follow the liveness rule at `now`: send a ping when due; `false` when the connection is to
/// end (the peer is dead — it gets close `1001` "ping timeout" if the socket takes it within a
/// short bound — or a write failed).
async fn ping<S>(
    ws: &mut WebSocketStream<S>,
    liveness: Option<&mut Liveness>,
    now: Duration,
) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some(liveness) = liveness else {
        return true;
    };
    match liveness.beat(now) {
        Beat::Wait(_) => true,
        // A peer that cannot take the ping in time is taken for gone.
        Beat::Ping => {
            let bound = liveness.interval().min(CLOSE_GRACE);
            send_within(ws, Message::Ping(Vec::new().into()), bound).await
        }
        Beat::Dead => {
            tracing::debug!("ws: no answer to a ping; the peer is gone");
            let bound = liveness.interval().min(CLOSE_GRACE);
            send_within(ws, close_frame(CloseCode::Away, "ping timeout"), bound).await;
            false
        }
    }
}

/// Send `message` within `limit`: `false` when the send failed, or a peer that reads nothing
/// held it (in a full socket) past the limit. Every close and keep-alive ping the server sends
/// goes through here, so no peer can hold a connection's end.
async fn send_within<S>(ws: &mut WebSocketStream<S>, message: Message, limit: Duration) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    matches!(
        tokio::time::timeout(limit, ws.send(message)).await,
        Ok(Ok(()))
    )
}
