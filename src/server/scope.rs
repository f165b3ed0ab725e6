//! The per-session MCP state a shared session store keeps (issue 14, scale-out), with no I/O:
//! what another server instance needs to serve a session it did not start. [`ScopeState`] is the
//! record (the negotiated version, the client's capabilities, `notifications/initialized`, the
//! `logging/setLevel` level, the resource subscriptions); [`ScopeStore`] is the seam a shared
//! store plugs into: the server hands it a scope's state each time a request changes it
//! (write-through: the request's answer waits for the write), and the store puts a state it
//! loaded back with [`McpServer::restore_scope`] when a request of the session reaches an
//! instance.
//!
//! What is *not* in the record: the push channel (each instance's own connections), requests in
//! flight and server→client requests awaiting answers (they live where the tool runs).

use std::sync::Arc;

use serde_json::Value;

use super::push::Change;
use super::McpServer;
use crate::protocol::LogLevel;
use crate::wire::jsonrpc::{JsonRpcResponse, RequestId, ResultValue};
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// One scope's (a session's) MCP state, as a shared store keeps it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScopeState {
    /// The protocol version `initialize` negotiated.
    pub protocol_version: Option<String>,
    /// The client's `initialize` capabilities.
    pub client_capabilities: Option<Value>,
    /// The capabilities this server's `initialize` result declared (which list changes the
    /// client hears of).
    pub server_capabilities: Option<Value>,
    /// `notifications/initialized` arrived (server→client requests other than `ping` allowed).
    pub initialized: bool,
    /// The `logging/setLevel` level, if the client set one.
    pub log_level: Option<LogLevel>,
    /// The resource URIs of `resources/subscribe`, sorted (at most
    /// [`MAX_SUBSCRIPTIONS_PER_SCOPE`](crate::server::MAX_SUBSCRIPTIONS_PER_SCOPE) a scope).
    pub subscriptions: Vec<String>,
    /// The authorization context the scope is bound to (see [`McpServer::scope_admits`]).
    pub authorization: Option<String>,
}

/// The record's field names, as a store keeps them (a Redis hash: one field each).
pub mod fields {
    /// The negotiated protocol version (the field a session record always has).
    pub const VERSION: &str = "v";
    /// The client capabilities, JSON.
    pub const CLIENT_CAPABILITIES: &str = "caps";
    /// The declared server capabilities, JSON.
    pub const SERVER_CAPABILITIES: &str = "scaps";
    /// `"1"` once `notifications/initialized` arrived.
    pub const INITIALIZED: &str = "init";
    /// The log level's name (`debug` … `emergency`).
    pub const LOG_LEVEL: &str = "level";
    /// The subscribed resource URIs, a JSON array.
    pub const SUBSCRIPTIONS: &str = "subs";
    /// The authorization context the session is bound to.
    pub const AUTHORIZATION: &str = "auth";
}

impl ScopeState {
    /// The state as `(field, value)` pairs ([`fields`]); absent parts have no pair.
    pub fn to_fields(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::with_capacity(6);
        if let Some(v) = &self.protocol_version {
            out.push((fields::VERSION, v.clone()));
        }
        if let Some(caps) = &self.client_capabilities {
            out.push((
                fields::CLIENT_CAPABILITIES,
                crate::wire::json_text::to_text(caps),
            ));
        }
        if let Some(caps) = &self.server_capabilities {
            out.push((
                fields::SERVER_CAPABILITIES,
                crate::wire::json_text::to_text(caps),
            ));
        }
        if self.initialized {
            out.push((fields::INITIALIZED, "1".to_owned()));
        }
        if let Some(Value::String(level)) = self.log_level.map(|l| serde_json::json!(l)) {
            out.push((fields::LOG_LEVEL, level));
        }
        if !self.subscriptions.is_empty() {
            out.push((
                fields::SUBSCRIPTIONS,
                crate::wire::json_text::to_text(&Value::from(self.subscriptions.clone())),
            ));
        }
        if let Some(authorization) = &self.authorization {
            out.push((fields::AUTHORIZATION, authorization.clone()));
        }
        out
    }

