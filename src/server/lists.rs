//! The cacheable lists — `tools/list`, `resources/list`, `resources/templates/list`,
//! `prompts/list` — answered from their registry's [`Listing`]: descriptors serialized once per
//! change of the registry, a page written straight from them, and the plain whole list of the
//! handshake era shared by every response as is (issue 15). The answer is the same text the
//! method table would give a [`Value`](serde_json::Value) result: the page's items, its
//! `nextCursor` ([pagination](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination)),
//! and on 2026-07-28 the members every cacheable result carries (`resultType`, `ttlMs`,
//! `cacheScope`, `_meta`; [caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).

use serde_json::{Map, Value};

use super::methods::page_bounds;
use super::McpServer;
use crate::era::{self, Era};
use crate::protocol::params;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorObject, JsonRpcRequest, ResultValue};

impl McpServer {
    /// The answer to a list request of a list this server serves; `None` for any other request
    /// (the method table answers it, or refuses it as an unknown method).
    pub(super) fn answer_list(
        &self,
        request: &JsonRpcRequest,
        ctx: &RequestContext,
    ) -> Option<Result<ResultValue, ErrorObject>> {
        let o = &self.inner.options;
        let method = request.method.as_str();
        let modern = ctx.era == Era::Modern;
        if modern && era::REMOVED_METHODS.contains(&method) {
            return None;
        }
        let key = match method {
            "tools/list" => "tools",
            "resources/list" if self.serves_resources() => "resources",
            "resources/templates/list" if self.serves_resources() => "resourceTemplates",
            "prompts/list" if o.declare_lists || !o.prompts.is_empty() => "prompts",
            _ => return None,
        };
        let params = request.params.as_ref();
        if let Err(error) = params::check_request(method, params) {
            return Some(Err(error));
        }
        let listing = match method {
            "tools/list" => o.tools.listing(),
            // The other registries' listings are the extras' (`extras.rs`).
            other => self.extra_listing(other)?,
        };
        let (start, end, next) = match page_bounds(listing.len(), params, o.page_size) {
            Ok(bounds) => bounds,
            Err(error) => return Some(Err(error)),
        };
        if !modern && start == 0 && next.is_none() {
            return Some(Ok(ResultValue::raw(listing.whole(key))));
        }
        let tail = modern.then(|| self.cacheable_tail(method));
        let text = listing.page(key, start, end, next.as_deref(), tail.as_ref());
        Some(Ok(ResultValue::from(text)))
    }

