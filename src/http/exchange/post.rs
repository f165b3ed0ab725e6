//! [`Exchange`]: one JSON-RPC message `POST`ed and its answer read, including the resume of an
//! interrupted SSE answer and the authorization retry.

use std::collections::VecDeque;
use std::time::Duration;

use super::redirect::{self, MAX_REDIRECTS};
use super::{
    header, is_event_stream, status::answers, status::error_summary, status::speaks_of_a_session,
    status::status_text, Challenge, Endpoint, Event, Input, Outgoing, Step, MAX_REPLY_BYTES,
    MAX_RESUMES, MAX_RESUME_WAIT_MS,
};
use crate::client::{unreadable, ClientError, Unreadable};
use crate::http::headers::{
    AUTHORIZATION, CONTENT_TYPE, LOCATION, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, WWW_AUTHENTICATE,
};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcMessage, RequestId};
use crate::wire::sse;

/// Which body is being read to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    /// A reply whose JSON may answer the request.
    Reply,
    /// The error body of a non-2xx answer to a 2026-07-28 request.
    ModernError,
}

#[derive(Debug)]
enum Phase {
    /// Not started: [`Exchange::start`] sends the `POST`.
    Idle,
    /// Waiting for the `POST`'s answer.
    Posting,
    /// Waiting for [`Input::Token`]; the `401` / `403` answer is kept to read on without one.
    Authorizing {
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// Reading a whole body.
    Body { status: u16, body: Body },
    /// Reading an event stream.
    Stream,
    /// Waiting the `retry` delay before resuming.
    Waiting,
    /// Waiting for the resuming `GET`'s answer.
    Resuming,
    /// Finished with this result.
    Done(Result<(), ClientError>),
}

impl Phase {
    /// The variant's name (see [`Input::name`]).
    fn name(&self) -> &'static str {
        match self {
            Phase::Idle => "Idle",
            Phase::Posting => "Posting",
            Phase::Authorizing { .. } => "Authorizing",
            Phase::Body { .. } => "Body",
            Phase::Stream => "Stream",
            Phase::Waiting => "Waiting",
            Phase::Resuming => "Resuming",
            Phase::Done(_) => "Done",
        }
    }
}

/// One HTTP exchange of a client: the `POST` of one JSON-RPC message and the reading of its
/// answer (see the table in [the module docs](super)). Built by [`Endpoint::exchange`]; driven
/// by [`Exchange::start`] then [`Exchange::handle`] until [`Step::Done`]; drain
/// [`Exchange::poll_event`] after each call.
#[derive(Debug)]
pub struct Exchange {
    endpoint: Endpoint,
    request_id: Option<RequestId>,
    /// The `POST` carries answers to the server's requests (bounded by
    /// [`ACCEPT_TIMEOUT`](super::ACCEPT_TIMEOUT) when the endpoint has no timeout).
    pub(super) carries_answers: bool,
    initialize: bool,
    modern: bool,
    post: Outgoing,
    /// The session and version the `POST` carried (a resume carries them too).
    session: Option<String>,
    version: Option<String>,
    token: Option<String>,
    challenge: Option<Challenge>,
    /// A `use_dpop_nonce` challenge after the first authorization was given its one retry.
    nonce_retried: bool,
    phase: Phase,
    body: Vec<u8>,
    decoder: sse::Decoder,
    resumes: u32,
    /// Redirects followed so far ([`MAX_REDIRECTS`] at most).
    redirects: u8,
    waited_ms: u64,
    last_error: Option<ClientError>,
    events: VecDeque<Event>,
}

impl Exchange {
    pub(super) fn new(
        endpoint: &Endpoint,
        message: &JsonRpcMessage,
        modern: Option<Vec<(String, String)>>,
    ) -> Self {
        let (request_id, initialize) = match message {
            JsonRpcMessage::Request(r) => (Some(r.id.clone()), r.method == "initialize"),
            _ => (None, false),
        };
        let mut exchange =
            Exchange::of_body(endpoint, message.to_json(), request_id, initialize, modern);
        // A notification is bounded by its sender (the client's timeout); an answer is not.
        exchange.carries_answers = matches!(message, JsonRpcMessage::Response(_));
        exchange
    }

