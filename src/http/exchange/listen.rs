//! [`Listen`]: the server's own `GET` event stream (spec 2025-11-25
//! [Listening for Messages from the Server](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server)),
//! resumed with `Last-Event-ID` after each end.

use std::collections::VecDeque;
use std::time::Duration;

use super::redirect::{self, MAX_REDIRECTS};
use super::{header, status::status_text, Endpoint, Event, Input, Step, MAX_IDLE_RECONNECTS};
#[cfg(doc)]
use super::{DEFAULT_RECONNECT_MS, MIN_RECONNECT_MS};
use crate::http::headers::LOCATION;
use crate::wire::sse;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Requesting,
    Reading,
    Waiting,
    Done,
}

/// The machine of the server's `GET` stream, built by [`Endpoint::listen`]: [`Listen::start`]
/// sends the `GET`; a `405` ends it quietly (the server offers no stream); a `2xx` body's events
/// become [`Event::Message`]s; when the body ends (or breaks) the stream is resumed with
/// `Last-Event-ID` after the server's `retry` (at least [`MIN_RECONNECT_MS`], default
/// [`DEFAULT_RECONNECT_MS`]); after
/// [`MAX_IDLE_RECONNECTS`] resumptions in a row that bring no event, any other status or a
/// failed send, it ends with an [`Event::Problem`]. It never times out: the host stops it
/// (drops it) on close.
#[derive(Debug)]
pub struct Listen {
    endpoint: Endpoint,
    phase: Phase,
    decoder: sse::Decoder,
    idle: u32,
    got: bool,
    events: VecDeque<Event>,
    /// Where a redirect sent the stream (the endpoint's URL until one does).
    url: Option<String>,
    redirects: u8,
}

impl Listen {
    pub(super) fn new(endpoint: &Endpoint) -> Self {
        Listen {
            endpoint: endpoint.clone(),
            phase: Phase::Idle,
            decoder: sse::Decoder::new(),
            idle: 0,
            got: false,
            events: VecDeque::new(),
            url: None,
            redirects: 0,
        }
    }

    /// The next event to act on, in order.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The last event id seen (sent as `Last-Event-ID` on the next `GET`).
    pub fn last_event_id(&self) -> Option<&str> {
        self.decoder.last_event_id()
    }

    /// The first step: send the `GET`.
    pub fn start(&mut self) -> Step {
        if self.phase != Phase::Idle {
            return self.stop(Some("the GET stream was started twice".into()));
        }
        self.send()
    }

    fn send(&mut self) -> Step {
        self.phase = Phase::Requesting;
        let endpoint = &self.endpoint;
        let mut get = endpoint.stream_request(
            endpoint.session_id(),
            endpoint.protocol_version(),
            self.decoder.last_event_id(),
        );
        if let Some(url) = &self.url {
            get.url.clone_from(url);
        }
        Step::Send(get)
    }

    fn stop(&mut self, problem: Option<String>) -> Step {
        if let Some(problem) = problem {
            self.events.push_back(Event::Problem(problem));
        }
        self.phase = Phase::Done;
        Step::Done(Ok(()))
    }

    /// Feed what happened; get the next step.
    pub fn handle(&mut self, input: Input<'_>) -> Step {
        match (self.phase, input) {
            (Phase::Done, _) | (_, Input::TimedOut) => self.stop(None),
            (Phase::Requesting, Input::Response { status: 405, .. }) => self.stop(None),
            (Phase::Requesting, Input::Response { status, headers })
                if redirect::is_followed(status) =>
            {
                let from = self.url.as_deref().unwrap_or(&self.endpoint.url);
                match redirect::target(from, status, header(headers, LOCATION)) {
                    Ok(url) if self.redirects < MAX_REDIRECTS => {
                        self.redirects += 1;
                        if redirect::is_permanent(status) {
                            self.events.push_back(Event::Moved(url.clone()));
                        }
                        self.url = Some(url);
                        self.send()
                    }
                    Ok(url) => self.stop(Some(format!(
                        "the server's GET stream: more than {MAX_REDIRECTS} redirects (the last to {url})"
                    ))),
                    Err(text) => self.stop(Some(format!("the server's GET stream: {text}"))),
                }
            }
            (Phase::Requesting, Input::Response { status, .. }) if (200..300).contains(&status) => {
                self.got = false;
                self.phase = Phase::Reading;
                Step::Read
            }
            (Phase::Requesting, Input::Response { status, .. }) => self.stop(Some(format!(
                "the server's GET stream answered HTTP {}",
                status_text(status)
            ))),
            (Phase::Requesting, Input::Failed(e)) => {
                self.stop(Some(format!("the server's GET stream failed: {e}")))
            }
            (Phase::Requesting, Input::Refused(addr)) => self.stop(Some(format!(
                "the server's GET stream failed: connection refused: {addr}"
            ))),
            (Phase::Reading, Input::Chunk(chunk)) => {
                for event in self.decoder.push(chunk) {
                    self.got = true;
                    if !event.carries_message() {
                        continue; // a priming event, or another type
                    }
                    self.events
                        .push_back(match crate::wire::json_text::parse(event.data.as_bytes()) {
                            Ok(value) => Event::Message(value),
                            Err(e) => match crate::client::unreadable(event.data.as_bytes()) {
                                // A reply the client cannot read still fails its request.
                                crate::client::Unreadable::Response(value) => Event::Message(value),
                                crate::client::Unreadable::Request(_, problem)
                                | crate::client::Unreadable::Skip(problem) => {
                                    Event::Problem(format!("skipped an SSE event that is not JSON or exceeds a parser limit: {e}{}", if problem.is_empty() { String::new() } else { format!(" ({problem})") }))
                                }
                            },
                        });
                }
                Step::Read
            }
            // A broken body ends like a closed one: resume it.
            (Phase::Reading, Input::End | Input::Failed(_)) => {
                self.decoder.finish();
                self.idle = if self.got { 0 } else { self.idle + 1 };
                if self.idle > MAX_IDLE_RECONNECTS {
                    return self.stop(Some(
                        "the server's GET stream keeps ending empty; stopped".into(),
                    ));
                }
                self.phase = Phase::Waiting;
                let wait = super::reconnect_ms(&self.decoder);
                Step::Wait(Duration::from_millis(wait))
            }
            (Phase::Waiting, Input::Waited) => self.send(),
            (phase, input) => self.stop(Some(format!(
                "the host fed {} while the GET stream was {phase:?}",
                input.name()
            ))),
        }
    }
}
