//! [`Exchange`]: headers, every answer kind, resume, deadline, authorization.

use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn a_legacy_post_carries_the_media_types_caller_headers_session_and_version() {
    let mut ep = in_session();
    let mut ex = ep.exchange(&request(2, "tools/list"), None);
    let post = sent(ex.start());
    assert_eq!(post.method, Method::Post);
    assert_eq!(post.method.as_str(), "POST");
    assert_eq!(post.url, "http://127.0.0.1:9/mcp");
    assert_eq!(
        post.headers,
        pairs(&[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("Authorization", "Bearer caller"),
            ("mcp-session-id", "s-1"),
            ("mcp-protocol-version", "2025-11-25"),
        ])
    );
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(body["method"], "tools/list");
    assert_eq!(ex.session(), Some("s-1"));
    assert_eq!(ex.deadline(), None);
}

#[test]
fn a_modern_post_carries_its_own_headers_and_no_session() {
    let mut ep = in_session();
    let modern = pairs(&[
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
        ("Mcp-Param-Region", "eu"),
    ]);
    let mut ex = ep.exchange(&request(3, "tools/call"), Some(modern.clone()));
    let post = sent(ex.start());
    assert_eq!(post.header("mcp-session-id"), None);
    assert_eq!(post.headers[3..], modern[..]);
    assert_eq!(post.header("mcp-protocol-version"), Some("2026-07-28"));
    // A non-2xx answer is an HttpStatus with the body's JSON-RPC error.
    let headers = pairs(&[("content-type", "application/json")]);
    assert_eq!(
        ex.handle(Input::Response {
            status: 400,
            headers: &headers
        }),
        Step::Read
    );
    let body = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"header mismatch"}}"#;
    ex.handle(Input::Chunk(body));
    match done(ex.handle(Input::End)) {
        Err(ClientError::HttpStatus {
            status,
            error,
            detail,
        }) => {
            assert_eq!(status, 400);
            assert_eq!(error.unwrap().code.0, -32022);
            assert_eq!(detail, "HTTP 400 Bad Request: header mismatch");
        }
        other => panic!("{other:?}"),
    }
    assert!(events(&mut ex).is_empty(), "not delivered");
}

