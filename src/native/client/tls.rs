//! The rustls client configuration shared by the HTTP and WebSocket transports (feature
//! `tls`): the `ring` provider and the Mozilla roots from `webpki-roots`.

use std::sync::Arc;

/// A client config with safe defaults, TLS 1.2 and 1.3, and the webpki roots.
pub(crate) fn client_config() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}
