//! The slow path of the parser: a single pass over message text that `serde_json` refused, or
//! whose `id` it could not hold exactly.
//!
//! `serde_json` (without `arbitrary_precision`) refuses valid JSON (RFC 8259) in three cases —
//! nesting deeper than [`MAX_DEPTH`], a number beyond the range of an `f64`, and a string with a
//! lone UTF-16 surrogate escape — and reads an integer beyond `u64` as a rounded `f64`. This
//! scanner checks the RFC 8259 grammar without recursion (so it has no depth limit of its own),
//! names the first limit the text exceeds with its line and column, and keeps the raw text of
//! the top-level `id` member and whether `method` is present, so the message still gets the
//! answer it deserves (see [`super`]). It runs only after `serde_json` failed, or for an `id`
//! that parsed as a fraction: a small valid request never pays for it.

use std::fmt;

/// The deepest nesting of arrays and objects `serde_json` reads (its recursion limit): the
/// top-level object counts as 1; a container at depth 128 is refused.
pub const MAX_DEPTH: usize = 127;

/// A limit of the JSON parser that valid JSON text exceeded, with where (1-based line and
/// column, in bytes, as `serde_json` counts them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Limit {
    what: LimitKind,
    line: usize,
    column: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum LimitKind {
    Depth,
    Number(String),
    Surrogate(String),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column) = (self.line, self.column);
        match &self.what {
            LimitKind::Depth => write!(
                f,
                "arrays and objects nest deeper than {MAX_DEPTH} levels at line {line} column {column}"
            ),
            LimitKind::Number(n) => write!(
                f,
                "the number {n} at line {line} column {column} is beyond the range of a 64-bit float"
            ),
            LimitKind::Surrogate(escape) => write!(
                f,
                "lone UTF-16 surrogate escape {escape} at line {line} column {column} (a string \
                 must be valid Unicode: \\uD800-\\uDBFF must be followed by \\uDC00-\\uDFFF, and \
                 \\uDC00-\\uDFFF must follow \\uD800-\\uDBFF)"
            ),
        }
    }
}

/// What the scanner learned about valid JSON text.
#[derive(Debug, Default)]
pub(super) struct Outline<'a> {
    /// The top-level value is an object.
    pub object: bool,
    /// The raw text of the top-level object's `id` member (the last one, as `serde_json` keeps).
    pub id: Option<&'a str>,
    /// The top-level object has a `method` member.
    pub has_method: bool,
    /// The top-level value is an array (a JSON-RPC batch).
    pub array: bool,
    /// The first parser limit the text exceeds, if any.
    pub limit: Option<Limit>,
}

#[derive(Clone, Copy, PartialEq)]
enum Container {
    Array,
    Object,
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    outline: Outline<'a>,
    /// The top-level array's elements, when asked for ([`elements`]).
    elements: Option<Elements<'a>>,
}

/// The elements of a top-level array, as their raw text (a JSON-RPC batch, split).
#[derive(Debug, Default)]
pub(super) struct Elements<'a> {
    /// The text of the first `keep` elements, in order.
    pub texts: Vec<&'a str>,
    /// How many elements the array has (all of them, kept or not).
    pub count: usize,
    /// The most elements kept.
    keep: usize,
}

/// Scan `text`: `None` when it is not JSON (a syntax error), else its [`Outline`].
pub(super) fn outline(text: &str) -> Option<Outline<'_>> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
        outline: Outline::default(),
        elements: None,
    };
    s.document()?;
    Some(s.outline)
}

