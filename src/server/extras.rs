//! The methods beyond tools: `resources/read`, `resources/subscribe` / `unsubscribe`,
//! `prompts/get`, `completion/complete`, and the skills extension's (`skills.rs`), each served
//! on the condition the method table (`methods.rs`) checks first; and the listings behind
//! `resources/list`, `resources/templates/list` and `prompts/list` (`lists.rs` answers them).
//!
//! So is sealing and opening a 2026-07-28 `requestState` (HMAC-SHA256, [`StateSealer`]): only a
//! tool that asks for input ends a round with state, and a JS tool cannot; a server without
//! [`Extras`] answers every `requestState` as sealed by no key it knows
//! ([`mrtr::refuse_unknown`]).
//!
//! The server reaches them only through [`Extras`], which a server built by
//! [`McpServer::new`] holds, and one built by [`McpServer::for_bindings`] from
//! [`McpServer::serve_extras`] on (the bindings' Rust-side `Server::core`). The JS bindings build their servers with [`McpServer::for_bindings`] (tools;
//! no completer, no declared lists, no tasks): a program that builds servers only that way and
//! never adds a resource, a prompt or a skill (the npm packages) does not link this code.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::methods::{string_param, unknown_scope};
use super::{McpServer, MAX_SUBSCRIPTION_URI_BYTES};
use crate::era::mrtr::{self, StateSealer};
use crate::primitives::listing::Listing;
use crate::primitives::resources::ResourceDescriptor;
use crate::protocol::params;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

/// One method beyond tools (`server`, `method`, `params`, `ctx`), its params not yet checked.
type CallExtra = for<'a> fn(
    &'a McpServer,
    &'a str,
    Option<Map<String, Value>>,
    RequestContext,
) -> BoxFuture<'a, Result<Value, ErrorObject>>;

/// [`StateSealer::open`]: the sealer, the state, the method, the name, the time in ms.
type OpenState = fn(&StateSealer, &str, &str, &str, Option<u64>) -> Result<Value, ErrorObject>;

/// How a server serves the methods beyond tools ([`EXTRAS`], the only one).
pub(crate) struct Extras {
    /// One of those methods, its params not yet checked.
    call: CallExtra,
    /// The `resources/list` entries of the served skill files.
    skill_resources: fn(&McpServer) -> Vec<ResourceDescriptor>,
    /// The listing of `resources/list`, `resources/templates/list` or `prompts/list`.
    listing: fn(&McpServer, &str) -> Arc<Listing>,
    /// [`StateSealer::seal`].
    seal_state: fn(&StateSealer, &Value, &str, &str, u64) -> String,
    /// [`StateSealer::open`].
    open_state: OpenState,
}

/// The methods beyond tools, handed to a server by [`McpServer::new`] or
/// [`McpServer::serve_extras`].
pub(crate) static EXTRAS: Extras = Extras {
    call: |server, method, params, ctx| Box::pin(call_extra(server, method, params, ctx)),
    skill_resources: |server| server.inner.options.skills.snapshot().resources(),
    listing: listing_of,
    seal_state: StateSealer::seal,
    open_state: StateSealer::open,
};

/// [`Extras::listing`]: the registered resources, then (with skills) the served skill files,
/// computed now; the resource templates; the prompts.
fn listing_of(server: &McpServer, method: &str) -> Arc<Listing> {
    let o = &server.inner.options;
    match method {
        "resources/list" if !o.skills.is_empty() => {
            Arc::new(o.resources.listing().extended(&server.skill_resources()))
        }
        "resources/list" => o.resources.listing(),
        "resources/templates/list" => o.resources.template_listing(),
        _ => o.prompts.listing(),
    }
}

