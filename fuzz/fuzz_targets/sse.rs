//! The SSE decoder (`orkestrel_mcp::sse`): any bytes, split at any points, decode to the same
//! events as the whole body at once, with no panic; and `decode(encode_event(id, data))` is one
//! event of type `message` that gives back `data` with each line end (`\r\n`, `\r`, `\n`) as
//! `\n` (SSE cannot carry a `\r`), and `id` when it holds no line end or NUL (an id holding a
//! line end is left out, so the stream's last event id stays unset).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::wire::sse::{decode_all, encode_event, Decoder};

fuzz_target!(|data: &[u8]| {
    // The first two bytes choose the split points and the line limit; the rest is the body.
    let (head, body) = data.split_at(data.len().min(2));
    let step = usize::from(head.first().copied().unwrap_or(1)).max(1);
    let max_line = match head.get(1) {
        Some(&n) if n < 128 => usize::from(n) + 1,
        _ => usize::MAX,
    };
    let whole = {
        let mut d = Decoder::with_max_line(max_line);
        let events = d.push(body);
        d.finish();
        events
    };
    let mut d = Decoder::with_max_line(max_line);
    let mut pieces = Vec::new();
    let mut rest = body;
    let mut n = 0usize;
    while !rest.is_empty() {
        // Vary the cut: 1, step, 2, step+1, ...
        let cut = (if n.is_multiple_of(2) {
            1 + n / 2
        } else {
            step + n / 2
        })
        .min(rest.len());
        let (chunk, tail) = rest.split_at(cut);
        pieces.extend(d.push(chunk));
        rest = tail;
        n += 1;
    }
    d.finish();
    assert_eq!(pieces, whole, "a split changed the events");
    if max_line == usize::MAX {
        assert_eq!(decode_all(body), whole);
    }

    // Round trip of the encoder.
    let text = String::from_utf8_lossy(body);
    let (id, payload) = match text.split_once('\u{1}') {
        Some((id, payload)) => (Some(id), payload),
        None => (None, text.as_ref()),
    };
    let events = decode_all(encode_event(id, payload).as_bytes());
    assert_eq!(
        events.len(),
        1,
        "one event encoded, {} decoded",
        events.len()
    );
    assert_eq!(
        events[0].data,
        payload.replace("\r\n", "\n").replace('\r', "\n")
    );
    assert_eq!(events[0].event, "message");
    let id = id.filter(|id| !id.contains(['\r', '\n', '\0']));
    assert_eq!(events[0].id.as_deref(), id);
});
