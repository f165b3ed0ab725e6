//! The `auth` option of `createFetchTransport`: the browser's host of the core's
//! [`AuthFlow`] (the role `native::client::oauth::OAuthClient` plays natively). The rules are the core's ([`crate::client::oauth`]); this file only performs
//! what the machine asks:
//!
//! | the machine asks | this host does |
//! |---|---|
//! | [`Action::Fetch`] | `fetch` with `redirect: 'manual'` (a redirect is not followed: in a browser it is an opaque answer, fed as a failure), 1 MiB, 15 s |
//! | [`Action::Authorize`] | `auth.signIn(url)`, whose promise resolves to the URL the authorization server redirected to (the redirect URI with `code`, `state`, `iss`) |
//! | [`Action::Ready`] | `auth.save(credentials)` (a token store: issuer, client, tokens), the token to the exchange |
//! | [`Action::Failed`] | the reason to the client's `error` listeners; the `401` is read as is |
//!
//! `auth.load()` restores what was kept when the transport is created; the live token goes
//! with every request ([`AuthFlow::current`], on `Date.now()`). One round at a time: a `401`
//! during a round waits for it. A round runs to its end even when the request that started
//! it is dropped (a client deadline while the user signs in), so its tokens are still kept.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use crate::client::oauth::SIGN_IN_TIMEOUT;

use futures::future::{select, Either, FutureExt, LocalBoxFuture, Shared};
use js_sys::{Function, Promise, Reflect};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestInit, RequestRedirect, Response};

use crate::client::oauth::{
    Action, ApplicationType, AuthFlow, ClientRegistration, OAuthConfig, OAuthRequest,
    StoredCredentials, Tokens,
};
use crate::http::exchange::Challenge;
use crate::wasm::convert::{from_js, to_js};
use crate::wasm::{error_message, error_to_js};
use crate::wire::jsonrpc::ErrorObject;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (window, worker or node), looked up at each call.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

/// One request to an authorization server gets this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// An authorization server's answer is read up to this many bytes.
const MAX_ANSWER_BYTES: usize = 1 << 20;

type Round = Shared<LocalBoxFuture<'static, Result<String, String>>>;

/// The OAuth client of one fetch transport (cheap to clone).
#[derive(Clone)]
pub(super) struct BrowserAuth {
    inner: Rc<Inner>,
}

struct Inner {
    flow: RefCell<AuthFlow>,
    sign_in: Function,
    save: Option<Function>,
    fetch: Option<Function>,
    /// The round in progress, which a concurrent challenge joins.
    round: RefCell<Option<Round>>,
}

/// Seconds since the Unix epoch, by `Date.now()`.
fn now() -> u64 {
    (js_sys::Date::now() / 1000.0) as u64
}

/// An `MCPError` `-32602` naming the option at `path`.
fn bad(path: &str, what: &str) -> JsValue {
    error_to_js(
        &ErrorObject::invalid_params(format!("{path} {what}"))
            .with_data(serde_json::json!({ "path": path })),
    )
}

/// `object[key]` of `options.auth` (or `options.auth` itself): see
/// [`crate::wasm::convert::member`].
fn member(object: &JsValue, key: &str) -> Result<Option<JsValue>, JsValue> {
    let at = if key == "auth" {
        "options.auth".to_owned()
    } else {
        format!("options.auth.{key}")
    };
    crate::wasm::convert::member_at(object, key, &at).map_err(|e| error_to_js(&e))
}

fn text(object: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    match member(object, key)? {
        None => Ok(None),
        Some(v) => v
            .as_string()
            .map(Some)
            .ok_or_else(|| bad(&format!("options.auth.{key}"), "must be a string")),
    }
}

fn function(object: &JsValue, key: &str) -> Result<Option<Function>, JsValue> {
    match member(object, key)? {
        None => Ok(None),
        Some(v) => v
            .dyn_into::<Function>()
            .map(Some)
            .map_err(|_| bad(&format!("options.auth.{key}"), "must be a function")),
    }
}

