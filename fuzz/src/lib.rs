//! Shared pieces of the fuzz targets: one server with a few tools, a resource and a prompt, and
//! the JSON-RPC oracle (what answer a message deserves, read from the raw JSON with no help from
//! the library) that the targets check the library's answers against.

use orkestrel_mcp::primitives::prompts::{GetPromptResult, Prompt, PromptMessage, Role};
use orkestrel_mcp::primitives::resources::Resource;
use orkestrel_mcp::protocol::Content;
use orkestrel_mcp::server::Completion;
use orkestrel_mcp::{McpServer, ServerOptions, Tool};
use serde_json::{json, Map, Value};

/// A server with tools (`echo`, `add`, `fail`, `progress`, `ask`), a text resource, a prompt,
/// logging, a completer and pages of two items (so cursors are exercised).
pub fn server() -> McpServer {
    let options = ServerOptions::new("fuzz", "1")
        .with_logging()
        .with_page_size(2)
        .with_instructions("fuzzing")
        .with_completer(|_params, _ctx| async {
            Ok(Completion {
                values: vec!["a".into(), "b".into()],
                total: Some(2),
                has_more: Some(false),
            })
        });
    let server = McpServer::new(options);
    let object = json!({ "type": "object" });
    server.tools().add(
        Tool::from_json(
            "echo",
            object.clone(),
            |args: Map<String, Value>, _ctx| async move {
                Ok::<_, String>(match args.get("text") {
                    Some(Value::String(s)) => s.clone(),
                    other => serde_json::to_string(&other).unwrap_or_default(),
                })
            },
        )
        .with_description("echoes `text`"),
    );
    server.tools().add(Tool::from_json(
        "add",
        object.clone(),
        |args: Map<String, Value>, _ctx| async move {
            let x = args.get("x").and_then(Value::as_f64).unwrap_or(0.0);
            let y = args.get("y").and_then(Value::as_f64).unwrap_or(0.0);
            Ok::<_, String>(orkestrel_mcp::Json(json!({ "sum": x + y })))
        },
    ));
    server.tools().add(Tool::from_json(
        "fail",
        object.clone(),
        |_args: Map<String, Value>, _ctx| async move { Err::<String, _>("boom") },
    ));
    server.tools().add(Tool::from_json(
        "progress",
        object.clone(),
        |_args: Map<String, Value>, ctx: orkestrel_mcp::RequestContext| async move {
            ctx.progress(0.5, Some(1.0), Some("half"));
            ctx.log(
                orkestrel_mcp::server::context::LogLevel::Info,
                Some("fuzz"),
                json!("working"),
            );
            Ok::<_, String>("done")
        },
    ));
    // Asks the client (a server→client request on the handshake wire, an input-required round
    // on the modern one).
    server.tools().add(Tool::from_json(
        "ask",
        object,
        |_args: Map<String, Value>, ctx: orkestrel_mcp::RequestContext| async move {
            let answer = ctx
                .input(
                    "q",
                    "elicitation/create",
                    json!({ "message": "name?", "requestedSchema": { "type": "object", "properties": {} } }),
                )
                .await
                .map_err(|e| e.message)?;
            Ok::<_, String>(answer.to_string())
        },
    ));
    server
        .resources()
        .add(Resource::text("mem://a", "a", "text/plain", "alpha"));
    server
        .resources()
        .add(Resource::text("mem://b", "b", "text/plain", "beta"));
    server.prompts().add(
        Prompt::new("greet", |args: Map<String, Value>, _ctx| async move {
            let who = args.get("who").and_then(Value::as_str).unwrap_or("you");
            Ok(GetPromptResult {
                description: None,
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::text(format!("hello {who}")),
                }],
            })
        })
        .with_argument("who", "whom to greet", false),
    );
    server
}