#[test]
fn initialize_forgets_the_old_session_and_close_deletes_it() {
    let mut ep = in_session();
    assert_eq!(ep.session_id(), Some("s-1"));
    let mut again = ep.exchange(&request(9, "initialize"), None);
    assert_eq!(ep.session_id(), None);
    assert_eq!(ep.protocol_version(), None);
    assert_eq!(sent(again.start()).header(MCP_SESSION_ID), None);
    let mut ep = in_session();
    let delete = ep.close().unwrap();
    assert_eq!(delete.method, Method::Delete);
    assert_eq!(delete.header("mcp-session-id"), Some("s-1"));
    assert_eq!(delete.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(delete.header("authorization"), Some("Bearer caller"));
    assert!(delete.body.is_empty());
    assert_eq!(ep.session_id(), None);
    assert_eq!(ep.close(), None, "no session, no DELETE");
}

#[test]
fn a_json_answer_is_delivered_and_must_answer_the_request() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(4, "ping"), None);
    ex.start();
    let headers = pairs(&[("Content-Type", "application/json; charset=utf-8")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(br#"{"jsonrpc":"2.0","id":4,"#));
    ex.handle(Input::Chunk(br#""result":{}}"#));
    assert_eq!(done(ex.handle(Input::End)), Ok(()));
    assert_eq!(
        events(&mut ex),
        [Event::Message(json!({"jsonrpc":"2.0","id":4,"result":{}}))]
    );
    // A leading byte order mark is ignored (RFC 8259 §8.1): it was "the reply is not JSON".
    let mut ex = ep.exchange(&request(9, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(
        b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}",
    ));
    assert_eq!(done(ex.handle(Input::End)), Ok(()));
    assert_eq!(
        events(&mut ex),
        [Event::Message(json!({"jsonrpc":"2.0","id":9,"result":{}}))]
    );
    // An answer to another id is delivered, and the request fails.
    let mut ex = ep.exchange(&request(5, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(br#"{"jsonrpc":"2.0","id":6,"result":{}}"#));
    let err = done(ex.handle(Input::End)).unwrap_err();
    assert_eq!(
        err,
        ClientError::Transport("HTTP 200 OK: the reply does not answer the request".into())
    );
    assert_eq!(events(&mut ex).len(), 1);
    // Not JSON.
    let mut ex = ep.exchange(&request(7, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"<html>"));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::Transport(
            "HTTP 200 OK: the reply is not JSON: <html>".into()
        ))
    );
    // A broken body.
    let mut ex = ep.exchange(&request(8, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    assert_eq!(
        done(ex.handle(Input::Failed("reset"))),
        Err(ClientError::Transport(
            "reading the HTTP reply failed: reset".into()
        ))
    );
}

#[test]
fn a_body_over_the_limit_fails_the_exchange() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(1, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &[],
    });
    let chunk = vec![b' '; MAX_REPLY_BYTES / 2 + 1];
    assert_eq!(ex.handle(Input::Chunk(&chunk)), Step::Read);
    assert!(matches!(
        done(ex.handle(Input::Chunk(&chunk))),
        Err(ClientError::Transport(t)) if t.contains("over 16777216 bytes")
    ));
}

#[test]
fn accepted_to_a_request_fails_it_at_once() {
    let mut ep = endpoint();
    let ping = request(4, "ping");
    let mut ex = ep.exchange(&ping, None);
    ex.start();
    let result = done(ex.handle(Input::Response {
        status: 202,
        headers: &[],
    }));
    match result {
        Err(ClientError::Transport(text)) => {
            assert!(text.contains("202") && text.contains('4'), "{text}")
        }
        other => panic!("a 202 to a request: {other:?}"),
    }
}

#[test]
fn accepted_is_done_and_an_empty_answer_to_a_notification_is_fine() {
    let mut ep = endpoint();
    let note = JsonRpcMessage::Notification(JsonRpcNotification::new("notifications/initialized"));
    let mut ex = ep.exchange(&note, None);
    ex.start();
    assert_eq!(
        done(ex.handle(Input::Response {
            status: 202,
            headers: &[]
        })),
        Ok(())
    );
    let mut ex = ep.exchange(&note, None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &[],
    });
    assert_eq!(done(ex.handle(Input::End)), Ok(()));
    assert!(events(&mut ex).is_empty());
}

#[test]
fn an_sse_answer_is_decoded_across_chunks_until_the_response() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(10, "tools/call"), None);
    ex.start();
    let headers = pairs(&[("content-type", "text/event-stream")]);
    assert_eq!(
        ex.handle(Input::Response {
            status: 200,
            headers: &headers
        }),
        Step::Read
    );
    assert_eq!(
        ex.handle(Input::Chunk(b"id: 1\nretry: 5\ndata: \n\n")),
        Step::Read
    );
    assert_eq!(
        ex.handle(Input::Chunk(
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: not json\n"
        )),
        Step::Read
    );
    // An event of another type carries no message, even one that looks like the answer.
    assert_eq!(
        ex.handle(Input::Chunk(
            b"\nevent: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"other\":1}}\n\n"
        )),
        Step::Read
    );
    assert_eq!(
        ex.handle(Input::Chunk(
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"
        )),
        Step::Read
    );
    assert_eq!(
        done(ex.handle(Input::Chunk(b"10,\"result\":{}}\n\n"))),
        Ok(())
    );
    let evs = events(&mut ex);
    assert_eq!(evs.len(), 3, "{evs:?}");
    assert!(matches!(&evs[0], Event::Message(v) if v["method"] == "notifications/progress"));
    assert!(matches!(&evs[1], Event::Problem(p) if p.contains("not JSON")));
    assert!(
        matches!(&evs[2], Event::Message(v) if v["id"] == 10 && v["result"] == serde_json::json!({}))
    );
    // Done is sticky.
    assert_eq!(done(ex.handle(Input::End)), Ok(()));
}

#[test]
fn not_found_with_a_session_expires_it_and_without_one_is_a_status_error() {
    let mut ep = in_session();
    let mut ex = ep.exchange(&request(2, "tools/list"), None);
    ex.start();
    let err = done(ex.handle(Input::Response {
        status: 404,
        headers: &[],
    }));
    assert_eq!(
        err,
        Err(ClientError::SessionExpired {
            session: "s-1".into()
        })
    );
    let evs = events(&mut ex);
    assert_eq!(evs, [Event::SessionExpired("s-1".into())]);
    assert!(ep.apply(&evs[0]));
    assert_eq!(ep.session_id(), None);
    // No session: the status and the body's message.
    let mut ex = ep.exchange(&request(3, "tools/list"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 404,
        headers: &[],
    });
    ex.handle(Input::Chunk(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#,
    ));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::Transport(
            "HTTP 404 Not Found: Session not found".into()
        ))
    );
}

