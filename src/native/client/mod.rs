//! Native client transports (feature `native`): thin tokio drivers that implement
//! [`ClientTransport`] for the core
//! [`McpClient`](crate::client::McpClient).
//!
//! | transport | target | seed clause / spec section |
//! |---|---|---|
//! | [`stdio::StdioTransport`] | a child process speaking newline-delimited JSON-RPC | clause 20; `basic/transports` stdio |
//! | [`http::HttpTransport`] | a Streamable HTTP endpoint (`http://`, `https://` with feature `tls`) | clause 15; `basic/transports` Streamable HTTP |
//! | [`ws::WsTransport`] | a WebSocket endpoint (`ws://`, `wss://` with feature `tls`, or `http(s)://`) with subprotocol `mcp` | clause 17 |
//!
//! [`Target`] classifies a command-line style target and [`transport_for`] builds its transport.

pub mod http;
pub mod oauth;
pub mod stdio;
#[cfg(feature = "tls")]
mod tls;
pub mod ws;

use std::sync::Arc;

use crate::client::{ClientError, ClientTransport};

/// Where a client should connect: a URL or a command to spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `http://` or `https://`: Streamable HTTP.
    Http(String),
    /// `ws://` or `wss://`: WebSocket.
    WebSocket(String),
    /// A command and its arguments: stdio.
    Command(Vec<String>),
}

impl Target {
    /// Classify a URL by its scheme.
    ///
    /// # Errors
    /// [`ClientError::InvalidArguments`] for any other scheme.
    pub fn from_url(url: &str) -> Result<Target, ClientError> {
        let lower = url.to_ascii_lowercase();
        let no_host = || {
            Err(ClientError::InvalidArguments(format!(
                "{url:?} names no host"
            )))
        };
        if lower.starts_with("http://") || lower.starts_with("https://") {
            if crate::wire::url::HttpUrl::parse(url).is_none() {
                return no_host();
            }
            Ok(Target::Http(url.to_owned()))
        } else if lower.starts_with("ws://") || lower.starts_with("wss://") {
            // The same origin rule as http(s): a host is required.
            let as_http = format!("http{}", &url[url.find("://").unwrap_or(0)..]);
            if crate::wire::url::HttpUrl::parse(&as_http).is_none() {
                return no_host();
            }
            Ok(Target::WebSocket(url.to_owned()))
        } else {
            Err(ClientError::InvalidArguments(format!(
                "{url:?} is not an http://, https://, ws:// or wss:// URL"
            )))
        }
    }
}

/// Build the transport for a target with default options.
///
/// # Errors
/// [`ClientError::InvalidArguments`] for an empty command or a bad URL.
pub fn transport_for(target: &Target) -> Result<Arc<dyn ClientTransport>, ClientError> {
    Ok(match target {
        Target::Http(url) => Arc::new(http::HttpTransport::new(http::HttpClientOptions::new(url))?),
        Target::WebSocket(url) => Arc::new(ws::WsTransport::new(ws::WsClientOptions::new(url))?),
        Target::Command(argv) => {
            let (command, args) = argv
                .split_first()
                .ok_or_else(|| ClientError::InvalidArguments("an empty command".into()))?;
            Arc::new(stdio::StdioTransport::new(
                stdio::StdioClientOptions::new(command).with_args(args.iter().cloned()),
            ))
        }
    })
}

/// The `host:port` a refused connection to `url` was aimed at, when `error` or one of its
/// sources is an [`std::io::Error`] of kind [`ConnectionRefused`](std::io::ErrorKind::ConnectionRefused)
/// (hyper's connect error wraps one; tungstenite's `Io` is one): both transports report it as
/// [`ClientError::ConnectionRefused`] with this address. The port is the scheme's default
/// (80, or 443 for `https` / `wss`) when the URL names none.
pub(crate) fn refused_addr(url: &str, error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(error);
    let refused = std::iter::from_fn(|| {
        let this = cause?;
        cause = this.source();
        Some(this)
    })
    .any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    if !refused {
        return None;
    }
    let uri: hyper::Uri = url.parse().ok()?;
    let host = uri.host()?;
    let secure = matches!(uri.scheme_str(), Some(s) if s.eq_ignore_ascii_case("https") || s.eq_ignore_ascii_case("wss"));
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    Some(format!("{host}:{port}"))
}

/// `error` and each of its sources, joined with `": "` (hyper's `client error (Connect)` says
/// what failed only in its sources: `dns error: …`, `tcp connect error: …`).
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        // Some errors repeat their source's text in their own.
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_found_in_the_error_chain() {
        #[derive(Debug)]
        struct Wrapper(std::io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error (Connect)")
            }
        }
        impl std::error::Error for Wrapper {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            refused_addr("http://127.0.0.1:1/mcp", &Wrapper(refused())).as_deref(),
            Some("127.0.0.1:1")
        );
        assert_eq!(
            refused_addr("ws://localhost/mcp", &refused()).as_deref(),
            Some("localhost:80")
        );
        assert_eq!(
            refused_addr("wss://[::1]/mcp", &refused()).as_deref(),
            Some("[::1]:443")
        );
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(
            refused_addr("http://127.0.0.1:1/mcp", &Wrapper(reset)),
            None
        );
    }

    #[test]
    fn targets_are_classified_by_scheme() {
        assert_eq!(
            Target::from_url("HTTP://h/mcp"),
            Ok(Target::Http("HTTP://h/mcp".into()))
        );
        assert_eq!(
            Target::from_url("wss://h/mcp"),
            Ok(Target::WebSocket("wss://h/mcp".into()))
        );
        assert!(matches!(
            Target::from_url("ftp://h"),
            Err(ClientError::InvalidArguments(_))
        ));
        assert!(matches!(
            transport_for(&Target::Command(vec![])),
            Err(ClientError::InvalidArguments(_))
        ));
    }

    #[test]
    fn bad_urls_and_headers_are_refused_up_front() {
        use http::{HttpClientOptions, HttpTransport};
        use ws::{WsClientOptions, WsTransport};
        assert!(HttpTransport::new(HttpClientOptions::new("not a url")).is_err());
        assert!(HttpTransport::new(HttpClientOptions::new("ws://h/mcp")).is_err());
        assert!(HttpTransport::new(
            HttpClientOptions::new("http://h/mcp").with_header("bad name", "v")
        )
        .is_err());
        assert!(WsTransport::new(WsClientOptions::new("ftp://h/mcp")).is_err());
        assert!(WsTransport::new(
            WsClientOptions::new("ws://h/mcp").with_header("x", "bad\nvalue")
        )
        .is_err());
        let tls = cfg!(feature = "tls");
        assert_eq!(
            HttpTransport::new(HttpClientOptions::new("https://h/mcp")).is_ok(),
            tls
        );
        assert_eq!(
            WsTransport::new(WsClientOptions::new("wss://h/mcp")).is_ok(),
            tls
        );
    }
}
