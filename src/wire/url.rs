//! The parts of an absolute `http(s)` URL the crate's rules compare: the one origin reader
//! behind the redirect rule (same origin only), the OAuth endpoint checks (https, loopback, the
//! MCP server's origin) and a protected resource's name (RFC 3986 §3; origins as in RFC 6454
//! §4: scheme and host lowercased, the scheme's default port dropped).

/// An absolute `http` or `https` URL with a host, read into the parts the rules compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HttpUrl<'a> {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The host, lowercased, without userinfo or port (an IPv6 literal keeps its brackets).
    pub host: String,
    /// The port, when one other than the scheme's default is written.
    pub port: Option<&'a str>,
    /// The path and query, without the fragment.
    pub tail: &'a str,
}

impl<'a> HttpUrl<'a> {
    /// `url`'s parts; `None` for another scheme, no `://`, or no host.
    pub fn parse(url: &'a str) -> Option<Self> {
        let (scheme, rest) = url.split_once("://")?;
        let (scheme, default_port) = if scheme.eq_ignore_ascii_case("http") {
            ("http", "80")
        } else if scheme.eq_ignore_ascii_case("https") {
            ("https", "443")
        } else {
            return None;
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        // The port follows the last `:` after an IPv6 literal's closing bracket, if any.
        let port_at = match host_port.rfind(']') {
            Some(close) => host_port[close..].find(':').map(|i| close + i),
            None => host_port.rfind(':'),
        };
        let (host, port) = match port_at {
            Some(at) => (&host_port[..at], Some(&host_port[at + 1..])),
            None => (host_port, None),
        };
        if host.is_empty() || host == "[]" {
            return None;
        }
        Some(HttpUrl {
            scheme,
            host: host.to_ascii_lowercase(),
            port: port.filter(|p| !p.is_empty() && *p != default_port),
            tail: tail.split('#').next().unwrap_or_default(),
        })
    }

    /// `scheme://host[:port]`: equal for two URLs exactly when they are the same origin.
    pub fn origin(&self) -> String {
        match self.port {
            Some(port) => format!("{}://{}:{port}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// Whether the host is `localhost` or a loopback IP address.
    pub fn is_loopback(&self) -> bool {
        let bare = self.host.trim_start_matches('[').trim_end_matches(']');
        bare == "localhost"
            || bare
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port_as_rfc_6454_does() {
        let origin = |url: &str| HttpUrl::parse(url).map(|u| u.origin());
        for (url, want) in [
            ("HTTP://Example.COM:80/mcp?x#y", "http://example.com"),
            ("https://h:443", "https://h"),
            ("https://h:8443/", "https://h:8443"),
            ("http://user:pw@h:8080/p", "http://h:8080"),
            ("http://h:8080@evil/p", "http://evil"),
            ("http://[::1]:3000/mcp", "http://[::1]:3000"),
            ("http://[::1]/mcp", "http://[::1]"),
            ("http://h:/p", "http://h"),
        ] {
            assert_eq!(origin(url).as_deref(), Some(want), "{url}");
        }
        for url in [
            "ftp://h/",
            "javascript:x",
            "//h/p",
            "http://",
            "https:///mcp",
            "http://[]/",
        ] {
            assert_eq!(origin(url), None, "{url}");
        }
        let url = HttpUrl::parse("http://h/a/b?q=1#frag").unwrap();
        assert_eq!(url.tail, "/a/b?q=1");
    }

    #[test]
    fn loopback_hosts_are_localhost_and_loopback_addresses_only() {
        for url in [
            "http://localhost/",
            "http://127.0.0.1:9/",
            "http://[::1]:80/",
            "http://LOCALHOST",
        ] {
            assert!(HttpUrl::parse(url).unwrap().is_loopback(), "{url}");
        }
        for url in [
            "http://localhost.evil/",
            "http://127.evil/",
            "http://10.0.0.1/",
        ] {
            assert!(!HttpUrl::parse(url).unwrap().is_loopback(), "{url}");
        }
    }
}