/// The answer a message deserves, by JSON-RPC 2.0 alone.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// No answer: a notification (even a broken one), or a valid response.
    Nothing,
    /// Exactly one answer carrying this id (`null` when none can be read); `parse` when the
    /// text is not JSON (the error is then `-32700`).
    Reply { id: Value, parse: bool },
}

/// A readable request id, judged on the parsed value alone: a string, or an integer that
/// fits `i64` or `u64`. Integers beyond them and `-0` are readable too, but only their raw text
/// says so: use [`raw_id`] where the bytes are at hand.
pub fn readable_id(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Number(n) => n.as_i64().is_some() || n.as_u64().is_some(),
        _ => false,
    }
}

/// Whether `text` is a JSON integer literal (`-?(0|[1-9][0-9]*)`, any length).
pub fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

/// The raw text of a top-level object's `id` member (the last one, as a parser keeps it), when
/// `bytes` is a JSON object that has one.
pub fn raw_id(bytes: &[u8]) -> Option<String> {
    let map: std::collections::BTreeMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_slice(bytes).ok()?;
    map.get("id").map(|raw| raw.get().trim().to_owned())
}

/// The id JSON-RPC readers must echo for `bytes`: a string, or any integer (its text parsed,
/// so it compares equal to an exact echo); `None` when there is no readable id.
pub fn readable_raw_id(bytes: &[u8], id: &Value) -> bool {
    readable_id(id)
        || (id.is_number() && raw_id(bytes).is_some_and(|text| is_integer_literal(&text)))
}

/// A valid response object (`jsonrpc` `"2.0"`, exactly one of `result` or a valid `error`).
fn valid_response(map: &Map<String, Value>) -> bool {
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return false;
    }
    match (map.get("result"), map.get("error")) {
        (Some(_), None) => true,
        (None, Some(Value::Object(e))) => {
            e.get("code")
                .and_then(Value::as_i64)
                .is_some_and(|c| i32::try_from(c).is_ok())
                && e.get("message").is_some_and(Value::is_string)
        }
        _ => false,
    }
}

/// What `bytes` (one message) deserves.
pub fn expect(bytes: &[u8]) -> Expect {
    // A leading UTF-8 byte order mark is ignored (RFC 8259 §8.1 lets a parser do so).
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(value) = parse(bytes) else {
        return beyond_limits(bytes)
            .or_else(|| leading_request(bytes))
            .unwrap_or(Expect::Reply {
                id: Value::Null,
                parse: true,
            });
    };
    let null = Expect::Reply {
        id: Value::Null,
        parse: false,
    };
    let Value::Object(map) = value else {
        return null;
    };
    let has_method = map.contains_key("method");
    // A notification, unless it is no JSON-RPC message at all (no or another `jsonrpc`, a
    // `method` that is not a string): that is an invalid request, answered with id null.
    let envelope = map.get("jsonrpc") == Some(&Value::String("2.0".into()))
        && map.get("method").is_some_and(Value::is_string);
    match map.get("id") {
        None if has_method && envelope => Expect::Nothing,
        None => null,
        Some(id) if has_method => Expect::Reply {
            id: if readable_raw_id(bytes, id) {
                id.clone()
            } else {
                Value::Null
            },
            parse: false,
        },
        // A response: answered only when it is broken.
        Some(id) if readable_raw_id(bytes, id) || id.is_null() => {
            if valid_response(&map) {
                Expect::Nothing
            } else {
                Expect::Reply {
                    id: id.clone(),
                    parse: false,
                }
            }
        }
        Some(_) => null,
    }
}

/// Text that is not JSON as a whole but starts with a whole request (`{…} x`, two messages on
/// one line): `-32700` with that request's id (when readable), so it is not left waiting.
/// `None` when the text does not start with one.
fn leading_request(bytes: &[u8]) -> Option<Expect> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    values.next()?.ok()?;
    let first = bytes.get(..values.byte_offset())?;
    let Ok(Value::Object(map)) = parse(first) else {
        return None;
    };
    let id = map.get("id")?;
    (map.contains_key("method") && readable_raw_id(first, id)).then(|| Expect::Reply {
        id: id.clone(),
        parse: true,
    })
}