    /// The state from `(field, value)` pairs; unknown fields and values that do not parse are
    /// ignored (a record written by a later version stays readable).
    pub fn from_fields<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut state = ScopeState::default();
        for (field, value) in pairs {
            match field {
                fields::VERSION => state.protocol_version = Some(value.to_owned()),
                fields::CLIENT_CAPABILITIES => {
                    state.client_capabilities = serde_json::from_str(value).ok();
                }
                fields::SERVER_CAPABILITIES => {
                    state.server_capabilities = serde_json::from_str(value).ok();
                }
                fields::INITIALIZED => state.initialized = value == "1",
                fields::LOG_LEVEL => state.log_level = LogLevel::from_name(value),
                fields::SUBSCRIPTIONS => {
                    state.subscriptions = serde_json::from_str(value).unwrap_or_default();
                }
                fields::AUTHORIZATION => state.authorization = Some(value.to_owned()),
                _ => {}
            }
        }
        state
    }

    /// The field names [`ScopeState::to_fields`] leaves out (to delete from a stored record).
    pub fn absent_fields(&self) -> Vec<&'static str> {
        let present: Vec<&str> = self.to_fields().into_iter().map(|(f, _)| f).collect();
        [
            fields::CLIENT_CAPABILITIES,
            fields::SERVER_CAPABILITIES,
            fields::INITIALIZED,
            fields::LOG_LEVEL,
            fields::SUBSCRIPTIONS,
            fields::AUTHORIZATION,
        ]
        .into_iter()
        .filter(|f| !present.contains(f))
        .collect()
    }
}

/// Where a server writes its scopes' state through to (a store several server instances share).
pub trait ScopeStore: MaybeSend + MaybeSync {
    /// Keep `state` as `scope`'s state. The request that changed it is answered once the future
    /// resolves, so an instance that serves the client's next request reads it; a store that
    /// cannot write logs why (the request still succeeds on this instance).
    fn save(&self, scope: &str, state: ScopeState) -> BoxFuture<'static, ()>;

    /// A client's response that arrived on `scope` here, answering no server→client request of
    /// this instance: hand it to the instance whose tool awaits it (which calls
    /// [`McpServer::resolve_response`]). By default it is dropped.
    fn unanswered(&self, scope: &str, response: JsonRpcResponse) -> BoxFuture<'static, ()> {
        let _ = (scope, response);
        Box::pin(futures::future::ready(()))
    }

    /// A `notifications/cancelled` that arrived on `scope` here naming request `id`, which is
    /// not in flight here: hand it to the other instances sharing the scope, the one that runs
    /// the request cancels it ([`McpServer::cancel_request`]). By default it is dropped (the
    /// spec lets a receiver ignore a cancellation for a request it does not know).
    fn uncancelled(&self, scope: &str, id: &RequestId) -> BoxFuture<'static, ()> {
        let _ = (scope, id);
        Box::pin(futures::future::ready(()))
    }

    /// Whether `scope` is one of this store's sessions, which hear of list and resource
    /// changes through the store ([`ScopeStore::changed`]) rather than from the instance that
    /// made the change. By default none is.
    fn shares(&self, scope: &str) -> bool {
        let _ = scope;
        false
    }

    /// A list or resource change made on this instance (already delivered here to the scopes
    /// the store does not share and to the listen streams): hand it to every instance, each of
    /// which delivers it to the shared sessions whose stream it holds
    /// ([`McpServer::change_recipients`]) and, when it is not the instance that made it, to its
    /// own scopes and listen streams ([`McpServer::deliver_change`]). Must not block; by
    /// default it is dropped.
    fn changed(&self, change: &Change) {
        let _ = change;
    }
}

