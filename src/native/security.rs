//! HTTP security defaults on hyper: the core's `Origin` / `Host` policy
//! ([`crate::http::guard`], where the table is; spec `basic/transports`, Security Warning:
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>) re-exported,
//! checked over a hyper `HeaderMap`, and its `403` as a hyper response.

use hyper::Response;

pub use crate::http::guard::{
    is_loopback_host, split_host_port, Guard, InvalidOrigin, Origin, Refusal, SecurityOptions,
};
use crate::native::http::{response, ResponseBody};

/// The `403` for a refused request: a JSON-RPC error with id `null`, code `-32000`.
pub fn forbidden(refusal: &Refusal) -> Response<ResponseBody> {
    response(refusal.answer(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{self, HeaderMap, HeaderValue};

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(host) = host {
            h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        if let Some(origin) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        h
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
