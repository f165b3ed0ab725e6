//! The classifying parser: every wire input, from an already-parsed [`Value`], becomes a message
//! or an [`InvalidMessage`] carrying the exact error it deserves (the table in [`super`]).

use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    scan, ErrorObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
    RequestId, ResultValue, JSONRPC_VERSION,
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
    /// The text is not JSON at all (see [`InvalidMessage::is_not_json`]).
    not_json: bool,
    /// Shaped like a response (see [`InvalidMessage::is_response`]).
    response: bool,
    /// The text is a JSON array: a batch (see [`InvalidMessage::is_batch`]).
    batch: bool,
}

impl InvalidMessage {
    pub(super) fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        InvalidMessage {
            id,
            error,
            reply: true,
            not_json: false,
            response: false,
            batch: false,
        }
    }

    /// `true` when the text is a JSON array — a JSON-RPC batch, which a single message cannot
    /// be. The error is the refusal of a peer that does not receive batches ("batches are not
    /// supported", or, for an array beyond a parser limit, that limit's `-32700`); a peer that
    /// does reads the same text with [`JsonRpcBatch::from_slice`](super::JsonRpcBatch::from_slice).
    pub fn is_batch(&self) -> bool {
        self.batch
    }

    /// `true` when the message was shaped like a response (an `id` member and no `method`): a
    /// client fails the pending request with that id instead of answering.
    pub fn is_response(&self) -> bool {
        self.response
    }

    /// `true` when the text is not JSON at all (not UTF-8, or outside the RFC 8259 grammar): a
    /// `-32700` that a host may skip instead of answering (e.g. a log line on stdio). Valid JSON
    /// that exceeds a parser limit is never "not JSON": it is answered (`-32600` with its id when
    /// the id is readable, `-32700` otherwise).
    pub fn is_not_json(&self) -> bool {
        self.not_json
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

fn check_version(jsonrpc: Option<&Value>) -> Result<(), ErrorObject> {
    match jsonrpc {
        Some(Value::String(v)) if v == JSONRPC_VERSION => Ok(()),
        Some(_) => Err(ErrorObject::invalid_request(
            r#""jsonrpc" must be exactly "2.0""#,
        )),
        None => Err(ErrorObject::invalid_request(r#"missing "jsonrpc": "2.0""#)),
    }
}

fn read_params(params: Option<Value>) -> Result<Option<Map<String, Value>>, ErrorObject> {
    match params {
        None => Ok(None),
        Some(Value::Object(params)) => Ok(Some(params)),
        Some(_) => Err(ErrorObject::invalid_params(r#""params" must be an object"#)),
    }
}

/// The members of a message object the classifier reads; any other member is read and dropped.
/// A member given twice keeps its last value, as a parsed object does.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

impl Members {
    /// The members of a parsed object, taken in one pass over it.
    fn of(map: Map<String, Value>) -> Members {
        let mut members = Members::default();
        for (key, value) in map {
            if let Some(slot) = members.slot(&key) {
                *slot = Some(value);
            }
        }
        members
    }

    fn slot(&mut self, key: &str) -> Option<&mut Option<Value>> {
        Some(match key {
            "jsonrpc" => &mut self.jsonrpc,
            "id" => &mut self.id,
            "method" => &mut self.method,
            "params" => &mut self.params,
            "result" => &mut self.result,
            "error" => &mut self.error,
            _ => return None,
        })
    }
}

/// A message's text read straight into its [`Members`] (no map of the top level, no key
/// copied), or what it is instead of an object. Every value is still read as a [`Value`] (so
/// any text that parses as one parses here, and fails with the same error where it fails).
#[allow(clippy::large_enum_variant)] // a return value read once on the stack; boxing costs a malloc
enum Top {
    Object(Members),
    Array,
    Other,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Top, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

/// A top-level member name, read without copying it.
struct Key(Option<&'static str>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(Key(match key {
                    "jsonrpc" => Some("jsonrpc"),
                    "id" => Some("id"),
                    "method" => Some("method"),
                    "params" => Some("params"),
                    "result" => Some("result"),
                    "error" => Some("error"),
                    _ => None,
                }))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> serde::de::Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut members = Members::default();
        while let Some(Key(key)) = map.next_key::<Key>()? {
            let value = map.next_value::<Value>()?;
            if let Some(slot) = key.and_then(|key| members.slot(key)) {
                *slot = Some(value);
            }
        }
        Ok(Top::Object(members))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Top::Array)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Other)
    }
}

