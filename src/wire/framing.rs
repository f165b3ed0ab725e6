//! Newline-delimited JSON framing for stdio (seed `extractLines`), with no I/O.
//!
//! Bytes are buffered up to `\n` and only then handed out, so a UTF-8 character split across
//! reads survives. A trailing `\r` and a leading UTF-8 BOM are stripped; blank lines are skipped.
//!
//! A line over the limit is not kept: its bytes are skimmed as they pass (constant memory) for
//! the top-level `id` and `method`, so the message still gets its one answer ([`Overlong`],
//! [`Overlong::verdict`]): a request its error, a response's pending request its failure.

use crate::wire::jsonrpc::{ErrorObject, JsonRpcResponse, RequestId};

/// The longest line accepted by default: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its terminator, `\r` or BOM.
    Line(Vec<u8>),
    /// A line longer than the limit was discarded unread: what the skim of it learned.
    TooLong(Overlong),
}

/// One decoded frame, borrowed: from the chunk fed to [`LineDecoder::frames`] when the line
/// lies whole in it, else from the decoder's buffer of the line's earlier parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRef<'a> {
    /// A complete line without its terminator, `\r` or BOM.
    Line(&'a [u8]),
    /// A line longer than the limit was discarded unread: what the skim of it learned.
    TooLong(&'a Overlong),
}

impl FrameRef<'_> {
    /// The owned frame.
    pub fn to_owned(self) -> Frame {
        match self {
            FrameRef::Line(line) => Frame::Line(line.to_vec()),
            FrameRef::TooLong(line) => Frame::TooLong(line.clone()),
        }
    }
}

impl Frame {
    /// The borrowed frame.
    pub fn as_ref(&self) -> FrameRef<'_> {
        match self {
            Frame::Line(line) => FrameRef::Line(line),
            Frame::TooLong(line) => FrameRef::TooLong(line),
        }
    }
}

/// What a [`LineDecoder`] learned about a line over its limit, which it discarded unread: the
/// line's length and, from a skim of its bytes as they passed, the raw text of the top-level
/// object's `id` member (the last one, at most [`MAX_SKIMMED_ID_BYTES`]) and whether it has a
/// `method` member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overlong {
    /// The line's length in bytes (without its terminator).
    pub bytes: usize,
    /// The raw JSON text of the top-level `id` member, when one no longer than
    /// [`MAX_SKIMMED_ID_BYTES`] was seen (`"a"`, `7`, `null`…).
    pub id: Option<String>,
    /// The top-level object has an `id` member (readable or not).
    pub has_id: bool,
    /// The top-level object has a `method` member: a request or a notification.
    pub has_method: bool,
}

/// The longest raw `id` text an [`Overlong`] keeps: 1 KiB.
pub const MAX_SKIMMED_ID_BYTES: usize = 1024;

/// What an over-long line deserves ([`Overlong::verdict`]).
#[derive(Clone, Debug, PartialEq)]
pub enum OverlongVerdict {
    /// A request, or a message whose kind or id could not be read: answer it with this `-32600`
    /// error (id `null` when unreadable).
    Answer(JsonRpcResponse),
    /// A response with a readable id: this error response stands in for it, so the request it
    /// answers fails at once instead of waiting for its deadline.
    StandIn(JsonRpcResponse),
    /// A notification (`method`, no `id`): JSON-RPC never answers one; report it only.
    Skip,
}

impl Overlong {
    /// The message's id, when the skim read a valid one.
    pub fn request_id(&self) -> Option<RequestId> {
        RequestId::from_json_text(self.id.as_deref()?)
    }

    /// What the line deserves, given the limit it broke
    /// ([JSON-RPC 2.0 §5](https://www.jsonrpc.org/specification#response_object): one answer per
    /// request, the id `null` only when it could not be read; none for a notification).
    pub fn verdict(&self, limit: usize) -> OverlongVerdict {
        let detail = format!(
            "the message ({} bytes) is over the {limit}-byte limit; it was discarded unread",
            self.bytes
        );
        match (self.has_method, self.has_id, self.request_id()) {
            (true, false, _) => OverlongVerdict::Skip,
            (false, true, Some(id)) => OverlongVerdict::StandIn(JsonRpcResponse::error(
                Some(id),
                ErrorObject::parse_error(detail),
            )),
            (_, _, id) => OverlongVerdict::Answer(JsonRpcResponse::error(
                id,
                ErrorObject::invalid_request(detail),
            )),
        }
    }
}

