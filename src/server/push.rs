//! What the server sends unasked: each scope's push channel ([`McpServer::attach`]), list-change
//! and resource-update notifications, and the 2026-07-28 `subscriptions/listen` streams they
//! also reach
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::peers::Peer;
use super::{Inner, McpServer, MAX_SUBSCRIPTIONS_PER_SCOPE, MAX_SUBSCRIPTION_URI_BYTES};
use crate::era;
use crate::host::Outbound;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorObject, JsonRpcMessage, JsonRpcNotification, RequestId};

/// Which list changed, for [`McpServer::notify_list_changed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`
    Tools,
    /// `notifications/resources/list_changed`
    Resources,
    /// `notifications/prompts/list_changed`
    Prompts,
}

impl ListKind {
    /// The notification's method, `notifications/{tools,resources,prompts}/list_changed`.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
        }
    }

    /// The capability that declares it, as a JSON pointer (`/tools/listChanged`).
    fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "/tools/listChanged",
            ListKind::Resources => "/resources/listChanged",
            ListKind::Prompts => "/prompts/listChanged",
        }
    }

    /// Its key in a `subscriptions/listen` filter (`toolsListChanged`).
    fn listen_key(self) -> &'static str {
        match self {
            ListKind::Tools => "toolsListChanged",
            ListKind::Resources => "resourcesListChanged",
            ListKind::Prompts => "promptsListChanged",
        }
    }
}

/// A change the server announces unasked: what [`McpServer::notify_list_changed`] and
/// [`McpServer::notify_resource_updated`] send, and what a shared store's bus carries to the
/// other instances ([`Change::to_wire`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A list changed: `notifications/{tools,resources,prompts}/list_changed`.
    ListChanged(ListKind),
    /// The resource at this URI changed: `notifications/resources/updated`.
    ResourceUpdated(String),
}

impl Change {
    /// The notification a session (or connection) receives.
    pub fn notification(&self) -> JsonRpcMessage {
        JsonRpcMessage::Notification(match self {
            Change::ListChanged(kind) => JsonRpcNotification::new(kind.method()),
            Change::ResourceUpdated(uri) => {
                JsonRpcNotification::new("notifications/resources/updated")
                    .with_params(json!({ "uri": uri }))
            }
        })
    }

    /// The change as one line of text for a bus: `tools`, `resources`, `prompts`, or
    /// `updated <uri>`.
    pub fn to_wire(&self) -> String {
        match self {
            Change::ListChanged(ListKind::Tools) => "tools".to_owned(),
            Change::ListChanged(ListKind::Resources) => "resources".to_owned(),
            Change::ListChanged(ListKind::Prompts) => "prompts".to_owned(),
            Change::ResourceUpdated(uri) => format!("updated {uri}"),
        }
    }

    /// The change [`Change::to_wire`] wrote; `None` for any other text.
    pub fn from_wire(text: &str) -> Option<Change> {
        match text {
            "tools" => Some(Change::ListChanged(ListKind::Tools)),
            "resources" => Some(Change::ListChanged(ListKind::Resources)),
            "prompts" => Some(Change::ListChanged(ListKind::Prompts)),
            _ => (text.strip_prefix("updated "))
                .filter(|uri| !uri.is_empty())
                .map(|uri| Change::ResourceUpdated(uri.to_owned())),
        }
    }
}

/// One open `subscriptions/listen` stream.
pub(super) struct Listener {
    id: RequestId,
    filter: Value,
    outbound: Outbound,
    /// The connection or session it belongs to.
    scope: Option<Arc<str>>,
    /// Ends the stream gracefully (its listen request is answered).
    end: Option<futures::channel::oneshot::Sender<()>>,
}

impl McpServer {
    /// Give `scope` (a connection or a session) a push channel for messages not tied to a
    /// request: list changes, resource updates, and server→client requests of tools whose own
    /// channel cannot carry them.
    /// The scope is opened if the server does not know it (it lives until
    /// [`McpServer::end_scope`]).
    pub fn attach(&self, scope: &Arc<str>, outbound: Outbound) {
        self.inner
            .peers
            .open(scope, |peer| peer.outbound = Some(outbound));
    }

    /// Remove `scope`'s push channel (its stream closed), keeping its other state. A scope the
    /// server does not know (never attached, or ended) is left unknown: nothing is created.
    pub fn detach(&self, scope: &Arc<str>) {
        self.inner.peers.with(scope, |peer| peer.outbound = None);
    }

    /// Open `scope` with no push channel, if the server does not know it yet.
    pub(crate) fn open_scope(&self, scope: &Arc<str>) {
        self.inner.peers.open(scope, |_| ());
    }

    /// Server→client requests sent to `scope` still waiting for its response.
    pub(crate) fn waiting_on(&self, scope: &str) -> usize {
        self.inner.pending.waiting_on(scope)
    }

    /// The protocol version `scope`'s `initialize` negotiated, if one did.
    pub(crate) fn negotiated_version(&self, scope: &str) -> Option<String> {
        self.inner
            .peers
            .read(scope, |p| p.protocol_version.as_deref().map(str::to_owned))
            .flatten()
    }

