//! Multi round-trip requests (2026-07-28 `basic/patterns/mrtr`, SEP-2322), with no I/O: the
//! inputs a handler asked for in one round, the client's answers for the next, and the sealed
//! `requestState` that carries the handler's own state between rounds.
//!
//! `requestState` is `base64url(payload).base64url(HMAC-SHA256(secret, payload))` where the payload
//! binds the state to the method, the tool/prompt name or resource URI, and an expiry — so a
//! tampered, expired or transplanted state is rejected (`-32602`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;

use crate::wire::jsonrpc::{ErrorCode, ErrorObject};

/// How long a sealed `requestState` stays valid: 10 minutes, in ms.
pub const REQUEST_STATE_TTL_MS: u64 = 10 * 60 * 1000;

/// The methods that may answer with an input-required result ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
pub const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// One round of a modern request: the answers the client sent and what the handler asks next.
#[derive(Debug, Default)]
pub struct Round {
    responses: Map<String, Value>,
    state: Option<Value>,
    requested: Mutex<Vec<(String, Value)>>,
    next_state: Mutex<Option<Value>>,
    counter: AtomicUsize,
}

impl Round {
    pub(crate) fn new(responses: Map<String, Value>, state: Option<Value>) -> Arc<Round> {
        Arc::new(Round {
            responses,
            state,
            ..Round::default()
        })
    }

    pub(crate) fn next_key(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.counter.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// The answer under `key` when it has the shape `method`'s result needs; else the request is
    /// recorded for the input-required result.
    pub(crate) fn input(
        &self,
        key: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        if let Some(answer) = self.responses.get(key).filter(|a| well_formed(method, a)) {
            return Ok(answer.clone());
        }
        let mut requested = self.requested.lock().unwrap_or_else(|e| e.into_inner());
        if !requested.iter().any(|(k, _)| k == key) {
            requested.push((
                key.to_owned(),
                json!({ "method": method, "params": params }),
            ));
        }
        Err(ErrorObject::new(
            ErrorCode::INPUT_REQUIRED,
            format!("input required: {key}"),
        ))
    }

    /// The answer under `key`, when this round carries one with the shape `method` needs.
    pub(crate) fn answer(&self, key: &str, method: &str) -> Option<Value> {
        self.responses
            .get(key)
            .filter(|a| well_formed(method, a))
            .cloned()
    }

    pub(crate) fn state(&self) -> Option<&Value> {
        self.state.as_ref()
    }

    pub(crate) fn set_state(&self, state: Value) {
        *self.next_state.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
    }

    /// The input requests of this round, when the handler asked for any.
    pub(crate) fn take_requests(&self) -> (Vec<(String, Value)>, Option<Value>) {
        let requested =
            std::mem::take(&mut *self.requested.lock().unwrap_or_else(|e| e.into_inner()));
        let state = self
            .next_state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        (requested, state)
    }
}

/// Whether an input response has the shape of `method`'s result (ElicitResult needs an `action`,
/// CreateMessageResult `content`, ListRootsResult a `roots` array).
pub(crate) fn well_formed(method: &str, answer: &Value) -> bool {
    match method {
        "elicitation/create" => answer.get("action").is_some_and(Value::is_string),
        "sampling/createMessage" => answer.get("content").is_some(),
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => answer.is_object(),
    }
}

/// `-32602` "invalid requestState: {why}".
fn invalid(why: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("invalid requestState: {why}"))
}

/// A sealed state's payload and tag, decoded; `-32602` "malformed" when it is not two base64url
/// halves.
fn unseal(sealed: &str) -> Result<(Vec<u8>, Vec<u8>), ErrorObject> {
    let (payload, tag) = sealed.split_once('.').ok_or_else(|| invalid("malformed"))?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| invalid("malformed"))?;
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| invalid("malformed"))?;
    Ok((payload, tag))
}

