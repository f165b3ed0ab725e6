//! One modern request end to end: `_meta` and headers, the `-32022` and `-32020` retries, the
//! result cache, `resultType` and input-required rounds; and what the client exposes of its era.

use serde_json::{json, Map, Value};

use super::{
    header_annotations, is_complete, pick_version, request_headers, request_meta, strip_envelope,
    with_meta, CACHED_METHODS, MRTR_METHODS,
};
use crate::client::{ClientError, McpClient, RequestOptions};
use crate::era::{Era, HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION};
use crate::server::tasks::TASKS_EXTENSION;

impl McpClient {
    /// The era this client settled on, once connected.
    pub fn era(&self) -> Option<Era> {
        self.inner.era.era()
    }

    /// The server's `server/discover` result, when the client connected in the modern era.
    pub fn discover_result(&self) -> Option<Value> {
        self.inner.era.lock().discover.clone()
    }

    fn capabilities(&self, tasks: bool) -> Value {
        let mut caps = self
            .inner
            .options
            .handler
            .as_ref()
            .map_or_else(|| json!({}), |h| h.capabilities());
        if tasks && caps.is_object() {
            let extensions = caps
                .as_object_mut()
                .expect("checked")
                .entry("extensions")
                .or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(TASKS_EXTENSION.into(), json!({}));
            }
        }
        caps
    }

    pub(crate) fn meta(&self, version: &str) -> Map<String, Value> {
        self.meta_for(version, false)
    }

    fn meta_for(&self, version: &str, tasks: bool) -> Map<String, Value> {
        let info = serde_json::to_value(&self.inner.options.info).unwrap_or_else(|_| json!({}));
        request_meta(version, &self.capabilities(tasks), &info)
    }

    /// One modern request: `_meta` (and headers on HTTP), the `-32022` retry, a `-32020` retry
    /// after re-listing tools, `resultType` handling and input-required rounds.
    pub(crate) async fn modern_request(
        &self,
        version: String,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        let timeout = options.timeout.unwrap_or(self.inner.options.timeout);
        let base = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(ClientError::InvalidArguments(format!(
                    "request params must be a JSON object, not {}",
                    crate::wire::json_text::JsonText(&other)
                )))
            }
        };
        let http = self.inner.transport.uses_headers();
        // Cache key: the method and the params that shape the result (caching, Cache Key).
        let cache_key = CACHED_METHODS.contains(&method).then(|| {
            format!(
                "{method} {}",
                serde_json::to_string(&base).unwrap_or_default()
            )
        });
        if let Some(hit) = cache_key
            .as_deref()
            .and_then(|k| self.inner.era.cached(k, self.inner.now()))
        {
            return Ok(hit);
        }
        let mut version = version;
        let mut version_retried = false;
        let mut headers_retried = false;
        let mut round = crate::client::mrtr::Rounds::new(method);
        loop {
            let mut params = base.clone();
            round.apply(&mut params);
            let mut meta = self.meta_for(&version, options.declare_tasks);
            if let Some(level) = options.log_level {
                meta.insert(crate::era::META_LOG_LEVEL.into(), json!(level));
            }
            let params = with_meta(Some(Value::Object(params)), &meta)?;
            let headers = http.then(|| {
                let annotations = match params.get("name").and_then(Value::as_str) {
                    Some(tool) if method == "tools/call" => self
                        .inner
                        .era
                        .lock()
                        .tool_headers
                        .get(tool)
                        .cloned()
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                request_headers(method, &params, &version, &annotations)
            });
            let result = self
                .inner
                .request_with(
                    method,
                    Some(params),
                    &RequestOptions {
                        timeout: Some(timeout),
                        ..options.clone()
                    },
                    headers,
                )
                .await
                .map_err(|e| match e {
                    ClientError::HttpStatus {
                        error: Some(error), ..
                    } => ClientError::Rpc(error),
                    other => other,
                });
            let value = match result {
                Err(ClientError::Rpc(e))
                    if e.code == UNSUPPORTED_PROTOCOL_VERSION && !version_retried =>
                {
                    version_retried = true;
                    match pick_version(&e) {
                        Some(v) => {
                            tracing::debug!(from = %version, to = %v, "mcp client: retrying with a supported version");
                            version = v.clone();
                            self.inner.era.lock().version = Some(v);
                            continue;
                        }
                        None => return Err(ClientError::Rpc(e)),
                    }
                }
                Err(ClientError::Rpc(e))
                    if e.code == HEADER_MISMATCH
                        && http
                        && method == "tools/call"
                        && !headers_retried =>
                {
                    headers_retried = true;
                    tracing::debug!(error = %e, "mcp client: header mismatch; re-listing tools and retrying");
                    self.inner
                        .era
                        .invalidate("notifications/tools/list_changed");
                    Box::pin(self.list_tools()).await?;
                    continue;
                }
                other => other?,
            };
            // A task handle (SEP-2663): only `tools/call` may answer with one.
            if value.get("resultType").and_then(Value::as_str) == Some("task") {
                if method != "tools/call" {
                    return Err(ClientError::InvalidResponse(format!(
                        "{method} returned a task, which only tools/call may"
                    )));
                }
                return Ok(strip_envelope(value));
            }
            if is_complete(&value)? {
                let value = strip_envelope(value);
                let value = if method == "tools/list" && http {
                    self.filter_tools(value)
                } else {
                    value
                };
                // Never cache the result of a retry that carried inputs (caching).
                if let (Some(key), false) = (cache_key, round.retried()) {
                    self.inner.era.store(key, &value, self.inner.now());
                }
                return Ok(value);
            }
            if !MRTR_METHODS.contains(&method) {
                return Err(ClientError::InvalidResponse(format!(
                    "{method} returned an input_required result, which only tools/call, prompts/get and resources/read may"
                )));
            }
            round
                .answer(
                    options
                        .handler
                        .clone()
                        .or_else(|| self.inner.options.handler.clone()),
                    &value,
                )
                .await?;
        }
    }

    /// Drop (with a warning) the tools whose `x-mcp-header` annotations are invalid, and remember
    /// the valid ones' annotations for `Mcp-Param-*` headers.
    fn filter_tools(&self, mut value: Value) -> Value {
        let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) else {
            return value;
        };
        let mut kept = Vec::with_capacity(tools.len());
        let mut era = self.inner.era.lock();
        for tool in tools.drain(..) {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            match header_annotations(&schema) {
                Ok(annotations) => {
                    if annotations.is_empty() {
                        era.tool_headers.remove(&name);
                    } else {
                        era.tool_headers.insert(name, annotations);
                    }
                    kept.push(tool);
                }
                Err(reason) => {
                    tracing::warn!(tool = %name, %reason, "mcp client: dropped a tool with an invalid x-mcp-header annotation");
                    era.tool_headers.remove(&name);
                }
            }
        }
        *tools = kept;
        value
    }
}
