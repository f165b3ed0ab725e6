//! The client surface beyond tools: the resources / prompts / completion / logging / roots calls,
//! and the helpers that walk every page of a list (stopping on a repeated cursor).

use serde_json::{json, Value};

use super::{ClientError, McpClient, RequestOptions};

/// The most pages the `*_all` list helpers follow before giving up.
pub const MAX_LIST_PAGES: usize = 1_000;

/// The most a list walk collects, in bytes of JSON (the pages' results as the server wrote
/// them, about): 64 MiB. A server whose pages never end would otherwise fill memory with up to
/// [`MAX_LIST_PAGES`] pages of the transport's largest message each.
pub const MAX_LIST_BYTES: usize = 64 * 1024 * 1024;

/// About how many bytes `value` takes as compact JSON (strings without their escapes), counted
/// without writing it.
fn json_size(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(|v| json_size(v) + 1).sum::<usize>() + 2,
        Value::Object(map) => {
            map.iter()
                .map(|(k, v)| k.len() + 4 + json_size(v))
                .sum::<usize>()
                + 2
        }
    }
}

fn params_with(params: Value, cursor: Option<&str>) -> Option<Value> {
    match (params, cursor) {
        (Value::Object(mut map), Some(cursor)) => {
            map.insert("cursor".into(), json!(cursor));
            Some(Value::Object(map))
        }
        (Value::Object(map), None) if map.is_empty() => None,
        (params, _) => Some(params),
    }
}

impl McpClient {
    /// The server's declared capabilities, once connected: the `initialize` result's
    /// `capabilities` (handshake era) or `server/discover`'s (2026-07-28).
    pub fn server_capabilities(&self) -> Option<Value> {
        if let Some(init) = self.initialize_result() {
            return Some(init.capabilities);
        }
        self.discover_result()
            .and_then(|d| d.get("capabilities").cloned())
    }

    /// `Ok` when the server declared `capability` (a `.`-separated path whose last member is
    /// present and not `false`), before a request that needs it.
    fn server_declares(&self, method: &str, capability: &str) -> Result<(), ClientError> {
        let declared = self.server_capabilities().is_some_and(|caps| {
            let pointer = format!("/{}", capability.replace('.', "/"));
            caps.pointer(&pointer)
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
        });
        if declared || !self.is_connected() {
            // Not connected: the request itself reports it.
            return Ok(());
        }
        Err(ClientError::NotDeclared {
            method: method.to_owned(),
            capability: capability.to_owned(),
            side: "server",
        })
    }

    /// Send one page request of a list method (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`) with an optional cursor.
    ///
    /// # Errors
    /// As [`McpClient::request`].
    pub async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<Value, ClientError> {
        self.request(
            method,
            params_with(json!({}), cursor),
            RequestOptions::default(),
        )
        .await
    }

