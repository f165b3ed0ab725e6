//! The `Origin` / `Host` policy over plain header fields, against DNS rebinding and cross-site
//! requests (spec `basic/transports`, Security Warning: servers MUST validate `Origin` on all
//! incoming connections, an invalid one gets `403`;
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
//!
//! Matching is exact on (scheme, host, port) — never by substring or prefix: `http://localhost`
//! and `http://localhost:80` are the same origin, `http://localhost.evil.example` is not
//! `http://localhost`. The policy, checked on every verb and on the WebSocket upgrade:
//!
//! | `Origin` | allowlist given | bound to loopback, no list | bound elsewhere, no list |
//! |---|---|---|---|
//! | absent (non-browser clients) | passes | passes | passes |
//! | present | passes only when listed | passes only with a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`; `http`/`https`, any port) | passes only when it is the request's own origin (`http(s)://` + its `Host`) |
//! | `null` or unparsable | `403` | `403` | `403` |
//!
//! `Host` is checked when the server is bound to loopback or a host allowlist is given: it must
//! be a loopback name (any port) or listed (several `Host` headers are refused). So is the
//! authority of the request target when the host names one (an absolute-form target, HTTP/2's
//! `:authority`; [`Guard::check_request`]): each must pass. A request with neither (an HTTP/1.0
//! request without `Host`) is refused too: DNS-rebinding protection does not depend on the HTTP
//! version. A refused request gets `403` with a JSON-RPC error body whose id is `null`
//! (`-32000`). An HTTP/1.1 request without `Host` is malformed and gets `400` before this policy
//! ([`crate::http::negotiate::host_required`], RFC 9112 §3.2).

use std::borrow::Cow;
use std::net::IpAddr;

use crate::http::answer::Answer;
use crate::http::headers;
use crate::http::request::Fields;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// An origin: scheme, lowercase host (IPv6 without brackets), port (the scheme's default when
/// absent).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// `http`, `https`, `ws`, `wss`, … (lowercase).
    pub scheme: String,
    /// The host, lowercase; an IPv6 address without its brackets.
    pub host: String,
    /// The port; the scheme's default (80 / 443) when the text had none.
    pub port: Option<u16>,
}

/// Why a string is not an origin or a host.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a valid origin or host: {0:?}")]
pub struct InvalidOrigin(pub String);

impl Origin {
    /// Parse an `Origin` header value / allowlist entry: `scheme://host[:port]`, nothing after
    /// (a single trailing `/` is tolerated for allowlist convenience).
    ///
    /// # Errors
    /// [`InvalidOrigin`] for `null`, a missing scheme, a path, userinfo, an empty host or a bad port.
    pub fn parse(text: &str) -> Result<Origin, InvalidOrigin> {
        let bad = || InvalidOrigin(text.to_owned());
        let (scheme, rest) = text.split_once("://").ok_or_else(bad)?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
            || rest.contains(['/', '?', '#', '@'])
        {
            return Err(bad());
        }
        let scheme = scheme.to_ascii_lowercase();
        let (host, port) = split_host_port(rest).ok_or_else(bad)?;
        let port = port.or(default_port(&scheme));
        Ok(Origin { scheme, host, port })
    }

    /// Whether the host is a loopback name or address (`localhost`, `127.0.0.0/8`, `::1`).
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// Split `host[:port]` (IPv6 in brackets) into a lowercase host and an optional port. `None`
/// when malformed (empty host, non-numeric or out-of-range port, stray brackets or colons).
pub fn split_host_port(text: &str) -> Option<(String, Option<u16>)> {
    split_host_port_in_place(text).map(|(host, port)| (host.into_owned(), port))
}

/// [`split_host_port`] with the host borrowed from `text` when it is lowercase already (the
/// usual case: no copy per request).
fn split_host_port_in_place(text: &str) -> Option<(Cow<'_, str>, Option<u16>)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<std::net::Ipv6Addr>().ok()?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let bracketed = text.starts_with('[');
    let refused = if host.is_ascii() {
        // The same test byte by byte: an ASCII whitespace or control character is a byte below
        // 0x20, a space or DEL.
        host.bytes().any(|b| {
            (!bracketed && matches!(b, b':' | b'[' | b']')) || b == b' ' || b < 0x20 || b == 0x7f
        })
    } else {
        host.contains([':', '[', ']']) && !bracketed
            || host.contains(|c: char| c.is_whitespace() || c.is_control())
    };
    if host.is_empty() || refused {
        return None;
    }
    let port = match port {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
        None => None,
    };
    let host = if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    };
    Some((host, port))
}

/// Whether a host (lowercase, IPv6 without brackets) is loopback.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The security policy (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SecurityOptions {
    /// Exact allowed origins (e.g. `https://app.example.com`); `None` → the default policy.
    pub allowed_origins: Option<Vec<String>>,
    /// Exact allowed `Host` values (`host[:port]`, a missing port matching any); `None` → only
    /// loopback names when bound to loopback, anything otherwise.
    pub allowed_hosts: Option<Vec<String>>,
    /// Whether the server is bound to a loopback address.
    pub loopback: bool,
}

