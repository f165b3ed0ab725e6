//! What a client answers when a server asks it for something: sampling
//! (`sampling/createMessage`), elicitation (`elicitation/create`) and roots (`roots/list`).
//!
//! One handler serves both protocol eras: in the handshake era the server sends these as
//! JSON-RPC requests and the client answers them; on the 2026-07-28 wire the server returns an
//! input-required result and the client retries with the handler's answers in `inputResponses`
//! (multi round-trip requests, SEP-2322). The capabilities the client declares come from
//! [`ClientHandler::capabilities`].

use serde_json::{json, Value};

use crate::wire::jsonrpc::ErrorObject;
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// Answers a server's sampling, elicitation and roots requests. Every method has a default that
/// refuses with `-32601`, so implement only what you support, and declare it in
/// [`ClientHandler::capabilities`].
pub trait ClientHandler: MaybeSend + MaybeSync + 'static {
    /// The client capabilities to declare, e.g. `{"sampling":{}, "elicitation":{"form":{}},
    /// "roots":{}}` (default: none, `{}`).
    fn capabilities(&self) -> Value {
        json!({})
    }

    /// `sampling/createMessage`: `params` is CreateMessageRequest params; the answer is a
    /// CreateMessageResult (`role`, `content`, `model`, `stopReason`?).
    ///
    /// # Errors
    /// A JSON-RPC error for the server (default `-32601`).
    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let _ = params;
        refuse("sampling/createMessage")
    }

    /// `elicitation/create`: `params` holds `message` and `requestedSchema` (form mode) or
    /// `mode: "url"` and `url`; the answer is an ElicitResult (`action`: accept / decline /
    /// cancel, `content` for an accepted form).
    ///
    /// # Errors
    /// A JSON-RPC error for the server (default `-32601`).
    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let _ = params;
        refuse("elicitation/create")
    }

    /// `roots/list`: the answer is `{ "roots": [{ "uri", "name"? }] }`.
    ///
    /// # Errors
    /// A JSON-RPC error for the server (default `-32601`).
    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        refuse("roots/list")
    }
}

fn refuse(method: &'static str) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    Box::pin(async move { Err(ErrorObject::method_not_found(method)) })
}

/// Route one server request (`method`, `params`) to `handler`: sampling, elicitation, roots, or
/// `-32601` for anything else (`ping` is answered by the client itself). For a method whose
/// capability the handler declares, params that break the spec's schema are answered `-32602`
/// naming the member, before the handler runs.
pub fn answer(
    handler: &dyn ClientHandler,
    method: &str,
    params: Value,
) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    // A request the handler serves (its capability declared) is checked against the schema
    // first; any other keeps its -32601 whatever its params.
    let declared = crate::protocol::client_capability_for(method)
        .is_some_and(|capability| handler.capabilities().get(capability).is_some());
    if declared {
        if let Err(error) = crate::protocol::params::check_server_request(method, &params) {
            return Box::pin(async move { Err(error) });
        }
    }
    match method {
        "sampling/createMessage" => handler.create_message(params),
        "elicitation/create" => handler.elicit(params),
        "roots/list" => handler.list_roots(),
        other => {
            let error = ErrorObject::method_not_found(other);
            Box::pin(async move { Err(error) })
        }
    }
}

/// The handler that supports nothing (declares no capabilities).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHandler;

impl ClientHandler for NoHandler {}

/// Apply the requested schema's `default` values to an accepted elicitation form (SEP-1034):
/// every property of `params.requestedSchema.properties` that has a `default` and is missing from
/// `content` is filled in. `content` that is not an object is left as is.
///
/// ```
/// use serde_json::json;
/// let params = json!({"requestedSchema": {"type": "object", "properties": {
///     "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}}}});
/// let mut content = json!({});
/// orkestrel_mcp::client::apply_elicitation_defaults(&params, &mut content);
/// assert_eq!(content, json!({"name": "Ada"}));
/// ```
pub fn apply_elicitation_defaults(params: &Value, content: &mut Value) {
    let Some(properties) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    else {
        return;
    };
    let Value::Object(content) = content else {
        return;
    };
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            if !content.contains_key(name) {
                content.insert(name.clone(), default.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Roots;
    impl ClientHandler for Roots {
        fn capabilities(&self) -> Value {
            json!({ "roots": {} })
        }
        fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
            Box::pin(async { Ok(json!({ "roots": [{ "uri": "file:///w" }] })) })
        }
    }

    #[test]
    fn answer_routes_to_the_handler_and_refuses_the_rest() {
        let run =
            |h: &dyn ClientHandler, m: &str| futures::executor::block_on(answer(h, m, json!({})));
        assert_eq!(
            run(&Roots, "roots/list").unwrap()["roots"][0]["uri"],
            "file:///w"
        );
        for method in ["sampling/createMessage", "elicitation/create", "tools/list"] {
            assert_eq!(run(&Roots, method).unwrap_err().code.0, -32601, "{method}");
        }
        assert_eq!(run(&NoHandler, "roots/list").unwrap_err().code.0, -32601);
        assert_eq!(NoHandler.capabilities(), json!({}));
    }

    #[test]
    fn a_declared_request_with_params_off_the_schema_is_refused_before_the_handler() {
        struct Elicits;
        impl ClientHandler for Elicits {
            fn capabilities(&self) -> Value {
                json!({"elicitation": {}})
            }
            fn elicit(&self, _: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
                Box::pin(async { Ok(json!({"action": "decline"})) })
            }
        }
        let run = |params: Value| {
            futures::executor::block_on(answer(&Elicits, "elicitation/create", params))
        };
        let refused = run(json!({"message": 7, "requestedSchema": {}})).unwrap_err();
        assert_eq!(refused.code.0, -32602);
        assert!(
            refused.message.contains(r#""message" must be a string"#),
            "{}",
            refused.message
        );
        assert_eq!(run(json!({"message": "m"})).unwrap_err().code.0, -32602);
        assert_eq!(
            run(json!({"message": "m", "requestedSchema": {"type": "object"}})).unwrap(),
            json!({"action": "decline"})
        );
    }
}
