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
use futures::Stream;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use crate::http::EventStream;
use crate::wire::sse::KEEP_ALIVE;

/// The response body type of the native routes.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// The events of a stream, interleaved with keep-alive comments; ends when the stream ends.
struct EventBody {
    events: EventStream,
    keep_alive: Option<tokio::time::Interval>,
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

/// The body streaming `events`, with a keep-alive comment after each `keep_alive` of silence
/// (`None` or zero: never).
pub(crate) fn sse_body(events: EventStream, keep_alive: Option<Duration>) -> ResponseBody {
    let keep_alive = keep_alive.filter(|d| !d.is_zero()).map(|period| {
        let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    BodyExt::boxed(StreamBody::new(EventBody { events, keep_alive }))
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
    async fn no_keep_alive_when_disabled() {
        let (tx, rx) = mpsc::unbounded::<String>();
        let mut body = sse_body(EventStream::new(rx), None);
        tx.unbounded_send("data: 2\n\n".to_owned()).unwrap();
        drop(tx);
        assert_eq!(next_frame(&mut body).await.unwrap(), "data: 2\n\n");
        assert_eq!(next_frame(&mut body).await, None);
    }
}
