//! A request as plain data: what a host (hyper, a Worker's `fetch`) hands the route plan
//! ([`crate::http::route`]). No HTTP crate, no I/O: a method, a path, header fields, and the body
//! the host read — or why it could not.

use std::time::Duration;

/// Read access to a request's header fields, by name (case-insensitive).
///
/// Implemented for a list of `(name, value)` pairs, [`HttpRequest`] itself and, on native, for
/// hyper's `HeaderMap`, so one policy reads them all. A value is `None` when the field is present
/// but not text (not visible ASCII, as `http::HeaderValue::to_str` decides).
pub trait Fields {
    /// Every value of the fields named `name`, in order (an empty list when absent).
    fn field_values(&self, name: &str) -> Vec<Option<&str>>;

    /// The names of the fields present, lowercase, each once, in first-seen order (a host whose
    /// view cannot list them returns an empty list; the default).
    fn field_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The first value of `name`: `None` when absent or not text.
    fn field(&self, name: &str) -> Option<&str> {
        self.field_values(name).into_iter().next().flatten()
    }

    /// Whether a field named `name` is present (text or not).
    fn has_field(&self, name: &str) -> bool {
        !self.field_values(name).is_empty()
    }

    /// How many fields are named `name` (what [`Fields::field_values`] would hold, without
    /// listing them: the implementations here allocate nothing).
    fn field_count(&self, name: &str) -> usize {
        self.field_values(name).len()
    }

    /// Whether `name` is absent, present once (with its value) or repeated: what
    /// [`Fields::field_count`] and [`Fields::field`] tell together, in one lookup for the
    /// implementations here.
    fn occurrence(&self, name: &str) -> Occurrence<'_> {
        match self.field_count(name) {
            0 => Occurrence::Absent,
            1 => Occurrence::Once(self.field(name)),
            _ => Occurrence::Repeated,
        }
    }

    /// Whether a field whose name starts with `prefix` (lowercase) is present: what
    /// [`Fields::field_names`] would show, without listing them (the implementations here
    /// allocate nothing).
    fn has_field_starting_with(&self, prefix: &str) -> bool {
        self.field_names().iter().any(|n| n.starts_with(prefix))
    }

    /// Whether a field whose name starts with `prefix` (lowercase) occurs more than once: what
    /// [`Fields::field_names`] and [`Fields::field_count`] would show (the implementations here
    /// tell it in one pass over the fields, allocating nothing).
    fn repeats_field_starting_with(&self, prefix: &str) -> bool {
        self.field_names()
            .iter()
            .any(|n| n.starts_with(prefix) && self.field_count(n) > 1)
    }
}

/// How often a field occurs in a request ([`Fields::occurrence`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence<'a> {
    /// No field has the name.
    Absent,
    /// One field has it: its value, `None` when not text.
    Once(Option<&'a str>),
    /// Several fields have it ([`Fields::field_values`] lists them).
    Repeated,
}

/// Whether `name` starts with `prefix`, ignoring ASCII case.
pub(crate) fn starts_with_ignore_case(name: &str, prefix: &str) -> bool {
    name.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

impl Fields for [(String, Option<String>)] {
    fn field_values(&self, name: &str) -> Vec<Option<&str>> {
        self.iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_deref())
            .collect()
    }

    fn field_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (name, _) in self {
            let name = name.to_ascii_lowercase();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_deref())
    }

    fn has_field(&self, name: &str) -> bool {
        self.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    fn field_count(&self, name: &str) -> usize {
        self.iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .count()
    }

    fn has_field_starting_with(&self, prefix: &str) -> bool {
        self.iter()
            .any(|(name, _)| starts_with_ignore_case(name, prefix))
    }

    fn repeats_field_starting_with(&self, prefix: &str) -> bool {
        self.iter().enumerate().any(|(i, (name, _))| {
            starts_with_ignore_case(name, prefix)
                && self[i + 1..]
                    .iter()
                    .any(|(other, _)| other.eq_ignore_ascii_case(name))
        })
    }
}

impl Fields for Vec<(String, Option<String>)> {
    fn field_values(&self, name: &str) -> Vec<Option<&str>> {
        self.as_slice().field_values(name)
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.as_slice().field(name)
    }

    fn has_field(&self, name: &str) -> bool {
        self.as_slice().has_field(name)
    }

    fn field_count(&self, name: &str) -> usize {
        self.as_slice().field_count(name)
    }

    fn field_names(&self) -> Vec<String> {
        self.as_slice().field_names()
    }

    fn has_field_starting_with(&self, prefix: &str) -> bool {
        self.as_slice().has_field_starting_with(prefix)
    }

    fn repeats_field_starting_with(&self, prefix: &str) -> bool {
        self.as_slice().repeats_field_starting_with(prefix)
    }
}