/// A 401 / 403 without a `WWW-Authenticate` challenge that names the session (rmcp before
/// 2026-02 answered an unknown session `401 Unauthorized: Session not found`) expires the
/// session once no token was given; with a challenge, or naming something else, it stays the
/// status error it was.
#[test]
fn a_bare_401_or_403_that_names_the_session_expires_it() {
    let mut ep = in_session();
    for status in [401, 403] {
        let mut ex = ep.exchange(&request(2, "tools/list"), None);
        ex.start();
        assert!(matches!(
            ex.handle(Input::Response {
                status,
                headers: &[]
            }),
            Step::Authorize(_)
        ));
        assert_eq!(ex.handle(Input::Token(None)), Step::Read);
        ex.handle(Input::Chunk(b"Unauthorized: Session not found"));
        assert_eq!(
            done(ex.handle(Input::End)),
            Err(ClientError::SessionExpired {
                session: "s-1".into()
            }),
            "{status}"
        );
    }
    let challenge = pairs(&[("www-authenticate", r#"Bearer error="invalid_token""#)]);
    for (headers, body) in [
        (&challenge[..], &b"Unauthorized: session token expired"[..]),
        (&[][..], &b"Unauthorized: bad token"[..]),
    ] {
        let mut ex = ep.exchange(&request(3, "tools/list"), None);
        ex.start();
        ex.handle(Input::Response {
            status: 401,
            headers,
        });
        ex.handle(Input::Token(None));
        ex.handle(Input::Chunk(body));
        let err = done(ex.handle(Input::End)).unwrap_err();
        assert!(
            matches!(&err, ClientError::Transport(m) if m.starts_with("HTTP 401 Unauthorized")),
            "{err}"
        );
    }
}

#[test]
fn bad_request_with_a_session_expires_it_only_when_it_says_so() {
    let mut ep = in_session();
    let mut ex = ep.exchange(&request(2, "tools/list"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 400,
        headers: &[],
    });
    ex.handle(Input::Chunk(b"Bad Request: No valid session ID provided"));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::SessionExpired {
            session: "s-1".into()
        })
    );
    // A JSON-RPC error answering the request is delivered instead.
    let mut ex = ep.exchange(&request(3, "tools/call"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 400,
        headers: &[],
    });
    ex.handle(Input::Chunk(
        br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}"#,
    ));
    assert_eq!(done(ex.handle(Input::End)), Ok(()));
    assert!(matches!(&events(&mut ex)[..], [Event::Message(v)] if v["error"]["code"] == -32602));
    // A 400 about something else (its error message, or its text) is that error, and the
    // session stays.
    for body in [
        &br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Unsupported protocol version"}}"#[..],
        b"Bad Request: malformed header",
    ] {
        let mut ex = ep.exchange(&request(4, "tools/list"), None);
        ex.start();
        ex.handle(Input::Response {
            status: 400,
            headers: &[],
        });
        ex.handle(Input::Chunk(body));
        let err = done(ex.handle(Input::End)).unwrap_err();
        assert!(
            matches!(&err, ClientError::Transport(m) if m.starts_with("HTTP 400 Bad Request: ")),
            "{err}"
        );
        assert!(events(&mut ex).is_empty());
    }
    // The JSON-RPC error's message decides, not the rest of the body.
    let mut ex = ep.exchange(&request(5, "tools/list"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 400,
        headers: &[],
    });
    ex.handle(Input::Chunk(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Session not found"}}"#,
    ));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::SessionExpired {
            session: "s-1".into()
        })
    );
}

