//! MCP types: protocol versions and negotiation, the `initialize` result, tool descriptors,
//! tool results and content blocks (seed clause 4; spec 2025-11-25 `schema.ts`).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::wire::jsonrpc::ErrorObject;

mod content;
pub(crate) mod params;
pub mod trace;

/// The seed's protocol revision (`MCP_PROTOCOL_VERSION`): `2025-06-18`, the version the JS
/// client offers by default. A server's counter-offer to a version it does not speak is
/// [`LATEST_PROTOCOL_VERSION`] ([`negotiate_version`]).
pub const MCP_PROTOCOL_VERSION: &str = "2025-06-18";

/// The newest handshake-era revision this crate speaks.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision the `initialize` handshake can negotiate, newest first
/// (seed `SUPPORTED_PROTOCOL_VERSIONS`, extended to the current spec).
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Whether `version` is one of [`SUPPORTED_PROTOCOL_VERSIONS`].
pub fn is_supported_version(version: &str) -> bool {
    SUPPORTED_PROTOCOL_VERSIONS.contains(&version)
}

/// `version` as the crate's own `'static` text when it is one of
/// [`SUPPORTED_PROTOCOL_VERSIONS`] (what a session or a scope keeps costs no heap then), else as
/// given.
pub(crate) fn version_text(version: String) -> std::borrow::Cow<'static, str> {
    match SUPPORTED_PROTOCOL_VERSIONS.iter().find(|v| **v == version) {
        Some(known) => std::borrow::Cow::Borrowed(known),
        None => std::borrow::Cow::Owned(version),
    }
}

/// The one revision whose peers receive JSON-RPC batches: `2025-03-26`. Its
/// [basic](https://modelcontextprotocol.io/specification/2025-03-26/basic#batching) page says
/// implementations "MUST support receiving JSON-RPC batches"; 2024-11-05 does not mention them,
/// 2025-06-18 removed them ("Remove support for JSON-RPC batching": a message is a single
/// object) and the 2026-07-28 wire has none either.
pub const BATCH_PROTOCOL_VERSION: &str = "2025-03-26";

/// Whether a server receives JSON-RPC batches from a peer speaking `version`: only at
/// [`BATCH_PROTOCOL_VERSION`]; at every other revision a batch is refused (`-32600`).
pub fn receives_batches(version: &str) -> bool {
    version == BATCH_PROTOCOL_VERSION
}

/// Pick the version to answer an `initialize` with: the client's `requested` version when it is
/// supported, else [`LATEST_PROTOCOL_VERSION`] (spec 2025-11-25
/// [`basic/lifecycle`](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation):
/// another version the server supports, which "SHOULD be the latest"). The seed (clause 4)
/// counter-offers its own revision, [`MCP_PROTOCOL_VERSION`], which was the latest when it was
/// written; a client that asks for it still gets it.
pub fn negotiate_version(requested: &str) -> &'static str {
    SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_PROTOCOL_VERSION)
}

/// A name and version identifying a server or client (`serverInfo` / `clientInfo`; seed
/// `MCPServerInfo`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Optional display title (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its website (2025-11-25 `websiteUrl`).
    #[serde(
        default,
        rename = "websiteUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
    /// Icons to show for it (spec 2025-11-25 `Icon[]`: `src`, `mimeType`, `sizes`, `theme`),
    /// passed through as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
        }
    }
}

/// The `initialize` result: `{ protocolVersion, capabilities, serverInfo, instructions? }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated revision.
    pub protocol_version: String,
    /// What the server offers, e.g. `{"tools":{}}`.
    pub capabilities: Value,
    /// The server's identity.
    pub server_info: Implementation,
    /// Optional instructions for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Build the `initialize` result (seed `initializeResult`): the given version, the `tools`
/// capability, and `serverInfo`.
pub fn initialize_result(info: &Implementation, protocol_version: &str) -> InitializeResult {
    InitializeResult {
        protocol_version: protocol_version.to_owned(),
        capabilities: json!({ "tools": {} }),
        server_info: info.clone(),
        instructions: None,
    }
}

