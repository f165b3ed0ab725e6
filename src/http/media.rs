//! HTTP media-type checks for the Streamable HTTP route, over plain header strings (no I/O, no
//! HTTP crate), so the wasm `fetch` handler and any other host share one reading of `Accept`
//! and `Content-Type`.

pub use crate::http::headers::{DEFAULT_MAX_BODY_BYTES, DEFAULT_MCP_PATH};

/// What an `Accept` header admits: RFC 9110 §12.5.1 media ranges, case-insensitive, with
/// wildcards, the more specific range winning, and `q=0` excluding a range. An absent header
/// admits everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accept {
    /// `application/json` is acceptable.
    pub json: bool,
    /// `text/event-stream` is acceptable.
    pub sse: bool,
}

impl Accept {
    /// Read the values of every `Accept` header of a request (none → everything is acceptable).
    ///
    /// ```
    /// use orkestrel_mcp::http::media::Accept;
    /// assert_eq!(Accept::parse(["application/json;q=0, */*"]), Accept { json: false, sse: true });
    /// assert_eq!(Accept::parse(Vec::<&str>::new()), Accept { json: true, sse: true });
    /// ```
    pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Accept {
        let mut values = values.into_iter().peekable();
        if values.peek().is_none() {
            return Accept {
                json: true,
                sse: true,
            };
        }
        let mut json = None::<(u8, u32)>;
        let mut sse = None::<(u8, u32)>;
        for text in values {
            for range in text.split(',') {
                let mut parts = range.split(';');
                let media = parts.next().unwrap_or("").trim();
                let q = parts
                    .filter_map(|p| p.split_once('='))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                    .and_then(|(_, v)| qvalue(v.trim()))
                    .unwrap_or(1000);
                // Any case, compared in place.
                let is = |range: &str| media.eq_ignore_ascii_case(range);
                let (for_json, for_sse) = if is("application/json") {
                    (Some(2), None)
                } else if is("text/event-stream") {
                    (None, Some(2))
                } else if is("application/*") {
                    (Some(1), None)
                } else if is("text/*") {
                    (None, Some(1))
                } else if is("*/*") {
                    (Some(0), Some(0))
                } else {
                    (None, None)
                };
                apply(&mut json, for_json, q);
                apply(&mut sse, for_sse, q);
            }
        }
        Accept {
            json: json.is_some_and(|(_, q)| q > 0),
            sse: sse.is_some_and(|(_, q)| q > 0),
        }
    }
}

impl Accept {
    /// One `Accept` value, as [`Accept::parse`] reads it; the values clients send most (the
    /// transport's `application/json, text/event-stream`, either type alone, `*/*`) are told by
    /// one comparison instead of parsed.
    pub fn parse_one(value: &str) -> Accept {
        let (json, sse) = match value {
            "application/json, text/event-stream"
            | "text/event-stream, application/json"
            | "*/*" => (true, true),
            "application/json" => (true, false),
            "text/event-stream" => (false, true),
            _ => return Accept::parse(std::iter::once(value)),
        };
        Accept { json, sse }
    }
}

/// A weight's `qvalue` (RFC 9110 §12.4.2, `0.5`, `1`, `0.001`) in thousandths; a digit past
/// the third that is not `0` counts one more, so that `0.0001` stays above `q=0`. A negative
/// value is `0` (not acceptable). `None` for what is not a decimal number (the range then
/// counts as `q=1`, as a weight left out). Read by hand rather than as a float: `core`'s float
/// parser is ~10 KB of the wasm module.
fn qvalue(text: &str) -> Option<u32> {
    if let Some(negative) = text.strip_prefix('-') {
        return qvalue(negative).map(|_| 0);
    }
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
        return None;
    }
    // Over 1000 is not a qvalue; whatever it says, it is at least 1.
    let whole = whole.trim_start_matches('0');
    if whole.len() > 1 {
        return Some(u32::MAX);
    }
    let mut thousandths = whole
        .bytes()
        .map(|b| u32::from(b - b'0') * 1000)
        .sum::<u32>();
    for (at, b) in fraction.bytes().enumerate() {
        let digit = u32::from(b - b'0');
        match at {
            0 => thousandths += digit * 100,
            1 => thousandths += digit * 10,
            2 => thousandths += digit,
            _ if digit != 0 => return Some(thousandths + 1),
            _ => {}
        }
    }
    Some(thousandths)
}

fn apply(slot: &mut Option<(u8, u32)>, specificity: Option<u8>, q: u32) {
    let Some(s) = specificity else { return };
    match slot {
        Some((current, _)) if *current > s => {}
        Some((current, best)) if *current == s => *best = (*best).max(q),
        _ => *slot = Some((s, q)),
    }
}

