//! JS values ↔ [`serde_json::Value`], with exact integers.
//!
//! `serde-wasm-bindgen` turns either every 64-bit integer into a `BigInt` or refuses the ones
//! beyond 2^53; neither suits JSON-RPC, where ids are small numbers almost always and must stay
//! exact when they are not. So the walk is by hand:
//!
//! | JS → Rust | |
//! |---|---|
//! | a `number` that is a safe integer (`Number.isSafeInteger`) | an integer |
//! | any other finite `number` | a float (an id that is one is then invalid, never rounded) |
//! | `NaN`, `±Infinity` | `null` (as `JSON.stringify`) |
//! | a `bigint` in `i64` or `u64` | an integer, exactly |
//! | an object with `toJSON()` (a `Date`, …) | what `toJSON()` returns |
//! | `undefined`, functions, symbols | skipped in objects, `null` elsewhere |
//!
//! | Rust → JS | |
//! |---|---|
//! | an integer within ±(2^53 − 1) | a `number` |
//! | a larger integer (in `i64` or `u64`) | a `bigint` |
//! | an integer beyond 64 bits (a `Value` holds it as the nearest `f64`: JSON text is parsed without arbitrary precision; only a request id keeps its exact digits) | a `number` |
//! | a float | a `number` |
//! | an object | a plain object (own properties, even `__proto__`) |

use js_sys::{Array, BigInt, Function, Object, Reflect};
use serde_json::{Map, Number, Value};
use wasm_bindgen::{JsCast, JsValue};

/// `Number.MAX_SAFE_INTEGER`: 2^53 − 1.
const MAX_SAFE: i64 = (1 << 53) - 1;
/// How deep a JS value may nest before it is taken for a cycle.
const MAX_DEPTH: usize = 256;
/// The most elements an array read from JS may have: 1,048,576 (`new Array(2 ** 28)` is not
/// walked hole by hole into gigabytes).
const MAX_ARRAY_LEN: u32 = 1 << 20;

#[wasm_bindgen::prelude::wasm_bindgen]
extern "C" {
    /// `Object.keys`, whose throw (a `Proxy`'s `ownKeys` trap) comes back as an `Err`.
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    pub(crate) fn object_keys(object: &JsValue) -> Result<Array, JsValue>;
    /// `Array.isArray`, whose throw (a revoked `Proxy`) comes back as an `Err`.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    pub(crate) fn is_array(value: &JsValue) -> Result<bool, JsValue>;
}

/// Convert a JSON value to a JS value (see the module table).
pub fn to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => number_to_js(n),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => {
            let array = Array::new_with_length(items.len() as u32);
            for (i, item) in items.iter().enumerate() {
                array.set(i as u32, to_js(item));
            }
            array.into()
        }
        Value::Object(map) => {
            let object = Object::new();
            for (key, item) in map {
                set_own(&object, key, &to_js(item));
            }
            object.into()
        }
    }
}

