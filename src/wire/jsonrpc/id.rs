//! [`RequestId`]: a string or an integer, echoed exactly as sent.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// A request id: a string or an integer, echoed exactly as sent.
///
/// Integers in `i64` are [`RequestId::Number`] and never pass through `f64`; any other integer —
/// beyond 64 bits, of any length, or `-0` — is [`RequestId::Integer`], kept as its exact decimal
/// text; `"007"` stays a string. Fractional numbers (`1.5`, `1e3`) are not valid ids (`-32600`).
/// Integers beyond `u64` are read exactly only from message text
/// ([`JsonRpcMessage::from_slice`](super::JsonRpcMessage::from_slice)): a parsed
/// [`Value`] has already rounded them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A string id (any string, including `""`).
    String(String),
    /// An integer id (`0`, negatives, the whole `i64` range).
    Number(i64),
    /// An integer id outside `i64` (any length), or `-0`: its exact decimal text.
    Integer(IntegerText),
}

/// The exact decimal text of an integer id that is not an `i64`
/// (JSON's `-?(0|[1-9][0-9]*)`; built only by [`RequestId::from_integer_text`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IntegerText(String);

impl IntegerText {
    /// The digits (with a leading `-` for a negative integer), as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl RequestId {
    /// Read an id from a JSON value; `None` for `null`, booleans, fractions, objects, arrays and
    /// numbers a [`Value`] holds as `f64` (use [`RequestId::from_integer_text`] on the raw text).
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Some(RequestId::Number(i)),
                (None, Some(u)) => Some(RequestId::Integer(IntegerText(u.to_string()))),
                (None, None) => None,
            },
            _ => None,
        }
    }

    /// An id from the raw JSON text of an `id` member: a string literal (escapes read) or an
    /// integer of any length ([`RequestId::from_integer_text`]); `None` for any other text.
    pub fn from_json_text(raw: &str) -> Option<RequestId> {
        if raw.starts_with('"') {
            serde_json::from_str::<String>(raw)
                .ok()
                .map(RequestId::String)
        } else {
            RequestId::from_integer_text(raw)
        }
    }

    /// An integer id from its JSON text (`-?(0|[1-9][0-9]*)`, any length): a
    /// [`RequestId::Number`] when it is an `i64`, else a [`RequestId::Integer`] with the text as
    /// sent; `None` for any other text.
    pub fn from_integer_text(text: &str) -> Option<RequestId> {
        if !super::scan::is_integer_literal(text) {
            return None;
        }
        Some(match text.parse::<i64>() {
            Ok(n) if text != "-0" => RequestId::Number(n),
            _ => RequestId::Integer(IntegerText(text.to_owned())),
        })
    }

    /// The id as a JSON value. A [`Value`] cannot hold a [`RequestId::Integer`] beyond `u64`
    /// exactly: it becomes the nearest `f64`, or `null` beyond an `f64`'s range (serialize the id
    /// itself to keep its text).
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::String(s) => Value::String(s.clone()),
            RequestId::Number(n) => Value::from(*n),
            // Out of an `f64`'s range (over 308 digits), no number holds it.
            RequestId::Integer(text) => serde_json::from_str(text.as_str()).unwrap_or(Value::Null),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::String(s) => write!(f, "{s:?}"),
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Integer(text) => f.write_str(text.as_str()),
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
            // The exact digits: serde_json writes a raw value as is (other serializers see
            // serde_json's raw-value struct).
            RequestId::Integer(text) => serde_json::value::RawValue::from_string(text.0.clone())
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("a request id must be a string or an integer"))
    }
}