/// What [`StateSealer::open`] answers a state sealed by no key it knows — without the key, the
/// HMAC or SHA-256: "malformed", or "integrity check failed" (a server that never seals, as one
/// the JS bindings build, answers every `requestState` so).
pub(crate) fn refuse_unknown(sealed: &str) -> ErrorObject {
    match unseal(sealed) {
        Err(malformed) => malformed,
        Ok(_) => invalid("integrity check failed"),
    }
}

/// Seals and opens `requestState` with a per-server secret.
pub struct StateSealer {
    key: [u8; 32],
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSealer(..)")
    }
}

impl StateSealer {
    /// A sealer with a fresh random 256-bit key (getrandom); with a fixed key when the system
    /// has no randomness (never on supported targets).
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            tracing::error!("no system randomness: requestState uses a fixed key");
        }
        StateSealer { key }
    }

    /// A sealer with a given key (tests; several servers sharing state).
    pub fn with_key(key: [u8; 32]) -> Self {
        StateSealer { key }
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload);
        mac.finalize().into_bytes().to_vec()
    }

    /// Seal `state` for `method` on `name`, valid until `now_ms + REQUEST_STATE_TTL_MS`.
    pub fn seal(&self, state: &Value, method: &str, name: &str, now_ms: u64) -> String {
        let payload = crate::wire::json_text::to_text(
            &json!({ "v": state, "m": method, "n": name, "x": now_ms + REQUEST_STATE_TTL_MS }),
        );
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(self.mac(payload.as_bytes()))
        )
    }

    /// Open a sealed state for `method` on `name` at `now_ms` (`None`: no clock, skip expiry).
    ///
    /// # Errors
    /// `-32602` when the state is malformed, tampered with, for another request, or expired.
    pub fn open(
        &self,
        sealed: &str,
        method: &str,
        name: &str,
        now_ms: Option<u64>,
    ) -> Result<Value, ErrorObject> {
        let (payload, tag) = unseal(sealed)?;
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(&payload);
        mac.verify_slice(&tag)
            .map_err(|_| invalid("integrity check failed"))?;
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| invalid("malformed"))?;
        if payload["m"] != method || payload["n"] != name {
            return Err(invalid("issued for another request"));
        }
        if let (Some(now), Some(expiry)) = (now_ms, payload["x"].as_u64()) {
            if now > expiry {
                return Err(invalid("expired"));
            }
        }
        Ok(payload["v"].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_state_opens_only_untampered_for_its_request_in_time() {
        let s = StateSealer::with_key([7; 32]);
        let sealed = s.seal(&json!({"round": 2}), "tools/call", "t", 1_000);
        assert_eq!(
            s.open(&sealed, "tools/call", "t", Some(2_000)).unwrap(),
            json!({"round": 2})
        );
        assert!(s
            .open(
                &format!("{sealed}-TAMPERED"),
                "tools/call",
                "t",
                Some(2_000)
            )
            .is_err());
        assert!(s.open(&sealed, "tools/call", "other", Some(2_000)).is_err());
        assert!(s.open(&sealed, "prompts/get", "t", Some(2_000)).is_err());
        assert!(s
            .open(
                &sealed,
                "tools/call",
                "t",
                Some(1_000 + REQUEST_STATE_TTL_MS + 1)
            )
            .is_err());
        assert!(StateSealer::with_key([8; 32])
            .open(&sealed, "tools/call", "t", None)
            .is_err());
        assert!(s.open("garbage", "tools/call", "t", None).is_err());
    }

    #[test]
    fn rounds_answer_well_formed_inputs_and_record_missing_ones() {
        let answers =
            json!({"user_name": {"action":"accept","content":{"name":"a"}}, "bad": 12345});
        let round = Round::new(answers.as_object().unwrap().clone(), None);
        assert!(round
            .input("user_name", "elicitation/create", json!({}))
            .is_ok());
        assert!(round.input("bad", "elicitation/create", json!({})).is_err());
        assert!(round.input("roots", "roots/list", json!({})).is_err());
        let (requested, state) = round.take_requests();
        assert_eq!(
            requested
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>(),
            vec!["bad", "roots"]
        );
        assert_eq!(state, None);
    }
}