impl JsonRpcMessage {
    /// Classify and validate an already-parsed value (seed `parseJSONRPCMessage`, but with the
    /// precise error each bad input deserves; see the module docs for the table).
    ///
    /// # Errors
    /// [`InvalidMessage`] with the code and the id to answer with.
    pub fn from_value(value: Value) -> Result<JsonRpcMessage, InvalidMessage> {
        Self::classify(value, None)
    }

    /// [`JsonRpcMessage::from_value`] over the value parsed from `text`, when there is one: an
    /// integer `id` that the value holds only as an `f64` is then read exactly from the text.
    fn classify(value: Value, text: Option<&[u8]>) -> Result<JsonRpcMessage, InvalidMessage> {
        let top = match value {
            Value::Object(map) => Top::Object(Members::of(map)),
            Value::Array(_) => Top::Array,
            _ => Top::Other,
        };
        Self::classify_top(top, text)
    }

    /// [`JsonRpcMessage::classify`] over the members read.
    fn classify_top(top: Top, text: Option<&[u8]>) -> Result<JsonRpcMessage, InvalidMessage> {
        let mut m = match top {
            Top::Object(members) => members,
            Top::Array => {
                return Err(InvalidMessage {
                    batch: true,
                    ..InvalidMessage::new(
                        None,
                        ErrorObject::invalid_request("batches are not supported"),
                    )
                })
            }
            Top::Other => {
                return Err(InvalidMessage::new(
                    None,
                    ErrorObject::invalid_request("a message must be a JSON object"),
                ))
            }
        };
        let has_method = m.method.is_some();
        let id = match &m.id {
            None if has_method => {
                // A notification: classified before validation. One whose only fault is its
                // `params` is never answered; an object that is no JSON-RPC message at all (no
                // or another `jsonrpc`, `method` not a string) is an invalid request, answered
                // with `-32600` and id `null` (JSON-RPC 2.0 §5, §7's own example:
                // `{"jsonrpc": "2.0", "method": 1, "params": "bar"}`).
                let bad = |reply| {
                    move |error| InvalidMessage {
                        id: None,
                        error,
                        reply,
                        not_json: false,
                        response: false,
                        batch: false,
                    }
                };
                check_version(m.jsonrpc.as_ref()).map_err(bad(true))?;
                let method = match m.method {
                    Some(Value::String(m)) => m,
                    _ => {
                        return Err(bad(true)(ErrorObject::invalid_request(
                            r#""method" must be a string"#,
                        )))
                    }
                };
                let params = read_params(m.params).map_err(bad(false))?;
                return Ok(JsonRpcMessage::Notification(JsonRpcNotification {
                    method,
                    params,
                }));
            }
            None => None,
            Some(raw) => match RequestId::from_value(raw).or_else(|| exact_id(raw, text)) {
                Some(id) => Some(id),
                None if raw.is_null() && !has_method => None,
                None => {
                    let what = if raw.is_null() {
                        r#""id" must not be null on a request"#
                    } else if raw
                        .as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18)
                    {
                        r#""id" is an integer beyond 64 bits, which a parsed JSON value holds only rounded: parse the message from its text"#
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
        if let Err(error) = check_version(m.jsonrpc.as_ref()) {
            return Err(InvalidMessage::new(id, error));
        }
        if has_method {
            let id = id.expect("a method with an id member has a valid id here");
            let method = match m.method {
                Some(Value::String(method)) => method,
                _ => {
                    return Err(InvalidMessage::new(
                        Some(id),
                        ErrorObject::invalid_request(r#""method" must be a string"#),
                    ))
                }
            };
            let params =
                read_params(m.params).map_err(|e| InvalidMessage::new(Some(id.clone()), e))?;
            return Ok(JsonRpcMessage::Request(JsonRpcRequest {
                id,
                method,
                params,
            }));
        }
        if m.id.is_none() {
            return Err(InvalidMessage::new(
                None,
                ErrorObject::invalid_request(r#"neither "method" nor "id""#),
            ));
        }
        let as_response = |invalid: InvalidMessage| InvalidMessage {
            response: true,
            ..invalid
        };
        let result = m.result.take();
        let error = m.error.take();
        let payload = match (result, error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(ErrorObject::from_value(error).ok_or_else(|| {
                as_response(InvalidMessage::new(
                    id.clone(),
                    ErrorObject::invalid_request(
                        r#"bad error object: needs an integer "code" and a string "message""#,
                    ),
                ))
            })?),
            (Some(_), Some(_)) => {
                return Err(as_response(InvalidMessage::new(
                    id,
                    ErrorObject::invalid_request(r#"a response has both "result" and "error""#),
                )))
            }
            (None, None) => {
                return Err(as_response(InvalidMessage::new(
                    id,
                    ErrorObject::invalid_request(
                        r#"a message with an "id" needs "method" (a request), or "result" or "error" (a response)"#,
                    ),
                )))
            }
        };
        Ok(JsonRpcMessage::Response(JsonRpcResponse {
            id,
            payload: payload.map(ResultValue::from),
        }))
    }

    /// Parse message text: `-32700` when it is not JSON, else [`JsonRpcMessage::from_value`],
    /// with an integer `id` of any length read exactly from the text.
    ///
    /// Valid JSON that exceeds a limit of the parser — nesting deeper than
    /// [`MAX_DEPTH`](super::MAX_DEPTH), a number beyond the range of an `f64`, a lone UTF-16
    /// surrogate escape — is still answered: `-32600` with its id when the top-level `id` is
    /// readable, `-32700` with id `null` otherwise, and never answered when it is a notification
    /// (a `method` and no `id`). The message names the limit and its line and column.
    ///
    /// A leading UTF-8 byte order mark is ignored ([RFC 8259 §8.1](https://www.rfc-editor.org/rfc/rfc8259#section-8.1)
    /// lets a parser do so; some Windows tools write one).
    ///
    /// # Errors
    /// [`InvalidMessage`] as above; text that is not JSON carries `-32700` and id `null`
    /// ([`InvalidMessage::is_not_json`]) — or, when the text starts with a whole request and goes
    /// on after it (`{…} x`, two messages on one line), that request's id, so the request is
    /// answered rather than left waiting ([JSON-RPC 2.0 §5](https://www.jsonrpc.org/specification#response_object):
    /// the id is `null` only when it could not be detected).
    pub fn from_slice(bytes: &[u8]) -> Result<JsonRpcMessage, InvalidMessage> {
        let bytes = without_bom(bytes);
        match serde_json::from_slice::<Top>(bytes) {
            Ok(top) => Self::classify_top(top, Some(bytes)),
            Err(e) => beyond_limits(bytes, &e),
        }
    }

    /// The same message answering to `id` (a request's or a response's; a notification has none).
    fn with_id(self, id: RequestId) -> JsonRpcMessage {
        match self {
            JsonRpcMessage::Request(r) => JsonRpcMessage::Request(JsonRpcRequest { id, ..r }),
            JsonRpcMessage::Response(r) => {
                JsonRpcMessage::Response(JsonRpcResponse { id: Some(id), ..r })
            }
            other => other,
        }
    }

    /// Serialize to a JSON string (never fails: every member is plain JSON).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC messages always serialize")
    }
}

/// The exact id of an integer `id` member that `serde_json` read as an `f64` (beyond `u64`, or
/// `-0`): its raw text, from the one scan this slow path needs.
fn exact_id(raw: &Value, text: Option<&[u8]>) -> Option<RequestId> {
    if !raw.is_f64() {
        return None;
    }
    let text = std::str::from_utf8(text?).ok()?;
    RequestId::from_integer_text(scan::outline(text)?.id?)
}

/// The answer to text `serde_json` refused: `-32700` when it is not JSON, else (valid JSON beyond
/// a parser limit) the error the module docs give, naming the limit.
fn beyond_limits(
    bytes: &[u8],
    error: &serde_json::Error,
) -> Result<JsonRpcMessage, InvalidMessage> {
    let outline = std::str::from_utf8(bytes).ok().and_then(scan::outline);
    let Some(outline) = outline else {
        return Err(InvalidMessage {
            not_json: true,
            ..InvalidMessage::new(
                leading_message_id(bytes).and_then(|(id, request)| request.then_some(id)),
                ErrorObject::parse_error(error),
            )
        });
    };
    if let Some(raw) = outline.id.filter(|raw| {
        // A number token (the scanner read it as JSON) that no `f64` holds.
        raw.starts_with(|c: char| c == '-' || c.is_ascii_digit())
            && crate::wire::json_text::json_number(raw).is_none()
    }) {
        // An integer id too long even for an `f64` (over 308 digits): read the message with a
        // stand-in id, then put the exact one back.
        if let Some(id @ RequestId::Integer(_)) = RequestId::from_integer_text(raw) {
            let text = std::str::from_utf8(bytes).unwrap_or_default();
            let at = raw.as_ptr() as usize - text.as_ptr() as usize;
            let stand_in = format!("{}0{}", &text[..at], &text[at + raw.len()..]);
            return match JsonRpcMessage::from_slice(stand_in.as_bytes()) {
                Ok(message) => Ok(message.with_id(id)),
                Err(mut invalid) => {
                    if invalid.id.is_some() {
                        invalid.id = Some(id);
                    }
                    Err(invalid)
                }
            };
        }
    }
    let what = outline
        .limit
        .as_ref()
        .map_or_else(|| error.to_string(), ToString::to_string);
    let detail = format!("the message is valid JSON but exceeds a limit of this parser: {what}");
    if outline.object && outline.has_method && outline.id.is_none() {
        return Err(InvalidMessage {
            reply: false,
            ..InvalidMessage::new(None, ErrorObject::invalid_request(detail))
        });
    }
    let invalid = match outline.id.and_then(RequestId::from_json_text) {
        Some(id) => InvalidMessage::new(Some(id), ErrorObject::invalid_request(detail)),
        None => InvalidMessage::new(None, ErrorObject::parse_error(detail)),
    };
    Err(InvalidMessage {
        response: outline.object && !outline.has_method && outline.id.is_some(),
        batch: outline.array,
        ..invalid
    })
}

/// `bytes` without a leading UTF-8 byte order mark.
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// The first whole value of `bytes` when more text follows it (text that is not JSON as a
/// whole, such as `{…}{…}` on one line), if it is a top-level object with a readable `id`: that
/// id, and whether the object has a `method` (`true`: a request, `false`: a response). A server
/// answers such a request with its id; a client fails the call such a response answers.
pub(crate) fn leading_message_id(bytes: &[u8]) -> Option<(RequestId, bool)> {
    let bytes = without_bom(bytes);
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    values.next()?.ok()?;
    let first = std::str::from_utf8(bytes.get(..values.byte_offset())?).ok()?;
    let outline = scan::outline(first)?;
    if !outline.object {
        return None;
    }
    let id = outline.id.and_then(RequestId::from_json_text)?;
    Some((id, outline.has_method))
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        JsonRpcMessage::from_value(value).map_err(serde::de::Error::custom)
    }
}
