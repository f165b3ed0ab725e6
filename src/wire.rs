//! Wire codecs, with no I/O: the bytes and messages every transport carries.
//!
//! - [`jsonrpc`]: JSON-RPC 2.0 ids, messages, error codes and the classifying parser
//!   (<https://www.jsonrpc.org/specification>).
//! - [`framing`]: newline-delimited JSON for stdio
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio>).
//! - [`sse`]: Server-Sent Events, the encoder and a streaming decoder
//!   (<https://html.spec.whatwg.org/multipage/server-sent-events.html>).

pub mod framing;
pub(crate) mod json_text;
pub mod jsonrpc;
pub(crate) mod percent;
pub mod sse;
pub(crate) mod url;

/// `text` cut to at most `max_bytes` (on a character boundary), followed by `… (N more bytes)`
/// when anything was cut: for a peer's text shown in a log line or a message, which a peer could
/// make megabytes long.
pub fn cut_text(text: &str, max_bytes: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max_bytes {
        return text.into();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end).into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn cut_text_keeps_short_text_and_cuts_long_text_on_a_character_boundary() {
        assert_eq!(super::cut_text("short", 10), "short");
        assert_eq!(super::cut_text("aé", 2), "a… (2 more bytes)");
        assert_eq!(super::cut_text("abcdef", 3), "abc… (3 more bytes)");
    }
}
