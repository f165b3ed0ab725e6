//! The seam where a shared event log plugs in (issue 14, scale-out), with no I/O: a session made
//! [`with_event_sink`](super::Session::with_event_sink) hands every event of its request streams
//! to an [`EventSink`] as it logs it, so a store that several server instances share can replay
//! it — and relay the later ones live — on an instance that did not run the request
//! ([`SessionBackend::resume_shared`](super::SessionBackend::resume_shared)).
//!
//! Event ids stay `"<stream>-<seq>"`: such a session numbers its request streams from a random
//! base ([`Session::with_first_stream`](super::Session::with_first_stream)), so the stream part
//! names one stream across every instance and `Last-Event-ID` alone finds it. The standalone
//! (`GET`) stream is each instance's own and is not handed over.

use std::fmt;

use super::EventId;

/// Where a session's request-stream events go besides its own replay log (a write-behind queue
/// to a shared store). Called under the session's lock, in log order: it must not block. `Send`
/// and `Sync` on every target, as a [`Session`](super::Session) is.
pub trait EventSink: fmt::Debug + Send + Sync {
    /// `id` was logged on request stream `id.stream` of `session`; `data` is `None` for a priming
    /// event (an id with empty data, which a client may resume from).
    fn logged(&self, session: &str, id: EventId, data: Option<&str>);

    /// The request on `stream` of `session` was answered: the stream has no more events.
    fn finished(&self, session: &str, stream: u64);

    /// A message for the standalone (`GET`) stream of `session`, which may be open on another
    /// instance: `true` when the sink hands it to the instance holding that stream (which
    /// delivers it with [`Session::push_here`](super::Session::push_here)); `false` (the default)
    /// delivers it here.
    fn pushed(&self, session: &str, json: &str) -> bool {
        let _ = (session, json);
        false
    }
}

/// A random first request-stream number for a session served by several instances: 48 random
/// bits (so two instances' streams of one session do not meet), never the standalone `0`.
///
/// # Errors
/// When the random source fails.
pub fn random_first_stream() -> Result<u64, getrandom::Error> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)?;
    Ok((u64::from_le_bytes(bytes) >> 16) | 1 << 47)
}