/// A compiled [`SecurityOptions`].
#[derive(Clone, Debug)]
pub struct Guard {
    origins: Option<Vec<Origin>>,
    hosts: Option<Vec<(String, Option<u16>)>>,
    loopback: bool,
}

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The `Origin` header is not allowed (or malformed).
    Origin,
    /// The `Host` header is not allowed (or malformed).
    Host,
}

impl Guard {
    /// Compile the options.
    ///
    /// # Errors
    /// [`InvalidOrigin`] for an allowlist entry that does not parse.
    pub fn new(options: &SecurityOptions) -> Result<Guard, InvalidOrigin> {
        let origins = options
            .allowed_origins
            .as_ref()
            .map(|list| list.iter().map(|o| Origin::parse(o)).collect())
            .transpose()?;
        let hosts = options
            .allowed_hosts
            .as_ref()
            .map(|list| {
                list.iter()
                    .map(|h| split_host_port(h).ok_or_else(|| InvalidOrigin(h.clone())))
                    .collect()
            })
            .transpose()?;
        Ok(Guard {
            origins,
            hosts,
            loopback: options.loopback,
        })
    }

    /// Check a request's `Host` and `Origin` (no target authority: [`Guard::check_request`]).
    ///
    /// # Errors
    /// The [`Refusal`]; answer it with [`Refusal::answer`].
    pub fn check<H: Fields + ?Sized>(&self, fields: &H) -> Result<(), Refusal> {
        self.check_request(None, fields)
    }

    /// Check a request's target `authority` (when it has one, see
    /// [`HttpRequest::authority`](crate::http::request::HttpRequest::authority)), `Host` and
    /// `Origin` (see the module table).
    ///
    /// # Errors
    /// The [`Refusal`]; answer it with [`Refusal::answer`].
    pub fn check_request<H: Fields + ?Sized>(
        &self,
        authority: Option<&str>,
        fields: &H,
    ) -> Result<(), Refusal> {
        // One `Host` (several are refused), read in place.
        let host = match fields.field_count(headers::HOST) {
            0 => None,
            1 => Some(
                fields
                    .field(headers::HOST)
                    .and_then(split_host_port_in_place)
                    .ok_or(Refusal::Host)?,
            ),
            _ => return Err(Refusal::Host),
        };
        let authority = authority
            .map(|a| split_host_port_in_place(a).ok_or(Refusal::Host))
            .transpose()?;
        let checked = self.loopback || self.hosts.is_some();
        if checked && host.is_none() && authority.is_none() {
            return Err(Refusal::Host);
        }
        for (name, port) in authority.iter().chain(host.iter()) {
            if !self.host_allowed(name, *port) {
                return Err(Refusal::Host);
            }
        }
        // The target's authority comes before `Host` (RFC 9112 §3.2.2).
        let host = authority.or(host);
        match fields.field_count(headers::ORIGIN) {
            0 => return Ok(()),
            1 => {}
            _ => return Err(Refusal::Origin),
        }
        let origin = fields
            .field(headers::ORIGIN)
            .and_then(|o| Origin::parse(o).ok())
            .ok_or(Refusal::Origin)?;
        let allowed = match (&self.origins, self.loopback) {
            (Some(list), _) => list.contains(&origin),
            (None, true) => {
                matches!(origin.scheme.as_str(), "http" | "https") && origin.is_loopback()
            }
            (None, false) => host.is_some_and(|(name, port)| {
                matches!(origin.scheme.as_str(), "http" | "https")
                    && origin.host == *name
                    && origin.port == port.or(default_port(&origin.scheme))
            }),
        };
        if allowed {
            Ok(())
        } else {
            Err(Refusal::Origin)
        }
    }

    /// Whether a `Host` value (or a target authority) passes the policy.
    fn host_allowed(&self, name: &str, port: Option<u16>) -> bool {
        let listed = self.hosts.as_ref().map(|list| {
            list.iter()
                .any(|(h, p)| h == name && (p.is_none() || *p == port))
        });
        match listed {
            Some(true) => true,
            Some(false) => self.loopback && is_loopback_host(name),
            None => !self.loopback || is_loopback_host(name),
        }
    }
}

