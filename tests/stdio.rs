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

#[tokio::test]
async fn junk_lines_and_responses_get_no_reply_but_invalid_requests_do() {
    let mut s = spawn();
    s.write(b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":5}\n").await;
    s.write(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n")
        .await;
    let invalid = s.read_json().await;
    assert_eq!(
        (invalid["error"]["code"].clone(), invalid["id"].clone()),
        (json!(-32600), json!(null))
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