/// Scan `text` and split its top-level array: `None` when it is not JSON, else its [`Outline`]
/// and, when the top-level value is an array, its elements (the text of at most `keep` of them,
/// and their count). Each element's text is valid JSON of its own, whatever limit of the parser
/// it exceeds (nesting, number range, lone surrogates): this scanner has none.
pub(super) fn elements(text: &str, keep: usize) -> Option<(Outline<'_>, Elements<'_>)> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
        outline: Outline::default(),
        elements: Some(Elements {
            keep,
            ..Elements::default()
        }),
    };
    s.document()?;
    Some((s.outline, s.elements.unwrap_or_default()))
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn limit(&mut self, at: usize, what: LimitKind) {
        if self.outline.limit.is_some() {
            return;
        }
        let before = &self.bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        self.outline.limit = Some(Limit { what, line, column });
    }

    /// The whole text: one value between optional whitespace.
    fn document(&mut self) -> Option<()> {
        let mut stack: Vec<Container> = Vec::new();
        // The key just read in the top-level object was `id`.
        let mut top_key_is_id = false;
        // Where the top-level `id` member's value starts, until it ends.
        let mut id_start: Option<usize> = None;
        // Where the top-level array's current element starts, until it ends (when splitting).
        let mut element_start: Option<usize> = None;
        self.skip_ws();
        loop {
            // A value starts here.
            if std::mem::take(&mut top_key_is_id) {
                id_start = Some(self.at);
            }
            if self.outline.array && stack.len() == 1 && self.elements.is_some() {
                element_start = Some(self.at);
            }
            let start = self.at;
            let mut opened = false;
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    self.at += 1;
                    stack.push(if open == b'{' {
                        Container::Object
                    } else {
                        Container::Array
                    });
                    if stack.len() == 1 {
                        self.outline.object = open == b'{';
                        self.outline.array = open == b'[';
                    }
                    if stack.len() > MAX_DEPTH {
                        self.limit(start, LimitKind::Depth);
                    }
                    self.skip_ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.at += 1;
                        stack.pop();
                    } else if open == b'{' {
                        top_key_is_id = self.key(stack.len())?;
                        opened = true;
                    } else {
                        opened = true;
                    }
                }
                b'"' => self.string()?,
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal("true")?,
                b'f' => self.literal("false")?,
                b'n' => self.literal("null")?,
                _ => return None,
            }
            if opened {
                continue;
            }
            // A value ended here; close containers until one continues with `,`.
            loop {
                if stack.len() == 1 {
                    if let Some(s) = id_start.take() {
                        self.outline.id = Some(&self.text[s..self.at]);
                    }
                    if let (Some(s), Some(elements)) = (element_start.take(), &mut self.elements) {
                        elements.count += 1;
                        if elements.texts.len() < elements.keep {
                            elements.texts.push(&self.text[s..self.at]);
                        }
                    }
                }
                self.skip_ws();
                let Some(&top) = stack.last() else {
                    return (self.at == self.bytes.len()).then_some(());
                };
                match (self.peek()?, top) {
                    (b',', Container::Array) => {
                        self.at += 1;
                        self.skip_ws();
                        break;
                    }
                    (b',', Container::Object) => {
                        self.at += 1;
                        self.skip_ws();
                        top_key_is_id = self.key(stack.len())?;
                        break;
                    }
                    (b']', Container::Array) | (b'}', Container::Object) => {
                        self.at += 1;
                        stack.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// An object member's key and its `:`; `true` when it is the top-level `id`.
    fn key(&mut self, depth: usize) -> Option<bool> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at;
        self.string()?;
        let raw = &self.text[start..self.at];
        self.skip_ws();
        if self.peek()? != b':' {
            return None;
        }
        self.at += 1;
        self.skip_ws();
        if depth != 1 {
            return Some(false);
        }
        let name = if raw.contains('\\') {
            serde_json::from_str::<String>(raw).ok()
        } else {
            Some(raw[1..raw.len() - 1].to_owned())
        };
        match name.as_deref() {
            Some("id") => Some(true),
            Some("method") => {
                self.outline.has_method = true;
                Some(false)
            }
            _ => Some(false),
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.text.get(self.at..self.at + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u16::from_str_radix(digits, 16).ok()
    }

    /// A string, from its opening quote to just past its closing quote.
    fn string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => {
                    let escape = self.at;
                    self.at += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 1,
                        b'u' => {
                            self.at += 1;
                            let unit = self.hex4()?;
                            let lone = match unit {
                                0xD800..=0xDBFF => {
                                    let paired = self.bytes.get(self.at..self.at + 2)
                                        == Some(b"\\u")
                                        && self
                                            .text
                                            .get(self.at + 2..self.at + 6)
                                            .and_then(|d| u16::from_str_radix(d, 16).ok())
                                            .is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
                                    if paired {
                                        self.at += 6;
                                    }
                                    !paired
                                }
                                0xDC00..=0xDFFF => true,
                                _ => false,
                            };
                            if lone {
                                let shown = self.text[escape..escape + 6].to_owned();
                                self.limit(escape, LimitKind::Surrogate(shown));
                            }
                        }
                        _ => return None,
                    }
                }
                0x00..=0x1F => return None,
                _ => self.at += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        let token = &self.text[start..self.at];
        if crate::wire::json_text::json_number(token).is_none() {
            let shown = if token.len() > 40 {
                format!("{}… ({} characters)", &token[..32], token.len())
            } else {
                token.to_owned()
            };
            self.limit(start, LimitKind::Number(shown));
        }
        Some(())
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Some(())
        } else {
            None
        }
    }
}

