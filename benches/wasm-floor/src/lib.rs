//! The size floor of the wasm package rows (`benches/run.sh`, part `wasm`): the least a JSON-RPC
//! tool server on `serde_json` and `wasm-bindgen` carries, built exactly as the packages are
//! (`tests/wasm/build.sh floor`: profile `wasm-release`, `std` rebuilt for size, `wasm-opt`,
//! minified glue).
//!
//! `new Server()`, `add(descriptorJson, execute)`, `handle(text)`: `tools/list` and `tools/call`
//! (a JS function, its promise awaited, its text returned as one text block), `-32700` for text
//! that is not a request, `-32601` for any other method, `-32602` for an unknown tool. No
//! validation, lifecycle, notifications, sessions, HTTP or client: what is in the packages beyond
//! this is what the MCP server, its HTTP route and the client add.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;

#[derive(Deserialize)]
struct Request {
    id: Option<Value>,
    method: String,
    #[serde(default)]
    params: Value,
}

#[derive(Serialize)]
struct Response {
    jsonrpc: &'static str,
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Error>,
}

#[derive(Serialize)]
struct Error {
    code: i64,
    message: String,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    input_schema: Value,
}

/// The floor server: tools in a map, one request at a time.
#[wasm_bindgen]
#[derive(Default)]
pub struct Server {
    tools: RefCell<HashMap<String, (Descriptor, js_sys::Function)>>,
}

#[wasm_bindgen]
impl Server {
    /// An empty server.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Server {
        Server::default()
    }

    /// Add a tool: its descriptor as JSON text, and the function to call.
    pub fn add(&self, descriptor: &str, execute: js_sys::Function) -> Result<(), JsError> {
        let descriptor: Descriptor =
            serde_json::from_str(descriptor).map_err(|e| JsError::new(&e.to_string()))?;
        self.tools
            .borrow_mut()
            .insert(descriptor.name.clone(), (descriptor, execute));
        Ok(())
    }

    /// Answer one JSON-RPC message (`undefined` for a notification).
    pub async fn handle(&self, text: String) -> Option<String> {
        let (id, answer) = match serde_json::from_str::<Request>(&text) {
            Ok(request) => (request.id.clone()?, self.answer(request).await),
            Err(e) => (Value::Null, Err(error(-32700, e.to_string()))),
        };
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        serde_json::to_string(&Response {
            jsonrpc: "2.0",
            id,
            result,
            error,
        })
        .ok()
    }
}

impl Server {
    async fn answer(&self, request: Request) -> Result<Value, Error> {
        match request.method.as_str() {
            "tools/list" => {
                let tools: Vec<Descriptor> =
                    self.tools.borrow().values().map(|t| t.0.clone()).collect();
                Ok(serde_json::json!({ "tools": tools }))
            }
            "tools/call" => {
                let name = request
                    .params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let execute = self.tools.borrow().get(name).map(|t| t.1.clone());
                let execute =
                    execute.ok_or_else(|| error(-32602, format!("unknown tool: {name}")))?;
                let arguments = request
                    .params
                    .get("arguments")
                    .map(Value::to_string)
                    .unwrap_or_default();
                let returned = execute
                    .call1(&JsValue::NULL, &JsValue::from_str(&arguments))
                    .map_err(|_| error(-32603, "the tool threw".to_owned()))?;
                let value =
                    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&returned))
                        .await
                        .map_err(|_| error(-32603, "the tool rejected".to_owned()))?;
                let text = value.as_string().unwrap_or_default();
                Ok(serde_json::json!({ "content": [{ "type": "text", "text": text }] }))
            }
            method => Err(error(-32601, format!("method not found: {method}"))),
        }
    }
}

fn error(code: i64, message: String) -> Error {
    Error { code, message }
}
