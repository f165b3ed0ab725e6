//! [`Content`]'s serde, written by hand: a block is read as a JSON object and its members picked
//! out, and written as a map in the derive's member order. serde's derive for this internally
//! tagged enum with a flattened variant buffers every block into its private `Content` tree and
//! instantiates that machinery per deserializer: ~30 KB of the wasm module (of ~1 MB), for what
//! this file does in a few functions, one of them not generic.

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::Content;

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let annotations = match self {
            Content::Text { text, annotations } => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                annotations
            }
            Content::Image {
                data,
                mime_type,
                annotations,
            }
            | Content::Audio {
                data,
                mime_type,
                annotations,
            } => {
                let tag = if matches!(self, Content::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                map.serialize_entry("type", tag)?;
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime_type)?;
                annotations
            }
            Content::ResourceLink { uri, name, rest } => {
                map.serialize_entry("type", "resource_link")?;
                map.serialize_entry("uri", uri)?;
                map.serialize_entry("name", name)?;
                for (key, value) in rest {
                    map.serialize_entry(key, value)?;
                }
                &None
            }
            Content::Resource {
                resource,
                annotations,
            } => {
                map.serialize_entry("type", "resource")?;
                map.serialize_entry("resource", resource)?;
                annotations
            }
        };
        if let Some(annotations) = annotations {
            map.serialize_entry("annotations", annotations)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        from_map(Map::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// A block from its members: `type` picks the variant; unknown members are ignored (kept in
/// `rest` for a `resource_link`, in their order); an `annotations` of `null` is none. The
/// messages are close to serde's.
fn from_map(mut map: Map<String, Value>) -> Result<Content, String> {
    let tag = match map.shift_remove("type") {
        None => return Err("missing field `type`".to_owned()),
        Some(Value::String(tag)) => tag,
        Some(other) => return Err(invalid_type(&other, "variant identifier")),
    };
    let mut string = |key: &str| match map.shift_remove(key) {
        None => Err(format!("missing field `{key}`")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(invalid_type(&other, "a string")),
    };
    Ok(match tag.as_str() {
        "text" => Content::Text {
            text: string("text")?,
            annotations: annotations(&mut map),
        },
        "image" | "audio" => {
            let data = string("data")?;
            let mime_type = string("mimeType")?;
            let annotations = annotations(&mut map);
            if tag == "image" {
                Content::Image {
                    data,
                    mime_type,
                    annotations,
                }
            } else {
                Content::Audio {
                    data,
                    mime_type,
                    annotations,
                }
            }
        }
        "resource_link" => {
            let uri = string("uri")?;
            let name = string("name")?;
            Content::ResourceLink {
                uri,
                name,
                rest: map,
            }
        }
        "resource" => Content::Resource {
            resource: map
                .shift_remove("resource")
                .ok_or_else(|| "missing field `resource`".to_owned())?,
            annotations: annotations(&mut map),
        },
        _ => {
            return Err(format!(
                "unknown variant `{tag}`, expected one of `text`, `image`, `audio`, `resource_link`, `resource`"
            ))
        }
    })
}

fn annotations(map: &mut Map<String, Value>) -> Option<Value> {
    map.shift_remove("annotations").filter(|v| !v.is_null())
}

fn invalid_type(value: &Value, expected: &str) -> String {
    let found = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a map",
    };
    format!("invalid type: {found}, expected {expected}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Content;

    #[test]
    fn every_block_round_trips_in_the_derives_member_order() {
        for text in [
            r#"{"type":"text","text":"hi"}"#,
            r#"{"type":"text","text":"hi","annotations":{"priority":1}}"#,
            r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"type":"audio","data":"AA==","mimeType":"audio/wav","annotations":{}}"#,
            r#"{"type":"resource_link","uri":"u","name":"n","mimeType":"t","title":"T"}"#,
            r#"{"type":"resource","resource":{"uri":"u","text":"x"}}"#,
            r#"{"type":"resource","resource":{"uri":"u","blob":"AA=="},"annotations":{"a":1}}"#,
        ] {
            let block: Content = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&block).unwrap(), text);
            let from_value: Content =
                serde_json::from_value(serde_json::from_str(text).unwrap()).unwrap();
            assert_eq!(from_value, block);
        }
    }

    #[test]
    fn members_are_picked_as_the_derive_did() {
        let block: Content = serde_json::from_value(
            json!({"name":"n","extra":null,"type":"resource_link","uri":"u"}),
        )
        .unwrap();
        let Content::ResourceLink { uri, name, rest } = block else {
            panic!("not a link")
        };
        assert_eq!((uri.as_str(), name.as_str()), ("u", "n"));
        assert_eq!(serde_json::Value::Object(rest), json!({"extra": null}));
        let text: Content =
            serde_json::from_value(json!({"type":"text","text":"t","annotations":null,"x":1}))
                .unwrap();
        assert_eq!(text, Content::text("t"));
        let resource: Content =
            serde_json::from_value(json!({"type":"resource","resource":null})).unwrap();
        assert_eq!(
            resource,
            Content::Resource {
                resource: serde_json::Value::Null,
                annotations: None
            }
        );
    }

    #[test]
    fn malformed_blocks_are_refused_with_serdes_messages() {
        for (block, message) in [
            (json!({"text":"t"}), "missing field `type`"),
            (json!({"type":"video"}), "unknown variant `video`"),
            (json!({"type":"text"}), "missing field `text`"),
            (
                json!({"type":"text","text":5}),
                "invalid type: a number, expected a string",
            ),
            (
                json!({"type":"image","data":"AA=="}),
                "missing field `mimeType`",
            ),
            (
                json!({"type":"resource_link","uri":"u"}),
                "missing field `name`",
            ),
            (json!({"type":"resource"}), "missing field `resource`"),
            (json!("text"), "invalid type"),
        ] {
            let error = serde_json::from_value::<Content>(block)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }
}
