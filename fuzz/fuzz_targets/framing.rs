//! Line framing (`orkestrel_mcp::framing`): the same lines come out of `LineDecoder` whatever
//! the points the input is split at, and they are the lines of the input (terminator, a final
//! `\r` and a leading BOM removed, blank lines skipped, over-long lines reported with their
//! length); `extract_lines` agrees on text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::wire::framing::{extract_lines, Frame, LineDecoder};

/// The frames of `input` by the definition, for lines of at most `max` bytes.
fn reference(input: &[u8], max: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let last = parts.pop().unwrap_or_default();
    let mut take = |line: &[u8]| {
        if line.len() > max {
            frames.push(Frame::TooLong(line.len()));
            return;
        }
        let mut line = line.to_vec();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.starts_with(&[0xEF, 0xBB, 0xBF]) {
            line.drain(..3);
        }
        // Blank is JSON's whitespace only (RFC 8259 §2).
        if !line
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            frames.push(Frame::Line(line));
        }
    };
    for part in parts {
        take(part);
    }
    if !last.is_empty() {
        take(last);
    }
    frames
}

fuzz_target!(|data: &[u8]| {
    // Byte 0: the line limit; byte 1: the cut sizes; the rest is the stream.
    let (head, input) = data.split_at(data.len().min(2));
    let max = match head.first() {
        Some(&n) if n < 200 => usize::from(n),
        _ => usize::MAX,
    };
    let seed = usize::from(head.get(1).copied().unwrap_or(0));
    let expected = reference(input, max);

    let mut whole = LineDecoder::new(max);
    let mut frames = whole.push(input);
    frames.extend(whole.finish());
    assert_eq!(
        frames, expected,
        "the decoder's lines differ from the input's"
    );

    let mut split = LineDecoder::new(max);
    let mut frames = Vec::new();
    let mut rest = input;
    let mut k = seed;
    while !rest.is_empty() {
        let cut = (k % 7 + 1).min(rest.len());
        k = k.wrapping_mul(31).wrapping_add(17);
        let (chunk, tail) = rest.split_at(cut);
        frames.extend(split.push(chunk));
        rest = tail;
    }
    frames.extend(split.finish());
    assert_eq!(frames, expected, "a split changed the lines");

    if let Ok(text) = std::str::from_utf8(input) {
        let cut = (seed % (text.len() + 1)..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        let (lines, remainder) = extract_lines(&text[..cut], &text[cut..]);
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        assert_eq!(remainder, &text[complete..]);
        let expected: Vec<String> = reference(&input[..complete], usize::MAX)
            .into_iter()
            .map(|f| match f {
                Frame::Line(l) => String::from_utf8(l).expect("cut at a newline"),
                Frame::TooLong(_) => unreachable!(),
            })
            .collect();
        assert_eq!(lines, expected);
    }
});
