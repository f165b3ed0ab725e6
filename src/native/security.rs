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

    /// The policy's table is pinned in the core (`http::guard`'s tests); here: a hyper
    /// `HeaderMap` reads as the same fields (repeated `Host` refused, values that are not text
    /// refused), and a refusal becomes the 403.
    #[test]
    fn a_header_map_is_checked_as_the_core_reads_fields() {
        let guard = Guard::new(&SecurityOptions {
            loopback: true,
            ..Default::default()
        })
        .unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://localhost:5173"),
        );
        assert_eq!(guard.check(&h), Ok(()));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert_eq!(guard.check(&h), Err(Refusal::Origin));
        h.remove(header::ORIGIN);
        h.append(header::HOST, HeaderValue::from_static("localhost"));
        assert_eq!(guard.check(&h), Err(Refusal::Host));
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_bytes(b"\xff").unwrap());
        assert_eq!(guard.check(&h), Err(Refusal::Host));
        assert_eq!(forbidden(&Refusal::Host).status(), 403);
    }
}