impl McpServer {
    /// How this server serves the methods beyond tools: always when built by
    /// [`McpServer::new`]; else from [`McpServer::serve_extras`] on.
    fn extras(&self) -> Option<&'static Extras> {
        self.inner.extras.get().copied()
    }

    /// A method beyond tools that the method table serves (its condition already checked);
    /// `-32601` on a server that has nothing to serve it with.
    pub(super) async fn call_extra(
        &self,
        method: &str,
        params: Option<Map<String, Value>>,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        match self.extras() {
            Some(extras) => (extras.call)(self, method, params, ctx).await,
            None => Err(ErrorObject::method_not_found(method)),
        }
    }

    /// A round's `requestState` sealed for `method` on `name` at `now_ms`; `-32603` on a server
    /// without [`Extras`] (none of its tools can ask for input, so it never has state to seal).
    pub(super) fn seal_state(
        &self,
        state: &Value,
        method: &str,
        name: &str,
        now_ms: u64,
    ) -> Result<String, ErrorObject> {
        match self.extras() {
            Some(extras) => Ok((extras.seal_state)(
                &self.inner.sealer,
                state,
                method,
                name,
                now_ms,
            )),
            None => Err(ErrorObject::internal("input required outside a round")),
        }
    }

    /// A `requestState` opened for `method` on `name` at `now_ms` ([`StateSealer::open`]); on a
    /// server without [`Extras`], which never sealed one, the answer to a state no key of its
    /// own sealed.
    pub(super) fn open_state(
        &self,
        sealed: &str,
        method: &str,
        name: &str,
        now_ms: Option<u64>,
    ) -> Result<Value, ErrorObject> {
        match self.extras() {
            Some(extras) => (extras.open_state)(&self.inner.sealer, sealed, method, name, now_ms),
            None => Err(mrtr::refuse_unknown(sealed)),
        }
    }

    /// The listing of `resources/list`, `resources/templates/list` or `prompts/list`; `None` on
    /// a server without extras (which has none of them to serve: its registries stay empty).
    pub(super) fn extra_listing(&self, method: &str) -> Option<Arc<Listing>> {
        self.extras().map(|extras| (extras.listing)(self, method))
    }

    /// The `resources/list` entries of the served skill files (none without skills).
    pub(super) fn skill_resources(&self) -> Vec<ResourceDescriptor> {
        match self.extras() {
            Some(extras) if !self.inner.options.skills.is_empty() => (extras.skill_resources)(self),
            _ => Vec::new(),
        }
    }
}