    /// Forget `scope` (its connection or session ended): its state goes, its server→client
    /// requests fail and its requests in flight are cancelled. A later message on it records
    /// nothing (see [`RequestContext::with_scope`]); only an `initialize` or
    /// [`McpServer::attach`] opens it again.
    pub fn end_scope(&self, scope: &str) {
        self.inner.peers.remove(scope);
        self.inner.pending.fail_scope(scope);
    }

    /// End open [`subscriptions/listen`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)
    /// streams gracefully: those of `scope` (a connection or session), or every one with `None`
    /// (a server shutdown). Each listen request is then answered with its result (`_meta`
    /// carries the subscription id, `resultType` is `complete`), so the client knows the stream
    /// ended on purpose and can open another later; an abrupt close would carry no answer.
    /// Returns how many were ended. A stdio or WebSocket connection calls it when its input ends
    /// or the server shuts down, so a listen stream never keeps a connection (or the process)
    /// alive.
    pub fn end_subscriptions(&self, scope: Option<&str>) -> usize {
        let mut subscriptions = self
            .inner
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        subscriptions
            .values_mut()
            .filter(|l| scope.is_none() || l.scope.as_deref() == scope)
            .filter_map(|l| l.end.take())
            .map(|end| end.send(()))
            .filter(Result::is_ok)
            .count()
    }

    /// Send `notifications/{tools,resources,prompts}/list_changed` to every attached scope;
    /// returns how many received it. Call after changing a registry. A peer hears only of a
    /// list its `initialize` result declared (`listChanged`); a listen stream only of a list
    /// declared now (resources and prompts are declared while their registry is not empty).
    /// With a shared scope store ([`ScopeStore::shares`](super::scope::ScopeStore::shares)), the store's sessions hear of it
    /// through the store ([`ScopeStore::changed`](super::scope::ScopeStore::changed)), on whichever instance holds their stream.
    pub fn notify_list_changed(&self, kind: ListKind) -> usize {
        self.announce(Change::ListChanged(kind))
    }

