//! The shared event log on Redis: each request stream of a session is a list
//! `{prefix}events:{session}:{stream}` of entries `"<seq>:<data>"` (empty data: a priming event),
//! closed by `"end"` when the request is answered, bounded by count (the replay-log capacity,
//! `LTRIM`), age (the event TTL, the list's expiry pushed back by each append) and size (an
//! entry over the replay log's byte bound is relayed live, not kept); each entry is also
//! published on the channel of the same name, for the instances relaying the stream live.
//!
//! Appends go through a write-behind queue (a session logs synchronously, under its lock): one
//! task per instance writes them in order, a pipelined batch per round trip. The queue is
//! bounded in bytes ([`MAX_QUEUED_BYTES`]): while Redis is slow or down, what does not fit is
//! not shared (it is still delivered and logged on this instance), except the small `end`
//! entries, which are always queued so a relay elsewhere learns that its stream is over.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ::redis::aio::ConnectionManager;
use ::redis::{AsyncCommands, Client};
use futures::StreamExt;
use tokio::sync::mpsc;

use super::{subscribe, unavailable};
use crate::http::answer::EventStream;
use crate::http::session::{EventId, EventSink, Session, Unavailable, STANDALONE_STREAM};
use crate::wire::sse;

/// The entry that closes a stream's log.
const END: &str = "end";
/// The largest entry kept in a list (the replay log's default byte bound, 8 MiB).
pub(super) const MAX_ENTRY_BYTES: usize = 8 * 1024 * 1024;
/// The most entries one round trip writes.
const BATCH: usize = 256;
/// The most bytes (keys and entries) waiting in the write-behind queue: 64 MiB.
pub(super) const MAX_QUEUED_BYTES: usize = 64 << 20;

/// How often a relayed stream checks that its session and its log are still there: 5 s.
const RELAY_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// The channel of the messages for a session's standalone stream (`{session}\n{message}`).
pub(super) fn push_channel(prefix: &str) -> String {
    format!("{prefix}push")
}

/// The list (and channel) of one request stream.
fn key(prefix: &str, session: &str, stream: u64) -> String {
    format!("{prefix}events:{session}:{stream}")
}

enum Entry<'a> {
    /// An event: its session-wide sequence number and its data (`None`: priming).
    Event(u64, Option<&'a str>),
    End,
}

fn parse(entry: &str) -> Option<Entry<'_>> {
    if entry == END {
        return Some(Entry::End);
    }
    let (seq, data) = entry.split_once(':')?;
    let seq = seq.parse().ok()?;
    Some(Entry::Event(seq, Some(data).filter(|d| !d.is_empty())))
}

/// The [`EventSink`] of the sessions an instance serves: entries queued for the writer task.
#[derive(Debug)]
pub(super) struct EventLog {
    prefix: String,
    queue: mpsc::UnboundedSender<Append>,
    /// The bytes waiting in the queue (the writer takes them off as it writes).
    queued: Arc<AtomicUsize>,
    /// The bound of `queued` ([`MAX_QUEUED_BYTES`]).
    limit: usize,
    /// Whether entries are being dropped (logged once per spell).
    dropping: AtomicBool,
}

/// One write of the queue: an entry for a list (and its channel), or a message for a channel
/// only.
struct Append {
    key: String,
    entry: String,
    keep: bool,
}

impl Append {
    fn bytes(&self) -> usize {
        self.key.len() + self.entry.len()
    }
}

impl EventLog {
    /// The log, its writer task spawned on the current tokio runtime.
    pub(super) fn spawn(
        prefix: String,
        connection: ConnectionManager,
        capacity: usize,
        ttl_ms: u64,
        max_bytes: usize,
    ) -> EventLog {
        let (log, rx) = EventLog::queued(prefix, MAX_QUEUED_BYTES);
        let writer = Writer {
            connection,
            capacity,
            ttl_ms,
            max_bytes,
            queued: log.queued.clone(),
        };
        tokio::spawn(writer.run(rx));
        log
    }

    /// The log and the receiving end of its queue, bounded by `limit` bytes.
    fn queued(prefix: String, limit: usize) -> (EventLog, mpsc::UnboundedReceiver<Append>) {
        let (queue, rx) = mpsc::unbounded_channel();
        let log = EventLog {
            prefix,
            queue,
            queued: Arc::new(AtomicUsize::new(0)),
            limit,
            dropping: AtomicBool::new(false),
        };
        (log, rx)
    }

    /// Queue `append` for the writer, within the byte bound (an `end` entry always);
    /// `false` when it was not queued.
    fn queue(&self, append: Append) -> bool {
        let bytes = append.bytes();
        let before = self.queued.fetch_add(bytes, Ordering::Relaxed);
        if before + bytes > self.limit && append.entry != END {
            self.queued.fetch_sub(bytes, Ordering::Relaxed);
            if !self.dropping.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    queued = before,
                    "redis: the write-behind queue is full (Redis slow or down); new stream events are not shared until it drains"
                );
            }
            return false;
        }
        if before < self.limit / 2 {
            self.dropping.store(false, Ordering::Relaxed);
        }
        if self.queue.send(append).is_err() {
            self.queued.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }
}