#[test]
fn other_statuses_are_typed_errors_with_the_body_text() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(1, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 500,
        headers: &[],
    });
    ex.handle(Input::Chunk(b"  boom \n"));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::Transport(
            "HTTP 500 Internal Server Error: boom".into()
        ))
    );
    let mut ex = ep.exchange(&request(1, "ping"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 599,
        headers: &[],
    });
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::Transport(
            "HTTP 599 <unknown status code>".into()
        ))
    );
    let mut ex = ep.exchange(&request(1, "ping"), None);
    assert_eq!(
        done(sent_then(
            ex.start(),
            &mut ex,
            Input::Failed("connection refused")
        )),
        Err(ClientError::Transport(
            "POST http://127.0.0.1:9/mcp failed: connection refused".into()
        ))
    );
    // A refused connection is typed: the same error as the WebSocket transport's.
    let mut ex = ep.exchange(&request(1, "ping"), None);
    assert_eq!(
        done(sent_then(
            ex.start(),
            &mut ex,
            Input::Refused("127.0.0.1:9")
        )),
        Err(ClientError::ConnectionRefused {
            addr: "127.0.0.1:9".into()
        })
    );
}

fn sent_then(first: Step, ex: &mut Exchange, input: Input<'_>) -> Step {
    sent(first);
    ex.handle(input)
}

#[test]
fn unauthorized_asks_for_a_token_keeps_the_challenge_and_retries_once() {
    let mut ep = endpoint();
    let challenge_header =
        r#"Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource""#;
    let headers = pairs(&[("WWW-Authenticate", challenge_header)]);
    // No token: read as a status error; the challenge stays readable.
    let mut ex = ep.exchange(&request(1, "ping"), None);
    ex.start();
    let step = ex.handle(Input::Response {
        status: 401,
        headers: &headers,
    });
    let expected = Challenge {
        status: 401,
        www_authenticate: Some(challenge_header.into()),
        dpop_nonce: None,
    };
    assert_eq!(step, Step::Authorize(expected.clone()));
    assert_eq!(ex.handle(Input::Token(None)), Step::Read);
    ex.handle(Input::Chunk(b"unauthorized"));
    assert_eq!(
        done(ex.handle(Input::End)),
        Err(ClientError::Transport(
            "HTTP 401 Unauthorized: unauthorized".into()
        ))
    );
    assert_eq!(ex.challenge(), Some(&expected));
    // A token: the same POST again with Authorization replaced, once.
    let mut ex = ep.exchange(&request(2, "ping"), None);
    let first = sent(ex.start());
    ex.handle(Input::Response {
        status: 401,
        headers: &headers,
    });
    let retry = sent(ex.handle(Input::Token(Some("t0k"))));
    assert_eq!(retry.body, first.body);
    let auth: Vec<_> = retry
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .collect();
    assert_eq!(auth.len(), 1);
    assert_eq!(auth[0].1, "Bearer t0k");
    // A second 401 is not asked about again.
    assert_eq!(
        ex.handle(Input::Response {
            status: 401,
            headers: &headers
        }),
        Step::Read
    );
    assert!(done(ex.handle(Input::End)).is_err());
}