    /// The exchange that `POST`s `body` (a request's id, if it carries one a reply answers).
    pub(super) fn of_body(
        endpoint: &Endpoint,
        body: String,
        request_id: Option<RequestId>,
        initialize: bool,
        modern: Option<Vec<(String, String)>>,
    ) -> Self {
        let post = endpoint.post_request(body.into_bytes(), modern.as_deref());
        let (session, version) = match &modern {
            Some(extra) => (None, header(extra, MCP_PROTOCOL_VERSION).map(str::to_owned)),
            None => (endpoint.session.clone(), endpoint.protocol_version.clone()),
        };
        let mut endpoint = endpoint.clone();
        endpoint.session = None;
        endpoint.protocol_version = None;
        Exchange {
            endpoint,
            carries_answers: false,
            request_id,
            initialize,
            modern: modern.is_some(),
            post,
            session,
            version,
            token: None,
            challenge: None,
            nonce_retried: false,
            phase: Phase::Idle,
            body: Vec::new(),
            decoder: sse::Decoder::new(),
            resumes: 0,
            redirects: 0,
            waited_ms: 0,
            last_error: None,
            events: VecDeque::new(),
        }
    }

    /// The deadline of the whole exchange (send to end of answer, resumes included), counted
    /// from [`Exchange::start`]; the host arms a timer and feeds [`Input::TimedOut`] when it
    /// fires: the endpoint's timeout, else, for a `POST` of answers to the server's requests,
    /// [`ACCEPT_TIMEOUT`](super::ACCEPT_TIMEOUT). `None`: bounded by its sender (a request's or
    /// a notification's: the client's timeout).
    pub fn deadline(&self) -> Option<Duration> {
        self.endpoint
            .timeout
            .or_else(|| self.carries_answers.then_some(super::ACCEPT_TIMEOUT))
    }

    /// The id of the request carried, if the message is a request.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// The session id the `POST` carried.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The last `401` / `403` challenge seen, kept for the caller (e.g. its `WWW-Authenticate`).
    pub fn challenge(&self) -> Option<&Challenge> {
        self.challenge.as_ref()
    }

    /// The next event to act on, in order.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The first step: send the `POST`.
    pub fn start(&mut self) -> Step {
        match self.phase {
            Phase::Idle => {
                self.phase = Phase::Posting;
                Step::Send(self.post.clone())
            }
            _ => self.fail("the exchange was started twice"),
        }
    }