/// The longest member name the skim reads (with its closing quote): `id` or `method` written
/// with every character escaped (`\u0069\u0064`) fits.
const MAX_NAME: usize = 48;

/// The members the skim looks for.
enum Member {
    Id,
    Method,
}

/// Which member `raw` (a name's bytes as written, with its closing quote) names, read as JSON
/// reads it (escapes decoded: `"\u0069d"` is `id`).
fn member_name(raw: &[u8]) -> Option<Member> {
    let raw = raw.strip_suffix(b"\"")?;
    let name = if raw.contains(&b'\\') {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        std::borrow::Cow::Owned(serde_json::from_slice::<String>(&quoted).ok()?.into_bytes())
    } else {
        std::borrow::Cow::Borrowed(raw)
    };
    match &name[..] {
        b"id" => Some(Member::Id),
        b"method" => Some(Member::Method),
        _ => None,
    }
}

/// Where the skim is inside the top-level object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Slot {
    /// Before the first byte of the line.
    #[default]
    Start,
    /// Expecting a member's name (or the object's end).
    Name,
    /// After a name, expecting `:`.
    Colon,
    /// Expecting a member's value.
    Value,
    /// Inside or after a value, expecting `,` or the object's end.
    Next,
    /// The top-level value is not an object, or has ended: nothing more to learn.
    Done,
}

/// A constant-memory skim of an over-long line's bytes for its top-level `id` and `method`
/// (lenient: it tracks strings and nesting only, and never fails).
#[derive(Debug, Default)]
struct Skim {
    found: Overlong,
    slot: Slot,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The current member's name as written, while it is short enough to be `id` or `method`.
    name: Vec<u8>,
    /// The current member is `id`.
    at_id: bool,
    /// The raw text of the `id` value being read.
    value: Option<Vec<u8>>,
}

impl Skim {
    fn feed(&mut self, bytes: &[u8]) {
        self.found.bytes += bytes.len();
        for &b in bytes {
            if self.slot == Slot::Done {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.depth == 1 && self.slot == Slot::Name && self.name.len() <= MAX_NAME {
                self.name.push(b);
            }
            self.keep(b);
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 && self.slot == Slot::Name {
                    self.slot = Slot::Colon;
                    match member_name(&self.name) {
                        Some(Member::Id) => {
                            self.at_id = true;
                            self.found.has_id = true;
                        }
                        Some(Member::Method) => self.found.has_method = true,
                        None => {}
                    }
                } else if self.depth == 1 {
                    self.end_value();
                }
            }
            return;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {
                if self.depth == 1 {
                    self.end_value();
                }
            }
            // A leading byte order mark.
            0xEF | 0xBB | 0xBF if self.slot == Slot::Start => {}
            b'{' if self.slot == Slot::Start => {
                self.depth = 1;
                self.slot = Slot::Name;
            }
            _ if self.slot == Slot::Start => self.slot = Slot::Done,
            b'"' => {
                self.in_string = true;
                if self.depth == 1 {
                    match self.slot {
                        Slot::Name => self.name.clear(),
                        Slot::Value => self.begin_value(b),
                        _ => {}
                    }
                } else {
                    self.keep(b);
                }
            }
            b'{' | b'[' => {
                if self.depth == 1 && self.slot == Slot::Value {
                    self.begin_value(b);
                    // An object or array id is no id: forget any earlier one.
                    if self.at_id {
                        self.found.id = None;
                        self.value = None;
                    }
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                    self.slot = Slot::Done;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.slot == Slot::Colon => self.slot = Slot::Value,
            b',' if self.depth == 1 => {
                self.end_value();
                self.slot = Slot::Name;
                self.at_id = false;
            }
            _ if self.depth == 1 && self.slot == Slot::Value => self.begin_value(b),
            _ => self.keep(b),
        }
    }

    /// A top-level member's value starts with `b`.
    fn begin_value(&mut self, b: u8) {
        self.slot = Slot::Next;
        if self.at_id {
            self.value = Some(vec![b]);
        }
    }

    /// Keep `b` as part of the `id` value being read (dropped once it is too long).
    fn keep(&mut self, b: u8) {
        if let Some(value) = self.value.as_mut() {
            if value.len() < MAX_SKIMMED_ID_BYTES {
                value.push(b);
            } else {
                self.value = None;
                self.found.id = None;
                self.at_id = false;
            }
        }
    }

    /// A top-level value ended: an `id` read whole is the message's id (the last one counts).
    fn end_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.found.id = String::from_utf8(value).ok();
            self.at_id = false;
        }
    }