impl BrowserAuth {
    /// Read `options.auth` for the MCP server at `server_url` (`None`: no sign-in), and
    /// restore what its `load` returns.
    ///
    /// # Errors
    /// An `MCPError` (`-32602`, `data.path`) naming a malformed member.
    pub(super) fn from_options(
        options: &JsValue,
        server_url: &str,
    ) -> Result<Option<BrowserAuth>, JsValue> {
        let Some(auth) = member(options, "auth")? else {
            return Ok(None);
        };
        if !auth.is_object() {
            return Err(bad("options.auth", "must be an object"));
        }
        let redirect_uri = text(&auth, "redirectUri")?.ok_or_else(|| {
            bad(
                "options.auth.redirectUri",
                "must be a string (where the authorization server sends the user back)",
            )
        })?;
        let sign_in = function(&auth, "signIn")?.ok_or_else(|| {
            bad(
                "options.auth.signIn",
                "must be a function (url) → Promise<redirect URL>",
            )
        })?;
        let mut config = OAuthConfig::authorization_code(server_url, redirect_uri);
        config.application_type = ApplicationType::Web;
        let client_secret = text(&auth, "clientSecret")?;
        config.client = match text(&auth, "clientId")? {
            Some(client_id) => Some(ClientRegistration {
                client_secret,
                ..ClientRegistration::public(client_id)
            }),
            None if client_secret.is_some() => {
                return Err(bad("options.auth.clientSecret", "needs clientId"))
            }
            None => None,
        };
        config.client_metadata_url = text(&auth, "clientMetadataUrl")?;
        if let Some(name) = text(&auth, "clientName")? {
            config.client_name = name;
        }
        config.scope = text(&auth, "scope")?;
        let load = function(&auth, "load")?;
        let save = function(&auth, "save")?;
        let fetch = function(&auth, "fetch")?;
        let mut flow = AuthFlow::new(config);
        if let Some(load) = load {
            match load.call0(&JsValue::UNDEFINED) {
                Ok(kept) if kept.is_undefined() || kept.is_null() => {}
                Ok(kept) => match credentials_from_js(&kept) {
                    Ok(kept) => flow.restore(kept),
                    // A damaged entry is read as none: the next 401 signs in again.
                    Err(e) => web_sys::console::warn_1(
                        &format!("createFetchTransport: auth.load returned {e}; ignored").into(),
                    ),
                },
                Err(thrown) => web_sys::console::warn_2(
                    &"createFetchTransport: auth.load threw; ignored".into(),
                    &thrown,
                ),
            }
        }
        Ok(Some(BrowserAuth {
            inner: Rc::new(Inner {
                flow: RefCell::new(flow),
                sign_in,
                save,
                fetch,
                round: RefCell::new(None),
            }),
        }))
    }

    /// The access token to send now, unless none is held or it expired.
    pub(super) fn current(&self) -> Option<String> {
        self.inner.flow.borrow().current(now()).map(str::to_owned)
    }

    /// A token for `challenge`: the round in progress, or a new one. It resolves to the
    /// token, or to why none came (never a secret, a code or a token).
    pub(super) fn authorize(&self, challenge: &Challenge) -> Round {
        if let Some(round) = self.inner.round.borrow().clone() {
            return round;
        }
        let inner = self.inner.clone();
        let challenge = challenge.clone();
        let round = async move {
            let result = obtain(&inner, &challenge).await;
            inner.round.borrow_mut().take();
            result
        }
        .boxed_local()
        .shared();
        *self.inner.round.borrow_mut() = Some(round.clone());
        let driven = round.clone();
        crate::wasm::spawn(async move {
            let _ = driven.await;
        });
        round
    }
}

