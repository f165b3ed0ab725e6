//! Handler answers, progress, deadline reset, cancellation on drop and the list/resource/prompt
//! calls, over a scripted transport with an injected spawner and timer: no I/O, no runtime, no
//! timed assertions.

use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures::executor::block_on;
use futures::future;
use futures::poll;
use serde_json::{json, Value};

use super::super::{ClientHandler, ClientOptions, McpClient, Progress, RequestOptions};
use crate::client::test_support::{Scripted, Tasks, Timers};
use crate::client::{apply_elicitation_defaults, ClientError};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcMessage, RequestId};
use crate::BoxFuture;

struct Harness {
    client: McpClient,
    script: Arc<Scripted>,
    clock: Timers,
    tasks: Tasks,
}

impl Harness {
    fn new(handler: Option<Arc<dyn ClientHandler>>) -> Harness {
        let script = Arc::new(Scripted::default());
        let clock = Timers::default();
        let tasks = Tasks::default();
        let mut options = ClientOptions::new("t", "1")
            .with_era(crate::client::ClientEra::Legacy)
            .with_sleep(clock.sleep())
            .with_spawner(tasks.spawner());
        options.handler = handler;
        let client = McpClient::with_transport(script.clone(), options);
        let h = Harness {
            client,
            script,
            clock,
            tasks,
        };
        block_on(async {
            let mut connect = std::pin::pin!(h.client.connect());
            assert!(
                poll!(&mut connect).is_pending(),
                "connect waits for its answer"
            );
        });
        h
    }

    fn connected(handler: Option<Arc<dyn ClientHandler>>) -> Harness {
        let script = Arc::new(Scripted::default());
        let clock = Timers::default();
        let tasks = Tasks::default();
        let mut options = ClientOptions::new("t", "1")
            .with_era(crate::client::ClientEra::Legacy)
            .with_sleep(clock.sleep())
            .with_spawner(tasks.spawner());
        options.handler = handler;
        let client = McpClient::with_transport(script.clone(), options);
        let h = Harness {
            client,
            script,
            clock,
            tasks,
        };
        block_on(async {
            let mut connect = std::pin::pin!(h.client.connect());
            assert!(poll!(&mut connect).is_pending());
            h.deliver(json!({"jsonrpc":"2.0","id":1,"result":{
                "protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"},
                "capabilities":{"tools":{},"resources":{"subscribe":true},"prompts":{},
                    "completions":{},"logging":{}}}}));
            connect.await.unwrap();
        });
        h
    }

    fn sent(&self) -> Vec<JsonRpcMessage> {
        self.script.sent()
    }

    fn take_sent(&self) -> Vec<JsonRpcMessage> {
        self.script.take_sent()
    }

    fn deliver(&self, value: Value) -> Vec<JsonRpcMessage> {
        self.script.deliver(value)
    }

    fn last_request(&self) -> crate::wire::jsonrpc::JsonRpcRequest {
        self.sent()
            .into_iter()
            .rev()
            .find_map(|m| match m {
                JsonRpcMessage::Request(r) => Some(r),
                _ => None,
            })
            .expect("a request was sent")
    }
}

struct Everything;

impl ClientHandler for Everything {
    fn capabilities(&self) -> Value {
        json!({"sampling":{}, "elicitation":{"form":{}}, "roots":{}})
    }
    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move {
            Ok(
                json!({"role":"assistant","model":"m","content":{"type":"text","text":params["messages"][0]["content"]["text"]}}),
            )
        })
    }
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async move {
            let mut content = json!({"name": "given"});
            apply_elicitation_defaults(&params, &mut content);
            Ok(json!({"action":"accept","content":content}))
        })
    }
    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        Box::pin(async { panic!("roots exploded") })
    }
}

fn response(message: &JsonRpcMessage) -> (Option<RequestId>, Result<Value, ErrorObject>) {
    match message {
        JsonRpcMessage::Response(r) => (
            r.id.clone(),
            r.payload
                .clone()
                .map(crate::wire::jsonrpc::ResultValue::into_value),
        ),
        other => panic!("expected a response, got {other:?}"),
    }
}

