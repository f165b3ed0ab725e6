//! JSON-RPC 2.0 messages: ids, requests, notifications, responses, error codes, total guards,
//! a classifying parser over an already-parsed [`Value`], and response builders.
//!
//! Every wire input is classified by hand from a [`serde_json::Value`] so that each bad input maps
//! to a precise error (seed clauses 2, 3, 7, 8; JSON-RPC 2.0 §4–§5):
//!
//! | input | outcome |
//! |---|---|
//! | not an object, or a batch (array) | `-32600`, id `null` |
//! | `method` and no `id` member | a [`JsonRpcNotification`]; never answered, however malformed |
//! | `"id": null`, or an id that is not a string or integer | `-32600`, id `null` |
//! | `jsonrpc` not exactly `"2.0"`, `method` not a string | `-32600`, the id echoed |
//! | `params` present and not an object | `-32602`, the id echoed |
//! | `result` xor `error` with an `id` | a [`JsonRpcResponse`] |
//!
//! Unknown members (including `_meta`) are ignored everywhere.

use std::borrow::Cow;
use std::fmt;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The protocol marker every JSON-RPC 2.0 message carries in its `jsonrpc` member.
pub const JSONRPC_VERSION: &str = "2.0";

/// A JSON-RPC error code: a newtype over `i32` with the reserved codes as constants.
///
/// Source: JSON-RPC 2.0 §5.1 and the seed's `JSONRPC_*` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: invalid JSON was received (the message did not parse).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: the payload was not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the requested method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: the method's parameters were invalid.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: an internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32000`: an implementation-defined server error.
    pub const SERVER_ERROR: ErrorCode = ErrorCode(-32000);

    // MCP's codes, in the implementation-defined server-error range.

    /// `-32001`: the request timed out (the TypeScript SDK's `ErrorCode.RequestTimeout`, which
    /// the JS client's errors carry).
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// `-32002`: the handshake era's "Resource not found" (2026-07-28 answers `-32602`; spec
    /// [`server/resources`](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#error-handling)).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `-32020` HeaderMismatch (2026-07-28): a required header is missing, differs from the
    /// body, or is malformed
    /// ([Streamable HTTP](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021` MissingRequiredClientCapability (2026-07-28; `data.requiredCapabilities` is an
    /// object).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022` UnsupportedProtocolVersion (2026-07-28; `data.supported`, `data.requested`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// `-32099`: the marker a handler's input request returns while its input is missing; the
    /// server turns the round into an input-required result. Never sent on the wire.
    pub(crate) const INPUT_REQUIRED: ErrorCode = ErrorCode(-32099);

    /// The code as a plain integer.
    pub const fn as_i32(self) -> i32 {
        self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `-32700` (seed `JSONRPC_PARSE_ERROR`).
pub const JSONRPC_PARSE_ERROR: i32 = ErrorCode::PARSE_ERROR.0;
/// `-32600` (seed `JSONRPC_INVALID_REQUEST`).
pub const JSONRPC_INVALID_REQUEST: i32 = ErrorCode::INVALID_REQUEST.0;
/// `-32601` (seed `JSONRPC_METHOD_NOT_FOUND`).
pub const JSONRPC_METHOD_NOT_FOUND: i32 = ErrorCode::METHOD_NOT_FOUND.0;
/// `-32602` (seed `JSONRPC_INVALID_PARAMS`).
pub const JSONRPC_INVALID_PARAMS: i32 = ErrorCode::INVALID_PARAMS.0;
/// `-32603` (JSON-RPC 2.0 internal error).
pub const JSONRPC_INTERNAL_ERROR: i32 = ErrorCode::INTERNAL_ERROR.0;
/// `-32000` (seed `JSONRPC_SERVER_ERROR`).
pub const JSONRPC_SERVER_ERROR: i32 = ErrorCode::SERVER_ERROR.0;

/// A request id: a string or an integer, echoed exactly as sent.
///
/// Integers cover the whole `i64` range and never pass through `f64`; `"007"` stays a string.
/// Fractional numbers and integers outside `i64` are not valid ids (`-32600`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A string id (any string, including `""`).
    String(String),
    /// An integer id (`0`, negatives, the whole `i64` range).
    Number(i64),
}