impl EventLog {
    /// Publish `payload` on `channel`, in order with the events queued before it.
    pub(super) fn announce(&self, channel: String, payload: String) {
        self.queue(Append {
            key: channel,
            entry: payload,
            keep: false,
        });
    }
}

impl EventSink for EventLog {
    fn logged(&self, session: &str, id: EventId, data: Option<&str>) {
        self.queue(Append {
            key: key(&self.prefix, session, id.stream),
            entry: format!("{}:{}", id.seq, data.unwrap_or_default()),
            keep: true,
        });
    }

    fn finished(&self, session: &str, stream: u64) {
        self.queue(Append {
            key: key(&self.prefix, session, stream),
            entry: END.to_owned(),
            keep: true,
        });
    }

    fn pushed(&self, session: &str, json: &str) -> bool {
        let append = Append {
            key: push_channel(&self.prefix),
            entry: format!("{session}\n{json}"),
            keep: false,
        };
        self.queue(append)
    }
}

/// The task that writes the queue to Redis, in order, a batch per round trip.
struct Writer {
    connection: ConnectionManager,
    capacity: usize,
    ttl_ms: u64,
    max_bytes: usize,
    queued: Arc<AtomicUsize>,
}

impl Writer {
    async fn run(self, mut rx: mpsc::UnboundedReceiver<Append>) {
        let Writer {
            mut connection,
            capacity,
            ttl_ms,
            max_bytes,
            queued,
        } = self;
        let mut batch = Vec::with_capacity(BATCH);
        let ttl = i64::try_from(ttl_ms).unwrap_or(i64::MAX);
        while rx.recv_many(&mut batch, BATCH).await > 0 {
            let bytes: usize = batch.iter().map(Append::bytes).sum();
            let pipe = pipeline(&batch, capacity, max_bytes, ttl);
            batch.clear();
            if let Err(e) = pipe.query_async::<()>(&mut connection).await {
                tracing::warn!(error = %e, "redis: cannot write stream events; they are not shared");
            }
            queued.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

/// The commands that write `batch`, in its order: each run of entries for one list is one
/// `RPUSH` of those kept (within the count and byte bounds), one `LTRIM` to the last `capacity`
/// and one `PEXPIRE` to the event TTL, then a `PUBLISH` of each entry on the channel of the
/// same name (a stream's answer and its `end`, queued together, cost 5 commands, not 8).
fn pipeline(batch: &[Append], capacity: usize, max_bytes: usize, ttl_ms: i64) -> ::redis::Pipeline {
    let retained = isize::try_from(capacity).unwrap_or(isize::MAX);
    let mut pipe = ::redis::pipe();
    let mut rest = batch;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|a| a.key == first.key).count();
        let (this, next) = rest.split_at(run);
        let kept: Vec<&str> = (this.iter())
            .filter(|a| a.keep && capacity > 0 && a.entry.len() <= max_bytes)
            .map(|a| a.entry.as_str())
            .collect();
        if !kept.is_empty() {
            pipe.rpush(&first.key, kept).ignore();
            pipe.ltrim(&first.key, -retained, -1).ignore();
            pipe.pexpire(&first.key, ttl_ms).ignore();
        }
        for append in this {
            pipe.publish(&append.key, &append.entry).ignore();
        }
        rest = next;
    }
    pipe
}

/// Resume request stream `after.stream` of `session` strictly after `after` from the shared log:
/// the logged events, then the later ones live until the stream's end; for an `after` trimmed
/// off the list's front, what is left of the stream. `Ok(None)` when the log does not know
/// `after` (no such stream here, or the standalone stream).
pub(super) async fn resume(
    client: &Client,
    connection: &ConnectionManager,
    prefix: &str,
    session: &Arc<Session>,
    record: String,
    after: &str,
) -> Result<Option<EventStream>, Unavailable> {
    let Ok(after) = after.parse::<EventId>() else {
        return Ok(None);
    };
    if after.stream == STANDALONE_STREAM {
        return Ok(None);
    }
    let key = key(prefix, session.id(), after.stream);
    // Subscribed before reading the list: an event appended meanwhile comes by one or the other
    // (both: the sequence number drops the second copy).
    let pubsub = subscribe(client, std::slice::from_ref(&key))
        .await
        .map_err(|e| unavailable(&e))?;
    let entries: Vec<String> = (connection.clone())
        .lrange(&key, 0, -1)
        .await
        .map_err(|e| unavailable(&e))?;
    let known = (entries.iter().filter_map(|e| parse(e)))
        .any(|e| matches!(e, Entry::Event(seq, _) if seq == after.seq));
    // Trimmed off the list's front (a stream longer than the log's bound): what is left of the
    // stream — its response above all — rather than a fresh stream on which it never comes.
    let first = (entries.iter().filter_map(|e| parse(e))).find_map(|e| match e {
        Entry::Event(seq, _) => Some(seq),
        Entry::End => None,
    });
    let evicted = first.is_some_and(|first| first > after.seq);
    if !known && !evicted {
        return Ok(None);
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let stream = after.stream;
    let encode = move |seq: u64, data: &str| {
        sse::encode_event(Some(&EventId { stream, seq }.to_string()), data)
    };
    let mut last = after.seq;
    let mut ended = false;
    for entry in entries.iter().filter_map(|e| parse(e)) {
        match entry {
            Entry::End => {
                ended = true;
                break;
            }
            Entry::Event(seq, data) if seq > last => {
                last = seq;
                if let Some(data) = data {
                    let _ = tx.send(encode(seq, data));
                }
            }
            Entry::Event(..) => {}
        }
    }
    if !ended {
        let mut connection = connection.clone();
        // One connection per stream: a newer one (here, or on another instance: a takeover)
        // ends this relay.
        let (token, mut taken_over) = session.relay_on(stream);
        let session = session.clone();
        tokio::spawn(async move {
            let mut messages = pubsub.into_on_message();
            // The stream's `end` may never come: its instance was killed, or the entry was lost
            // with Redis' data. The relay ends with the session: its record gone from Redis
            // (deleted, expired), checked every RELAY_CHECK. Not with the stream's list, which
            // expires while a live request sends nothing (waiting for a person's answer): its
            // response would come with no relay to carry it.
            let mut check = tokio::time::interval(RELAY_CHECK);
            check.tick().await;
            loop {
                let message = tokio::select! {
                    () = tx.closed() => break,
                    _ = &mut taken_over => {
                        tracing::debug!(%key, "redis: a relayed stream was taken over by another connection");
                        break;
                    }
                    message = messages.next() => message,
                    _ = check.tick() => {
                        if let Ok(false) = connection.exists::<_, bool>(&record).await {
                            tracing::debug!(%key, "redis: a relayed stream ended without its end: its session is gone");
                            break;
                        }
                        continue;
                    }
                };
                let Some(message) = message else { break };
                let Ok(entry) = message.get_payload::<String>() else {
                    continue;
                };
                match parse(&entry) {
                    Some(Entry::End) | None => break,
                    Some(Entry::Event(seq, data)) if seq > last => {
                        last = seq;
                        if let Some(data) = data {
                            if tx.send(encode(seq, data)).is_err() {
                                break;
                            }
                        }
                    }
                    Some(Entry::Event(..)) => {}
                }
            }
            session.relay_off(stream, token);
        });
    }
    let events = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    Ok(Some(EventStream::new(events)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(key: &str, entry: &str, keep: bool) -> Append {
        Append {
            key: key.into(),
            entry: entry.into(),
            keep,
        }
    }

    #[test]
    fn a_run_of_entries_for_one_list_is_one_push_then_a_publish_each() {
        let batch = [
            append("p:events:s:7", "1:", true),
            append("p:events:s:7", "2:{}", true),
            append("p:events:s:7", END, true),
            append("p:push", "s\n{}", false),
            append("p:events:s:7", "3:too big for the bound", true),
        ];
        let pipe = pipeline(&batch, 1024, 8, 300_000);
        let names: Vec<String> = (pipe.cmd_iter())
            .map(|c| {
                let packed = String::from_utf8_lossy(&c.get_packed_command()).into_owned();
                packed.split("\r\n").nth(2).unwrap_or_default().to_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "RPUSH", "LTRIM", "PEXPIRE", "PUBLISH", "PUBLISH",
                "PUBLISH", // the stream's run
                "PUBLISH", // the push channel: published only
                "PUBLISH", // an entry over the byte bound: relayed live, not kept
            ]
        );
        let packed = String::from_utf8_lossy(&pipe.cmd_iter().next().unwrap().get_packed_command())
            .into_owned();
        assert!(
            packed.contains("1:\r\n") && packed.contains("2:{}\r\n") && packed.contains("end\r\n")
        );
        assert_eq!(
            pipeline(&batch[..1], 0, 8, 1).cmd_iter().count(),
            1,
            "no log: publish only"
        );
    }

    #[test]
    fn the_write_behind_queue_is_bounded_in_bytes_but_always_takes_an_end() {
        let (log, mut rx) = EventLog::queued("p:".into(), 100);
        let data = "x".repeat(40);
        let id = |seq| EventId { stream: 7, seq };
        log.logged("s", id(1), Some(&data)); // 13 + 43 bytes
        assert!(!log.pushed("s", &data), "56 + 50 > 100: not queued");
        log.logged("s", id(2), Some(&data));
        log.finished("s", 7);
        let mut got = Vec::new();
        while let Ok(append) = rx.try_recv() {
            got.push(append.entry);
        }
        assert_eq!(got, [format!("1:{data}"), END.to_owned()]);
        // The writer takes written bytes off: there is room again.
        log.queued
            .fetch_sub(log.queued.load(Ordering::Relaxed), Ordering::Relaxed);
        assert!(log.pushed("s", &data));
        assert_eq!(rx.try_recv().unwrap().entry, format!("s\n{data}"));
    }
}
