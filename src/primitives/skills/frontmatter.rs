//! A `SKILL.md`'s YAML frontmatter ([Agent Skills](https://agentskills.io/specification)), read
//! into the JSON object a skill entry carries verbatim
//! ([SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension), Frontmatter), and
//! the field-by-field comparison a host makes after fetching a `SKILL.md`.
//!
//! The YAML is parsed by `yaml-rust2` (YAML 1.2, core schema: `yes` stays a string); the tree is
//! built here from its events so that nothing a peer sends can grow without bound: at most
//! [`MAX_FRONTMATTER_NODES`] nodes (aliases counted at their expanded size, so a "billion
//! laughs" block is refused, not expanded), flow nesting at most 255 (the parser's own bound).

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};
use yaml_rust2::Yaml;

/// The most YAML nodes (scalars, sequences, mappings; an alias counts as the nodes it repeats)
/// one frontmatter block may hold: 100 000.
pub const MAX_FRONTMATTER_NODES: usize = 100_000;

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The text does not begin with a `---` line closed by another `---` line.
    #[error("SKILL.md does not begin with a `---` delimited YAML frontmatter block")]
    Missing,
    /// The block is not valid YAML (the parser's message, with line and column).
    #[error("the SKILL.md frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// The block is valid YAML but not a mapping.
    #[error("the SKILL.md frontmatter is not a YAML mapping")]
    NotAMapping,
    /// A required field (`name`, `description`) is absent, empty or not a string.
    #[error("the SKILL.md frontmatter has no non-empty string `{0}`")]
    MissingField(&'static str),
    /// The block holds more than [`MAX_FRONTMATTER_NODES`] nodes.
    #[error("the SKILL.md frontmatter holds more than {MAX_FRONTMATTER_NODES} YAML nodes")]
    TooLarge,
}

/// The YAML text between the opening `---` line and the closing one (a leading byte-order mark
/// allowed; `\n` or `\r\n` line ends), or `None` when the text has no such block.
pub fn frontmatter_block(text: &str) -> Option<&str> {
    split_frontmatter(text).map(|(block, _)| block)
}

/// The frontmatter block and the body after its closing `---` line, as
/// [`frontmatter_block`] finds them.
pub fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare
            .strip_prefix("---")
            .is_some_and(|t| t.trim_matches([' ', '\t']).is_empty())
        {
            let block = &rest[..offset];
            let block = block
                .strip_suffix('\n')
                .map_or(block, |b| b.strip_suffix('\r').unwrap_or(b));
            return Some((block, &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Parse a `SKILL.md`'s frontmatter into a JSON object, every field the author wrote kept, and
/// check that `name` and `description` are non-empty strings (Agent Skills requires both).
///
/// # Errors
/// [`FrontmatterError`]: no block, invalid YAML, not a mapping, a required field missing, or
/// more than [`MAX_FRONTMATTER_NODES`] nodes.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let block = frontmatter_block(text).ok_or(FrontmatterError::Missing)?;
    let map = match parse_yaml(block)? {
        Value::Object(map) => map,
        _ => return Err(FrontmatterError::NotAMapping),
    };
    for field in ["name", "description"] {
        let present = map.get(field).and_then(Value::as_str);
        if present.is_none_or(str::is_empty) {
            return Err(FrontmatterError::MissingField(field));
        }
    }
    Ok(map)
}

/// The fields whose values differ between two frontmatter objects (a field absent from one
/// side equals `null` on the other; numbers compare by value, so `2` equals `2.0`), sorted.
pub fn frontmatter_differences(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    let mut fields: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| {
            !same(
                a.get(*k).unwrap_or(&Value::Null),
                b.get(*k).unwrap_or(&Value::Null),
            )
        })
        .cloned()
        .collect();
    fields.sort();
    fields.dedup();
    fields
}

/// JSON equality with numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => frontmatter_differences(x, y).is_empty(),
        _ => a == b,
    }
}

/// Parse one YAML document into JSON (an empty document is `null`).
fn parse_yaml(text: &str) -> Result<Value, FrontmatterError> {
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, false)
        .map_err(|e| FrontmatterError::Yaml(e.to_string()))?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    Ok(builder.root.unwrap_or(Value::Null))
}

/// An open collection: a sequence, or a mapping with the key waiting for its value.
/// Each carries its size in nodes so far and its anchor id (0: none).
enum Open {
    Seq(Vec<Value>, usize, usize),
    Map(Map<String, Value>, Option<String>, usize, usize),
}

/// Builds the JSON tree from the parser's events, counting nodes.
#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    root: Option<Value>,
    anchors: crate::collections::HashMap<usize, (Value, usize)>,
    nodes: usize,
    error: Option<FrontmatterError>,
}

impl Builder {
    fn count(&mut self, n: usize) -> bool {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_FRONTMATTER_NODES {
            self.error.get_or_insert(FrontmatterError::TooLarge);
            return false;
        }
        true
    }