impl McpServer {
    /// The scope store, if one is set.
    pub(crate) fn scope_store(&self) -> Option<Arc<dyn ScopeStore>> {
        self.inner
            .scope_store
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Write every scope's state through to `store` from now on (each change of a client's
    /// capabilities, `initialized`, log level or subscriptions): what a shared session store
    /// installs. Replaces any store set before.
    pub fn set_scope_store(&self, store: Arc<dyn ScopeStore>) {
        *self
            .inner
            .scope_store
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(store);
    }

    /// `scope`'s state, when the server knows the scope.
    pub fn scope_state(&self, scope: &str) -> Option<ScopeState> {
        self.inner.peers.read(scope, |p| {
            let mut subscriptions: Vec<String> = p.subscriptions.iter().cloned().collect();
            subscriptions.sort();
            ScopeState {
                protocol_version: p.protocol_version.as_deref().map(str::to_owned),
                client_capabilities: p.client_capabilities.as_deref().cloned(),
                server_capabilities: p.server_capabilities.as_deref().cloned(),
                initialized: p.initialized,
                log_level: p.log_level,
                subscriptions,
                authorization: p.authorization.as_deref().cloned(),
            }
        })
    }

    /// Whether a request of `identity` (its verified bearer token; its authorization context
    /// is [`Identity::context`](crate::http::identity::Identity::context)) may use `scope`: `scope`'s `initialize` carried no token, or one of
    /// that context; a scope the server does not know admits only a request without a token
    /// (an endpoint that requires none: there is no binding to keep). The HTTP route answers a session's request of another context as for an
    /// unknown session (spec, Security Best Practices, Session Hijacking: bind session ids to
    /// user-specific information).
    /// The identity's context is worked out only for a bound scope (no cost per request
    /// otherwise).
    pub fn scope_admits(
        &self,
        scope: &str,
        identity: Option<&crate::http::identity::Identity>,
    ) -> bool {
        match (self.inner.peers).read(scope, |p| p.authorization.clone()) {
            Some(None) => true,
            Some(Some(bound)) => identity.and_then(|i| i.context()).as_ref() == Some(&*bound),
            // A scope the server does not know has no binding to compare: with a token to
            // check (the endpoint requires one) it admits none, rather than any.
            None => identity.is_none(),
        }
    }

    /// Whether the server holds `scope`'s state (opened by an `initialize`, an attach or a
    /// restore, not ended since).
    #[cfg(all(feature = "redis", feature = "native", not(target_arch = "wasm32")))]
    pub(crate) fn knows_scope(&self, scope: &str) -> bool {
        self.inner.peers.read(scope, |_| ()).is_some()
    }

    /// Take `state` as `scope`'s state (loaded from a shared store), keeping the scope's push
    /// channel.
    pub fn restore_scope(&self, scope: &Arc<str>, state: ScopeState) {
        let peers = &self.inner.peers;
        let client =
            (state.client_capabilities.as_ref()).map(|c| peers.client_capabilities.share(c));
        let server =
            (state.server_capabilities.as_ref()).map(|c| peers.server_capabilities.share(c));
        peers.open(scope, |p| {
            p.protocol_version = state.protocol_version.map(crate::protocol::version_text);
            p.client_capabilities = client;
            p.server_capabilities = server;
            p.initialized = state.initialized;
            p.log_level = state.log_level;
            p.subscriptions = state.subscriptions.into_iter().collect();
            p.authorization = state.authorization.map(Arc::new);
        });
    }

    /// Tag the ids of this server's server→client requests (`s-{tag}-{n}` instead of `s-{n}`),
    /// so they are unique among server instances that share sessions; the first tag set stays.
    pub fn tag_request_ids(&self, tag: &str) {
        self.inner.pending.tag(tag);
    }

    /// Resolve the server→client request a client's `response` (which arrived on `scope`,
    /// perhaps at another instance) answers; `false` when none of this server's is waiting for
    /// it on that scope. Never handed on: the bus of a shared store calls it.
    pub fn resolve_response(&self, scope: &str, response: JsonRpcResponse) -> bool {
        let Some(id) = &response.id else {
            return false;
        };
        let scope = Some(Arc::<str>::from(scope));
        (self.inner.pending).resolve(&scope, id, response.payload.map(ResultValue::into_value))
    }

    /// Cancel request `id` in flight on `scope` (its future dropped, its answer never sent, as
    /// for a `notifications/cancelled` that arrived here); `false` when none is. Never handed
    /// on: the bus of a shared store calls it with a cancellation another instance received
    /// ([`ScopeStore::uncancelled`]).
    pub fn cancel_request(&self, scope: &str, id: &RequestId) -> bool {
        self.inner.peers.cancel(&Some(Arc::<str>::from(scope)), id)
    }

    /// Hand a cancellation naming no request in flight here to the scope store, if one is set.
    pub(crate) async fn hand_on_cancel(&self, scope: &str, id: RequestId) {
        if let Some(store) = self.scope_store() {
            store.uncancelled(scope, &id).await;
        }
    }

    /// Hand a response this instance has no request for to the scope store, if one is set.
    pub(crate) async fn hand_on(&self, scope: &str, response: JsonRpcResponse) {
        match self.scope_store() {
            Some(store) => store.unanswered(scope, response).await,
            None => {
                tracing::debug!(id = ?response.id, "ignoring a response: no request of ours is pending");
            }
        }
    }

    /// The key `scope` is filed under (for tests: which text the scope map keeps).
    #[cfg(test)]
    pub(crate) fn scope_key(&self, scope: &str) -> Option<Arc<str>> {
        self.inner.peers.key(scope)
    }

    /// Write `scope`'s state through to the scope store, if one is set (after a change).
    pub(crate) async fn save_scope(&self, scope: &str) {
        if let (Some(store), Some(state)) = (self.scope_store(), self.scope_state(scope)) {
            store.save(scope, state).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::jsonrpc::{ErrorCode, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest};
    use crate::{RequestContext, ServerOptions};
    use futures::executor::block_on;
    use serde_json::json;
    use std::borrow::Cow;

    fn initialize(server: &McpServer, scope: &str, capabilities: Value) {
        let request = JsonRpcRequest::new(1, "initialize").with_params(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "c", "version": "1"},
        }));
        let ctx = RequestContext::new().with_scope(scope);
        let reply = block_on(server.dispatch_with(JsonRpcMessage::Request(request), ctx));
        assert!(!reply.expect("an answer").is_error());
        let initialized = JsonRpcNotification::new("notifications/initialized");
        let ctx = RequestContext::new().with_scope(scope);
        block_on(server.dispatch_with(JsonRpcMessage::Notification(initialized), ctx));
    }

