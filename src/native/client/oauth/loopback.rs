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
    /// sent by another page or process) `400`, and both leave the round waiting. Connections
    /// are served side by side, each read bounded by [`CALLBACK_READ_TIMEOUT`]: an idle one (a
    /// browser's speculative preconnect) never holds up the callback.
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
        let (found, mut callback) = tokio::sync::mpsc::channel::<String>(1);
        // Dropped on return: the connections still open are dropped with it.
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                Some(url) = callback.recv() => return Ok(url),
                accepted = listener.accept() => {
                    let (stream, _) = accepted.map_err(|e| e.to_string())?;
                    let (state, addr, found) = (state.map(str::to_owned), self.addr, found.clone());
                    connections.spawn(async move {
                        let answered = tokio::time::timeout(
                            CALLBACK_READ_TIMEOUT,
                            answer(stream, state.as_deref(), addr),
                        )
                        .await;
                        if let Ok(Some(url)) = answered {
                            let _ = found.send(url).await;
                        }
                    });
                    // Reap the ones done, so a flood of connections holds no finished tasks.
                    while connections.try_join_next().is_some() {}
                }
            }
        }
    }
}

/// How long one connection to the loopback listener may take to send its request head: 10 s.
const CALLBACK_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Answer one connection to the loopback listener; the redirect URL when it is the callback
/// of the round (`state`).
async fn answer(
    mut stream: tokio::net::TcpStream,
    state: Option<&str>,
    addr: SocketAddr,
) -> Option<String> {
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
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return None;
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
        return None;
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
    Some(format!("http://{addr}{target}"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// An idle connection (a browser's speculative preconnect that sends nothing) does not hold
    /// up the callback that comes on another; a stray path gets 404, another round's state 400.
    #[tokio::test]
    async fn an_idle_connection_does_not_hold_up_the_callback() {
        let browser = LoopbackBrowser::bind(0, false, |_| {}).unwrap();
        let addr = browser.local_addr();
        let url =
            format!("https://as.example/authorize?state=s1&redirect_uri=http://{addr}/callback");
        let signed_in = tokio::spawn(async move { browser.sign_in(&url).await });
        let _idle = tokio::net::TcpStream::connect(addr).await.unwrap();
        let ask = |path: &'static str| async move {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream
                .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).await.unwrap();
            reply
        };
        assert!(ask("/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(ask("/callback?code=c&state=old")
            .await
            .starts_with("HTTP/1.1 400"));
        assert!(ask("/callback?code=c&state=s1")
            .await
            .starts_with("HTTP/1.1 200"));
        let url = tokio::time::timeout(std::time::Duration::from_secs(5), signed_in)
            .await
            .expect("the callback was held up")
            .unwrap()
            .unwrap();
        assert_eq!(url, format!("http://{addr}/callback?code=c&state=s1"));
    }
}
