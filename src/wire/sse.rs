//! Server-Sent Events framing (WHATWG HTML §9.2 "Server-sent events", `text/event-stream`), with
//! no I/O: an encoder for the server side and a streaming [`Decoder`] for the client side (seed
//! clause 15, `readEventStream`), shared by the native HTTP client and a future wasm fetch one.
//!
//! The decoder follows the WHATWG parsing rules:
//!
//! | input | outcome |
//! |---|---|
//! | `LF`, `CR` or `CRLF` | a line end (a `CRLF` split across chunks counts once) |
//! | a blank line | dispatch the event, if its data buffer is non-empty |
//! | `data: a` then `data: b` | one event with data `"a\nb"` |
//! | `: anything` | a comment, ignored |
//! | `field:value` / `field: value` | one optional space after the colon is dropped |
//! | `field` (no colon) | the field with an empty value |
//! | `event`, `id`, `retry` | the event type (default `message`), the last event id (kept across events; ignored if it contains NUL), the reconnection time in ms (digits only) |
//! | a leading UTF-8 BOM | dropped once, at the very start of the stream |
//! | a chunk boundary anywhere, even inside a UTF-8 character | no effect: bytes are buffered up to a line end before decoding |
//! | end of stream inside an event | the incomplete event is discarded |
//! | invalid UTF-8 | replaced with U+FFFD, never an error |