/// Read and negotiate `params.protocolVersion` of an `initialize` request.
///
/// # Errors
/// `-32602` when `params.protocolVersion` is missing or not a string (spec 2025-06-18
/// `basic/lifecycle`: the client MUST send a version; the spec wins over the seed's fallback).
pub fn negotiate_initialize(
    params: Option<&Map<String, Value>>,
) -> Result<&'static str, ErrorObject> {
    match params.and_then(|p| p.get("protocolVersion")) {
        Some(Value::String(v)) => Ok(negotiate_version(v)),
        Some(_) => Err(ErrorObject::invalid_params(
            r#""protocolVersion" must be a string"#,
        )),
        None => Err(ErrorObject::invalid_params(r#"missing "protocolVersion""#)),
    }
}

/// The client capability a server→client request needs (spec 2025-11-25 `client/sampling`,
/// `client/elicitation`, `client/roots`): `sampling` for `sampling/createMessage`,
/// `elicitation` for `elicitation/create`, `roots` for `roots/list`; `None` for any other method.
pub fn client_capability_for(method: &str) -> Option<&'static str> {
    Some(match method {
        "sampling/createMessage" => "sampling",
        "elicitation/create" => "elicitation",
        "roots/list" => "roots",
        _ => return None,
    })
}

/// One `tools/list` entry (seed `MCPToolDescriptor`; spec `Tool`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescriptor {
    /// Unique tool name.
    pub name: String,
    /// Optional display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; defaults to `{"type":"object"}`.
    #[serde(default = "default_input_schema")]
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, when the tool returns structured results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons to show for it (spec 2025-11-25 `Icon[]`: `src`, `mimeType`, `sizes`, `theme`),
    /// passed through as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// How the tool runs (`execution.taskSupport`: whether it may, must or must not run as a
    /// task); absent means `forbidden` (spec 2025-11-25 `server/tools`, `ToolExecution`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
}

/// A tool's `execution` member (spec 2025-11-25 `ToolExecution`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool may run as a task; absent means [`TaskSupport::Forbidden`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Whether a tool runs as a task ([tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks),
/// `execution.taskSupport`): on the 2025-11-25 wire the client asks with `params.task`; on the
/// 2026-07-28 wire (extension `io.modelcontextprotocol/tasks`) the server decides for a client
/// that declares the extension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task: a task-augmented call is refused (`-32601`, 2025-11-25) or runs
    /// synchronously (2026-07-28). The default.
    #[default]
    Forbidden,
    /// A task when the client asks for (2025-11-25) or accepts (2026-07-28) one; else a plain call.
    Optional,
    /// Only as a task: a plain call is refused (`-32601` on 2025-11-25; `-32021` naming the
    /// extension on 2026-07-28).
    Required,
}

/// `{"type":"object"}`: the input schema of a tool that declares none.
pub fn default_input_schema() -> Value {
    json!({ "type": "object" })
}

/// Whether `schema` can be a tool's `inputSchema` or `outputSchema`: a JSON Schema object whose
/// `type` is `"object"` (the 2025-11-25 schema's `Tool.inputSchema.type: "object"`, and
/// `outputSchema`'s; a client such as the official TypeScript SDK refuses a whole `tools/list`
/// with one tool that breaks it).
pub fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

impl ToolDescriptor {
    /// A descriptor with a name and the default input schema.
    pub fn new(name: impl Into<String>) -> Self {
        ToolDescriptor {
            name: name.into(),
            title: None,
            description: None,
            input_schema: default_input_schema(),
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            execution: None,
        }
    }

    /// The tool's `execution.taskSupport` (absent: [`TaskSupport::Forbidden`]).
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or_default()
    }
}

/// A content block of a tool result (spec `ContentBlock`): `{ "type": …, … }` in JSON, its serde
/// written by hand (`protocol/content.rs`; the derive's is ~30 KB of the wasm module).
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// `{ "type": "text", "text" }`.
    Text {
        /// The text.
        text: String,
        /// Optional annotations, passed through.
        annotations: Option<Value>,
    },
    /// `{ "type": "image", "data": base64, "mimeType" }`.
    Image {
        /// Base64 image bytes.
        data: String,
        /// e.g. `image/png`.
        mime_type: String,
        /// Optional annotations, passed through.
        annotations: Option<Value>,
    },
    /// `{ "type": "audio", "data": base64, "mimeType" }`.
    Audio {
        /// Base64 audio bytes.
        data: String,
        /// e.g. `audio/wav`.
        mime_type: String,
        /// Optional annotations, passed through.
        annotations: Option<Value>,
    },
    /// `{ "type": "resource_link", "uri", "name", … }`; the other members are kept in `rest`.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// The resource name.
        name: String,
        /// Other members (`mimeType`, `description`, `title`, …), passed through.
        rest: Map<String, Value>,
    },
    /// `{ "type": "resource", "resource": { uri, text | blob, mimeType? } }`.
    Resource {
        /// The embedded resource contents.
        resource: Value,
        /// Optional annotations, passed through.
        annotations: Option<Value>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
        }
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The `tools/call` result (seed `MCPToolResult`; spec `CallToolResult`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The content blocks.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output matching the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// `true` when the tool failed; the content then says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ToolResult {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            ..ToolResult::default()
        }
    }

    /// A failed result: one text block and `isError: true` (seed clause 5).
    pub fn error(message: impl Into<String>) -> Self {
        ToolResult {
            is_error: Some(true),
            ..ToolResult::text(message)
        }
    }

    /// A result whose value is JSON: the value serialized as one text block (seed
    /// `buildToolResult`: `JSON.stringify(value)`).
    pub fn json(value: &Value) -> Self {
        ToolResult::text(crate::wire::json_text::to_text(value))
    }

    /// A structured result: `structuredContent` plus its JSON text as a text block, as the spec
    /// recommends for backwards compatibility.
    pub fn structured(value: Value) -> Self {
        ToolResult {
            content: vec![Content::text(crate::wire::json_text::to_text(&value))],
            structured_content: Some(value),
            ..ToolResult::default()
        }
    }

    /// Whether the result is flagged `isError: true`.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// The syslog severities of `logging/setLevel` and `notifications/message`, least severe first
