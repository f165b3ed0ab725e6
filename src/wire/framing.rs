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

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineDecoder {
    buffer: Vec<u8>,
    max: usize,
    /// Bytes of an over-long line discarded so far (we skip until its `\n`).
    skipping: Option<usize>,
}

impl Default for LineDecoder {
    fn default() -> Self {
        LineDecoder::new(DEFAULT_MAX_LINE_BYTES)
    }
}

impl LineDecoder {
    /// A decoder accepting lines of at most `max_line_bytes` bytes.
    pub fn new(max_line_bytes: usize) -> Self {
        LineDecoder {
            buffer: Vec::new(),
            max: max_line_bytes,
            skipping: None,
        }
    }

    /// Feed one chunk; returns every frame it completed, in order.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (part, rest, complete) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &chunk[chunk.len()..], false),
            };
            chunk = rest;
            if let Some(skipped) = self.skipping.as_mut() {
                *skipped += part.len();
                if complete {
                    frames.push(Frame::TooLong(*skipped));
                    self.skipping = None;
                }
                continue;
            }
            if self.buffer.len() + part.len() > self.max {
                self.skipping = Some(self.buffer.len() + part.len());
                self.buffer.clear();
                if complete {
                    frames.push(Frame::TooLong(self.skipping.take().unwrap_or_default()));
                }
                continue;
            }
            self.buffer.extend_from_slice(part);
            if complete {
                let line = std::mem::take(&mut self.buffer);
                if let Some(line) = clean(line) {
                    frames.push(Frame::Line(line));
                }
            }
        }
        frames
    }

    /// End of input: the unterminated last line, if any.
    pub fn finish(&mut self) -> Option<Frame> {
        if let Some(skipped) = self.skipping.take() {
            return Some(Frame::TooLong(skipped));
        }
        clean(std::mem::take(&mut self.buffer)).map(Frame::Line)
    }
}

fn clean(mut line: Vec<u8>) -> Option<Vec<u8>> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.starts_with(&[0xEF, 0xBB, 0xBF]) {
        line.drain(..3);
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(line)
}

/// Split `buffer + chunk` into complete lines and the trailing remainder (seed `extractLines`).
pub fn extract_lines(buffer: &str, chunk: &str) -> (Vec<String>, String) {
    let joined = format!("{buffer}{chunk}");
    let mut lines: Vec<String> = joined.split('\n').map(str::to_owned).collect();
    let remainder = lines.pop().unwrap_or_default();
    let lines = lines
        .into_iter()
        .filter_map(|l| clean(l.into_bytes()).map(|b| String::from_utf8_lossy(&b).into_owned()))
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
    fn extract_lines_keeps_remainder() {
        let (l, r) = extract_lines(
            "",
            "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n{\"jsonrpc\"",
        );
        assert_eq!(l, vec!["{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"]);
        assert_eq!(r, "{\"jsonrpc\"");
    }
}