/// Whether a `Content-Type` value is `application/json` (any case, any parameters such as
/// `charset`).
pub fn is_json_media_type(value: &str) -> bool {
    value.split(';').next().is_some_and(|m| {
        m.trim()
            .eq_ignore_ascii_case(crate::http::headers::APPLICATION_JSON)
    })
}

/// The `charset` a `Content-Type` value names when it is not UTF-8 (JSON text is UTF-8, RFC
/// 8259 section 8.1); `None` when it names none, or `utf-8` / `utf8` / `us-ascii` (a subset of
/// UTF-8) in any case, quoted or not.
pub fn foreign_charset(value: &str) -> Option<&str> {
    let (_, parameters) = value.split_once(';')?;
    parameters.split(';').find_map(|parameter| {
        let (name, charset) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let charset = charset.trim().trim_matches('"');
        let utf8 = ["utf-8", "utf8", "us-ascii"]
            .iter()
            .any(|name| charset.eq_ignore_ascii_case(name));
        (!utf8).then_some(charset)
    })
}

/// Whether a `Content-Encoding` value codes nothing (`identity`, or empty): the only body coding
/// the route reads.
pub fn is_identity_coding(value: &str) -> bool {
    value
        .split(',')
        .all(|coding| coding.trim().is_empty() || coding.trim().eq_ignore_ascii_case("identity"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_and_codings() {
        for utf8 in [
            "application/json",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
            "application/json; charset=\"utf8\"",
            "application/json; profile=x",
            "application/json; charset=US-ASCII",
        ] {
            assert_eq!(foreign_charset(utf8), None, "{utf8}");
        }
        assert_eq!(
            foreign_charset("application/json; charset=ISO-8859-1"),
            Some("ISO-8859-1")
        );
        assert_eq!(
            foreign_charset("application/json; x=1; charset=\"utf-16\""),
            Some("utf-16")
        );
        assert!(
            is_identity_coding("identity")
                && is_identity_coding(" Identity ")
                && is_identity_coding("")
        );
        assert!(!is_identity_coding("gzip") && !is_identity_coding("identity, br"));
    }

    fn accept(v: &str) -> (bool, bool) {
        let a = Accept::parse([v]);
        (a.json, a.sse)
    }

    #[test]
    fn accept_ranges() {
        assert_eq!(accept("application/json, text/event-stream"), (true, true));
        assert_eq!(accept("TEXT/EVENT-STREAM"), (false, true));
        assert_eq!(accept("*/*"), (true, true));
        assert_eq!(accept("*/*;q=0.5, application/json;q=0"), (false, true));
        assert_eq!(accept("application/*"), (true, false));
        assert_eq!(accept("text/html"), (false, false));
        assert!(Accept::parse(["text/html", "application/json"]).json);
    }

    /// The one-comparison values read as the parser reads them.
    #[test]
    fn common_values_read_as_parsed() {
        for value in [
            "application/json, text/event-stream",
            "text/event-stream, application/json",
            "*/*",
            "application/json",
            "text/event-stream",
            "application/json,text/event-stream",
            "text/html",
        ] {
            assert_eq!(Accept::parse_one(value), Accept::parse([value]), "{value}");
        }
    }

    #[test]
    fn weights() {
        for (text, q) in [
            ("1", Some(1000)),
            ("1.000", Some(1000)),
            ("0.5", Some(500)),
            (".5", Some(500)),
            ("0.", Some(0)),
            ("0", Some(0)),
            ("0.000", Some(0)),
            ("0.001", Some(1)),
            ("0.0001", Some(1)),
            ("0.00000", Some(0)),
            ("007", Some(7000)),
            ("12", Some(u32::MAX)),
            ("-0.5", Some(0)),
            ("", None),
            (".", None),
            ("abc", None),
            ("1e-1", None),
            ("0.5x", None),
        ] {
            assert_eq!(qvalue(text), q, "{text:?}");
        }
        // The most specific range's weight decides; a tiny weight still admits.
        assert_eq!(accept("application/json;q=0.0001, */*;q=0"), (true, false));
        assert_eq!(
            accept("application/json;q=0.000, text/*;q=0.2"),
            (false, true)
        );
        assert_eq!(accept("application/json;q=oops"), (true, false));
        assert_eq!(accept("application/json; Q = 0"), (false, false));
    }

    #[test]
    fn content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/json;charset=UTF-8",
        ] {
            assert!(is_json_media_type(ok), "{ok}");
        }
        assert!(!is_json_media_type("text/plain"));
        assert!(!is_json_media_type("application/jsonx"));
    }
}