#[test]
fn the_handler_declares_capabilities_in_initialize() {
    let h = Harness::new(Some(Arc::new(Everything)));
    let init = h.last_request();
    assert_eq!(init.method, "initialize");
    assert_eq!(
        init.params.unwrap()["capabilities"],
        json!({"sampling":{}, "elicitation":{"form":{}}, "roots":{}})
    );
}

#[test]
fn server_requests_are_answered_asynchronously_through_the_handler() {
    let h = Harness::connected(Some(Arc::new(Everything)));
    h.take_sent();
    let elicit = json!({"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{
        "message":"m","requestedSchema":{"type":"object","properties":{
            "name":{"type":"string","default":"dflt"},"age":{"type":"integer","default":30},
            "plain":{"type":"string"}}}}});
    assert!(
        h.deliver(elicit).is_empty(),
        "nothing is answered synchronously"
    );
    let sample = json!({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{
        "messages":[{"role":"user","content":{"type":"text","text":"echo"}}],"maxTokens":5}});
    assert!(h.deliver(sample).is_empty());
    assert!(h
        .deliver(json!({"jsonrpc":"2.0","id":8,"method":"roots/list"}))
        .is_empty());
    assert!(h.sent().is_empty());
    assert_eq!(h.tasks.run(), 3);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 3);
    let (id, result) = response(&sent[0]);
    assert_eq!(id, Some(RequestId::String("e1".into())));
    assert_eq!(
        result.unwrap(),
        json!({"action":"accept","content":{"name":"given","age":30}})
    );
    let (id, result) = response(&sent[1]);
    assert_eq!(id, Some(RequestId::Number(7)));
    assert_eq!(result.unwrap()["content"]["text"], "echo");
    let (id, result) = response(&sent[2]);
    assert_eq!(id, Some(RequestId::Number(8)));
    let error = result.unwrap_err();
    assert_eq!(error.code, crate::wire::jsonrpc::ErrorCode::INTERNAL_ERROR);
    assert!(error.message.contains("roots exploded"), "{error:?}");
    // ping is still answered at once; an unknown method is refused at once.
    let ping = h.deliver(json!({"jsonrpc":"2.0","id":9,"method":"ping"}));
    assert_eq!(response(&ping[0]).1.unwrap(), json!({}));
    let other = h.deliver(json!({"jsonrpc":"2.0","id":10,"method":"tasks/get"}));
    assert_eq!(
        response(&other[0]).1.unwrap_err().code,
        crate::wire::jsonrpc::ErrorCode::METHOD_NOT_FOUND
    );
}

#[test]
fn without_a_handler_server_requests_are_refused_at_once() {
    let h = Harness::connected(None);
    let init = h.sent()[0].clone();
    match init {
        JsonRpcMessage::Request(r) => assert_eq!(r.params.unwrap()["capabilities"], json!({})),
        other => panic!("{other:?}"),
    }
    let answer =
        h.deliver(json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}));
    assert_eq!(
        response(&answer[0]).1.unwrap_err().code,
        crate::wire::jsonrpc::ErrorCode::METHOD_NOT_FOUND
    );
    assert_eq!(h.tasks.run(), 0);
}

#[test]
fn progress_notifications_reach_their_request_callback() {
    let h = Harness::connected(None);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let s = seen.clone();
    let options = RequestOptions::default().on_progress(move |p| s.lock().unwrap().push(p.clone()));
    block_on(async {
        let mut call = std::pin::pin!(h.client.request(
            "tools/call",
            Some(json!({"name":"slow","arguments":{},"_meta":{"keep":1}})),
            options
        ));
        assert!(poll!(&mut call).is_pending());
        let request = h.last_request();
        let id = match request.id {
            RequestId::Number(id) => id,
            other => panic!("{other:?}"),
        };
        let params = request.params.unwrap();
        assert_eq!(params["_meta"], json!({"keep":1,"progressToken":id}));
        h.deliver(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":id,"progress":1,"total":2,"message":"half"}}),
        );
        h.deliver(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":id + 100,"progress":5}}),
        );
        h.deliver(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":id,"progress":"bad"}}),
        );
        h.deliver(
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":id,"progress":2}}),
        );
        h.deliver(json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}}));
        call.await.unwrap();
    });
    let seen = seen.lock().unwrap();
    assert_eq!(
        *seen,
        vec![
            Progress {
                progress: 1.0,
                total: Some(2.0),
                message: Some("half".into())
            },
            Progress {
                progress: 2.0,
                total: None,
                message: None
            },
        ]
    );
}