impl RequestId {
    /// Read an id from a JSON value; `None` for `null`, booleans, fractions, objects, arrays and
    /// integers outside `i64`.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::String(s) => Value::String(s.clone()),
            RequestId::Number(n) => Value::from(*n),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::Number(n) => write!(f, "{n}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::String(s) => serializer.serialize_str(s),
            RequestId::Number(n) => serializer.serialize_i64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("a request id must be a string or an i64"))
    }
}

/// The `error` member of a failed response: `{ code, message, data? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see [`ErrorCode`]).
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Optional extra information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message and no `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Read `{ code, message, data? }` from a JSON value: `code` an integer in `i32`, `message` a
    /// string; other members are ignored. By hand rather than serde, which keeps the wasm build
    /// free of serde's type-mismatch error formatting.
    pub fn from_value(value: Value) -> Option<ErrorObject> {
        let Value::Object(mut map) = value else {
            return None;
        };
        let code = i32::try_from(map.get("code")?.as_i64()?).ok()?;
        let Some(Value::String(message)) = map.remove("message") else {
            return None;
        };
        Some(ErrorObject {
            code: ErrorCode(code),
            message,
            data: map.remove("data"),
        })
    }

    /// Attach `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700 Parse error`.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600 Invalid Request`, with what was wrong.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// `-32601 Method not found`, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602 Invalid params`, with what was wrong.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// `-32603 Internal error`, with what went wrong.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

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
    pub payload: Result<Value, ErrorObject>,
}

