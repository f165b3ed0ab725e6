//! The stdio server through the real binary: framing, bad input, concurrency, EOF.
#![cfg(feature = "native")]

mod support;

use std::time::Duration;

use serde_json::json;
use support::server::ChildServer;
use support::DEADLINE;

fn spawn() -> ChildServer {
    ChildServer::spawn(&["serve", "--stdio"])
}

/// A stdio server past the handshake.
async fn ready() -> ChildServer {
    let mut s = spawn();
    s.handshake().await;
    s
}

#[tokio::test]
async fn initialize_and_call_the_builtin_tools() {
    let mut s = spawn();
    s.write(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#).await;
    let init = s.read_json().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "orkestrel-mcp");
    s.write(
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}
"#,
    )
    .await;
    let add = s.read_json().await;
    assert_eq!(add["id"], 2, "the notification got no reply");
    assert_eq!(add["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(add["result"]["content"][0]["text"], "5");
    s.write(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{"message":"boom"}}}
"#).await;
    let fail = s.read_json().await;
    assert_eq!(
        fail["result"],
        json!({"content":[{"type":"text","text":"boom"}],"isError":true})
    );
}

#[tokio::test]
async fn utf8_split_across_writes_crlf_bom_and_blank_lines() {
    let mut s = ready().await;
    let line = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"héllo ✓\"}}}\r\n";
    let bytes = line.as_bytes();
    let cut = line.find('é').unwrap() + 1; // inside the two-byte 'é'
    s.write(b"\n\r\n   \n").await;
    s.write(&bytes[..cut]).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.write(&bytes[cut..]).await;
    let reply = s.read_json().await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["content"][0]["text"], "héllo ✓");
}

/// A line that is not JSON gets `-32700` (JSON-RPC 2.0 §5.1): id `null`, or the id of a whole
/// request that starts it; a response and a notification whose only fault is its `params` get
/// nothing; an invalid request its error (an id-less object that is no message: id `null`).
#[tokio::test]
async fn junk_lines_get_a_parse_error_responses_nothing_and_invalid_requests_theirs() {
    let mut s = spawn();
    s.write(b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[1]}\n{\"jsonrpc\":\"2.0\",\"method\":5}\n").await;
    let parse = s.read_json().await;
    assert_eq!(
        (parse["error"]["code"].clone(), parse["id"].clone()),
        (json!(-32700), json!(null))
    );
    let no_message = s.read_json().await;
    assert_eq!(
        (
            no_message["error"]["code"].clone(),
            no_message["id"].clone()
        ),
        (json!(-32600), json!(null))
    );
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n")
        .await;
    let invalid = s.read_json().await;
    assert_eq!(
        (invalid["error"]["code"].clone(), invalid["id"].clone()),
        (json!(-32600), json!(null))
    );
    s.write(b"\xff\xfe\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"} trailing\n")
        .await;
    let not_utf8 = s.read_json().await;
    assert_eq!(
        (not_utf8["error"]["code"].clone(), not_utf8["id"].clone()),
        (json!(-32700), json!(null))
    );
    let trailing = s.read_json().await;
    assert_eq!(
        (trailing["error"]["code"].clone(), trailing["id"].clone()),
        (json!(-32700), json!(8))
    );
    s.write(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n").await;
    let batch = s.read_json().await;
    assert_eq!(batch["error"]["code"], -32600);
    let ping = s.read_json().await;
    assert_eq!(ping, json!({"jsonrpc":"2.0","id":"p","result":{}}));
}

#[tokio::test]
async fn lines_of_several_megabytes_work() {
    let mut s = ready().await;
    let text = "x".repeat(5 * 1024 * 1024);
    let req = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":text}}});
    s.write(format!("{req}\n").as_bytes()).await;
    let reply = s.read_json().await;
    assert_eq!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .len(),
        text.len()
    );
}

#[tokio::test]
async fn a_slow_call_does_not_hold_up_a_later_ping() {
    let mut s = ready().await;
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":1500}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await;
    assert_eq!(s.read_json().await["id"], 2, "ping first");
    let slow = s.read_json().await;
    assert_eq!(
        (
            slow["id"].clone(),
            slow["result"]["content"][0]["text"].clone()
        ),
        (json!(1), json!("slept 1500 ms"))
    );
}