    /// Walk every page of a list method, collecting the `key` arrays (e.g. `resources/list`,
    /// `"resources"`). Stops when `nextCursor` is absent, or (with a warning: the server's pages
    /// loop) names a page already read.
    ///
    /// # Errors
    /// As [`McpClient::request`]; [`ClientError::InvalidResponse`] when a page has no `key`
    /// array, or the pages do not end within [`MAX_LIST_PAGES`] or [`MAX_LIST_BYTES`].
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        self.walk_pages(method, json!({}), |mut page| {
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(list)) => items.extend(list),
                _ => {
                    return Err(ClientError::InvalidResponse(format!(
                        "{method} result has no {key:?} array"
                    )))
                }
            }
            Ok(())
        })
        .await?;
        Ok(items)
    }

    /// Walk the pages of a paginated `method` (spec `server/utilities/pagination`): `params`
    /// (an object) with each `cursor`, every page's result handed to `take` (whose error ends
    /// the walk). The one walk every list helper uses, with one set of bounds: at most
    /// [`MAX_LIST_PAGES`] pages and [`MAX_LIST_BYTES`] of results (an error past either, never a
    /// cut list), and a `nextCursor` naming a page already read ends the walk with what was
    /// read (and a warning).
    pub(crate) async fn walk_pages(
        &self,
        method: &str,
        params: Value,
        mut take: impl FnMut(Value) -> Result<(), ClientError>,
    ) -> Result<(), ClientError> {
        let mut cursor: Option<String> = None;
        let mut seen = crate::collections::HashSet::<String>::default();
        let mut bytes = 0usize;
        for _ in 0..MAX_LIST_PAGES {
            let page = self
                .request(
                    method,
                    params_with(params.clone(), cursor.as_deref()),
                    RequestOptions::default(),
                )
                .await?;
            bytes = bytes.saturating_add(json_size(&page));
            if bytes > MAX_LIST_BYTES {
                return Err(ClientError::InvalidResponse(format!(
                    "{method} listed more than {MAX_LIST_BYTES} bytes"
                )));
            }
            let next = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            take(page)?;
            match next {
                None => return Ok(()),
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                Some(next) => {
                    tracing::warn!(
                        method,
                        cursor = %next,
                        "mcp client: the server's pages loop (a nextCursor already read); the list ends there"
                    );
                    return Ok(());
                }
            }
        }
        Err(ClientError::InvalidResponse(format!(
            "{method} did not end within {MAX_LIST_PAGES} pages"
        )))
    }

    /// Every resource (`resources/list`, all pages).
    ///
    /// # Errors
    /// As [`McpClient::list_all`].
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template (`resources/templates/list`, all pages).
    ///
    /// # Errors
    /// As [`McpClient::list_all`].
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// Every prompt (`prompts/list`, all pages).
    ///
    /// # Errors
    /// As [`McpClient::list_all`].
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `resources/read`: the whole ReadResourceResult (`contents`: text or base64 `blob`).
    ///
    /// # Errors
    /// As [`McpClient::request`].
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        self.request(
            "resources/read",
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await
    }

    /// `resources/subscribe`: the server then sends `notifications/resources/updated` for `uri`
    /// (a [`ClientEvent::Notification`](super::ClientEvent::Notification)).
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when the server did not declare `resources.subscribe`; as
    /// [`McpClient::request`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.server_declares("resources/subscribe", "resources.subscribe")?;
        self.request(
            "resources/subscribe",
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// `resources/unsubscribe`.
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when the server did not declare `resources.subscribe`; as
    /// [`McpClient::request`].
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.server_declares("resources/unsubscribe", "resources.subscribe")?;
        self.request(
            "resources/unsubscribe",
            Some(json!({ "uri": uri })),
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// `prompts/get` with string arguments: the whole GetPromptResult (`description`?,
    /// `messages`).
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] when `arguments` is not an object or `null`; as
    /// [`McpClient::request`].
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let mut params = json!({ "name": name });
        match arguments {
            Value::Null => {}
            args @ Value::Object(_) => params["arguments"] = args,
            other => {
                return Err(ClientError::InvalidArguments(format!(
                    "prompt arguments must be a JSON object, not {}",
                    crate::wire::json_text::JsonText(&other)
                )))
            }
        }
        self.request("prompts/get", Some(params), RequestOptions::default())
            .await
    }

    /// `completion/complete`: `reference` is `{"type":"ref/prompt","name"}` or
    /// `{"type":"ref/resource","uri"}`; returns the `completion` object (`values`, `total`?,
    /// `hasMore`?).
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when the server did not declare `completions`; as
    /// [`McpClient::request`]; [`ClientError::InvalidResponse`] when the result has no
    /// `completion`.
    pub async fn complete(
        &self,
        reference: Value,
        argument_name: &str,
        argument_value: &str,
        context: Option<Value>,
    ) -> Result<Value, ClientError> {
        self.server_declares("completion/complete", "completions")?;
        let mut params = json!({
            "ref": reference,
            "argument": { "name": argument_name, "value": argument_value },
        });
        if let Some(context) = context {
            params["context"] = context;
        }
        let mut result = self
            .request(
                "completion/complete",
                Some(params),
                RequestOptions::default(),
            )
            .await?;
        result
            .get_mut("completion")
            .map(Value::take)
            .ok_or_else(|| {
                ClientError::InvalidResponse("completion result has no `completion`".into())
            })
    }

    /// `logging/setLevel` (`debug` … `emergency`); the server's `notifications/message` arrive as
    /// [`ClientEvent::Notification`](super::ClientEvent::Notification)s.
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when the server did not declare `logging`; as
    /// [`McpClient::request`].
    pub async fn set_logging_level(&self, level: &str) -> Result<(), ClientError> {
        self.server_declares("logging/setLevel", "logging")?;
        self.request(
            "logging/setLevel",
            Some(json!({ "level": level })),
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }

    /// Tell the server the client's roots changed (`notifications/roots/list_changed`).
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when this client's handler did not declare
    /// `roots.listChanged`; as [`McpClient::notify`].
    pub async fn roots_changed(&self) -> Result<(), ClientError> {
        let declared = self.inner.options.handler.as_ref().is_some_and(|h| {
            h.capabilities().pointer("/roots/listChanged") == Some(&Value::Bool(true))
        });
        if !declared {
            return Err(ClientError::NotDeclared {
                method: "notifications/roots/list_changed".into(),
                capability: "roots.listChanged".into(),
                side: "client",
            });
        }
        self.notify("notifications/roots/list_changed", None).await
    }
}
