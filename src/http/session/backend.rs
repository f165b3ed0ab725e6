//! The seam where a shared session store plugs in (issue 14, scale-out): the route's session half
//! ([`crate::http::sessions`]) keeps its live sessions through a [`SessionBackend`], so a store
//! that several server instances share (Redis, a database) can stand in for the in-memory
//! [`SessionStore`] without touching the route logic.
//!
//! ```text
//!   request ──► Sessions (route plan) ──► SessionBackend ──► SessionStore (default, in memory)
//!                     │                      mint / touch /       or a shared store (a network
//!                     │                      end / expire_idle    round trip per call)
//!                     ▼
//!               Arc<Session>  ── the live connections (sinks) of *this* instance stay here
//! ```
//!
//! Every call a shared store would answer over the network returns a [`BoxFuture`]; the
//! in-memory store's futures are ready at once (no I/O, no timer: the core stays sans-I/O and
//! compiles to wasm32). What a [`SessionBackend`] hands out is an [`Arc<Session>`]: the local
//! handle that holds this instance's live connections to the session's streams; a shared store
//! builds one with [`Session::new`] from the record it keeps (the id and negotiated protocol
//! version) the first time a request for the session reaches this instance.

use std::fmt;
use std::sync::Arc;

use futures::future;

use super::{MintError, Session, SessionOptions, SessionStore};
use crate::http::answer::EventStream;
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// Why a [`SessionBackend`] could not answer: its shared store is unreachable or failed. The
/// session half answers `503` with `Retry-After` and a JSON-RPC error body, so the client retries
/// instead of taking the session for gone (a `404` would make it start over).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the session store is unavailable: {0}")]
pub struct Unavailable(pub String);

/// Where the live sessions of a session-aware route are kept (seed `createMCPSession`'s closure
/// store): [`SessionStore`] in memory by default, or a store shared by several server instances
/// behind one URL.
///
/// The contract every implementation keeps (the in-memory store's behaviour, which the session
/// tests pin):
/// - **mint**: a fresh id from a secure random source (visible ASCII, unique among live
///   sessions); at the live-session cap ([`SessionOptions::max_sessions`]) it **refuses**
///   ([`MintError::AtCapacity`], the route answers `503`) rather than evicting a live session;
/// - **touch**: a lookup is activity, so it pushes the session's idle expiry back; for a
///   session minted elsewhere, the server must know its scope afterwards (restored from the
///   shared record with [`McpServer::restore_scope`](crate::McpServer::restore_scope), its push
///   channel given with [`McpServer::attach`](crate::McpServer::attach)): a scope the server
///   does not know admits no request that carries a token
///   ([`McpServer::scope_admits`](crate::McpServer::scope_admits));
/// - **end**: `DELETE` ends the session for every instance; its local streams close
///   ([`Session::close`]) and the id answers `404` from then on;
/// - **idle expiry**: a session with no live connection that saw no request for
///   [`SessionOptions::idle_ttl_ms`] is gone (lazily, on the next access, or by the store's own
///   key expiry); an expired id answers like an unknown one. A session no request named since
///   its `initialize` expires after [`SessionOptions::handshake_ttl_ms`] instead, when that is
///   shorter (a client that initialized and went away holds a place under the cap that long).
///
/// Methods that a shared store answers over the network return futures; the local ones
/// ([`SessionBackend::disconnect_idle`], [`SessionBackend::disconnect_all`]) act on this
/// instance's connections only and return at once.
pub trait SessionBackend: fmt::Debug + MaybeSend + MaybeSync {
    /// The options sessions are made with (the replay-log bounds, the idle TTL, the cap, the SSE
    /// `retry`).
    fn options(&self) -> &SessionOptions;

