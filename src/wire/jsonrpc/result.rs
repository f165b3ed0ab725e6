//! [`ResultValue`]: the `result` of a success response, as a JSON value or as JSON text already
//! serialized (a cached listing every response shares, written out as is).

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// The `result` member of a success response.
///
/// Most results are a [`Value`]. A server may instead answer with JSON text it serialized once
/// and shares between responses ([`ResultValue::raw`], e.g. the `tools/list` of an unchanged
/// registry), or text it wrote for this response (`From<Box<RawValue>>`, e.g. one page of that
/// listing): it is written out byte for byte, never cloned or re-serialized. Either way it reads
/// as a [`Value`] (it derefs to one; raw text is parsed on first read), compares by that value,
/// and [`ResultValue::into_value`] takes it out.
#[derive(Clone)]
pub struct ResultValue(Repr);

#[derive(Clone)]
enum Repr {
    Value(Value),
    Raw { text: Text, parsed: OnceLock<Value> },
}

/// Serialized JSON text: shared between responses, or this response's own.
#[derive(Clone)]
enum Text {
    Shared(Arc<RawValue>),
    Owned(Box<RawValue>),
}

impl Text {
    fn get(&self) -> &RawValue {
        match self {
            Text::Shared(text) => text,
            Text::Owned(text) => text,
        }
    }
}

impl ResultValue {
    /// A result written out as the JSON text `text` (already validated by its `RawValue`).
    pub fn raw(text: Arc<RawValue>) -> Self {
        ResultValue(Repr::Raw {
            text: Text::Shared(text),
            parsed: OnceLock::new(),
        })
    }

    /// `true` when the result is JSON text already serialized: shared ([`ResultValue::raw`]) or
    /// this response's own (`ResultValue::from(Box<RawValue>)`).
    pub fn is_raw(&self) -> bool {
        matches!(self.0, Repr::Raw { .. })
    }

    /// The result as a [`Value`] (raw text parsed unless it already was).
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(value) => value,
            Repr::Raw { text, parsed } => parsed.into_inner().unwrap_or_else(|| parse(text.get())),
        }
    }
}

/// A `RawValue` is valid JSON; `null` only if serde_json disagreed with itself.
fn parse(text: &RawValue) -> Value {
    serde_json::from_str(text.get()).unwrap_or(Value::Null)
}

impl Deref for ResultValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        match &self.0 {
            Repr::Value(value) => value,
            Repr::Raw { text, parsed } => parsed.get_or_init(|| parse(text.get())),
        }
    }
}

impl From<Value> for ResultValue {
    fn from(value: Value) -> Self {
        ResultValue(Repr::Value(value))
    }
}

impl From<Box<RawValue>> for ResultValue {
    /// A result written out as the JSON text `text`, owned by this response (e.g. one page of a
    /// cached listing, composed for this request).
    fn from(text: Box<RawValue>) -> Self {
        ResultValue(Repr::Raw {
            text: Text::Owned(text),
            parsed: OnceLock::new(),
        })
    }
}

impl PartialEq for ResultValue {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl PartialEq<Value> for ResultValue {
    fn eq(&self, other: &Value) -> bool {
        **self == *other
    }
}

impl fmt::Debug for ResultValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for ResultValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Value(value) => value.serialize(serializer),
            Repr::Raw { text, .. } => text.get().serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_text_goes_out_as_is_and_reads_as_its_value() {
        let text: Arc<RawValue> =
            Arc::from(RawValue::from_string(r#"{"b":1, "a":[2]}"#.into()).unwrap());
        let raw = ResultValue::raw(text);
        assert!(raw.is_raw());
        assert_eq!(serde_json::to_string(&raw).unwrap(), r#"{"b":1, "a":[2]}"#);
        assert_eq!(raw["a"][0], 2);
        assert_eq!(raw, ResultValue::from(json!({"a":[2],"b":1})));
        assert_eq!(raw.clone().into_value(), json!({"b":1,"a":[2]}));
        let owned = ResultValue::from(RawValue::from_string("[1, 2]".into()).unwrap());
        assert!(owned.is_raw());
        assert_eq!(serde_json::to_string(&owned).unwrap(), "[1, 2]");
        assert_eq!(owned[1], 2);
        assert_eq!(owned.into_value(), json!([1, 2]));
    }
}