/// What an object that is valid JSON but beyond a parser limit (nesting, a number's range, a
/// lone surrogate) deserves, read from its top-level members' raw text: nothing for a
/// notification, the id when it is readable, else `null`. `None` when `bytes` is not such an
/// object (then it is not JSON, or not an object: `-32700`).
fn beyond_limits(bytes: &[u8]) -> Option<Expect> {
    type Members = std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>;
    // A lone surrogate in a member's name stops a `String` key: read the names with every
    // surrogate escape replaced (an id holding one is then not readable).
    let (map, replaced): (Members, bool) = match serde_json::from_slice(bytes) {
        Ok(map) => (map, false),
        Err(_) => (
            serde_json::from_slice(&without_surrogate_escapes(bytes)).ok()?,
            true,
        ),
    };
    let id = map.get("id").map(|raw| raw.get().trim());
    let readable = |text: &str| {
        is_integer_literal(text)
            || (text.starts_with('"') && serde_json::from_str::<String>(text).is_ok())
    };
    Some(match id {
        None if map.contains_key("method") => Expect::Nothing,
        Some(text) if readable(text) && !(replaced && text.contains(SURROGATE_STANDIN)) => {
            Expect::Reply {
                id: parse(text.as_bytes()).ok()?,
                parse: false,
            }
        }
        _ => Expect::Reply {
            id: Value::Null,
            parse: false,
        },
    })
}

/// What [`without_surrogate_escapes`] writes for a surrogate escape (a noncharacter).
const SURROGATE_STANDIN: &str = "\\ufdd0";