/// One authorization round, from the challenge to a token.
async fn obtain(inner: &Inner, challenge: &Challenge) -> Result<String, String> {
    let mut action = inner.flow.borrow_mut().challenge(
        challenge.status,
        challenge.www_authenticate.as_deref(),
        now(),
    );
    loop {
        action = match action {
            Action::Fetch(request) => match perform(inner.fetch.as_ref(), &request).await {
                Ok((status, body)) => inner.flow.borrow_mut().fetched(status, &body),
                Err(e) => inner.flow.borrow_mut().fetch_failed(&e),
            },
            Action::Authorize(url) => {
                // Bounded: a `signIn` that never settles (a popup the user ignored) fails this
                // round, and a later challenge starts a new one.
                let signed_in = Box::pin(sign_in(&inner.sign_in, &url));
                let bound = Box::pin(crate::host::defaults::delay(SIGN_IN_TIMEOUT));
                let redirect = match select(signed_in, bound).await {
                    Either::Left((redirect, _)) => redirect?,
                    Either::Right(_) => {
                        return Err(format!(
                            "auth.signIn did not settle within {SIGN_IN_TIMEOUT:?}"
                        ))
                    }
                };
                inner.flow.borrow_mut().redirected(&redirect)
            }
            Action::Ready(token) => {
                let kept = inner.flow.borrow().credentials();
                if let (Some(save), Some(kept)) = (&inner.save, kept) {
                    call_save(save, &kept);
                }
                return Ok(token);
            }
            Action::Failed(e) => return Err(e.to_string()),
        };
    }
}

/// `signIn(url)`: the URL the authorization server redirected back to.
async fn sign_in(sign_in: &Function, url: &str) -> Result<String, String> {
    let called = sign_in
        .call1(&JsValue::UNDEFINED, &JsValue::from_str(url))
        .map_err(|e| format!("auth.signIn threw: {}", error_message(&e)))?;
    let redirect = JsFuture::from(Promise::resolve(&called))
        .await
        .map_err(|e| format!("the sign-in failed: {}", error_message(&e)))?;
    redirect.as_string().ok_or_else(|| {
        "auth.signIn must resolve to the URL the authorization server redirected to".into()
    })
}

fn call_save(save: &Function, kept: &StoredCredentials) {
    match save.call1(&JsValue::UNDEFINED, &credentials_to_js(kept)) {
        Ok(value) if value.is_instance_of::<Promise>() => {
            let promise: Promise = value.unchecked_into();
            crate::wasm::spawn(async move {
                if let Err(e) = JsFuture::from(promise).await {
                    web_sys::console::error_2(&"auth.save rejected".into(), &e);
                }
            });
        }
        Ok(_) => {}
        Err(e) => web_sys::console::error_2(&"auth.save threw".into(), &e),
    }
}

/// Perform one of the machine's requests: no redirect followed, the answer bounded, within
/// [`FETCH_TIMEOUT`]. Resolves to the status and body.
async fn perform(
    fetch: Option<&Function>,
    request: &OAuthRequest,
) -> Result<(u16, Vec<u8>), String> {
    let controller = AbortController::new().ok();
    let js_request = build(request, controller.as_ref()).map_err(|e| error_message(&e))?;
    let fetched = async move {
        let promise = match fetch {
            Some(fetch) => Promise::resolve(&fetch.call1(&JsValue::UNDEFINED, &js_request)?),
            None => global_fetch(&js_request),
        };
        let response: Response = JsFuture::from(promise).await?.dyn_into()?;
        // Read through `Reflect` (a custom `fetch`'s `Response` whose getter throws fails
        // the round, never an exception through the module).
        if Reflect::get(&response, &"type".into())?
            .as_string()
            .as_deref()
            == Some("opaqueredirect")
        {
            return Ok(None);
        }
        let (status, _) = super::fetch::response_head(&response)?;
        // Read as it streams, and stopped past the bound: a server that sends forever never
        // fills the page's memory.
        let mut body = Vec::new();
        if let Some(reader) = super::fetch::Reader::of(&response)? {
            while let Some(chunk) = reader.next().await? {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_ANSWER_BYTES {
                    reader.cancel();
                    break;
                }
            }
        }
        Ok::<_, JsValue>(Some((status, body)))
    };
    let fetched = Box::pin(fetched);
    match select(fetched, futures_timer::Delay::new(FETCH_TIMEOUT)).await {
        Either::Left((Ok(Some((status, body))), _)) if body.len() > MAX_ANSWER_BYTES => Err(
            format!("HTTP {status}: an answer over {MAX_ANSWER_BYTES} bytes"),
        ),
        Either::Left((Ok(Some(answer)), _)) => Ok(answer),
        Either::Left((Ok(None), _)) => Err("a redirect (not followed)".into()),
        Either::Left((Err(e), _)) => Err(error_message(&e)),
        Either::Right(_) => {
            if let Some(controller) = &controller {
                controller.abort();
            }
            // `Duration`'s `Debug` ("15s") without its decimal formatter.
            Err(format!("no answer within {}s", FETCH_TIMEOUT.as_secs()))
        }
    }
}

