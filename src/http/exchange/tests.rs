//! The client exchange as pure data: inputs in, steps and events out ([`post`]: the exchange of
//! one message; [`listen`]: the GET stream, and the shared rules).

mod listen;
mod post;

use super::*;
use crate::client::ClientError;
use crate::http::headers::MCP_SESSION_ID;
use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcNotification, JsonRpcRequest};

fn endpoint() -> Endpoint {
    Endpoint::new(
        "http://127.0.0.1:9/mcp",
        vec![("Authorization".into(), "Bearer caller".into())],
        None,
    )
}

fn request(id: i64, method: &str) -> JsonRpcMessage {
    JsonRpcMessage::Request(JsonRpcRequest::new(id, method))
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

fn sent(step: Step) -> Outgoing {
    match step {
        Step::Send(out) => out,
        other => panic!("expected a Send, got {other:?}"),
    }
}

fn done(step: Step) -> Result<(), ClientError> {
    match step {
        Step::Done(result) => result,
        other => panic!("expected Done, got {other:?}"),
    }
}

fn events(ex: &mut Exchange) -> Vec<Event> {
    std::iter::from_fn(|| ex.poll_event()).collect()
}

/// An endpoint that went through `initialize` (session `s-1`, version `2025-11-25`).
fn in_session() -> Endpoint {
    let mut ep = endpoint();
    let mut init = ep.exchange(&request(1, "initialize"), None);
    let post = sent(init.start());
    assert_eq!(post.header(MCP_SESSION_ID), None);
    let headers = pairs(&[
        ("content-type", "application/json"),
        ("Mcp-Session-Id", "s-1"),
    ]);
    assert_eq!(
        init.handle(Input::Response {
            status: 200,
            headers: &headers
        }),
        Step::Read
    );
    let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(init.handle(Input::Chunk(body)), Step::Read);
    assert_eq!(done(init.handle(Input::End)), Ok(()));
    let evs = events(&mut init);
    assert_eq!(evs[0], Event::SessionStarted("s-1".into()));
    assert!(matches!(&evs[1], Event::Message(v) if v["id"] == 1));
    assert!(ep.apply(&evs[0]));
    assert!(!ep.apply(&evs[1]));
    ep.set_protocol_version("2025-11-25");
    ep
}
