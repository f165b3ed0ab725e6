//! `bridge --config`: the live set of upstreams — each supervised (started again with backoff
//! when it fails), each on `/servers/NAME/mcp` and all of them on the merged endpoint, and the
//! set reloaded from the file on SIGHUP or (with `--watch`) when it changes, touching only the
//! servers whose entry changed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use indexmap::IndexMap;
use orkestrel_mcp::native::endpoint::Endpoint;
use orkestrel_mcp::native::{http, stdio};
use orkestrel_mcp::{McpServer, ServerOptions};
use serde_json::{json, Value};

use super::bridge::{
    complete, disconnect_cause, endpoint, listen, lock, serve_http, BridgeArgs, Extra, Upstream,
    MAX_BACKOFF,
};
use super::bridge_config::{self, Spec};
use super::client::ConnectArgs;

/// One configured server while it is part of the bridge.
struct Member {
    upstream: Arc<Upstream>,
    endpoint: Option<Endpoint>,
    task: tokio::task::JoinHandle<()>,
}

/// The upstreams of a `--config` bridge.
pub(super) struct Fleet {
    connect: ConnectArgs,
    separator: String,
    log_calls: bool,
    /// Where the endpoints are served (`None` on stdio: the merged server only).
    local: Option<SocketAddr>,
    /// The bearer-token gate of every endpoint (one resource: the merged endpoint's).
    gate: Option<orkestrel_mcp::http::auth::Authorizer>,
    merged: McpServer,
    members: Mutex<IndexMap<String, Member>>,
}

impl Fleet {
    fn new(
        args: &BridgeArgs,
        local: Option<SocketAddr>,
        gate: Option<orkestrel_mcp::http::auth::Authorizer>,
    ) -> Arc<Fleet> {
        Arc::new_cyclic(|fleet: &Weak<Fleet>| Fleet {
            gate,
            connect: args.connect.clone(),
            separator: args.separator.clone(),
            log_calls: args.log_calls,
            local,
            merged: McpServer::new(merged_options(fleet.clone(), args.separator.clone())),
            members: Mutex::new(IndexMap::new()),
        })
    }

    /// Bring the members in line with `specs`: a server whose entry is gone or changed is
    /// stopped (its items taken out), a new or changed one started; the others go on.
    fn apply(&self, specs: Vec<Spec>) -> Result<(), String> {
        let wanted: IndexMap<String, Spec> =
            specs.into_iter().map(|s| (s.name.clone(), s)).collect();
        let mut members = lock(&self.members);
        let stale: Vec<String> = members
            .iter()
            .filter(|(name, m)| wanted.get(*name) != Some(&m.upstream.spec))
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            if let Some(member) = members.shift_remove(&name) {
                tracing::info!(server = %name, "bridge: server stopped (config changed)");
                tokio::spawn(retire(member));
            }
        }
        for (name, spec) in wanted {
            if !members.contains_key(&name) {
                let member = self.start(spec)?;
                members.insert(name, member);
            }
        }
        Ok(())
    }

    fn start(&self, spec: Spec) -> Result<Member, String> {
        let upstream = Upstream::new(spec, self.log_calls);
        let own = McpServer::new(own_options(&upstream));
        let endpoint = match self.local {
            Some(local) => Some(endpoint(
                own.clone(),
                &own_path(&upstream.spec.name),
                local,
                self.gate.clone(),
            )?),
            None => None,
        };
        let prefix = format!("{}{}", upstream.spec.name, self.separator);
        let task = tokio::spawn(supervise(
            upstream.clone(),
            own,
            self.merged.clone(),
            self.connect.clone(),
            prefix,
        ));
        Ok(Member {
            upstream,
            endpoint,
            task,
        })
    }

    fn endpoint_at(&self, path: &str) -> Option<Endpoint> {
        lock(&self.members)
            .values()
            .find(|m| own_path(&m.upstream.spec.name) == path)
            .and_then(|m| m.endpoint.clone())
    }

    fn upstreams(&self) -> Vec<Arc<Upstream>> {
        lock(&self.members)
            .values()
            .map(|m| m.upstream.clone())
            .collect()
    }

    fn status(&self) -> Value {
        let upstreams = self.upstreams();
        let up = upstreams
            .iter()
            .filter(|u| lock(&u.state).phase == "up")
            .count();
        let list: Vec<Value> = upstreams.iter().map(|u| u.status()).collect();
        json!({ "upstreams": list, "up": up, "total": upstreams.len() })
    }

    /// Stop every server (their children ended) before the process exits.
    async fn stop_all(&self) {
        let members: Vec<Member> = lock(&self.members).drain(..).map(|(_, m)| m).collect();
        futures::future::join_all(members.into_iter().map(retire)).await;
    }
}

