//! Who a request's verified bearer token speaks for ([`crate::http::auth`]).

use serde::Serialize;
use serde_json::Value;

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
}
