//! The bearer-token gate of the JS server's `fetch` ([`crate::http::auth`]): `createMCPServer`'s
//! `auth` option describes the protected resource and gives the verifier, a JS function.
//!
//! ```js
//! createMCPServer({ name, version, tools, auth: {
//!   resource: 'https://mcp.example.com/mcp',
//!   authorizationServers: ['https://auth.example.com'],
//!   requiredScopes: ['mcp:tools'],
//!   // Who the token speaks for; `null` (or a throw / rejection) refuses it with 401.
//!   verify: async (token) => ({ subject: 'ada', clientId: 'app', scopes: ['mcp:tools'] }),
//! } })
//! ```

use js_sys::{Array, Function, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::convert::{from_js, to_js};
use crate::http::auth::{Authorizer, Identity, ResourceMetadata, TokenError, TokenVerifier};
use crate::wire::jsonrpc::ErrorObject;
use crate::BoxFuture;

/// A verifier that is a JS function `verify(token) → identity | null` (or a promise of one).
struct JsVerifier {
    verify: Function,
}

impl TokenVerifier for JsVerifier {
    fn verify(&self, token: &str) -> BoxFuture<'_, Result<Identity, TokenError>> {
        let called = self.verify.call1(&JsValue::NULL, &JsValue::from_str(token));
        Box::pin(async move {
            let value = match called {
                Ok(value) if value.is_instance_of::<Promise>() => {
                    JsFuture::from(value.unchecked_into::<Promise>()).await
                }
                other => other,
            };
            match value {
                Err(thrown) => Err(TokenError::Invalid(
                    Reflect::get(&thrown, &JsValue::from_str("message"))
                        .ok()
                        .and_then(|m| m.as_string())
                        .unwrap_or_else(|| "the verifier refused it".into()),
                )),
                Ok(v) if v.is_null() || v.is_undefined() || v == JsValue::FALSE => {
                    Err(TokenError::Invalid("the verifier refused it".into()))
                }
                Ok(v) => identity_from_js(&v)
                    .map_err(|e| TokenError::Invalid(format!("the verifier answered {e}"))),
            }
        })
    }
}

/// `{ subject?, clientId?, scopes?, claims? }` as an [`Identity`].
fn identity_from_js(value: &JsValue) -> Result<Identity, String> {
    let Value::Object(map) = from_js(value)? else {
        return Err("something that is not an identity object".into());
    };
    let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
    let scopes = match map.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => return Err("`scopes` that is not an array of strings".into()),
    };
    Ok(Identity {
        subject: text("subject"),
        client_id: text("clientId"),
        scopes,
        claims: map.get("claims").cloned().unwrap_or(Value::Null),
    })
}

/// The identity as JS: `{ subject, clientId, scopes, claims }`.
pub(crate) fn identity_to_js(identity: &Identity) -> JsValue {
    to_js(&serde_json::json!({
        "subject": identity.subject,
        "clientId": identity.client_id,
        "scopes": identity.scopes,
        "claims": identity.claims,
    }))
}

fn bad(path: &str, what: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("{path} {what}"))
        .with_data(serde_json::json!({ "path": path }))
}

fn strings(object: &JsValue, key: &str, required: bool) -> Result<Vec<String>, ErrorObject> {
    let at = format!("options.auth.{key}");
    let Some(value) = super::convert::member_at(object, key, &at)? else {
        return if required {
            Err(bad(&at, "is required"))
        } else {
            Ok(Vec::new())
        };
    };
    let Some(array) = value.dyn_ref::<Array>() else {
        return Err(bad(&at, "must be an array of strings"));
    };
    array
        .iter()
        .map(|v| {
            v.as_string()
                .ok_or_else(|| bad(&at, "must be an array of strings"))
        })
        .collect()
}

/// Read `options.auth` (`undefined`: no gate).
///
/// # Errors
/// `-32602` naming the member for a malformed option.
pub(crate) fn authorizer_from_js(options: &JsValue) -> Result<Option<Authorizer>, ErrorObject> {
    let Some(auth) = super::convert::member(options, "auth", "options")? else {
        return Ok(None);
    };
    if !auth.is_object() {
        return Err(bad("options.auth", "must be an object"));
    }
    let resource = super::convert::member(&auth, "resource", "options.auth")?
        .and_then(|v| v.as_string())
        .ok_or_else(|| {
            bad(
                "options.auth.resource",
                "must be a string (this server's URL)",
            )
        })?;
    let verify = super::convert::member(&auth, "verify", "options.auth")?
        .and_then(|v| v.dyn_into::<Function>().ok())
        .ok_or_else(|| bad("options.auth.verify", "must be a function"))?;
    let metadata = ResourceMetadata {
        resource,
        authorization_servers: strings(&auth, "authorizationServers", true)?,
        scopes_supported: strings(&auth, "scopesSupported", false)?,
        required_scopes: strings(&auth, "requiredScopes", false)?,
    };
    // Named in every challenge and the metadata document: a URL a client can use.
    if let Err((field, why)) = metadata.check_urls() {
        let field = field.replace("authorization_servers", "authorizationServers");
        return Err(bad(&format!("options.auth.{field}"), why));
    }
    Ok(Some(Authorizer::new(metadata, JsVerifier { verify })))
}
