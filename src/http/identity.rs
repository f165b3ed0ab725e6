//! Who a request's verified bearer token speaks for ([`crate::http::auth`]).

use serde::Serialize;
use serde_json::Value;

/// Clock skew allowed on a token's `exp` and `nbf`, in seconds: 30. The verifiers accept a
/// token until `exp` plus this, and a connection its upgrade's token authorized
/// ([`Identity::valid_until`]) ends then.
pub const EXPIRY_LEEWAY_SECS: u64 = 30;

/// Who a verified token speaks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// The token's subject (`sub`), when it has one.
    pub subject: Option<String>,
    /// The client it was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// Its scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// Every claim, as the verifier read them.
    pub claims: Value,
}

impl Identity {
    /// Whether the token carries `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` this identity lacks, space-separated; `None` when it has them
    /// all.
    pub fn lacks(&self, required: &[String]) -> Option<String> {
        let missing: Vec<&str> = required
            .iter()
            .filter(|s| !self.has_scope(s))
            .map(String::as_str)
            .collect();
        (!missing.is_empty()).then(|| missing.join(" "))
    }

    /// Until when (seconds since the Unix epoch) the token holds: its `exp` plus
    /// [`EXPIRY_LEEWAY_SECS`]; `None` without an `exp`.
    /// A connection its upgrade authorized (WebSocket) ends then: each later message would
    /// otherwise be served on a token no HTTP request could use any more.
    pub fn valid_until(&self) -> Option<u64> {
        let exp = self.claims.get("exp")?;
        let exp = exp.as_u64().or_else(|| {
            exp.as_f64()
                .filter(|e| e.is_finite() && *e >= 0.0)
                .map(|e| e as u64)
        })?;
        Some(exp.saturating_add(EXPIRY_LEEWAY_SECS))
    }

    /// The authorization context this token speaks in, as a stable key: its issuer (`iss`) and
    /// subject (`sub`), else its issuer and client (`client_id` / `azp`, a client acting for
    /// itself); `None` when the token names neither. Requests whose tokens share a key share
    /// the tasks bound to it (2025-11-25 tasks, "Task Isolation and Access Control").
    pub fn context(&self) -> Option<String> {
        let issuer = self.claims.get("iss").and_then(Value::as_str).unwrap_or("");
        // JSON text: no issuer, subject or client id can forge another's key.
        match (&self.subject, &self.client_id) {
            (Some(subject), _) => Some(serde_json::json!([issuer, "sub", subject]).to_string()),
            (None, Some(client)) => Some(serde_json::json!([issuer, "client", client]).to_string()),
            (None, None) => None,
        }
    }
}
