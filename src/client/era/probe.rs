//! Picking the era: `connect`'s negotiation (legacy handshake, modern `server/discover`, or the
//! auto-mode probe with its fallback) and the rules that read a probe's failure
//! ([spec: version negotiation](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).

use std::time::Duration;

use serde_json::Value;

use super::{request_headers, with_meta, ClientEra, DEFAULT_PROBE_TIMEOUT_MS};
use crate::client::{ClientError, McpClient, Phase, RequestOptions};
use crate::era::{
    Era, HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

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

/// What a probe's failure says about the server's era ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).
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
///   modern; any other 4xx is legacy (the spec falls back on any error that does not mark a
///   modern server: handshake-era servers refuse a request without a session with 400, 404, 405
///   or, as rmcp before 2026-07-28 did, `422 Unexpected message, expect initialize request`),
///   except 401 / 403 (authorization), 407, 408 and 429 (try again), which fail; a JSON-RPC error
///   in a 2xx reply is modern for the three modern codes, legacy otherwise; everything else (5xx,
///   a connection failure, a timeout) fails.
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
            (401 | 403 | 407 | 408 | 429, _) => ProbeVerdict::Fail,
            (400..=499, _) => ProbeVerdict::Legacy,
            _ => ProbeVerdict::Fail,
        },
        ClientError::Rpc(e) if is_modern_error(e.code) => modern(e),
        ClientError::Rpc(_) => ProbeVerdict::Legacy,
        ClientError::Timeout { .. } if !http => ProbeVerdict::Legacy,
        _ => ProbeVerdict::Fail,
    }
}

impl McpClient {
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
}
