//! [`Listen`], status texts, header matching.

use std::time::Duration;

use super::*;

#[test]
fn the_get_stream_delivers_resumes_and_stops() {
    let ep = in_session();
    let mut listen = ep.listen();
    let get = sent(listen.start());
    assert_eq!(get.method, Method::Get);
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("last-event-id"), None);
    assert_eq!(get.header("mcp-session-id"), Some("s-1"));
    assert_eq!(
        listen.handle(Input::Response {
            status: 200,
            headers: &[]
        }),
        Step::Read
    );
    let note = b"id: 7\nretry: 0\ndata: \n\nevent: ping\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n\nid: 8\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
    assert_eq!(listen.handle(Input::Chunk(note)), Step::Read);
    assert_eq!(
        listen.handle(Input::End),
        Step::Wait(Duration::from_millis(MIN_RECONNECT_MS)),
        "`retry: 0` waits the floor, not a hot loop"
    );
    // The `ping`-typed event carried nothing: the first message is the `message` one.
    assert!(
        matches!(listen.poll_event(), Some(Event::Message(v)) if v["method"] == "notifications/tools/list_changed")
    );
    let again = sent(listen.handle(Input::Waited));
    assert_eq!(again.header("last-event-id"), Some("8"));
    assert_eq!(listen.last_event_id(), Some("8"));
    // 405: no stream, quietly.
    assert_eq!(
        done(listen.handle(Input::Response {
            status: 405,
            headers: &[]
        })),
        Ok(())
    );
    assert_eq!(listen.poll_event(), None);
}

#[test]
fn the_get_stream_gives_up_when_idle_or_refused() {
    let ep = endpoint();
    let mut listen = ep.listen();
    sent(listen.start());
    let mut rounds = 0;
    let step = loop {
        listen.handle(Input::Response {
            status: 200,
            headers: &[],
        });
        match listen.handle(Input::End) {
            Step::Wait(_) => sent(listen.handle(Input::Waited)),
            other => break other,
        };
        rounds += 1;
        assert!(rounds <= MAX_IDLE_RECONNECTS, "bounded");
    };
    assert_eq!(rounds, MAX_IDLE_RECONNECTS);
    assert_eq!(done(step), Ok(()));
    assert!(
        matches!(listen.poll_event(), Some(Event::Problem(p)) if p.contains("keeps ending empty"))
    );
    let mut listen = ep.listen();
    sent(listen.start());
    done(listen.handle(Input::Response {
        status: 500,
        headers: &[],
    }))
    .unwrap();
    assert_eq!(
        listen.poll_event(),
        Some(Event::Problem(
            "the server's GET stream answered HTTP 500 Internal Server Error".into()
        ))
    );
    let mut listen = ep.listen();
    sent(listen.start());
    done(listen.handle(Input::Failed("refused"))).unwrap();
    assert_eq!(
        listen.poll_event(),
        Some(Event::Problem(
            "the server's GET stream failed: refused".into()
        ))
    );
    let mut listen = ep.listen();
    sent(listen.start());
    done(listen.handle(Input::Refused("127.0.0.1:9"))).unwrap();
    assert_eq!(
        listen.poll_event(),
        Some(Event::Problem(
            "the server's GET stream failed: connection refused: 127.0.0.1:9".into()
        ))
    );
}

#[test]
fn content_types_and_headers_are_matched_without_case() {
    assert!(is_event_stream(Some("Text/Event-Stream; charset=utf-8")));
    assert!(!is_event_stream(Some("application/json")));
    assert!(!is_event_stream(None));
    let h = pairs(&[("MCP-Session-Id", "a")]);
    assert_eq!(header(&h, "mcp-session-id"), Some("a"));
}

#[cfg(feature = "native")]
#[test]
fn status_texts_match_hyper() {
    for code in 100..600u16 {
        let status = hyper::StatusCode::from_u16(code).unwrap();
        assert_eq!(status_text(code), status.to_string(), "{code}");
    }
}
