//! Discovery: the protected resource metadata, then the authorization server's (the first
//! rows of the [flow's rules](super)).

use serde_json::Value;

use crate::wire::url::HttpUrl;

use super::super::{
    authorization_server_metadata_urls, endpoint_allowed, resource_matches, split, Action,
    OAuthError,
};
use super::{get, AuthFlow, Phase, Server};

impl AuthFlow {
    pub(super) fn next_prm(&mut self) -> Action {
        match self.round.prm_urls.pop_front() {
            Some(url) => {
                self.phase = Phase::Prm(url.clone());
                Action::Fetch(get(url))
            }
            None => {
                // The 2025-03-26 fallback: the MCP server's origin is its authorization server.
                self.round.legacy = true;
                let (origin, _) = split(&self.config.server_url);
                let origin = origin.to_owned();
                self.begin_as(origin)
            }
        }
    }

    pub(super) fn on_prm(&mut self, doc: Value) -> Action {
        let resource = doc["resource"].as_str().unwrap_or_default().to_owned();
        if !resource_matches(&resource, &self.config.server_url) {
            return self.fail(OAuthError::ResourceMismatch {
                resource,
                server: self.config.server_url.clone(),
            });
        }
        let Some(issuer) = doc["authorization_servers"][0].as_str().map(str::to_owned) else {
            return self.fail(OAuthError::Discovery {
                server: self.config.server_url.clone(),
                detail: "the protected resource metadata names no authorization server".into(),
            });
        };
        self.round.resource = Some(resource);
        self.round.scopes_supported = doc["scopes_supported"].clone();
        self.begin_as(issuer)
    }

    pub(super) fn begin_as(&mut self, issuer: String) -> Action {
        // SEP-2352: a client and tokens are bound to their issuer.
        if self.client.as_ref().is_some_and(|(i, _)| *i != issuer)
            || self.tokens.as_ref().is_some_and(|(i, _)| *i != issuer)
        {
            self.client = None;
            self.tokens = None;
        }
        self.round.issuer = issuer.clone();
        if self.server.as_ref().is_some_and(|s| s.asked == issuer) {
            return self.proceed();
        }
        self.server = None;
        self.round.as_urls = authorization_server_metadata_urls(&issuer).into();
        self.next_as()
    }

    pub(super) fn next_as(&mut self) -> Action {
        match self.round.as_urls.pop_front() {
            Some(url) => {
                self.phase = Phase::AsMetadata(url.clone());
                Action::Fetch(get(url))
            }
            None if self.round.legacy => {
                let origin = self.round.issuer.trim_end_matches('/').to_owned();
                self.server = Some(Server {
                    asked: self.round.issuer.clone(),
                    issuer: origin.clone(),
                    authorization_endpoint: Some(format!("{origin}/authorize")),
                    token_endpoint: format!("{origin}/token"),
                    registration_endpoint: Some(format!("{origin}/register")),
                    metadata: Value::Null,
                });
                self.proceed()
            }
            None => {
                let detail = std::mem::take(&mut self.round.as_errors).join("; ");
                self.fail(OAuthError::Discovery {
                    server: self.config.server_url.clone(),
                    detail: format!("no metadata for {}: {detail}", self.round.issuer),
                })
            }
        }
    }

    pub(super) fn on_as_metadata(&mut self, url: String, doc: Value) -> Action {
        let mut issuer = self.round.issuer.clone();
        let found = doc["issuer"].as_str().unwrap_or_default();
        // Under the 2025-03-26 fallback the server's origin is the authorization base URL, and
        // servers of that revision name an issuer with a path on it: the same origin vouches.
        let asked = issuer.clone();
        if self.round.legacy && found != issuer && split(found).0 == issuer {
            issuer = found.to_owned();
        }
        if found != issuer {
            return self.fail(OAuthError::IssuerMismatch {
                url,
                expected: issuer,
                found: found.to_owned(),
            });
        }
        let unsupported = |reason: &str| OAuthError::Unsupported {
            issuer: issuer.clone(),
            reason: reason.to_owned(),
        };
        let Some(token_endpoint) = doc["token_endpoint"].as_str().map(str::to_owned) else {
            return self.fail(unsupported("its metadata has no token_endpoint"));
        };
        let grant = self.config.grant.grant_type();
        if let Some(grants) = doc["grant_types_supported"].as_array() {
            if !grants.iter().any(|g| g == grant) {
                return self.fail(unsupported(&format!(
                    "it does not support the {grant} grant"
                )));
            }
        }
        if grant == "authorization_code" {
            let s256 = doc["code_challenge_methods_supported"]
                .as_array()
                .is_some_and(|m| m.iter().any(|v| v == "S256"));
            if !s256 {
                return self.fail(unsupported("its metadata does not list PKCE S256"));
            }
            if doc["authorization_endpoint"].as_str().is_none() {
                return self.fail(unsupported("its metadata has no authorization_endpoint"));
            }
        }
        // Every endpoint the flow will open or send to is https (or loopback http, or on the
        // MCP server's own origin, which the caller chose): a `javascript:` authorization
        // endpoint would otherwise reach the browser.
        let server_origin = HttpUrl::parse(&self.config.server_url).map(|u| u.origin());
        let allowed = |url: &str| {
            endpoint_allowed(url)
                || HttpUrl::parse(url).is_some_and(|u| Some(u.origin()) == server_origin)
        };
        for (name, url) in [
            ("token_endpoint", Some(token_endpoint.as_str())),
            (
                "authorization_endpoint",
                doc["authorization_endpoint"].as_str(),
            ),
            (
                "registration_endpoint",
                doc["registration_endpoint"].as_str(),
            ),
        ] {
            if let Some(url) = url.filter(|u| !allowed(u)) {
                return self.fail(unsupported(&format!(
                    "its {name} {url:?} is not an https URL (nor http on a loopback host or the MCP server's origin)"
                )));
            }
        }
        self.server = Some(Server {
            asked,
            issuer,
            authorization_endpoint: doc["authorization_endpoint"].as_str().map(str::to_owned),
            token_endpoint,
            registration_endpoint: doc["registration_endpoint"].as_str().map(str::to_owned),
            metadata: doc,
        });
        self.proceed()
    }
}
