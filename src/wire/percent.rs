//! Percent-decoding, the one copy the crate uses: URI components (RFC 3986 §2.1, where `+` is a
//! plain character) and `application/x-www-form-urlencoded` text (the WHATWG URL standard's form
//! decoding, where `+` is a space).

/// How a `+` is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plus {
    /// Kept (a URI component, RFC 3986).
    Kept,
    /// A space (form-encoded text).
    Space,
}

/// `text` with its `%XX` sequences decoded (and `+` as `plus` says); a `%` not followed by two
/// hex digits is kept as is. `None` when the decoded bytes are not UTF-8.
pub(crate) fn decode(text: &str, plus: Plus) -> Option<String> {
    if !text.contains('%') && (plus == Plus::Kept || !text.contains('+')) {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
            (b'+', _, _) if plus == Plus::Space => out.push(b' '),
            (b, _, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_reads_plus_as_told() {
        assert_eq!(decode("a%20b+c", Plus::Kept).as_deref(), Some("a b+c"));
        assert_eq!(decode("a%20b+c", Plus::Space).as_deref(), Some("a b c"));
        assert_eq!(decode("100%", Plus::Kept).as_deref(), Some("100%"));
        assert_eq!(decode("%zz%4", Plus::Space).as_deref(), Some("%zz%4"));
        assert_eq!(decode("%C3%A9", Plus::Kept).as_deref(), Some("é"));
        assert_eq!(decode("%FF", Plus::Kept), None, "not UTF-8");
    }
}