fn own_path(name: &str) -> String {
    format!("/servers/{name}/mcp")
}

/// Stop one member. What it serves leaves at once (its supervisor aborted, its endpoint shut,
/// its mirrored items out of every endpoint), so `/status` and the lists agree as soon as a
/// config is applied; the future returned ends its client once the supervisor has stopped (and
/// takes out what a supervisor caught running on another thread mirrored before its abort
/// landed).
fn retire(member: Member) -> impl std::future::Future<Output = ()> + Send + 'static {
    let Member {
        upstream,
        endpoint,
        task,
    } = member;
    task.abort();
    if let Some(endpoint) = &endpoint {
        endpoint.shutdown();
    }
    let now = lock(&upstream.gateway).take();
    if let Some(gateway) = &now {
        gateway.detach();
    }
    async move {
        // An abort lands at the supervisor's next await: one caught running may attach again.
        let _ = task.await;
        let late = lock(&upstream.gateway).take();
        for gateway in now.into_iter().chain(late) {
            gateway.detach();
            gateway.client().disconnect().await;
        }
    }
}

/// Several upstreams: each on its own path and all on the merged one, each supervised, the set
/// reloaded on SIGHUP (and, with `--watch`, when the file changes).
/// `seen` is the config file's [`fingerprint`] taken before `specs` were read from it: a change
/// made while the bridge starts is read at the first tick of `--watch`.
pub(super) async fn many(
    args: BridgeArgs,
    path: PathBuf,
    seen: Fingerprint,
    specs: Vec<Spec>,
) -> Result<(), String> {
    let listener = match args.stdio {
        true => None,
        false => Some(listen(&args).await?),
    };
    let local = match &listener {
        Some(l) => Some(l.local_addr().map_err(|e| e.to_string())?),
        None => None,
    };
    let gate = match local {
        Some(local) => args
            .auth
            .gate(local)
            .await
            .map_err(|e| e.message().to_owned())?,
        None => None,
    };
    let fleet = Fleet::new(&args, local, gate);
    fleet.apply(specs)?;
    // SIGHUP's handler is in place before the address is announced (its default ends us).
    let hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let reload = reload(fleet.clone(), path, seen, args.watch, hangup);
    let result = match listener {
        None => tokio::select! {
            served = stdio::serve_stdio(fleet.merged.clone()) => served.map_err(|e| e.to_string()),
            () = reload => Ok(()),
            () = super::shutdown_signal() => Ok(()),
        },
        Some(listener) => {
            let local = local.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
            let merged = endpoint(
                fleet.merged.clone(),
                http::DEFAULT_MCP_PATH,
                local,
                fleet.gate.clone(),
            )?;
            let (routes, ends, shows) = (fleet.clone(), fleet.clone(), fleet.clone());
            let extra = Extra {
                route: Arc::new(move |path| routes.endpoint_at(path)),
                shutdown: Arc::new(move || {
                    for member in lock(&ends.members).values() {
                        if let Some(endpoint) = &member.endpoint {
                            endpoint.shutdown();
                        }
                    }
                }),
            };
            let signal = super::shutdown_signal();
            let until = async move {
                tokio::select! {
                    () = reload => {}
                    () = signal => {}
                }
            };
            serve_http(
                listener,
                merged,
                Some(extra),
                Arc::new(move || shows.status()),
                until,
            )
            .await
        }
    };
    fleet.stop_all().await;
    result
}

/// Reload the config on SIGHUP, and with `watch` when the file changes from `seen` (its
/// modification time or size, checked each second). A file that does not read or parse leaves the running set as it
/// is. With `watch`, such a file is read again at each tick until it parses: a writer may be half
/// way through it (`std::fs::write` truncates, then writes, and both can fall within one tick of
/// the file system's clock, so the finished file may show the time the empty one showed). Its
/// error is logged once per change. Never returns.
async fn reload(
    fleet: Arc<Fleet>,
    path: PathBuf,
    mut seen: Fingerprint,
    watch: bool,
    mut hangup: Option<tokio::signal::unix::Signal>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut failed = false;
    loop {
        // Whether this round's error is news (a signal, or a file that changed).
        let report = tokio::select! {
            Some(()) = async { hangup.as_mut()?.recv().await } => true,
            _ = tick.tick(), if watch => {
                let now = fingerprint(&path);
                if now == seen && !failed {
                    continue;
                }
                let changed = now != seen;
                seen = now;
                changed
            }
        };
        let specs = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|text| bridge_config::parse(&text, &|k| std::env::var(k).ok()));
        failed = specs.is_err();
        match specs.and_then(|specs| fleet.apply(specs)) {
            Ok(()) => {
                tracing::info!(config = %path.display(), servers = fleet.upstreams().len(), "bridge: config reloaded")
            }
            Err(e) => {
                if report {
                    tracing::error!(config = %path.display(), error = %e, "bridge: config not reloaded; the servers go on as they were")
                }
            }
        }
    }
}

