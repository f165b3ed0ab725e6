//! The seed's total guards, builders and constants for JS (`isJSONRPCMessage`,
//! `parseJSONRPCMessage`, `jsonRPCResult`, `jsonRPCError`, `buildToolResult`,
//! `initializeResult`, `mcpConstants`). Every guard is total: any JS value in, a boolean out.

use js_sys::Object;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{from_js, response_to_js, to_js};
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
use super::error_message;
use super::error_to_js;
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
use super::server::{tool_from_js, value_to_result};
use crate::protocol::{self, Implementation};
use crate::wire::jsonrpc::{self, ErrorObject, JsonRpcMessage, RequestId};

fn json_of(value: &JsValue) -> Option<Value> {
    from_js(value).ok()
}

/// Total guard: a request id — a string, a safe-integer `number`, or a `bigint` in 64 bits
/// (seed `isRequestId`; `null` is valid only on a response).
#[wasm_bindgen(js_name = isRequestId, unchecked_return_type = "value is RequestId")]
pub fn is_request_id(#[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue) -> bool {
    json_of(value).is_some_and(|v| jsonrpc::is_request_id(&v))
}

/// Total guard: a request or a notification (seed `isJSONRPCRequest`).
#[wasm_bindgen(js_name = isJSONRPCRequest, unchecked_return_type = "value is JSONRPCRequest")]
pub fn is_jsonrpc_request(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> bool {
    json_of(value).is_some_and(|v| jsonrpc::is_jsonrpc_request(&v))
}

/// Total guard: a response with exactly one of `result` / `error` (seed `isJSONRPCResponse`).
#[wasm_bindgen(js_name = isJSONRPCResponse, unchecked_return_type = "value is JSONRPCResponse")]
pub fn is_jsonrpc_response(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> bool {
    json_of(value).is_some_and(|v| jsonrpc::is_jsonrpc_response(&v))
}

/// Total guard: a request, a notification or a response (seed `isJSONRPCMessage`).
#[wasm_bindgen(js_name = isJSONRPCMessage, unchecked_return_type = "value is JSONRPCMessage")]
pub fn is_jsonrpc_message(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> bool {
    json_of(value).is_some_and(|v| jsonrpc::is_jsonrpc_message(&v))
}

/// Total guard: a request (with an id) whose method is `initialize` (seed
/// `isInitializeRequest`).
#[wasm_bindgen(js_name = isInitializeRequest, unchecked_return_type = "value is JSONRPCRequest")]
pub fn is_initialize_request(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> bool {
    json_of(value).is_some_and(|v| jsonrpc::is_initialize_request(&v))
}

/// Narrow a parsed value to a message — a fresh, normalized copy (unknown top-level members
/// dropped) — or `undefined` (seed `parseJSONRPCMessage`; sound with `isJSONRPCMessage`).
#[wasm_bindgen(js_name = parseJSONRPCMessage, unchecked_return_type = "JSONRPCMessage | undefined")]
pub fn parse_jsonrpc_message(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> JsValue {
    json_of(value)
        .and_then(|v| jsonrpc::parse_jsonrpc_message(&v))
        .map_or(JsValue::UNDEFINED, |m: JsonRpcMessage| {
            to_js(&serde_json::to_value(m).expect("messages serialize"))
        })
}

fn read_id(id: &JsValue, nullable: bool) -> Result<Option<RequestId>, JsValue> {
    if nullable && (id.is_null() || id.is_undefined()) {
        return Ok(None);
    }
    json_of(id)
        .as_ref()
        .and_then(RequestId::from_value)
        .map(Some)
        .ok_or_else(|| {
            error_to_js(&ErrorObject::invalid_request(
                "an id must be a string, a safe-integer number or a 64-bit bigint",
            ))
        })
}

fn read_json(value: &JsValue) -> Result<Value, JsValue> {
    from_js(value).map_err(|e| error_to_js(&ErrorObject::invalid_params(e)))
}

/// Build a success response (seed `jsonRPCResult`): the id echoed, `result` as given.
///
/// # Errors
/// Throws an `MCPError` (`-32600`) for an id that is not a request id, (`-32602`) for a result
/// that is not JSON.
#[wasm_bindgen(js_name = jsonRPCResult, unchecked_return_type = "JSONRPCResultResponse")]
pub fn jsonrpc_result(
    #[wasm_bindgen(unchecked_param_type = "RequestId")] id: &JsValue,
    #[wasm_bindgen(unchecked_param_type = "unknown")] result: &JsValue,
) -> Result<JsValue, JsValue> {
    let id = read_id(id, false)?.expect("not nullable");
    Ok(response_to_js(&jsonrpc::jsonrpc_result(
        id,
        read_json(result)?,
    )))
}

/// Build an error response (seed `jsonRPCError`): the id (`null` allowed), `code`, `message` and
/// optional `data`.
///
/// # Errors
/// Throws an `MCPError` (`-32600`) for an id that is not a request id or `null`.
#[wasm_bindgen(js_name = jsonRPCError, unchecked_return_type = "JSONRPCErrorResponse")]
pub fn jsonrpc_error(
    #[wasm_bindgen(unchecked_param_type = "RequestId | null")] id: &JsValue,
    code: i32,
    message: String,
    #[wasm_bindgen(unchecked_optional_param_type = "unknown")] data: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let id = read_id(id, true)?;
    let data = match data {
        Some(data) if !data.is_undefined() => Some(read_json(&data)?),
        _ => None,
    };
    Ok(response_to_js(&jsonrpc::jsonrpc_error(
        id, code, message, data,
    )))
}

// The tool builders are the server's (not in the client-only package).
#[cfg(any(feature = "js-server", not(feature = "js-client")))]
/// Map what a tool returned to a `tools/call` result (seed `buildToolResult`), as
/// `createMCPServer` does for `execute`: a string → one text block; a `{ content: [...] }`
/// object → itself; `undefined` → no content; anything else → its JSON text.
#[wasm_bindgen(js_name = buildToolResult, unchecked_return_type = "MCPToolResult")]
pub fn build_tool_result(
    #[wasm_bindgen(unchecked_param_type = "unknown")] value: &JsValue,
) -> JsValue {
    let result = value_to_result(value, false).unwrap_or_else(protocol::ToolResult::error);
    to_js(&serde_json::to_value(result).expect("tool results serialize"))
}

#[cfg(any(feature = "js-server", not(feature = "js-client")))]
/// Map JS tool objects to their `tools/list` descriptors (seed `buildToolDescriptors`).
///
/// # Errors
/// Throws an `MCPError` (`-32602`, `data.path`) when a tool is malformed, as `createMCPServer`.
#[wasm_bindgen(js_name = buildToolDescriptors, unchecked_return_type = "MCPToolDescriptor[]")]
pub fn build_tool_descriptors(
    #[wasm_bindgen(unchecked_param_type = "readonly MCPTool[]")] tools: &JsValue,
) -> Result<JsValue, JsValue> {
    let Some(tools) = tools.dyn_ref::<js_sys::Array>() else {
        return Err(error_to_js(
            &ErrorObject::invalid_params("tools must be an array")
                .with_data(json!({ "path": "tools" })),
        ));
    };
    let mut descriptors = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let tool = tool_from_js(&tool, &format!("tools[{i}]")).map_err(|e| error_to_js(&e))?;
        descriptors.push(tool.descriptor().clone());
    }
    Ok(to_js(
        &serde_json::to_value(descriptors).expect("descriptors serialize"),
    ))
}

#[cfg(any(feature = "js-server", not(feature = "js-client")))]
/// Build a tool-error result from a thrown value: its message as text and `isError: true`
/// (seed clause 5).
#[wasm_bindgen(js_name = buildToolError, unchecked_return_type = "MCPToolResult")]
pub fn build_tool_error(
    #[wasm_bindgen(unchecked_param_type = "unknown")] error: &JsValue,
) -> JsValue {
    let result = protocol::ToolResult::error(error_message(error));
    to_js(&serde_json::to_value(result).expect("tool results serialize"))
}

/// Build the `initialize` result (seed `initializeResult`) for a server `name` / `version` and a
/// negotiated `protocolVersion` (default `MCP_PROTOCOL_VERSION`).
#[wasm_bindgen(js_name = initializeResult, unchecked_return_type = "MCPInitializeResult")]
pub fn initialize_result(
    name: String,
    version: String,
    #[wasm_bindgen(js_name = "protocolVersion")] protocol_version: Option<String>,
) -> JsValue {
    let version_used =
        protocol_version.unwrap_or_else(|| protocol::MCP_PROTOCOL_VERSION.to_owned());
    let result = protocol::initialize_result(&Implementation::new(name, version), &version_used);
    to_js(&serde_json::to_value(result).expect("initialize results serialize"))
}

/// The seed's constants as one object, from the Rust values (the package build also exports
/// each as a top-level `const`).
#[wasm_bindgen(js_name = mcpConstants, unchecked_return_type = "MCPConstants")]
pub fn mcp_constants() -> Object {
    let value = json!({
        "MCP_PROTOCOL_VERSION": protocol::MCP_PROTOCOL_VERSION,
        "LATEST_PROTOCOL_VERSION": protocol::LATEST_PROTOCOL_VERSION,
        "SUPPORTED_PROTOCOL_VERSIONS": protocol::SUPPORTED_PROTOCOL_VERSIONS,
        "JSONRPC_PARSE_ERROR": jsonrpc::JSONRPC_PARSE_ERROR,
        "JSONRPC_INVALID_REQUEST": jsonrpc::JSONRPC_INVALID_REQUEST,
        "JSONRPC_METHOD_NOT_FOUND": jsonrpc::JSONRPC_METHOD_NOT_FOUND,
        "JSONRPC_INVALID_PARAMS": jsonrpc::JSONRPC_INVALID_PARAMS,
        "JSONRPC_INTERNAL_ERROR": jsonrpc::JSONRPC_INTERNAL_ERROR,
        "JSONRPC_SERVER_ERROR": jsonrpc::JSONRPC_SERVER_ERROR,
        "DEFAULT_MCP_PATH": crate::http::media::DEFAULT_MCP_PATH,
        "MCP_SESSION_HEADER": crate::http::headers::MCP_SESSION_ID,
        "MCP_PROTOCOL_VERSION_HEADER": crate::http::headers::MCP_PROTOCOL_VERSION,
        "MCP_WEBSOCKET_SUBPROTOCOL": crate::http::headers::MCP_WEBSOCKET_SUBPROTOCOL,
        "DEFAULT_MCP_CLIENT_NAME": crate::client::DEFAULT_MCP_CLIENT_NAME,
        "DEFAULT_MCP_CLIENT_VERSION": crate::client::DEFAULT_MCP_CLIENT_VERSION,
        "DEFAULT_MCP_REQUEST_TIMEOUT": crate::client::DEFAULT_MCP_REQUEST_TIMEOUT_MS,
        "DEFAULT_MAX_BODY_BYTES": crate::http::media::DEFAULT_MAX_BODY_BYTES,
    });
    Object::freeze(&to_js(&value).unchecked_into())
}

#[wasm_bindgen(typescript_custom_section)]
const TS_CONSTANTS: &'static str = r#"
/** The seed's constants (also exported one by one). */
export interface MCPConstants {
  readonly MCP_PROTOCOL_VERSION: string;
  readonly LATEST_PROTOCOL_VERSION: string;
  readonly SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
  readonly JSONRPC_PARSE_ERROR: -32700;
  readonly JSONRPC_INVALID_REQUEST: -32600;
  readonly JSONRPC_METHOD_NOT_FOUND: -32601;
  readonly JSONRPC_INVALID_PARAMS: -32602;
  readonly JSONRPC_INTERNAL_ERROR: -32603;
  readonly JSONRPC_SERVER_ERROR: -32000;
  readonly DEFAULT_MCP_PATH: string;
  readonly MCP_SESSION_HEADER: string;
  readonly MCP_PROTOCOL_VERSION_HEADER: string;
  readonly MCP_WEBSOCKET_SUBPROTOCOL: string;
  readonly DEFAULT_MCP_CLIENT_NAME: string;
  readonly DEFAULT_MCP_CLIENT_VERSION: string;
  readonly DEFAULT_MCP_REQUEST_TIMEOUT: number;
  readonly DEFAULT_MAX_BODY_BYTES: number;
}
"#;