    /// Mint a session for a successful `initialize` that negotiated `protocol_version`.
    ///
    /// # Errors
    /// [`MintError::AtCapacity`] at the live-session cap; [`MintError::Random`] when no random
    /// id can be made; [`MintError::Unavailable`] when a shared store cannot be reached.
    fn mint<'a>(
        &'a self,
        protocol_version: &'a str,
    ) -> BoxFuture<'a, Result<Arc<Session>, MintError>>;

    /// The live session with this id, touched (its idle expiry pushed back); `Ok(None)` when
    /// unknown, ended or idle past the TTL (which ends it now).
    ///
    /// # Errors
    /// [`Unavailable`] when a shared store cannot be reached (not the same as an unknown id).
    fn touch<'a>(&'a self, id: &'a str)
        -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>>;

    /// [`SessionBackend::touch`] answered at once, for a store that needs no I/O to answer it
    /// (the in-memory store: no future to box per request); `None` (the default) when the
    /// answer needs [`SessionBackend::touch`]'s future.
    fn touch_now(&self, id: &str) -> Option<Result<Option<Arc<Session>>, Unavailable>> {
        let _ = id;
        None
    }

    /// End and forget a session (`DELETE`, or an `initialize` whose answer failed); `Ok(None)`
    /// when it was not live.
    ///
    /// # Errors
    /// [`Unavailable`] when a shared store cannot be reached.
    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>>;

    /// End every session idle past the TTL now; how many ended. (The in-memory store also does
    /// this lazily, on each mint and lookup; a shared store may leave it to key expiry.)
    ///
    /// # Errors
    /// [`Unavailable`] when a shared store cannot be reached.
    fn expire_idle(&self) -> BoxFuture<'_, Result<usize, Unavailable>>;

    /// The number of sessions held (the in-memory store counts idle ones not yet evicted).
    ///
    /// # Errors
    /// [`Unavailable`] when a shared store cannot be reached.
    fn count(&self) -> BoxFuture<'_, Result<usize, Unavailable>>;

    /// Resume, from a log several instances share, a stream this instance's replay log does not
    /// hold (`GET` with a `Last-Event-ID` another instance handed out): the events strictly
    /// after it, then its later ones live, ending with the stream. `Ok(None)` when there is no
    /// shared log or it does not know the id (the session's own resume then applies: the
    /// standalone stream). The in-memory store keeps no shared log.
    ///
    /// # Errors
    /// [`Unavailable`] when a shared store cannot be reached.
    fn resume_shared<'a>(
        &'a self,
        session: &'a Arc<Session>,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<EventStream>, Unavailable>> {
        let _ = (session, last_event_id);
        Box::pin(future::ready(Ok(None)))
    }

    /// A connection to this instance now carries `stream` of session `id` (a `GET`: the
    /// standalone stream, or a resume): tell the other instances sharing the session, which end
    /// their own connection on that stream, as a second connection on one instance replaces the
    /// first (spec `basic/transports`: the server MUST NOT broadcast a message across several
    /// streams). The `GET` is answered once the future resolves, so a later connection the
    /// client opens elsewhere is not ended by this one's news. Default: nothing (no other
    /// instance).
    fn attached<'a>(&'a self, id: &'a str, stream: u64) -> BoxFuture<'a, ()> {
        let _ = (id, stream);
        Box::pin(future::ready(()))
    }

    /// End, with a `retry` field, this instance's connections that carry no unanswered request
    /// ([`Session::disconnect_idle`]): the start of a graceful shutdown.
    fn disconnect_idle(&self);

    /// End every connection of this instance with a `retry` field ([`Session::disconnect_all`]):
    /// server shutdown; the sessions stay, so clients resume later or elsewhere.
    fn disconnect_all(&self);
}

/// The in-memory default: each call is [`SessionStore`]'s own method, its future ready at once.
impl SessionBackend for SessionStore {
    fn options(&self) -> &SessionOptions {
        SessionStore::options(self)
    }

    fn mint<'a>(
        &'a self,
        protocol_version: &'a str,
    ) -> BoxFuture<'a, Result<Arc<Session>, MintError>> {
        Box::pin(future::ready(SessionStore::mint(self, protocol_version)))
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>> {
        Box::pin(future::ready(Ok(self.get(id))))
    }

    fn touch_now(&self, id: &str) -> Option<Result<Option<Arc<Session>>, Unavailable>> {
        Some(Ok(self.get(id)))
    }

    fn end<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Arc<Session>>, Unavailable>> {
        Box::pin(future::ready(Ok(self.remove(id))))
    }

    fn expire_idle(&self) -> BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(future::ready(Ok(SessionStore::expire_idle(self))))
    }

    fn count(&self) -> BoxFuture<'_, Result<usize, Unavailable>> {
        Box::pin(future::ready(Ok(self.len())))
    }

    fn disconnect_idle(&self) {
        SessionStore::disconnect_idle(self);
    }

    fn disconnect_all(&self) {
        SessionStore::disconnect_all(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn the_in_memory_store_behind_the_trait_mints_touches_expires_and_ends() {
        let now = Arc::new(AtomicU64::new(1_000));
        let c = now.clone();
        let options = SessionOptions {
            idle_ttl_ms: Some(50),
            max_sessions: 2,
            ..SessionOptions::default()
        };
        let store: Arc<dyn SessionBackend> = Arc::new(SessionStore::new(
            options,
            Arc::new(move || c.load(Ordering::SeqCst)),
        ));
        let a = block_on(store.mint("2025-06-18")).unwrap();
        let b = block_on(store.mint("2025-11-25")).unwrap();
        assert_eq!(b.protocol_version(), "2025-11-25");
        assert!(matches!(
            block_on(store.mint("2025-06-18")),
            Err(MintError::AtCapacity)
        ));
        assert_eq!(block_on(store.count()), Ok(2));
        now.fetch_add(40, Ordering::SeqCst);
        assert!(
            block_on(store.touch(a.id())).unwrap().is_some(),
            "a touched at 1040"
        );
        assert!(
            matches!(store.touch_now(a.id()), Some(Ok(Some(s))) if Arc::ptr_eq(&s, &a)),
            "answered at once, the same session"
        );
        now.fetch_add(20, Ordering::SeqCst);
        assert_eq!(block_on(store.expire_idle()), Ok(1), "b idle since 1000");
        assert!(b.is_closed());
        assert!(block_on(store.touch(b.id())).unwrap().is_none());
        assert!(block_on(store.end(a.id())).unwrap().is_some());
        assert!(a.is_closed());
        assert!(block_on(store.end(a.id())).unwrap().is_none(), "ended once");
        assert_eq!(block_on(store.count()), Ok(0));
    }
}