/// Encode one SSE event: optional `id`, `event: message`, and the data split into `data:` lines
/// at every line end SSE knows (`\r\n`, `\r` and `\n`: each starts a second `data:` line, as
/// the format requires, so no byte of `data` can start a field of its own), then a blank line.
///
/// SSE cannot carry a `\r` inside data: the decoder gives each line end back as `\n`. An `id`
/// holding a line end cannot be sent at all and is left out (the library's ids never do).
pub fn encode_event(id: Option<&str>, data: &str) -> String {
    let id = id.filter(|id| one_line(id));
    let mut out = String::with_capacity(data.len() + id.map_or(0, |id| id.len() + 5) + 32);
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    out.push_str("event: message\n");
    for line in lines(data) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// Encode a JSON-RPC response as one SSE event, as [`encode_event`] would its JSON text (no
/// `id`), written straight into the event: compact JSON holds no line end (a string's control
/// characters are escaped), so its text is one `data:` line.
pub(crate) fn encode_response_event(response: &crate::wire::jsonrpc::JsonRpcResponse) -> String {
    const HEAD: &str = "event: message\ndata: ";
    let mut out = Vec::with_capacity(160);
    out.extend_from_slice(HEAD.as_bytes());
    serde_json::to_writer(&mut out, response).expect("JSON-RPC responses always serialize");
    out.extend_from_slice(b"\n\n");
    // serde_json writes UTF-8, and the head and tail are ASCII.
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// `true` when `value` holds no line end (so it fits one field line).
fn one_line(value: &str) -> bool {
    line_end(value).is_none()
}

/// Where the first line end (`\r` or `\n`) of `text` is (a byte search: both are ASCII).
fn line_end(text: &str) -> Option<usize> {
    memchr::memchr2(b'\r', b'\n', text.as_bytes())
}

/// The lines of `text` split at `\r\n`, `\r` and `\n` (an empty text is one empty line).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match line_end(text) {
            Some(i) => {
                let skip = if text[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&text[i + skip..]);
                Some(&text[..i])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// A priming event (spec 2025-11-25 `basic/transports`: "an event ID and an empty `data`
/// field"), with an optional `retry` in ms telling the client how long to wait before
/// reconnecting.
pub fn encode_priming(id: &str, retry_ms: Option<u64>) -> String {
    match retry_ms {
        Some(ms) => format!("id: {id}\nretry: {ms}\ndata: \n\n"),
        None => format!("id: {id}\ndata: \n\n"),
    }
}

/// A `retry` field alone (sent before the server closes a connection it lets the client resume).
pub fn encode_retry(retry_ms: u64) -> String {
    format!("retry: {retry_ms}\n\n")
}

/// A keep-alive comment line (ignored by SSE parsers; keeps proxies and dead-peer detection
/// going).
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The event type: the last `event:` field of the event, or `"message"`.
    pub event: String,
    /// The `data:` lines joined by `\n` (without a trailing newline).
    pub data: String,
    /// The last event id at dispatch time (it carries over from earlier events), if any was set.
    pub id: Option<String>,
    /// The last valid `retry:` value seen on the stream, in milliseconds.
    pub retry: Option<u64>,
}

impl Event {
    /// Whether the event carries a JSON-RPC message: an event of type `message` (the type a
    /// `text/event-stream` gives an event that names none) with data. A priming event (no data,
    /// an id to resume from) and an event of another type carry none and are skipped, as a
    /// browser's `EventSource` leaves a named event to listeners of that name (spec
    /// `basic/transports`, Streamable HTTP; the official SDKs' clients read `message` events
    /// alone).
    pub fn carries_message(&self) -> bool {
        self.event == "message" && !self.data.is_empty()
    }
}

/// The longest line, and the largest event data, accepted by default: 64 MiB. A longer line is
/// discarded up to its end, and the event it belongs to (or whose `data:` lines add up to more)
/// is dropped whole at its blank line, never delivered cut: the decoder holds at most about this
/// many bytes whatever the peer sends ([`Decoder::dropped`] counts what it dropped).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// A streaming `text/event-stream` decoder: feed byte chunks with [`Decoder::push`], collect the
/// events each completes.
#[derive(Debug)]
pub struct Decoder {
    line: Vec<u8>,
    max_line: usize,
    overflow: bool,
    /// The current event had a line over the bound, or its data grew past it: dropped whole.
    event_overflow: bool,
    /// Events dropped over the bound so far.
    dropped: u64,
    /// The previous chunk ended with `CR`: a leading `LF` in the next one belongs to it.
    after_cr: bool,
    /// Still at the start of the stream (a BOM may follow).
    at_start: bool,
    data: String,
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry: Option<u64>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder at the start of a stream, accepting lines up to [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new() -> Self {
        Decoder::with_max_line(DEFAULT_MAX_LINE_BYTES)
    }

    /// A decoder accepting lines and event data up to `max_line_bytes` bytes each; a longer line
    /// and its event are dropped (logged, counted by [`Decoder::dropped`]).
    pub fn with_max_line(max_line_bytes: usize) -> Self {
        Decoder {
            line: Vec::new(),
            max_line: max_line_bytes,
            overflow: false,
            event_overflow: false,
            dropped: 0,
            after_cr: false,
            at_start: true,
            data: String::new(),
            has_data: false,
            event: String::new(),
            last_id: None,
            retry: None,
        }
    }

    /// How many events were dropped so far because a line or their data exceeded the bound.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Whether an event went over the bound: one dropped already, or the one being read (its
    /// line or data past the bound; it will be dropped at its end, which a peer may never send).
    pub fn over_limit(&self) -> bool {
        self.dropped > 0 || self.event_overflow
    }

    /// The bound on a line and on an event's data, in bytes.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// The last event id seen on the stream (for a `Last-Event-ID` reconnection header).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The last `retry:` value seen, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feed one chunk; returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    self.append(&rest[..i]);
                    let was_cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    if was_cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    self.end_line(&mut events);
                }
                None => {
                    self.append(rest);
                    rest = &[];
                }
            }
        }
        events
    }

    /// End of stream. Per the WHATWG rules an event without its closing blank line is
    /// discarded; returns `true` when such an incomplete event (or line) was dropped.
    pub fn finish(&mut self) -> bool {
        let dropped = !self.line.is_empty() || self.has_data || self.event_overflow;
        self.event_overflow = false;
        self.overflow = false;
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        dropped
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        if self.line.len() + bytes.len() > self.max_line {
            tracing::warn!(
                limit = self.max_line,
                "sse: dropped a line over the size limit"
            );
            self.overflow = true;
            self.event_overflow = true;
            self.line.clear();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, events: &mut Vec<Event>) {
        let mut line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.overflow) {
            self.at_start = false;
            return;
        }
        if std::mem::take(&mut self.at_start) && line.starts_with(&[0xEF, 0xBB, 0xBF]) {
            line.drain(..3);
        }
        let line = String::from_utf8_lossy(&line);
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" if self.event_overflow => {}
            "data" if self.data.len() + value.len() + 1 > self.max_line => {
                tracing::warn!(
                    limit = self.max_line,
                    "sse: dropping an event whose data is over the size limit"
                );
                self.event_overflow = true;
                self.data = String::new();
            }
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok().or(self.retry);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, events: &mut Vec<Event>) {
        let event = std::mem::take(&mut self.event);
        if std::mem::take(&mut self.event_overflow) {
            self.dropped += 1;
            self.data = String::new();
            self.has_data = false;
            return;
        }
        if !std::mem::take(&mut self.has_data) {
            self.data.clear();
            return;
        }
        events.push(Event {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
            retry: self.retry,
        });
    }
}