    /// The capabilities a scope records are shared with every scope that recorded equal ones
    /// (the server's own declared ones with all of them), not copied per scope; what
    /// [`McpServer::scope_state`] reports is unchanged.
    #[test]
    fn scopes_share_equal_capabilities_and_report_their_own() {
        let server = McpServer::new(ServerOptions::new("t", "0"));
        let caps = json!({"roots": {"listChanged": true}, "sampling": {}});
        initialize(&server, "a", caps.clone());
        initialize(&server, "b", caps.clone());
        initialize(&server, "c", json!({}));
        let held = |scope: &str| {
            (server.inner.peers)
                .read(scope, |p| {
                    let client = p.client_capabilities.clone().expect("recorded");
                    let declared = p.server_capabilities.clone().expect("recorded");
                    let static_version = matches!(p.protocol_version, Some(Cow::Borrowed(_)));
                    (client, declared, static_version)
                })
                .expect("a known scope")
        };
        let (a, b, c) = (held("a"), held("b"), held("c"));
        assert!(
            Arc::ptr_eq(&a.0, &b.0),
            "equal client capabilities: one copy"
        );
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        assert!(Arc::ptr_eq(&a.1, &b.1) && Arc::ptr_eq(&a.1, &c.1));
        assert!(
            a.2 && b.2 && c.2,
            "a supported version is the crate's own text"
        );
        let state = server.scope_state("a").expect("a known scope");
        assert_eq!(state.client_capabilities, Some(caps));
        assert_eq!(state.server_capabilities, Some(server.capabilities()));
        assert_eq!(state.protocol_version.as_deref(), Some("2025-06-18"));
        assert!(state.initialized);
        assert_eq!(
            server.scope_state("c").unwrap().client_capabilities,
            Some(json!({}))
        );

        // A restored scope reads back as it was stored, sharing what it can.
        let restored = ScopeState {
            protocol_version: Some("2099-01-01".into()),
            client_capabilities: Some(json!({"roots": {"listChanged": true}, "sampling": {}})),
            server_capabilities: Some(json!({"tools": {"listChanged": false}})),
            initialized: true,
            log_level: Some(LogLevel::Error),
            subscriptions: vec!["a://1".into(), "b://2".into()],
            authorization: Some("ada".into()),
        };
        let scope: Arc<str> = Arc::from("d");
        server.restore_scope(&scope, restored.clone());
        assert_eq!(server.scope_state("d"), Some(restored));
        let d = held("d");
        assert!(Arc::ptr_eq(&a.0, &d.0));
        assert!(!d.2, "a version this crate does not know is kept as given");
    }

