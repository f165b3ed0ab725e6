//! The `handlers` option of `createMCPClient`: JS functions behind the core
//! [`ClientHandler`], answering a server's `elicitation/create`, `sampling/createMessage` and
//! `roots/list` — as JSON-RPC requests in the handshake era, as input requests on the 2026-07-28
//! wire (a `tools/call` input round, or a task's `input_required` during `waitTask`). The
//! capabilities declared are those of the functions given (`elicit` → `elicitation.form`,
//! `createMessage` → `sampling`, `listRoots` → `roots`); the core checks each request's params
//! against the spec's schema before a function runs.

use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::{bad, member};
use crate::client::ClientHandler;
use crate::wasm::convert::{from_js, to_js};
use crate::wasm::error_message;
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

/// The JS functions of `options.handlers` (each optional).
pub(super) struct JsHandler {
    elicit: Option<Function>,
    create_message: Option<Function>,
    list_roots: Option<Function>,
}

impl JsHandler {
    /// Read `options.handlers`.
    ///
    /// # Errors
    /// `-32602` with `data.path` when it is not an object or a member is not a function.
    pub(super) fn from_js(handlers: &JsValue) -> Result<JsHandler, ErrorObject> {
        if !handlers.is_object() {
            return Err(bad("options.handlers", "must be an object"));
        }
        let function = |key: &str| {
            member(handlers, key, "options.handlers")?
                .map(|f| {
                    f.dyn_into::<Function>()
                        .map_err(|_| bad(&format!("options.handlers.{key}"), "must be a function"))
                })
                .transpose()
        };
        Ok(JsHandler {
            elicit: function("elicit")?,
            create_message: function("createMessage")?,
            list_roots: function("listRoots")?,
        })
    }
}

/// Call `f` with `params` (none for `roots/list`) and await what it returns (a value or a
/// promise). A throw or a rejection is `-32603` with its message; a missing function `-32601`.
fn run(
    f: Option<Function>,
    method: &'static str,
    params: Option<Value>,
) -> BoxFuture<'static, Result<Value, ErrorObject>> {
    Box::pin(async move {
        let Some(f) = f else {
            return Err(ErrorObject::method_not_found(method));
        };
        let failed = |thrown: JsValue| {
            ErrorObject::internal(format!(
                "the {method} handler failed: {}",
                error_message(&thrown)
            ))
        };
        let argument = params.as_ref().map_or(JsValue::UNDEFINED, to_js);
        let returned = f.call1(&JsValue::UNDEFINED, &argument).map_err(failed)?;
        let value = JsFuture::from(Promise::resolve(&returned))
            .await
            .map_err(failed)?;
        from_js(&value).map_err(|e| {
            ErrorObject::internal(format!("the {method} handler's answer is not JSON: {e}"))
        })
    })
}

impl ClientHandler for JsHandler {
    fn capabilities(&self) -> Value {
        let mut capabilities = json!({});
        if self.elicit.is_some() {
            capabilities["elicitation"] = json!({ "form": {} });
        }
        if self.create_message.is_some() {
            capabilities["sampling"] = json!({});
        }
        if self.list_roots.is_some() {
            capabilities["roots"] = json!({});
        }
        capabilities
    }

    fn create_message(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        run(
            self.create_message.clone(),
            "sampling/createMessage",
            Some(params),
        )
    }

    fn elicit(&self, params: Value) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        run(self.elicit.clone(), "elicitation/create", Some(params))
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        run(self.list_roots.clone(), "roots/list", None)
    }
}
