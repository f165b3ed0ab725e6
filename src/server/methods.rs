//! The method table: what each request method does (`initialize`, `ping`, `server/discover`,
//! `tools/call`, `logging/setLevel`; the resources, prompts, completion and skills methods in
//! `extras.rs`), with its params read and its lists paginated (spec
//! [`server/utilities/pagination`](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination)).
//! The cacheable lists (`tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list`) are answered before it, from their registries' cached listings (`lists.rs`).

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::McpServer;
use crate::era::Era;
use crate::protocol::{initialize_result, negotiate_initialize, params, LogLevel};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorObject, JsonRpcRequest};

impl McpServer {
    pub(super) async fn call(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        let o = &self.inner.options;
        let params = request.params;
        // Each served method's params are checked against the spec's schema first (a method
        // this server does not serve stays -32601, whatever its params).
        let checked = || params::check_request(&request.method, params.as_ref());
        match request.method.as_str() {
            "initialize" => {
                checked()?;
                let version = negotiate_initialize(params.as_ref())?;
                let mut declared = self.capabilities();
                if ctx.stateless {
                    without_pushes(&mut declared);
                }
                let context = ctx.authorization();
                if ctx.scope.is_none() && context.is_none() {
                    // No session, connection or token to bind tasks to: `tasks/list` would
                    // list everyone's (2025-11-25 tasks, Task Isolation: SHOULD NOT declare it).
                    if let Some(tasks) = declared.get_mut("tasks").and_then(Value::as_object_mut) {
                        tasks.remove("list");
                    }
                }
                if let Some(scope) = &ctx.scope {
                    // Shared with the other scopes that recorded equal ones: no copy per scope.
                    let peers = &self.inner.peers;
                    let caps = params.as_ref().and_then(|p| p.get("capabilities"));
                    let caps = caps.map(|caps| peers.client_capabilities.share(caps));
                    let declared = peers.server_capabilities.share(&declared);
                    peers.open(scope, |peer| {
                        peer.client_capabilities = caps;
                        peer.server_capabilities = Some(declared);
                        peer.protocol_version = Some(version.into());
                        // Spec, Security Best Practices, Session Hijacking: bind the session
                        // to the user (checked by the HTTP route on each later request).
                        peer.authorization = context.map(std::sync::Arc::new);
                    });
                    self.save_scope(scope).await;
                }
                let mut result = initialize_result(&o.info, version);
                result.capabilities = declared;
                result.instructions.clone_from(&o.instructions);
                Ok(serde_json::to_value(result).expect("initialize results serialize"))
            }
            "ping" => checked().map(|()| json!({})),
            "server/discover" => checked().map(|()| self.discover()),
            "subscriptions/listen" if ctx.era == Era::Modern => {
                checked()?;
                self.listen(params, ctx).await
            }
            "tools/call" => {
                checked()?;
                self.call_tool(params, ctx).await
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" | "tasks/list" => {
                self.task_method(&request.method, params, &ctx).await
            }
            // The methods beyond tools (`extras.rs`), each served on its own condition.
            // A stateless endpoint could never deliver a resource update: not served there
            // (its `initialize` declared no `subscribe`).
            "resources/subscribe" | "resources/unsubscribe" if ctx.stateless => {
                Err(ErrorObject::method_not_found(&request.method))
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe"
                if self.serves_resources() =>
            {
                self.call_extra(&request.method, params, ctx).await
            }
            "skills/list" | "skills/get" | "resources/directory/read" if !o.skills.is_empty() => {
                self.call_extra(&request.method, params, ctx).await
            }
            "prompts/get" if o.declare_lists || !o.prompts.is_empty() => {
                self.call_extra(&request.method, params, ctx).await
            }
            "completion/complete" if o.completer.is_some() => {
                self.call_extra(&request.method, params, ctx).await
            }
            "logging/setLevel" if o.logging => {
                checked()?;
                let level = params
                    .as_ref()
                    .and_then(|p| p.get("level"))
                    .and_then(Value::as_str)
                    .and_then(LogLevel::from_name)
                    .ok_or_else(|| {
                        ErrorObject::invalid_params(
                            r#""level" must be a logging level (debug … emergency)"#,
                        )
                    })?;
                if let Some(scope) = &ctx.scope {
                    (self.inner.peers)
                        .with(scope, |peer| peer.log_level = Some(level))
                        .ok_or_else(unknown_scope)?;
                    self.save_scope(scope).await;
                }
                Ok(json!({}))
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// `-32600` for a request that would record state in a scope (a connection or session) the
/// server does not know: never opened by an `initialize` or a host's
/// [`attach`](McpServer::attach), or already ended. Recording it would bring back state nothing
/// frees again.
pub(super) fn unknown_scope() -> ErrorObject {
    ErrorObject::invalid_request(
        "this session or connection is not initialized or has ended: send initialize first",
    )
}

/// The caller may run `tool` (named `name`): its bearer token holds every scope the tool
/// requires, else `-32600` naming the first missing one.
pub(super) fn check_scopes(
    tool: &crate::primitives::tools::Tool,
    name: &str,
    ctx: &crate::server::context::RequestContext,
) -> Result<(), ErrorObject> {
    match ctx
        .identity
        .as_deref()
        .and_then(|i| i.lacks(tool.required_scopes()))
    {
        Some(missing) => Err(ErrorObject::invalid_request(format!(
            "the bearer token lacks the scope {name} requires ({missing})"
        ))),
        None => Ok(()),
    }
}

/// Read `tools/call` params: `name` (a string) and `arguments` (an object; absent → `{}`).
pub(super) fn tool_call_params(
    params: Option<Map<String, Value>>,
) -> Result<(String, Value), ErrorObject> {
    let params =
        params.ok_or_else(|| ErrorObject::invalid_params(r#"tools/call needs "params""#))?;
    // One pass over the members, taking the two it reads (no lookups into the map).
    let (mut name, mut arguments) = (None, None);
    for (key, value) in params {
        match key.as_str() {
            "name" => name = Some(value),
            "arguments" => arguments = Some(value),
            _ => {}
        }
    }
    let name = match name {
        Some(Value::String(name)) => name,
        Some(_) => return Err(ErrorObject::invalid_params(r#""name" must be a string"#)),
        None => return Err(ErrorObject::invalid_params(r#"missing "name""#)),
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                r#""arguments" must be an object"#,
            ))
        }
    };
    Ok((name, arguments))
}

pub(super) fn string_param(
    params: Option<&Map<String, Value>>,
    key: &str,
) -> Result<String, ErrorObject> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be a string"
        ))),
        None => Err(ErrorObject::invalid_params(format!("missing \"{key}\""))),
    }
}

/// One page of `items` after `params.cursor` (an opaque offset we issued); the next cursor when
/// more remain (spec `server/utilities/pagination`).
pub(super) fn page<T>(
    items: Vec<T>,
    params: Option<&Map<String, Value>>,
    size: Option<usize>,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let (start, end, next) = page_bounds(items.len(), params, size)?;
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

/// The page of a list of `len` items after `params.cursor`: its first and past-the-end index,
/// and the next cursor when more remain (at most `size` items a page; all of them without one).
///
/// # Errors
/// `-32602` for a cursor that is not a string, or not one this server issued for this list
/// (`o` and an offset within it).
pub(super) fn page_bounds(
    len: usize,
    params: Option<&Map<String, Value>>,
    size: Option<usize>,
) -> Result<(usize, usize, Option<String>), ErrorObject> {
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= len)
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor: {cursor}")))?,
        Some(_) => return Err(ErrorObject::invalid_params(r#""cursor" must be a string"#)),
    };
    let Some(size) = size else {
        return Ok((start, len, None));
    };
    let end = start.saturating_add(size).min(len);
    let next = (end < len).then(|| format!("o{end}"));
    Ok((start, end, next))
}

pub(super) fn listed<T: Serialize>(key: &str, items: Vec<T>, next: Option<String>) -> Value {
    let mut out = Map::new();
    out.insert(
        key.to_owned(),
        serde_json::to_value(items).expect("descriptors serialize"),
    );
    if let Some(next) = next {
        out.insert("nextCursor".to_owned(), Value::String(next));
    }
    Value::Object(out)
}

/// Take out of `caps` what needs a channel for messages not tied to a request (`listChanged`,
/// `resources.subscribe`): a stateless endpoint has none (spec 2025-11-25
/// [server/tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#capabilities):
/// `listChanged` says whether the server *will emit* the notification).
fn without_pushes(caps: &mut Value) {
    for kind in ["tools", "resources", "prompts"] {
        if let Some(cap) = caps.get_mut(kind).and_then(Value::as_object_mut) {
            cap.remove("listChanged");
            cap.remove("subscribe");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{MAX_SUBSCRIPTIONS_PER_SCOPE, MAX_SUBSCRIPTION_URI_BYTES};
    use crate::wire::jsonrpc::{ErrorCode, JsonRpcMessage, JsonRpcResponse};
    use crate::ServerOptions;
    use futures::executor::block_on;

    /// A server serving resources, with scope `scope` initialized.
    fn server_with(scopes: &[&str]) -> McpServer {
        let server = McpServer::new(ServerOptions::new("t", "1").with_declared_lists());
        for scope in scopes {
            let reply = ask(
                &server,
                scope,
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                }),
            );
            assert!(reply.payload.is_ok(), "{reply:?}");
        }
        server
    }

    fn ask(server: &McpServer, scope: &str, method: &str, params: Value) -> JsonRpcResponse {
        let request = JsonRpcRequest::new(1, method).with_params(params);
        let ctx = RequestContext::new().with_scope(scope);
        block_on(server.dispatch_with(JsonRpcMessage::Request(request), ctx)).expect("an answer")
    }

    fn subscribe(server: &McpServer, scope: &str, uri: &str) -> JsonRpcResponse {
        ask(server, scope, "resources/subscribe", json!({ "uri": uri }))
    }

    fn subscribed(server: &McpServer, scope: &str) -> Vec<String> {
        server.scope_state(scope).expect("a scope").subscriptions
    }

    #[test]
    fn subscriptions_are_capped_per_scope_and_unsubscribing_frees_a_place() {
        let server = server_with(&["s", "t"]);
        let uri = |n: usize| format!("test://r/{n}");
        for n in 0..MAX_SUBSCRIPTIONS_PER_SCOPE {
            assert!(subscribe(&server, "s", &uri(n)).payload.is_ok());
        }
        // One more is refused, saying why, and nothing is recorded.
        let over = subscribe(&server, "s", "test://r/over");
        let error = over.payload.expect_err("refused");
        assert_eq!(error.code, ErrorCode::SERVER_ERROR);
        assert!(
            error
                .message
                .starts_with("too many resource subscriptions: at most 1024"),
            "{}",
            error.message
        );
        let held = subscribed(&server, "s");
        assert_eq!(held.len(), MAX_SUBSCRIPTIONS_PER_SCOPE);
        assert!(!held.contains(&"test://r/over".to_owned()));
        // Subscribing again to a URI already held still succeeds, and takes no place.
        assert!(subscribe(&server, "s", &uri(7)).payload.is_ok());
        assert_eq!(subscribed(&server, "s").len(), MAX_SUBSCRIPTIONS_PER_SCOPE);
        // The cap is per scope: another session subscribes freely.
        assert!(subscribe(&server, "t", "test://r/over").payload.is_ok());
        // Unsubscribing frees a place for a new URI.
        let freed = ask(
            &server,
            "s",
            "resources/unsubscribe",
            json!({ "uri": uri(7) }),
        );
        assert!(freed.payload.is_ok());
        assert!(subscribe(&server, "s", "test://r/over").payload.is_ok());
        let held = subscribed(&server, "s");
        assert_eq!(held.len(), MAX_SUBSCRIPTIONS_PER_SCOPE);
        assert!(held.contains(&"test://r/over".to_owned()) && !held.contains(&uri(7)));
    }

    #[test]
    fn subscribe_refuses_a_missing_empty_or_overlong_uri_with_invalid_params() {
        let server = server_with(&["s"]);
        let code = |r: JsonRpcResponse| r.payload.expect_err("refused").code;
        for method in ["resources/subscribe", "resources/unsubscribe"] {
            assert_eq!(
                code(ask(&server, "s", method, json!({}))),
                ErrorCode::INVALID_PARAMS
            );
            let not_a_string = ask(&server, "s", method, json!({ "uri": 7 }));
            assert_eq!(code(not_a_string), ErrorCode::INVALID_PARAMS);
            let empty = ask(&server, "s", method, json!({ "uri": "" }));
            let error = empty.payload.expect_err("refused");
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(error.message, r#"Invalid params: "uri" must not be empty"#);
        }
        let longest = format!("test://{}", "x".repeat(MAX_SUBSCRIPTION_URI_BYTES - 7));
        assert!(subscribe(&server, "s", &longest).payload.is_ok());
        let longer = format!("{longest}x");
        let error = subscribe(&server, "s", &longer)
            .payload
            .expect_err("refused");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            error.message,
            r#"Invalid params: "uri" is longer than 8192 bytes"#
        );
        assert_eq!(subscribed(&server, "s"), [longest]);
    }
}
