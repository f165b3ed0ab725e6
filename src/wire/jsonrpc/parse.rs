//! The classifying parser: every wire input, from an already-parsed [`Value`], becomes a message
//! or an [`InvalidMessage`] carrying the exact error it deserves (the table in [`super`]).

use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, RequestId,
    JSONRPC_VERSION,
};

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

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        JsonRpcMessage::from_value(value).map_err(serde::de::Error::custom)
    }
}
