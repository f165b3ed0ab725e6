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
        assert_eq!(
            encode_priming("1-0", Some(1000)),
            "id: 1-0\nretry: 1000\ndata: \n\n"
        );
        assert_eq!(encode_priming("1-0", None), "id: 1-0\ndata: \n\n");
        assert_eq!(encode_retry(5), "retry: 5\n\n");
    }
}
