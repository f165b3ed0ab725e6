//! JSON-RPC batches on the server: which peers may send them and what is done with each element,
//! for every transport at once (stream connections in [`super::connection`], Streamable HTTP in
//! [`crate::http::route`]).
//!
//! A batch is received only from a peer speaking protocol revision 2025-03-26
//! ([`crate::protocol::receives_batches`]): that revision's implementations "MUST support
//! receiving JSON-RPC batches" ([basic](https://modelcontextprotocol.io/specification/2025-03-26/basic#batching));
//! every other revision gets the single-message parser's refusal, `-32600` "batches are not
//! supported" with id `null`. A batch that is received:
//!
//! | in the batch | what happens |
//! |---|---|
//! | an `initialize` request | the whole batch is refused, `-32600` id `null`, nothing in it runs ("The initialize request MUST NOT be part of a JSON-RPC batch", [lifecycle](https://modelcontextprotocol.io/specification/2025-03-26/basic/lifecycle)) |
//! | an invalid element | its own error in the reply (a broken notification: nothing) |
//! | a request whose id an earlier request of the batch has | `-32600` with that id in the reply: the reply is matched to requests by id |
//! | a 2026-07-28 request (modern `_meta`) | `-32600` with its id in the reply: that revision has no batches |
//! | any other request, notification or response | run as the transport runs it alone, in the batch's order (a `notifications/cancelled` after the request it names cancels it) |
//!
//! The requests' responses are gathered into one reply ([`JsonRpcBatchResponse`], in the order of
//! the batch); a cancelled request has no entry, and with no entry at all nothing is sent.

use std::collections::VecDeque;

use crate::collections::HashSet;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::FuturesUnordered;
use futures::{Future, FutureExt, Stream, StreamExt};

use crate::era;
use crate::wire::jsonrpc::{
    ErrorCode, ErrorObject, JsonRpcBatch, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse,
};

/// One element of a batch, screened ([`screen`]).
#[derive(Debug)]
pub(crate) enum Element {
    /// Answered already (an invalid element, a request the batch rules refuse).
    Answered(JsonRpcResponse),
    /// A request to run.
    Request(JsonRpcRequest),
    /// A notification or a response to run (never answered).
    Other(JsonRpcMessage),
}

/// A batch whose elements were screened: what runs, what is answered already.
#[derive(Debug)]
pub(crate) struct Screened {
    /// The elements, in the batch's order (a broken notification has none).
    pub elements: Vec<Element>,
    /// How many of them are requests to run.
    pub requests: usize,
}

/// `-32600` id `null` for a batch that holds an `initialize` request (nothing in it runs).
pub(crate) fn initialize_in_batch() -> ErrorObject {
    ErrorObject::invalid_request(
        "initialize must not be part of a JSON-RPC batch (2025-03-26 lifecycle): send it alone; \
         nothing in this batch was run",
    )
}

/// `-32600` id `null` for a batch on a stream connection that has not been initialized: until
/// `initialize` the protocol revision, and so whether batches are received, is unknown.
pub(crate) fn before_initialize() -> ErrorObject {
    ErrorObject::invalid_request(
        "a JSON-RPC batch before initialize is refused: send initialize alone first (batches \
         are received only once protocol version 2025-03-26 is negotiated); nothing in this \
         batch was run",
    )
}

/// `-32000` "too many requests in flight" for request `id`: a place in the in-flight set (a
/// stream connection's, or the most requests one HTTP batch runs) was not free for it.
pub(crate) fn too_many(id: crate::wire::jsonrpc::RequestId) -> JsonRpcResponse {
    JsonRpcResponse::error(
        Some(id),
        ErrorObject::new(ErrorCode::SERVER_ERROR, "too many requests in flight"),
    )
}

/// Screen a batch received at 2025-03-26 (see the module table): `Err` when it is refused
/// whole (it holds an `initialize`).
pub(crate) fn screen(batch: JsonRpcBatch) -> Result<Screened, ErrorObject> {
    let holds_initialize = batch
        .messages()
        .iter()
        .any(|m| matches!(m, Ok(JsonRpcMessage::Request(r)) if r.method == "initialize"));
    if holds_initialize {
        return Err(initialize_in_batch());
    }
    let mut elements = Vec::with_capacity(batch.len());
    let mut requests = 0;
    let mut ids = HashSet::<crate::wire::jsonrpc::RequestId>::default();
    for message in batch {
        let element = match message {
            Err(invalid) => match invalid.response() {
                Some(response) => Element::Answered(response),
                None => {
                    tracing::warn!(error = %invalid, "batch: dropped a malformed notification");
                    continue;
                }
            },
            Ok(JsonRpcMessage::Request(request)) => {
                if era::has_modern_meta(request.params.as_ref()) {
                    Element::Answered(JsonRpcResponse::error(
                        Some(request.id),
                        ErrorObject::invalid_request(
                            "a 2026-07-28 request (its _meta names a protocol version) cannot be \
                             part of a JSON-RPC batch: that revision has no batches",
                        ),
                    ))
                } else if !ids.insert(request.id.clone()) {
                    Element::Answered(JsonRpcResponse::error(
                        Some(request.id),
                        ErrorObject::invalid_request(
                            "the request id is already in use by an earlier request of this batch",
                        ),
                    ))
                } else {
                    requests += 1;
                    Element::Request(request)
                }
            }
            Ok(other) => Element::Other(other),
        };
        elements.push(element);
    }
    Ok(Screened { elements, requests })
}

/// The members of a batch being run: each first polled in the batch's order (so that what one
/// element does — a request registered in flight, a cancellation — is seen by the next), then
/// polled as they wake. Yields each member's output with its position once it is done; ends
/// when all are.
pub(crate) struct Run<F: Future> {
    fresh: std::vec::IntoIter<(usize, F)>,
    running: FuturesUnordered<At<F>>,
    done: VecDeque<(usize, F::Output)>,
}

