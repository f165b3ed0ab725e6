//! The sign-in of a native client (RFC 8252 §7.3): the user's browser goes to the
//! authorization URL, and the authorization server redirects it to a listener on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::Mutex;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::UserAgent;
use crate::BoxFuture;

/// A request head on the loopback listener is read up to this many bytes.
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// A [`UserAgent`] that receives the redirect on `http://127.0.0.1:PORT/callback`: it shows
/// the authorization URL (through `notify`), opens a browser on it unless told not to
/// (`xdg-open`, `open`), and waits for the redirect carrying that URL's `state` (any other
/// request to the listener is refused and ignored, so a stray page cannot end the sign-in).
pub struct LoopbackBrowser {
    listener: Mutex<Option<std::net::TcpListener>>,
    addr: SocketAddr,
    open_browser: bool,
    notify: Box<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("addr", &self.addr)
            .field("open_browser", &self.open_browser)
            .finish_non_exhaustive()
    }
}

impl LoopbackBrowser {
    /// Listen on `127.0.0.1:port` (`0`: a free port); `notify` is shown each authorization
    /// URL (a CLI prints it); `open_browser` also opens one on it.
    ///
    /// # Errors
    /// The port cannot be bound.
    pub fn bind(
        port: u16,
        open_browser: bool,
        notify: impl Fn(&str) + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok(LoopbackBrowser {
            listener: Mutex::new(Some(listener)),
            addr,
            open_browser,
            notify: Box::new(notify),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve the listener until the redirect of the round whose authorization URL carried
    /// `state` comes: another path gets `404`, a callback with another `state` (stale, or
    /// sent by another page or process) `400`, and both leave the round waiting.
    async fn wait(&self, state: Option<&str>) -> Result<String, String> {
        let std_listener = self
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|l| l.try_clone())
            .transpose()
            .map_err(|e| e.to_string())?
            .ok_or("the loopback listener is gone")?;
        let listener =
            tokio::net::TcpListener::from_std(std_listener).map_err(|e| e.to_string())?;
        loop {
            let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&head);
            let target = line
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or_default()
                .to_owned();
            if !target.starts_with("/callback") {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let params = crate::client::oauth::query_params(&target);
            let get = |name: &str| {
                params
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.as_str())
            };
            if state.is_some() && get("state") != state {
                let page = "<!doctype html><title>Not this sign-in</title><p>This link is not the sign-in in progress; it was ignored.</p>";
                let answer = format!(
                    "HTTP/1.1 400 Bad Request\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                continue;
            }
            let page = if get("error").is_some() {
                "<!doctype html><title>Sign-in failed</title><p>The sign-in was refused; see the terminal. You can close this tab.</p>"
            } else {
                "<!doctype html><title>Signed in</title><p>Signed in. You can close this tab.</p>"
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            return Ok(format!("http://{}{target}", self.addr));
        }
    }
}

impl UserAgent for LoopbackBrowser {
    fn redirect_uri(&self) -> String {
        format!("http://{}/callback", self.addr)
    }

    fn sign_in<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            (self.notify)(url);
            if self.open_browser {
                for opener in ["xdg-open", "open"] {
                    let spawned = tokio::process::Command::new(opener)
                        .arg(url)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .spawn();
                    if spawned.is_ok() {
                        break;
                    }
                }
            }
            let state = crate::client::oauth::query_params(url)
                .into_iter()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v);
            self.wait(state.as_deref()).await
        })
    }
}
