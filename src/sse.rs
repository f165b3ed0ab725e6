//! Server-Sent Events framing (WHATWG `text/event-stream`), with no I/O.

use std::fmt::Write;

/// Encode one SSE event: optional `id`, `event: message`, and the data split into `data:` lines
/// (a `\n` in `data` becomes a second `data:` line, as the format requires), then a blank line.
pub fn encode_event(id: Option<&str>, data: &str) -> String {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        let _ = writeln!(out, "id: {id}");
    }
    out.push_str("event: message\n");
    for line in data.split('\n') {
        let _ = writeln!(out, "data: {}", line.trim_end_matches('\r'));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_byte_exact() {
        assert_eq!(encode_event(None, "{}"), "event: message\ndata: {}\n\n");
        assert_eq!(
            encode_event(Some("7"), "a\nb"),
            "id: 7\nevent: message\ndata: a\ndata: b\n\n"
        );
    }
}
