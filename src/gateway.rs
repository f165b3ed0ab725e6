//! A gateway's core: re-serve an upstream MCP server, reached with an [`McpClient`], through one
//! or more [`McpServer`]s, in whichever era each side speaks.
//!
//! A [`Gateway`] mirrors the upstream's tools, prompts, resources and resource templates into
//! each target server's registries (under a name prefix, for an endpoint merging several
//! upstreams), and keeps them in step: an upstream `list_changed` (a notification in the
//! handshake era, a `subscriptions/listen` event on 2026-07-28) lists again and re-announces the
//! change downstream; `notifications/resources/updated` is passed on to the subscribers. A call
//! through a mirrored item runs upstream through the [`Relay`]: its progress comes back, a
//! downstream cancellation cancels it upstream (the upstream client sends
//! `notifications/cancelled` when the forwarded request is dropped), upstream logs reach the
//! client of the call in flight, and the upstream's sampling, elicitation and roots requests are
//! asked of that client ([`relay`]).
//!
//! No I/O here: the transports are the client's and the servers'. Native targets only for now
//! (the mirrored items hold the client, which is not `Send` on wasm).
//!
//! ```no_run
//! # async fn run(transport: std::sync::Arc<dyn orkestrel_mcp::ClientTransport>) -> Result<(), orkestrel_mcp::ClientError> {
//! use orkestrel_mcp::client::{ClientOptions, McpClient};
//! use orkestrel_mcp::gateway::{Gateway, Relay};
//! use orkestrel_mcp::McpServer;
//!
//! let relay = Relay::default();
//! let client = McpClient::with_transport(
//!     transport,
//!     ClientOptions::new("gateway", "1").with_handler(relay.clone()),
//! );
//! client.connect().await?;
//! let gateway = Gateway::new(client, relay);
//! let server = McpServer::new(gateway.server_options());
//! gateway.mirror_into(&server, "").await?;
//! // Serve `server` on any transport; keep the mirror in step while it runs:
//! gateway.watch().await;
//! # Ok(()) }
//! ```

mod mirror;
pub mod relay;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures::channel::mpsc;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{json, Value};

use crate::client::{ClientError, ClientEvent, McpClient, RequestOptions};
use crate::era::Era;
use crate::server::{Completion, ListKind};
use crate::wire::jsonrpc::{ErrorObject, JsonRpcNotification};
use crate::{McpServer, ServerOptions};
use relay::upstream_error;
pub use relay::{Relay, RelayOptions};

/// The separator between an upstream's name and an item's name on a merged endpoint
/// (`weather__forecast`).
pub const DEFAULT_SEPARATOR: &str = "__";

/// Which upstream tools, prompts, resources and templates a gateway re-serves, by their
/// upstream name: every name in `allow` (all when `None`) that is not in `ignore`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameFilter {
    /// Only these names (`None`: every name).
    pub allow: Option<Vec<String>>,
    /// Never these names.
    pub ignore: Vec<String>,
}

impl NameFilter {
    /// Whether `name` is re-served.
    pub fn admits(&self, name: &str) -> bool {
        self.allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|a| a == name))
            && !self.ignore.iter().any(|i| i == name)
    }
}

/// What one sync mirrored into each target: counts, and the names left out because a target
/// already had an item of that name that is not this gateway's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Synced {
    /// Tools mirrored.
    pub tools: usize,
    /// Prompts mirrored.
    pub prompts: usize,
    /// Resources mirrored.
    pub resources: usize,
    /// Resource templates mirrored.
    pub templates: usize,
    /// Names (or URIs) that collided with another item of a target, not mirrored there.
    pub collisions: Vec<String>,
}

/// The names this gateway added to one target.
#[derive(Default)]
struct Owned {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
    templates: HashSet<String>,
}

struct Target {
    server: McpServer,
    prefix: String,
    owned: Owned,
}