#[test]
fn progress_restarts_the_deadline_but_the_total_still_bounds_it() {
    let h = Harness::connected(None);
    let idle = Duration::from_millis(10);
    let total = Duration::from_millis(100);
    let options = RequestOptions::with_timeout(idle)
        .on_progress(|_| {})
        .reset_timeout_on_progress(total);
    block_on(async {
        let mut call = std::pin::pin!(h.client.request("tools/call", Some(json!({})), options));
        assert!(poll!(&mut call).is_pending());
        let id = h.last_request().id.to_value();
        assert_eq!(h.clock.live(idle), 1);
        for _ in 0..3 {
            h.deliver(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":id,"progress":1}}));
            assert!(poll!(&mut call).is_pending());
            assert_eq!(
                h.clock.live(idle),
                1,
                "a fresh idle deadline replaces the old one"
            );
        }
        assert_eq!(h.clock.fire(total), 1);
        match call.await {
            Err(ClientError::Timeout { method, timeout_ms }) => {
                assert_eq!(method, "tools/call");
                assert_eq!(timeout_ms, 10);
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
    });
    // And without progress, the idle deadline alone expires it.
    let options = RequestOptions::with_timeout(idle)
        .on_progress(|_| {})
        .reset_timeout_on_progress(total);
    block_on(async {
        let mut call = std::pin::pin!(h.client.request("tools/call", Some(json!({})), options));
        assert!(poll!(&mut call).is_pending());
        assert!(h.clock.fire(idle) >= 1);
        assert!(call.await.unwrap_err().is_timeout());
    });
}

#[test]
fn dropping_an_unanswered_request_sends_cancelled() {
    let h = Harness::connected(None);
    h.take_sent();
    block_on(async {
        let mut call = Box::pin(h.client.request(
            "tools/call",
            Some(json!({})),
            RequestOptions::default(),
        ));
        assert!(poll!(&mut call).is_pending());
        drop(call);
    });
    let sent = h.take_sent();
    let id = match &sent[0] {
        JsonRpcMessage::Request(r) => r.id.to_value(),
        other => panic!("{other:?}"),
    };
    assert_eq!(h.tasks.run(), 1);
    match &h.take_sent()[..] {
        [JsonRpcMessage::Notification(n)] => {
            assert_eq!(n.method, "notifications/cancelled");
            assert_eq!(n.params.as_ref().unwrap()["requestId"], id);
        }
        other => panic!("expected notifications/cancelled, got {other:?}"),
    }
    // An answered request cancels nothing; nor does an abortable one that completed.
    block_on(async {
        let mut call = std::pin::pin!(h.client.request("ping", None, RequestOptions::default()));
        assert!(poll!(&mut call).is_pending());
        let id = h.last_request().id.to_value();
        h.deliver(json!({"jsonrpc":"2.0","id":id,"result":{}}));
        call.await.unwrap();
    });
    assert_eq!(h.tasks.run(), 0);
    // futures' Abortable gives an abort handle for an in-flight call.
    let (call, handle) = future::abortable(h.client.request(
        "tools/call",
        None,
        RequestOptions::default(),
    ));
    block_on(async {
        let mut call = std::pin::pin!(call);
        assert!(poll!(&mut call).is_pending());
        handle.abort();
        assert!(matches!(
            poll!(&mut call),
            Poll::Ready(Err(future::Aborted))
        ));
    });
    assert_eq!(h.tasks.run(), 1);
}

/// Answer each list request from a fixed set of pages keyed by cursor.
fn answer_pages(h: &Harness, method: &str, pages: &[(Option<&str>, Value)]) -> usize {
    let mut answered = 0;
    for message in h.take_sent() {
        let JsonRpcMessage::Request(r) = message else {
            continue;
        };
        assert_eq!(r.method, method);
        let cursor = r
            .params
            .as_ref()
            .and_then(|p| p.get("cursor"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let page = pages
            .iter()
            .find(|(c, _)| c.map(str::to_owned) == cursor)
            .expect("a known cursor");
        h.deliver(json!({"jsonrpc":"2.0","id":r.id.to_value(),"result":page.1}));
        answered += 1;
    }
    answered
}

#[test]
fn list_helpers_walk_every_page_and_stop_on_a_repeated_cursor() {
    let h = Harness::connected(None);
    h.take_sent();
    let pages = [
        (
            None,
            json!({"resources":[{"uri":"a://1","name":"1"}],"nextCursor":"p2"}),
        ),
        (
            Some("p2"),
            json!({"resources":[{"uri":"a://2","name":"2"}],"nextCursor":"p3"}),
        ),
        (
            Some("p3"),
            json!({"resources":[{"uri":"a://3","name":"3"}],"nextCursor":"p2"}),
        ),
    ];
    let all = block_on(async {
        let mut list = std::pin::pin!(h.client.list_resources());
        loop {
            match poll!(&mut list) {
                Poll::Ready(r) => break r,
                Poll::Pending => assert_eq!(answer_pages(&h, "resources/list", &pages), 1),
            }
        }
    })
    .unwrap();
    let uris: Vec<_> = all.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["a://1", "a://2", "a://3"]);
    // A page without the array is an invalid response, not a panic.
    let bad = block_on(async {
        let mut list = std::pin::pin!(h.client.list_prompts());
        assert!(poll!(&mut list).is_pending());
        let id = h.last_request().id.to_value();
        h.deliver(json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}));
        list.await
    });
    assert!(matches!(bad, Err(ClientError::InvalidResponse(_))));
}

/// Run `call`, answer its one request with `result`, and return (request, outcome).
fn one<T>(
    h: &Harness,
    call: impl std::future::Future<Output = Result<T, ClientError>>,
    result: Value,
) -> (crate::wire::jsonrpc::JsonRpcRequest, Result<T, ClientError>) {
    h.take_sent();
    block_on(async {
        let mut call = std::pin::pin!(call);
        assert!(poll!(&mut call).is_pending());
        let request = h.last_request();
        h.deliver(json!({"jsonrpc":"2.0","id":request.id.to_value(),"result":result}));
        (request, call.await)
    })
}

#[test]
fn resource_prompt_completion_and_logging_calls_send_the_spec_shapes() {
    let h = Harness::connected(None);
    let (r, out) = one(
        &h,
        h.client.read_resource("test://x"),
        json!({"contents":[{"uri":"test://x","text":"hi"}]}),
    );
    assert_eq!(
        (r.method.as_str(), Value::Object(r.params.unwrap())),
        ("resources/read", json!({"uri":"test://x"}))
    );
    assert_eq!(out.unwrap()["contents"][0]["text"], "hi");
    let (r, out) = one(&h, h.client.subscribe_resource("test://x"), json!({}));
    assert_eq!(r.method, "resources/subscribe");
    out.unwrap();
    let (r, out) = one(&h, h.client.unsubscribe_resource("test://x"), json!({}));
    assert_eq!(r.method, "resources/unsubscribe");
    out.unwrap();
    let (r, out) = one(
        &h,
        h.client.get_prompt("greet", json!({"name":"Ada"})),
        json!({"messages":[]}),
    );
    assert_eq!(
        Value::Object(r.params.unwrap()),
        json!({"name":"greet","arguments":{"name":"Ada"}})
    );
    out.unwrap();
    assert!(matches!(
        block_on(h.client.get_prompt("greet", json!([1]))),
        Err(ClientError::InvalidArguments(_))
    ));
    let (r, out) = one(
        &h,
        h.client.complete(
            json!({"type":"ref/prompt","name":"greet"}),
            "name",
            "A",
            None,
        ),
        json!({"completion":{"values":["Ada"],"hasMore":false}}),
    );
    assert_eq!(r.method, "completion/complete");
    assert_eq!(
        r.params.unwrap()["argument"],
        json!({"name":"name","value":"A"})
    );
    assert_eq!(out.unwrap()["values"], json!(["Ada"]));
    let (r, out) = one(&h, h.client.set_logging_level("debug"), json!({}));
    assert_eq!(
        (r.method.as_str(), Value::Object(r.params.unwrap())),
        ("logging/setLevel", json!({"level":"debug"}))
    );
    out.unwrap();
    // Nothing the server did not declare is sent; nothing the client did not declare either.
    let h2 = Harness::connected(None);
    h2.client
        .inner
        .lock()
        .initialized
        .as_mut()
        .unwrap()
        .capabilities = json!({"tools":{}});
    h2.take_sent();
    for (outcome, capability) in [
        (
            block_on(h2.client.subscribe_resource("test://x")),
            "resources.subscribe",
        ),
        (block_on(h2.client.set_logging_level("debug")), "logging"),
        (
            block_on(
                h2.client
                    .complete(json!({"type":"ref/prompt","name":"p"}), "a", "", None),
            )
            .map(drop),
            "completions",
        ),
        (block_on(h2.client.roots_changed()), "roots.listChanged"),
    ] {
        assert!(
            matches!(&outcome, Err(ClientError::NotDeclared { capability: c, .. }) if c == capability),
            "{outcome:?}"
        );
    }
    assert!(h2.take_sent().is_empty(), "nothing was sent");
    let (r, out) = one(
        &h,
        h.client.list_resource_templates(),
        json!({"resourceTemplates":[{"uriTemplate":"t://{x}","name":"t"}]}),
    );
    assert_eq!(r.method, "resources/templates/list");
    assert_eq!(out.unwrap().len(), 1);
}

#[test]
fn elicitation_defaults_fill_only_missing_fields() {
    let params = json!({"requestedSchema":{"type":"object","properties":{
        "a":{"type":"string","default":"x"},"b":{"type":"boolean","default":true},
        "c":{"type":"number"},"d":{"type":"string","enum":["p","q"],"default":"q"}}}});
    let mut content = json!({"a":"mine"});
    apply_elicitation_defaults(&params, &mut content);
    assert_eq!(content, json!({"a":"mine","b":true,"d":"q"}));
    let mut not_object = json!("text");
    apply_elicitation_defaults(&params, &mut not_object);
    assert_eq!(not_object, json!("text"));
    let mut content = json!({});
    apply_elicitation_defaults(&json!({"requestedSchema":"bad"}), &mut content);
    assert_eq!(content, json!({}));
}

/// Elicitations wait for the test to release them.
struct Gated(Mutex<Option<futures::channel::oneshot::Receiver<()>>>);

impl ClientHandler for Gated {
    fn capabilities(&self) -> Value {
        json!({"elicitation":{"form":{}}})
    }
    fn elicit(&self, _params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let gate = self.0.lock().unwrap().take();
        Box::pin(async move {
            if let Some(gate) = gate {
                let _ = gate.await;
            }
            Ok(json!({"action":"accept","content":{}}))
        })
    }
}

fn elicitation(id: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"elicitation/create","params":{
        "message":"m","requestedSchema":{"type":"object","properties":{}}}})
}

