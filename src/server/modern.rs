//! The 2026-07-28 era in dispatch: `_meta` and version checks, the multi-round-trip round
//! (`inputResponses`, a sealed `requestState`), removed methods, and the decorated results of
//! `server/discover` and the cacheable methods
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).

use serde_json::{json, Map, Value};

use super::McpServer;
use crate::era::mrtr::{Round, MRTR_METHODS};
use crate::era::{self, Era};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcRequest};

impl McpServer {
    /// Validate a modern request's `_meta` and version, and set up its round ([versioning](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning), [MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
    pub(super) fn prepare_modern(
        &self,
        request: &JsonRpcRequest,
        ctx: &mut RequestContext,
    ) -> Result<(), ErrorObject> {
        let meta = era::parse_meta(request.params.as_ref())?;
        era::check_version(&meta, ctx.transport_version.as_deref())?;
        ctx.client_capabilities = Some(meta.client_capabilities);
        ctx.log_level = meta.log_level;
        if MRTR_METHODS.contains(&request.method.as_str()) {
            let params = request.params.as_ref();
            let responses = match params.and_then(|p| p.get("inputResponses")) {
                Some(Value::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            let name = era::expected_name(request).unwrap_or_default();
            let state = match params.and_then(|p| p.get("requestState")) {
                None | Some(Value::Null) => None,
                Some(Value::String(sealed)) => {
                    let now = self.inner.options.clock.as_ref().map(|c| c());
                    Some(self.open_state(sealed, &request.method, &name, now)?)
                }
                Some(_) => {
                    return Err(ErrorObject::invalid_params(
                        r#""requestState" must be a string"#,
                    ))
                }
            };
            ctx.round = Some(Round::new(responses, state));
        }
        Ok(())
    }

    /// Run a request in its era: modern requests lose the removed methods, may end in an
    /// input-required result, and have their results decorated ([changelog](https://modelcontextprotocol.io/specification/2026-07-28/changelog), [MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr), [caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).
    pub(super) async fn call_era(
        &self,
        request: JsonRpcRequest,
        ctx: RequestContext,
    ) -> Result<Value, ErrorObject> {
        if ctx.era != Era::Modern {
            return self.call(request, ctx).await;
        }
        let method = request.method.clone();
        if era::REMOVED_METHODS.contains(&method.as_str()) {
            return Err(ErrorObject::method_not_found(&method));
        }
        let round = ctx.round.clone();
        let name = era::expected_name(&request).unwrap_or_default();
        let outcome = self.call(request, ctx).await;
        if let Some(round) = round {
            let (requested, state) = round.take_requests();
            if !requested.is_empty() {
                let mut result = json!({ "resultType": "input_required", "inputRequests": Map::from_iter(requested) });
                if let Some(state) = state {
                    let now = self.inner.options.clock.as_ref().map_or(0, |c| c());
                    result["requestState"] = json!(self.seal_state(&state, &method, &name, now)?);
                }
                self.decorate(&method, &mut result);
                return Ok(result);
            }
        }
        match outcome {
            Ok(mut result) => {
                self.decorate(&method, &mut result);
                Ok(result)
            }
            // 2026-07-28 answers "resource not found" with -32602 (changelog m6).
            Err(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND => Err(ErrorObject {
                code: ErrorCode::INVALID_PARAMS,
                ..e
            }),
            Err(e) if e.code == ErrorCode::INPUT_REQUIRED => {
                Err(ErrorObject::internal("input required outside a round"))
            }
            Err(e) => Err(e),
        }
    }

    pub(super) fn decorate(&self, method: &str, result: &mut Value) {
        let info =
            serde_json::to_value(&self.inner.options.info).expect("implementation info serializes");
        era::decorate_result(method, result, &info, self.inner.options.cache_ttl_ms);
    }

    /// [`server/discover`](https://modelcontextprotocol.io/specification/2026-07-28/server/discover): versions, capabilities, instructions.
    pub(super) fn discover(&self) -> Value {
        let mut result = json!({
            "supportedVersions": era::supported_versions(),
            "capabilities": self.era_capabilities(Era::Modern),
        });
        if let Some(instructions) = &self.inner.options.instructions {
            result["instructions"] = json!(instructions);
        }
        self.decorate("server/discover", &mut result);
        result
    }
}
