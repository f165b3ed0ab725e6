//! [`Endpoint`]: the state one client keeps about one Streamable HTTP endpoint, and the requests
//! it builds.

use std::time::Duration;

use super::{Event, Exchange, Listen, Method, Outgoing};
use crate::http::headers::{
    ACCEPT, ACCEPT_JSON_AND_SSE, APPLICATION_JSON, CONTENT_TYPE, LAST_EVENT_ID,
    MCP_PROTOCOL_VERSION, MCP_SESSION_ID, TEXT_EVENT_STREAM,
};
use crate::wire::jsonrpc::{JsonRpcBatchResponse, JsonRpcMessage};

/// One Streamable HTTP endpoint as a client sees it: the URL, the caller's headers, the
/// session id and protocol version learnt so far, and the exchange deadline. It builds the
/// machines; it is the only state shared between exchanges (a host keeps it behind a lock).
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) timeout: Option<Duration>,
    pub(super) session: Option<String>,
    pub(super) protocol_version: Option<String>,
}

impl Endpoint {
    /// An endpoint at `url` sending `headers` on every request, each exchange bounded by
    /// `timeout` (`None`: unbounded; the client's own request deadline still applies).
    pub fn new(
        url: impl Into<String>,
        headers: Vec<(String, String)>,
        timeout: Option<Duration>,
    ) -> Self {
        Endpoint {
            url: url.into(),
            headers,
            timeout,
            session: None,
            protocol_version: None,
        }
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The session id the server assigned (`Mcp-Session-Id` of the `initialize` answer).
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The negotiated version sent as `MCP-Protocol-Version` on legacy requests.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Record the version `initialize` negotiated.
    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_owned());
    }

    /// Apply an [`Event::SessionStarted`] / [`Event::SessionExpired`] / [`Event::Moved`]; `false`
    /// for other events.
    pub fn apply(&mut self, event: &Event) -> bool {
        match event {
            Event::SessionStarted(id) => self.session = Some(id.clone()),
            Event::SessionExpired(id) => {
                if self.session.as_deref() == Some(id.as_str()) {
                    self.session = None;
                }
            }
            Event::Moved(url) => self.url.clone_from(url),
            _ => return false,
        }
        true
    }

    /// The exchange that carries `message` as a `POST`. `modern` holds the per-request headers
    /// of a 2026-07-28 request (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`, built by the client): such a request carries no session and a non-2xx
    /// answer is [`ClientError::HttpStatus`](crate::client::ClientError::HttpStatus). An
    /// `initialize` starts a new session (the old id and version are forgotten).
    pub fn exchange(
        &mut self,
        message: &JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Exchange {
        if matches!(message, JsonRpcMessage::Request(r) if r.method == "initialize") {
            self.session = None;
            self.protocol_version = None;
        }
        Exchange::new(self, message, modern)
    }

    /// The exchange that `POST`s `batch` (the client's answers to a batch of the server's
    /// requests) as one JSON array, in the session (2025-03-26: "an array batching one or more
    /// responses"); the server answers it `202`.
    pub fn exchange_batch(&mut self, batch: &JsonRpcBatchResponse) -> Exchange {
        let mut exchange = Exchange::of_body(self, batch.to_json(), None, false, None);
        exchange.carries_answers = true;
        exchange
    }

    /// The machine of the server's own `GET` stream.
    pub fn listen(&self) -> Listen {
        Listen::new(self)
    }

    /// Close: forget the version and the session; the `DELETE` that ends the session, if there
    /// was one, with the negotiated `MCP-Protocol-Version` (the client MUST send it on every
    /// request after `initialize`, spec `basic/transports`) (best effort: a host bounds it by
    /// [`CLOSE_TIMEOUT`](super::CLOSE_TIMEOUT) and ignores its answer).
    pub fn close(&mut self) -> Option<Outgoing> {
        let version = self.protocol_version.take();
        let session = self.session.take()?;
        let mut headers = vec![(MCP_SESSION_ID.to_owned(), session)];
        if let Some(version) = version {
            headers.push((MCP_PROTOCOL_VERSION.to_owned(), version));
        }
        headers.extend(self.headers.iter().cloned());
        Some(Outgoing {
            method: Method::Delete,
            url: self.url.clone(),
            headers,
            body: Vec::new(),
        })
    }

    /// A `GET` for an event stream: `Accept`, `Last-Event-ID`, the caller's headers, the
    /// session and version (as given).
    pub(super) fn stream_request(
        &self,
        session: Option<&str>,
        version: Option<&str>,
        last_event_id: Option<&str>,
    ) -> Outgoing {
        let mut headers = vec![(ACCEPT.to_owned(), TEXT_EVENT_STREAM.to_owned())];
        if let Some(id) = last_event_id {
            headers.push((LAST_EVENT_ID.to_owned(), id.to_owned()));
        }
        headers.extend(self.headers.iter().cloned());
        if let Some(session) = session {
            headers.push((MCP_SESSION_ID.to_owned(), session.to_owned()));
        }
        if let Some(version) = version {
            headers.push((MCP_PROTOCOL_VERSION.to_owned(), version.to_owned()));
        }
        Outgoing {
            method: Method::Get,
            url: self.url.clone(),
            headers,
            body: Vec::new(),
        }
    }

    /// A `POST` of `body`: `Content-Type`, `Accept`, the caller's headers, then the session and
    /// version (legacy) or the 2026-07-28 headers (modern).
    pub(super) fn post_request(
        &self,
        body: Vec<u8>,
        modern: Option<&[(String, String)]>,
    ) -> Outgoing {
        let mut headers = vec![
            (CONTENT_TYPE.to_owned(), APPLICATION_JSON.to_owned()),
            (ACCEPT.to_owned(), ACCEPT_JSON_AND_SSE.to_owned()),
        ];
        headers.extend(self.headers.iter().cloned());
        match modern {
            Some(extra) => headers.extend(extra.iter().cloned()),
            None => {
                if let Some(session) = &self.session {
                    headers.push((MCP_SESSION_ID.to_owned(), session.clone()));
                }
                if let Some(version) = &self.protocol_version {
                    headers.push((MCP_PROTOCOL_VERSION.to_owned(), version.clone()));
                }
            }
        }
        Outgoing {
            method: Method::Post,
            url: self.url.clone(),
            headers,
            body,
        }
    }
}