#[test]
fn a_server_request_accepted_before_disconnect_is_answered_before_the_transport_closes() {
    let (release, gate) = futures::channel::oneshot::channel();
    let h = Harness::connected(Some(Arc::new(Gated(Mutex::new(Some(gate))))));
    h.take_sent();
    assert!(h.deliver(elicitation("e1")).is_empty());
    let mut disconnect = Box::pin(h.client.disconnect());
    assert!(
        block_on(async { poll!(&mut disconnect) }).is_pending(),
        "disconnect waits for the accepted request's answer"
    );
    assert_eq!(h.script.closes(), 0, "the transport is still open");
    release.send(()).unwrap();
    assert_eq!(h.tasks.run(), 1);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(response(&sent[0]).0, Some(RequestId::String("e1".into())));
    assert_eq!(h.script.closes(), 0, "the answer went out before the close");
    block_on(disconnect);
    assert_eq!(h.script.closes(), 1);
}

/// A batch holding a request the handler answers is answered by one array once every answer is
/// in (those answered at once wait for it), in the batch's order, each exactly once, through
/// `send_batch`; `disconnect` waits for it as for a single answer.
#[test]
fn a_batch_holding_a_handler_request_is_answered_by_one_array_once_every_answer_is_in() {
    let (release, gate) = futures::channel::oneshot::channel();
    let h = Harness::connected(Some(Arc::new(Gated(Mutex::new(Some(gate))))));
    h.take_sent();
    let reply = h.script.deliver_reply(json!([
        {"jsonrpc":"2.0","id":"p1","method":"ping"},
        elicitation("e1"),
        {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},
        {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}
    ]));
    assert_eq!(reply, None, "nothing is written before the handler answers");
    let mut disconnect = Box::pin(h.client.disconnect());
    assert!(
        block_on(async { poll!(&mut disconnect) }).is_pending(),
        "disconnect waits for the batch's answer"
    );
    assert!(h.script.take_batches().is_empty());
    release.send(()).unwrap();
    assert_eq!(h.tasks.run(), 1, "one task answers the whole batch");
    let batches = h.script.take_batches();
    assert_eq!(batches.len(), 1, "{batches:?}");
    let answered: Vec<_> = batches[0]
        .responses()
        .iter()
        .map(|r| {
            let (id, payload) = response(&JsonRpcMessage::Response(r.clone()));
            (id, payload.map_err(|e| e.code))
        })
        .collect();
    assert_eq!(
        answered,
        [
            (Some(RequestId::String("p1".into())), Ok(json!({}))),
            (
                Some(RequestId::String("e1".into())),
                Ok(json!({"action":"accept","content":{}}))
            ),
            (
                Some(RequestId::String("s1".into())),
                Err(crate::wire::jsonrpc::ErrorCode::METHOD_NOT_FOUND)
            ),
        ]
    );
    assert!(h.take_sent().is_empty(), "no answer also went out alone");
    assert_eq!(h.script.closes(), 0, "the answer went out before the close");
    block_on(disconnect);
    assert_eq!(h.script.closes(), 1);
}