    /// A scope's subscriptions hold no heap while it has none (before the first, and after the
    /// last is gone).
    #[test]
    fn subscriptions_hold_no_heap_while_there_are_none() {
        let server = McpServer::new(ServerOptions::new("t", "0"));
        let scope: Arc<str> = Arc::from("s");
        let holds = || (server.inner.peers).read("s", |p| p.subscriptions.holds_heap());
        server.restore_scope(&scope, ScopeState::default());
        assert_eq!(holds(), Some(false));
        let subscribed = ScopeState {
            subscriptions: vec!["a://1".into()],
            ..ScopeState::default()
        };
        server.restore_scope(&scope, subscribed.clone());
        assert_eq!(holds(), Some(true));
        assert_eq!(server.scope_state("s"), Some(subscribed));
        server.inner.peers.with(&scope, |p| {
            p.subscriptions.insert("b://2".into());
            p.subscriptions.remove("a://1");
            assert!(p.subscriptions.contains("b://2") && !p.subscriptions.contains("a://1"));
            p.subscriptions.remove("b://2");
        });
        assert_eq!(holds(), Some(false));
        assert!(server.scope_state("s").unwrap().subscriptions.is_empty());
    }

    /// A scope bound to a user admits that user's tokens only; an unbound one any request; one
    /// the server does not know (never opened, or ended) only a request without a token: a
    /// binding it cannot read is not taken for none.
    #[test]
    fn a_scope_admits_its_user_and_an_unknown_one_no_token() {
        let server = McpServer::new(ServerOptions::new("t", "0"));
        let user = |sub: &str| crate::http::identity::Identity {
            subject: Some(sub.into()),
            claims: json!({"iss": "https://as.example"}),
            ..Default::default()
        };
        let (alice, bob) = (user("alice"), user("bob"));
        assert!(server.scope_admits("unknown", None));
        assert!(!server.scope_admits("unknown", Some(&alice)));
        initialize(&server, "open", json!({}));
        assert!(server.scope_admits("open", Some(&alice)));
        assert!(server.scope_admits("open", None));
        let bound: Arc<str> = Arc::from("bound");
        server.restore_scope(
            &bound,
            ScopeState {
                authorization: alice.context(),
                ..ScopeState::default()
            },
        );
        assert!(server.scope_admits("bound", Some(&alice)));
        assert!(!server.scope_admits("bound", Some(&bob)));
        assert!(!server.scope_admits("bound", None));
        server.end_scope("bound");
        assert!(!server.scope_admits("bound", Some(&alice)));
    }

