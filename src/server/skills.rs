//! The Skills extension in dispatch ([SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension)):
//! its declaration, `skills/list`, `skills/get`, `resources/directory/read`, and skill files in
//! `resources/list` and `resources/read`. The skills come from
//! [`ServerOptions::skills`](super::ServerOptions::skills); each request answers from one
//! snapshot of it. What reads them is reached only from `extras.rs`.

use serde_json::{json, Map, Value};

use super::methods::{listed, page, string_param};
use super::McpServer;
use crate::primitives::resources::ResourceContents;
use crate::primitives::skills::SKILLS_EXTENSION;
use crate::wire::jsonrpc::ErrorObject;

impl McpServer {
    /// Whether `resources` is served: resources registered, or skills (served as resources).
    pub(super) fn serves_resources(&self) -> bool {
        let o = &self.inner.options;
        o.declare_lists || !o.resources.is_empty() || !o.skills.is_empty()
    }

    /// With skills, add `extensions["io.modelcontextprotocol/skills"] = {directoryRead: true}`
    /// to `caps` (other extensions already there stay).
    pub(super) fn declare_skills(&self, caps: &mut Value) {
        if self.inner.options.skills.is_empty() {
            return;
        }
        if let Value::Object(caps) = caps {
            let extensions = caps.entry("extensions").or_insert_with(|| json!({}));
            if let Value::Object(extensions) = extensions {
                extensions.insert(
                    SKILLS_EXTENSION.to_owned(),
                    json!({ "directoryRead": true }),
                );
            }
        }
    }

    /// `skills/list` (paginated, an entry never split), `skills/get` (`-32602` for a URI that
    /// names no served skill) and `resources/directory/read` (paginated; `-32602` for a file or
    /// an unknown URI). Params are already checked against their tables.
    pub(super) fn call_skills(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
    ) -> Result<Value, ErrorObject> {
        let o = &self.inner.options;
        match method {
            "skills/list" => {
                let (items, next) = page(o.skills.list(), params, o.page_size)?;
                Ok(listed("skills", items, next))
            }
            "skills/get" => {
                let uri = string_param(params, "uri")?;
                Ok(json!({ "skill": o.skills.get(&uri)? }))
            }
            "resources/directory/read" => {
                let uri = string_param(params, "uri")?;
                let children = o.skills.snapshot().read_directory(&uri)?;
                let (items, next) = page(children, params, o.page_size)?;
                Ok(listed("resources", items, next))
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// The contents of the skill file at `uri`, when a served skill holds it.
    pub(super) fn read_skill_file(&self, uri: &str) -> Option<Vec<ResourceContents>> {
        let skills = &self.inner.options.skills;
        if skills.is_empty() {
            return None;
        }
        let tree = skills.snapshot();
        tree.file(uri).map(|(_, file)| vec![file.contents()])
    }
}
