//! Every request's `params` checked against the spec's schema, member by member, before a
//! handler sees them ([schema 2025-11-25](https://modelcontextprotocol.io/specification/2025-11-25/schema),
//! [2026-07-28](https://modelcontextprotocol.io/specification/2026-07-28/schema)).
//!
//! One table per method names each member, its type and whether it is required; a request that
//! breaks it is answered `-32602` with a message naming the member (`"clientInfo.name" must be
//! a string`, `missing "uri"`) — never with the offending value, which may be of any size or
//! type. Members the table does not name are left alone (the schema allows extra members, and
//! `_meta` carries keys of other revisions and extensions). An optional member sent as `null`
//! counts as absent, as most SDKs read it.
//!
//! Both directions use it: the server checks client→server requests ([`check_request`]), the
//! client checks server→client requests ([`check_server_request`]).

use serde_json::{Map, Value};

use crate::wire::jsonrpc::ErrorObject;

/// A member's type in the schema.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Str,
    Int,
    Num,
    Bool,
    Obj,
    Arr,
    /// An array of strings (`subscriptions/listen` `resourceSubscriptions`).
    StrArr,
    /// `string | integer` (`RequestId`, `ProgressToken`).
    Id,
    /// An object whose values are all strings (`prompts/get` `arguments`).
    StrMap,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An object with these members.
    Shape(&'static [Member]),
    /// An array of objects with these members.
    ArrOf(&'static [Member]),
    /// An object or an array of objects (sampling message `content`).
    ObjOrArr,
    /// The `completion/complete` `ref`: `ref/prompt` with `name`, or `ref/resource` with `uri`.
    CompletionRef,
}

/// One member of an object in the schema.
#[derive(Clone, Copy, Debug)]
struct Member {
    name: &'static str,
    ty: Ty,
    required: bool,
}

const fn req(name: &'static str, ty: Ty) -> Member {
    Member {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: Ty) -> Member {
    Member {
        name,
        ty,
        required: false,
    }
}

const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// `_meta` of any request: `progressToken` is `string | integer`.
const META: Member = opt("_meta", Ty::Shape(&[opt("progressToken", Ty::Id)]));
/// The 2026-07-28 retry members of a request that may ask for input (multi round-trip).
const INPUT_RESPONSES: Member = opt("inputResponses", Ty::Obj);
const REQUEST_STATE: Member = opt("requestState", Ty::Str);

const IMPLEMENTATION: &[Member] = &[
    req("name", Ty::Str),
    req("version", Ty::Str),
    opt("title", Ty::Str),
    opt("description", Ty::Str),
    opt("websiteUrl", Ty::Str),
    opt("icons", Ty::Arr),
];

const CLIENT_CAPABILITIES: &[Member] = &[
    opt("experimental", Ty::Obj),
    opt("roots", Ty::Shape(&[opt("listChanged", Ty::Bool)])),
    opt("sampling", Ty::Obj),
    opt("elicitation", Ty::Obj),
    opt("tasks", Ty::Obj),
    opt("extensions", Ty::Obj),
];

const INITIALIZE: &[Member] = &[
    META,
    req("protocolVersion", Ty::Str),
    req("capabilities", Ty::Shape(CLIENT_CAPABILITIES)),
    req("clientInfo", Ty::Shape(IMPLEMENTATION)),
];
const ONLY_META: &[Member] = &[META];
const PAGED: &[Member] = &[META, opt("cursor", Ty::Str)];
const TOOLS_CALL: &[Member] = &[
    META,
    req("name", Ty::Str),
    opt("arguments", Ty::Obj),
    // `TaskMetadata`: `ttl` is a number of milliseconds (the server may pick another).
    opt("task", Ty::Shape(&[opt("ttl", Ty::Num)])),
    INPUT_RESPONSES,
    REQUEST_STATE,
];
const RESOURCES_READ: &[Member] = &[META, req("uri", Ty::Str), INPUT_RESPONSES, REQUEST_STATE];
const BY_URI: &[Member] = &[META, req("uri", Ty::Str)];
/// `resources/directory/read` (the Skills extension): a directory URI, paginated.
const DIRECTORY_READ: &[Member] = &[META, req("uri", Ty::Str), opt("cursor", Ty::Str)];
const PROMPTS_GET: &[Member] = &[
    META,
    req("name", Ty::Str),
    opt("arguments", Ty::StrMap),
    INPUT_RESPONSES,
    REQUEST_STATE,
];
const COMPLETE: &[Member] = &[
    META,
    req("ref", Ty::CompletionRef),
    req(
        "argument",
        Ty::Shape(&[req("name", Ty::Str), req("value", Ty::Str)]),
    ),
    opt("context", Ty::Shape(&[opt("arguments", Ty::StrMap)])),
];
const SET_LEVEL: &[Member] = &[META, req("level", Ty::Enum(LEVELS))];
/// `subscriptions/listen` (2026-07-28): its `SubscriptionFilter`, every member optional.
const LISTEN: &[Member] = &[
    META,
    opt(
        "notifications",
        Ty::Shape(&[
            opt("toolsListChanged", Ty::Bool),
            opt("promptsListChanged", Ty::Bool),
            opt("resourcesListChanged", Ty::Bool),
            opt("resourceSubscriptions", Ty::StrArr),
        ]),
    ),
];

const SAMPLING_MESSAGE: &[Member] = &[
    req("role", Ty::Enum(&["user", "assistant"])),
    req("content", Ty::ObjOrArr),
];
const CREATE_MESSAGE: &[Member] = &[
    META,
    req("messages", Ty::ArrOf(SAMPLING_MESSAGE)),
    req("maxTokens", Ty::Int),
    opt("systemPrompt", Ty::Str),
    opt(
        "includeContext",
        Ty::Enum(&["none", "thisServer", "allServers"]),
    ),
    opt("temperature", Ty::Num),
    opt("stopSequences", Ty::Arr),
    opt("modelPreferences", Ty::Obj),
    opt("metadata", Ty::Obj),
    opt("tools", Ty::Arr),
    opt("toolChoice", Ty::Obj),
];
const ELICIT: &[Member] = &[
    META,
    req("message", Ty::Str),
    opt("mode", Ty::Enum(&["form", "url"])),
    opt("requestedSchema", Ty::Obj),
    opt("url", Ty::Str),
    opt("elicitationId", Ty::Str),
];

/// The table of a client→server request method, `None` for a method with no table.
fn client_request(method: &str) -> Option<&'static [Member]> {
    Some(match method {
        "initialize" => INITIALIZE,
        "ping" | "server/discover" => ONLY_META,
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => PAGED,
        "tools/call" => TOOLS_CALL,
        "resources/read" => RESOURCES_READ,
        "resources/subscribe" | "resources/unsubscribe" | "skills/get" => BY_URI,
        "skills/list" => PAGED,
        "resources/directory/read" => DIRECTORY_READ,
        "prompts/get" => PROMPTS_GET,
        "completion/complete" => COMPLETE,
        "logging/setLevel" => SET_LEVEL,
        "subscriptions/listen" => LISTEN,
        _ => return None,
    })
}

/// Check a client→server request's `params` against its method's schema.
///
/// # Errors
/// `-32602` naming the first member that is missing or of the wrong type.
pub(crate) fn check_request(
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Result<(), ErrorObject> {
    client_request(method).map_or(Ok(()), |members| check(members, params))
}

/// Check a server→client request's `params` (`sampling/createMessage`, `elicitation/create`,
/// `roots/list`, `ping`) against its method's schema; elicitation's two modes included (form:
/// `requestedSchema` required; url: `url` and `elicitationId` required).
///
/// # Errors
/// `-32602` naming the first member that is missing or of the wrong type.
pub(crate) fn check_server_request(method: &str, params: &Value) -> Result<(), ErrorObject> {
    let params = match params {
        Value::Null => None,
        Value::Object(map) => Some(map),
        _ => return Err(ErrorObject::invalid_params(r#""params" must be an object"#)),
    };
    match method {
        "sampling/createMessage" => check(CREATE_MESSAGE, params),
        "elicitation/create" => {
            check(ELICIT, params)?;
            let map = params.expect("message is required, so params are present");
            if map.get("mode").and_then(Value::as_str) == Some("url") {
                for member in ["url", "elicitationId"] {
                    if absent(map.get(member)) {
                        return Err(missing(member));
                    }
                }
                Ok(())
            } else if absent(map.get("requestedSchema")) {
                Err(missing("requestedSchema"))
            } else {
                Ok(())
            }
        }
        "roots/list" | "ping" => check(ONLY_META, params),
        _ => Ok(()),
    }
}

fn absent(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

fn missing(path: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("missing \"{path}\""))
}

fn check(members: &[Member], params: Option<&Map<String, Value>>) -> Result<(), ErrorObject> {
    let empty = Map::new();
    check_members(members, params.unwrap_or(&empty), Path::Root)
}

/// Where a member sits (`clientInfo.name`, `messages[0].role`), rendered only for an error, so
/// a valid request costs no allocation.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Member(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Member(Path::Root, name) => f.write_str(&printable(name)),
            Path::Member(parent, name) => write!(f, "{parent}.{}", printable(name)),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

fn check_members(
    members: &[Member],
    object: &Map<String, Value>,
    at: Path<'_>,
) -> Result<(), ErrorObject> {
    if fits(members, object, at) {
        return Ok(());
    }
    // Something is wrong: find the first member, in the schema's order, that says what.
    for member in members {
        let path = Path::Member(&at, member.name);
        match object.get(member.name) {
            None | Some(Value::Null) if member.required => return Err(missing(&path.to_string())),
            None | Some(Value::Null) => {}
            Some(value) => check_value(member.ty, value, path)?,
        }
    }
    Ok(())
}

/// Whether `object` fits `members`, read in one pass over its own members (each looked up in the
/// schema's short list by name, not hashed into the object once per schema member).
fn fits(members: &[Member], object: &Map<String, Value>, at: Path<'_>) -> bool {
    let mut required = members.iter().filter(|m| m.required).count();
    for (name, value) in object {
        let Some(member) = members.iter().find(|m| m.name == name) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        if check_value(member.ty, value, Path::Member(&at, member.name)).is_err() {
            return false;
        }
        required -= usize::from(member.required);
    }
    required == 0
}

fn check_value(ty: Ty, value: &Value, path: Path<'_>) -> Result<(), ErrorObject> {
    let wrong = |what: &str| {
        Err(ErrorObject::invalid_params(format!(
            "\"{path}\" must be {what}"
        )))
    };
    match ty {
        Ty::Str if !value.is_string() => wrong("a string"),
        Ty::Int if !(value.is_i64() || value.is_u64()) => wrong("an integer"),
        Ty::Num if !value.is_number() => wrong("a number"),
        Ty::Bool if !value.is_boolean() => wrong("a boolean"),
        Ty::Obj if !value.is_object() => wrong("an object"),
        Ty::Arr if !value.is_array() => wrong("an array"),
        Ty::StrArr => match value.as_array() {
            None => wrong("an array of strings"),
            Some(items) => match items.iter().position(|v| !v.is_string()) {
                Some(i) => Err(ErrorObject::invalid_params(format!(
                    "\"{}\" must be a string",
                    Path::Index(&path, i)
                ))),
                None => Ok(()),
            },
        },
        Ty::Id if !(value.is_string() || value.is_i64() || value.is_u64()) => {
            wrong("a string or an integer (of at most 64 bits)")
        }
        Ty::StrMap => match value.as_object() {
            None => wrong("an object of strings"),
            Some(map) => match map.iter().find(|(_, v)| !v.is_string()) {
                Some((key, _)) => Err(ErrorObject::invalid_params(format!(
                    "\"{}\" must be a string",
                    Path::Member(&path, key)
                ))),
                None => Ok(()),
            },
        },
        Ty::Enum(names) => match value.as_str() {
            Some(name) if names.contains(&name) => Ok(()),
            _ => wrong(&format!("one of {}", names.join(", "))),
        },
        Ty::Shape(members) => match value.as_object() {
            Some(object) => check_members(members, object, path),
            None => wrong("an object"),
        },
        Ty::ArrOf(members) => match value.as_array() {
            Some(items) => items.iter().enumerate().try_for_each(|(i, item)| {
                let at = Path::Index(&path, i);
                match item.as_object() {
                    Some(object) => check_members(members, object, at),
                    None => Err(ErrorObject::invalid_params(format!(
                        "\"{at}\" must be an object"
                    ))),
                }
            }),
            None => wrong("an array"),
        },
        Ty::ObjOrArr if !(value.is_object() || value.is_array()) => wrong("an object or an array"),
        Ty::CompletionRef => {
            let Some(object) = value.as_object() else {
                return wrong("an object");
            };
            match object.get("type").and_then(Value::as_str) {
                Some("ref/prompt") => check_members(&[req("name", Ty::Str)], object, path),
                Some("ref/resource") => check_members(&[req("uri", Ty::Str)], object, path),
                _ => Err(ErrorObject::invalid_params(format!(
                    "\"{path}.type\" must be ref/prompt or ref/resource"
                ))),
            }
        }
        _ => Ok(()),
    }
}

/// Text from the peer (a member name, a header value), cut to 64 characters and stripped of
/// control characters for an error message.
pub(crate) fn printable(key: &str) -> String {
    let mut out: String = key.chars().filter(|c| !c.is_control()).take(64).collect();
    if key.chars().count() > 64 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The error's message without the "Invalid params: " every -32602 starts with.
    fn message(e: ErrorObject) -> String {
        assert_eq!(e.code.0, -32602);
        e.message
            .strip_prefix("Invalid params: ")
            .unwrap_or(&e.message)
            .to_owned()
    }

    fn request(method: &str, params: Value) -> Result<(), String> {
        check_request(method, params.as_object()).map_err(message)
    }

    #[test]
    fn levels_match_the_log_level_names() {
        assert!(LEVELS
            .iter()
            .all(|l| crate::protocol::LogLevel::from_name(l).is_some()));
        assert_eq!(LEVELS.len(), 8);
    }

    #[test]
    fn initialize_needs_its_members_with_their_types() {
        let ok = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        assert_eq!(request("initialize", ok.clone()), Ok(()));
        for (member, message) in [
            ("protocolVersion", r#"missing "protocolVersion""#),
            ("capabilities", r#"missing "capabilities""#),
            ("clientInfo", r#"missing "clientInfo""#),
        ] {
            let mut p = ok.clone();
            p.as_object_mut().unwrap().remove(member);
            assert_eq!(request("initialize", p), Err(message.into()));
        }
        let mut p = ok.clone();
        p["clientInfo"]["version"] = json!(2);
        assert_eq!(
            request("initialize", p),
            Err(r#""clientInfo.version" must be a string"#.into())
        );
        let mut p = ok.clone();
        p["capabilities"]["roots"] = json!({"listChanged": "yes"});
        assert_eq!(
            request("initialize", p),
            Err(r#""capabilities.roots.listChanged" must be a boolean"#.into())
        );
        let mut p = ok;
        p["_meta"] = json!({"progressToken": {"evil": true}});
        assert_eq!(
            request("initialize", p),
            Err(
                r#""_meta.progressToken" must be a string or an integer (of at most 64 bits)"#
                    .into()
            )
        );
    }

    #[test]
    fn each_method_names_the_member_it_refuses_and_never_echoes_the_value() {
        let huge = "x".repeat(10_000);
        for (method, params, message) in [
            (
                "tools/list",
                json!({"cursor": 7}),
                r#""cursor" must be a string"#,
            ),
            ("tools/call", json!({}), r#"missing "name""#),
            (
                "tools/call",
                json!({"name": "t", "arguments": [huge]}),
                r#""arguments" must be an object"#,
            ),
            (
                "tools/call",
                json!({"name": "t", "requestState": 1}),
                r#""requestState" must be a string"#,
            ),
            (
                "tools/call",
                json!({"name": "t", "task": {"ttl": huge}}),
                r#""task.ttl" must be a number"#,
            ),
            (
                "tools/call",
                json!({"name": "t", "task": "yes"}),
                r#""task" must be an object"#,
            ),
            (
                "resources/read",
                json!({"uri": {"a": huge}}),
                r#""uri" must be a string"#,
            ),
            ("resources/subscribe", json!({}), r#"missing "uri""#),
            (
                "prompts/get",
                json!({"name": "p", "arguments": {"k": 1}}),
                r#""arguments.k" must be a string"#,
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/x"}, "argument": {"name": "a", "value": "v"}}),
                r#""ref.type" must be ref/prompt or ref/resource"#,
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": "v"}}),
                r#"missing "ref.name""#,
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "u"}, "argument": {"name": "a"}}),
                r#"missing "argument.value""#,
            ),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}, "context": {"arguments": []}}),
                r#""context.arguments" must be an object of strings"#,
            ),
            (
                "logging/setLevel",
                json!({"level": huge}),
                r#""level" must be one of debug, info, notice, warning, error, critical, alert, emergency"#,
            ),
            ("ping", json!({"_meta": 5}), r#""_meta" must be an object"#),
            (
                "subscriptions/listen",
                json!({"notifications": 5}),
                r#""notifications" must be an object"#,
            ),
            (
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": "yes"}}),
                r#""notifications.toolsListChanged" must be a boolean"#,
            ),
            (
                "subscriptions/listen",
                json!({"notifications": {"resourceSubscriptions": "file:///a"}}),
                r#""notifications.resourceSubscriptions" must be an array of strings"#,
            ),
            (
                "subscriptions/listen",
                json!({"notifications": {"resourceSubscriptions": ["file:///a", {"x": huge}]}}),
                r#""notifications.resourceSubscriptions[1]" must be a string"#,
            ),
        ] {
            let got = request(method, params).unwrap_err();
            assert_eq!(got, message, "{method}");
            assert!(
                got.len() < 200,
                "{method}: the message must not carry the value"
            );
        }
    }

    #[test]
    fn valid_params_null_optionals_and_unknown_members_pass() {
        for (method, params) in [
            ("tools/list", json!({})),
            ("tools/list", json!({"cursor": null})),
            (
                "tools/call",
                json!({"name": "t", "arguments": null, "x-extra": [1]}),
            ),
            (
                "tools/call",
                json!({"name": "t", "_meta": {"progressToken": 3, "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            ),
            ("prompts/get", json!({"name": "p", "arguments": {"a": "1"}})),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "file:///{x}"}, "argument": {"name": "x", "value": ""}, "context": {"arguments": {"y": "1"}}}),
            ),
            ("logging/setLevel", json!({"level": "warning"})),
            ("subscriptions/listen", json!({})),
            (
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///a"], "x-future": 1}}),
            ),
            ("some/extension", json!({"anything": 1})),
        ] {
            assert_eq!(request(method, params), Ok(()), "{method}");
        }
        assert!(check_request("ping", None).is_ok());
        assert!(check_request("tools/call", None).is_err());
    }

    #[test]
    fn a_key_from_the_peer_is_cut_and_stripped_in_messages() {
        let key = format!("\u{1b}[31m{}", "k".repeat(500));
        let params = json!({"name": "p", "arguments": {key: 1}});
        let message = request("prompts/get", params).unwrap_err();
        assert!(!message.contains('\u{1b}'));
        assert!(message.len() < 120, "{message}");
    }

    #[test]
    fn server_requests_are_checked_in_both_elicitation_modes() {
        let server =
            |method: &str, params: Value| check_server_request(method, &params).map_err(message);
        assert_eq!(
            server(
                "sampling/createMessage",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10})
            ),
            Ok(())
        );
        assert_eq!(
            server(
                "sampling/createMessage",
                json!({"messages": [{"role": "system", "content": {}}], "maxTokens": 10})
            ),
            Err(r#""messages[0].role" must be one of user, assistant"#.into())
        );
        assert_eq!(
            server(
                "sampling/createMessage",
                json!({"messages": [], "maxTokens": 1.5})
            ),
            Err(r#""maxTokens" must be an integer"#.into())
        );
        assert_eq!(
            server(
                "elicitation/create",
                json!({"message": "m", "requestedSchema": {"type": "object"}})
            ),
            Ok(())
        );
        assert_eq!(
            server("elicitation/create", json!({"message": "m"})),
            Err(r#"missing "requestedSchema""#.into())
        );
        assert_eq!(
            server(
                "elicitation/create",
                json!({"message": "m", "mode": "url", "url": "https://x"})
            ),
            Err(r#"missing "elicitationId""#.into())
        );
        assert_eq!(
            server("elicitation/create", json!({"mode": "url"})),
            Err(r#"missing "message""#.into())
        );
        assert_eq!(server("roots/list", Value::Null), Ok(()));
        assert_eq!(
            server("roots/list", json!([1])),
            Err(r#""params" must be an object"#.into())
        );
    }
}
