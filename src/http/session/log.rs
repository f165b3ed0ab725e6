//! Event ids and the bounded replay log (seed clause 19: the log folded into `MCPSession`).

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// An SSE event id: `"<stream>-<seq>"`, both lowercase base36 without leading zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The stream the event was sent on (`0`: the standalone `GET` stream).
    pub stream: u64,
    /// The session-wide sequence number (unique and increasing within a session).
    pub seq: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text().as_str())
    }
}

impl EventId {
    /// The id's text (what [`fmt::Display`] writes), on the stack.
    pub(crate) fn text(&self) -> IdText {
        let (mut stream, mut seq) = ([0; 13], [0; 13]);
        let (stream, seq) = (base36(self.stream, &mut stream), base36(self.seq, &mut seq));
        let mut text = IdText {
            bytes: [0; 27],
            len: stream.len() + 1 + seq.len(),
        };
        text.bytes[..stream.len()].copy_from_slice(stream.as_bytes());
        text.bytes[stream.len()] = b'-';
        text.bytes[stream.len() + 1..text.len].copy_from_slice(seq.as_bytes());
        text
    }
}

/// An [`EventId`]'s text without a heap allocation: 13 base36 digits hold any `u64`, so
/// `"<stream>-<seq>"` fits 27 bytes.
pub(crate) struct IdText {
    bytes: [u8; 27],
    len: usize,
}

impl IdText {
    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits, letters and `-` were written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// Why a string is not an [`EventId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an event id")]
pub struct InvalidEventId;

impl FromStr for EventId {
    type Err = InvalidEventId;

    /// Parse the canonical form only (so each id has exactly one spelling).
    fn from_str(s: &str) -> Result<Self, InvalidEventId> {
        let (stream, seq) = s.split_once('-').ok_or(InvalidEventId)?;
        let id = EventId {
            stream: parse_base36(stream)?,
            seq: parse_base36(seq)?,
        };
        if id.to_string() == s {
            Ok(id)
        } else {
            Err(InvalidEventId)
        }
    }
}

/// `n` in lowercase base36, written at the end of `buf` (13 digits hold any `u64`).
fn base36(mut n: u64, buf: &mut [u8; 13]) -> &str {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = DIGITS[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[at..]).unwrap_or_default()
}

fn parse_base36(s: &str) -> Result<u64, InvalidEventId> {
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    {
        return Err(InvalidEventId);
    }
    u64::from_str_radix(s, 36).map_err(|_| InvalidEventId)
}

/// One logged event (seed `EventStoreEntry`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Its id.
    pub id: EventId,
    /// The JSON-RPC message text; `None` for a priming event (an id with empty data).
    pub data: Option<String>,
    /// When it was logged (clock ms).
    pub timestamp: u64,
}

/// A bounded, append-only event log: at most `capacity` events, each kept at most `ttl_ms`
/// (evicted lazily, on the next append or replay). Oldest first.
#[derive(Debug)]
pub struct ReplayLog {
    events: VecDeque<Event>,
    /// The event bound (at most `u32::MAX`, as `max_bytes`: room for the shared budget in the
    /// session's size).
    capacity: u32,
    ttl_ms: u64,
    next_seq: u64,
    /// Bytes of event data retained, bounded by `max_bytes`.
    bytes: usize,
    max_bytes: u32,
    /// The bound this log shares with others (every session of a store), if any.
    budget: Option<LogBudget>,
}

/// A clone is a snapshot of the events, outside any shared [`LogBudget`].
impl Clone for ReplayLog {
    fn clone(&self) -> Self {
        ReplayLog {
            events: self.events.clone(),
            capacity: self.capacity,
            ttl_ms: self.ttl_ms,
            next_seq: self.next_seq,
            bytes: self.bytes,
            max_bytes: self.max_bytes,
            budget: None,
        }
    }
}

impl Drop for ReplayLog {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            budget.give(self.bytes);
        }
    }
}

/// `n`, or `u32::MAX` beyond it (a log's bounds: 4 billion events or 4 GiB are no bound lower).
fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The most event data one session's log retains: 8 MiB (the oldest events go first).
pub const DEFAULT_LOG_MAX_BYTES: usize = 8 * 1024 * 1024;