/// What `--watch` compares: the file's modification time and size (`None` while it cannot be read).
pub(super) type Fingerprint = Option<(std::time::SystemTime, u64)>;

/// The config file's [`Fingerprint`] now.
pub(super) fn fingerprint(path: &Path) -> Fingerprint {
    std::fs::metadata(path)
        .and_then(|m| Ok((m.modified()?, m.len())))
        .ok()
}

/// Keep one upstream mirrored: connect, mirror, watch; when it fails or ends, take its items
/// out, wait (1 s doubling to 30 s) and start again. Never returns (aborted when the server
/// leaves the config or the bridge stops).
async fn supervise(
    upstream: Arc<Upstream>,
    own: McpServer,
    merged: McpServer,
    connect: ConnectArgs,
    prefix: String,
) {
    let mut backoff = Duration::from_secs(1);
    loop {
        upstream.set(|s| s.phase = "starting");
        match upstream.connect(&connect).await {
            Ok(gateway) => {
                let cause = disconnect_cause(gateway.client());
                let mirrored = async {
                    let own = gateway.mirror_into(&own, "").await?;
                    let all = gateway.mirror_into(&merged, &prefix).await?;
                    Ok::<_, orkestrel_mcp::ClientError>((own, all))
                };
                match mirrored.await {
                    Ok((mine, all)) => {
                        if !all.collisions.is_empty() {
                            tracing::warn!(server = %upstream.spec.name, names = ?all.collisions, "bridge: names taken on /mcp by another server, not served there");
                        }
                        tracing::info!(server = %upstream.spec.name, tools = mine.tools, "bridge: upstream up");
                        upstream.set(|s| {
                            s.phase = "up";
                            s.last_error = None;
                            s.collisions = all.collisions;
                        });
                        backoff = Duration::from_secs(1);
                        gateway.watch().await;
                        let why = lock(&cause)
                            .take()
                            .unwrap_or_else(|| "the upstream ended".into());
                        upstream.set(|s| s.last_error = Some(why));
                    }
                    Err(e) => upstream.set(|s| s.last_error = Some(e.to_string())),
                }
                gateway.detach();
                gateway.client().disconnect().await;
                *lock(&upstream.gateway) = None;
            }
            Err(e) => upstream.set(|s| s.last_error = Some(e)),
        }
        upstream.set(|s| s.phase = "down");
        let error = lock(&upstream.state).last_error.clone().unwrap_or_default();
        tracing::warn!(server = %upstream.spec.name, %error, retry_in = ?backoff, "bridge: upstream down");
        upstream.restarts.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// A per-server endpoint's options: named for the server; completions go to whichever gateway
/// is up.
fn own_options(upstream: &Arc<Upstream>) -> ServerOptions {
    let up = upstream.clone();
    // Its upstream may come up after a client's `initialize`: every list is declared.
    ServerOptions::new(upstream.spec.name.clone(), env!("CARGO_PKG_VERSION"))
        .with_logging()
        .with_declared_lists()
        .with_completer(move |params, _ctx| {
            let gateway = lock(&up.gateway).clone();
            async move { complete(gateway, params, "").await }
        })
}

/// The merged endpoint's options: completions routed by the prompt's prefix.
fn merged_options(fleet: Weak<Fleet>, separator: String) -> ServerOptions {
    ServerOptions::new("orkestrel-mcp bridge", env!("CARGO_PKG_VERSION"))
        .with_logging()
        .with_declared_lists()
        .with_completer(move |params, _ctx| {
            let name = params["ref"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let upstreams = fleet.upgrade().map(|f| f.upstreams()).unwrap_or_default();
            let owner = upstreams
                .iter()
                .find(|u| name.starts_with(&format!("{}{separator}", u.spec.name)));
            let (gateway, prefix) = match owner {
                Some(u) => (
                    lock(&u.gateway).clone(),
                    format!("{}{separator}", u.spec.name),
                ),
                None => (None, String::new()),
            };
            async move { complete(gateway, params, &prefix).await }
        })
}
