//! The JS client's resources, prompts and logging calls over the core's
//! (`client/primitives.rs`): `listResources`, `listResourceTemplates`, `readResource`,
//! `subscribeResource`, `unsubscribeResource`, `listPrompts`, `getPrompt`, `setLoggingLevel`
//! and the `serverCapabilities` getter. The protocol (pagination, capability checks, params)
//! lives in the core; this file only turns JS values into its inputs and its outputs into JS
//! values.
//!
//! ```text
//!  listResources() ─► MCPResource[]            readResource(uri) ─► MCPReadResourceResult
//!  listResourceTemplates() ─► MCPResourceTemplate[]
//!  listPrompts() ─► MCPPrompt[]                getPrompt(name, args?) ─► MCPGetPromptResult
//!  subscribeResource(uri) / unsubscribeResource(uri) / setLoggingLevel(level) ─► void
//! ```

use std::future::Future;

use js_sys::Promise;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::{arguments, client_error_to_js, Client};
use crate::client::ClientError;
use crate::wasm::convert::to_js;

#[wasm_bindgen(typescript_custom_section)]
const TS_PRIMITIVES: &'static str = r#"
/** One `resources/list` entry. */
export interface MCPResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
/** One `resources/templates/list` entry (`uriTemplate` is an RFC 6570 URI template). */
export interface MCPResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
/** The `resources/read` result: text contents carry `text`, binary ones base64 `blob`. */
export interface MCPReadResourceResult {
  contents: { uri: string; mimeType?: string; text?: string; blob?: string; _meta?: Record<string, unknown> }[];
  _meta?: Record<string, unknown>;
}
/** One `prompts/list` entry. */
export interface MCPPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; title?: string; description?: string; required?: boolean }[];
  _meta?: Record<string, unknown>;
}
/** The `prompts/get` result. */
export interface MCPGetPromptResult {
  description?: string;
  messages: { role: 'user' | 'assistant'; content: MCPContent }[];
  _meta?: Record<string, unknown>;
}
/** A `logging/setLevel` level (RFC 5424 severities). */
export type MCPLoggingLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';
"#;

/// A core call as a promise of its JSON (`undefined` for `()`).
fn promise<T, F>(call: F) -> Promise
where
    T: serde::Serialize,
    F: Future<Output = Result<T, ClientError>> + 'static,
{
    crate::wasm::promise(async move {
        let value = call.await.map_err(|e| client_error_to_js(&e))?;
        Ok(match serde_json::to_value(value).unwrap_or_default() {
            Value::Null => JsValue::UNDEFINED,
            value => to_js(&value),
        })
    })
}

#[wasm_bindgen(js_class = MCPClient)]
impl Client {
    /// The server's declared capabilities, once connected: the `initialize` result's
    /// `capabilities` (handshake era) or `server/discover`'s (2026-07-28).
    #[wasm_bindgen(getter, js_name = serverCapabilities, unchecked_return_type = "Record<string, unknown> | undefined")]
    pub fn server_capabilities(&self) -> JsValue {
        self.core()
            .server_capabilities()
            .map_or(JsValue::UNDEFINED, |caps| to_js(&caps))
    }

    /// Run `resources/list` (following pages) and resolve to the resources.
    #[wasm_bindgen(js_name = listResources, unchecked_return_type = "Promise<MCPResource[]>")]
    pub fn list_resources(&self) -> Promise {
        let client = self.core().clone();
        promise(async move { client.list_resources().await })
    }

    /// Run `resources/templates/list` (following pages) and resolve to the templates.
    #[wasm_bindgen(js_name = listResourceTemplates, unchecked_return_type = "Promise<MCPResourceTemplate[]>")]
    pub fn list_resource_templates(&self) -> Promise {
        let client = self.core().clone();
        promise(async move { client.list_resource_templates().await })
    }

    /// Run `resources/read` and resolve to the whole result (`contents`).
    #[wasm_bindgen(js_name = readResource, unchecked_return_type = "Promise<MCPReadResourceResult>")]
    pub fn read_resource(&self, uri: String) -> Promise {
        let client = self.core().clone();
        promise(async move { client.read_resource(&uri).await })
    }

    /// Run `resources/subscribe`: `notifications/resources/updated` for `uri` then arrive as
    /// `'notification'` events. Rejects with `kind: 'not-declared'` when the server did not
    /// declare `resources.subscribe`.
    #[wasm_bindgen(js_name = subscribeResource, unchecked_return_type = "Promise<void>")]
    pub fn subscribe_resource(&self, uri: String) -> Promise {
        let client = self.core().clone();
        promise(async move { client.subscribe_resource(&uri).await })
    }

    /// Run `resources/unsubscribe` (`kind: 'not-declared'` as `subscribeResource`).
    #[wasm_bindgen(js_name = unsubscribeResource, unchecked_return_type = "Promise<void>")]
    pub fn unsubscribe_resource(&self, uri: String) -> Promise {
        let client = self.core().clone();
        promise(async move { client.unsubscribe_resource(&uri).await })
    }

    /// Run `prompts/list` (following pages) and resolve to the prompts.
    #[wasm_bindgen(js_name = listPrompts, unchecked_return_type = "Promise<MCPPrompt[]>")]
    pub fn list_prompts(&self) -> Promise {
        let client = self.core().clone();
        promise(async move { client.list_prompts().await })
    }

    /// Run `prompts/get` with string arguments (an object, or none) and resolve to the whole
    /// result (`description?`, `messages`). Rejects with `kind: 'invalid-arguments'` when
    /// `args` is not an object.
    #[wasm_bindgen(js_name = getPrompt, unchecked_return_type = "Promise<MCPGetPromptResult>")]
    pub fn get_prompt(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, string>")] args: Option<
            JsValue,
        >,
    ) -> Promise {
        let client = self.core().clone();
        let args = arguments(&args.unwrap_or(JsValue::UNDEFINED));
        crate::wasm::promise(async move {
            let result = client
                .get_prompt(&name, args?)
                .await
                .map_err(|e| client_error_to_js(&e))?;
            Ok(to_js(&result))
        })
    }

    /// Run `logging/setLevel`: the server's `notifications/message` at `level` or above then
    /// arrive as `'notification'` events. Rejects with `kind: 'not-declared'` when the server
    /// did not declare `logging`.
    #[wasm_bindgen(js_name = setLoggingLevel, unchecked_return_type = "Promise<void>")]
    pub fn set_logging_level(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MCPLoggingLevel")] level: String,
    ) -> Promise {
        let client = self.core().clone();
        promise(async move { client.set_logging_level(&level).await })
    }
}