    /// Place a finished node (with its size in nodes) in its parent, or as the root.
    fn place(&mut self, value: Value, anchor: usize, size: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, (value.clone(), size));
        }
        match self.stack.last_mut() {
            Some(Open::Seq(items, n, _)) => {
                items.push(value);
                *n += size;
            }
            Some(Open::Map(map, key, n, _)) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                    *n += size;
                }
                None => *key = Some(key_text(&value)),
            },
            None => self.root = Some(value),
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, _mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let opens_a_node = matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        );
        if opens_a_node && !self.count(1) {
            return;
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                self.place(scalar(text, style, tag.as_ref()), anchor, 1);
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Open::Seq(Vec::new(), 1, anchor)),
            Event::MappingStart(anchor, _) => {
                self.stack.push(Open::Map(Map::new(), None, 1, anchor));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                // A collection's anchor is recorded when it closes, with its whole size.
                let (value, size, anchor) = match self.stack.pop() {
                    Some(Open::Seq(items, n, anchor)) => (Value::Array(items), n, anchor),
                    Some(Open::Map(map, _, n, anchor)) => (Value::Object(map), n, anchor),
                    None => return,
                };
                self.place(value, anchor, size);
            }
            Event::Alias(id) => {
                let Some((value, size)) = self.anchors.get(&id).cloned() else {
                    self.error = Some(FrontmatterError::Yaml(format!("unknown alias {id}")));
                    return;
                };
                if self.count(size) {
                    self.place(value, 0, size);
                }
            }
            _ => {}
        }
    }
}

/// A mapping key as JSON object keys are: strings as they are, other scalars as their text.
fn key_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        other => crate::wire::json_text::to_text(other),
    }
}

/// A scalar under the YAML 1.2 core schema: quoted and block scalars are strings, plain ones
/// resolve to null, booleans, integers and floats; `!!str` (and the other core tags) decide.
fn scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let core = tag
        .filter(|t| t.handle == "tag:yaml.org,2002:" || t.handle == "!!")
        .map(|t| t.suffix.as_str());
    match core {
        Some("str") => return Value::String(text),
        Some("null") => return Value::Null,
        _ => {}
    }
    if style != TScalarStyle::Plain && core.is_none() {
        return Value::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        _ => Value::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fm(yaml: &str) -> Result<Map<String, Value>, FrontmatterError> {
        parse_frontmatter(&format!("---\n{yaml}\n---\nbody\n"))
    }

    #[test]
    fn frontmatter_is_read_verbatim_under_the_core_schema() {
        let map = fm("name: pdf\ndescription: 'Fill: forms'\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  n: 3\n  f: 1.5\n  on: yes\n  list: [a, 1, true, null]\n").unwrap();
        assert_eq!(
            Value::Object(map),
            json!({"name":"pdf","description":"Fill: forms","license":"Apache-2.0",
                   "metadata":{"version":"2.1","n":3,"f":1.5,"on":"yes","list":["a",1,true,null]}})
        );
        // A byte-order mark, CRLF line ends and a closing line with trailing blanks.
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---  \r\nbody";
        assert_eq!(
            Value::Object(parse_frontmatter(crlf).unwrap()),
            json!({"name":"a","description":"b"})
        );
        assert_eq!(frontmatter_block("---\n---\nbody"), Some(""));
        assert_eq!(
            split_frontmatter("---\na: 1\n---\n\nbody\n"),
            Some(("a: 1", "\nbody\n"))
        );
    }

    #[test]
    fn broken_frontmatter_is_refused_with_its_reason() {
        assert_eq!(
            parse_frontmatter("# no block\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(
            parse_frontmatter("---\nname: a\n"),
            Err(FrontmatterError::Missing)
        );
        assert_eq!(fm("- a\n- b"), Err(FrontmatterError::NotAMapping));
        assert_eq!(
            fm("name: a"),
            Err(FrontmatterError::MissingField("description"))
        );
        assert_eq!(
            fm("name: ''\ndescription: d"),
            Err(FrontmatterError::MissingField("name"))
        );
        assert_eq!(
            fm("name: 3\ndescription: d"),
            Err(FrontmatterError::MissingField("name"))
        );
        assert!(matches!(
            fm("name: [a\ndescription: d"),
            Err(FrontmatterError::Yaml(_))
        ));
    }

    #[test]
    fn aliases_expand_within_the_node_budget_and_a_bomb_is_refused() {
        let map = fm("name: a\ndescription: d\nbase: &b {x: 1}\ncopy: *b").unwrap();
        assert_eq!(map["copy"], json!({"x":1}));
        let mut bomb =
            String::from("name: a\ndescription: d\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let p = i - 1;
            bomb.push_str(&format!("l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"));
        }
        assert_eq!(fm(&bomb), Err(FrontmatterError::TooLarge));
        let deep = format!(
            "name: a\ndescription: d\nx: {}{}",
            "[".repeat(300),
            "]".repeat(300)
        );
        assert!(matches!(fm(&deep), Err(FrontmatterError::Yaml(_))));
    }

    #[test]
    fn differences_name_each_field_and_compare_numbers_by_value() {
        let a = json!({"name":"a","description":"d","n":2,"x":null});
        let b = json!({"name":"a","description":"e","n":2.0,"extra":1});
        let (Value::Object(a), Value::Object(b)) = (a, b) else {
            unreachable!()
        };
        assert_eq!(
            frontmatter_differences(&a, &b),
            vec!["description", "extra"]
        );
        assert!(frontmatter_differences(&a, &a).is_empty());
    }
}
