//! `createMCPServer` and the `MCPServer` class: the core [`McpServer`] over tools written in JS.

use std::rc::Rc;

use js_sys::{Array, Function, Promise, Reflect};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::context::ToolContext;
use super::convert::{from_js, member, response_to_js, to_js};
use super::{error_message, error_to_js};
use crate::http::media::DEFAULT_MCP_PATH;
use crate::primitives::tools::Tool;
use crate::protocol::{default_input_schema, is_object_schema, Content, ToolResult};
use crate::server::context::RequestContext;
use crate::server::{McpServer, ServerOptions};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcMessage, JsonRpcResponse};

/// An MCP server in JS (seed `MCPServer`): `dispatch`, `handle` and a Worker-style `fetch`.
#[wasm_bindgen(js_name = MCPServer)]
pub struct Server {
    server: McpServer,
    path: Rc<str>,
    on_error: Option<Function>,
    auth: Option<crate::http::auth::Authorizer>,
}

/// Create a server over JS tools (seed `createMCPServer`).
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path` naming the member) when an option is missing or
/// has the wrong type: `name` and `version` must be strings, `tools` an array of objects with a
/// string `name` and an `execute` function.
#[wasm_bindgen(js_name = createMCPServer)]
pub fn create_mcp_server(
    #[wasm_bindgen(unchecked_param_type = "MCPServerOptions")] options: JsValue,
) -> Result<Server, JsValue> {
    Server::from_options(&options).map_err(|e| error_to_js(&e))
}

#[wasm_bindgen(js_class = MCPServer)]
impl Server {
    /// The server's name (`serverInfo.name`).
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.server.info().name.clone()
    }

    /// The server's version (`serverInfo.version`).
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> String {
        self.server.info().version.clone()
    }

    /// The path `fetch` serves.
    #[wasm_bindgen(getter)]
    pub fn path(&self) -> String {
        self.path.to_string()
    }

    /// Run one already-parsed message (seed `dispatch`): a request resolves to its response; a
    /// notification or a response to `undefined`. A value that is not a valid message resolves
    /// to the error response it deserves (`-32600`, or `-32602` for non-object `params`), never a
    /// rejection. A `number` id must be a safe integer (beyond 2^53 − 1 JS has already rounded
    /// it, so it is refused with `-32600`); pass a `bigint` for larger ids — the response echoes
    /// it as a `bigint`.
    #[wasm_bindgen(unchecked_return_type = "Promise<JSONRPCResponse | undefined>")]
    pub fn dispatch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "JSONRPCMessage")] message: JsValue,
    ) -> Promise {
        let server = self.server.clone();
        let parsed = match from_js(&message) {
            // Not JSON as a whole (a bigint beyond 64 bits, a cycle, too deep): the answer
            // names the request's id when the id alone reads, so the caller can match it.
            Err(e) => Err(Some(JsonRpcResponse::error(
                Reflect::get(&message, &"id".into())
                    .ok()
                    .and_then(|id| from_js(&id).ok())
                    .and_then(|id| crate::wire::jsonrpc::RequestId::from_value(&id)),
                ErrorObject::invalid_request(e),
            ))),
            Ok(value) => JsonRpcMessage::from_value(value).map_err(|invalid| invalid.response()),
        };
        super::promise(async move {
            let response = match parsed {
                Ok(message) => server.dispatch(message).await,
                Err(response) => response,
            };
            Ok(response.map_or(JsValue::UNDEFINED, |r| response_to_js(&r)))
        })
    }

    /// The string boundary (seed `handle`): JSON text in, the response's JSON text out, or
    /// `undefined` for a notification. Malformed JSON → a `-32700` reply; an invalid message →
    /// `-32600`; a JSON-RPC batch → `-32600` "batches are not supported", nothing of it run (one
    /// message with no session has no negotiated revision; `fetch` receives batches at
    /// 2025-03-26, as the native route does). Ids stay exact: they never become JS numbers.
    #[wasm_bindgen(unchecked_return_type = "Promise<string | undefined>")]
    pub fn handle(&self, message: String) -> Promise {
        let server = self.server.clone();
        super::promise(async move {
            Ok(server
                .handle(&message)
                .await
                .map_or(JsValue::UNDEFINED, JsValue::from))
        })
    }

    /// The stateless Streamable HTTP route as a `fetch` handler, so
    /// `export default { fetch: (request) => server.fetch(request) }` is a Worker. Same statuses
    /// as the native route: 200 (JSON, or SSE per `Accept`), 202, 400, 404, 405, 406, 413, 415;
    /// a JSON-RPC batch is received where the request speaks 2025-03-26 (its
    /// `MCP-Protocol-Version`, or none), and refused (`400`) at every other revision;
    /// with the `auth` option, 401 / 403 / 503 and the protected resource metadata. When the
    /// request's `signal` aborts before it is answered (the client went away), the work is
    /// dropped (a running tool's `context.signal` aborts) and the answer is an empty `499`.
    /// Anything but a `Request` rejects with a `TypeError`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Response>")]
    pub fn fetch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Request")] request: JsValue,
    ) -> Promise {
        let Ok(request) = request.dyn_into::<web_sys::Request>() else {
            let error = js_sys::TypeError::new("fetch(request): expected a Request");
            return Promise::reject(&error);
        };
        let server = self.server.clone();
        let path = self.path.clone();
        let auth = self.auth.clone();
        super::promise(async move { super::fetch::respond(server, &path, auth, request).await })
    }

    /// The `tools/list` descriptors, in registration order.
    #[wasm_bindgen(js_name = listTools, unchecked_return_type = "MCPToolDescriptor[]")]
    pub fn list_tools(&self) -> JsValue {
        to_js(&serde_json::to_value(self.server.tools().list()).unwrap_or_default())
    }

    /// Add (or replace, by name) a JS tool.
    ///
    /// # Errors
    /// Throws an `MCPError` (`-32602`) when the tool is malformed.
    #[wasm_bindgen(js_name = addTool)]
    pub fn add_tool(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MCPTool")] tool: JsValue,
    ) -> Result<(), JsValue> {
        let tool = tool_from_js(&tool, "tool").map_err(|e| error_to_js(&e))?;
        self.server.tools().add(tool);
        Ok(())
    }

    /// Subscribe to `'request'`, fired at the top of every dispatch with `(method, id)` (`id`
    /// `undefined` for a notification; seed clause 10). A listener's throw never breaks the
    /// dispatch: it goes to the `error` option (default `console.error`).
    ///
    /// # Errors
    /// Throws an `MCPError` (`-32602`) for any other event name.
    pub fn on(
        &self,
        #[wasm_bindgen(unchecked_param_type = "'request'")] event: &str,
        #[wasm_bindgen(
            unchecked_param_type = "(method: string, id: RequestId | undefined) => void"
        )]
        listener: Function,
    ) -> Result<(), JsValue> {
        if event != "request" {
            return Err(error_to_js(&bad("event", "must be 'request'")));
        }
        if !listener.is_function() {
            return Err(error_to_js(&bad("listener", "must be a function")));
        }
        let on_error = self.on_error.clone();
        self.server.on_request(move |method, id| {
            let id = id.map_or(JsValue::UNDEFINED, |id| to_js(&id.to_value()));
            if let Err(thrown) = listener.call2(&JsValue::UNDEFINED, &method.into(), &id) {
                report(on_error.as_ref(), &thrown);
            }
        });
        Ok(())
    }

    /// Remove a tool by name; `true` when it was there.
    #[wasm_bindgen(js_name = removeTool)]
    pub fn remove_tool(&self, name: &str) -> bool {
        self.server.tools().remove(name)
    }
}

impl Server {
    fn from_options(options: &JsValue) -> Result<Server, ErrorObject> {
        if !options.is_object() {
            return Err(bad("options", "must be an object"));
        }
        let name = string_member(options, "name", "options")?
            .ok_or_else(|| bad("options.name", "is required"))?;
        let version = string_member(options, "version", "options")?
            .ok_or_else(|| bad("options.version", "is required"))?;
        let path = string_member(options, "path", "options")?
            .unwrap_or_else(|| DEFAULT_MCP_PATH.to_owned());
        if !path.starts_with('/') || path.contains(['?', '#']) {
            // A request's path always starts with `/` and is matched without its query: any
            // other would answer 404 to all.
            return Err(bad(
                "options.path",
                "must be a URL path: start with '/', without '?' or '#'",
            ));
        }
        // Declares `logging`: a tool's `ctx.log` reaches the client (spec
        // `server/utilities/logging`: a server that sends log messages declares it).
        let mut server_options = ServerOptions::new(name, version).with_logging();
        if let Some(instructions) = string_member(options, "instructions", "options")? {
            server_options = server_options.with_instructions(instructions);
        }
        if let Some(tools) = member(options, "tools", "options")? {
            let Some(tools) = tools.dyn_ref::<Array>() else {
                return Err(bad("options.tools", "must be an array"));
            };
            for (i, tool) in tools.iter().enumerate() {
                server_options
                    .tools
                    .add(tool_from_js(&tool, &format!("options.tools[{i}]"))?);
            }
        }
        let on_error = member(options, "error", "options")?
            .map(|f| {
                f.dyn_into::<Function>()
                    .map_err(|_| bad("options.error", "must be a function"))
            })
            .transpose()?;
        let auth = super::auth::authorizer_from_js(options)?;
        Ok(Server {
            // Tools only: neither the task engine nor the methods beyond tools are linked.
            server: McpServer::for_bindings(server_options),
            path: path.into(),
            on_error,
            auth,
        })
    }

    /// A JS-facing server over a core server (default path, no `error` option).
    pub fn from_core(server: McpServer) -> Server {
        Server {
            server,
            path: DEFAULT_MCP_PATH.into(),
            on_error: None,
            auth: None,
        }
    }

    /// The core server (for Rust code that embeds the bindings). From this call on it serves
    /// the methods beyond tools (`resources/read`, `prompts/get`, the skills, `completion/complete`)
    /// for what Rust code adds to its registries; a package that never calls it does not link
    /// them.
    pub fn core(&self) -> &McpServer {
        self.server.serve_extras();
        &self.server
    }
}

/// Hand a listener's throw to the `error` option, or to `console.error`; a throwing handler is
/// swallowed (it neither escapes nor recurses).
fn report(on_error: Option<&Function>, thrown: &JsValue) {
    match on_error {
        Some(handler) => {
            let _ = handler.call2(&JsValue::UNDEFINED, thrown, &"request".into());
        }
        None => web_sys::console::error_2(&"MCPServer: a request listener threw".into(), thrown),
    }
}

/// A response as a JS object (ids beyond 2^53 − 1 as `bigint`).
fn bad(path: &str, what: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("{path} {what}"))
        .with_data(serde_json::json!({ "path": path }))
}

fn string_member(object: &JsValue, key: &str, at: &str) -> Result<Option<String>, ErrorObject> {
    let Some(value) = member(object, key, at)? else {
        return Ok(None);
    };
    value
        .as_string()
        .map(Some)
        .ok_or_else(|| bad(&format!("{at}.{key}"), "must be a string"))
}

fn object_member(object: &JsValue, key: &str, at: &str) -> Result<Option<Value>, ErrorObject> {
    let Some(value) = member(object, key, at)? else {
        return Ok(None);
    };
    match from_js(&value) {
        Ok(v @ Value::Object(_)) => Ok(Some(v)),
        Ok(_) => Err(bad(&format!("{at}.{key}"), "must be an object")),
        // A cycle, a getter or trap that throws: say so (not "must be an object").
        Err(e) => Err(bad(
            &format!("{at}.{key}"),
            &format!("could not be read: {e}"),
        )),
    }
}

/// A tool's `inputSchema` / `outputSchema`: an object whose `type` is `"object"`
/// ([`is_object_schema`]); one that names no `type` gets `"type": "object"` (`{}` and a bare
/// `{ properties }` were served as given, and clients refuse such a listing), one that names
/// another is refused.
fn object_schema_member(tool: &JsValue, key: &str, at: &str) -> Result<Option<Value>, ErrorObject> {
    let Some(mut schema) = object_member(tool, key, at)? else {
        return Ok(None);
    };
    if let Some(map) = schema.as_object_mut().filter(|m| !m.contains_key("type")) {
        map.insert("type".to_owned(), Value::from("object"));
    }
    if !is_object_schema(&schema) {
        return Err(bad(
            &format!("{at}.{key}"),
            "must be the JSON Schema of an object: its \"type\" must be \"object\"",
        ));
    }
    Ok(Some(schema))
}

/// Read a JS tool object `{ name, description?, title?, inputSchema?, outputSchema?,
/// annotations?, execute }`; `at` names it in errors.
pub(crate) fn tool_from_js(tool: &JsValue, at: &str) -> Result<Tool, ErrorObject> {
    if !tool.is_object() {
        return Err(bad(at, "must be an object"));
    }
    let name = string_member(tool, "name", at)?
        .filter(|name| !name.is_empty())
        .ok_or_else(|| bad(&format!("{at}.name"), "is required (a non-empty string)"))?;
    let execute = member(tool, "execute", at)?
        .unwrap_or(JsValue::UNDEFINED)
        .dyn_into::<Function>()
        .map_err(|_| bad(&format!("{at}.execute"), "must be a function"))?;
    let input_schema =
        object_schema_member(tool, "inputSchema", at)?.unwrap_or_else(default_input_schema);
    let this = tool.clone();
    let output_schema = object_schema_member(tool, "outputSchema", at)?;
    let structured = output_schema.is_some();
    let mut built = Tool::from_json(name, input_schema, move |args, ctx| {
        run(execute.clone(), this.clone(), args, ctx, structured)
    });
    if let Some(description) = string_member(tool, "description", at)? {
        built = built.with_description(description);
    }
    if let Some(title) = string_member(tool, "title", at)? {
        built = built.with_title(title);
    }
    if let Some(annotations) = object_member(tool, "annotations", at)? {
        built = built.with_annotations(annotations);
    }
    if let Some(schema) = output_schema {
        let mut descriptor = built.descriptor().clone();
        descriptor.output_schema = Some(schema);
        built = built.with_descriptor(descriptor);
    }
    Ok(built)
}

/// Call a JS `execute(args)` with the tool object as `this`, await what it returns (a value, a
/// Promise or any thenable), and map it to a tool result (`structured`: the tool has an
/// `outputSchema`); a throw or a rejection is `Err`.
async fn run(
    execute: Function,
    this: JsValue,
    args: Map<String, Value>,
    ctx: RequestContext,
    structured: bool,
) -> Result<ToolResult, String> {
    let mut abandoned = AbortOnDrop(web_sys::AbortController::new().ok());
    let signal = abandoned.0.as_ref().map(web_sys::AbortController::signal);
    let context = JsValue::from(ToolContext::new(ctx, signal));
    let settled = match execute.call2(&this, &to_js(&Value::Object(args)), &context) {
        Ok(returned) => JsFuture::from(Promise::resolve(&returned)).await,
        Err(thrown) => Err(thrown),
    };
    abandoned.0 = None; // settled (or thrown): nothing to abort
    value_to_result(&settled.map_err(|e| error_message(&e))?, structured)
}

/// Aborts its controller when dropped while it still holds one: the call's future was dropped
/// before the tool settled (its stream's reader cancelled, the request cancelled).
struct AbortOnDrop(Option<web_sys::AbortController>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

/// Map what a JS tool returned to a tool result (seed `buildToolResult`): a string → one text
/// block; a `{ content: [...] }` object → itself; `undefined` → no content; else its JSON text.
/// With `structured` (the tool has an `outputSchema`), a plain object — not one shaped as a
/// result: `content`, `structuredContent` or `isError` — is the structured output, and its JSON
/// text the content.
pub(crate) fn value_to_result(value: &JsValue, structured: bool) -> Result<ToolResult, String> {
    if value.is_undefined() {
        return Ok(ToolResult::default());
    }
    if let Some(text) = value.as_string() {
        return Ok(ToolResult::text(text));
    }
    let json = from_js(value)?;
    let result_shaped = ["content", "structuredContent", "isError"]
        .iter()
        .any(|key| json.get(key).is_some());
    if structured && json.is_object() && !result_shaped {
        return Ok(ToolResult::structured(json));
    }
    Ok(tool_result_from_json(&json).unwrap_or_else(|| ToolResult::json(&json)))
}

/// Read a `{ content: [...], structuredContent?, isError?, _meta? }` object by hand (serde's
/// derive for the tagged, flattened `Content` costs more code than this whole reader).
fn tool_result_from_json(json: &Value) -> Option<ToolResult> {
    let object = json.as_object()?;
    let text = |block: &Map<String, Value>, key: &str| -> Option<String> {
        block.get(key)?.as_str().map(str::to_owned)
    };
    let mut content = Vec::new();
    let blocks = match (object.get("content"), object.get("structuredContent")) {
        (Some(blocks), _) => blocks.as_array()?.as_slice(),
        // Structured output alone: its JSON text is the content too (as `ToolResult::structured`
        // writes it, for clients that read no `structuredContent`).
        (None, Some(structured @ Value::Object(_))) => {
            content.push(Content::text(crate::wire::json_text::to_text(structured)));
            &[]
        }
        (None, _) => return None,
    };
    for block in blocks {
        let block = block.as_object()?;
        let annotations = block.get("annotations").cloned();
        content.push(match block.get("type")?.as_str()? {
            "text" => Content::Text {
                text: text(block, "text")?,
                annotations,
            },
            "image" => Content::Image {
                data: text(block, "data")?,
                mime_type: text(block, "mimeType")?,
                annotations,
            },
            "audio" => Content::Audio {
                data: text(block, "data")?,
                mime_type: text(block, "mimeType")?,
                annotations,
            },
            "resource_link" => {
                let mut rest = block.clone();
                rest.remove("type");
                let (Some(Value::String(uri)), Some(Value::String(name))) =
                    (rest.remove("uri"), rest.remove("name"))
                else {
                    return None;
                };
                Content::ResourceLink { uri, name, rest }
            }
            "resource" => Content::Resource {
                resource: block.get("resource").filter(|r| r.is_object())?.clone(),
                annotations,
            },
            _ => return None,
        });
    }
    Some(ToolResult {
        content,
        structured_content: object
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned(),
        is_error: match object.get("isError") {
            None | Some(Value::Null) => None,
            Some(flag) => Some(flag.as_bool()?),
        },
        meta: object.get("_meta").cloned(),
    })
}