/// What the host got when it read a request body (at most the limit the plan's
/// [`Head::ReadBody`](crate::http::route::Head::ReadBody) named).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// The whole body.
    Bytes(Vec<u8>),
    /// The body went over the limit (the plan answers `413`, `-32600`).
    TooLarge,
    /// The body could not be read (the plan answers `400`, `-32700`, with this reason).
    Unreadable(String),
    /// The client took longer than this to send the body (the plan answers `408`, `-32600`).
    TimedOut(Duration),
}

impl Default for Body {
    fn default() -> Self {
        Body::Bytes(Vec::new())
    }
}

/// The HTTP version of a request (RFC 9110 §2.5), as the host read it from the request line
/// (or the connection, for HTTP/2 and HTTP/3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpVersion {
    /// `HTTP/0.9`.
    Http09,
    /// `HTTP/1.0`: `Host` is optional on the wire (RFC 9112 §3.2 requires it from 1.1 on).
    Http10,
    /// `HTTP/1.1`: a request without `Host` is malformed (`400`, RFC 9112 §3.2).
    Http11,
    /// `HTTP/2`: the target's authority travels as `:authority` (RFC 9113 §8.3.1).
    Http2,
    /// `HTTP/3`.
    Http3,
}

/// One HTTP request, described by plain data (spec `basic/transports`, Streamable HTTP:
/// <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// The method, as sent (`POST`, `GET`, `DELETE`, …; compared exactly, as HTTP methods are
    /// case-sensitive).
    pub method: String,
    /// The path of the request target, without the query.
    pub path: String,
    /// The header fields as `(name, value)` pairs in order; repeated fields are repeated pairs.
    /// A value is `None` when it is not text (see [`Fields`]).
    pub headers: Vec<(String, Option<String>)>,
    /// The body, or why there is none.
    pub body: Body,
    /// Whether the peer connected from a loopback address (`None` when the host cannot tell).
    /// Informational: the `Origin` / `Host` policy ([`crate::http::guard`]) is keyed on where the
    /// server is bound, not on the peer.
    pub peer_loopback: Option<bool>,
    /// The HTTP version as read from the wire (`None` when the host cannot tell: a Worker's
    /// `fetch` cannot, and the native hosts describe it only for requests their own `serve`
    /// read from a connection, not for requests built in process). An `HTTP/1.1` request
    /// without `Host` gets `400` ([`crate::http::negotiate::host_required`]).
    pub version: Option<HttpVersion>,
    /// The authority of the request target when it has one: an absolute-form target
    /// (`POST http://host:port/mcp HTTP/1.1`, RFC 9112 §3.2.2) or HTTP/2's `:authority`. The
    /// `Host` guard ([`crate::http::guard::Guard::check_request`]) checks it as well as `Host`.
    pub authority: Option<String>,
    /// The identity the endpoint's bearer-token gate verified ([`crate::http::auth`]), set by
    /// [`Route::authorize`](crate::http::route::Route::authorize); it reaches the request
    /// context.
    pub identity: Option<std::sync::Arc<crate::http::identity::Identity>>,
}

impl HttpRequest {
    /// A request with no header fields and an empty body.
    pub fn new(method: impl Into<String>, path: impl Into<String>) -> Self {
        HttpRequest {
            method: method.into(),
            path: path.into(),
            ..HttpRequest::default()
        }
    }

    /// Add a header field.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), Some(value.into())));
        self
    }

    /// Set the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Body::Bytes(body.into());
        self
    }
}

impl Fields for HttpRequest {
    fn field_values(&self, name: &str) -> Vec<Option<&str>> {
        self.headers.field_values(name)
    }

    fn field(&self, name: &str) -> Option<&str> {
        self.headers.field(name)
    }

    fn has_field(&self, name: &str) -> bool {
        self.headers.has_field(name)
    }

    fn field_count(&self, name: &str) -> usize {
        self.headers.field_count(name)
    }

    fn field_names(&self) -> Vec<String> {
        self.headers.field_names()
    }

    fn has_field_starting_with(&self, prefix: &str) -> bool {
        self.headers.has_field_starting_with(prefix)
    }

    fn repeats_field_starting_with(&self, prefix: &str) -> bool {
        self.headers.repeats_field_starting_with(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pair list tells a repeated field in one pass as listing the names and counting each
    /// would (any case of the name).
    #[test]
    fn repeats_are_told_as_by_name() {
        let cases: Vec<Vec<&str>> = vec![
            vec![],
            vec!["mcp-a"],
            vec!["mcp-a", "accept", "MCP-A"],
            vec!["mcp-a", "mcp-b"],
            vec!["accept", "accept"],
            vec!["x-mcp-a", "x-mcp-a"],
        ];
        for names in cases {
            let fields: Vec<(String, Option<String>)> = names
                .iter()
                .map(|n| ((*n).to_owned(), Some("v".to_owned())))
                .collect();
            let by_names = fields
                .field_names()
                .iter()
                .any(|n| n.starts_with("mcp-") && fields.field_count(n) > 1);
            assert_eq!(
                fields.repeats_field_starting_with("mcp-"),
                by_names,
                "{names:?}"
            );
        }
    }
}
