//! Real clients (ours, the TypeScript and Python SDKs') keeping their session across two
//! instances behind a round-robin proxy.

use super::*;

/// An official SDK client's session checks against two instances behind a round-robin proxy.
/// Answers every elicitation with the name "Ada".
struct Ada;

impl ClientHandler for Ada {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}})
    }
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let asked = params["message"].clone();
        Box::pin(async move {
            assert_eq!(asked, "Name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
    }
}

#[tokio::test]
async fn our_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy() {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let (proxy, requests) = round_robin(vec![a, b]).await;
    let client = http_client_to(&format!("http://{proxy}/mcp"), support::client::options());
    tokio::time::timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        let tools = client.tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert!(names.contains(&"progress"), "{names:?}");
        assert_eq!(
            client.call("add", json!({"a": 2, "b": 5})).await.unwrap(),
            Some(json!(7))
        );
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let options = RequestOptions::default()
            .on_progress(move |p: &Progress| record.lock().unwrap().push(p.progress));
        let done = client
            .call_with("progress", json!({"steps": 3, "ms": 5}), options)
            .await
            .unwrap();
        assert_eq!(done, Some(json!("done 3 steps")));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
        client.ping().await.unwrap();
        client.disconnect().await;
    })
    .await
    .expect("the client's session works through the proxy");
    let sent = requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(sent >= 7, "every request went through the proxy: {sent}");
    // Its DELETE (on whichever instance) ended the session in Redis for both.
    let live: usize = ::redis::cmd("ZCARD")
        .arg("orkestrel-mcp:sessions")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    assert_eq!(live, 0);

    // A tool on one instance elicits; the request reaches the client on its call's stream and
    // the client's answer, POSTed through the proxy to the other instance, resolves it.
    let (one, two) = (asking_instance(&redis).await, asking_instance(&redis).await);
    let (proxy, requests) = round_robin(vec![one, two]).await;
    let options = support::client::options().with_handler(Ada);
    let client = http_client_to(&format!("http://{proxy}/mcp"), options);
    tokio::time::timeout(HANG_GUARD, async {
        client.connect().await.unwrap();
        for _ in 0..2 {
            assert_eq!(
                client.call("ask", json!({})).await.unwrap(),
                Some(json!("Ada"))
            );
        }
        client.disconnect().await;
    })
    .await
    .expect("elicitation through the proxy");
    assert!(requests.load(std::sync::atomic::Ordering::SeqCst) >= 6);
}

async fn sdk_client_behind_a_round_robin_proxy(python: bool) {
    let Some(redis) = Redis::start(None).await else {
        return;
    };
    let (a, _a) = instance(&redis).await;
    let (b, _b) = instance(&redis).await;
    let (proxy, requests) = support::redis::round_robin(vec![a, b]).await;
    let url = format!("http://{proxy}/mcp");
    let Some(run) = support::redis::sdk_sessions(python, &url).await else {
        return;
    };
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{out}\n{err}");
    assert!(
        out.contains("all checks passed") && !out.contains("FAIL"),
        "{out}\n{err}"
    );
    let requests = requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        requests >= 6,
        "{requests} requests: both instances served several"
    );
}

#[tokio::test]
async fn the_typescript_sdk_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy(
) {
    sdk_client_behind_a_round_robin_proxy(false).await;
}

#[tokio::test]
async fn the_python_sdk_client_keeps_its_session_across_two_instances_behind_a_round_robin_proxy() {
    sdk_client_behind_a_round_robin_proxy(true).await;
}
