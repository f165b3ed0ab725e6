//! A JSON value's text through `serde_json::to_string`, not through its `Display`.
//!
//! Both write the same compact JSON. `Display` runs its own instantiation of the serializer (over
//! a `fmt::Formatter`, and a pretty one for `{:#}`), and its error path boxes an `io::Error` whose
//! `Debug` brings `core`'s Unicode tables along: ~13 KB of the wasm module for text the writer
//! every response goes through already produces.

use std::fmt;

use serde_json::Value;

/// `value.to_string()`: the compact JSON text of `value`.
pub(crate) fn to_text(value: &Value) -> String {
    // A `Value`'s keys are strings: serializing it cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// The value JSON text `bytes` holds, a leading UTF-8 byte order mark skipped (RFC 8259 §8.1
/// lets a parser ignore one; the crate does wherever it reads JSON).
///
/// # Errors
/// `serde_json`'s, for text that is not one JSON value.
pub(crate) fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(crate::wire::jsonrpc::without_bom(bytes))
}

/// The number JSON text `text` names (RFC 8259 §6: no sign but `-`, no leading zeros, no bare
/// `.`, no whitespace), as `serde_json` reads it; `None` for anything else or a number out of an
/// `f64`'s range (`1e400`, or an integer of over 308 digits).
///
/// The crate's numbers are read with `serde_json`'s own parser, not `str::parse::<f64>`: that
/// one is `core`'s correctly rounded `dec2flt`, ~10 KB of the wasm module (code and tables) for
/// what the JSON reader already does.
pub(crate) fn json_number(text: &str) -> Option<f64> {
    if text.is_empty() || text.trim() != text {
        return None;
    }
    serde_json::from_str::<f64>(text).ok()
}

/// `{}` of a JSON value in a message: its compact JSON text (as `Display` writes it).
pub(crate) struct JsonText<'a>(pub(crate) &'a Value);

impl fmt::Display for JsonText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_text(self.0))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{json_number, to_text, JsonText};

    #[test]
    fn json_numbers_only() {
        assert_eq!(json_number("42"), Some(42.0));
        assert_eq!(json_number("42.0"), Some(42.0));
        assert_eq!(json_number("4.2e1"), Some(42.0));
        assert_eq!(json_number("-0.5"), Some(-0.5));
        assert_eq!(json_number("1e308"), Some(1e308));
        for not in [
            "", " 42", "42 ", "+42", "042", "42.", ".5", "1e", "inf", "NaN", "0x2a", "1e400",
        ] {
            assert_eq!(json_number(not), None, "{not:?}");
        }
        assert_eq!(json_number(&"9".repeat(309)), None);
        assert!(json_number(&"9".repeat(308)).is_some());
    }

    #[test]
    fn writes_what_display_writes() {
        let value = json!({"b": [1, 2.5, null, true], "a": "x\"y\u{1}", "c": {}});
        assert_eq!(to_text(&value), value.to_string());
        assert_eq!(JsonText(&value).to_string(), value.to_string());
    }
}
