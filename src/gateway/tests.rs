//! The gateway in one process: an upstream server behind an in-memory client, re-served by a
//! downstream server driven with raw 2026-07-28 requests (the parked-call path of the relay).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::executor::block_on;
use serde_json::{json, Map, Value};

use super::{Gateway, NameFilter, Relay, RelayOptions};
use crate::client::{ClientEra, ClientOptions, McpClient, MemoryTransport};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::ErrorObject;
use crate::{McpServer, ServerOptions, Tool};

const V: &str = "2026-07-28";

/// An upstream whose `ask` tool elicits a name, and `echo`, `secret`.
fn upstream() -> McpServer {
    let server = McpServer::new(ServerOptions::new("up", "1"));
    let object = json!({"type": "object"});
    server.tools().add(Tool::from_json(
        "ask",
        object.clone(),
        |_a: Map<String, Value>, ctx: RequestContext| async move {
            let answer = ctx
                .elicit(json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}))
                .await?;
            Ok::<_, ErrorObject>(format!("hello {}", answer["content"]["name"].as_str().unwrap_or("?")))
        },
    ));
    for name in ["echo", "secret"] {
        server.tools().add(Tool::from_json(
            name,
            object.clone(),
            |a: Map<String, Value>, _ctx| async move {
                Ok::<_, String>(a["text"].as_str().unwrap_or_default().to_owned())
            },
        ));
    }
    server
}

/// A downstream server re-serving `upstream()` through a relay with `options`.
fn gateway(options: RelayOptions, filter: NameFilter) -> (McpServer, Relay) {
    let relay = Relay::new(options);
    let client = McpClient::with_transport(
        Arc::new(MemoryTransport::new(upstream())),
        ClientOptions::new("gw", "1")
            .with_era(ClientEra::Modern)
            .with_handler(relay.clone()),
    );
    block_on(client.connect()).unwrap();
    let gateway = Gateway::with_filter(client, relay.clone(), filter);
    let server = McpServer::new(gateway.server_options());
    block_on(gateway.mirror_into(&server, "up__")).unwrap();
    (server, relay)
}

fn call(server: &McpServer, id: u64, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {"text": "t"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}}});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let reply = block_on(server.handle(&request.to_string())).unwrap();
    serde_json::from_str(&reply).unwrap()
}

fn retry(first: &Value, name: &str) -> Value {
    json!({
        "inputResponses": {"gateway-1": {"action": "accept", "content": {"name": name}}},
        "requestState": first["result"]["requestState"],
    })
}

#[test]
fn a_parked_call_resumes_with_the_clients_answer() {
    let (server, relay) = gateway(RelayOptions::default(), NameFilter::default());
    let names: Vec<String> = server.tools().list().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["up__ask", "up__echo", "up__secret"]);
    let first = call(&server, 1, "up__ask", json!({}));
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["gateway-1"]["method"],
        "elicitation/create"
    );
    assert_eq!(relay.parked(), 1);
    let done = call(&server, 2, "up__ask", retry(&first, "Ada"));
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada", "{done}");
    assert_eq!(
        (relay.parked(), relay.in_flight(), relay.calls()),
        (0, 0, 1)
    );
    // The parked call is gone once resumed: the same state again is refused.
    let again = call(&server, 3, "up__ask", retry(&first, "Bob"));
    assert_eq!(again["error"]["code"], -32602, "{again}");
}

#[test]
fn parked_calls_are_bounded_in_count_and_idle_time() {
    let now = Arc::new(AtomicU64::new(1_000_000));
    let clock = now.clone();
    let options = RelayOptions {
        max_parked: 1,
        parked_idle: Duration::from_secs(10),
        clock: Some(Arc::new(move || clock.load(Ordering::Relaxed))),
    };
    let (server, relay) = gateway(options, NameFilter::default());
    let a = call(&server, 1, "up__ask", json!({}));
    let b = call(&server, 2, "up__ask", json!({}));
    assert_eq!(
        (relay.parked(), relay.in_flight()),
        (1, 1),
        "the oldest is dropped beyond the cap"
    );
    let evicted = call(&server, 3, "up__ask", retry(&a, "Ada"));
    assert_eq!(evicted["error"]["code"], -32602, "{evicted}");
    now.fetch_add(10_001, Ordering::Relaxed);
    let expired = call(&server, 4, "up__ask", retry(&b, "Bob"));
    assert_eq!(expired["error"]["code"], -32602, "{expired}");
    assert_eq!((relay.parked(), relay.in_flight()), (0, 0));
}

#[test]
fn the_filter_and_a_prefix_shape_what_is_served() {
    let filter = NameFilter {
        allow: None,
        ignore: vec!["secret".into()],
    };
    let (server, _relay) = gateway(RelayOptions::default(), filter);
    let names: Vec<String> = server.tools().list().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["up__ask", "up__echo"]);
    let echoed = call(&server, 1, "up__echo", json!({}));
    assert_eq!(echoed["result"]["content"][0]["text"], "t", "{echoed}");
    let hidden = call(&server, 2, "up__secret", json!({}));
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
}

#[test]
fn a_handshake_era_request_is_refused_while_calls_of_several_clients_are_in_flight() {
    use super::relay::Start;
    use crate::client::ClientHandler;
    let relay = Relay::default();
    let pending = || -> Start { Box::new(|_| Box::pin(futures::future::pending())) };
    let (a, b) = (
        RequestContext::new().with_scope("client-a"),
        RequestContext::new().with_scope("client-b"),
    );
    block_on(async {
        let mut one = Box::pin(relay.run(&a, pending()));
        let mut two = Box::pin(relay.run(&b, pending()));
        assert!(futures::poll!(&mut one).is_pending() && futures::poll!(&mut two).is_pending());
        assert_eq!(relay.in_flight(), 2);
        let refused = relay.elicit(json!({"message": "?"})).await.unwrap_err();
        assert!(
            refused.message.contains("several clients"),
            "{}",
            refused.message
        );
        // One client left: its call is asked (here it has no channel to its client, which is
        // the answer that comes back).
        drop(two);
        let asked = relay.elicit(json!({"message": "?"}));
        futures::pin_mut!(asked);
        let answer = match futures::future::select(asked, &mut one).await {
            futures::future::Either::Left((answer, _)) => answer,
            futures::future::Either::Right(_) => panic!("the call never ends"),
        };
        let error = answer.unwrap_err();
        assert!(
            !error.message.contains("several clients"),
            "{}",
            error.message
        );
        assert_eq!(relay.in_flight(), 1);
    });
    assert_eq!(relay.in_flight(), 0, "a dropped call leaves the table");
}
