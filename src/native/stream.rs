//! The one SSE body on native (spec `basic/transports`; WHATWG `text/event-stream`): the core's
//! [`EventStream`] written out as frames, interleaved with [`KEEP_ALIVE`] comments on a tokio
//! timer (default every 15 s of silence). Dropping the body — which hyper does when the client
//! goes away — drops the stream, which cancels a stateless request or detaches a session stream
//! (the core decides which).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::{FutureExt, Stream, StreamExt};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;

use crate::http::EventStream;
use crate::wire::sse::KEEP_ALIVE;

/// The response body type of the native routes.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// The events of a stream, interleaved with keep-alive comments; ends when the stream ends.
struct EventBody {
    /// Events that were ready when the body was made, sent first as one frame.
    ready: Option<Bytes>,
    events: EventStream,
    keep_alive: KeepAlive,
}

/// The keep-alive timer of an [`EventBody`], made the first time the stream has nothing to
/// send (a stream answered at once never arms a timer).
enum KeepAlive {
    Never,
    Unarmed(Duration),
    Armed(tokio::time::Interval),
}

impl KeepAlive {
    /// An event went out: the silence starts again.
    fn reset(&mut self) {
        if let KeepAlive::Armed(interval) = self {
            interval.reset();
        }
    }

    /// Whether a keep-alive comment is due now (arming the timer on the first call).
    fn poll_due(&mut self, cx: &mut Context<'_>) -> bool {
        if let KeepAlive::Unarmed(period) = *self {
            let mut interval =
                tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            *self = KeepAlive::Armed(interval);
        }
        match self {
            KeepAlive::Armed(interval) => interval.poll_tick(cx).is_ready(),
            _ => false,
        }
    }
}

impl Stream for EventBody {
    type Item = Result<Frame<Bytes>, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(ready) = this.ready.take() {
            return Poll::Ready(Some(Ok(Frame::data(ready))));
        }
        match Pin::new(&mut this.events).poll_next(cx) {
            Poll::Ready(Some(text)) => {
                this.keep_alive.reset();
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(text)))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if this.keep_alive.poll_due(cx) {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                KEEP_ALIVE.as_bytes(),
            )))));
        }
        Poll::Pending
    }
}

/// The most bytes of events [`sse_body`] gathers before the head goes out: 64 KiB.
const READY_BYTES: usize = 64 * 1024;

/// The body streaming `events`, with a keep-alive comment after each `keep_alive` of silence
/// (`None` or zero: never).
///
/// The events already there go out with the head, in one write: a stream that has ended by
/// then (a reply answered at once) becomes a body of known length, with no chunked framing and
/// no timer; otherwise they are the first frame and the rest streams as it comes.
pub(crate) fn sse_body(mut events: EventStream, keep_alive: Option<Duration>) -> ResponseBody {
    // The first event is kept as it came (a one-event reply is written without a copy); any
    // more ready ones are appended to it.
    let mut ready = String::new();
    while ready.len() < READY_BYTES {
        match events.next().now_or_never() {
            Some(Some(text)) if ready.is_empty() => ready = text,
            Some(Some(text)) => ready.push_str(&text),
            Some(None) => return BodyExt::boxed(Full::new(Bytes::from(ready))),
            None => break,
        }
    }
    let keep_alive = match keep_alive.filter(|d| !d.is_zero()) {
        Some(period) => KeepAlive::Unarmed(period),
        None => KeepAlive::Never,
    };
    let body = EventBody {
        ready: (!ready.is_empty()).then(|| Bytes::from(ready)),
        events,
        keep_alive,
    };
    BodyExt::boxed(StreamBody::new(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::mpsc;

    /// The next data frame of `body`, within a bound.
    async fn next_frame(body: &mut ResponseBody) -> Option<Bytes> {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("a frame within the bound")?;
        Some(frame.unwrap().into_data().unwrap())
    }

    #[tokio::test]
    async fn events_then_the_core_keep_alive_then_the_end() {
        let (tx, rx) = mpsc::unbounded::<String>();
        let mut body = sse_body(EventStream::new(rx), Some(Duration::from_millis(20)));
        tx.unbounded_send("data: 1\n\n".to_owned()).unwrap();
        assert_eq!(next_frame(&mut body).await.unwrap(), "data: 1\n\n");
        // Silence: the keep-alive comment is the core's constant, on the host's timer.
        assert_eq!(next_frame(&mut body).await.unwrap(), KEEP_ALIVE.as_bytes());
        drop(tx);
        assert_eq!(next_frame(&mut body).await, None);
    }

    #[tokio::test]
    async fn a_stream_over_when_the_head_goes_is_one_body_of_known_length() {
        let (tx, rx) = mpsc::unbounded::<String>();
        tx.unbounded_send("data: a\n\n".to_owned()).unwrap();
        tx.unbounded_send("data: b\n\n".to_owned()).unwrap();
        drop(tx);
        let mut body = sse_body(EventStream::new(rx), Some(Duration::from_millis(20)));
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), Some(18));
        assert_eq!(
            next_frame(&mut body).await.unwrap(),
            "data: a\n\ndata: b\n\n"
        );
        assert_eq!(next_frame(&mut body).await, None);
    }

    #[tokio::test]
    async fn ready_events_go_first_then_the_rest_streams() {
        let (tx, rx) = mpsc::unbounded::<String>();
        tx.unbounded_send("data: 1\n\n".to_owned()).unwrap();
        let mut body = sse_body(EventStream::new(rx), None);
        assert_eq!(hyper::body::Body::size_hint(&body).exact(), None);
        assert_eq!(next_frame(&mut body).await.unwrap(), "data: 1\n\n");
        tx.unbounded_send("data: 2\n\n".to_owned()).unwrap();
        assert_eq!(next_frame(&mut body).await.unwrap(), "data: 2\n\n");
        drop(tx);
        assert_eq!(next_frame(&mut body).await, None);
    }

    #[tokio::test]
    async fn no_keep_alive_when_disabled() {
        let (tx, rx) = mpsc::unbounded::<String>();
        let mut body = sse_body(EventStream::new(rx), None);
        tx.unbounded_send("data: 2\n\n".to_owned()).unwrap();
        drop(tx);
        assert_eq!(next_frame(&mut body).await.unwrap(), "data: 2\n\n");
        assert_eq!(next_frame(&mut body).await, None);
    }
}
