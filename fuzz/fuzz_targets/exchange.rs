//! The client's Streamable HTTP machines (`orkestrel_mcp::http::exchange`): an `Exchange` (the
//! `POST` of one message and the reading of its answer) or a `Listen` (the server's `GET`
//! stream), fed an arbitrary sequence of `Input`s — mostly the kind the step asks for (a
//! status with headers, body chunks, the end, failures, waits, tokens, the deadline), sometimes
//! any kind. When the input runs out the host plays a server that answers `200` event streams
//! with nothing in them. Whatever the sequence: no panic; the machine is `Done` within a bounded
//! number of steps (the resume and reconnect limits bound it); once done it stays done; an
//! exchange of a request that ends `Ok` delivered a message answering that request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::http::exchange::{answers, Endpoint, Event, Input, Machine, Step};
use orkestrel_mcp::wire::jsonrpc::{JsonRpcMessage, RequestId};
use serde_json::json;

/// Steps a machine may take after the input ran out (20 resumes of 3 steps each, plus slack).
const AFTER_INPUT: usize = 200;

/// The input bytes, read from the front.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
}

const STATUSES: [u16; 12] = [200, 202, 204, 400, 401, 403, 404, 405, 408, 413, 500, 503];
const TYPES: [&str; 4] = [
    "application/json",
    "text/event-stream",
    "text/event-stream; charset=utf-8",
    "text/plain",
];

fn headers(b: &mut Bytes, flags: u8) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if flags & 0x10 == 0 {
        out.push((
            "Content-Type".into(),
            TYPES[usize::from(flags & 3)].to_owned(),
        ));
    }
    if flags & 0x20 != 0 {
        let n = usize::from(b.byte().unwrap_or(0) % 16);
        let id = String::from_utf8_lossy(b.take(n)).into_owned();
        out.push(("mcp-session-id".into(), id));
    }
    if flags & 0x40 != 0 {
        out.push((
            "www-authenticate".into(),
            "Bearer resource_metadata=\"x\"".into(),
        ));
    }
    out
}

/// The next input, read from `b`, for a machine that asked for `step`; `None` when `b` is empty.
fn next_input(
    b: &mut Bytes,
    step: &Step,
    chunk: &mut Vec<u8>,
    head: &mut Vec<(String, String)>,
) -> Option<Kind> {
    let op = b.byte()?;
    // The high bit: any kind, whatever the step asked for.
    let kind = if op & 0x80 != 0 {
        op & 7
    } else {
        match step {
            Step::Send(_) => {
                if op & 0x0f == 0x0f {
                    5 // Failed
                } else {
                    0 // Response
                }
            }
            Step::Read => match op & 0x0f {
                0 => 2, // End
                1 => 5, // Failed
                _ => 1, // Chunk
            },
            Step::Wait(_) => {
                if op & 0x0f == 0x0f {
                    6
                } else {
                    3
                }
            }
            Step::Authorize(_) => 4,
            Step::Done(_) => 2,
        }
    };
    Some(match kind {
        0 => {
            let status = if op & 0x40 != 0 {
                let hi = b.byte().unwrap_or(0);
                let lo = b.byte().unwrap_or(0);
                u16::from_be_bytes([hi, lo])
            } else {
                STATUSES[usize::from(op & 0x0f) % STATUSES.len()]
            };
            let flags = b.byte().unwrap_or(1);
            *head = headers(b, flags);
            Kind::Response(status)
        }
        1 => {
            let n = usize::from(b.byte().unwrap_or(0));
            chunk.clear();
            chunk.extend_from_slice(b.take(n));
            Kind::Chunk
        }
        2 => Kind::End,
        3 => Kind::Waited,
        4 => Kind::Token(op & 0x10 != 0),
        5 => Kind::Failed,
        _ => Kind::TimedOut,
    })
}

enum Kind {
    Response(u16),
    Chunk,
    End,
    Waited,
    Token(bool),
    Failed,
    TimedOut,
}

/// What an empty, well-behaved server does once the input ran out: `200` event streams that
/// end at once, waits that pass, no token.
fn fallback(step: &Step) -> Kind {
    match step {
        Step::Send(_) => Kind::Response(200),
        Step::Read => Kind::End,
        Step::Wait(_) => Kind::Waited,
        Step::Authorize(_) => Kind::Token(false),
        Step::Done(_) => Kind::End,
    }
}

fn message(selector: u8) -> JsonRpcMessage {
    let value = match selector % 6 {
        0 => json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        1 => {
            json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
        }
        2 => json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        3 => json!({"jsonrpc":"2.0","id":"s-1","result":{}}),
        4 => {
            json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{}}})
        }
        _ => json!({"jsonrpc":"2.0","id":2,"method":"ping"}),
    };
    JsonRpcMessage::from_value(value).expect("a valid message")
}

fn drive(machine: &mut dyn Machine, first: Step, b: &mut Bytes, request: Option<&RequestId>) {
    let mut step = first;
    let mut answered = false;
    let mut chunk = Vec::new();
    let mut head: Vec<(String, String)> = Vec::new();
    let mut after = 0usize;
    let mut steps = 0usize;
    loop {
        while let Some(event) = machine.poll_event() {
            if let (Event::Message(value), Some(id)) = (&event, request) {
                answered |= answers(value, id);
            }
        }
        if let Step::Done(result) = &step {
            if let (Ok(()), Some(_)) = (result, request) {
                assert!(
                    answered,
                    "the exchange of a request ended Ok with no answer"
                );
            }
            // Done stays done.
            for input in [Input::End, Input::Waited, Input::TimedOut] {
                assert!(
                    matches!(machine.handle(input), Step::Done(_)),
                    "Done did not stay done"
                );
            }
            return;
        }
        steps += 1;
        let kind = match next_input(b, &step, &mut chunk, &mut head) {
            Some(kind) => kind,
            None => {
                after += 1;
                assert!(
                    after <= AFTER_INPUT,
                    "not done {AFTER_INPUT} steps after the input ran out (at {step:?})"
                );
                if matches!(step, Step::Send(_)) {
                    head = vec![("content-type".into(), "text/event-stream".into())];
                }
                fallback(&step)
            }
        };
        let input = match kind {
            Kind::Response(status) => Input::Response {
                status,
                headers: &head,
            },
            Kind::Chunk => Input::Chunk(&chunk),
            Kind::End => Input::End,
            Kind::Waited => Input::Waited,
            Kind::Token(true) => Input::Token(Some("token")),
            Kind::Token(false) => Input::Token(None),
            Kind::Failed => Input::Failed("broken"),
            Kind::TimedOut => Input::TimedOut,
        };
        step = machine.handle(input);
        assert!(steps < 1_000_000, "unbounded");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let flags = b.byte().unwrap_or(0);
    let mut endpoint = Endpoint::new("http://127.0.0.1:1/mcp", vec![], None);
    if flags & 0x10 != 0 {
        endpoint.apply(&Event::SessionStarted("sid".into()));
        endpoint.set_protocol_version("2025-11-25");
    }
    if flags & 0x80 != 0 {
        let mut listen = endpoint.listen();
        let first = listen.start();
        drive(&mut listen, first, &mut b, None);
    } else {
        let message = message(flags);
        let modern = (flags & 0x20 != 0).then(|| {
            vec![
                ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
                ("Mcp-Method".to_owned(), "tools/list".to_owned()),
            ]
        });
        let mut exchange = endpoint.exchange(&message, modern);
        let request = exchange.request_id().cloned();
        let first = exchange.start();
        drive(&mut exchange, first, &mut b, request.as_ref());
    }
});