/// Decode a whole `text/event-stream` body at once (seed `readEventStream`, minus the I/O).
pub fn decode_all(body: &[u8]) -> Vec<Event> {
    let mut decoder = Decoder::new();
    let events = decoder.push(body);
    decoder.finish();
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_event_is_the_event_of_its_json_text() {
        use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcResponse, RequestId};
        let result = serde_json::json!({"text": "line\nbreak\r\n and \u{2028} \u{0}", "n": 1.5});
        for response in [
            JsonRpcResponse::result(RequestId::from(7), result),
            JsonRpcResponse::error(
                Some(RequestId::from("a\nb")),
                ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x\ry"),
            ),
            JsonRpcResponse::error(None, ErrorObject::new(ErrorCode::INTERNAL_ERROR, "z")),
        ] {
            let event = encode_response_event(&response);
            assert_eq!(event, encode_event(None, &response.to_json()));
            let events = decode_all(event.as_bytes());
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].data, response.to_json());
        }
    }

    #[test]
    fn every_line_end_in_data_starts_a_data_line_so_no_field_is_injected() {
        let text = encode_event(Some("1"), "x\rid: 9\revent: e\r\ny\nz");
        assert_eq!(
            text,
            "id: 1\nevent: message\ndata: x\ndata: id: 9\ndata: event: e\ndata: y\ndata: z\n\n"
        );
        let events = decode_all(text.as_bytes());
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[0].event, "message");
        assert_eq!(events[0].data, "x\nid: 9\nevent: e\ny\nz");
        // An id holding a line end cannot be a field: it is left out.
        let text = encode_event(Some("1\rretry: 1"), "d");
        assert_eq!(text, "event: message\ndata: d\n\n");
    }

    fn data(events: &[Event]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    fn bytewise(input: &[u8]) -> Vec<Event> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for b in input {
            out.extend(d.push(std::slice::from_ref(b)));
        }
        d.finish();
        out
    }

    #[test]
    fn events_are_byte_exact() {
        assert_eq!(encode_event(None, "{}"), "event: message\ndata: {}\n\n");
        assert_eq!(
            encode_event(Some("7"), "a\nb"),
            "id: 7\nevent: message\ndata: a\ndata: b\n\n"
        );
        assert_eq!(
            encode_priming("1-0", Some(1000)),
            "id: 1-0\nretry: 1000\ndata: \n\n"
        );
        assert_eq!(encode_priming("1-0", None), "id: 1-0\ndata: \n\n");
        assert_eq!(encode_retry(5), "retry: 5\n\n");
    }

    #[test]
    fn what_the_server_encodes_the_decoder_reads() {
        let stream = [
            encode_priming("1-0", Some(1000)),
            KEEP_ALIVE.to_owned(),
            encode_event(Some("1-1"), "{\"a\":1}"),
        ]
        .concat();
        let events = bytewise(stream.as_bytes());
        assert_eq!(data(&events), ["", "{\"a\":1}"]);
        assert_eq!(events[1].id.as_deref(), Some("1-1"));
        assert_eq!(events[1].retry, Some(1000));
    }

    #[test]
    fn lf_cr_and_crlf_all_end_lines() {
        for input in [
            "data: a\n\ndata: b\n\n",
            "data: a\r\rdata: b\r\r",
            "data: a\r\n\r\ndata: b\r\n\r\n",
            "data: a\r\n\rdata: b\n\r\n",
        ] {
            assert_eq!(data(&decode_all(input.as_bytes())), ["a", "b"], "{input:?}");
            assert_eq!(data(&bytewise(input.as_bytes())), ["a", "b"], "{input:?}");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let mut d = Decoder::new();
        assert!(d.push(b"data: a\r").is_empty());
        // The LF completes the CRLF; only the next CR is the blank line.
        assert!(d.push(b"\n").is_empty());
        assert_eq!(data(&d.push(b"\r")), ["a"]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let events = decode_all(b"data: one\ndata:two\ndata\ndata:  three\n\n");
        assert_eq!(data(&events), ["one\ntwo\n\n three"]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let events = decode_all(b": ping\n:\nfoo: bar\ndata: x\n: mid\n\n: trailing\n\n");
        assert_eq!(data(&events), ["x"]);
    }

    #[test]
    fn only_one_space_after_the_colon_is_dropped() {
        let events = decode_all(b"data:x\n\ndata: x\n\ndata:  x\n\n");
        assert_eq!(data(&events), ["x", "x", " x"]);
    }

    #[test]
    fn a_leading_bom_is_dropped_once() {
        let events = bytewise("\u{feff}data: a\n\n\u{feff}data: b\n\n".as_bytes());
        // The second BOM is not at the start of the stream: the line's field is "\u{feff}data".
        assert_eq!(data(&events), ["a"]);
    }

    #[test]
    fn event_id_and_retry_are_read() {
        let events =
            decode_all(b"event: note\nid: 7\nretry: 1500\ndata: a\n\ndata: b\n\nid\ndata: c\n\n");
        assert_eq!(events[0].event, "note");
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].retry, Some(1500));
        // The id carries over; the event type does not.
        assert_eq!(
            (events[1].event.as_str(), events[1].id.as_deref()),
            ("message", Some("7"))
        );
        // A bare `id` resets the last id to empty.
        assert_eq!(events[2].id.as_deref(), Some(""));
        let mut d = Decoder::new();
        d.push(b"retry: 10x\nretry: 20\nretry:\nid: a\0b\ndata: x\n\n");
        assert_eq!((d.retry(), d.last_event_id()), (Some(20), None));
    }

    #[test]
    fn blank_lines_without_data_dispatch_nothing() {
        assert!(decode_all(b"\n\nevent: x\n\nid: 1\n\n").is_empty());
        // An event type with no data does not leak into the next event.
        assert_eq!(decode_all(b"event: x\n\ndata: y\n\n")[0].event, "message");
    }

    #[test]
    fn an_incomplete_event_at_the_end_is_discarded() {
        let mut d = Decoder::new();
        assert_eq!(data(&d.push(b"data: a\n\ndata: b\n")), ["a"]);
        assert!(d.finish());
        assert!(!d.finish());
    }

    #[test]
    fn utf8_split_inside_a_character_survives_byte_by_byte() {
        let input = "data: {\"t\":\"é€😀\"}\r\n\r\n".as_bytes();
        let events = bytewise(input);
        assert_eq!(data(&events), ["{\"t\":\"é€😀\"}"]);
        // Split at every possible point into two chunks.
        for cut in 0..input.len() {
            let mut d = Decoder::new();
            let mut out = d.push(&input[..cut]);
            out.extend(d.push(&input[cut..]));
            assert_eq!(data(&out), ["{\"t\":\"é€😀\"}"], "cut at {cut}");
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        assert_eq!(data(&decode_all(b"data: a\xffb\n\n")), ["a\u{fffd}b"]);
    }

    #[test]
    fn over_long_lines_are_dropped() {
        let mut d = Decoder::with_max_line(8);
        assert!(d.push(b"data: 0123456789\n\n").is_empty());
        assert_eq!(data(&d.push(b"data: ok\n\n")), ["ok"]);
        assert_eq!(d.dropped(), 1);
    }

    #[test]
    fn memory_stays_bounded_and_oversized_events_are_dropped_whole() {
        let mut d = Decoder::with_max_line(64);
        // A line that never ends: fed far past the bound, nothing is held beyond it.
        for _ in 0..1000 {
            assert!(d.push(&[b'x'; 1024]).is_empty());
            assert!(d.line.len() <= 64 && d.data.len() <= 64);
        }
        // Its end, then the blank line: the event is dropped, not delivered cut.
        assert!(d.push(b"\n\n").is_empty());
        assert_eq!(d.dropped(), 1);
        // Many short data lines adding up past the bound: dropped whole, the data freed.
        let mut d = Decoder::with_max_line(64);
        for _ in 0..1000 {
            assert!(d.push(b"data: 0123456789\n").is_empty());
            assert!(d.data.len() <= 64);
        }
        assert!(d.push(b"data: tail\n\n").is_empty());
        assert_eq!(d.dropped(), 1);
        // A cut line inside an event poisons only that event.
        assert!(d.push(b"data: a\ndata: 0123456789012345678901234567890123456789012345678901234567890123456789\n\n").is_empty());
        assert_eq!(data(&d.push(b"data: {}\n\n")), ["{}"]);
        assert_eq!(d.dropped(), 2);
        let mut d = Decoder::with_max_line(8);
        d.push(b"data: 0123456789");
        assert!(
            d.finish(),
            "an unfinished oversized event is reported as dropped"
        );
    }
}