/// [`Extras::call`]: the method's params checked against the spec's schema, then the method.
async fn call_extra(
    server: &McpServer,
    method: &str,
    params: Option<Map<String, Value>>,
    ctx: RequestContext,
) -> Result<Value, ErrorObject> {
    let o = &server.inner.options;
    params::check_request(method, params.as_ref())?;
    match method {
        "resources/read" => {
            let uri = string_param(params.as_ref(), "uri")?;
            let contents = match server.read_skill_file(&uri) {
                Some(contents) => contents,
                None => o.resources.read(&uri, ctx).await?,
            };
            Ok(json!({ "contents": contents }))
        }
        "skills/list" | "skills/get" | "resources/directory/read" => {
            server.call_skills(method, params.as_ref())
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = string_param(params.as_ref(), "uri")?;
            let subscribe = method == "resources/subscribe";
            if uri.is_empty() {
                return Err(ErrorObject::invalid_params(r#""uri" must not be empty"#));
            }
            if subscribe && uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
                return Err(ErrorObject::invalid_params(format!(
                    r#""uri" is longer than {MAX_SUBSCRIPTION_URI_BYTES} bytes"#
                )));
            }
            if let Some(scope) = &ctx.scope {
                let changed = server.inner.peers.with(scope, |peer| {
                    if subscribe {
                        peer.subscriptions.subscribe(uri)
                    } else {
                        peer.subscriptions.remove(&uri);
                        Ok(())
                    }
                });
                match changed {
                    Some(changed) => changed?,
                    // Nothing to remove: the URI is not subscribed.
                    None if !subscribe => return Ok(json!({})),
                    None => return Err(unknown_scope()),
                }
                server.save_scope(scope).await;
            }
            Ok(json!({}))
        }
        "prompts/get" => {
            let name = string_param(params.as_ref(), "name")?;
            let arguments = match params.as_ref().and_then(|p| p.get("arguments")) {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(args)) => args.clone(),
                Some(_) => {
                    return Err(ErrorObject::invalid_params(
                        r#""arguments" must be an object"#,
                    ))
                }
            };
            let result = o.prompts.get(&name, arguments, ctx).await?;
            Ok(serde_json::to_value(result).expect("prompt results serialize"))
        }
        "completion/complete" => {
            let params =
                params.ok_or_else(|| ErrorObject::invalid_params(r#"missing "params""#))?;
            if !params.get("ref").is_some_and(Value::is_object)
                || !params.get("argument").is_some_and(Value::is_object)
            {
                return Err(ErrorObject::invalid_params(
                    r#"completion/complete needs "ref" and "argument" objects"#,
                ));
            }
            let Some(completer) = o.completer.as_ref() else {
                return Err(ErrorObject::method_not_found(method));
            };
            let mut completion = completer(Value::Object(params), ctx).await?;
            completion.values.truncate(100);
            Ok(json!({ "completion": completion }))
        }
        other => Err(ErrorObject::method_not_found(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::resources::Resource;
    use crate::wire::jsonrpc::{ErrorCode, JsonRpcMessage, JsonRpcRequest};
    use crate::ServerOptions;
    use futures::executor::block_on;

    fn ask(server: &McpServer, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let request = JsonRpcRequest::new(1, method).with_params(params);
        let response = block_on(server.dispatch(JsonRpcMessage::Request(request)));
        let payload = response.expect("an answer").payload;
        payload.map(|result| result.into_value())
    }

    /// A server built as the JS bindings build theirs has no extras of its own; once
    /// `serve_extras` ran (the bindings' `Server::core` does), it serves what its registries get.
    #[test]
    fn a_server_for_the_bindings_serves_extras_once_asked_to() {
        let server = McpServer::for_bindings(ServerOptions::new("t", "1"));
        let read = json!({ "uri": "test://a" });
        let refused = ask(&server, "resources/read", read.clone()).expect_err("not served");
        assert_eq!(refused.code, ErrorCode::METHOD_NOT_FOUND);
        let tasks = ask(&server, "tasks/get", json!({ "taskId": "x" })).expect_err("no tasks");
        assert_eq!(tasks.code, ErrorCode::METHOD_NOT_FOUND);
        server.serve_extras();
        server
            .resources()
            .add(Resource::text("test://a", "a", "text/plain", "hello"));
        let contents = ask(&server, "resources/read", read).expect("served");
        assert_eq!(contents["contents"][0]["text"], "hello", "{contents}");
        let tasks = ask(&server, "tasks/get", json!({ "taskId": "x" })).expect_err("no tasks");
        assert_eq!(
            tasks.code,
            ErrorCode::METHOD_NOT_FOUND,
            "tasks stay McpServer::new's"
        );
    }

    /// A server built for the bindings has no key to open a `requestState` with: it answers
    /// each as `McpServer::new`'s answers one sealed by a key not its own — before and after
    /// `serve_extras` (which hands it its sealer).
    #[test]
    fn a_server_for_the_bindings_answers_request_state_as_sealed_by_no_key_it_knows() {
        let call = |server: &McpServer, state: &str| {
            let meta = json!({
                crate::era::META_PROTOCOL_VERSION: crate::era::MODERN_PROTOCOL_VERSION,
                crate::era::META_CLIENT_CAPABILITIES: {},
            });
            let params = json!({
                "name": "t", "arguments": {}, "_meta": meta,
                "inputResponses": {}, "requestState": state,
            });
            ask(server, "tools/call", params).expect_err("refused")
        };
        let foreign = StateSealer::with_key([9; 32]).seal(&json!(1), "tools/call", "t", 0);
        let cases = [
            ("junk", "Invalid params: invalid requestState: malformed"),
            ("a.b!", "Invalid params: invalid requestState: malformed"),
            (
                foreign.as_str(),
                "Invalid params: invalid requestState: integrity check failed",
            ),
        ];
        let bindings = McpServer::for_bindings(ServerOptions::new("t", "1"));
        let full = McpServer::new(ServerOptions::new("t", "1"));
        for server in [&bindings, &full] {
            for (state, message) in cases {
                let refused = call(server, state);
                assert_eq!(refused.code, ErrorCode::INVALID_PARAMS, "{state}");
                assert_eq!(refused.message, message, "{state}");
            }
        }
        bindings.serve_extras();
        for (state, message) in cases {
            assert_eq!(call(&bindings, state).message, message, "{state}");
        }
    }

    /// A server built by `McpServer::new` serves them from the start.
    #[test]
    fn a_server_from_new_serves_extras() {
        let server = McpServer::new(ServerOptions::new("t", "1"));
        server
            .resources()
            .add(Resource::text("test://a", "a", "text/plain", "hello"));
        let contents =
            ask(&server, "resources/read", json!({ "uri": "test://a" })).expect("served");
        assert_eq!(contents["contents"][0]["text"], "hello", "{contents}");
    }
}