fn build(request: &OAuthRequest, controller: Option<&AbortController>) -> Result<Request, JsValue> {
    let headers = Headers::new()?;
    for (name, value) in &request.headers {
        headers.set(name, value)?;
    }
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_headers(&headers);
    init.set_redirect(RequestRedirect::Manual);
    if let Some(controller) = controller {
        init.set_signal(Some(&controller.signal()));
    }
    if !request.body.is_empty() {
        init.set_body(&JsValue::from_str(&String::from_utf8_lossy(&request.body)));
    }
    Request::new_with_str_and_init(&request.url, &init)
}

/// [`StoredCredentials`] in the JS names (`MCPStoredCredentials`): camelCase, `expiresAt` in
/// ms since the epoch (as `Date.now()`), absent members left out.
pub(super) fn credentials_to_js(kept: &StoredCredentials) -> JsValue {
    fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    let mut out = Map::new();
    out.insert("issuer".into(), kept.issuer.clone().into());
    put(
        &mut out,
        "clientId",
        kept.client_id.clone().map(Value::from),
    );
    put(
        &mut out,
        "clientSecret",
        kept.client_secret.clone().map(Value::from),
    );
    put(
        &mut out,
        "tokenEndpointAuthMethod",
        kept.token_endpoint_auth_method.clone().map(Value::from),
    );
    if let Some(tokens) = &kept.tokens {
        let mut t = Map::new();
        t.insert("accessToken".into(), tokens.access_token.clone().into());
        put(
            &mut t,
            "refreshToken",
            tokens.refresh_token.clone().map(Value::from),
        );
        put(
            &mut t,
            "expiresAt",
            tokens
                .expires_at
                .map(|s| Value::from(s.saturating_mul(1000))),
        );
        put(&mut t, "scope", tokens.scope.clone().map(Value::from));
        out.insert("tokens".into(), Value::Object(t));
    }
    to_js(&Value::Object(out))
}

/// `MCPStoredCredentials` back into [`StoredCredentials`].
///
/// # Errors
/// What is wrong with it.
pub(super) fn credentials_from_js(value: &JsValue) -> Result<StoredCredentials, String> {
    let Value::Object(map) = from_js(value)? else {
        return Err("something that is not an object".into());
    };
    fn string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("a {key} that is not a string")),
        }
    }
    let issuer = string(&map, "issuer")?.ok_or("no issuer")?;
    let tokens = match map.get("tokens") {
        None | Some(Value::Null) => None,
        Some(Value::Object(t)) => Some(Tokens {
            access_token: string(t, "accessToken")?.ok_or("tokens without an accessToken")?,
            refresh_token: string(t, "refreshToken")?,
            expires_at: match t.get("expiresAt") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_f64()
                        .filter(|ms| ms.is_finite() && *ms >= 0.0)
                        .map(|ms| (ms / 1000.0) as u64)
                        .ok_or("an expiresAt that is not ms since the epoch")?,
                ),
            },
            scope: string(t, "scope")?,
            dpop: false,
        }),
        Some(_) => return Err("tokens that are not an object".into()),
    };
    Ok(StoredCredentials {
        issuer,
        client_id: string(&map, "clientId")?,
        client_secret: string(&map, "clientSecret")?,
        token_endpoint_auth_method: string(&map, "tokenEndpointAuthMethod")?,
        tokens,
    })
}