#[tokio::test]
async fn many_concurrent_replies_are_whole_lines() {
    let mut s = ready().await;
    let mut batch = String::new();
    for i in 0..200 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{}\"}}}}}}\n",
            "y".repeat(i * 50)
        ));
    }
    s.write(batch.as_bytes()).await;
    let mut ids = Vec::new();
    for _ in 0..200 {
        let r = s.read_json().await;
        let id = r["id"].as_u64().unwrap() as usize;
        assert_eq!(
            r["result"]["content"][0]["text"].as_str().unwrap().len(),
            id * 50
        );
        ids.push(id);
    }
    ids.sort_unstable();
    assert_eq!(ids, (0..200).collect::<Vec<_>>());
}

#[tokio::test]
async fn eof_finishes_in_flight_work_then_exits_zero() {
    let mut s = ready().await;
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":300}}}\n").await;
    s.close_stdin();
    let reply = s.read_json().await;
    assert_eq!(reply["result"]["content"][0]["text"], "slept 300 ms");
    assert_eq!(s.read_line().await, None);
    let status = tokio::time::timeout(DEADLINE, s.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn an_unterminated_last_line_is_still_served_at_eof() {
    let mut s = spawn();
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}")
        .await;
    s.close_stdin();
    assert_eq!(
        s.read_json().await,
        json!({"jsonrpc":"2.0","id":5,"result":{}})
    );
}

#[tokio::test]
async fn valid_json_beyond_parser_limits_gets_exactly_one_answer_in_both_eras() {
    let mut s = ready().await;
    let modern = format!(r#""_meta":{}"#, support::json::meta());
    for extra in ["", modern.as_str()] {
        for (text, id, code) in support::json::beyond_limits(extra) {
            s.write(format!("{text}\n").as_bytes()).await;
            let line = s.read_line().await.expect("one answer line");
            support::json::check_limit_answer(&line, &id, code);
        }
    }
    // A notification beyond a limit is not answered: the next line answers the ping after it.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    s.write(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{{\"a\":{deep}}}}}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}}\n").as_bytes()).await;
    assert_eq!(s.read_json().await["id"], 9);
}

// ---- JSON-RPC batches: received at 2025-03-26 only (spec 2025-03-26 basic, "Batching") ----

/// A stdio server past the handshake at `version`.
async fn ready_at(version: &str) -> ChildServer {
    let mut s = spawn();
    let init: serde_json::Value =
        serde_json::from_str(&support::json::initialize(1, version)).unwrap();
    let answer = s.ask(init).await;
    assert_eq!(answer["result"]["protocolVersion"], version);
    s.send(support::json::initialized()).await;
    s
}

/// A batch of `n` pings, ids 1..=n.
fn pings(n: usize) -> serde_json::Value {
    (1..=n)
        .map(|id| json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
        .collect()
}

#[tokio::test]
async fn a_batch_at_2025_03_26_is_answered_by_one_array_line() {
    let mut s = ready_at("2025-03-26").await;
    s.send(json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}},
        {"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
        {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":20}}},
        {"jsonrpc":"1.0","id":3,"method":"ping"},
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","id":"s-1","result":{}},
        7
    ]))
    .await;
    s.send(json!({"jsonrpc":"2.0","id":"after","method":"ping"}))
        .await;
    // Two lines: the ping after the batch, and the batch's one reply (once `sleep` is done).
    let (mut reply, mut after) = (None, None);
    for _ in 0..2 {
        let line = s.read_json().await;
        if line.is_array() {
            reply = Some(line);
        } else {
            after = Some(line);
        }
    }
    assert_eq!(
        after.unwrap(),
        json!({"jsonrpc":"2.0","id":"after","result":{}})
    );
    let reply = reply.expect("the batch's reply");
    let ids: Vec<_> = reply
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [json!(1), json!(2), json!(3), json!(1), json!(null)],
        "one entry per request and invalid element, none for the notification and the response: {reply}"
    );
    assert_eq!(reply[0]["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(reply[1]["result"]["content"][0]["text"], "slept 20 ms");
    assert_eq!(reply[2]["error"]["code"], -32600);
    assert_eq!(
        reply[3]["error"]["code"], -32600,
        "a duplicate id in the batch"
    );
    assert_eq!(reply[4]["error"]["code"], -32600);
}

#[tokio::test]
async fn a_batch_of_notifications_writes_nothing() {
    let mut s = ready_at("2025-03-26").await;
    s.send(json!([
        {"jsonrpc":"2.0","method":"notifications/roots/list_changed"},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}
    ]))
    .await;
    // The next line is the ping's: the batch before it wrote nothing.
    let reply = s
        .ask(json!({"jsonrpc":"2.0","id":"p","method":"ping"}))
        .await;
    assert_eq!(reply["result"], json!({}));
}

