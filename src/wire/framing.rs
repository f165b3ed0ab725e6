//! Newline-delimited JSON framing for stdio (seed `extractLines`), with no I/O.
//!
//! Bytes are buffered up to `\n` and only then handed out, so a UTF-8 character split across
//! reads survives. A trailing `\r` and a leading UTF-8 BOM are stripped; blank lines are skipped.

/// The longest line accepted by default: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its terminator, `\r` or BOM.
    Line(Vec<u8>),
    /// A line longer than the limit was discarded; its length so far, in bytes.
    TooLong(usize),
}

/// One decoded frame, borrowed: from the chunk fed to [`LineDecoder::frames`] when the line
/// lies whole in it, else from the decoder's buffer of the line's earlier parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRef<'a> {
    /// A complete line without its terminator, `\r` or BOM.
    Line(&'a [u8]),
    /// A line longer than the limit was discarded; its length so far, in bytes.
    TooLong(usize),
}

impl FrameRef<'_> {
    /// The owned frame.
    pub fn to_owned(self) -> Frame {
        match self {
            FrameRef::Line(line) => Frame::Line(line.to_vec()),
            FrameRef::TooLong(n) => Frame::TooLong(n),
        }
    }
}

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineDecoder {
    buffer: Vec<u8>,
    max: usize,
    /// Bytes of an over-long line discarded so far (we skip until its `\n`).
    skipping: Option<usize>,
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
            if let Some(skipped) = self.skipping.as_mut() {
                *skipped += part.len();
                if complete {
                    let skipped = *skipped;
                    self.skipping = None;
                    return Some(FrameRef::TooLong(skipped));
                }
                continue;
            }
            if self.buffer.len() + part.len() > self.max {
                let skipped = self.buffer.len() + part.len();
                self.buffer.clear();
                if complete {
                    return Some(FrameRef::TooLong(skipped));
                }
                self.skipping = Some(skipped);
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
        if let Some(skipped) = self.skipping.take() {
            return Some(Frame::TooLong(skipped));
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
                Frame::TooLong(n) => format!("<{n}>"),
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
