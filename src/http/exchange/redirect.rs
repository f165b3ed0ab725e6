//! Following a redirect the server answers a request with: `301`, `302`, `307` or `308` with a
//! `Location` on the endpoint's own origin is sent again there, method, headers and body
//! unchanged, at most [`MAX_REDIRECTS`] times per exchange. Servers that mount the endpoint at
//! `/mcp/` answer `/mcp` so (Starlette's trailing-slash `307`); a browser's `fetch` follows
//! them itself, and the native host now does the same through this rule.
//!
//! Another origin is not followed — the request carries the caller's headers and credentials,
//! which stay with the URL the caller gave — nor is a `303` (it names another resource to `GET`),
//! nor a `Location` that is not an `http(s)` URL: each fails the exchange naming where it led.

use super::status::status_text;
use crate::wire::url::HttpUrl;

/// The most redirects one exchange follows.
pub const MAX_REDIRECTS: u8 = 5;

/// Whether `status` is a redirect this rule may follow.
pub(super) fn is_followed(status: u16) -> bool {
    matches!(status, 301 | 302 | 307 | 308)
}

/// Whether `status` moves the endpoint for good (`301`, `308`): later requests go to the target.
pub(super) fn is_permanent(status: u16) -> bool {
    matches!(status, 301 | 308)
}

/// Where a redirect from `base` to `location` leads, when the rule follows it; else why not.
pub(super) fn target(base: &str, status: u16, location: Option<&str>) -> Result<String, String> {
    let refused = |why: &str, location: &str| {
        format!(
            "HTTP {}: redirected to {location:?}, not followed ({why})",
            status_text(status)
        )
    };
    let Some(location) = location.map(str::trim).filter(|l| !l.is_empty()) else {
        return Err(refused("no Location", ""));
    };
    let Some(base) = HttpUrl::parse(base) else {
        return Err(refused("the endpoint URL is not http(s)", location));
    };
    let (origin, tail) = (base.origin(), base.tail);
    // The fragment is not sent.
    let reference = location.split('#').next().unwrap_or_default();
    let resolved = if let Some(rest) = reference.strip_prefix("//") {
        format!("{}://{rest}", base.scheme)
    } else if reference.starts_with('/') {
        format!("{origin}{reference}")
    } else if reference.starts_with('?') {
        let path = tail.split('?').next().unwrap_or_default();
        format!("{origin}{path}{reference}")
    } else if has_scheme(reference) {
        reference.to_owned()
    } else {
        // A relative path: beside the last segment of the base's path.
        let path = tail.split('?').next().unwrap_or_default();
        let directory = path.rfind('/').map_or("/", |i| &path[..=i]);
        format!("{origin}{directory}{reference}")
    };
    match HttpUrl::parse(&resolved) {
        None => Err(refused("not an http(s) URL", location)),
        Some(other) if other.origin() != origin => Err(refused(
            "another origin: the request's headers and credentials stay with the URL given",
            location,
        )),
        Some(_) => Ok(resolved),
    }
}

/// `scheme:` at the start of `reference` (RFC 3986 §3.1: a letter, then letters, digits, `+`,
/// `-`, `.`).
fn has_scheme(reference: &str) -> bool {
    let Some((scheme, _)) = reference.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_on_the_same_origin_is_resolved() {
        let base = "http://Example.com:80/mcp?x=1";
        for (location, want) in [
            ("/mcp/", "http://example.com/mcp/"),
            ("mcp/", "http://example.com/mcp/"),
            ("v2/mcp", "http://example.com/v2/mcp"),
            ("?y=2", "http://example.com/mcp?y=2"),
            ("http://example.com/mcp/#frag", "http://example.com/mcp/"),
            ("HTTP://EXAMPLE.COM:80/a", "HTTP://EXAMPLE.COM:80/a"),
            ("//example.com/b", "http://example.com/b"),
        ] {
            assert_eq!(
                target(base, 307, Some(location)),
                Ok(want.to_owned()),
                "{location}"
            );
        }
        assert_eq!(
            target("http://h:8080/a/mcp", 308, Some("next")),
            Ok("http://h:8080/a/next".to_owned())
        );
    }

    #[test]
    fn another_origin_or_no_location_is_refused_naming_it() {
        let base = "http://h:8080/mcp";
        for location in [
            "https://h:8080/mcp",
            "http://h:8081/mcp",
            "http://other/mcp",
            "//other/mcp",
            "http://h:8080@evil/mcp",
            "ftp://h/mcp",
        ] {
            let err = target(base, 307, Some(location)).unwrap_err();
            assert!(
                err.starts_with("HTTP 307 Temporary Redirect: redirected to"),
                "{err}"
            );
            assert!(err.contains("not followed"), "{err}");
        }
        assert!(target(base, 301, None).unwrap_err().contains("no Location"));
        assert!(is_followed(308) && is_followed(301) && !is_followed(303) && !is_followed(304));
    }
}
