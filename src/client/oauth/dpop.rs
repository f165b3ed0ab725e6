//! DPoP proofs (RFC 9449; the MCP DPoP extension, SEP-1932): a JWT the client signs for each
//! request with a key only it holds, binding the access token to that key. The core builds
//! the proof; the host's key signs it ([`DpopSigner`]: pure computation, no I/O).

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The key of a DPoP client: its public JWK and a signature over a JWS signing input.
pub trait DpopSigner: crate::MaybeSend + crate::MaybeSync {
    /// The JWS algorithm (`ES256`, …), one the authorization server lists in
    /// `dpop_signing_alg_values_supported`.
    fn algorithm(&self) -> &str;
    /// The public key as a JWK (no private members).
    fn public_jwk(&self) -> Value;
    /// The JWS signature of `signing_input` (for ES256: `r ‖ s`, 64 bytes).
    ///
    /// # Errors
    /// Why it cannot sign.
    fn sign(&self, signing_input: &[u8]) -> Result<Vec<u8>, String>;
}

/// `htu`: the request URL without query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or_default()
}

/// `ath`: base64url of the SHA-256 of the access token (RFC 9449 §4.2).
pub fn ath(access_token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// A DPoP proof for `method` on `url` at `now` (seconds since the epoch): `typ` `dpop+jwt`,
/// the public `jwk` in the header; `jti` (random), `htm`, `htu`, `iat`, and `ath` when an
/// access token goes with it, `nonce` when the server gave one.
///
/// # Errors
/// The signer's, or no randomness for the `jti`.
pub fn proof(
    signer: &dyn DpopSigner,
    method: &str,
    url: &str,
    access_token: Option<&str>,
    nonce: Option<&str>,
    now: u64,
) -> Result<String, String> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header =
        json!({ "typ": "dpop+jwt", "alg": signer.algorithm(), "jwk": signer.public_jwk() });
    let jti = super::random_token().ok_or("no randomness for the proof's jti")?;
    let mut claims = json!({ "jti": jti, "htm": method, "htu": htu(url), "iat": now });
    if let Some(token) = access_token {
        claims["ath"] = json!(ath(token));
    }
    if let Some(nonce) = nonce {
        claims["nonce"] = json!(nonce);
    }
    let input = format!(
        "{}.{}",
        b64.encode(crate::wire::json_text::to_text(&header)),
        b64.encode(crate::wire::json_text::to_text(&claims))
    );
    let signature = signer.sign(input.as_bytes())?;
    Ok(format!("{input}.{}", b64.encode(signature)))
}
