//! Line framing (`orkestrel_mcp::framing`): the same frames come out of `LineDecoder` whatever
//! the points the input is split at (an over-long line's skim included), and they are the lines
//! of the input (terminator, a final `\r` and a leading BOM removed, blank lines skipped,
//! over-long lines reported with their length, and the skim's `id` and `method` those of the
//! line when it is a JSON object); `extract_lines` agrees on text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::wire::framing::{extract_lines, Frame, LineDecoder, Overlong};
use orkestrel_mcp::wire::jsonrpc::RequestId;
use serde_json::value::RawValue;
use serde_json::Value;

/// A frame as the reference knows it: a line, or an over-long line's length.
#[derive(Debug, PartialEq)]
enum Shape {
    Line(Vec<u8>),
    TooLong(usize),
}

fn shapes(frames: &[Frame]) -> Vec<Shape> {
    frames
        .iter()
        .map(|f| match f {
            Frame::Line(l) => Shape::Line(l.clone()),
            Frame::TooLong(o) => Shape::TooLong(o.bytes),
        })
        .collect()
}

/// What the skim of `line` found agrees with the line read whole, when it is a JSON object.
fn check_skim(line: &[u8], skim: &Overlong) {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    assert_eq!(
        skim.has_method,
        map.contains_key("method"),
        "method of {line:?}"
    );
    assert_eq!(skim.has_id, map.contains_key("id"), "id of {line:?}");
    if skim.id.is_some() {
        assert_eq!(
            skim.request_id(),
            reference_id(line, &map),
            "the id of {line:?}"
        );
    }
}

/// The line's id as the crate reads a whole message's: through `Value`, except an integer past
/// 64 bits, which `Value` (without `arbitrary_precision`) holds as a float, read from its exact
/// text (ids of any length are kept exact, the skim's too).
fn reference_id(line: &[u8], map: &serde_json::Map<String, Value>) -> Option<RequestId> {
    let id = map.get("id")?;
    RequestId::from_value(id).or_else(|| {
        let raw =
            serde_json::from_slice::<std::collections::HashMap<String, &RawValue>>(line).ok()?;
        let text = raw.get("id")?.get();
        let digits = text.strip_prefix('-').unwrap_or(text);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| RequestId::from_json_text(text))
            .flatten()
    })
}

/// The frames of `input` by the definition, for lines of at most `max` bytes.
fn reference(input: &[u8], max: usize) -> Vec<Shape> {
    let mut frames = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let last = parts.pop().unwrap_or_default();
    let mut take = |line: &[u8]| {
        if line.len() > max {
            frames.push(Shape::TooLong(line.len()));
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
            frames.push(Shape::Line(line));
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
        shapes(&frames),
        expected,
        "the decoder's lines differ from the input's"
    );
    // Each over-long line's skim agrees with the line, where the line is a JSON object.
    let mut long = frames.iter().filter_map(|f| match f {
        Frame::TooLong(o) => Some(o),
        Frame::Line(_) => None,
    });
    for line in input.split(|&b| b == b'\n').filter(|l| l.len() > max) {
        if let Some(skim) = long.next() {
            check_skim(line, skim);
        }
    }
    let whole_frames = frames;

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
    assert_eq!(
        frames, whole_frames,
        "a split changed the frames (or a skim)"
    );

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
                Shape::Line(l) => String::from_utf8(l).expect("cut at a newline"),
                Shape::TooLong(_) => unreachable!(),
            })
            .collect();
        assert_eq!(lines, expected);
    }
});
