//! `subscriptions/listen` on the client (2026-07-28; [spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)): one long-lived request whose
//! notifications arrive tagged with its id.
//!
//! ```text
//!  listen({toolsListChanged:true}) ─► subscriptions/listen (id 7)
//!      ◄─ notifications/subscriptions/acknowledged {_meta:{subscriptionId:7}, notifications:{…honoured}}
//!      ◄─ notifications/tools/list_changed {_meta:{subscriptionId:7}}   ─► Subscription::next
//!      ◄─ result {resultType:"complete"} | notifications/cancelled{requestId:7} ─► next() = None
//! ```
//!
//! On HTTP the request is a POST whose SSE response stays open: the [`Subscription`] owns the
//! exchange and reads it while you call [`Subscription::next`]; [`Subscription::cancel`] (or
//! dropping it) closes the stream, which is the cancellation (no `notifications/cancelled`). On
//! stdio and WebSocket the notifications arrive through the shared connection and are
//! demultiplexed by `subscriptionId`; `cancel` sends `notifications/cancelled{requestId}`.

use std::fmt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::{self, Either};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::client::era::{request_headers, with_meta};
use crate::client::{ClientError, McpClient};
use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcNotification};
use crate::BoxFuture;

/// How long an open listen request may stay open: 24 hours (the server ends it, or you cancel).
pub const LISTEN_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// The filter keys of a listen request (`SubscriptionFilter`).
pub const FILTER_KEYS: &[&str] = &[
    "toolsListChanged",
    "promptsListChanged",
    "resourcesListChanged",
    "resourceSubscriptions",
];

/// An open `subscriptions/listen` stream (see the module docs).
pub struct Subscription {
    client: McpClient,
    id: i64,
    acknowledged: Value,
    rx: mpsc::Receiver<JsonRpcNotification>,
    request: Option<BoxFuture<'static, Result<Value, ClientError>>>,
    ended: Option<Result<Value, ClientError>>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("acknowledged", &self.acknowledged)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Open a `subscriptions/listen` stream for the notification kinds in `filter` (e.g.
    /// `{"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}`), wait for the
    /// acknowledgement (within the client's deadline) and return the subscription. Kinds the
    /// server did not honour are logged and left out of [`Subscription::acknowledged`].
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] when the client is not in the 2026-07-28 era or the
    /// filter is not an object; [`ClientError::Timeout`] without an acknowledgement; the
    /// request's error (e.g. `-32601` from a server with nothing to subscribe to).
    pub async fn listen(&self, filter: Value) -> Result<Subscription, ClientError> {
        let Some(version) = self.inner.era.modern_version() else {
            return Err(ClientError::InvalidArguments(
                "subscriptions/listen needs the 2026-07-28 era".into(),
            ));
        };
        if !filter.is_object() {
            return Err(ClientError::InvalidArguments(format!(
                "the listen filter must be an object, not {}",
                crate::wire::json_text::JsonText(&filter)
            )));
        }
        let params = with_meta(
            Some(json!({ "notifications": filter })),
            &self.meta(&version),
        )?;
        let headers = self
            .inner
            .transport
            .uses_headers()
            .then(|| request_headers("subscriptions/listen", &params, &version, &[]));
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        // `channel(n)` holds n + 1 (one per sender) messages.
        let (tx, rx) = mpsc::channel(crate::client::era::MAX_QUEUED_LISTEN_NOTIFICATIONS - 1);
        self.inner.era.subscribe(id, tx);
        let client = self.clone();
        let request: BoxFuture<'static, Result<Value, ClientError>> = Box::pin(async move {
            client
                .inner
                .request_id(
                    id,
                    "subscriptions/listen",
                    Some(params),
                    &crate::client::RequestOptions {
                        timeout: Some(LISTEN_LIFETIME),
                        ..Default::default()
                    },
                    headers,
                )
                .await
        });
        let mut subscription = Subscription {
            client: self.clone(),
            id,
            acknowledged: Value::Null,
            rx,
            request: Some(request),
            ended: None,
        };
        let deadline = self.inner.sleep(self.inner.options.timeout);
        let waited = {
            let wait = std::pin::pin!(subscription.acknowledgement());
            match future::select(wait, deadline).await {
                Either::Left((acknowledged, _)) => Some(acknowledged),
                Either::Right(_) => None,
            }
        };
        let acknowledged = match waited {
            Some(acknowledged) => acknowledged?,
            None => {
                let timeout_ms =
                    u64::try_from(self.inner.options.timeout.as_millis()).unwrap_or(u64::MAX);
                subscription.cancel().await;
                return Err(ClientError::Timeout {
                    method: "subscriptions/listen".into(),
                    timeout_ms,
                });
            }
        };
        for key in FILTER_KEYS {
            let wanted = filter.get(*key).is_some_and(|v| v != &json!(false));
            if wanted && acknowledged.get(*key).is_none() {
                tracing::warn!(
                    kind = key,
                    "mcp client: the server did not honour this listen kind"
                );
            }
        }
        subscription.acknowledged = acknowledged;
        Ok(subscription)
    }
}