#[test]
fn a_handler_that_never_answers_holds_disconnect_for_answer_drain_at_most() {
    let (_release, gate) = futures::channel::oneshot::channel::<()>();
    let h = Harness::connected(Some(Arc::new(Gated(Mutex::new(Some(gate))))));
    assert!(h.deliver(elicitation("e2")).is_empty());
    block_on(async {
        let mut disconnect = std::pin::pin!(h.client.disconnect());
        assert!(poll!(&mut disconnect).is_pending());
        assert_eq!(h.script.closes(), 0);
        assert_eq!(h.clock.fire(crate::client::ANSWER_DRAIN), 1);
        disconnect.await;
    });
    assert_eq!(h.script.closes(), 1, "closed once the drain bound passed");
}

/// A server flooding requests the handler answers gets those past `MAX_ANSWERING` (still being
/// answered) refused at once, `-32000` with their ids: each was a handler call and an answer of
/// its own, without bound.
#[test]
fn server_requests_past_the_answering_bound_are_refused_at_once() {
    use crate::client::features::MAX_ANSWERING;
    let h = Harness::connected(Some(Arc::new(Everything)));
    let ask = |id: usize| {
        h.deliver(json!({"jsonrpc":"2.0","id":format!("s{id}"),"method":"sampling/createMessage",
            "params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}))
    };
    // The handler's answers wait on the test's task runner: all of them are being answered.
    for id in 0..MAX_ANSWERING {
        assert!(ask(id).is_empty(), "request {id} goes to the handler");
    }
    let refused = ask(MAX_ANSWERING);
    assert_eq!(refused.len(), 1);
    let (id, answer) = response(&refused[0]);
    assert_eq!(id, Some(RequestId::from(format!("s{MAX_ANSWERING}"))));
    let error = answer.unwrap_err();
    assert_eq!(error.code, crate::wire::jsonrpc::ErrorCode::SERVER_ERROR);
    assert!(
        error.message.contains("too many requests being answered"),
        "{}",
        error.message
    );
}