    fn finish(&mut self) -> Overlong {
        self.end_value();
        std::mem::take(self).found
    }
}

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineDecoder {
    buffer: Vec<u8>,
    max: usize,
    /// The skim of an over-long line being discarded (we skip until its `\n`).
    skipping: Option<Skim>,
    /// The last over-long line handed out ([`FrameRef::TooLong`] borrows it).
    overlong: Overlong,
    /// The buffer holds a line already handed out: cleared before the next part is taken.
    handed_out: bool,
}

impl Default for LineDecoder {
    fn default() -> Self {
        LineDecoder::new(DEFAULT_MAX_LINE_BYTES)
    }
}

/// The buffer a decoder keeps between lines at most; a longer line's buffer is let go once it
/// was handed out, so one huge line does not hold its memory for the life of the stream.
const KEPT_BUFFER_BYTES: usize = 64 * 1024;

impl LineDecoder {
    /// A decoder accepting lines of at most `max_line_bytes` bytes.
    pub fn new(max_line_bytes: usize) -> Self {
        LineDecoder {
            buffer: Vec::new(),
            max: max_line_bytes,
            skipping: None,
            overlong: Overlong::default(),
            handed_out: false,
        }
    }

    /// Feed one chunk; returns every frame it completed, in order.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(frame) = self.frames(&mut chunk) {
            frames.push(frame.to_owned());
        }
        frames
    }

    /// The next frame completed by `chunk`, taking from the front of `chunk` what it used;
    /// `None` once `chunk` is used up (its unterminated tail, if any, is kept for the next
    /// chunk). Call it until `None` for each chunk read:
    ///
    /// ```
    /// # use orkestrel_mcp::wire::framing::{FrameRef, LineDecoder};
    /// let mut decoder = LineDecoder::default();
    /// let mut lines = Vec::new();
    /// for read in [&b"{\"a\":1}\n{\"b\""[..], &b":2}\n"[..]] {
    ///     let mut chunk = read;
    ///     while let Some(frame) = decoder.frames(&mut chunk) {
    ///         if let FrameRef::Line(line) = frame {
    ///             lines.push(line.to_vec());
    ///         }
    ///     }
    /// }
    /// assert_eq!(lines, [&b"{\"a\":1}"[..], &b"{\"b\":2}"[..]]);
    /// ```
    ///
    /// A line that lies whole in `chunk` is handed out as a slice of it (no copy); only a line
    /// split across chunks is gathered in the decoder's buffer.
    pub fn frames<'s, 'c: 's>(&'s mut self, chunk: &mut &'c [u8]) -> Option<FrameRef<'s>> {
        if self.handed_out {
            self.handed_out = false;
            self.buffer.clear();
            if self.buffer.capacity() > KEPT_BUFFER_BYTES {
                self.buffer = Vec::new();
            }
        }
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let (part, rest, complete) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (*chunk, &chunk[chunk.len()..], false),
            };
            *chunk = rest;
            if let Some(skim) = self.skipping.as_mut() {
                skim.feed(part);
                if complete {
                    self.overlong = skim.finish();
                    self.skipping = None;
                    return Some(FrameRef::TooLong(&self.overlong));
                }
                continue;
            }
            if self.buffer.len() + part.len() > self.max {
                let mut skim = Skim::default();
                skim.feed(&self.buffer);
                skim.feed(part);
                self.buffer.clear();
                if complete {
                    self.overlong = skim.finish();
                    return Some(FrameRef::TooLong(&self.overlong));
                }
                self.skipping = Some(skim);
                continue;
            }
            if !complete {
                self.buffer.extend_from_slice(part);
                continue;
            }
            if self.buffer.is_empty() {
                if let Some((start, end)) = clean(part) {
                    return Some(FrameRef::Line(&part[start..end]));
                }
                continue;
            }
            self.buffer.extend_from_slice(part);
            match clean(&self.buffer) {
                Some((start, end)) => {
                    // Cleared at the next call, once the caller is done with the line.
                    self.handed_out = true;
                    return Some(FrameRef::Line(&self.buffer[start..end]));
                }
                None => self.buffer.clear(),
            }
        }
        None
    }

    /// End of input: the unterminated last line, if any.
    pub fn finish(&mut self) -> Option<Frame> {
        if let Some(mut skim) = self.skipping.take() {
            return Some(Frame::TooLong(skim.finish()));
        }
        if self.handed_out {
            self.handed_out = false;
            self.buffer.clear();
        }
        let line = std::mem::take(&mut self.buffer);
        clean(&line).map(|(start, end)| Frame::Line(line[start..end].to_vec()))
    }
}