struct Inner {
    client: McpClient,
    relay: Relay,
    filter: NameFilter,
    targets: Mutex<Vec<Target>>,
    changes: Mutex<Option<mpsc::Receiver<()>>>,
    /// The kinds whose upstream list changed since they were last listed ([`due_index`]).
    due: Arc<[AtomicBool; 3]>,
    /// The last listing of each kind (tools, prompts, resources), as JSON text: a sync that
    /// finds the same announces nothing.
    listed: Mutex<[Option<String>; 3]>,
    /// [`Gateway::set_call_log`]'s label.
    call_log: Mutex<Option<String>>,
}

/// An upstream server re-served through target servers (cheap to clone).
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("relay", &self.inner.relay)
            .field("targets", &lock(&self.inner.targets).len())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway over the connected `client`, whose handler is `relay` (give the same relay to
    /// [`ClientOptions::with_handler`](crate::client::ClientOptions::with_handler)), re-serving
    /// every name.
    pub fn new(client: McpClient, relay: Relay) -> Self {
        Gateway::with_filter(client, relay, NameFilter::default())
    }

    /// [`Gateway::new`] re-serving only what `filter` admits.
    pub fn with_filter(client: McpClient, relay: Relay, filter: NameFilter) -> Self {
        // List changes coalesce per kind: a flag each (set by the notification, taken by the
        // sync), and one doorbell. A storm of one kind never crowds out another.
        let (tx, rx) = mpsc::channel(1);
        let due: Arc<[AtomicBool; 3]> = Arc::default();
        let inner = Arc::new(Inner {
            client: client.clone(),
            relay,
            filter,
            targets: Mutex::new(Vec::new()),
            changes: Mutex::new(Some(rx)),
            due: due.clone(),
            listed: Mutex::new([None, None, None]),
            call_log: Mutex::new(None),
        });
        let weak = Arc::downgrade(&inner);
        let tx = Mutex::new(tx);
        client.on(move |event| {
            if let ClientEvent::Notification(n) = event {
                on_upstream_notification(&weak, &due, &tx, n);
            }
        });
        Gateway { inner }
    }

    /// Log each call through this gateway at info (`label`, method, name, milliseconds,
    /// outcome) — `bridge --log-calls`; `None` stops it.
    pub fn set_call_log(&self, label: Option<String>) {
        *lock(&self.inner.call_log) = label;
    }

    /// How many tools this gateway re-serves (the most over its targets).
    pub fn mirrored_tools(&self) -> usize {
        lock(&self.inner.targets)
            .iter()
            .map(|t| t.owned.tools.len())
            .max()
            .unwrap_or(0)
    }

    /// The upstream client.
    pub fn client(&self) -> &McpClient {
        &self.inner.client
    }

    /// The relay of this gateway's calls.
    pub fn relay(&self) -> &Relay {
        &self.inner.relay
    }

    /// Options for a server re-serving this upstream alone: its name, version and
    /// instructions, `logging` when the upstream declares it, and `completion/complete`
    /// forwarded when it declares `completions`.
    pub fn server_options(&self) -> ServerOptions {
        let client = &self.inner.client;
        let (mut name, mut version, mut instructions) =
            (String::from("gateway"), String::new(), None);
        if let Some(init) = client.initialize_result() {
            name = init.server_info.name;
            version = init.server_info.version;
            instructions = init.instructions;
        } else if let Some(discovered) = client.discover_result() {
            let info = &discovered["_meta"][crate::era::META_SERVER_INFO];
            if let Some(n) = info["name"].as_str() {
                name = n.to_owned();
                version = info["version"].as_str().unwrap_or_default().to_owned();
            }
            instructions = discovered["instructions"].as_str().map(str::to_owned);
        }
        let mut options = ServerOptions::new(name, version);
        options.instructions = instructions;
        if self.upstream_declares("logging") {
            options = options.with_logging();
        }
        if self.upstream_declares("completions") {
            let gateway = self.clone();
            options = options.with_completer(move |params, _ctx| {
                let gateway = gateway.clone();
                async move { gateway.complete(params, "").await }
            });
        }
        options
    }

    /// Whether the upstream's capabilities hold `name` (`tools`, `prompts`, `resources`, …).
    pub fn upstream_declares(&self, name: &str) -> bool {
        self.inner
            .client
            .server_capabilities()
            .is_some_and(|caps| caps.get(name).is_some())
    }

    /// Mirror the upstream into `server`, each tool and prompt name prefixed with `prefix`
    /// (`""` for none; a merged endpoint uses `NAME` + [`DEFAULT_SEPARATOR`]), and keep it in
    /// step from now on.
    ///
    /// # Errors
    /// The upstream's error when a list fails.
    pub async fn mirror_into(
        &self,
        server: &McpServer,
        prefix: &str,
    ) -> Result<Synced, ClientError> {
        lock(&self.inner.targets).push(Target {
            server: server.clone(),
            prefix: prefix.to_owned(),
            owned: Owned::default(),
        });
        // The new target's clients hear of everything it now serves.
        *lock(&self.inner.listed) = [None, None, None];
        self.sync().await
    }

    /// List everything upstream again and bring every target in step (announcing list changes
    /// downstream).
    ///
    /// # Errors
    /// The upstream's error when a list fails (what was listed before stays).
    pub async fn sync(&self) -> Result<Synced, ClientError> {
        let mut synced = Synced::default();
        for kind in [ListKind::Tools, ListKind::Prompts, ListKind::Resources] {
            let one = self.sync_kind(kind).await?;
            synced.tools += one.tools;
            synced.prompts += one.prompts;
            synced.resources += one.resources;
            synced.templates += one.templates;
            synced.collisions.extend(one.collisions);
        }
        Ok(synced)
    }

    /// Take everything this gateway mirrored out of its targets (announcing the list changes),
    /// e.g. when its upstream is gone.
    pub fn detach(&self) {
        let mut targets = lock(&self.inner.targets);
        for target in targets.iter_mut() {
            let owned = std::mem::take(&mut target.owned);
            for name in &owned.tools {
                target.server.tools().remove(name);
            }
            for name in &owned.prompts {
                target.server.prompts().remove(name);
            }
            for uri in &owned.resources {
                target.server.resources().remove(uri);
            }
            for template in &owned.templates {
                target.server.resources().remove_template(template);
            }
            for kind in [ListKind::Tools, ListKind::Prompts, ListKind::Resources] {
                target.server.notify_list_changed(kind);
            }
        }
        targets.clear();
    }

    /// Keep the targets in step until the upstream is gone: each upstream list change lists
    /// that kind again (on 2026-07-28 through a `subscriptions/listen` stream this opens).
    /// Resolves when the upstream client disconnects; a second call resolves at once.
    pub async fn watch(&self) {
        let Some(mut changes) = lock(&self.inner.changes).take() else {
            return;
        };
        let resync = async {
            while changes.next().await.is_some() {
                for kind in [ListKind::Tools, ListKind::Prompts, ListKind::Resources] {
                    // Taken before the listing: a change during it rings again.
                    if !self.inner.due[due_index(kind)].swap(false, Ordering::AcqRel) {
                        continue;
                    }
                    if let Err(e) = self.sync_kind(kind).await {
                        tracing::warn!(error = %e, ?kind, "gateway: could not list the upstream again");
                    }
                }
            }
        };
        let listen = async {
            if self.inner.client.era() != Some(Era::Modern) {
                return futures::future::pending::<()>().await;
            }
            let filter = json!({
                "toolsListChanged": true,
                "promptsListChanged": true,
                "resourcesListChanged": true,
            });
            match self.inner.client.listen(filter).await {
                Ok(mut subscription) => {
                    // What changed before the stream opened is listed now.
                    if let Err(e) = self.sync().await {
                        tracing::warn!(error = %e, "gateway: could not list the upstream again");
                    }
                    while let Some(n) = subscription.next().await {
                        if let Some(kind) = list_kind(&n.method) {
                            if let Err(e) = self.sync_kind(kind).await {
                                tracing::warn!(error = %e, "gateway: could not list the upstream again");
                            }
                        } else {
                            self.pass_on(&n);
                        }
                    }
                }
                Err(e) => tracing::debug!(error = %e, "gateway: no listen stream upstream"),
            }
            futures::future::pending::<()>().await
        };
        let gone = self.disconnected();
        futures::pin_mut!(resync, listen, gone);
        let both = futures::future::select(resync, listen);
        futures::future::select(both, gone).await;
    }

    /// Resolves once the upstream client has disconnected.
    async fn disconnected(&self) {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let tx = Mutex::new(Some(tx));
        self.inner.client.on(move |event| {
            if matches!(event, ClientEvent::Disconnect { .. }) {
                if let Some(tx) = lock(&tx).take() {
                    let _ = tx.send(());
                }
            }
        });
        if !self.inner.client.is_connected() {
            return;
        }
        let _ = rx.await;
    }

    /// Answer `completion/complete` upstream; a `ref/prompt` name loses `prefix` first.
    ///
    /// # Errors
    /// The upstream's error.
    pub async fn complete(
        &self,
        mut params: Value,
        prefix: &str,
    ) -> Result<Completion, ErrorObject> {
        if params["ref"]["type"] == "ref/prompt" {
            if let Some(name) = params["ref"]["name"].as_str() {
                let bare = name.strip_prefix(prefix).unwrap_or(name).to_owned();
                params["ref"]["name"] = json!(bare);
            }
        }
        let value = self
            .inner
            .client
            .request(
                "completion/complete",
                Some(params),
                RequestOptions::default(),
            )
            .await
            .map_err(upstream_error)?;
        serde_json::from_value(value["completion"].clone())
            .map_err(|e| ErrorObject::internal(format!("upstream: a malformed completion: {e}")))
    }
}

