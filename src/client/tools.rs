//! The tool calls: `tools/list` (every page), remote tools wrapped as local [`Tool`]s, and
//! `tools/call` with the whole result or the seed's value semantics ([`result_value`]).

use serde_json::{json, Map, Value};

use super::{ClientError, McpClient, RequestOptions};
use crate::primitives::tools::Tool;
use crate::protocol::{Content, ToolDescriptor, ToolResult};

impl McpClient {
    /// Run `tools/list`, following `nextCursor` pages, and return the descriptors.
    ///
    /// # Errors
    /// As [`McpClient::request`]; [`ClientError::InvalidResponse`] when the result has no
    /// `tools` array, or pages do not end within
    /// [`MAX_TOOL_PAGES`](super::MAX_TOOL_PAGES) or [`MAX_LIST_BYTES`](super::MAX_LIST_BYTES) (a `nextCursor` naming a
    /// page already read ends the list there, with a warning). A descriptor that does not
    /// parse is left out with a warning naming it: one broken tool of a server does not hide
    /// the others.
    pub async fn list_tools(&self) -> Result<Vec<ToolDescriptor>, ClientError> {
        Ok(parse_listed(
            "tools/list",
            self.list_all("tools/list", "tools").await?,
        ))
    }

    /// Run `tools/list` and wrap each descriptor as a local [`Tool`] (seed `tools`): the
    /// descriptor is kept whole (name, schemas, annotations) and running the tool runs
    /// [`McpClient::call_tool`] on this client, passing the remote result through unchanged (a
    /// protocol failure becomes an `isError` result, and so does a result that breaks the
    /// structured-output rule a served tool is held to, [`Tool::call`]: re-served with its
    /// `outputSchema`, it must return `structuredContent`). Add them to a
    /// [`ToolRegistry`](crate::ToolRegistry) to re-serve a remote server's tools.
    ///
    /// # Errors
    /// As [`McpClient::list_tools`].
    pub async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        let descriptors = self.list_tools().await?;
        Ok(descriptors
            .into_iter()
            .map(|descriptor| {
                let client = self.clone();
                let name = descriptor.name.clone();
                Tool::from_json(
                    descriptor.name.clone(),
                    descriptor.input_schema.clone(),
                    move |args, _ctx| {
                        let client = client.clone();
                        let name = name.clone();
                        async move { client.call_tool(&name, Value::Object(args)).await }
                    },
                )
                .with_descriptor(descriptor)
            })
            .collect())
    }

    /// Run `tools/call` and return the whole result (content blocks of every kind,
    /// `structuredContent`, `isError`) — the lower-level form of [`McpClient::call`].
    ///
    /// `arguments` must be a JSON object, or `null` for none.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] for non-object arguments; as [`McpClient::request`];
    /// [`ClientError::InvalidResponse`] when the result is not a `CallToolResult`. An `isError`
    /// result is **not** an error here.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// [`McpClient::call_tool`] with per-request options (a deadline).
    ///
    /// # Errors
    /// As [`McpClient::call_tool`].
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<ToolResult, ClientError> {
        let arguments = match arguments {
            Value::Null => Value::Object(Map::new()),
            args @ Value::Object(_) => args,
            other => {
                return Err(ClientError::InvalidArguments(format!(
                    "tool arguments must be a JSON object, not {}",
                    crate::wire::json_text::JsonText(&other)
                )))
            }
        };
        let params = json!({ "name": name, "arguments": arguments });
        let value = self.request("tools/call", Some(params), options).await?;
        // A task handle (only when the request declared tasks): wait for its result.
        if value["resultType"] == "task" {
            let task = crate::client::TaskInfo::from_value(&value)?;
            return self.wait_task(&task, &|_| {}).await;
        }
        serde_json::from_value(value)
            .map_err(|e| ClientError::InvalidResponse(format!("tools/call result: {e}")))
    }

    /// Run a remote tool with the seed's value semantics (clause 13): the result's text blocks
    /// are concatenated; `isError: true` → [`ClientError::Tool`] carrying that text (or, with
    /// none, that the tool failed without any); otherwise
    /// the text parsed as JSON, or the raw text as a JSON string when it is not JSON; no text →
    /// the `structuredContent` if any, else `None`.
    ///
    /// # Errors
    /// As [`McpClient::call_tool`], plus [`ClientError::Tool`].
    pub async fn call(&self, name: &str, arguments: Value) -> Result<Option<Value>, ClientError> {
        self.call_with(name, arguments, RequestOptions::default())
            .await
    }

    /// [`McpClient::call`] with per-request options (a deadline).
    ///
    /// # Errors
    /// As [`McpClient::call`].
    pub async fn call_with(
        &self,
        name: &str,
        arguments: Value,
        options: RequestOptions,
    ) -> Result<Option<Value>, ClientError> {
        let result = self.call_tool_with(name, arguments, options).await?;
        result_value(result)
    }
}

/// The message of a failed tool whose result carries no text.
pub(crate) const TEXTLESS_FAILURE: &str = "the tool failed (its result carries no text)";

/// The seed's `call` semantics over a whole result (see [`McpClient::call`]).
///
/// # Errors
/// [`ClientError::Tool`] for an `isError` result.
pub fn result_value(result: ToolResult) -> Result<Option<Value>, ClientError> {
    let text: String = result.content.iter().filter_map(Content::as_text).collect();
    if result.is_error() {
        let message = if text.is_empty() {
            TEXTLESS_FAILURE.to_owned()
        } else {
            text
        };
        return Err(ClientError::Tool { message, result });
    }
    if text.is_empty() {
        return Ok(result.structured_content);
    }
    Ok(Some(
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

/// The entries of a listing that parse as `T`; each that does not is left out, with a warning
/// naming it (its `name` or `uri`) and why.
pub(crate) fn parse_listed<T: serde::de::DeserializeOwned>(
    method: &str,
    entries: Vec<Value>,
) -> Vec<T> {
    entries
        .into_iter()
        .filter_map(|entry| {
            let named = entry
                .get("name")
                .or_else(|| entry.get("uri"))
                .or_else(|| entry.get("uriTemplate"))
                .map(|n| crate::wire::json_text::JsonText(n).to_string());
            serde_json::from_value(entry)
                .map_err(|e| {
                    tracing::warn!(
                        method,
                        entry = named.as_deref().unwrap_or("(unnamed)"),
                        error = %e,
                        "mcp client: left out an entry of the server's list that does not parse"
                    );
                })
                .ok()
        })
        .collect()
}
