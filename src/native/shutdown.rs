//! Serving an [`Endpoint`] until a signal, then shutting down gracefully: what
//! `orkestrel-mcp serve --http` does on SIGTERM or Ctrl-C.
//!
//! ```text
//! signal ─► stop accepting ─► Endpoint::shutdown ─┬─► HTTP: requests in flight finish (≤ drain), SSE GET streams end
//!                                                 ├─► listen streams: answered with their result, end
//!                                                 └─► WebSocket: new requests refused (-32000), calls in flight
//!                                                     answered (≤ WebSocketOptions::drain), then close 1001
//! ```
//!
//! Every wait is bounded: after `drain` the SSE streams still open end with a `retry` field
//! ([`Endpoint::end_streams`]); after `drain` + [`CLOSE_GRACE`] the HTTP connections still open
//! are dropped, and after as long again the WebSocket tasks still running are left to the
//! runtime's end.
//! The [MCP lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#shutdown)
//! leaves a server's shutdown to the transport; this is ours.

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::native::endpoint::Endpoint;
use crate::native::http::{serve_with, HttpService, ServeOptions, ServedBody};
use crate::native::ws::CLOSE_GRACE;

/// The default drain: how long calls in flight get to finish at a shutdown, 10 s (the same as
/// [`crate::native::ws::DEFAULT_DRAIN`] and [`crate::native::http::SHUTDOWN_GRACE`]).
pub const DEFAULT_DRAIN: Duration = crate::native::ws::DEFAULT_DRAIN;

/// Serve `service` on `listener` — `endpoint` itself, or `endpoint` wrapped in layers (e.g.
/// [`cors_layer`](crate::native::endpoint::cors_layer)) — until `signal` resolves, then shut
/// down gracefully (see the module diagram): stop accepting, call [`Endpoint::shutdown`], after
/// `drain` call [`Endpoint::end_streams`], wait for HTTP connections at most `drain` +
/// [`CLOSE_GRACE`], then for WebSocket connections at most as long again. The WebSocket drain itself is
/// [`WebSocketOptions::drain`](crate::native::ws::WebSocketOptions::drain) of the endpoint's
/// options; give both the same value.
///
/// # Errors
/// As [`crate::native::http::serve`].
pub async fn serve_gracefully<S, B>(
    listener: TcpListener,
    endpoint: Endpoint,
    service: S,
    signal: impl Future<Output = ()>,
    drain: Duration,
) -> io::Result<()>
where
    S: HttpService<B>,
    B: ServedBody,
{
    let options = ServeOptions::default();
    serve_gracefully_with(listener, endpoint, service, signal, drain, options).await
}

/// [`serve_gracefully`] admitting and closing connections by `options` (its
/// [`ServeOptions::shutdown_grace`] is replaced by `drain` + [`CLOSE_GRACE`]).
///
/// # Errors
/// As [`crate::native::http::serve`].
pub async fn serve_gracefully_with<S, B>(
    listener: TcpListener,
    endpoint: Endpoint,
    service: S,
    signal: impl Future<Output = ()>,
    drain: Duration,
    options: ServeOptions,
) -> io::Result<()>
where
    S: HttpService<B>,
    B: ServedBody,
{
    let stop = endpoint.clone();
    let (began, begun) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        signal.await;
        tracing::info!(?drain, "shutting down: draining calls in flight");
        stop.shutdown();
        let _ = began.send(());
    };
    // After the drain, the SSE streams still open end with a `retry` (their calls go on being
    // unanswered: the client may resume elsewhere), so the HTTP connections can close.
    let late = endpoint.clone();
    let ender = tokio::spawn(async move {
        if begun.await.is_ok() {
            tokio::time::sleep(drain).await;
            late.end_streams();
        }
    });
    let options = ServeOptions {
        shutdown_grace: drain + CLOSE_GRACE,
        ..options
    };
    let served = serve_with(listener, service, shutdown, options).await;
    ender.abort();
    served?;
    if tokio::time::timeout(drain + CLOSE_GRACE, endpoint.websockets_closed())
        .await
        .is_err()
    {
        tracing::warn!("WebSocket connections still open after the drain");
    }
    Ok(())
}