impl Refusal {
    /// The `403` for a refused request: a JSON-RPC error with id `null`, code `-32000`.
    pub fn answer(&self) -> Answer {
        let message = match self {
            Refusal::Origin => "Forbidden: Origin not allowed",
            Refusal::Host => "Forbidden: Host not allowed",
        };
        Answer::rpc_error(403, ErrorObject::new(ErrorCode::SERVER_ERROR, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> Vec<(String, Option<String>)> {
        let mut h = Vec::new();
        if let Some(host) = host {
            h.push(("Host".to_owned(), Some(host.to_owned())));
        }
        if let Some(origin) = origin {
            h.push(("origin".to_owned(), Some(origin.to_owned())));
        }
        h
    }

    /// `host[:port]` splits as the character-wise reading did (whitespace and control
    /// characters refused, brackets only around IPv6, lowercase host), whether the host is ASCII
    /// (read byte by byte) or not.
    #[test]
    fn hosts_split_as_read_character_wise() {
        fn reference(text: &str) -> Option<(String, Option<u16>)> {
            let (host, port) = if let Some(rest) = text.strip_prefix('[') {
                let (host, after) = rest.split_once(']')?;
                host.parse::<std::net::Ipv6Addr>().ok()?;
                match after {
                    "" => (host, None),
                    _ => (host, Some(after.strip_prefix(':')?)),
                }
            } else {
                match text.split_once(':') {
                    Some((host, port)) => (host, Some(port)),
                    None => (text, None),
                }
            };
            if host.is_empty()
                || host.contains([':', '[', ']']) && !text.starts_with('[')
                || host.contains(|c: char| c.is_whitespace() || c.is_control())
            {
                return None;
            }
            let port = match port {
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    Some(p.parse().ok()?)
                }
                Some(_) => return None,
                None => None,
            };
            Some((host.to_ascii_lowercase(), port))
        }
        let mut cases: Vec<String> = [
            "127.0.0.1:3000",
            "LocalHost",
            "localhost:",
            "[::1]:8080",
            "[::1]",
            "[::1]x",
            "[nope]",
            "a[b",
            "a]b:1",
            "a b",
            "a\tb",
            "a\u{b}b",
            "a\u{7f}b",
            "a\u{85}b",
            "caf\u{e9}.example:80",
            "\u{2003}x",
            "x:99999",
            "x:1:2",
            "",
            ":80",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
        cases.extend((0u8..=0x7f).map(|b| format!("h{}x:1", b as char)));
        for case in &cases {
            assert_eq!(split_host_port(case), reference(case), "{case:?}");
        }
    }

    #[test]
    fn origins_parse_exactly() {
        let o = Origin::parse("HTTP://LocalHost").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("http", "localhost", Some(80))
        );
        assert_eq!(Origin::parse("http://[::1]:8080").unwrap().host, "::1");
        for bad in [
            "null",
            "localhost",
            "http://",
            "http://a/b",
            "http://u@a",
            "http://a:x",
            "http://a:99999",
            "http://::1",
        ] {
            assert!(Origin::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn loopback_policy() {
        let g = Guard::new(&SecurityOptions {
            loopback: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(g.check(&headers(Some("127.0.0.1:3000"), None)), Ok(()));
        assert_eq!(
            g.check(&headers(
                Some("localhost:3000"),
                Some("http://localhost:5173")
            )),
            Ok(())
        );
        assert_eq!(
            g.check(&headers(Some("[::1]:3000"), Some("https://127.0.0.1"))),
            Ok(())
        );
        assert_eq!(
            g.check(&headers(
                Some("localhost"),
                Some("http://localhost.evil.example")
            )),
            Err(Refusal::Origin)
        );
        assert_eq!(
            g.check(&headers(Some("localhost"), Some("http://evil.example"))),
            Err(Refusal::Origin)
        );
        assert_eq!(
            g.check(&headers(Some("localhost"), Some("null"))),
            Err(Refusal::Origin)
        );
        assert_eq!(
            g.check(&headers(Some("evil.example:3000"), None)),
            Err(Refusal::Host)
        );
        assert_eq!(
            g.check(&headers(Some("127.0.0.1.nip.io"), None)),
            Err(Refusal::Host)
        );
    }

    #[test]
    fn allowlist_and_same_origin() {
        let g = Guard::new(&SecurityOptions {
            allowed_origins: Some(vec!["https://app.example.com".into()]),
            loopback: false,
            ..Default::default()
        })
        .unwrap();
        let ok = headers(Some("api.example.com"), Some("https://app.example.com:443"));
        assert_eq!(g.check(&ok), Ok(()));
        let sub = headers(
            Some("api.example.com"),
            Some("https://app.example.com.evil.example"),
        );
        assert_eq!(g.check(&sub), Err(Refusal::Origin));
        assert_eq!(
            g.check(&headers(Some("a"), Some("http://app.example.com"))),
            Err(Refusal::Origin)
        );
        let same = Guard::new(&SecurityOptions::default()).unwrap();
        assert_eq!(
            same.check(&headers(
                Some("api.example.com:8080"),
                Some("http://api.example.com:8080")
            )),
            Ok(())
        );
        assert_eq!(
            same.check(&headers(
                Some("api.example.com"),
                Some("http://api.example.com")
            )),
            Ok(())
        );
        assert_eq!(
            same.check(&headers(
                Some("api.example.com"),
                Some("http://other.example.com")
            )),
            Err(Refusal::Origin)
        );
    }
}