fn number_to_js(n: &Number) -> JsValue {
    if let Some(i) = n.as_i64() {
        if (-MAX_SAFE..=MAX_SAFE).contains(&i) {
            JsValue::from_f64(i as f64)
        } else {
            BigInt::from(i).into()
        }
    } else if let Some(u) = n.as_u64() {
        BigInt::from(u).into()
    } else {
        JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// `object[key]`, `parent.key` in errors ([`member_at`]).
pub(crate) fn member(
    object: &JsValue,
    key: &str,
    parent: &str,
) -> Result<Option<JsValue>, crate::wire::jsonrpc::ErrorObject> {
    member_at(object, key, &format!("{parent}.{key}"))
}

/// `object[key]`, read through `Reflect`: `Ok(None)` when it is `undefined` or `null`. A getter
/// or `Proxy` trap that throws is an error (`-32602`, `data.path` = `at`, the member's path as
/// the caller names it, e.g. `options.tools`), not taken for a missing member.
pub(crate) fn member_at(
    object: &JsValue,
    key: &str,
    at: &str,
) -> Result<Option<JsValue>, crate::wire::jsonrpc::ErrorObject> {
    match Reflect::get(object, &JsValue::from_str(key)) {
        Ok(value) if value.is_undefined() || value.is_null() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(thrown) => Err(crate::wire::jsonrpc::ErrorObject::invalid_params(format!(
            "{at} could not be read: {}",
            super::error_message(&thrown)
        ))
        .with_data(serde_json::json!({ "path": at }))),
    }
}

/// Set an own, enumerable, writable data property (a plain `obj[key] = v` would run the
/// `__proto__` setter instead of creating the member).
pub(crate) fn set_own(object: &Object, key: &str, value: &JsValue) {
    if key == "__proto__" {
        let descriptor = Object::new();
        let _ = Reflect::set(&descriptor, &"value".into(), value);
        for flag in ["writable", "enumerable", "configurable"] {
            let _ = Reflect::set(&descriptor, &flag.into(), &JsValue::TRUE);
        }
        let _ = Reflect::define_property(object, &key.into(), &descriptor);
    } else {
        let _ = Reflect::set(object, &key.into(), value);
    }
}

/// Convert a JS value to JSON (see the module table).
///
/// # Errors
/// A message when a `bigint` is outside the 64-bit range, a `toJSON()`, a getter or a `Proxy`
/// trap throws, an array has more than 1,048,576 elements, or the value nests deeper than 256
/// levels (a cycle).
pub fn from_js(value: &JsValue) -> Result<Value, String> {
    walk(value, 0).map(|v| v.unwrap_or(Value::Null))
}

/// `None` for what `JSON.stringify` leaves out of an object (`undefined`, functions, symbols).
fn walk(value: &JsValue, depth: usize) -> Result<Option<Value>, String> {
    if depth > MAX_DEPTH {
        return Err("the value nests too deeply (a cycle?)".to_owned());
    }
    if value.is_undefined() || value.is_function() || value.is_symbol() {
        return Ok(None);
    }
    if value.is_null() {
        return Ok(Some(Value::Null));
    }
    if let Some(b) = value.as_bool() {
        return Ok(Some(Value::Bool(b)));
    }
    if let Some(f) = value.as_f64() {
        return Ok(Some(number_from_f64(f)));
    }
    if let Some(s) = value.as_string() {
        return Ok(Some(Value::String(s)));
    }
    if value.is_bigint() {
        return bigint_to_number(value).map(|n| Some(Value::Number(n)));
    }
    // Every read goes through `Reflect` (or a `catch` import): a getter or a `Proxy` trap that
    // throws is an `Err` here, never an exception through the wasm frames.
    let threw = |what: &str, e: JsValue| format!("{what} threw: {}", super::error_message(&e));
    if is_array(value).map_err(|e| threw("telling whether the value is an array", e))? {
        let length = Reflect::get(value, &"length".into())
            .map_err(|e| threw("reading the array's length", e))?
            .as_f64()
            .unwrap_or(0.0);
        if length > f64::from(MAX_ARRAY_LEN) {
            return Err(format!(
                "an array of {length} elements is over the limit of {MAX_ARRAY_LEN}"
            ));
        }
        let length = length as u32;
        let mut items = Vec::with_capacity(length.min(1024) as usize);
        for i in 0..length {
            let item =
                Reflect::get_u32(value, i).map_err(|e| threw("reading an array element", e))?;
            items.push(walk(&item, depth + 1)?.unwrap_or(Value::Null));
        }
        return Ok(Some(Value::Array(items)));
    }
    if let Ok(to_json) = Reflect::get(value, &"toJSON".into()) {
        if let Some(to_json) = to_json.dyn_ref::<Function>() {
            let replaced = to_json
                .call0(value)
                .map_err(|e| format!("toJSON() threw: {}", super::error_message(&e)))?;
            return walk(&replaced, depth + 1);
        }
    }
    let keys = object_keys(value).map_err(|e| threw("listing the object's keys", e))?;
    let mut map = Map::new();
    for i in 0..keys.length() {
        let Some(key) = keys.get(i).as_string() else {
            continue;
        };
        let item = Reflect::get(value, &JsValue::from_str(&key))
            .map_err(|e| threw(&format!("reading {key:?}"), e))?;
        if let Some(item) = walk(&item, depth + 1)? {
            map.insert(key, item);
        }
    }
    Ok(Some(Value::Object(map)))
}

fn number_from_f64(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() <= MAX_SAFE as f64 {
        Value::from(f as i64)
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

fn bigint_to_number(value: &JsValue) -> Result<Number, String> {
    let big: &BigInt = value.unchecked_ref();
    let text: String = big.to_string(10).map(String::from).unwrap_or_default();
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Number::from(i));
    }
    text.parse::<u64>()
        .map(Number::from)
        .map_err(|_| format!("the BigInt {text} is outside the 64-bit integer range"))
}

/// A JSON-RPC response as a JS object (integer ids beyond 2^53 − 1 as `bigint`).
pub(crate) fn response_to_js(response: &crate::wire::jsonrpc::JsonRpcResponse) -> JsValue {
    to_js(&serde_json::to_value(response).expect("responses serialize"))
}