#[tokio::test]
async fn a_batch_before_initialize_or_at_another_revision_is_refused() {
    let mut s = spawn();
    s.send(pings(2)).await;
    let early = s.read_json().await;
    assert_eq!(
        (early["id"].clone(), early["error"]["code"].clone()),
        (json!(null), json!(-32600))
    );
    let message = early["error"]["message"].as_str().unwrap();
    assert!(message.contains("batch before initialize"), "{message}");
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut s = ready_at(version).await;
        s.send(pings(2)).await;
        assert_eq!(
            s.read_line().await.unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request: batches are not supported\"}}\n",
            "unchanged at {version}"
        );
    }
}

#[tokio::test]
async fn initialize_in_a_batch_or_an_empty_batch_is_one_error() {
    let mut s = ready_at("2025-03-26").await;
    let init: serde_json::Value =
        serde_json::from_str(&support::json::initialize(7, "2025-03-26")).unwrap();
    s.send(json!([{"jsonrpc":"2.0","id":6,"method":"ping"}, init]))
        .await;
    let refused = s.read_json().await;
    assert_eq!(refused["id"], json!(null));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize must not be part of a JSON-RPC batch"),
        "{refused}"
    );
    s.write(b"[]\n").await;
    let empty = s.read_json().await;
    assert_eq!(
        (empty["id"].clone(), empty["error"]["code"].clone()),
        (json!(null), json!(-32600)),
        "one error, not an array: {empty}"
    );
    // Nothing of the refused batch ran: ping 6's answer never came.
    let reply = s.ask(json!({"jsonrpc":"2.0","id":8,"method":"ping"})).await;
    assert_eq!(reply["result"], json!({}));
}

#[tokio::test]
async fn a_large_batch_runs_at_most_the_in_flight_limit_and_a_longer_one_is_refused() {
    let mut s = ready_at("2025-03-26").await;
    // 1,000 pings against the default limit of 256 requests in flight.
    s.send(pings(1000)).await;
    let reply = s.read_json().await;
    let reply = reply.as_array().expect("one array");
    assert_eq!(reply.len(), 1000);
    let ok = reply.iter().filter(|r| r["result"] == json!({})).count();
    let busy = reply
        .iter()
        .filter(|r| r["error"]["message"] == "too many requests in flight")
        .count();
    assert_eq!((ok, busy), (256, 744));
    assert!(reply[..256].iter().all(|r| r.get("result").is_some()));
    // 10,000 pings: over the length a batch may have, refused whole before anything runs.
    s.send(pings(10_000)).await;
    let refused = s.read_json().await;
    assert_eq!(refused["id"], json!(null));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a batch of 10000 messages is over the limit of 1024"),
        "{refused}"
    );
    // The connection goes on, every place free again.
    s.send(pings(256)).await;
    let reply = s.read_json().await;
    assert!(reply
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["result"] == json!({})));
}

#[tokio::test]
async fn responses_to_server_requests_arrive_inside_a_batch() {
    use orkestrel_mcp::{McpServer, RequestContext, ServerOptions, Tool};
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Empty {}
    let server = McpServer::new(ServerOptions::new("t", "1"));
    server.tools().add(Tool::with_context(
        "roots",
        |_: Empty, ctx: RequestContext| async move {
            ctx.request("roots/list", json!({}))
                .await
                .map(|roots| roots.to_string())
                .map_err(|e| e.message)
        },
    ));
    let mut pipe = support::server::Pipe::serve(server);
    pipe.send(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{"roots":{}},
        "clientInfo":{"name":"t","version":"1"}}}),
    )
    .await;
    assert_eq!(pipe.read().await["result"]["protocolVersion"], "2025-03-26");
    pipe.send(support::json::initialized()).await;
    // The tool's call inside a batch: the server asks its client, the reply waits.
    pipe.send(json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}},
        {"jsonrpc":"2.0","id":2,"method":"ping"}
    ]))
    .await;
    let asked = pipe.read().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    // The answer, inside another batch, with a request of its own.
    pipe.send(json!([
        {"jsonrpc":"2.0","id":asked["id"],"result":{"roots":[{"uri":"file:///x"}]}},
        {"jsonrpc":"2.0","id":3,"method":"ping"}
    ]))
    .await;
    let mut replies = [pipe.read().await, pipe.read().await];
    replies.sort_by_key(|r| r.as_array().map_or(0, Vec::len));
    assert_eq!(replies[0], json!([{"jsonrpc":"2.0","id":3,"result":{}}]));
    let first = replies[1].as_array().unwrap();
    assert_eq!(first[0]["id"], 1);
    assert!(first[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("file:///x"));
    assert_eq!(first[1], json!({"jsonrpc":"2.0","id":2,"result":{}}));
}
