//! The message types — request, notification, response and their union — with their builders
//! and their serialization (`jsonrpc: "2.0"` always first).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::{ErrorObject, RequestId, ResultValue, JSONRPC_VERSION};

/// A request: `{ "jsonrpc": "2.0", "id", "method", "params"? }` (an id is always present).
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcRequest {
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The `params` object, if any.
    pub params: Option<Map<String, Value>>,
}

impl JsonRpcRequest {
    /// A request with no params.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>) -> Self {
        JsonRpcRequest {
            id: id.into(),
            method: method.into(),
            params: None,
        }
    }

    /// Set `params` (a JSON object; any other value is ignored).
    pub fn with_params(mut self, params: Value) -> Self {
        if let Value::Object(map) = params {
            self.params = Some(map);
        }
        self
    }
}

/// A notification: `{ "jsonrpc": "2.0", "method", "params"? }` with no `id` member.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcNotification {
    /// The method name.
    pub method: String,
    /// The `params` object, if any.
    pub params: Option<Map<String, Value>>,
}

impl JsonRpcNotification {
    /// A notification with no params.
    pub fn new(method: impl Into<String>) -> Self {
        JsonRpcNotification {
            method: method.into(),
            params: None,
        }
    }

    /// Set `params` (a JSON object; any other value is ignored).
    pub fn with_params(mut self, params: Value) -> Self {
        if let Value::Object(map) = params {
            self.params = Some(map);
        }
        self
    }
}

/// A response: `{ "jsonrpc": "2.0", "id", "result" }` or `{ …, "error" }` — exactly one of them.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcResponse {
    /// The echoed request id; `None` serializes as `null` (only for errors whose id was unreadable).
    pub id: Option<RequestId>,
    /// `Ok(result)` or `Err(error)`.
    pub payload: Result<ResultValue, ErrorObject>,
}

impl JsonRpcResponse {
    /// A success response (seed `jsonRPCResult`).
    pub fn result(id: RequestId, result: Value) -> Self {
        JsonRpcResponse {
            id: Some(id),
            payload: Ok(result.into()),
        }
    }

    /// An error response (seed `jsonRPCError`); `id` is `None` for `null`.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcResponse {
            id,
            payload: Err(error),
        }
    }

    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        self.payload.is_err()
    }
}

/// Any JSON-RPC message on the wire (seed `JSONRPCMessage`).
#[derive(Clone, Debug, PartialEq)]
pub enum JsonRpcMessage {
    /// A request (has an id; expects a response).
    Request(JsonRpcRequest),
    /// A notification (no id; never answered).
    Notification(JsonRpcNotification),
    /// A response to an earlier request.
    Response(JsonRpcResponse),
}

impl Serialize for JsonRpcRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for JsonRpcNotification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for JsonRpcResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", JSONRPC_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        match &self.payload {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

impl Serialize for JsonRpcMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonRpcMessage::Request(r) => r.serialize(serializer),
            JsonRpcMessage::Notification(n) => n.serialize(serializer),
            JsonRpcMessage::Response(r) => r.serialize(serializer),
        }
    }
}

impl JsonRpcRequest {
    /// Serialize to a JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC requests always serialize")
    }
}

impl JsonRpcNotification {
    /// Serialize to a JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC notifications always serialize")
    }
}

impl JsonRpcResponse {
    /// Serialize to a JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC responses always serialize")
    }
}