impl JsonRpcResponse {
    /// A success response (seed `jsonRPCResult`).
    pub fn result(id: RequestId, result: Value) -> Self {
        JsonRpcResponse {
            id: Some(id),
            payload: Ok(result),
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

/// Why a value is not a valid JSON-RPC message, with the response it deserves.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidMessage {
    /// The id, when it could be read (it is echoed in the error response).
    pub id: Option<RequestId>,
    /// The error to answer with.
    pub error: ErrorObject,
    /// `false` when the message had a `method` and no `id` member: a (broken) notification, which
    /// JSON-RPC forbids answering. The error is then only logged.
    pub reply: bool,
}

impl InvalidMessage {
    fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        InvalidMessage {
            id,
            error,
            reply: true,
        }
    }

    /// The error response to send, or `None` for a broken notification.
    pub fn response(&self) -> Option<JsonRpcResponse> {
        self.reply
            .then(|| JsonRpcResponse::error(self.id.clone(), self.error.clone()))
    }
}

impl fmt::Display for InvalidMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for InvalidMessage {}

fn check_version(map: &Map<String, Value>) -> Result<(), ErrorObject> {
    match map.get("jsonrpc") {
        Some(Value::String(v)) if v == JSONRPC_VERSION => Ok(()),
        Some(_) => Err(ErrorObject::invalid_request(
            r#""jsonrpc" must be exactly "2.0""#,
        )),
        None => Err(ErrorObject::invalid_request(r#"missing "jsonrpc": "2.0""#)),
    }
}

fn read_params(map: &mut Map<String, Value>) -> Result<Option<Map<String, Value>>, ErrorObject> {
    match map.remove("params") {
        None => Ok(None),
        Some(Value::Object(params)) => Ok(Some(params)),
        Some(_) => Err(ErrorObject::invalid_params(r#""params" must be an object"#)),
    }
}

impl JsonRpcMessage {
    /// Classify and validate an already-parsed value (seed `parseJSONRPCMessage`, but with the
    /// precise error each bad input deserves; see the module docs for the table).
    ///
    /// # Errors
    /// [`InvalidMessage`] with the code and the id to answer with.
    pub fn from_value(value: Value) -> Result<JsonRpcMessage, InvalidMessage> {
        let mut map = match value {
            Value::Object(map) => map,
            Value::Array(_) => {
                return Err(InvalidMessage::new(
                    None,
                    ErrorObject::invalid_request("batches are not supported"),
                ))
            }
            _ => {
                return Err(InvalidMessage::new(
                    None,
                    ErrorObject::invalid_request("a message must be a JSON object"),
                ))
            }
        };
        let has_method = map.contains_key("method");
        let id = match map.get("id") {
            None if has_method => {
                // A notification: classified before validation, and never answered.
                let bad = |error| InvalidMessage {
                    id: None,
                    error,
                    reply: false,
                };
                check_version(&map).map_err(bad)?;
                let method = match map.remove("method") {
                    Some(Value::String(m)) => m,
                    _ => {
                        return Err(bad(ErrorObject::invalid_request(
                            r#""method" must be a string"#,
                        )))
                    }
                };
                let params = read_params(&mut map).map_err(bad)?;
                return Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                    method,
                    params,
                }));
            }
            None => None,
            Some(raw) => match RequestId::from_value(raw) {
                Some(id) => Some(id),
                None if raw.is_null() && !has_method => None,
                None => {
                    let what = if raw.is_null() {
                        r#""id" must not be null on a request"#
                    } else {
                        r#""id" must be a string or an integer"#
                    };
                    return Err(InvalidMessage::new(
                        None,
                        ErrorObject::invalid_request(what),
                    ));
                }
            },
        };
        if let Err(error) = check_version(&map) {
            return Err(InvalidMessage::new(id, error));
        }
        if has_method {
            let id = id.expect("a method with an id member has a valid id here");
            let method = match map.remove("method") {
                Some(Value::String(m)) => m,
                _ => {
                    return Err(InvalidMessage::new(
                        Some(id),
                        ErrorObject::invalid_request(r#""method" must be a string"#),
                    ))
                }
            };
            let params =
                read_params(&mut map).map_err(|e| InvalidMessage::new(Some(id.clone()), e))?;
            return Ok(JsonRpcMessage::Request(JsonRpcRequest {
                id,
                method,
                params,
            }));
        }
        if !map.contains_key("id") {
            return Err(InvalidMessage::new(
                None,
                ErrorObject::invalid_request(r#"neither "method" nor "id""#),
            ));
        }
        let result = map.remove("result");
        let error = map.remove("error");
        let payload = match (result, error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(ErrorObject::from_value(error).ok_or_else(|| {
                InvalidMessage::new(
                    id.clone(),
                    ErrorObject::invalid_request(
                        r#"bad error object: needs an integer "code" and a string "message""#,
                    ),
                )
            })?),
            (Some(_), Some(_)) => {
                return Err(InvalidMessage::new(
                    id,
                    ErrorObject::invalid_request(r#"a response has both "result" and "error""#),
                ))
            }
            (None, None) => {
                return Err(InvalidMessage::new(
                    id,
                    ErrorObject::invalid_request(r#"a response needs "result" or "error""#),
                ))
            }
        };
        Ok(JsonRpcMessage::Response(JsonRpcResponse { id, payload }))
    }

    /// Parse message text: `-32700` when it is not JSON, else [`JsonRpcMessage::from_value`].
    ///
    /// # Errors
    /// [`InvalidMessage`] as above; a parse failure carries id `null` and `-32700`.
    pub fn from_slice(bytes: &[u8]) -> Result<JsonRpcMessage, InvalidMessage> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| InvalidMessage::new(None, ErrorObject::parse_error(e)))?;
        JsonRpcMessage::from_value(value)
    }

    /// Serialize to a JSON string (never fails: every member is plain JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC messages always serialize")
    }
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

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        JsonRpcMessage::from_value(value).map_err(serde::de::Error::custom)
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

// ---- the seed's total guards and builders, over already-parsed values ----

/// Total guard: a valid request id — a string or an integer in `i64` (seed `isRequestId`;
/// `null` is valid only on a response).
pub fn is_request_id(value: &Value) -> bool {
    RequestId::from_value(value).is_some()
}

/// Total guard: a request or a notification (seed `isJSONRPCRequest`: `jsonrpc: "2.0"`, a string
/// `method`, an absent or valid `id`, `params` absent or an object).
pub fn is_jsonrpc_request(value: &Value) -> bool {
    matches!(
        parse_jsonrpc_message(value),
        Some(JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_))
    )
}

/// Total guard: a response with an `id` (string, integer or `null`) and exactly one of
/// `result` / `error` (seed `isJSONRPCResponse`).
pub fn is_jsonrpc_response(value: &Value) -> bool {
    matches!(
        parse_jsonrpc_message(value),
        Some(JsonRpcMessage::Response(_))
    )
}

/// Total guard: the union of [`is_jsonrpc_request`] and [`is_jsonrpc_response`]
/// (seed `isJSONRPCMessage`).
pub fn is_jsonrpc_message(value: &Value) -> bool {
    parse_jsonrpc_message(value).is_some()
}

/// Total guard: a request (with an id) whose method is `initialize` (seed `isInitializeRequest`).
pub fn is_initialize_request(value: &Value) -> bool {
    matches!(parse_jsonrpc_message(value), Some(JsonRpcMessage::Request(r)) if r.method == "initialize")
}

/// Narrow an already-parsed value to a message, or `None` (seed `parseJSONRPCMessage`; total and
/// sound with [`is_jsonrpc_message`]). Use [`JsonRpcMessage::from_value`] to learn why it failed.
pub fn parse_jsonrpc_message(value: &Value) -> Option<JsonRpcMessage> {
    JsonRpcMessage::from_value(value.clone()).ok()
}

/// Build a success response (seed `jsonRPCResult`).
pub fn jsonrpc_result(id: RequestId, result: Value) -> JsonRpcResponse {
    JsonRpcResponse::result(id, result)
}

/// Build an error response (seed `jsonRPCError`): `id` (`None` for `null`), code, message, data.
pub fn jsonrpc_error(
    id: Option<RequestId>,
    code: i32,
    message: impl Into<Cow<'static, str>>,
    data: Option<Value>,
) -> JsonRpcResponse {
    JsonRpcResponse::error(
        id,
        ErrorObject {
            code: ErrorCode(code),
            message: message.into().into_owned(),
            data,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<JsonRpcMessage, InvalidMessage> {
        JsonRpcMessage::from_value(v)
    }

    #[test]
    fn ids_round_trip_exactly() {
        for raw in [
            "0",
            "-1",
            "9223372036854775807",
            "-9223372036854775808",
            "\"\"",
            "\"007\"",
            "\"1\"",
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let msg = JsonRpcMessage::from_slice(text.as_bytes()).unwrap();
            let JsonRpcMessage::Request(req) = msg else {
                panic!("not a request")
            };
            let reply = JsonRpcResponse::result(req.id, json!({})).to_json();
            assert_eq!(
                reply,
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn bad_ids_are_invalid_requests_with_null_id() {
        for raw in ["null", "1.5", "true", "{}", "[]", "18446744073709551615"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
            assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST, "{raw}");
            assert_eq!(err.id, None);
            assert!(err.reply);
        }
    }

    #[test]
    fn notifications_are_classified_before_validation() {
        let n = parse(json!({"jsonrpc":"2.0","method":"x","params":{"_meta":{}}})).unwrap();
        assert!(matches!(n, JsonRpcMessage::Notification(_)));
        for bad in [
            json!({"jsonrpc":"2.0","method":"x","params":[1]}),
            json!({"jsonrpc":"1.0","method":"x"}),
            json!({"method":"x"}),
            json!({"jsonrpc":"2.0","method":5}),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(!err.reply, "a broken notification is never answered");
            assert!(err.response().is_none());
        }
    }

    #[test]
    fn envelope_errors_echo_the_id() {
        let err = parse(json!({"jsonrpc":"1.0","id":7,"method":"ping"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(RequestId::Number(7)), ErrorCode::INVALID_REQUEST)
        );
        let err = parse(json!({"id":"a","method":"ping"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some("a".into()), ErrorCode::INVALID_REQUEST)
        );
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":["x"]})).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":"x","params":"s"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(RequestId::Number(1)), ErrorCode::INVALID_PARAMS)
        );
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":"x","params":null})).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn non_objects_and_batches_are_invalid() {
        for v in [
            json!([]),
            json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
            json!(1),
            json!("s"),
            json!(null),
            json!({}),
        ] {
            let err = parse(v).unwrap_err();
            assert_eq!(
                (err.id.clone(), err.error.code),
                (None, ErrorCode::INVALID_REQUEST)
            );
            assert!(err.reply);
        }
    }

    #[test]
    fn responses_need_exactly_one_of_result_and_error() {
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","id":1,"result":{}})).unwrap(),
            JsonRpcMessage::Response(JsonRpcResponse { payload: Ok(_), .. })
        ));
        let ok = parse(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}))
            .unwrap();
        assert!(matches!(
            ok,
            JsonRpcMessage::Response(JsonRpcResponse {
                id: None,
                payload: Err(_)
            })
        ));
        assert!(
            parse(json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}))
                .is_err()
        );
        assert!(parse(json!({"jsonrpc":"2.0","id":1})).is_err());
        assert!(parse(json!({"jsonrpc":"2.0","id":1,"error":{"code":"x"}})).is_err());
    }

    #[test]
    fn unknown_members_are_ignored() {
        let msg = parse(
            json!({"jsonrpc":"2.0","id":1,"method":"ping","extra":true,"params":{"_meta":{"a":1}}}),
        )
        .unwrap();
        let JsonRpcMessage::Request(req) = msg else {
            panic!()
        };
        assert_eq!(req.params.unwrap()["_meta"], json!({"a":1}));
    }

    #[test]
    fn guards_are_total_and_sound() {
        let samples = [
            json!(null),
            json!(1),
            json!([]),
            json!({}),
            json!({"jsonrpc":"2.0","method":"m"}),
            json!({"jsonrpc":"2.0","id":1,"method":"initialize"}),
            json!({"jsonrpc":"2.0","id":null,"method":"m"}),
            json!({"jsonrpc":"2.0","id":1,"result":null}),
            json!({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}),
        ];
        for v in &samples {
            let parsed = parse_jsonrpc_message(v);
            assert_eq!(parsed.is_some(), is_jsonrpc_message(v));
            assert_eq!(
                is_jsonrpc_message(v),
                is_jsonrpc_request(v) || is_jsonrpc_response(v)
            );
            if let Some(m) = parsed {
                let back: Value = serde_json::from_str(&m.to_json()).unwrap();
                assert!(is_jsonrpc_message(&back));
            }
        }
        assert!(is_initialize_request(&samples[5]));
        assert!(!is_initialize_request(&samples[4]));
        assert!(
            is_request_id(&json!("")) && is_request_id(&json!(-3)) && !is_request_id(&json!(null))
        );
    }

    #[test]
    fn builders_make_envelopes() {
        let ok = jsonrpc_result(1.into(), json!({"a":1}));
        assert_eq!(ok.to_json(), r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#);
        let err = jsonrpc_error(None, JSONRPC_PARSE_ERROR, "Parse error", Some(json!(1)));
        assert_eq!(
            err.to_json(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":1}}"#
        );
    }
}