/// `true` when `raw` is a JSON integer literal: `-?(0|[1-9][0-9]*)`.
pub(super) fn is_integer_literal(raw: &str) -> bool {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn grammar_errors_are_not_json() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\"}",
            "{\"a\":1,}",
            "01",
            "1.",
            "-",
            "1e",
            "\"\\x\"",
            "\"\u{1}\"",
            "nul",
            "1 2",
            "{\"a\":1}}",
            "[1}",
            "\"\\u12G4\"",
            "{1:2}",
        ] {
            assert!(outline(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn valid_json_is_outlined() {
        let o = outline(
            r#" {"jsonrpc":"2.0","method":"m","id" : 12345678901234567890123 ,"x":[{"id":1}]} "#,
        )
        .unwrap();
        assert!(o.object && o.has_method && o.limit.is_none());
        assert_eq!(o.id, Some("12345678901234567890123"));
        let o = outline(r#"{"\u0069d":"a","id":"b"}"#).unwrap();
        assert_eq!(o.id, Some(r#""b""#), "the last id wins, escaped keys count");
        assert!(outline("[{\"id\":1}]").unwrap().id.is_none());
        let o = outline(r#"{"id":[1,{"id":2}],"method":"m"}"#).unwrap();
        assert_eq!(o.id, Some(r#"[1,{"id":2}]"#));
        assert_eq!(outline(r#"{"id":{}}"#).unwrap().id, Some("{}"));
        for ok in [
            "1",
            "-0.5e-3",
            "\"\\ud83d\\ude00\"",
            "[]",
            "{}",
            "[[],{}]",
            "true",
        ] {
            let o = outline(ok).unwrap();
            assert!(o.limit.is_none(), "{ok}");
        }
    }

    #[test]
    fn a_top_level_array_is_split_into_its_elements() {
        let (o, e) = elements(r#" [ 1 , "a,]" ,{"id":[1,2]}, [[]] ,{} ] "#, 10).unwrap();
        assert!(o.array && !o.object);
        assert_eq!(e.texts, ["1", r#""a,]""#, r#"{"id":[1,2]}"#, "[[]]", "{}"]);
        assert_eq!(e.count, 5);
        let (_, e) = elements("[1,2,3]", 2).unwrap();
        assert_eq!(
            (e.texts, e.count),
            (vec!["1", "2"], 3),
            "counted past the kept ones"
        );
        let (o, e) = elements("[]", 2).unwrap();
        assert!(o.array && e.count == 0);
        let (o, e) = elements(r#"{"a":[1]}"#, 2).unwrap();
        assert!(!o.array && e.count == 0);
        assert!(elements("[1,]", 2).is_none());
        // No depth limit of its own: an element beyond serde_json's is still split out.
        let deep = format!("[{},2]", nested(MAX_DEPTH + 5));
        let (o, e) = elements(&deep, 4).unwrap();
        assert!(o.limit.is_some());
        assert_eq!(e.texts, [nested(MAX_DEPTH + 5).as_str(), "2"]);
        assert!(outline("[1]").unwrap().array);
    }

    #[test]
    fn limits_name_what_and_where() {
        let at_limit = format!("{{\"a\":{}}}", nested(MAX_DEPTH - 1));
        assert!(outline(&at_limit).unwrap().limit.is_none());
        assert!(serde_json::from_str::<serde_json::Value>(&at_limit).is_ok());
        let over = format!("{{\"a\":{}}}", nested(MAX_DEPTH));
        assert!(serde_json::from_str::<serde_json::Value>(&over).is_err());
        let limit = outline(&over).unwrap().limit.unwrap();
        assert_eq!(
            limit.to_string(),
            format!(
                "arrays and objects nest deeper than 127 levels at line 1 column {}",
                5 + MAX_DEPTH
            )
        );
        let limit = outline("{\n \"x\": 1e999}").unwrap().limit.unwrap();
        assert!(limit
            .to_string()
            .starts_with("the number 1e999 at line 2 column 7"));
        let long = format!("-{}", "9".repeat(400));
        let limit = outline(&long).unwrap().limit.unwrap().to_string();
        assert!(limit.contains("(401 characters)"), "{limit}");
        for (text, escape) in [
            (r#"{"a":"x\ud800"}"#, r"\ud800"),
            (r#"{"a":"\udc00\ud800"}"#, r"\udc00"),
            (r#"{"a":"\uDBFF\u0041"}"#, r"\uDBFF"),
        ] {
            let limit = outline(text).unwrap().limit.unwrap().to_string();
            assert!(
                limit.starts_with(&format!(
                    "lone UTF-16 surrogate escape {escape} at line 1 column"
                )),
                "{limit}"
            );
        }
    }

    #[test]
    fn integer_literals() {
        for yes in ["0", "-0", "7", "-12", "123456789012345678901234567890"] {
            assert!(is_integer_literal(yes), "{yes}");
        }
        for no in ["", "-", "01", "1.0", "1e3", "+1", "--1", "1a"] {
            assert!(!is_integer_literal(no), "{no}");
        }
    }
}