#[test]
fn a_dpop_nonce_challenge_to_the_authorized_retry_is_asked_about_once_more() {
    let mut ep = endpoint();
    let first = pairs(&[(
        "WWW-Authenticate",
        r#"DPoP resource_metadata="https://rs/prm""#,
    )]);
    let nonce = pairs(&[
        ("WWW-Authenticate", r#"DPoP error="use_dpop_nonce""#),
        ("DPoP-Nonce", "n1"),
    ]);
    let mut ex = ep.exchange(&request(1, "ping"), None);
    sent(ex.start());
    assert!(matches!(
        ex.handle(Input::Response {
            status: 401,
            headers: &first
        }),
        Step::Authorize(_)
    ));
    sent(ex.handle(Input::Token(Some("t"))));
    // The retry is refused for want of the server's nonce: asked once more, with it.
    let step = ex.handle(Input::Response {
        status: 401,
        headers: &nonce,
    });
    let Step::Authorize(challenge) = step else {
        panic!("{step:?}")
    };
    assert_eq!(challenge.dpop_nonce.as_deref(), Some("n1"));
    sent(ex.handle(Input::Token(Some("t"))));
    // A third refusal is the answer.
    assert_eq!(
        ex.handle(Input::Response {
            status: 401,
            headers: &nonce
        }),
        Step::Read
    );
    // A nonce challenge to a first request is an ordinary first challenge.
    let mut ex = ep.exchange(&request(2, "ping"), None);
    sent(ex.start());
    assert!(matches!(
        ex.handle(Input::Response {
            status: 401,
            headers: &nonce
        }),
        Step::Authorize(_)
    ));
}

/// An SSE answer that ends after a priming event (id `ev-1`, retry 10 ms).
fn interrupted(ep: &mut Endpoint, id: i64) -> Exchange {
    let mut ex = ep.exchange(&request(id, "tools/call"), None);
    ex.start();
    let headers = pairs(&[("content-type", "text/event-stream")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    assert_eq!(
        ex.handle(Input::Chunk(b"id: ev-1\nretry: 150\ndata: \n\n")),
        Step::Read
    );
    ex
}

#[test]
fn an_interrupted_stream_is_resumed_with_last_event_id_after_retry() {
    let mut ep = in_session();
    let mut ex = interrupted(&mut ep, 5);
    assert_eq!(
        ex.handle(Input::End),
        Step::Wait(Duration::from_millis(150))
    );
    let get = sent(ex.handle(Input::Waited));
    assert_eq!(get.method, Method::Get);
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("last-event-id"), Some("ev-1"));
    assert_eq!(get.header("mcp-session-id"), Some("s-1"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(get.header("authorization"), Some("Bearer caller"));
    assert!(get.body.is_empty());
    assert_eq!(
        ex.handle(Input::Response {
            status: 200,
            headers: &[]
        }),
        Step::Read
    );
    let answer = b"id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n";
    assert_eq!(done(ex.handle(Input::Chunk(answer))), Ok(()));
    assert!(matches!(&events(&mut ex)[..], [Event::Message(v)] if v["id"] == 5));
}

#[test]
fn a_broken_stream_and_a_failed_resume_are_retried() {
    let mut ep = endpoint();
    let mut ex = interrupted(&mut ep, 5);
    assert_eq!(
        ex.handle(Input::Failed("reset")),
        Step::Wait(Duration::from_millis(150))
    );
    sent(ex.handle(Input::Waited));
    assert_eq!(
        ex.handle(Input::Refused("127.0.0.1:9")),
        Step::Wait(Duration::from_millis(150))
    );
    sent(ex.handle(Input::Waited));
    assert_eq!(
        ex.handle(Input::Response {
            status: 503,
            headers: &[]
        }),
        Step::Wait(Duration::from_millis(150))
    );
    // Give up at the bound with the last error.
    let mut step = Step::Read;
    for _ in 0..MAX_RESUMES {
        match ex.handle(Input::Waited) {
            Step::Send(_) => {}
            other => panic!("{other:?}"),
        }
        step = ex.handle(Input::Response {
            status: 503,
            headers: &[],
        });
        if matches!(step, Step::Done(_)) {
            break;
        }
    }
    assert_eq!(
        done(step),
        Err(ClientError::Transport(
            "resuming with GET answered HTTP 503 Service Unavailable".into()
        ))
    );
}

/// A resuming `GET` refused for good ends the resumes at once (each was asked again up to
/// `MAX_RESUMES` times, a second apart): `405`, `400` fail with the status; a `404` in a session
/// fails the request as ended with its session (not sent again in a new one: it was received
/// and may have run; the next request's own `POST` renews the session); what may pass (`401`, `403`, `409`, `429`) is asked again.
#[test]
fn a_refused_resume_is_final_and_a_404_in_a_session_expires_it() {
    for (status, in_session_) in [(405, false), (400, false), (404, true)] {
        let mut ep = if in_session_ {
            in_session()
        } else {
            endpoint()
        };
        let mut ex = interrupted(&mut ep, 5);
        assert!(matches!(ex.handle(Input::End), Step::Wait(_)));
        sent(ex.handle(Input::Waited));
        let step = ex.handle(Input::Response {
            status,
            headers: &[],
        });
        match status {
            404 => {
                let error = done(step).unwrap_err();
                assert!(
                    matches!(&error, ClientError::Transport(m) if m.contains("the session s-1 ended while the response to request 5 was streamed")),
                    "{error}"
                );
                assert!(events(&mut ex).is_empty());
            }
            _ => assert_eq!(
                done(step),
                Err(ClientError::Transport(format!(
                    "resuming with GET answered HTTP {}",
                    crate::http::exchange::status::status_text(status)
                )))
            ),
        }
    }
    for status in [401, 403, 409, 429] {
        let mut ep = endpoint();
        let mut ex = interrupted(&mut ep, 5);
        ex.handle(Input::End);
        sent(ex.handle(Input::Waited));
        let again = ex.handle(Input::Response {
            status,
            headers: &[],
        });
        assert!(matches!(again, Step::Wait(_)), "{status}: {again:?}");
    }
}

/// An event over the decoder's bound on the request's stream fails the exchange at once,
/// saying so (it was dropped, and the request waited out its deadline on a stream kept open).
#[test]
fn an_event_over_the_limit_on_the_requests_stream_fails_it_at_once() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(7, "tools/call"), None);
    ex.start();
    let headers = pairs(&[("content-type", "text/event-stream")]);
    assert_eq!(
        ex.handle(Input::Response {
            status: 200,
            headers: &headers,
        }),
        Step::Read
    );
    let mut huge = b"data: ".to_vec();
    huge.resize(crate::wire::sse::DEFAULT_MAX_LINE_BYTES + 16, b'x');
    let error = done(ex.handle(Input::Chunk(&huge))).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("an SSE line over the 67108864-byte limit on the stream of request 7"),
        "{error}"
    );
}

/// A session id of other characters than visible ASCII is refused at `initialize` (spec,
/// session management): a space, a non-ASCII letter (dropped by the native host's header
/// reading, later requests went without a session), an empty one.
#[test]
fn a_session_id_that_is_not_visible_ascii_fails_the_initialize() {
    for id in ["abc def", "caf\u{e9}", "", "tab\there"] {
        let mut ep = endpoint();
        let mut init = ep.exchange(&request(1, "initialize"), None);
        init.start();
        let headers = pairs(&[("content-type", "application/json"), ("mcp-session-id", id)]);
        let step = init.handle(Input::Response {
            status: 200,
            headers: &headers,
        });
        let error = done(step).unwrap_err();
        assert!(
            error.to_string().contains("is not a session id"),
            "{id:?}: {error}"
        );
        assert!(events(&mut init).is_empty(), "{id:?}");
    }
}

#[test]
fn a_stream_that_never_answers_is_resumed_a_bounded_number_of_times() {
    let mut ep = endpoint();
    let mut ex = interrupted(&mut ep, 6);
    let mut resumes = 0;
    let mut step = ex.handle(Input::End);
    while let Step::Wait(_) = step {
        sent(ex.handle(Input::Waited));
        resumes += 1;
        ex.handle(Input::Response {
            status: 200,
            headers: &[],
        });
        ex.handle(Input::Chunk(b"id: again\ndata: \n\n"));
        step = ex.handle(Input::End);
        assert!(resumes <= MAX_RESUMES, "bounded");
    }
    assert_eq!(resumes, MAX_RESUMES);
    assert_eq!(
        done(step),
        Err(ClientError::Transport(
            "the SSE stream ended without a response to request 6".into()
        ))
    );
}

#[test]
fn the_resume_wait_is_bounded_and_a_stream_without_an_id_is_not_resumed() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(1, "tools/call"), None);
    ex.start();
    let headers = pairs(&[("content-type", "text/event-stream")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"retry: 10\ndata: \n\n"));
    assert!(
        matches!(done(ex.handle(Input::End)), Err(ClientError::Transport(t)) if t.contains("without a response"))
    );
    // A retry longer than the whole budget is not waited.
    let mut ex = ep.exchange(&request(2, "tools/call"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    let long = format!("id: x\nretry: {}\ndata: \n\n", MAX_RESUME_WAIT_MS + 1);
    ex.handle(Input::Chunk(long.as_bytes()));
    assert!(done(ex.handle(Input::End)).is_err());
    // No retry: the default delay.
    let mut ex = ep.exchange(&request(3, "tools/call"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"id: y\ndata: \n\n"));
    assert_eq!(
        ex.handle(Input::End),
        Step::Wait(Duration::from_millis(DEFAULT_RECONNECT_MS))
    );
    // `retry: 0` (or any shorter one) waits the floor, not a hot loop.
    let mut ex = ep.exchange(&request(4, "tools/call"), None);
    ex.start();
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"id: z\nretry: 0\ndata: \n\n"));
    assert_eq!(
        ex.handle(Input::End),
        Step::Wait(Duration::from_millis(MIN_RECONNECT_MS))
    );
}

