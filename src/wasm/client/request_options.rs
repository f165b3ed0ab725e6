//! The per-request options of the JS client's calls (`MCPRequestOptions`): `timeout`,
//! `onProgress` and `logLevel`, as the core's [`RequestOptions`].

use std::sync::Arc;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::{bad, member, timeout_member};
use crate::client::{Progress, RequestOptions};
use crate::protocol::LogLevel;
use crate::wasm::error_to_js;
use crate::wire::jsonrpc::ErrorObject;

/// `{ progress, total?, message? }` for an `onProgress` listener.
fn progress_to_js(progress: &Progress) -> JsValue {
    let object = Object::new();
    let _ = Reflect::set(&object, &"progress".into(), &progress.progress.into());
    if let Some(total) = progress.total {
        let _ = Reflect::set(&object, &"total".into(), &total.into());
    }
    if let Some(message) = &progress.message {
        let _ = Reflect::set(&object, &"message".into(), &message.into());
    }
    object.into()
}

fn parse(options: &JsValue) -> Result<RequestOptions, ErrorObject> {
    let timeout = timeout_member(options, "timeout", "options")?;
    let on_progress = member(options, "onProgress", "options")?
        .map(|f| {
            f.dyn_into::<Function>()
                .map_err(|_| bad("options.onProgress", "must be a function"))
        })
        .transpose()?
        .map(|listener| -> crate::client::ProgressCallback {
            Arc::new(move |progress: &Progress| {
                if let Err(thrown) = listener.call1(&JsValue::UNDEFINED, &progress_to_js(progress))
                {
                    web_sys::console::error_2(
                        &"MCPClient: an onProgress listener threw".into(),
                        &thrown,
                    );
                }
            })
        });
    let log_level = member(options, "logLevel", "options")?
        .map(|v| {
            v.as_string()
                .as_deref()
                .and_then(LogLevel::from_name)
                .ok_or_else(|| {
                    bad(
                        "options.logLevel",
                        "must be a log level ('debug' … 'emergency')",
                    )
                })
        })
        .transpose()?;
    Ok(RequestOptions {
        timeout,
        on_progress,
        log_level,
        ..RequestOptions::default()
    })
}

/// Read a call's `options` (absent or not an object: the defaults).
///
/// # Errors
/// An `MCPError` (`-32602`, `data.path`) when `timeout` is not a number of ms ≥ 0,
/// `onProgress` not a function, or `logLevel` not a level name.
pub(super) fn request_options(options: Option<JsValue>) -> Result<RequestOptions, JsValue> {
    match options.filter(JsValue::is_object) {
        None => Ok(RequestOptions::default()),
        Some(options) => parse(&options).map_err(|e| error_to_js(&e)),
    }
}
