//! Session ids and the in-memory store of live sessions (seed clause 18: `createMCPSession`'s
//! closure store, with an idle TTL and a cap), the default [`super::SessionBackend`].

use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard};

use hashbrown::HashTable;

use super::{Clock, Session, SessionOptions, Unavailable};

/// A fresh session id: 128 bits from the OS's secure random source as 32 lowercase hex digits
/// (visible ASCII, spec: 0x21–0x7E).
///
/// # Errors
/// When the random source fails.
pub fn mint_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The live sessions, found by their id's hash: foldhash seeded at random per process
/// ([`SessionStore::hash`]), cheaper than SipHash on the 32-digit ids, and a client sending ids
/// of its own cannot predict the seed. The hash is taken before the store's lock, which is held
/// for the probe alone.
type Sessions = HashTable<Arc<Session>>;

/// Why [`SessionStore::mint`] made no session.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MintError {
    /// The store holds `max_sessions` live sessions (none idle enough to evict).
    #[error("too many sessions")]
    AtCapacity,
    /// The secure random source failed.
    #[error("no secure random source: {0}")]
    Random(getrandom::Error),
    /// A shared store ([`super::SessionBackend`]) could not be reached; the route answers `503`
    /// with `Retry-After`.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
}

/// The live sessions, in this process's memory (seed `createMCPSession`'s closure store): the
/// default [`super::SessionBackend`]. An idle session costs about 0.7 KB of resident memory
/// (`memprobe sessions`, 1,000 sessions, 2026-12-04: 659–672 bytes, 2.6 KB before its idle
/// state held no heap; the budget is 2 KB): mostly the [`Session`] itself, the server's boxed
/// state of its scope and its id (the README's Performance section has the breakdown).
pub struct SessionStore {
    sessions: Mutex<Sessions>,
    hasher: foldhash::fast::RandomState,
    options: SessionOptions,
    clock: Clock,
    on_end: Mutex<Option<EndHook>>,
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// Called with a session's id when it ends (deleted, evicted or expired).
        pub type EndHook = Arc<dyn Fn(&str)>;
    } else {
        /// Called with a session's id when it ends (deleted, evicted or expired).
        pub type EndHook = Arc<dyn Fn(&str) + Send + Sync>;
    }
}