#[test]
fn the_deadline_is_a_value_the_host_enforces() {
    let mut ep = Endpoint::new("http://h/mcp", Vec::new(), Some(Duration::from_millis(250)));
    let mut ex = ep.exchange(&request(1, "tools/call"), None);
    assert_eq!(ex.deadline(), Some(Duration::from_millis(250)));
    ex.start();
    // The timer may fire in any phase: here while waiting to resume.
    let headers = pairs(&[("content-type", "text/event-stream")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"id: 1\nretry: 50\ndata: \n\n"));
    assert!(matches!(ex.handle(Input::End), Step::Wait(_)));
    let timed_out = Err(ClientError::Transport(
        "the HTTP exchange timed out after 250 ms".into(),
    ));
    assert_eq!(done(ex.handle(Input::TimedOut)), timed_out);
    // Anything later gets the same outcome.
    assert_eq!(done(ex.handle(Input::Waited)), timed_out);
    // While the POST is in flight.
    let mut ex = ep.exchange(&request(2, "ping"), None);
    ex.start();
    assert_eq!(done(ex.handle(Input::TimedOut)), timed_out);
    // Without an endpoint timeout: answers to the server are bounded by ACCEPT_TIMEOUT; a
    // request or a notification by its sender (the client's own timeout, which may be longer).
    let mut ep = Endpoint::new("http://h/mcp", Vec::new(), None);
    let answer = JsonRpcMessage::Response(crate::wire::jsonrpc::JsonRpcResponse::result(
        crate::wire::jsonrpc::RequestId::from(7),
        json!({}),
    ));
    assert_eq!(
        ep.exchange(&answer, None).deadline(),
        Some(crate::http::exchange::ACCEPT_TIMEOUT)
    );
    let JsonRpcMessage::Response(response) = answer else {
        unreachable!()
    };
    let batch = crate::wire::jsonrpc::JsonRpcBatchResponse::new(vec![response]).unwrap();
    assert_eq!(
        ep.exchange_batch(&batch).deadline(),
        Some(crate::http::exchange::ACCEPT_TIMEOUT)
    );
    let notification = JsonRpcMessage::Notification(
        crate::wire::jsonrpc::JsonRpcNotification::new("notifications/initialized"),
    );
    assert_eq!(ep.exchange(&notification, None).deadline(), None);
    assert_eq!(ep.exchange(&request(3, "ping"), None).deadline(), None);
}