/// `bytes` with every `\uD800`–`\uDFFF` escape replaced by [`SURROGATE_STANDIN`].
fn without_surrogate_escapes(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'u');
        let hex = bytes
            .get(i + 2..i + 6)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u16::from_str_radix(h, 16).ok()) {
            Some(unit) if escape && (0xD800..=0xDFFF).contains(&unit) => {
                out.extend_from_slice(SURROGATE_STANDIN.as_bytes());
                i += 6;
            }
            _ if bytes[i] == b'\\' && i + 1 < bytes.len() => {
                // Any other escape is copied whole, so `\\u` stays a backslash then `u`.
                out.extend_from_slice(&bytes[i..i + 2]);
                i += 2;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}

/// Check one answer (JSON text) against what was expected; panics with the details otherwise.
pub fn check(input: &[u8], expected: &Expect, answer: Option<&str>) {
    match (expected, answer) {
        (Expect::Nothing, None) => {}
        (Expect::Nothing, Some(a)) => panic!(
            "answered a message that deserves none\n  input: {}\n  answer: {a}",
            String::from_utf8_lossy(input)
        ),
        (Expect::Reply { .. }, None) => panic!(
            "no answer to a message that deserves one\n  input: {}",
            String::from_utf8_lossy(input)
        ),
        (Expect::Reply { id, parse }, Some(a)) => {
            let reply: Value = crate::parse(a.as_bytes()).unwrap_or_else(|e| {
                panic!(
                    "the answer is not JSON ({e})\n  input: {}\n  answer: {a}",
                    String::from_utf8_lossy(input)
                )
            });
            check_reply(input, &reply, a);
            assert_eq!(
                reply.get("id"),
                Some(id),
                "the answer's id differs\n  input: {}\n  answer: {a}",
                String::from_utf8_lossy(input)
            );
            if *parse {
                assert_eq!(
                    reply["error"]["code"],
                    json!(-32700),
                    "text that is not JSON is not -32700\n  input: {}\n  answer: {a}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}

/// A well-formed JSON-RPC response object (panics otherwise).
pub fn check_reply(input: &[u8], reply: &Value, text: &str) {
    let ok = match reply {
        Value::Object(map) => {
            map.contains_key("id") && valid_response(map) && {
                let extra = map
                    .keys()
                    .filter(|k| !matches!(k.as_str(), "jsonrpc" | "id" | "result" | "error"))
                    .count();
                extra == 0
            }
        }
        _ => false,
    };
    assert!(
        ok,
        "the answer is not a well-formed JSON-RPC response\n  input: {}\n  answer: {text}",
        String::from_utf8_lossy(input)
    );
}

/// `true` when `value` holds a floating-point number anywhere (serde_json without
/// `float_roundtrip` may read a printed float back one ULP away: no exact round trip then).
pub fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

/// The HTTP requests an input describes: requests separated by a NUL byte, each
/// `METHOD PATH\n` then `name: value` lines, a blank line, and the body (the rest). A header
/// line without `:` is a field whose value is not text (`None`); the value `$SID` stands for the
/// session id the last answer assigned (the target substitutes it). At most 4 requests.
pub fn http_requests(data: &[u8]) -> Vec<orkestrel_mcp::http::HttpRequest> {
    data.split(|&b| b == 0)
        .take(4)
        .map(|part| {
            let (head, body) = match find(part, b"\n\n") {
                Some(i) => (&part[..i], &part[i + 2..]),
                None => (part, &b""[..]),
            };
            let head = String::from_utf8_lossy(head);
            let mut lines = head.split('\n');
            let first = lines.next().unwrap_or_default();
            let (method, path) = first.split_once(' ').unwrap_or((first, "/mcp"));
            let mut request = orkestrel_mcp::http::HttpRequest::new(method, path).body(body);
            for line in lines {
                match line.split_once(':') {
                    Some((name, value)) => request
                        .headers
                        .push((name.to_owned(), Some(value.trim_start().to_owned()))),
                    None => request.headers.push((line.to_owned(), None)),
                }
            }
            request
        })
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Take `conn` through the handshake every client does first (`initialize`, then
/// `notifications/initialized`), so the fuzzer's messages reach what an initialized connection
/// does.
pub fn handshake(conn: &mut orkestrel_mcp::server::connection::Connection) {
    handshake_at(conn, "2025-11-25");
}

/// [`handshake`] at protocol `version` (2025-03-26: the connection receives JSON-RPC batches).
pub fn handshake_at(conn: &mut orkestrel_mcp::server::connection::Connection, version: &str) {
    use orkestrel_mcp::server::connection::Received;
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{"sampling":{{}},"elicitation":{{}},"roots":{{}}}},"clientInfo":{{"name":"fuzz","version":"0"}}}}}}"#
    );
    let done = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    for message in [init.as_bytes(), &done[..]] {
        if let Received::Dispatch(call) = conn.receive(message) {
            futures::executor::block_on(call);
        }
    }
}

/// What [`parse`] makes of an integer literal of more than 20 digits: a string with this prefix
/// and the literal's exact text (serde_json reads such a number as an approximate `f64`, or
/// refuses it beyond `f64`'s range, while JSON-RPC ids of any length must be echoed exactly).
pub const LONG_INTEGER: &str = "#int:";

/// Whether `frame` is an `initialize` naming protocol `version`: a connection takes one
/// `initialize` (a repeat after a result is refused), and the one it accepts sets the revision
/// it speaks (at 2025-03-26, JSON-RPC batches are received from then on).
pub fn initializes_at(frame: &[u8], version: &str) -> bool {
    let Ok(Value::Object(map)) = parse(frame) else {
        return false;
    };
    map.get("method").and_then(Value::as_str) == Some("initialize")
        && map
            .get("params")
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            == Some(version)
}

/// Parse JSON text as the oracles compare it: like `serde_json::from_slice`, except that each
/// integer literal of more than 20 digits outside strings becomes the string
/// [`LONG_INTEGER`]`<literal>`, so an id beyond every native integer compares by its exact text.
pub fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(&long_integers_as_strings(bytes))
}

/// `bytes` with each long integer literal standing where a value may (the document's top, after
/// `:`, after `[`, after `,` inside an array) rewritten as a [`LONG_INTEGER`] string. A literal
/// anywhere else (a member name's place, say) is left alone, so text that is not JSON stays text
/// that is not JSON.
fn long_integers_as_strings(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut in_string, mut escaped) = (0, false, false);
    // The open containers (`{` or `[`) and the last byte outside strings and whitespace.
    let mut open: Vec<u8> = Vec::new();
    let mut last: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    last = Some(b'"');
                }
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let value_place = match last {
                None => open.is_empty(),
                Some(b':' | b'[') => true,
                Some(b',') => open.last() == Some(&b'['),
                Some(_) => false,
            };
            let end = bytes[i..]
                .iter()
                .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .map_or(bytes.len(), |n| i + n);
            let token = &bytes[i..end];
            let text = std::str::from_utf8(token).unwrap_or("");
            let digits = token.iter().filter(|c| c.is_ascii_digit()).count();
            if value_place && digits > 20 && is_integer_literal(text) {
                let o = out.get_or_insert_with(|| bytes[..i].to_vec());
                o.extend_from_slice(b"\"");
                o.extend_from_slice(LONG_INTEGER.as_bytes());
                o.extend_from_slice(token);
                o.push(b'"');
            } else if let Some(o) = &mut out {
                o.extend_from_slice(token);
            }
            last = token.last().copied();
            i = end;
            continue;
        } else if !b.is_ascii_whitespace() {
            match b {
                b'{' | b'[' => open.push(b),
                b'}' | b']' => {
                    open.pop();
                }
                _ => {}
            }
            last = Some(b);
        }
        if let Some(o) = &mut out {
            o.push(b);
        }
        i += 1;
    }
    match out {
        Some(o) => std::borrow::Cow::Owned(o),
        None => std::borrow::Cow::Borrowed(bytes),
    }
}

