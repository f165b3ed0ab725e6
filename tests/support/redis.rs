//! A real `redis-server` (Debian's; `tests/run.sh` installs it when missing) on a free 127.0.0.1
//! port, for the scale-out tests (`tests/redis.rs`).

use std::net::SocketAddr;

use tokio::process::{Child, Command};

use super::{eventually_async, DEADLINE};

/// A `redis-server` on 127.0.0.1, killed when dropped.
pub struct Redis {
    pub port: u16,
    child: Child,
}

impl Redis {
    /// Start one on `port` (a free one when `None`); `None` (the test skips, saying why) when
    /// Debian's `redis-server` is not installed.
    pub async fn start(port: Option<u16>) -> Option<Redis> {
        let port = port.unwrap_or_else(free_port);
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(e) => {
                eprintln!("SKIPPED: redis-server cannot be started ({e}); tests/run.sh installs Debian's redis-server");
                return None;
            }
        };
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        eventually_async(
            DEADLINE,
            "redis-server accepts connections",
            || async move { tokio::net::TcpStream::connect(addr).await.is_ok() },
        )
        .await;
        Some(Redis { port, child })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// `kill -9`, and wait until it is gone.
    pub async fn kill(mut self) -> u16 {
        self.child.kill().await.expect("kill redis-server");
        self.port
    }

    pub async fn connection(&self) -> ::redis::aio::MultiplexedConnection {
        ::redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("a connection to redis-server")
    }
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