/// What an upstream notification means downstream.
fn on_upstream_notification(
    inner: &Weak<Inner>,
    due: &[AtomicBool; 3],
    changes: &Mutex<mpsc::Sender<()>>,
    n: &JsonRpcNotification,
) {
    if let Some(kind) = list_kind(&n.method) {
        due[due_index(kind)].store(true, Ordering::Release);
        // Full: the doorbell already rang, and the flag is read after it is answered.
        let _ = lock(changes).try_send(());
        return;
    }
    if let Some(inner) = inner.upgrade() {
        pass_on(&inner, n);
    }
}

/// The most of an upstream log message's `data` (as JSON text) copied into our own log: 2 KiB.
const MAX_LOGGED_DATA_BYTES: usize = 2048;

fn pass_on(inner: &Inner, n: &JsonRpcNotification) {
    let params = n.params.clone().map_or(Value::Null, Value::Object);
    match n.method.as_str() {
        "notifications/resources/updated" => {
            if let Some(uri) = params["uri"].as_str() {
                // Each target sends it only to the clients subscribed to `uri`.
                for target in lock(&inner.targets).iter() {
                    target.server.notify_resource_updated(uri);
                }
            }
        }
        // No call in flight to hear it (or filtered out there): our own log has it.
        "notifications/message" if !inner.relay.log(&params) => {
            // Cut: an upstream's message of megabytes is not copied into our log whole.
            let data = crate::wire::json_text::to_text(&params["data"]);
            let data = crate::wire::cut_text(&data, MAX_LOGGED_DATA_BYTES);
            tracing::info!(target: "upstream", level = %params["level"], %data, "upstream log");
        }
        _ => {}
    }
}

/// The place of `kind` in [`Inner::due`].
fn due_index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Prompts => 1,
        ListKind::Resources => 2,
    }
}

fn list_kind(method: &str) -> Option<ListKind> {
    match method {
        "notifications/tools/list_changed" => Some(ListKind::Tools),
        "notifications/prompts/list_changed" => Some(ListKind::Prompts),
        "notifications/resources/list_changed" => Some(ListKind::Resources),
        _ => None,
    }
}

fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorObject> {
    serde_json::from_value(value)
        .map_err(|e| ErrorObject::internal(format!("upstream: a malformed result: {e}")))
}

/// The upstream's entries of one kind that parse; one that does not is left out with a
/// warning (one broken entry does not take the upstream's others down).
fn parse_all<T: serde::de::DeserializeOwned>(values: Vec<Value>) -> Result<Vec<T>, ClientError> {
    Ok(crate::client::parse_listed("upstream list", values))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