    /// Feed what happened; get the next step.
    pub fn handle(&mut self, input: Input<'_>) -> Step {
        if let Phase::Done(result) = &self.phase {
            return Step::Done(result.clone());
        }
        if let Input::TimedOut = input {
            let text = match self.deadline() {
                Some(limit) => {
                    format!(
                        "the HTTP exchange timed out after {} ms",
                        u64::try_from(limit.as_millis()).unwrap_or(u64::MAX)
                    )
                }
                None => "the HTTP exchange timed out".to_owned(),
            };
            return self.finish(Err(ClientError::Transport(text)));
        }
        match (std::mem::replace(&mut self.phase, Phase::Idle), input) {
            (Phase::Posting, Input::Response { status, headers })
                if redirect::is_followed(status) =>
            {
                match self.redirected(status, headers) {
                    Ok(()) => {
                        self.phase = Phase::Posting;
                        Step::Send(self.post.clone())
                    }
                    Err(error) => self.finish(Err(error)),
                }
            }
            (Phase::Posting, Input::Response { status, headers }) => {
                // A first 401 / 403 asks for authorization; so does, once more, a DPoP nonce
                // challenge to the authorized retry (RFC 9449 §9: the server wants a proof
                // with its nonce, the same token).
                let nonce = header(headers, "dpop-nonce");
                let www = header(headers, WWW_AUTHENTICATE);
                let nonce_challenge = status == 401
                    && nonce.is_some()
                    && www.is_some_and(|w| w.contains("use_dpop_nonce"))
                    && self.challenge.is_some()
                    && !std::mem::replace(&mut self.nonce_retried, true);
                if matches!(status, 401 | 403) && (self.challenge.is_none() || nonce_challenge) {
                    let challenge = Challenge {
                        status,
                        www_authenticate: www.map(str::to_owned),
                        dpop_nonce: nonce.map(str::to_owned),
                    };
                    self.challenge = Some(challenge.clone());
                    self.phase = Phase::Authorizing {
                        status,
                        headers: headers.to_vec(),
                    };
                    return Step::Authorize(challenge);
                }
                if matches!(status, 401 | 403) {
                    self.challenge = Some(Challenge {
                        status,
                        www_authenticate: header(headers, WWW_AUTHENTICATE).map(str::to_owned),
                        dpop_nonce: header(headers, "dpop-nonce").map(str::to_owned),
                    });
                }
                self.read_answer(status, headers)
            }
            (Phase::Posting, Input::Failed(e)) => {
                let text = format!("POST {} failed: {e}", self.endpoint.url);
                self.finish(Err(ClientError::Transport(text)))
            }
            (Phase::Posting, Input::Refused(addr)) => {
                self.finish(Err(ClientError::ConnectionRefused {
                    addr: addr.to_owned(),
                }))
            }
            (Phase::Authorizing { status, headers }, Input::Token(token)) => match token {
                Some(token) => {
                    self.token = Some(token.to_owned());
                    self.post
                        .headers
                        .retain(|(n, _)| !n.eq_ignore_ascii_case(AUTHORIZATION));
                    self.post
                        .headers
                        .push((AUTHORIZATION.to_owned(), format!("Bearer {token}")));
                    self.phase = Phase::Posting;
                    Step::Send(self.post.clone())
                }
                None => self.read_answer(status, &headers),
            },
            (Phase::Body { status, body }, Input::Chunk(chunk)) => {
                if self.body.len() + chunk.len() > MAX_REPLY_BYTES {
                    self.body.clear();
                    if body == Body::ModernError {
                        return self.finish_body(status, body);
                    }
                    return self.finish(Err(ClientError::Transport(format!(
                        "reading the HTTP reply failed: the body is over {MAX_REPLY_BYTES} bytes"
                    ))));
                }
                self.body.extend_from_slice(chunk);
                self.phase = Phase::Body { status, body };
                Step::Read
            }
            (Phase::Body { status, body }, Input::End) => self.finish_body(status, body),
            (Phase::Body { status, body }, Input::Failed(e)) => match body {
                // The error body is best effort: the status alone still tells what failed.
                Body::ModernError => {
                    self.body.clear();
                    self.finish_body(status, body)
                }
                Body::Reply => self.finish(Err(ClientError::Transport(format!(
                    "reading the HTTP reply failed: {e}"
                )))),
            },
            (Phase::Stream, Input::Chunk(chunk)) => self.read_events(chunk),
            (Phase::Stream, Input::End) => {
                self.decoder.finish();
                if self.request_id.is_none() {
                    return self.finish(Ok(()));
                }
                self.last_error = None;
                self.resume()
            }
            (Phase::Stream, Input::Failed(e)) => {
                let error = ClientError::Transport(format!("the SSE stream failed: {e}"));
                if self.request_id.is_none() {
                    return self.finish(Err(error));
                }
                self.last_error = Some(error);
                self.resume()
            }
            (Phase::Waiting, Input::Waited) => {
                self.phase = Phase::Resuming;
                Step::Send(self.resume_request())
            }
            (Phase::Resuming, Input::Response { status, headers })
                if redirect::is_followed(status) =>
            {
                match self.redirected(status, headers) {
                    Ok(()) => {
                        self.phase = Phase::Resuming;
                        Step::Send(self.resume_request())
                    }
                    Err(error) => {
                        self.last_error = Some(error);
                        self.resume()
                    }
                }
            }
            (Phase::Resuming, Input::Response { status, .. }) => {
                if (200..300).contains(&status) {
                    self.phase = Phase::Stream;
                    return Step::Read;
                }
                // A `404` in a session: the session is gone. This request fails, not sent again
                // in a new session (it was received and may have run); the next one finds the
                // session gone at its own `POST` and starts a new one.
                if status == 404 {
                    if let Some(session) = self.session.clone() {
                        let id = self.request_id.as_ref().map(ToString::to_string);
                        return self.fail(&format!(
                            "the session {session} ended while the response to request {} was streamed (the request was received and may have run)",
                            id.unwrap_or_default()
                        ));
                    }
                }
                let error = ClientError::Transport(format!(
                    "resuming with GET answered HTTP {}",
                    status_text(status)
                ));
                // A refusal that asking again gets the same (`400`, `404`, `405`: no `GET`
                // streams, `410`, …) is final: it was asked up to `MAX_RESUMES` times, a second
                // apart. One that may pass is resumed within bounds: `401` / `403` (a token
                // refreshed before the next try), `408`, `409` (a server that still holds the
                // stream's old connection), `425`, `429`, `5xx`.
                let passing = matches!(status, 401 | 403 | 408 | 409 | 425 | 429) || status >= 500;
                if (400..500).contains(&status) && !passing {
                    return self.finish(Err(error));
                }
                self.last_error = Some(error);
                self.resume()
            }
            (Phase::Resuming, Input::Failed(e)) => {
                self.last_error = Some(ClientError::Transport(format!(
                    "resuming with GET failed: {e}"
                )));
                self.resume()
            }
            (Phase::Resuming, Input::Refused(addr)) => {
                self.last_error = Some(ClientError::ConnectionRefused {
                    addr: addr.to_owned(),
                });
                self.resume()
            }
            (phase, input) => {
                let text = format!(
                    "the host fed {} while the exchange was {}",
                    input.name(),
                    phase.name()
                );
                self.fail(&text)
            }
        }
    }

