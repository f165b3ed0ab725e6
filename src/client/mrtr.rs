//! Answering input-required results (multi round-trip requests, SEP-2322; [spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)) on the
//! client: every input request goes to the same [`ClientHandler`] the handshake era uses, and
//! the request is retried — with a new id — carrying the original params plus `inputResponses`
//! and, only when the server sent one, its `requestState` byte-for-byte.
//!
//! ```text
//!  tools/call {name,args}            ─► {resultType:"input_required", inputRequests:{k:…}, requestState:s}
//!  handler.elicit / create_message / list_roots for every k
//!  tools/call {name,args, inputResponses:{k:…}, requestState:s}  (new id) ─► complete | input_required …
//! ```
//!
//! At most [`MAX_INPUT_ROUNDS`] retries; then the call fails. The retry fields live in this one
//! request's loop, so they never leak onto other requests.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::client::handlers::{answer, ClientHandler, NoHandler};
use crate::client::ClientError;

/// The most input-required rounds one request answers before it fails.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// One request's retry state.
pub(crate) struct Rounds {
    method: String,
    rounds: usize,
    responses: Option<Map<String, Value>>,
    state: Option<Value>,
}

impl Rounds {
    pub(crate) fn new(method: &str) -> Self {
        Rounds {
            method: method.to_owned(),
            rounds: 0,
            responses: None,
            state: None,
        }
    }

    /// Whether an input-required round happened (its retries are never cached).
    pub(crate) fn retried(&self) -> bool {
        self.rounds > 0
    }

    /// Add this round's `inputResponses` and `requestState` (nothing on the first attempt).
    pub(crate) fn apply(&self, params: &mut Map<String, Value>) {
        if let Some(responses) = &self.responses {
            params.insert("inputResponses".into(), Value::Object(responses.clone()));
        }
        if let Some(state) = &self.state {
            params.insert("requestState".into(), state.clone());
        }
    }

    /// Answer an input-required result through `handler`, preparing the next attempt.
    ///
    /// # Errors
    /// [`ClientError::InvalidResponse`] after [`MAX_INPUT_ROUNDS`] rounds or for a malformed
    /// result; [`ClientError::Rpc`] when the handler refuses an input request.
    pub(crate) async fn answer(
        &mut self,
        handler: Option<Arc<dyn ClientHandler>>,
        result: &Value,
    ) -> Result<(), ClientError> {
        self.rounds += 1;
        if self.rounds > MAX_INPUT_ROUNDS {
            return Err(ClientError::InvalidResponse(format!(
                "{} still needs input after {MAX_INPUT_ROUNDS} rounds; giving up",
                self.method
            )));
        }
        let requests = match result.get("inputRequests") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(other) => {
                return Err(ClientError::InvalidResponse(format!(
                    "inputRequests is not an object: {}",
                    crate::wire::json_text::JsonText(other)
                )))
            }
        };
        let state = match result.get("requestState") {
            None | Some(Value::Null) => None,
            Some(s @ Value::String(_)) => Some(s.clone()),
            Some(other) => {
                return Err(ClientError::InvalidResponse(format!(
                    "requestState is not a string: {}",
                    crate::wire::json_text::JsonText(other)
                )))
            }
        };
        if requests.is_empty() && state.is_none() {
            return Err(ClientError::InvalidResponse(
                "an input_required result with neither inputRequests nor requestState".into(),
            ));
        }
        let responses = answer_requests(handler, requests).await?;
        self.responses = Some(responses);
        self.state = state;
        Ok(())
    }
}

/// Answer input requests (`key → { method, params }`) through the client's handler: the
/// `inputResponses` map (2026-07-28 input rounds and `tasks/update`).
///
/// # Errors
/// [`ClientError::InvalidResponse`] for a request without a method; [`ClientError::Rpc`] when
/// the handler refuses one.
pub(crate) async fn answer_requests(
    handler: Option<Arc<dyn ClientHandler>>,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    let handler: Arc<dyn ClientHandler> = handler.unwrap_or_else(|| Arc::new(NoHandler));
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ClientError::InvalidResponse(format!("input request {key:?} has no method"))
            })?;
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let params = if params.is_null() {
            Value::Object(Map::new())
        } else {
            params
        };
        let answer = answer(&*handler, method, params)
            .await
            .map_err(ClientError::Rpc)?;
        responses.insert(key, answer);
    }
    Ok(responses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::jsonrpc::ErrorObject;
    use crate::BoxFuture;
    use serde_json::json;

    struct Echo;
    impl ClientHandler for Echo {
        fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
            Box::pin(
                async move { Ok(json!({"action":"accept","content":{"echo":params["message"]}})) },
            )
        }
        fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
            Box::pin(async { Ok(json!({"roots":[]})) })
        }
    }

    #[test]
    fn rounds_echo_state_and_stop() {
        futures::executor::block_on(async {
            let mut r = Rounds::new("tools/call");
            let mut p = Map::new();
            r.apply(&mut p);
            assert!(p.is_empty(), "nothing on the first attempt");
            let irr = json!({"resultType":"input_required","requestState":" s\u{1}é ","inputRequests":{
                "a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}},
                "b":{"method":"roots/list"}}});
            r.answer(Some(Arc::new(Echo)), &irr).await.unwrap();
            r.apply(&mut p);
            assert_eq!(p["requestState"], json!(" s\u{1}é "));
            assert_eq!(p["inputResponses"]["a"]["content"]["echo"], "m");
            assert_eq!(p["inputResponses"]["b"], json!({"roots":[]}));
            // No state the second time: none is invented.
            let mut p = Map::new();
            r.answer(
                Some(Arc::new(Echo)),
                &json!({"resultType":"input_required","inputRequests":{}, "requestState": null}),
            )
            .await
            .unwrap_err();
            r.answer(Some(Arc::new(Echo)), &json!({"resultType":"input_required","inputRequests":{"b":{"method":"roots/list"}}})).await.unwrap();
            r.apply(&mut p);
            assert!(p.get("requestState").is_none());
            for _ in 0..MAX_INPUT_ROUNDS {
                let _ = r
                    .answer(Some(Arc::new(Echo)), &json!({"requestState":"x"}))
                    .await;
            }
            assert!(r
                .answer(Some(Arc::new(Echo)), &json!({"requestState":"x"}))
                .await
                .is_err());
            // A refused input fails the call with the handler's error.
            let mut r = Rounds::new("tools/call");
            let e = r
                .answer(
                    None,
                    &json!({"inputRequests":{"s":{"method":"sampling/createMessage","params":{}}}}),
                )
                .await
                .unwrap_err();
            assert_eq!(
                e.code(),
                Some(crate::wire::jsonrpc::ErrorCode::METHOD_NOT_FOUND)
            );
        });
    }
}