impl Subscription {
    /// The listen request id (every notification of this stream carries it as
    /// `subscriptionId`).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The filter the server acknowledged (the subset of the requested kinds it honours).
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// The next notification of this stream; `None` once the server ended it (its final result
    /// or a `notifications/cancelled` for it) or the transport closed. See
    /// [`Subscription::outcome`] for how it ended.
    pub async fn next(&mut self) -> Option<JsonRpcNotification> {
        match self.step().await {
            Some(n) if n.method == "notifications/cancelled" => {
                self.end(Ok(json!({"resultType": "complete", "cancelled": true})));
                None
            }
            other => other,
        }
    }

    /// How the stream ended (`None` while it is open): the final result, or the error.
    pub fn outcome(&self) -> Option<&Result<Value, ClientError>> {
        self.ended.as_ref()
    }

    fn end(&mut self, outcome: Result<Value, ClientError>) {
        self.request = None;
        self.client.inner.era.unsubscribe(self.id);
        self.ended.get_or_insert(outcome);
    }

    async fn acknowledgement(&mut self) -> Result<Value, ClientError> {
        loop {
            match self.step().await {
                Some(n) if n.method == "notifications/subscriptions/acknowledged" => {
                    return Ok(n
                        .params
                        .as_ref()
                        .and_then(|p| p.get("notifications"))
                        .cloned()
                        .unwrap_or_else(|| json!({})));
                }
                Some(n) => {
                    tracing::debug!(method = %n.method, "mcp client: a notification before the listen acknowledgement");
                }
                None => {
                    return Err(match self.ended.take() {
                        Some(Err(e)) => e,
                        _ => ClientError::InvalidResponse(
                            "the listen stream ended without an acknowledgement".into(),
                        ),
                    })
                }
            }
        }
    }

    async fn step(&mut self) -> Option<JsonRpcNotification> {
        loop {
            let Some(request) = self.request.as_mut() else {
                // Ended: hand out what was already queued.
                return self.rx.try_recv().ok();
            };
            match future::select(self.rx.next(), request).await {
                Either::Left((Some(n), _)) => return Some(n),
                Either::Left((None, _)) => {
                    self.end(Err(ClientError::closed("the listen channel closed")));
                }
                Either::Right((outcome, _)) => self.end(outcome),
            }
        }
    }

    /// Stop listening: on HTTP close the response stream; on stdio and WebSocket send
    /// `notifications/cancelled{requestId}` (best effort, bounded by the client's deadline).
    pub async fn cancel(mut self) {
        if self.request.is_none() {
            return;
        }
        self.request = None; // drops the exchange: closes an HTTP stream
        let inner = &self.client.inner;
        if !inner.transport.uses_headers() {
            let notification = JsonRpcNotification::new("notifications/cancelled").with_params(
                json!({ "requestId": self.id, "reason": "the client stopped listening" }),
            );
            let send = inner
                .transport
                .send(JsonRpcMessage::Notification(notification));
            let bound = inner.sleep(inner.options.timeout);
            if let Either::Left((Err(e), _)) = future::select(send, bound).await {
                tracing::debug!(error = %e, "mcp client: could not cancel the listen stream");
            }
        }
        self.end(Ok(json!({"resultType": "complete", "cancelled": true})));
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.client.inner.era.unsubscribe(self.id);
    }
}