/// The reply a batch `frame` got (`text`, JSON): a non-empty array of well-formed JSON-RPC
/// responses, no more than the batch has elements, each id `null` or the id of one of them.
pub fn check_batch_reply(frame: &[u8], text: &str) {
    let shown = || String::from_utf8_lossy(frame).into_owned();
    let reply = parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("a batch reply is not JSON ({e}): {text}"));
    let Value::Array(entries) = reply else {
        panic!(
            "a batch reply is not an array: {text}\n  frame: {}",
            shown()
        )
    };
    let elements = match parse(frame) {
        Ok(Value::Array(elements)) => elements,
        _ => panic!("a batch reply to a frame that is not an array: {}", shown()),
    };
    assert!(
        !entries.is_empty(),
        "an empty batch reply (nothing must be sent)"
    );
    assert!(
        entries.len() <= elements.len(),
        "more answers ({}) than messages ({}): {text}",
        entries.len(),
        elements.len()
    );
    // Each entry's own text, read as a message is (an id of any length exact).
    let texts: Vec<Box<serde_json::value::RawValue>> =
        serde_json::from_str(text).expect("the reply is a JSON array");
    for (entry, raw) in entries.iter().zip(&texts) {
        assert!(
            matches!(
                orkestrel_mcp::wire::jsonrpc::JsonRpcMessage::from_slice(raw.get().as_bytes()),
                Ok(orkestrel_mcp::wire::jsonrpc::JsonRpcMessage::Response(_))
            ),
            "a batch entry is not a JSON-RPC response: {entry}"
        );
        let id = &entry["id"];
        assert!(
            id.is_null() || elements.iter().any(|e| &e["id"] == id),
            "a batch entry answers an id the batch does not hold: {entry}\n  frame: {}",
            shown()
        );
    }
}