    /// `detach` changes a scope the server knows and creates none: a connection that ends after
    /// its scope was ended (or one never attached) leaves nothing behind.
    #[test]
    fn detaching_an_unknown_or_ended_scope_creates_no_state() {
        let server = McpServer::new(ServerOptions::new("t", "0"));
        server.detach(&Arc::from("never"));
        assert_eq!(server.inner.peers.len(), 0);
        let scope: Arc<str> = Arc::from("s");
        server.attach(&scope, Arc::new(|_| true));
        server.detach(&scope);
        assert_eq!(
            server.inner.peers.len(),
            1,
            "an attached scope stays, detached"
        );
        assert!(server
            .inner
            .peers
            .read("s", |p| p.outbound.is_none())
            .unwrap());
        server.end_scope("s");
        server.detach(&scope);
        assert_eq!(server.inner.peers.len(), 0);
        assert_eq!(server.scope_state("s"), None);
    }

    /// A message on a scope that ended (a request or notification still on its way when its
    /// session was deleted or its connection closed) brings none of its state back: what would
    /// record something is refused with `-32600`, an unsubscribe has nothing to remove, and
    /// `notifications/initialized` is dropped (logged).
    #[test]
    fn a_late_message_on_an_ended_scope_creates_no_state() {
        let options = ServerOptions::new("t", "0")
            .with_declared_lists()
            .with_logging();
        let server = McpServer::new(options);
        initialize(&server, "s", json!({}));
        assert_eq!(server.inner.peers.len(), 1);
        server.end_scope("s");
        let ask = |method: &str, params: Value| {
            let request = JsonRpcRequest::new(1, method).with_params(params);
            let ctx = RequestContext::new().with_scope("s");
            block_on(server.dispatch_with(JsonRpcMessage::Request(request), ctx))
                .expect("an answer")
                .payload
        };
        let subscribe = ask("resources/subscribe", json!({"uri": "test://a"}));
        assert_eq!(
            subscribe.expect_err("refused").code,
            ErrorCode::INVALID_REQUEST
        );
        let level = ask("logging/setLevel", json!({"level": "error"}));
        assert_eq!(level.expect_err("refused").code, ErrorCode::INVALID_REQUEST);
        let unsubscribe = ask("resources/unsubscribe", json!({"uri": "test://a"}));
        assert_eq!(
            unsubscribe.expect("nothing to remove").into_value(),
            json!({})
        );
        let initialized = JsonRpcNotification::new("notifications/initialized");
        let ctx = RequestContext::new().with_scope("s");
        block_on(server.dispatch_with(JsonRpcMessage::Notification(initialized), ctx));
        assert_eq!(server.inner.peers.len(), 0);
        assert_eq!(server.scope_state("s"), None);
    }

    #[test]
    fn a_state_round_trips_through_its_fields() {
        let state = ScopeState {
            protocol_version: Some("2025-06-18".into()),
            client_capabilities: Some(json!({"sampling": {}})),
            server_capabilities: Some(json!({"tools": {"listChanged": true}})),
            initialized: true,
            log_level: Some(LogLevel::Error),
            subscriptions: vec!["a://1".into(), "b://2".into()],
            authorization: Some(r#"["https://as","sub","ada"]"#.into()),
        };
        let fields = state.to_fields();
        let back = ScopeState::from_fields(fields.iter().map(|(f, v)| (*f, v.as_str())));
        assert_eq!(back, state);
        assert!(state.absent_fields().is_empty());
        let bare = ScopeState::from_fields([("v", "2025-11-25"), ("future", "x"), ("level", "?")]);
        assert_eq!(bare.protocol_version.as_deref(), Some("2025-11-25"));
        assert_eq!(bare.log_level, None);
        assert_eq!(bare.absent_fields().len(), 6);
    }
}