impl<F: Future + Unpin> Run<F> {
    /// Run `members` (each with its position in the batch), in their order.
    pub(crate) fn new(members: Vec<(usize, F)>) -> Self {
        Run {
            fresh: members.into_iter(),
            running: FuturesUnordered::new(),
            done: VecDeque::new(),
        }
    }
}

// Nothing in a run is ever pinned in place: its members are `Unpin`, and their outputs are
// plain values waiting to be taken.
impl<F: Future + Unpin> Unpin for Run<F> {}

impl<F: Future + Unpin> Stream for Run<F> {
    type Item = (usize, F::Output);

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        // Every member's first poll, in order, at the first poll of the run.
        for (at, mut member) in this.fresh.by_ref() {
            match member.poll_unpin(cx) {
                Poll::Ready(output) => this.done.push_back((at, output)),
                Poll::Pending => this.running.push(At(at, member)),
            }
        }
        if let Some(done) = this.done.pop_front() {
            return Poll::Ready(Some(done));
        }
        this.running.poll_next_unpin(cx)
    }
}

/// A member with its position.
struct At<F>(usize, F);

impl<F: Future + Unpin> Future for At<F> {
    type Output = (usize, F::Output);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let at = self.0;
        self.1.poll_unpin(cx).map(|output| (at, output))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use futures::future::{self, BoxFuture};

    use super::*;
    use crate::wire::jsonrpc::RequestId;

    fn screened(text: &str) -> Result<Screened, ErrorObject> {
        screen(JsonRpcBatch::from_slice(text.as_bytes()).unwrap())
    }

    #[test]
    fn initialize_anywhere_refuses_the_whole_batch() {
        let refused = screened(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
                {"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}]"#,
        )
        .unwrap_err();
        assert_eq!(refused.code, ErrorCode::INVALID_REQUEST);
        assert!(refused
            .message
            .contains("initialize must not be part of a JSON-RPC batch"));
        // A notification named `initialize` is not the request.
        assert!(screened(r#"[{"jsonrpc":"2.0","method":"initialize"}]"#).is_ok());
    }

    #[test]
    fn duplicate_ids_modern_requests_and_invalid_elements_are_answered_in_place() {
        let s = screened(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},
                {"jsonrpc":"2.0","id":1,"method":"tools/list"},
                {"jsonrpc":"2.0","id":"1","method":"ping"},
                {"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}},
                {"jsonrpc":"2.0","method":5},
                {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},
                {"jsonrpc":"2.0","id":"s","result":{}},
                7]"#,
        )
        .unwrap();
        assert_eq!(s.requests, 2, "id 1 and id \"1\" are two ids");
        let shape: Vec<String> = s
            .elements
            .iter()
            .map(|e| match e {
                Element::Answered(r) => format!(
                    "answered {} {}",
                    serde_json::to_string(&r.id).unwrap(),
                    r.payload.as_ref().unwrap_err().message
                ),
                Element::Request(r) => format!("request {}", r.id),
                Element::Other(JsonRpcMessage::Notification(n)) => {
                    format!("notification {}", n.method)
                }
                Element::Other(_) => "response".into(),
            })
            .collect();
        assert_eq!(shape.len(), 8, "{shape:?}");
        assert_eq!(shape[0], "request 1");
        assert!(
            shape[1].starts_with("answered 1 ")
                && shape[1].contains("earlier request of this batch"),
            "{shape:?}"
        );
        assert_eq!(shape[2], "request \"1\"");
        assert!(
            shape[3].starts_with("answered 3 ") && shape[3].contains("2026-07-28"),
            "{shape:?}"
        );
        // `"method": 5` is no JSON-RPC message: `-32600`, id `null` (it was dropped).
        assert!(shape[4].starts_with("answered null "), "{shape:?}");
        assert_eq!(shape[5], "notification notifications/cancelled");
        assert_eq!(shape[6], "response");
        assert!(shape[7].starts_with("answered null "), "{shape:?}");
        assert_eq!(
            too_many(RequestId::Number(9)).to_json(),
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32000,"message":"too many requests in flight"}}"#
        );
    }

    #[test]
    fn members_are_first_polled_in_order_then_as_they_wake() {
        let polled = Rc::new(RefCell::new(Vec::new()));
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let p = polled.clone();
        let slow: futures::future::LocalBoxFuture<'static, &str> = Box::pin(async move {
            p.borrow_mut().push("slow");
            let _ = rx.await;
            "slow done"
        });
        let members = vec![
            (0, slow),
            (1, {
                let p = polled.clone();
                Box::pin(future::lazy(move |_| {
                    p.borrow_mut().push("quick");
                    "quick done"
                })) as futures::future::LocalBoxFuture<'static, &str>
            }),
        ];
        let mut run = Run::new(members);
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        assert_eq!(
            run.poll_next_unpin(&mut cx),
            Poll::Ready(Some((1, "quick done")))
        );
        assert_eq!(
            *polled.borrow(),
            ["slow", "quick"],
            "first polls in the batch's order"
        );
        assert_eq!(run.poll_next_unpin(&mut cx), Poll::Pending);
        tx.send(()).unwrap();
        assert_eq!(
            run.poll_next_unpin(&mut cx),
            Poll::Ready(Some((0, "slow done")))
        );
        assert_eq!(run.poll_next_unpin(&mut cx), Poll::Ready(None));
        let empty: Run<BoxFuture<'static, ()>> = Run::new(Vec::new());
        assert_eq!(futures::executor::block_on(empty.collect::<Vec<_>>()), []);
    }
}