/// The most event data the replay logs of one store's sessions retain together: 256 MiB.
pub const DEFAULT_LOG_TOTAL_BYTES: usize = 256 * 1024 * 1024;

/// A bound on the event data several [`ReplayLog`]s retain together (the sessions of one store:
/// without it, `max_sessions` full logs of 8 MiB each would be a peer's to fill). A log that
/// would go past it evicts its own oldest events first; an event that still does not fit is not
/// retained (it is still delivered live; a resume after it replays nothing). Clones share the
/// bound.
#[derive(Clone, Debug)]
pub struct LogBudget(Arc<Budget>);

#[derive(Debug)]
struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl LogBudget {
    /// A bound of `limit` bytes of event data.
    pub fn new(limit: usize) -> Self {
        LogBudget(Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
        }))
    }

    /// The bound, in bytes.
    pub fn limit(&self) -> usize {
        self.0.limit
    }

    /// The bytes of event data retained under it now.
    pub fn used(&self) -> usize {
        self.0.used.load(Ordering::Relaxed)
    }

    /// Take `bytes` of the bound; `false` (nothing taken) when they do not fit.
    fn take(&self, bytes: usize) -> bool {
        self.0
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&n| n <= self.0.limit)
            })
            .is_ok()
    }

    /// Give back `bytes` taken before.
    fn give(&self, bytes: usize) {
        if bytes > 0 {
            self.0.used.fetch_sub(bytes, Ordering::AcqRel);
        }
    }
}

impl Default for LogBudget {
    /// [`DEFAULT_LOG_TOTAL_BYTES`].
    fn default() -> Self {
        LogBudget::new(DEFAULT_LOG_TOTAL_BYTES)
    }
}

impl ReplayLog {
    /// An empty log; a `capacity` of `0` retains nothing.
    pub fn new(capacity: usize, ttl_ms: u64) -> Self {
        ReplayLog {
            events: VecDeque::new(),
            capacity: saturating_u32(capacity),
            ttl_ms,
            next_seq: 0,
            bytes: 0,
            max_bytes: saturating_u32(DEFAULT_LOG_MAX_BYTES),
            budget: None,
        }
    }

    /// Count the retained event data against `budget`, shared with other logs (see
    /// [`LogBudget`]). Set it before the first event.
    pub fn with_budget(mut self, budget: LogBudget) -> Self {
        debug_assert!(self.events.is_empty());
        self.budget = Some(budget);
        self
    }

    /// Forget `old`'s data in the byte counts (this log's and the shared budget's).
    fn release(&mut self, old: &Event) {
        let size = old.data.as_ref().map_or(0, String::len);
        self.bytes -= size;
        if let Some(budget) = &self.budget {
            budget.give(size);
        }
    }

