//! Terminal safety: a peer's text made safe to write to a terminal.
//!
//! A server or client controls the text of tool results, error messages, names and its stderr;
//! written raw, an `ESC` (`\x1b`) or a C1 `CSI` (`\u{9b}`) in it would drive the terminal (move
//! the cursor, rewrite the title, hide output). [`escape_controls`] makes every control character
//! visible instead; [`escape_controls_json`] does the same for JSON text while keeping it valid
//! JSON (`serde_json` already escapes `U+0000`–`U+001F`, but not `DEL` or the C1 range).

use std::borrow::Cow;

/// `true` for the characters a terminal may act on: the C0 controls (`U+0000`–`U+001F`) but
/// `\n` and `\t`, `DEL` (`U+007F`), the C1 controls (`U+0080`–`U+009F`) and the Unicode
/// bidirectional controls (`U+200E`, `U+200F`, `U+202A`–`U+202E`, `U+2066`–`U+2069`), which reorder
/// what a terminal shows.
pub fn is_terminal_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_terminal_control`] character written as Rust's visible escape
/// (`\u{1b}`); text without one is borrowed as is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_with(text, |c, out| out.push_str(&c.escape_unicode().to_string()))
}

/// JSON text (as `serde_json` writes it) with every [`is_terminal_control`] character it left raw
/// written as a JSON escape (`\u007f`): still the same JSON value. Such characters only occur in
/// strings of serialized JSON, where the escape is valid.
pub fn escape_controls_json(json: &str) -> Cow<'_, str> {
    escape_with(json, |c, out| {
        out.push_str(&format!("\\u{:04x}", u32::from(c)));
    })
}

fn escape_with(text: &str, escape: impl Fn(char, &mut String)) -> Cow<'_, str> {
    if !text.chars().any(is_terminal_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_terminal_control(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_escapes() {
        assert!(matches!(escape_controls("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("\x1b[31mred\r\x07\u{9b}2J\x7f\u{202e}"),
            "\\u{1b}[31mred\\u{d}\\u{7}\\u{9b}2J\\u{7f}\\u{202e}"
        );
    }

    #[test]
    fn json_stays_the_same_value() {
        let value = serde_json::json!({"t": "\x1b[2J\u{9b}\x7f\u{2066}ok"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = escape_controls_json(&text);
        assert!(!safe.chars().any(is_terminal_control), "{safe}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
    }
}