#[test]
fn inputs_out_of_order_fail_the_exchange_without_a_panic() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(1, "ping"), None);
    assert!(done(ex.handle(Input::Chunk(b"x"))).is_err());
    let mut ex = ep.exchange(&request(1, "ping"), None);
    ex.start();
    assert!(done(ex.start()).is_err());
}

#[test]
fn a_redirect_on_the_origin_resends_the_post_there_and_resumes_there() {
    let mut ep = in_session();
    let mut ex = ep.exchange(&request(7, "tools/call"), None);
    let first = sent(ex.start());
    let moved = pairs(&[("location", "/v2/mcp")]);
    let again = sent(ex.handle(Input::Response {
        status: 308,
        headers: &moved,
    }));
    assert_eq!(again.url, "http://127.0.0.1:9/v2/mcp");
    assert_eq!((again.method, &again.body), (Method::Post, &first.body));
    assert_eq!(again.headers, first.headers);
    // A 308 moves the endpoint: later requests and the DELETE go there at once.
    let moved_to = std::iter::from_fn(|| ex.poll_event()).find_map(|e| match e {
        Event::Moved(url) => Some(url),
        _ => None,
    });
    assert_eq!(moved_to.as_deref(), Some("http://127.0.0.1:9/v2/mcp"));
    let mut later = ep.clone();
    assert!(later.apply(&Event::Moved(moved_to.unwrap())));
    let delete = later.close().unwrap();
    assert_eq!(delete.url, "http://127.0.0.1:9/v2/mcp");
    // The DELETE follows a redirect of its own (same origin only).
    let there = delete
        .redirected(307, &pairs(&[("location", "/v3/mcp")]))
        .unwrap();
    assert_eq!(
        (there.url.as_str(), &there.headers),
        ("http://127.0.0.1:9/v3/mcp", &delete.headers)
    );
    assert!(delete
        .redirected(307, &pairs(&[("location", "http://other/mcp")]))
        .is_none());
    assert!(delete.redirected(200, &[]).is_none());
    // The stream breaks: the resuming GET goes where the POST went.
    let headers = pairs(&[("content-type", "text/event-stream")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    ex.handle(Input::Chunk(b"id: e1\nretry: 150\ndata: \n\n"));
    assert!(matches!(ex.handle(Input::End), Step::Wait(_)));
    let get = sent(ex.handle(Input::Waited));
    assert_eq!(
        (get.method, get.url.as_str()),
        (Method::Get, "http://127.0.0.1:9/v2/mcp")
    );
    // A 303 (another resource to GET) is not followed.
    let mut ex = ep.exchange(&request(8, "tools/call"), None);
    ex.start();
    // A temporary redirect is followed for its request only.
    let mut once = ep.exchange(&request(9, "tools/call"), None);
    once.start();
    let temporary = pairs(&[("location", "/tmp/mcp")]);
    once.handle(Input::Response {
        status: 307,
        headers: &temporary,
    });
    assert!(!std::iter::from_fn(|| once.poll_event()).any(|e| matches!(e, Event::Moved(_))));
    let see_other = pairs(&[("location", "/elsewhere")]);
    ex.handle(Input::Response {
        status: 303,
        headers: &see_other,
    });
    let err = done(ex.handle(Input::End)).unwrap_err();
    assert!(err.to_string().contains("303"), "{err}");
}

/// A failed answer's JSON-RPC error is read past a leading byte order mark (RFC 8259 §8.1):
/// its message is the summary, not the raw bytes.
#[test]
fn an_error_body_with_a_byte_order_mark_is_summarized_by_its_message() {
    let body = b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"boom\"}}";
    let summary = crate::http::exchange::error_summary(500, body);
    assert!(summary.ends_with(": boom"), "{summary}");
}

/// An SSE event whose JSON starts with a byte order mark (a server's encoder put it in the
/// data, past the stream's start, where SSE drops one) is read as the message: the request's
/// answer, not "an SSE event that is not JSON" and a wait for an answer that came.
#[test]
fn an_sse_event_with_a_byte_order_mark_before_its_json_is_read() {
    let mut ep = endpoint();
    let mut ex = ep.exchange(&request(11, "ping"), None);
    ex.start();
    let headers = pairs(&[("content-type", "text/event-stream")]);
    ex.handle(Input::Response {
        status: 200,
        headers: &headers,
    });
    let step = ex.handle(Input::Chunk(
        "data: \u{feff}{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}\n\n".as_bytes(),
    ));
    assert_eq!(done(step), Ok(()));
    assert_eq!(
        events(&mut ex),
        [Event::Message(json!({"jsonrpc":"2.0","id":11,"result":{}}))]
    );
}