    /// Bound the retained event data to `max_bytes` (default 8 MiB, `DEFAULT_LOG_MAX_BYTES`); an
    /// event larger than that is not retained (it is still delivered live).
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = saturating_u32(max_bytes);
        self
    }

    /// Log an event on `stream` at `now` and return its fresh id (the oldest events are evicted
    /// past capacity or past the byte bound, and any older than the TTL).
    pub fn append(&mut self, stream: u64, data: Option<String>, now: u64) -> EventId {
        self.append_evicting(stream, data, now).0
    }

    /// The id the next [`ReplayLog::append`] on `stream` gets.
    pub(crate) fn next_id(&self, stream: u64) -> EventId {
        EventId {
            stream,
            seq: self.next_seq,
        }
    }

    /// [`ReplayLog::append`], handing back an event it evicted, if any (the oldest; any others,
    /// expired with it, are dropped here): the caller drops it after its lock, so freeing it is
    /// off the lock's critical path (one event leaves for each one logged once the log is full).
    pub(crate) fn append_evicting(
        &mut self,
        stream: u64,
        data: Option<String>,
        now: u64,
    ) -> (EventId, Option<Event>) {
        let id = self.next_id(stream);
        self.next_seq += 1;
        let mut evicted = self.evict(now);
        let size = data.as_ref().map_or(0, String::len);
        let (capacity, max_bytes) = (self.capacity as usize, self.max_bytes as usize);
        if capacity > 0 && size <= max_bytes {
            while self.events.len() >= capacity || self.bytes + size > max_bytes {
                let Some(old) = self.events.pop_front() else {
                    break;
                };
                self.release(&old);
                evicted.get_or_insert(old);
            }
            // The shared bound: this log's own oldest events make room first.
            if let Some(budget) = self.budget.clone() {
                while !budget.take(size) {
                    let Some(old) = self.events.pop_front() else {
                        // Nothing of its own left to give: not retained.
                        return (id, evicted);
                    };
                    self.release(&old);
                    evicted.get_or_insert(old);
                }
            }
            self.bytes += size;
            if self.events.capacity() == 0 {
                // A log's first event (an idle session's `initialize` answer) takes a buffer of
                // one, not the four a first push reserves; a busy log grows as usual.
                self.events.reserve_exact(1);
            }
            self.events.push_back(Event {
                id,
                data,
                timestamp: now,
            });
        }
        (id, evicted)
    }

    /// A fresh id on `stream` for an event this log does not keep (one delivered elsewhere:
    /// the sequence goes on as if it had been logged).
    pub fn reserve(&mut self, stream: u64) -> EventId {
        let id = EventId {
            stream,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        id
    }

    /// Every retained event of `after.stream` logged strictly after `after`, in order, without
    /// priming events; `None` when `after` is not (or no longer) in the log — an unknown or
    /// evicted cursor replays nothing.
    pub fn replay(&mut self, after: EventId, now: u64) -> Option<Vec<Event>> {
        drop(self.evict(now));
        let at = self.events.iter().position(|e| e.id == after)?;
        Some(
            self.events
                .iter()
                .skip(at + 1)
                .filter(|e| e.id.stream == after.stream && e.data.is_some())
                .cloned()
                .collect(),
        )
    }

    /// For a cursor the log no longer holds because it was evicted (logged before every retained
    /// event: its `seq` is below theirs): every retained event of its stream after it, without
    /// priming events — what is left of the stream (events between were lost). `None` for a
    /// cursor the log holds, or one it never logged (a `seq` it has not reached).
    pub fn replay_evicted(&mut self, after: EventId, now: u64) -> Option<Vec<Event>> {
        drop(self.evict(now));
        let oldest = self.events.front().map_or(self.next_seq, |e| e.id.seq);
        if after.seq >= oldest || after.seq >= self.next_seq {
            return None;
        }
        Some(
            self.events
                .iter()
                .filter(|e| e.id.stream == after.stream && e.data.is_some())
                .cloned()
                .collect(),
        )
    }

    /// The number of retained events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The bytes of event text retained.
    #[cfg(test)]
    pub(crate) fn retained_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether nothing is retained.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Drop the events older than the TTL at `now`; the first of them is handed back. A log
    /// that this empties releases its buffer (a session that was busy and went quiet keeps no
    /// room for the events it no longer has).
    fn evict(&mut self, now: u64) -> Option<Event> {
        let mut first = None;
        while self
            .events
            .front()
            .is_some_and(|e| now.saturating_sub(e.timestamp) >= self.ttl_ms)
        {
            if let Some(old) = self.events.pop_front() {
                self.release(&old);
                first.get_or_insert(old);
            }
        }
        if first.is_some() && self.events.is_empty() {
            self.events = VecDeque::new();
        }
        first
    }

    /// The events the log's buffer has room for (for tests: what an idle session's log holds).
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.events.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_sharing_a_budget_retain_at_most_it_together_each_paying_for_its_own() {
        let budget = LogBudget::new(100);
        let text = |n: usize| Some("x".repeat(n));
        let mut a = ReplayLog::new(16, 60_000).with_budget(budget.clone());
        let mut b = ReplayLog::new(16, 60_000).with_budget(budget.clone());
        a.append(1, text(60), 0);
        assert_eq!(budget.used(), 60);
        // No room, and nothing of its own to give: delivered live, not retained.
        let lost = b.append(1, text(60), 0);
        assert!(b.is_empty());
        assert_eq!(b.replay(lost, 0), None);
        assert_eq!(budget.used(), 60);
        // A log over the bound gives up its own oldest first.
        let kept = a.append(1, text(60), 0);
        assert_eq!((a.len(), a.retained_bytes(), budget.used()), (1, 60, 60));
        assert_eq!(a.replay(kept, 0), Some(Vec::new()));
        // Priming events (no data) cost nothing.
        b.append(1, None, 0);
        assert_eq!((b.len(), budget.used()), (1, 60));
        // A snapshot is outside the budget; a dropped log gives its bytes back.
        drop(a.clone());
        assert_eq!(budget.used(), 60);
        drop(a);
        assert_eq!(budget.used(), 0);
        b.append(1, text(60), 0);
        assert_eq!((b.len(), budget.used()), (2, 60));
        // Expiry gives back too.
        b.append(1, text(10), 120_000);
        assert_eq!((b.len(), budget.used()), (1, 10));
    }

    #[test]
    fn event_ids_round_trip_canonically() {
        let id = EventId { stream: 37, seq: 0 };
        assert_eq!(id.to_string(), "11-0");
        assert_eq!("11-0".parse::<EventId>(), Ok(id));
        for bad in [
            "",
            "-",
            "1-",
            "-1",
            "01-1",
            "A-1",
            "+1-1",
            "1-1-1",
            "1_1",
            "zzzzzzzzzzzzzz-1",
        ] {
            assert_eq!(bad.parse::<EventId>(), Err(InvalidEventId), "{bad}");
        }
    }

    #[test]
    fn log_evicts_by_bytes() {
        let mut log = ReplayLog::new(100, 1_000).with_max_bytes(10);
        let a = log.append(0, Some("aaaa".into()), 0);
        let b = log.append(0, Some("bbbb".into()), 0);
        let _c = log.append(0, Some("cccc".into()), 0); // 12 bytes > 10: `a` goes
        assert_eq!(log.replay(a, 0), None, "a was evicted past the byte bound");
        assert_eq!(log.replay(b, 0).unwrap().len(), 1);
        let _huge = log.append(0, Some("x".repeat(11)), 0); // larger than the bound: not retained
        assert_eq!(log.replay(b, 0).unwrap().len(), 1);
    }

    #[test]
    fn a_log_holds_room_for_what_it_keeps() {
        let mut log = ReplayLog::new(1024, 100);
        assert_eq!(log.buffer_capacity(), 0, "an empty log holds no buffer");
        let first = log.append(1, None, 0);
        assert_eq!(log.buffer_capacity(), 1, "one event: room for one");
        log.append(2, Some("x".into()), 10);
        log.append(2, Some("y".into()), 20);
        assert_eq!(log.len(), 3);
        assert!(log.buffer_capacity() >= 3);
        assert_eq!(log.replay(first, 50).unwrap().len(), 0, "on another stream");
        // Every event expired: the buffer goes with them, and the next event takes room for one.
        assert_eq!(log.replay(first, 120), None);
        assert!(log.is_empty());
        assert_eq!(log.buffer_capacity(), 0);
        log.append(3, None, 130);
        assert_eq!(log.buffer_capacity(), 1);
    }

    #[test]
    fn log_evicts_by_capacity_and_ttl() {
        let mut log = ReplayLog::new(2, 100);
        let a = log.append(0, Some("a".into()), 0);
        let b = log.append(0, Some("b".into()), 10);
        let c = log.append(0, Some("c".into()), 20);
        assert_eq!(log.len(), 2);
        assert_eq!(log.replay(a, 20), None, "a was evicted past capacity");
        let r = log.replay(b, 20).unwrap();
        assert_eq!(
            r.iter().map(|e| e.data.as_deref()).collect::<Vec<_>>(),
            [Some("c")]
        );
        assert_eq!(log.replay(b, 110), None, "b expired at 10 + 100");
        assert_eq!(log.replay(c, 119), Some(vec![]));
        assert_eq!(log.replay(c, 120), None, "c expired at 20 + 100");
        assert!(log.is_empty());
    }
}
