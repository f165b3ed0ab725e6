//! The body of an SSE response (spec `basic/transports`; WHATWG `text/event-stream`): a channel of
//! ready-encoded events interleaved with keep-alive comments (default every 15 s), detaching its
//! session stream when dropped — which hyper does when the client goes away.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::Stream;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::Response;

use crate::native::http::ResponseBody;
use crate::session::Session;
use crate::sse::KEEP_ALIVE;

/// Detaches a connection from its session stream when the response body is dropped (the client
/// went away, or the stream ended).
#[derive(Debug)]
pub(crate) struct Detach {
    pub(crate) session: Arc<Session>,
    pub(crate) stream: u64,
    pub(crate) token: u64,
}

impl Drop for Detach {
    fn drop(&mut self) {
        self.session.detach(self.stream, self.token);
    }
}

/// The body of an SSE response: the events of a channel, interleaved with keep-alive comments;
/// ends when the channel ends.
struct EventBody {
    events: mpsc::UnboundedReceiver<String>,
    keep_alive: Option<tokio::time::Interval>,
    _detach: Option<Detach>,
}

impl Stream for EventBody {
    type Item = Result<Frame<Bytes>, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.events).poll_next(cx) {
            Poll::Ready(Some(text)) => {
                if let Some(interval) = &mut this.keep_alive {
                    interval.reset();
                }
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(text)))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if let Some(interval) = &mut this.keep_alive {
            if interval.poll_tick(cx).is_ready() {
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                    KEEP_ALIVE.as_bytes(),
                )))));
            }
        }
        Poll::Pending
    }
}

/// A `200 text/event-stream` response streaming `events`.
pub(crate) fn sse_response(
    events: mpsc::UnboundedReceiver<String>,
    keep_alive: Option<Duration>,
    detach: Option<Detach>,
) -> Response<ResponseBody> {
    let keep_alive = keep_alive.filter(|d| !d.is_zero()).map(|period| {
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    let body = EventBody {
        events,
        keep_alive,
        _detach: detach,
    };
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(body)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