    /// Send `notifications/resources/updated` for `uri` to every scope subscribed to it (with
    /// `resources/subscribe`: at most [`MAX_SUBSCRIPTIONS_PER_SCOPE`]
    /// URIs a scope); returns how many received it here. Shared sessions hear of it as with
    /// [`McpServer::notify_list_changed`].
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        self.announce(Change::ResourceUpdated(uri.to_owned()))
    }

    /// Deliver `change` here to every scope the store does not share and every listen stream,
    /// then hand it to the store for the shared ones.
    fn announce(&self, change: Change) -> usize {
        let store = self.scope_store();
        let shared = |scope: &str| store.as_ref().is_some_and(|s| s.shares(scope));
        let here = self.deliver_change(&change, |scope| !shared(scope));
        if let Some(store) = &store {
            store.changed(&change);
        }
        here
    }

    /// Deliver a `change` (made here, or announced by another instance over a shared store's
    /// bus) to the attached scopes that pass `among` and that the rule picks
    /// ([`McpServer::change_recipients`]), and to every listen stream whose filter asks for it;
    /// returns how many received it.
    pub fn deliver_change(&self, change: &Change, among: impl Fn(&str) -> bool) -> usize {
        let message = change.notification();
        let declared = self.declared(change);
        let to_peers = (self
            .inner
            .peers
            .scopes_where(|p| picks(change, declared, p)))
        .into_iter()
        .filter(|(scope, _)| among(scope))
        .filter_map(|(_, outbound)| outbound)
        .filter(|outbound| outbound(message.clone()))
        .count();
        let to_listeners = match change {
            Change::ListChanged(kind) if self.declares_list_changed(*kind) => {
                let key = kind.listen_key();
                self.publish(kind.method(), json!({}), |filter| {
                    filter.get(key) == Some(&json!(true))
                })
            }
            Change::ListChanged(_) => 0,
            Change::ResourceUpdated(uri) => self.publish(
                "notifications/resources/updated",
                json!({ "uri": uri }),
                |filter| {
                    filter
                        .get("resourceSubscriptions")
                        .and_then(Value::as_array)
                        .is_some_and(|uris| uris.iter().any(|u| u == uri))
                },
            ),
        };
        to_peers + to_listeners
    }

    /// The scopes among those passing `among` that `change` reaches by the rule: a list change
    /// a scope whose `initialize` result declared that list's `listChanged` (a scope with no
    /// recorded result: as declared now), a resource update a scope subscribed to its URI.
    /// What the instance holding a shared session's stream asks before delivering a change
    /// another instance announced.
    pub fn change_recipients(
        &self,
        change: &Change,
        among: impl Fn(&str) -> bool,
    ) -> Vec<Arc<str>> {
        let declared = self.declared(change);
        (self
            .inner
            .peers
            .scopes_where(|p| picks(change, declared, p)))
        .into_iter()
        .map(|(scope, _)| scope)
        .filter(|scope| among(scope))
        .collect()
    }

    fn declares_list_changed(&self, kind: ListKind) -> bool {
        self.capabilities().pointer(kind.capability()) == Some(&json!(true))
    }

    /// Whether a list change is of a list declared now (`false` for a resource update).
    fn declared(&self, change: &Change) -> bool {
        matches!(change, Change::ListChanged(kind) if self.declares_list_changed(*kind))
    }

    /// Send a notification to every listen stream whose filter passes, tagged with its
    /// subscription id; returns how many received it.
    fn publish(&self, method: &str, params: Value, filter: impl Fn(&Value) -> bool) -> usize {
        let targets: Vec<(RequestId, Outbound)> = {
            let subs = self
                .inner
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            subs.values()
                .filter(|l| filter(&l.filter))
                .map(|l| (l.id.clone(), l.outbound.clone()))
                .collect()
        };
        targets
            .into_iter()
            .filter(|(id, outbound)| {
                let mut params = params.clone();
                params["_meta"] = json!({ era::META_SUBSCRIPTION_ID: id });
                outbound(JsonRpcMessage::Notification(
                    JsonRpcNotification::new(method).with_params(params),
                ))
            })
            .count()
    }

    /// [`subscriptions/listen`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): acknowledge with the honoured filter, then stay open until the
    /// stream closes (the future is dropped) — notifications flow through `publish` — or
    /// [`McpServer::end_subscriptions`] ends it with its result.
    pub(super) async fn listen(
        &self,
        params: Option<Map<String, Value>>,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let id = ctx.id.clone().expect("requests have ids");
        let outbound = ctx.outbound().ok_or_else(|| {
            ErrorObject::invalid_request(
                "subscriptions/listen needs a streaming response (SSE, stdio or WebSocket)",
            )
        })?;
        let asked = params
            .as_ref()
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let caps = self.capabilities();
        let mut honoured = Map::new();
        for (key, cap) in [
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ] {
            if asked.get(key) == Some(&json!(true)) && caps.get(cap).is_some() {
                honoured.insert(key.into(), json!(true));
            }
        }
        if let Some(uris) = asked.get("resourceSubscriptions").and_then(Value::as_array) {
            // The bounds `resources/subscribe` keeps for a scope hold for one stream's filter.
            if uris.len() > MAX_SUBSCRIPTIONS_PER_SCOPE {
                return Err(ErrorObject::invalid_params(format!(
                    r#""notifications.resourceSubscriptions" holds more than {MAX_SUBSCRIPTIONS_PER_SCOPE} URIs"#
                )));
            }
            if let Some(i) = uris.iter().position(|uri| {
                uri.as_str()
                    .is_some_and(|u| u.is_empty() || u.len() > MAX_SUBSCRIPTION_URI_BYTES)
            }) {
                return Err(ErrorObject::invalid_params(format!(
                    r#""notifications.resourceSubscriptions[{i}]" must be a URI of 1 to {MAX_SUBSCRIPTION_URI_BYTES} bytes"#
                )));
            }
            if caps["resources"]["subscribe"] == json!(true) {
                honoured.insert("resourceSubscriptions".into(), Value::Array(uris.clone()));
            }
        }
        let ack = JsonRpcNotification::new("notifications/subscriptions/acknowledged").with_params(
            json!({ "_meta": { era::META_SUBSCRIPTION_ID: id }, "notifications": honoured }),
        );
        let token = self.inner.next_subscription.fetch_add(1, Ordering::Relaxed);
        let (end, ended) = futures::channel::oneshot::channel();
        let result = json!({ "_meta": { era::META_SUBSCRIPTION_ID: id } });
        {
            // Register and acknowledge under the lock, so no notification can slip in before the
            // acknowledgement, and none is lost between the two.
            let mut subscriptions = self
                .inner
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if !outbound(JsonRpcMessage::Notification(ack)) {
                return Err(ErrorObject::internal("the stream closed"));
            }
            subscriptions.insert(
                token,
                Listener {
                    id,
                    filter: Value::Object(honoured),
                    outbound,
                    scope: ctx.scope.clone(),
                    end: Some(end),
                },
            );
        }
        struct Unsubscribe<'a>(&'a Inner, u64);
        impl Drop for Unsubscribe<'_> {
            fn drop(&mut self) {
                self.0
                    .subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&self.1);
            }
        }
        let _guard = Unsubscribe(&self.inner, token);
        if ended.await.is_err() {
            futures::future::pending::<()>().await;
        }
        Ok(result)
    }
}

/// Whether the rule sends `change` to `peer` (`declared`: the list is declared now, for a peer
/// with no recorded `initialize` result).
fn picks(change: &Change, declared: bool, peer: &Peer) -> bool {
    match change {
        Change::ListChanged(kind) => match &peer.server_capabilities {
            Some(caps) => caps.pointer(kind.capability()) == Some(&json!(true)),
            None => declared,
        },
        Change::ResourceUpdated(uri) => peer.subscriptions.contains(uri),
    }
}
