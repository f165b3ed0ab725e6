//! The client side of the dual-era protocol: which era to speak ([`ClientEra`]), the probe that
//! picks one, and the 2026-07-28 request envelope (per-request `_meta`, the HTTP headers
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`, the `-32022` retry and
//! `resultType` handling). Transport-agnostic: the HTTP transport receives the headers through
//! [`ClientTransport::send_modern`](crate::client::ClientTransport::send_modern); stdio,
//! WebSocket and the wasm transports ignore them.
//!
//! Sources: `../shared/SPEC-2026-07-28.md` §2.2 (the `_meta` envelope), §2.5 (auto mode, probe
//! and fallback), §3.2–3.3 (headers, `x-mcp-header`), §4 (results).
//!
//! ```text
//!  connect ─► Legacy: initialize handshake
//!          ─► Modern: server/discover (retry once on -32022) ─► version from supportedVersions
//!          ─► Auto:   server/discover ─► result / modern error ─► Modern
//!                                    └─► HTTP 400/404/405 without a modern error,
//!                                        stdio/WS: another error or a timeout ─► initialize
//! ```

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::client::{ClientError, McpClient, Phase, RequestOptions};
use crate::era::{
    encode_header_value, header_text, Era, HEADER_MISMATCH, META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO, META_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::jsonrpc::{ErrorCode, ErrorObject, JsonRpcNotification};

/// How long the auto-mode probe waits for `server/discover` on stdio and WebSocket before it
/// falls back to `initialize` (capped by the client's own deadline): 10 000 ms.
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 10_000;

/// Which protocol era a client speaks (`--era auto|legacy|modern` on the command line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClientEra {
    /// Probe with `server/discover` (a modern first request); fall back to the `initialize`
    /// handshake only on the signals of §2.5. The default.
    #[default]
    Auto,
    /// 2026-07-28 only: no handshake; every request carries its own `_meta`.
    Modern,
    /// The `initialize` handshake (2025-11-25 and earlier), no probe.
    Legacy,
}

impl fmt::Display for ClientEra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientEra::Auto => "auto",
            ClientEra::Modern => "modern",
            ClientEra::Legacy => "legacy",
        })
    }
}

impl FromStr for ClientEra {
    type Err = String;

    /// `auto`, `modern` or `legacy` (ASCII case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(ClientEra::Auto),
            "modern" => Ok(ClientEra::Modern),
            "legacy" => Ok(ClientEra::Legacy),
            other => Err(format!(
                "unknown era {other:?}: expected auto, legacy or modern"
            )),
        }
    }
}

/// The negotiated modern state of one connection.
#[derive(Default)]
pub(crate) struct EraState {
    inner: Mutex<EraInner>,
}

#[derive(Default)]
struct EraInner {
    /// The era `connect` settled on (kept across reconnects: the per-transport era cache).
    era: Option<Era>,
    /// The modern protocol version in use.
    version: Option<String>,
    /// The last `server/discover` result.
    discover: Option<Value>,
    /// `x-mcp-header` annotations of the listed tools: tool name → `(header suffix, path)`.
    tool_headers: HashMap<String, Vec<(String, Vec<String>)>>,
    /// Cached complete results of cacheable methods (`ttlMs` > 0): key → (result, expiry in ms
    /// of the client's clock).
    cache: HashMap<String, (Value, u64)>,
    /// Open listen streams: listen request id → their notification channel.
    subscriptions: HashMap<i64, futures::channel::mpsc::UnboundedSender<JsonRpcNotification>>,
}