    fn fail(&mut self, text: &str) -> Step {
        self.finish(Err(ClientError::Transport(text.to_owned())))
    }

    fn finish(&mut self, result: Result<(), ClientError>) -> Step {
        self.phase = Phase::Done(result.clone());
        Step::Done(result)
    }

    /// The `GET` that resumes the request's stream after the last event id seen, to where the
    /// `POST` went (after any redirect).
    fn resume_request(&self) -> Outgoing {
        let last = self.decoder.last_event_id();
        let mut get =
            self.endpoint
                .stream_request(self.session.as_deref(), self.version.as_deref(), last);
        get.url.clone_from(&self.post.url);
        if let Some(token) = &self.token {
            get.headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(AUTHORIZATION));
            get.headers
                .push((AUTHORIZATION.to_owned(), format!("Bearer {token}")));
        }
        get
    }

    /// A redirect to follow ([`redirect`]): the exchange's requests go to its target from now
    /// on; an error when it is not followed, or after [`MAX_REDIRECTS`].
    fn redirected(&mut self, status: u16, headers: &[(String, String)]) -> Result<(), ClientError> {
        let url = redirect::target(&self.post.url, status, header(headers, LOCATION))
            .map_err(ClientError::Transport)?;
        if self.redirects >= MAX_REDIRECTS {
            return Err(ClientError::Transport(format!(
                "HTTP {}: more than {MAX_REDIRECTS} redirects (the last to {url})",
                status_text(status)
            )));
        }
        self.redirects += 1;
        if redirect::is_permanent(status) {
            self.events.push_back(Event::Moved(url.clone()));
        }
        self.post.url = url;
        Ok(())
    }

    /// Read the answer to the `POST` (after any authorization step).
    fn read_answer(&mut self, status: u16, headers: &[(String, String)]) -> Step {
        let success = (200..300).contains(&status);
        if self.initialize && success {
            if let Some(id) = header(headers, MCP_SESSION_ID) {
                // Spec (session management): a session ID MUST contain only visible ASCII
                // (0x21–0x7E); another would be sent back altered, or not at all.
                if id.is_empty() || !id.bytes().all(|b| b.is_ascii_graphic()) {
                    let text = format!(
                        "the server's Mcp-Session-Id {id:?} is not a session id (visible ASCII characters, 0x21-0x7E)"
                    );
                    return self.fail(&text);
                }
                self.events.push_back(Event::SessionStarted(id.to_owned()));
            }
        }
        if status == 202 {
            // Accepted: right for a notification or a response, but a request's answer must
            // carry its response (JSON or an event stream); waiting on would only time out.
            if let Some(id) = &self.request_id {
                let text = format!("HTTP 202 Accepted carries no response to request {id}");
                return self.fail(&text);
            }
            return self.finish(Ok(()));
        }
        if self.modern && !success {
            self.phase = Phase::Body {
                status,
                body: Body::ModernError,
            };
            return Step::Read;
        }
        if status == 404 {
            if let Some(session) = self.session.clone() {
                return self.expire(session);
            }
        }
        if success && is_event_stream(header(headers, CONTENT_TYPE)) {
            self.phase = Phase::Stream;
            return Step::Read;
        }
        self.phase = Phase::Body {
            status,
            body: Body::Reply,
        };
        Step::Read
    }

    fn expire(&mut self, session: String) -> Step {
        self.events
            .push_back(Event::SessionExpired(session.clone()));
        self.finish(Err(ClientError::SessionExpired { session }))
    }

    fn finish_body(&mut self, status: u16, kind: Body) -> Step {
        let body = std::mem::take(&mut self.body);
        if kind == Body::ModernError {
            let error = crate::wire::json_text::parse(&body)
                .ok()
                .and_then(|v| v.get("error").cloned())
                .and_then(|e| serde_json::from_value::<ErrorObject>(e).ok());
            return self.finish(Err(ClientError::HttpStatus {
                status,
                error,
                detail: error_summary(status, &body),
            }));
        }
        let value = crate::wire::json_text::parse(&body).ok();
        let answered = match (&value, &self.request_id) {
            (Some(v), Some(id)) => answers(v, id),
            _ => false,
        };
        // A session the server lost, said other than by 404: a 400 that names the session, or a
        // 401 / 403 that carries no `WWW-Authenticate` challenge (so it asks for no credentials,
        // RFC 9110 §15.5.2) and names it — rmcp before 2026-02 answered an unknown session
        // `401 Unauthorized: Session not found`. Either way a new session is the way on.
        let bare_refusal = matches!(status, 401 | 403)
            && self
                .challenge
                .as_ref()
                .is_some_and(|c| c.www_authenticate.is_none());
        if (status == 400 || bare_refusal)
            && !answered
            && speaks_of_a_session(value.as_ref(), &body)
        {
            if let Some(session) = self.session.clone() {
                return self.expire(session);
            }
        }
        let success = (200..300).contains(&status);
        if !success && !answered {
            return self.finish(Err(ClientError::Transport(error_summary(status, &body))));
        }
        match value {
            Some(value) => {
                self.events.push_back(Event::Message(value));
                if !answered && self.request_id.is_some() {
                    return self.finish(Err(ClientError::Transport(format!(
                        "HTTP {}: the reply does not answer the request",
                        status_text(status)
                    ))));
                }
                self.finish(Ok(()))
            }
            None if body.is_empty() && self.request_id.is_none() => self.finish(Ok(())),
            None => self.finish(Err(ClientError::Transport(format!(
                "HTTP {}: the reply is not JSON: {}",
                status_text(status),
                String::from_utf8_lossy(&body[..body.len().min(300)])
            )))),
        }
    }

    fn read_events(&mut self, chunk: &[u8]) -> Step {
        let events = self.decoder.push(chunk);
        // An event over the bound on a request's own stream is dropped whole: the response may
        // have been in it, so the exchange fails now, saying so (it waited out its deadline).
        let over = match &self.request_id {
            Some(id) if self.decoder.over_limit() => Some(ClientError::Transport(format!(
                "the server sent an SSE line over the {}-byte limit on the stream of request {id}; it was dropped (the response may have been in it)",
                self.decoder.max_line()
            ))),
            _ => None,
        };
        for event in events {
            if !event.carries_message() {
                continue; // a priming event, or another type
            }
            match crate::wire::json_text::parse(event.data.as_bytes()) {
                Ok(value) => {
                    let done = self
                        .request_id
                        .as_ref()
                        .is_some_and(|id| answers(&value, id));
                    self.events.push_back(Event::Message(value));
                    if done {
                        return self.finish(Ok(()));
                    }
                }
                Err(e) => match unreadable(event.data.as_bytes()) {
                    // An answer the client cannot read still ends the wait, as an error.
                    Unreadable::Response(value) => {
                        let done = self
                            .request_id
                            .as_ref()
                            .is_some_and(|id| answers(&value, id));
                        self.events.push_back(Event::Message(value));
                        if done {
                            return self.finish(Ok(()));
                        }
                    }
                    Unreadable::Request(_, problem) | Unreadable::Skip(problem) => {
                        self.events.push_back(Event::Problem(format!(
                            "skipped an SSE event that is not JSON or exceeds a parser limit: {e}{}", if problem.is_empty() { String::new() } else { format!(" ({problem})") }
                        )))
                    }
                },
            }
        }
        if let Some(error) = over {
            return self.finish(Err(error));
        }
        self.phase = Phase::Stream;
        Step::Read
    }

    /// The request's stream ended or broke before its response: wait the server's `retry` and
    /// resume with `Last-Event-ID`, within the bounds; else fail with the last error.
    fn resume(&mut self) -> Step {
        let wait = super::reconnect_ms(&self.decoder);
        let resumable = self.decoder.last_event_id().is_some()
            && self.resumes < MAX_RESUMES
            && self.waited_ms.saturating_add(wait) <= MAX_RESUME_WAIT_MS;
        if !resumable {
            let error = self.last_error.take().unwrap_or_else(|| {
                let id = self.request_id.as_ref().map(ToString::to_string);
                ClientError::Transport(format!(
                    "the SSE stream ended without a response to request {}",
                    id.unwrap_or_default()
                ))
            });
            return self.finish(Err(error));
        }
        self.resumes += 1;
        self.waited_ms += wait;
        self.phase = Phase::Waiting;
        Step::Wait(Duration::from_millis(wait))
    }
}
