//! `--http ADDR` of `serve` and `bridge`: where to listen, `HOST:PORT` with an IP literal
//! (`127.0.0.1:3000`, `[::1]:3000`) or a host name (`localhost:3000`), resolved when the
//! command line is read so that a name that resolves to nothing is a usage error (exit 2).

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::str::FromStr;

use tokio::net::TcpListener;

/// A listen address as given on the command line, with the socket addresses it resolved to
/// (one for an IP literal; a name's in the resolver's order of preference).
#[derive(Clone, Debug)]
pub struct BindAddr {
    text: String,
    addrs: Vec<SocketAddr>,
}

impl FromStr for BindAddr {
    type Err = String;

    /// `HOST:PORT`: an IP literal is taken as it is; a name is looked up (the system resolver,
    /// `/etc/hosts` first). Errors say what is wrong: no port, a bad port, a name that does not
    /// resolve.
    fn from_str(text: &str) -> Result<Self, String> {
        if let Ok(addr) = text.parse::<SocketAddr>() {
            return Ok(BindAddr {
                text: text.to_owned(),
                addrs: vec![addr],
            });
        }
        let expected = "expected HOST:PORT, e.g. 127.0.0.1:3000 or localhost:3000";
        let (host, port) = text.rsplit_once(':').ok_or(expected)?;
        if host.is_empty() {
            return Err(format!("no host: {expected}"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| format!("bad port {port:?}: expected a number from 0 to 65535"))?;
        if host.starts_with('[') || host.contains(':') {
            return Err(format!(
                "bad IPv6 address {host:?}: expected e.g. [::1]:{port}"
            ));
        }
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        if addrs.is_empty() {
            return Err(format!("{host} resolves to no address"));
        }
        Ok(BindAddr {
            text: text.to_owned(),
            addrs,
        })
    }
}

impl fmt::Display for BindAddr {
    /// The address as it was given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl BindAddr {
    /// Listen on the first resolved address that can be bound (`localhost` may resolve to
    /// `::1` on a host without IPv6, then `127.0.0.1` is tried). The listener's
    /// `local_addr` is the address to report and to pick the endpoint's policy by
    /// (`EndpointOptions::for_bind`: a loopback address gets the loopback-only Origin / Host
    /// defaults, whichever name led to it).
    ///
    /// # Errors
    /// `cannot listen on ADDR: …` with the last address's bind error (in use, not permitted).
    pub async fn bind(&self) -> Result<TcpListener, String> {
        let mut failure = None;
        for addr in &self.addrs {
            match TcpListener::bind(addr).await {
                Ok(listener) => return Ok(listener),
                Err(e) => failure = Some((addr, e)),
            }
        }
        Err(match failure {
            Some((addr, e)) if addr.to_string() != self.text => {
                format!("cannot listen on {self} ({addr}): {e}")
            }
            Some((_, e)) => format!("cannot listen on {self}: {e}"),
            None => format!("cannot listen on {self}: it resolves to no address"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_parse_and_names_resolve() {
        let literal: BindAddr = "127.0.0.1:3000".parse().unwrap();
        assert_eq!(literal.addrs, vec!["127.0.0.1:3000".parse().unwrap()]);
        assert_eq!(literal.to_string(), "127.0.0.1:3000");
        let v6: BindAddr = "[::1]:0".parse().unwrap();
        assert_eq!(v6.addrs, vec!["[::1]:0".parse().unwrap()]);
        let name: BindAddr = "localhost:0".parse().unwrap();
        assert!(name
            .addrs
            .iter()
            .all(|a| a.ip().is_loopback() && a.port() == 0));
        assert_eq!(name.to_string(), "localhost:0");
    }

    #[test]
    fn bad_addresses_say_what_is_wrong() {
        let err = |s: &str| s.parse::<BindAddr>().unwrap_err();
        assert!(
            err("localhost").contains("expected HOST:PORT"),
            "{}",
            err("localhost")
        );
        assert!(err(":3000").contains("no host"));
        assert!(err("localhost:http").contains("bad port \"http\""));
        assert!(err("localhost:70000").contains("bad port"));
        assert!(err("[::1:3000").contains("bad IPv6 address"));
        assert!(
            err("no-such-host.invalid:3000").starts_with("cannot resolve no-such-host.invalid: ")
        );
    }
}