impl fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionStore")
            .field("options", &self.options)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl SessionStore {
    /// An empty store.
    pub fn new(options: SessionOptions, clock: Clock) -> Self {
        SessionStore {
            sessions: Mutex::new(Sessions::new()),
            hasher: foldhash::fast::RandomState::default(),
            options,
            clock,
            on_end: Mutex::new(None),
        }
    }

    /// Call `hook` with each session's id when it ends (e.g. to forget the server's per-session
    /// state with `McpServer::end_scope`).
    pub fn set_on_end(&self, hook: EndHook) {
        *self.on_end.lock().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    }

    fn ended(&self, id: &str) {
        let hook = self
            .on_end
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(hook) = hook {
            hook(id);
        }
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The hash the table files the session `id` under.
    fn hash(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    /// Mint a session for a successful `initialize` that negotiated `protocol_version`.
    ///
    /// Idle sessions are evicted first. At the cap the store **refuses** (the transport answers
    /// `503`) instead of evicting the least recently used session: with eviction, a flood of
    /// `initialize` requests would push out the sessions of active users; with refusal the flood
    /// can only delay new sessions until idle ones expire, and it cannot grow memory. A session
    /// nothing used after its `initialize` expires after
    /// [`SessionOptions::handshake_ttl_ms`] (1 min), so such a flood holds the cap that long
    /// after it stops, not the full idle TTL.
    ///
    /// # Errors
    /// [`MintError::AtCapacity`] at the cap; [`MintError::Random`] when no random id can be made.
    pub fn mint(&self, protocol_version: &str) -> Result<Arc<Session>, MintError> {
        let mut sessions = self.lock();
        let evicted = self.evict_idle(&mut sessions);
        for id in &evicted {
            self.ended(id);
        }
        if sessions.len() >= self.options.max_sessions {
            return Err(MintError::AtCapacity);
        }
        let (id, hash) = loop {
            let id = mint_session_id().map_err(MintError::Random)?;
            let hash = self.hash(&id);
            if sessions.find(hash, |s| s.id() == id).is_none() {
                break (id, hash);
            }
        };
        let session = Arc::new(Session::new(
            id,
            protocol_version,
            &self.options,
            self.clock.clone(),
        ));
        sessions.insert_unique(hash, session.clone(), |s| self.hash(s.id()));
        Ok(session)
    }

    /// End every session idle past its TTL now — the idle TTL, or
    /// [`SessionOptions::handshake_ttl_ms`] for one no request used since its `initialize`
    /// (what [`SessionStore::mint`] does first); how many ended.
    pub fn expire_idle(&self) -> usize {
        let evicted = self.evict_idle(&mut self.lock());
        for id in &evicted {
            self.ended(id);
        }
        evicted.len()
    }

    fn evict_idle(&self, sessions: &mut Sessions) -> Vec<String> {
        let mut evicted = Vec::new();
        let (idle, first) = (self.options.idle_ttl(), self.options.first_ttl());
        if idle.is_some() || first.is_some() {
            sessions.retain(|s| {
                let keep = !s.is_expired(idle, first);
                if !keep {
                    s.close(None);
                    evicted.push(s.id().to_owned());
                }
                keep
            });
        }
        evicted
    }

    /// The live session with this id, touched; `None` when unknown, ended, or idle past the TTL
    /// (which evicts it now: lazy eviction, no timer).
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        // The store's lock is held for the probe only (the hash is taken before); the session
        // is judged under its own.
        let hash = self.hash(id);
        let session = self.lock().find(hash, |s| s.id() == id)?.clone();
        let (idle, first) = (self.options.idle_ttl(), self.options.first_ttl());
        if session.touch_if_unexpired(idle, first) {
            return Some(session);
        }
        // Whoever removes it ends it, once (a racing lookup or `DELETE` may have already).
        let removed = match self.lock().find_entry(hash, |s| Arc::ptr_eq(s, &session)) {
            Ok(entry) => {
                entry.remove();
                true
            }
            Err(_) => false,
        };
        if removed {
            session.close(None);
            self.ended(id);
        }
        None
    }

    /// End and forget a session (`DELETE`); `None` when it was not live.
    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let session = self.get(id)?;
        if let Ok(entry) = self.lock().find_entry(self.hash(id), |s| s.id() == id) {
            entry.remove();
        }
        session.close(None);
        self.ended(id);
        Some(session)
    }

    /// End every live connection of every session with a `retry` field (server shutdown).
    pub fn disconnect_all(&self) {
        let sessions: Vec<_> = self.lock().iter().cloned().collect();
        for session in sessions {
            session.disconnect_all();
        }
    }

    /// [`Session::disconnect_idle`] on every session: streams with no request in flight end
    /// (the start of a graceful shutdown; the request streams end with their answers).
    pub fn disconnect_idle(&self) {
        let sessions: Vec<_> = self.lock().iter().cloned().collect();
        for session in sessions {
            session.disconnect_idle();
        }
    }

    /// The number of sessions held (including idle ones not yet evicted).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn clock() -> (Arc<AtomicU64>, Clock) {
        let now = Arc::new(AtomicU64::new(1_000));
        let c = now.clone();
        (now, Arc::new(move || c.load(Ordering::SeqCst)))
    }

    #[test]
    fn each_of_many_sessions_is_found_by_its_id_until_removed() {
        let (_, clock) = clock();
        let store = SessionStore::new(SessionOptions::default(), clock);
        let minted: Vec<_> = (0..300)
            .map(|_| store.mint("2025-06-18").unwrap())
            .collect();
        assert_eq!(store.len(), 300);
        for session in &minted {
            assert!(Arc::ptr_eq(&store.get(session.id()).unwrap(), session));
        }
        for session in minted.iter().step_by(2) {
            assert!(store.remove(session.id()).is_some());
            assert!(session.is_closed());
        }
        assert_eq!(store.len(), 150);
        for (i, session) in minted.iter().enumerate() {
            assert_eq!(store.get(session.id()).is_some(), i % 2 == 1, "{i}");
        }
        assert!(store.get("no-such-session").is_none());
        assert!(store.remove(minted[0].id()).is_none(), "removed once");
    }

    #[test]
    fn store_mints_gets_evicts_and_refuses_at_cap() {
        let (now, clock) = clock();
        let options = SessionOptions {
            idle_ttl_ms: Some(50),
            max_sessions: 1,
            ..SessionOptions::default()
        };
        let store = SessionStore::new(options, clock);
        let a = store.mint("2025-06-18").unwrap();
        assert_eq!(a.id().len(), 32);
        assert!(a.id().bytes().all(|b| (0x21..=0x7e).contains(&b)));
        assert!(matches!(
            store.mint("2025-06-18"),
            Err(MintError::AtCapacity)
        ));
        now.fetch_add(49, Ordering::SeqCst);
        assert!(store.get(a.id()).is_some(), "touched at 1049");
        now.fetch_add(50, Ordering::SeqCst);
        let b = store.mint("2025-06-18").unwrap();
        assert!(store.get(a.id()).is_none());
        assert!(a.is_closed());
        assert_ne!(a.id(), b.id());
    }

    #[test]
    fn a_session_no_request_named_expires_after_the_handshake_ttl() {
        let (now, clock) = clock();
        let options = SessionOptions {
            idle_ttl_ms: Some(10_000),
            handshake_ttl_ms: Some(100),
            max_sessions: 2,
            ..SessionOptions::default()
        };
        let store = SessionStore::new(options, clock);
        let used = store.mint("2025-11-25").unwrap();
        let bare = store.mint("2025-11-25").unwrap();
        assert!(store.get(used.id()).is_some(), "the client's first request");
        assert!(matches!(
            store.mint("2025-11-25"),
            Err(MintError::AtCapacity)
        ));
        now.fetch_add(99, Ordering::SeqCst);
        assert_eq!(store.expire_idle(), 0, "not yet");
        now.fetch_add(1, Ordering::SeqCst);
        let next = store.mint("2025-11-25").unwrap();
        assert!(bare.is_closed(), "its place under the cap is taken");
        assert!(store.get(bare.id()).is_none());
        now.fetch_add(5_000, Ordering::SeqCst);
        assert!(store.get(used.id()).is_some(), "used: the idle TTL applies");
        assert!(store.get(next.id()).is_none(), "never used: 100 ms");

        // Without an idle TTL, only a session nothing used expires.
        let (now, clock) = self::clock();
        let options = SessionOptions {
            idle_ttl_ms: None,
            handshake_ttl_ms: Some(100),
            ..SessionOptions::default()
        };
        let store = SessionStore::new(options, clock);
        let (used, bare) = (store.mint("x").unwrap(), store.mint("x").unwrap());
        assert!(store.get(used.id()).is_some());
        now.fetch_add(1_000_000, Ordering::SeqCst);
        assert_eq!(store.expire_idle(), 1);
        assert!(bare.is_closed() && !used.is_closed());
        assert!(store.get(used.id()).is_some());

        // `Some(0)` is no TTL (as in the Redis store), not "expire at once".
        let (now, clock) = self::clock();
        let options = SessionOptions {
            idle_ttl_ms: Some(0),
            handshake_ttl_ms: Some(0),
            ..SessionOptions::default()
        };
        let store = SessionStore::new(options, clock);
        let bare = store.mint("x").unwrap();
        now.fetch_add(1_000_000, Ordering::SeqCst);
        assert_eq!(store.expire_idle(), 0);
        assert!(store.get(bare.id()).is_some());
    }
}