/// (spec 2025-11-25 `server/utilities/logging`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// The level named `name` (`"debug"` … `"emergency"`, as on the wire).
    pub fn from_name(name: &str) -> Option<LogLevel> {
        Some(match name {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_to_client_request_names_its_client_capability() {
        assert_eq!(
            client_capability_for("sampling/createMessage"),
            Some("sampling")
        );
        assert_eq!(
            client_capability_for("elicitation/create"),
            Some("elicitation")
        );
        assert_eq!(client_capability_for("roots/list"), Some("roots"));
        assert_eq!(client_capability_for("ping"), None);
        assert_eq!(client_capability_for("tools/list"), None);
    }

    #[test]
    fn negotiation_echoes_supported_else_default() {
        for v in SUPPORTED_PROTOCOL_VERSIONS {
            assert_eq!(negotiate_version(v), *v);
        }
        // Not supported here: the latest this server speaks (spec: "SHOULD be the latest").
        for v in ["1999-01-01", "2099-01-01", "", "2026-07-28", "2025-11-26"] {
            assert_eq!(negotiate_version(v), LATEST_PROTOCOL_VERSION, "{v:?}");
        }
        let p = json!({"protocolVersion": 5});
        assert!(negotiate_initialize(p.as_object()).is_err());
        assert!(negotiate_initialize(None).is_err());
    }

    #[test]
    fn descriptor_defaults_input_schema() {
        let d: ToolDescriptor = serde_json::from_value(json!({"name":"x"})).unwrap();
        assert_eq!(d.input_schema, json!({"type":"object"}));
        assert_eq!(
            serde_json::to_value(ToolDescriptor::new("x")).unwrap(),
            json!({"name":"x","inputSchema":{"type":"object"}})
        );
    }

    /// The 2025-11-25 `icons` (and `_meta`, `websiteUrl`, `description`) of every listed kind
    /// and of an implementation come through a read and a write unchanged: a client or a bridge
    /// never loses them.
    #[test]
    fn icons_and_meta_pass_through_every_descriptor() {
        use crate::primitives::prompts::PromptDescriptor;
        use crate::primitives::resources::{ResourceDescriptor, TemplateDescriptor};
        fn round<T: serde::de::DeserializeOwned + Serialize>(value: Value) {
            let read: T = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(serde_json::to_value(read).unwrap(), value);
        }
        let icons = json!([{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}]);
        let meta = json!({"x": 1});
        round::<ToolDescriptor>(
            json!({"name": "t", "inputSchema": {"type": "object"}, "icons": icons, "_meta": meta}),
        );
        round::<PromptDescriptor>(json!({"name": "p", "icons": icons, "_meta": meta}));
        round::<ResourceDescriptor>(
            json!({"uri": "a://b", "name": "r", "icons": icons, "_meta": meta}),
        );
        round::<TemplateDescriptor>(
            json!({"uriTemplate": "a://{x}", "name": "t", "icons": icons, "_meta": meta}),
        );
        round::<Implementation>(json!({
            "name": "s", "version": "1", "description": "d",
            "websiteUrl": "https://example.com", "icons": icons
        }));
    }

    #[test]
    fn content_blocks_serialize_with_spec_tags() {
        let link: Content = serde_json::from_value(
            json!({"type":"resource_link","uri":"u","name":"n","mimeType":"t"}),
        )
        .unwrap();
        assert_eq!(serde_json::to_value(&link).unwrap()["mimeType"], "t");
        assert_eq!(
            serde_json::to_value(Content::image("AA==", "image/png")).unwrap(),
            json!({"type":"image","data":"AA==","mimeType":"image/png"})
        );
        assert_eq!(
            serde_json::to_value(ToolResult::error("boom")).unwrap(),
            json!({"content":[{"type":"text","text":"boom"}],"isError":true})
        );
    }
}