    /// The members a 2026-07-28 result of the cacheable `method` gains after its own, in order:
    /// what [`era::decorate_result`] adds to a result that has none of them.
    fn cacheable_tail(&self, method: &str) -> Map<String, Value> {
        let mut result = Value::Object(Map::new());
        self.decorate(method, &mut result);
        match result {
            Value::Object(members) => members,
            _ => Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::{json, Value};

    use crate::era::{
        META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
    };
    use crate::primitives::prompts::Prompt;
    use crate::primitives::resources::{Resource, ResourceTemplate};
    use crate::primitives::skills::Skill;
    use crate::protocol::TaskSupport;
    use crate::wire::jsonrpc::{JsonRpcMessage, JsonRpcResponse, RequestId};
    use crate::{McpServer, ServerOptions, Tool};

    fn server(page_size: Option<usize>) -> McpServer {
        let mut options = ServerOptions::new("lists", "1.2.3");
        options.page_size = page_size;
        options.cache_ttl_ms = 4_000;
        let server = McpServer::new(options);
        let tools = server.tools();
        for (i, name) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            let tool = Tool::from_json(
                name,
                json!({"type":"object","properties":{"n":{"type":"number","minimum":0.5}}}),
                |_, _| async { Ok::<_, String>("x") },
            )
            .with_description(format!("tool \"{name}\"\n\u{e9}"));
            let tool = match i {
                1 => tool
                    .with_title("B")
                    .with_annotations(json!({"readOnlyHint":true})),
                2 => tool.with_task_support(TaskSupport::Optional),
                _ => tool,
            };
            tools.add(tool);
        }
        for i in 0..3 {
            let uri = format!("test://r/{i}");
            server
                .resources()
                .add(Resource::text(&uri, "r", "text/plain", "t").with_description("d"));
            server.resources().add_template(ResourceTemplate::new(
                format!("test://t{i}/{{id}}"),
                "t",
                |_, _, _| async { Ok(Vec::new()) },
            ));
            server.prompts().add(
                Prompt::new(format!("p{i}"), |_, _| async {
                    Ok(crate::primitives::prompts::GetPromptResult {
                        description: None,
                        messages: Vec::new(),
                    })
                })
                .with_argument("who", "who", i == 1),
            );
        }
        server
    }

    fn meta() -> Value {
        json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "t", "version": "0"},
        })
    }

    fn ask(server: &McpServer, method: &str, params: Option<Value>) -> JsonRpcResponse {
        let mut request = json!({"jsonrpc": "2.0", "id": 7, "method": method});
        if let Some(params) = params {
            request["params"] = params;
        }
        let message = JsonRpcMessage::from_value(request).expect("a request");
        futures::executor::block_on(server.dispatch(message)).expect("a response")
    }

    /// What the method table answered before the listings: the descriptors as a `Value`, the
    /// page cut from them, `nextCursor`, and on 2026-07-28 the decoration.
    fn expected<T: Serialize>(
        server: &McpServer,
        method: &str,
        key: &str,
        items: &[T],
        start: usize,
        size: Option<usize>,
        modern: bool,
    ) -> String {
        let end = size.map_or(items.len(), |n| (start + n).min(items.len()));
        let mut result = json!({ key: serde_json::to_value(&items[start..end]).unwrap() });
        if end < items.len() {
            result["nextCursor"] = json!(format!("o{end}"));
        }
        if modern {
            server.decorate(method, &mut result);
        }
        JsonRpcResponse::result(RequestId::Number(7), result).to_json()
    }

    fn check_all(server: &McpServer, size: Option<usize>) {
        let o = &server.inner.options;
        for modern in [false, true] {
            for method in [
                "tools/list",
                "resources/list",
                "resources/templates/list",
                "prompts/list",
            ] {
                let (key, want): (&str, Box<dyn Fn(usize) -> String>) = match method {
                    "tools/list" => {
                        let items = o.tools.list();
                        let f = move |start| {
                            expected(server, method, "tools", &items, start, size, modern)
                        };
                        ("tools", Box::new(f))
                    }
                    "resources/list" => {
                        let mut items = o.resources.list();
                        if !o.skills.is_empty() {
                            items.extend(o.skills.snapshot().resources());
                        }
                        let f = move |start| {
                            expected(server, method, "resources", &items, start, size, modern)
                        };
                        ("resources", Box::new(f))
                    }
                    "resources/templates/list" => {
                        let items = o.resources.templates();
                        let f = move |start| {
                            let key = "resourceTemplates";
                            expected(server, method, key, &items, start, size, modern)
                        };
                        ("resourceTemplates", Box::new(f))
                    }
                    _ => {
                        let items = o.prompts.list();
                        let f = move |start| {
                            expected(server, method, "prompts", &items, start, size, modern)
                        };
                        ("prompts", Box::new(f))
                    }
                };
                let mut cursor: Option<String> = None;
                let mut start = 0;
                loop {
                    let mut params = json!({});
                    if modern {
                        params["_meta"] = meta();
                    }
                    if let Some(cursor) = &cursor {
                        params["cursor"] = json!(cursor);
                    }
                    let params = (params != json!({})).then_some(params);
                    let answer = ask(server, method, params);
                    let result = answer.payload.as_ref().expect("a result");
                    assert!(result.is_raw(), "{method}: from the listing");
                    let text = answer.to_json();
                    assert_eq!(text, want(start), "{method} modern={modern} at {start}");
                    if modern {
                        assert_eq!(result["_meta"][META_SERVER_INFO]["version"], "1.2.3");
                    }
                    start += result[key].as_array().unwrap().len();
                    match result.get("nextCursor").and_then(Value::as_str) {
                        Some(next) => cursor = Some(next.to_owned()),
                        None => break,
                    }
                }
            }
        }
    }

    #[test]
    fn every_list_page_is_the_method_tables_answer_byte_for_byte() {
        for size in [None, Some(2), Some(1), Some(9)] {
            check_all(&server(size), size);
        }
        // With skills, resources/list goes on past the registered resources into their files.
        let server = server(Some(2));
        let skill = Skill::new("s", "---\nname: s\ndescription: a skill\n---\n\nbody\n")
            .unwrap()
            .with_file("ref.md", "more\n")
            .unwrap();
        server.skills().add(skill);
        check_all(&server, Some(2));
    }

    #[test]
    fn a_change_to_a_registry_is_in_its_next_list() {
        let server = server(None);
        let names = |server: &McpServer, method: &str, key: &str, field: &str| -> Vec<String> {
            let answer = ask(server, method, None);
            let result = answer.payload.expect("a result");
            result[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d[field].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(&server, "tools/list", "tools", "name").len(), 5);
        server.tools().remove("a");
        server.resources().remove("test://r/0");
        server.resources().remove_template("test://t0/{id}");
        server.prompts().remove("p0");
        assert_eq!(
            names(&server, "tools/list", "tools", "name"),
            ["b", "c", "d", "e"]
        );
        assert_eq!(
            names(&server, "resources/list", "resources", "uri"),
            ["test://r/1", "test://r/2"]
        );
        let key = "resourceTemplates";
        assert_eq!(
            names(&server, "resources/templates/list", key, "uriTemplate"),
            ["test://t1/{id}", "test://t2/{id}"]
        );
        server.prompts().add(Prompt::new("p9", |_, _| async {
            Ok(crate::primitives::prompts::GetPromptResult {
                description: None,
                messages: Vec::new(),
            })
        }));
        assert_eq!(
            names(&server, "prompts/list", "prompts", "name"),
            ["p1", "p2", "p9"]
        );
    }

    #[test]
    fn bad_params_and_unserved_lists_are_refused_as_before() {
        let server = server(Some(2));
        for (params, code) in [
            (json!({"cursor": 5}), -32602),
            (json!({"cursor": "o99"}), -32602),
            (json!({"cursor": "x"}), -32602),
            (json!({"_meta": {"progressToken": 1.5}}), -32602),
        ] {
            let answer = ask(&server, "prompts/list", Some(params.clone()));
            assert_eq!(answer.payload.unwrap_err().code.0, code, "{params}");
        }
        let bare = McpServer::new(ServerOptions::new("bare", "0"));
        for method in ["resources/list", "resources/templates/list", "prompts/list"] {
            let answer = ask(&bare, method, None);
            assert_eq!(answer.payload.unwrap_err().code.0, -32601, "{method}");
        }
        let answer = ask(&bare, "tools/list", None);
        assert_eq!(
            answer.to_json(),
            r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#
        );
    }
}
