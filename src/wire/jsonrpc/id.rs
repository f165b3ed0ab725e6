//! [`RequestId`]: a string or an integer, echoed exactly as sent.

use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

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
