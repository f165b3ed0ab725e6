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

    use super::{to_text, JsonText};

    #[test]
    fn writes_what_display_writes() {
        let value = json!({"b": [1, 2.5, null, true], "a": "x\"y\u{1}", "c": {}});
        assert_eq!(to_text(&value), value.to_string());
        assert_eq!(JsonText(&value).to_string(), value.to_string());
    }
}