/// Where the message in `line` lies (without a trailing `\r` and a leading BOM), or `None`
/// for a blank line.
fn clean(line: &[u8]) -> Option<(usize, usize)> {
    let end = match line {
        [.., b'\r'] => line.len() - 1,
        _ => line.len(),
    };
    let start = if line[..end].starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    // Blank is JSON's whitespace only (RFC 8259 §2): a line of form feeds is text that is not
    // JSON, answered as such.
    if line[start..end]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return None;
    }
    Some((start, end))
}

/// Split `buffer + chunk` into complete lines and the trailing remainder (seed `extractLines`).
pub fn extract_lines(buffer: &str, chunk: &str) -> (Vec<String>, String) {
    let joined = format!("{buffer}{chunk}");
    let mut lines: Vec<String> = joined.split('\n').map(str::to_owned).collect();
    let remainder = lines.pop().unwrap_or_default();
    let lines = lines
        .into_iter()
        .filter_map(|l| {
            clean(l.as_bytes())
                .map(|(s, e)| String::from_utf8_lossy(&l.as_bytes()[s..e]).into_owned())
        })
        .collect();
    (lines, remainder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(frames: Vec<Frame>) -> Vec<String> {
        frames
            .into_iter()
            .map(|f| match f {
                Frame::Line(l) => String::from_utf8(l).unwrap(),
                Frame::TooLong(line) => format!("<{}>", line.bytes),
            })
            .collect()
    }

    #[test]
    fn split_utf8_survives_and_crlf_bom_blank_are_handled() {
        let mut d = LineDecoder::default();
        let text = "\u{feff}{\"a\":\"é\"}\r\n\n  \r\n{}\n".as_bytes();
        let mut out = Vec::new();
        for b in text {
            out.extend(d.push(std::slice::from_ref(b)));
        }
        assert_eq!(lines(out), vec!["{\"a\":\"é\"}", "{}"]);
        assert_eq!(d.finish(), None);
        // A form feed is not JSON whitespace: its line is not blank.
        assert_eq!(lines(d.push(b"\x0c\n \t\n")), vec!["\u{c}"]);
    }

    #[test]
    fn over_long_lines_are_reported_and_skipped() {
        let mut d = LineDecoder::new(4);
        assert_eq!(lines(d.push(b"123456")), Vec::<String>::new());
        assert_eq!(lines(d.push(b"78\nok\n")), vec!["<8>", "ok"]);
        assert_eq!(lines(d.push(b"abcdefgh\nxy")), vec!["<8>"]);
        assert_eq!(d.finish(), Some(Frame::Line(b"xy".to_vec())));
    }

    /// What the decoder's skim learns of `line` (over a 4-byte limit), fed in `step`-byte reads.
    fn skim(line: &str, step: usize) -> Overlong {
        let mut d = LineDecoder::new(4);
        let text = format!("{line}\n");
        let mut frames = Vec::new();
        for chunk in text.as_bytes().chunks(step) {
            frames.extend(d.push(chunk));
        }
        match &frames[..] {
            [Frame::TooLong(line)] => line.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_over_long_line_is_skimmed_for_its_top_level_id_and_method() {
        let cases: &[(&str, Option<&str>, bool, bool)] = &[
            // The id after a long params (TS SDK order), nested ids and names ignored.
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"id":1,"x":["id",{"method":2}]},"id":"a\"b}"}"#,
                Some(r#""a\"b}""#),
                true,
                true,
            ),
            (
                r#"{ "id" : 42 , "result" : {"text":"}}}\\"} }"#,
                Some("42"),
                true,
                false,
            ),
            ("\u{feff}{\"id\":-7,\"error\":{}}", Some("-7"), true, false),
            // The last id counts, as serde_json keeps; an object id is none.
            (r#"{"id":1,"method":"m","id":2}"#, Some("2"), true, true),
            (r#"{"id":1,"method":"m","id":{"a":1}}"#, None, true, true),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"id":3}}"#,
                None,
                false,
                true,
            ),
            (r#"[{"id":1,"method":"m"}]"#, None, false, false),
            (r#"{"id":null,"method":"m"}"#, Some("null"), true, true),
            (r#"{"methodx":1,"idx":2}"#, None, false, false),
            // Names are read as JSON reads them: escapes decoded.
            (r#"{"\u0069d":5,"\u006dethod":"m"}"#, Some("5"), true, true),
            (r#"{"i\"d":5}"#, None, false, false),
        ];
        for &(line, id, has_id, has_method) in cases {
            for step in [1, 3, line.len() + 1] {
                let found = skim(line, step);
                assert_eq!(found.bytes, line.len(), "{line}");
                assert_eq!(found.id.as_deref(), id, "{line} by {step}");
                assert_eq!(
                    (found.has_id, found.has_method),
                    (has_id, has_method),
                    "{line}"
                );
            }
        }
        // An id over the kept length is unreadable, not cut short.
        let long = format!(
            r#"{{"method":"m","id":"{}"}}"#,
            "z".repeat(MAX_SKIMMED_ID_BYTES)
        );
        let found = skim(&long, 64);
        assert_eq!((found.id, found.has_id), (None, true));
        // A line cut short at the end of input is skimmed too.
        let mut d = LineDecoder::new(4);
        d.push(br#"{"id":9,"method":"m","params":{"#);
        assert!(matches!(d.finish(), Some(Frame::TooLong(o)) if o.id.as_deref() == Some("9")));
    }

    #[test]
    fn an_over_long_line_gets_the_answer_its_kind_deserves() {
        let answer = |line: &str| skim(line, 7).verdict(4);
        let OverlongVerdict::Answer(request) = answer(r#"{"method":"m","id":"r"}"#) else {
            panic!("a request is answered");
        };
        assert_eq!(request.id, Some(RequestId::String("r".into())));
        assert!(request
            .payload
            .unwrap_err()
            .message
            .contains("over the 4-byte limit"));
        let OverlongVerdict::StandIn(response) =
            answer(r#"{"result":{},"id":12345678901234567890123}"#)
        else {
            panic!("a response stands in");
        };
        assert_eq!(
            response.id,
            RequestId::from_integer_text("12345678901234567890123")
        );
        assert_eq!(
            answer(r#"{"method":"n","params":{}}"#),
            OverlongVerdict::Skip
        );
        let OverlongVerdict::Answer(unknown) = answer(r#"{"result":{},"id":true}"#) else {
            panic!("an unreadable id gets null");
        };
        assert_eq!(unknown.id, None);
    }

    #[test]
    fn frames_borrow_whole_lines_from_the_chunk_and_gather_split_ones() {
        let mut d = LineDecoder::default();
        let read = b"{\"a\":1}\r\n{\"b\"";
        let mut chunk = &read[..];
        let first = d.frames(&mut chunk);
        assert_eq!(first, Some(FrameRef::Line(b"{\"a\":1}")));
        if let Some(FrameRef::Line(line)) = first {
            assert!(std::ptr::eq(line.as_ptr(), read.as_ptr()), "not copied");
        }
        assert_eq!(d.frames(&mut chunk), None);
        assert!(chunk.is_empty());
        // A line split across reads, then a blank line gathered the same way, then one more.
        let mut chunk = &b":2}\n \r"[..];
        assert_eq!(d.frames(&mut chunk), Some(FrameRef::Line(b"{\"b\":2}")));
        assert_eq!(d.frames(&mut chunk), None);
        let mut chunk = &b"\n{}\n"[..];
        assert_eq!(d.frames(&mut chunk), Some(FrameRef::Line(b"{}")));
        assert_eq!(d.frames(&mut chunk), None);
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn extract_lines_keeps_remainder() {
        let (l, r) = extract_lines(
            "",
            "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n{\"jsonrpc\"",
        );
        assert_eq!(l, vec!["{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"]);
        assert_eq!(r, "{\"jsonrpc\"");
    }
}