impl EraState {
    fn lock(&self) -> MutexGuard<'_, EraInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn era(&self) -> Option<Era> {
        self.lock().era
    }

    pub(crate) fn subscribe(
        &self,
        id: i64,
        tx: futures::channel::mpsc::UnboundedSender<JsonRpcNotification>,
    ) {
        self.lock().subscriptions.insert(id, tx);
    }

    pub(crate) fn unsubscribe(&self, id: i64) {
        self.lock().subscriptions.remove(&id);
    }

    /// A fresh cached result for this key at `now` (ms); none without a clock.
    fn cached(&self, key: &str, now: Option<u64>) -> Option<Value> {
        let now = now?;
        let mut inner = self.lock();
        match inner.cache.get(key) {
            Some((value, expiry)) if now < *expiry => Some(value.clone()),
            Some(_) => {
                inner.cache.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keep a complete result for its `ttlMs` from `now` (ms; a missing or zero TTL, or no
    /// clock, keeps nothing).
    fn store(&self, key: String, value: &Value, now: Option<u64>) {
        let ttl = value.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        let Some(now) = now.filter(|_| ttl > 0) else {
            return;
        };
        let mut inner = self.lock();
        if inner.cache.len() >= MAX_CACHE_ENTRIES {
            inner.cache.clear();
        }
        inner
            .cache
            .insert(key, (value.clone(), now.saturating_add(ttl)));
    }

    /// Drop cached results a change notification makes stale.
    fn invalidate(&self, method: &str) {
        let stale: &[&str] = match method {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            "notifications/resources/list_changed" => {
                &["resources/list", "resources/templates/list"]
            }
            "notifications/resources/updated" => &["resources/read"],
            _ => return,
        };
        self.lock()
            .cache
            .retain(|key, _| !stale.iter().any(|m| key.starts_with(&format!("{m} "))));
    }

    /// Hand a notification tagged with a listen id (or a server `notifications/cancelled` for
    /// one) to that subscription; change notifications invalidate the cache.
    pub(crate) fn route(&self, notification: &JsonRpcNotification) {
        self.invalidate(&notification.method);
        let params = notification.params.as_ref();
        let id = if notification.method == "notifications/cancelled" {
            params.and_then(|p| p.get("requestId"))
        } else {
            params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(crate::era::META_SUBSCRIPTION_ID))
        };
        let Some(id) = id.and_then(Value::as_i64) else {
            return;
        };
        let inner = self.lock();
        if let Some(tx) = inner.subscriptions.get(&id) {
            let _ = tx.unbounded_send(notification.clone());
        }
    }

    pub(crate) fn modern_version(&self) -> Option<String> {
        let inner = self.lock();
        (inner.era == Some(Era::Modern))
            .then(|| inner.version.clone())
            .flatten()
    }
}

/// The most cached results a client keeps (the cache is emptied when it is full).
pub const MAX_CACHE_ENTRIES: usize = 256;

/// The methods whose complete results the client caches for their `ttlMs` (§6.1; not
/// `server/discover`, which `connect` re-runs).
pub const CACHED_METHODS: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Whether a JSON-RPC error code is one only a 2026-07-28 server sends (`-32020`, `-32021`,
/// `-32022`): proof of a modern peer.
pub fn is_modern_error(code: ErrorCode) -> bool {
    code == HEADER_MISMATCH
        || code == MISSING_REQUIRED_CLIENT_CAPABILITY
        || code == UNSUPPORTED_PROTOCOL_VERSION
}

/// The modern version to retry with after a `-32022`: the first of `data.supported` this crate
/// speaks on the modern wire.
pub fn pick_version(error: &ErrorObject) -> Option<String> {
    error
        .data
        .as_ref()?
        .get("supported")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|v| MODERN_PROTOCOL_VERSIONS.contains(v))
        .map(str::to_owned)
}

/// What a probe's failure says about the server's era (§2.5).
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeVerdict {
    /// A modern server: stay modern (retry with this version when it is `Some`).
    Modern(Option<String>),
    /// A handshake-era server: fall back to `initialize`.
    Legacy,
    /// Neither: surface the error (e.g. 401, a refused connection).
    Fail,
}

/// Classify a failed probe (`server/discover`, the modern first request).
///
/// - HTTP (`http` true): a status 400 with `-32020`/`-32021`/`-32022`, or 404 with `-32601`, is
///   modern; any other 400, 404 or 405 is legacy; a JSON-RPC error in a 2xx reply is modern for
///   the three modern codes, legacy otherwise; everything else (401, 403, 5xx, a connection
///   failure, a timeout) fails.
/// - stdio / WebSocket: a modern error code is modern; any other JSON-RPC error, or a timeout,
///   is legacy; a closed transport fails.
pub fn classify_probe(error: &ClientError, http: bool) -> ProbeVerdict {
    let modern = |e: &ErrorObject| {
        if e.code == UNSUPPORTED_PROTOCOL_VERSION {
            match pick_version(e) {
                Some(v) => ProbeVerdict::Modern(Some(v)),
                // Only handshake-era versions in common: that is the initialize flow.
                None => ProbeVerdict::Legacy,
            }
        } else {
            ProbeVerdict::Modern(None)
        }
    };
    match error {
        ClientError::HttpStatus { status, error, .. } => match (status, error) {
            (400, Some(e)) if is_modern_error(e.code) => modern(e),
            (404, Some(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => ProbeVerdict::Modern(None),
            (400 | 404 | 405, _) => ProbeVerdict::Legacy,
            _ => ProbeVerdict::Fail,
        },
        ClientError::Rpc(e) if is_modern_error(e.code) => modern(e),
        ClientError::Rpc(_) => ProbeVerdict::Legacy,
        ClientError::Timeout { .. } if !http => ProbeVerdict::Legacy,
        _ => ProbeVerdict::Fail,
    }
}

/// The per-request `_meta` fields: `protocolVersion`, `clientCapabilities` (`{}` when none) and
/// `clientInfo`.
pub fn request_meta(version: &str, capabilities: &Value, info: &Value) -> Map<String, Value> {
    let capabilities = match capabilities {
        Value::Object(_) => capabilities.clone(),
        _ => json!({}),
    };
    let mut meta = Map::new();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
    meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities);
    meta.insert(META_CLIENT_INFO.into(), info.clone());
    meta
}

/// `params` with the modern fields merged into `params._meta` (other `_meta` keys such as
/// `progressToken` are kept; ours win).
///
/// # Errors
/// [`ClientError::InvalidArguments`] when `params` is neither an object nor absent.
pub fn with_meta(params: Option<Value>, meta: &Map<String, Value>) -> Result<Value, ClientError> {
    let mut params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ClientError::InvalidArguments(format!(
                "request params must be a JSON object, not {other}"
            )))
        }
    };
    let entry = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(existing) = entry {
        for (k, v) in meta {
            existing.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(params))
}

/// The HTTP headers of a modern request (§3.2–3.3): `MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name` (`tools/call`, `prompts/get`: the name; `resources/read`: the uri) and one
/// `Mcp-Param-{Name}` per `x-mcp-header` annotated argument that is present and not null, with
/// the `=?base64?…?=` encoding where a value needs it.
pub fn request_headers(
    method: &str,
    params: &Value,
    version: &str,
    annotations: &[(String, Vec<String>)],
) -> Vec<(String, String)> {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(name) = name_key.and_then(|k| params.get(k)).and_then(Value::as_str) {
        headers.push(("Mcp-Name".to_owned(), encode_header_value(name)));
    }
    if method == "tools/call" {
        let args = params.get("arguments").unwrap_or(&Value::Null);
        for (suffix, path) in annotations {
            let value = path.iter().try_fold(args, |v, key| v.get(key));
            if let Some(text) = value.and_then(header_text) {
                headers.push((format!("Mcp-Param-{suffix}"), encode_header_value(&text)));
            }
        }
    }
    headers
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Check a tool's `x-mcp-header` annotations against §3.3 and return them as
/// `(header suffix, property path)`: each is a non-empty RFC 9110 token, unique
/// case-insensitively, on a `string`, `integer` or `boolean` property reachable only through
/// `properties` chains.
///
/// # Errors
/// Why the tool is invalid (the client then drops it from `tools/list`).
pub fn header_annotations(schema: &Value) -> Result<Vec<(String, Vec<String>)>, String> {
    fn walk(
        schema: &Value,
        path: &mut Vec<String>,
        reachable: bool,
        out: &mut Vec<(String, Vec<String>)>,
    ) -> Result<(), String> {
        match schema {
            Value::Object(map) => {
                if let Some(annotation) = map.get("x-mcp-header") {
                    if !reachable || path.is_empty() {
                        return Err(format!(
                            "x-mcp-header at {:?} is not reachable through `properties` alone",
                            path.join(".")
                        ));
                    }
                    let name = annotation
                        .as_str()
                        .ok_or_else(|| format!("x-mcp-header {annotation} is not a string"))?;
                    if name.is_empty() {
                        return Err("an empty x-mcp-header".into());
                    }
                    if !name.chars().all(is_tchar) {
                        return Err(format!("x-mcp-header {name:?} is not an HTTP token"));
                    }
                    match map.get("type").and_then(Value::as_str) {
                        Some("string" | "integer" | "boolean") => {}
                        other => {
                            return Err(format!(
                                "x-mcp-header {name:?} is on a property of type {}, not string, integer or boolean",
                                other.map_or_else(|| "(none)".to_owned(), str::to_owned)
                            ))
                        }
                    }
                    if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                        return Err(format!("x-mcp-header {name:?} is not unique"));
                    }
                    out.push((name.to_owned(), path.clone()));
                }
                for (key, value) in map {
                    if key == "properties" {
                        if let Value::Object(props) = value {
                            for (name, prop) in props {
                                path.push(name.clone());
                                walk(prop, path, reachable, out)?;
                                path.pop();
                            }
                        }
                    } else if key != "x-mcp-header"
                        && key != "const"
                        && key != "default"
                        && key != "enum"
                        && key != "examples"
                    {
                        path.push(format!("[{key}]"));
                        walk(value, path, false, out)?;
                        path.pop();
                    }
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter()
                .try_for_each(|item| walk(item, path, false, out)),
            _ => Ok(()),
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut out)?;
    Ok(out)
}

/// Whether a result completes its request: `resultType` absent or `"complete"` → `Ok(true)`;
/// `"input_required"` → `Ok(false)`.
///
/// # Errors
/// [`ClientError::InvalidResponse`] for any other `resultType` (§4: unknown values are invalid).
pub fn is_complete(result: &Value) -> Result<bool, ClientError> {
    match result.get("resultType") {
        None | Some(Value::Null) => Ok(true),
        Some(Value::String(s)) if s == "complete" => Ok(true),
        Some(Value::String(s)) if s == "input_required" => Ok(false),
        Some(other) => Err(ClientError::InvalidResponse(format!(
            "unknown resultType {other}"
        ))),
    }
}

/// Remove the per-result envelope (`_meta["io.modelcontextprotocol/serverInfo"]`, and `_meta`
/// when nothing else is left) so a result reads the same in both eras (a bridge re-serving it
/// must not pass the remote server's identity on as its own).
pub fn strip_envelope(mut value: Value) -> Value {
    if let Some(map) = value.as_object_mut() {
        let empty = match map.get_mut("_meta") {
            Some(Value::Object(meta)) => {
                meta.remove(crate::era::META_SERVER_INFO);
                meta.is_empty()
            }
            _ => false,
        };
        if empty {
            map.remove("_meta");
        }
    }
    value
}

/// The methods whose results may be `input_required` (its home: [`crate::mrtr::MRTR_METHODS`]).
pub use crate::mrtr::MRTR_METHODS;

impl McpClient {
    /// The era this client settled on, once connected.
    pub fn era(&self) -> Option<Era> {
        self.inner.era.era()
    }

    /// The server's `server/discover` result, when the client connected in the modern era.
    pub fn discover_result(&self) -> Option<Value> {
        self.inner.era.lock().discover.clone()
    }

    fn capabilities(&self) -> Value {
        self.inner
            .options
            .handler
            .as_ref()
            .map_or_else(|| json!({}), |h| h.capabilities())
    }

    /// Settle the era (the `connect` step after the transport started).
    pub(crate) async fn negotiate(&self) -> Result<(), ClientError> {
        let cached = self.inner.era.era();
        let mode = match (self.inner.options.era, cached) {
            (ClientEra::Auto, Some(Era::Legacy)) | (ClientEra::Legacy, _) => {
                return self.legacy_handshake().await
            }
            (ClientEra::Auto, Some(Era::Modern)) => ClientEra::Modern,
            (mode, _) => mode,
        };
        let http = self.inner.transport.uses_headers();
        let probe_timeout = if mode == ClientEra::Auto && !http {
            self.inner
                .options
                .timeout
                .min(Duration::from_millis(DEFAULT_PROBE_TIMEOUT_MS))
        } else {
            self.inner.options.timeout
        };
        let mut version = MODERN_PROTOCOL_VERSION.to_owned();
        let mut retried = false;
        loop {
            match self.discover_with(&version, probe_timeout).await {
                Ok(result) if !result.get("supportedVersions").is_some_and(Value::is_array) => {
                    // Not a DiscoverResult: some other peer answered (e.g. a script that
                    // replies to whatever comes first).
                    if mode == ClientEra::Auto {
                        tracing::debug!("mcp client: server/discover returned no supportedVersions; falling back to initialize");
                        return self.legacy_handshake().await;
                    }
                    return Err(ClientError::InvalidResponse(
                        "the server/discover result has no supportedVersions array".into(),
                    ));
                }
                Ok(result) => {
                    let supported: Vec<String> = result
                        .get("supportedVersions")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
                    if !supported.is_empty() && !supported.contains(&version) {
                        if let Some(v) = supported
                            .iter()
                            .find(|v| MODERN_PROTOCOL_VERSIONS.contains(&v.as_str()))
                        {
                            version = v.clone();
                        } else if mode == ClientEra::Auto {
                            return self.legacy_handshake().await;
                        } else {
                            return Err(ClientError::UnsupportedVersion {
                                version: supported.join(", "),
                                supported: MODERN_PROTOCOL_VERSIONS.join(", "),
                            });
                        }
                    }
                    return self.enter_modern(version, Some(result));
                }
                Err(error) => {
                    let verdict = classify_probe(&error, http);
                    match (verdict, mode) {
                        (ProbeVerdict::Modern(Some(v)), _) if !retried => {
                            retried = true;
                            version = v;
                        }
                        (ProbeVerdict::Modern(_), _)
                            if error.code() != Some(UNSUPPORTED_PROTOCOL_VERSION) =>
                        {
                            // A modern server whose discover failed otherwise: speak modern anyway.
                            return self.enter_modern(version, None);
                        }
                        (ProbeVerdict::Legacy, ClientEra::Auto) => {
                            tracing::debug!(%error, "mcp client: the server is not modern; falling back to initialize");
                            return self.legacy_handshake().await;
                        }
                        (ProbeVerdict::Legacy, _)
                            if error.code() == Some(UNSUPPORTED_PROTOCOL_VERSION) =>
                        {
                            return Err(ClientError::UnsupportedVersion {
                                version: format!("{error}"),
                                supported: MODERN_PROTOCOL_VERSIONS.join(", "),
                            })
                        }
                        _ => return Err(error),
                    }
                }
            }
        }
    }

    async fn legacy_handshake(&self) -> Result<(), ClientError> {
        self.handshake().await?;
        tracing::debug!("mcp client: speaking the handshake era");
        let mut era = self.inner.era.lock();
        era.era = Some(Era::Legacy);
        era.version = None;
        Ok(())
    }

    fn enter_modern(&self, version: String, discover: Option<Value>) -> Result<(), ClientError> {
        tracing::debug!(%version, "mcp client: speaking the stateless era");
        {
            let mut era = self.inner.era.lock();
            era.era = Some(Era::Modern);
            era.version = Some(version);
            era.discover = discover;
        }
        let mut state = self.inner.lock();
        if let Phase::Closed(cause) = &state.phase {
            return Err(ClientError::closed(cause.clone()));
        }
        state.phase = Phase::Connected;
        Ok(())
    }

    async fn discover_with(&self, version: &str, timeout: Duration) -> Result<Value, ClientError> {
        let params = with_meta(None, &self.meta(version))?;
        let headers = self
            .inner
            .transport
            .uses_headers()
            .then(|| request_headers("server/discover", &params, version, &[]));
        self.inner
            .request_with(
                "server/discover",
                Some(params),
                &RequestOptions {
                    timeout: Some(timeout),
                    ..RequestOptions::default()
                },
                headers,
            )
            .await
    }

    pub(crate) fn meta(&self, version: &str) -> Map<String, Value> {
        let info = serde_json::to_value(&self.inner.options.info).unwrap_or_else(|_| json!({}));
        request_meta(version, &self.capabilities(), &info)
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
                    "request params must be a JSON object, not {other}"
                )))
            }
        };
        let http = self.inner.transport.uses_headers();
        // Cache key: the method and the params that shape the result (§6.1).
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
            let params = with_meta(Some(Value::Object(params)), &self.meta(&version))?;
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
            if is_complete(&value)? {
                let value = strip_envelope(value);
                let value = if method == "tools/list" && http {
                    self.filter_tools(value)
                } else {
                    value
                };
                // Never cache the result of a retry that carried inputs (§6.1).
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
                .answer(self.inner.options.handler.clone(), &value)
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

#[cfg(test)]
#[path = "era_tests.rs"]
mod scripted;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_parse() {
        assert_eq!("AUTO".parse::<ClientEra>(), Ok(ClientEra::Auto));
        assert_eq!("modern".parse::<ClientEra>(), Ok(ClientEra::Modern));
        assert_eq!("legacy".parse::<ClientEra>(), Ok(ClientEra::Legacy));
        assert!("new".parse::<ClientEra>().is_err());
        assert_eq!(ClientEra::default().to_string(), "auto");
    }

    #[test]
    fn headers_follow_the_method_and_encode() {
        let params = json!({"name":"my-hyphenated-tool","arguments":{"region":"us-west1","p":42,"v":false,"e":"","n":null,"u":"Hello, 世界","w":" padded ","i":"us west 1","f":3.5}});
        let ann = |s: &str, p: &str| (s.to_owned(), vec![p.to_owned()]);
        let headers = request_headers(
            "tools/call",
            &params,
            "2026-07-28",
            &[
                ann("Region", "region"),
                ann("Priority", "p"),
                ann("Verbose", "v"),
                ann("Empty", "e"),
                ann("Null", "n"),
                ann("Unicode", "u"),
                ann("Padded", "w"),
                ann("Inner", "i"),
                ann("Absent", "zz"),
            ],
        );
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(get("Mcp-Method"), Some("tools/call"));
        assert_eq!(get("Mcp-Name"), Some("my-hyphenated-tool"));
        assert_eq!(get("Mcp-Param-Region"), Some("us-west1"));
        assert_eq!(get("Mcp-Param-Priority"), Some("42"));
        assert_eq!(get("Mcp-Param-Verbose"), Some("false"));
        assert_eq!(get("Mcp-Param-Empty"), Some(""));
        assert_eq!(get("Mcp-Param-Null"), None);
        assert_eq!(get("Mcp-Param-Absent"), None);
        assert_eq!(
            get("Mcp-Param-Unicode"),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(get("Mcp-Param-Padded"), Some("=?base64?IHBhZGRlZCA=?="));
        assert_eq!(get("Mcp-Param-Inner"), Some("us west 1"));
        let read = request_headers(
            "resources/read",
            &json!({"uri":"file:///a%20b.txt"}),
            "v",
            &[],
        );
        assert_eq!(
            read[2],
            ("Mcp-Name".to_owned(), "file:///a%20b.txt".to_owned())
        );
        let list = request_headers("tools/list", &json!({}), "v", &[]);
        assert_eq!(list.len(), 2);
        let prompt = request_headers("prompts/get", &json!({"name":" p "}), "v", &[]);
        assert_eq!(prompt[2].1, "=?base64?IHAg?=");
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let tool = |prop: Value| json!({"type":"object","properties":{"a": prop}});
        let ok = header_annotations(&json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "query":{"type":"string"}}}))
        .unwrap();
        assert_eq!(
            ok,
            vec![
                ("Region".to_owned(), vec!["region".to_owned()]),
                ("N".to_owned(), vec!["nested".to_owned(), "n".to_owned()])
            ]
        );
        for bad in [
            tool(json!({"type":"string","x-mcp-header":""})),
            tool(json!({"type":"object","x-mcp-header":"Obj"})),
            tool(json!({"type":"array","x-mcp-header":"Arr"})),
            tool(json!({"type":"null","x-mcp-header":"Nul"})),
            tool(json!({"type":"number","x-mcp-header":"Num"})),
            tool(json!({"type":"string","x-mcp-header":"Has Space"})),
            tool(json!({"type":"string","x-mcp-header":"Has:Colon"})),
            tool(json!({"type":"string","x-mcp-header":"Ünï"})),
            tool(json!({"type":"string","x-mcp-header":"Ctl\u{1}"})),
            tool(json!({"type":"string","x-mcp-header":7})),
            tool(json!({"type":"array","items":{"type":"string","x-mcp-header":"Item"}})),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}),
            json!({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"X"}}}]}),
        ] {
            assert!(header_annotations(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn probe_failures_are_classified() {
        let rpc = |code: i32| ErrorObject::new(ErrorCode(code), "x");
        let http = |status: u16, error: Option<ErrorObject>| ClientError::HttpStatus {
            status,
            error,
            detail: String::new(),
        };
        let v22 = rpc(-32022).with_data(json!({"supported":["2026-07-28"],"requested":"x"}));
        assert_eq!(
            classify_probe(&http(400, Some(v22.clone())), true),
            ProbeVerdict::Modern(Some("2026-07-28".into()))
        );
        assert_eq!(
            classify_probe(&http(400, Some(rpc(-32020))), true),
            ProbeVerdict::Modern(None)
        );
        assert_eq!(
            classify_probe(&http(404, Some(rpc(-32601))), true),
            ProbeVerdict::Modern(None)
        );
        assert_eq!(
            classify_probe(&http(400, Some(rpc(-32000))), true),
            ProbeVerdict::Legacy
        );
        assert_eq!(classify_probe(&http(400, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(404, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(405, None), true), ProbeVerdict::Legacy);
        assert_eq!(classify_probe(&http(401, None), true), ProbeVerdict::Fail);
        assert_eq!(classify_probe(&http(500, None), true), ProbeVerdict::Fail);
        let timeout = ClientError::Timeout {
            method: "server/discover".into(),
            timeout_ms: 1,
        };
        assert_eq!(classify_probe(&timeout, true), ProbeVerdict::Fail);
        assert_eq!(classify_probe(&timeout, false), ProbeVerdict::Legacy);
        assert_eq!(
            classify_probe(&ClientError::Rpc(rpc(-32601)), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::Rpc(rpc(-32602)), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::Rpc(v22), false),
            ProbeVerdict::Modern(Some("2026-07-28".into()))
        );
        let legacy_only = rpc(-32022).with_data(json!({"supported":["2025-11-25"]}));
        assert_eq!(
            classify_probe(&ClientError::Rpc(legacy_only), false),
            ProbeVerdict::Legacy
        );
        assert_eq!(
            classify_probe(&ClientError::closed("gone"), false),
            ProbeVerdict::Fail
        );
    }

    #[test]
    fn result_types() {
        assert!(is_complete(&json!({})).unwrap());
        assert!(is_complete(&json!({"resultType":"complete"})).unwrap());
        assert!(!is_complete(&json!({"resultType":"input_required"})).unwrap());
        assert!(is_complete(&json!({"resultType":"task"})).is_err());
    }

    #[test]
    fn meta_is_merged() {
        let meta = request_meta(
            "2026-07-28",
            &Value::Null,
            &json!({"name":"c","version":"1"}),
        );
        let p = with_meta(Some(json!({"name":"t","_meta":{"progressToken":1}})), &meta).unwrap();
        assert_eq!(p["_meta"]["progressToken"], 1);
        assert_eq!(p["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(p["_meta"][META_CLIENT_CAPABILITIES], json!({}));
        assert!(with_meta(Some(json!([1])), &meta).is_err());
    }
}
