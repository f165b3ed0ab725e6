//! The mirror: one kind of upstream list brought into every target, and the items that call
//! upstream.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::relay::upstream_error;
use super::relay::Start;
use super::{lock, parse, parse_all, pass_on, Gateway, Synced};
use crate::client::ClientError;
use crate::client::ToolCall;
use crate::primitives::prompts::{GetPromptResult, Prompt, PromptDescriptor};
use crate::primitives::resources::{
    Resource, ResourceContents, ResourceDescriptor, ResourceTemplate, TemplateDescriptor,
};
use crate::protocol::{TaskSupport, ToolDescriptor, ToolResult};
use crate::server::context::RequestContext;
use crate::server::ListKind;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject, JsonRpcNotification};
use crate::Tool;

impl Gateway {
    /// Bring every target in step for one kind of list.
    pub(super) async fn sync_kind(&self, kind: ListKind) -> Result<Synced, ClientError> {
        let client = &self.inner.client;
        let admits = |name: &str| self.inner.filter.admits(name);
        let mut synced = Synced::default();
        match kind {
            ListKind::Tools => {
                let mut tools = if self.upstream_declares("tools") {
                    client.list_tools().await?
                } else {
                    Vec::new()
                };
                tools.retain(|t| admits(&t.name));
                let tools = first_of_each(tools, "tool", |t| &t.name);
                let changed = self.changed(0, serde_json::to_string(&tools).unwrap_or_default());
                let mut targets = lock(&self.inner.targets);
                for target in targets.iter_mut() {
                    let mut now = HashSet::new();
                    for descriptor in &tools {
                        let name = format!("{}{}", target.prefix, descriptor.name);
                        if !target.owned.tools.contains(&name)
                            && target.server.tools().get(&name).is_some()
                        {
                            synced.collisions.push(name);
                            continue;
                        }
                        target.server.tools().add(self.tool(descriptor, &name));
                        now.insert(name);
                    }
                    for gone in target.owned.tools.difference(&now) {
                        target.server.tools().remove(gone);
                    }
                    synced.tools += now.len();
                    target.owned.tools = now;
                    if changed {
                        target.server.notify_list_changed(ListKind::Tools);
                    }
                }
            }
            ListKind::Prompts => {
                let prompts: Vec<PromptDescriptor> = if self.upstream_declares("prompts") {
                    parse_all(client.list_prompts().await?)?
                } else {
                    Vec::new()
                };
                let prompts: Vec<_> = prompts.into_iter().filter(|p| admits(&p.name)).collect();
                let prompts = first_of_each(prompts, "prompt", |p| &p.name);
                let changed = self.changed(1, serde_json::to_string(&prompts).unwrap_or_default());
                let mut targets = lock(&self.inner.targets);
                for target in targets.iter_mut() {
                    let mut now = HashSet::new();
                    for descriptor in &prompts {
                        let name = format!("{}{}", target.prefix, descriptor.name);
                        let theirs = !target.owned.prompts.contains(&name)
                            && target
                                .server
                                .prompts()
                                .list()
                                .iter()
                                .any(|p| p.name == name);
                        if theirs {
                            synced.collisions.push(name);
                            continue;
                        }
                        target.server.prompts().add(self.prompt(descriptor, &name));
                        now.insert(name);
                    }
                    for gone in target.owned.prompts.difference(&now) {
                        target.server.prompts().remove(gone);
                    }
                    synced.prompts += now.len();
                    target.owned.prompts = now;
                    if changed {
                        target.server.notify_list_changed(ListKind::Prompts);
                    }
                }
            }
            ListKind::Resources => {
                let (resources, templates): (Vec<ResourceDescriptor>, Vec<TemplateDescriptor>) =
                    if self.upstream_declares("resources") {
                        (
                            parse_all(client.list_resources().await?)?,
                            parse_all(client.list_resource_templates().await?)?,
                        )
                    } else {
                        (Vec::new(), Vec::new())
                    };
                let resources = first_of_each(resources, "resource", |r| &r.uri);
                let templates = first_of_each(templates, "resource template", |t| &t.uri_template);
                let listing = serde_json::to_string(&(&resources, &templates)).unwrap_or_default();
                let changed = self.changed(2, listing);
                let mut targets = lock(&self.inner.targets);
                for target in targets.iter_mut() {
                    let registry = target.server.resources().clone();
                    let mut now = HashSet::new();
                    for descriptor in resources.iter().filter(|r| admits(&r.name)) {
                        let uri = descriptor.uri.clone();
                        let theirs = !target.owned.resources.contains(&uri)
                            && registry.list().iter().any(|r| r.uri == uri);
                        if theirs {
                            synced.collisions.push(uri);
                            continue;
                        }
                        registry.add(self.resource(descriptor));
                        now.insert(uri);
                    }
                    for gone in target.owned.resources.difference(&now) {
                        registry.remove(gone);
                    }
                    synced.resources += now.len();
                    target.owned.resources = now;
                    let mut now = HashSet::new();
                    for descriptor in templates.iter().filter(|t| admits(&t.name)) {
                        let uri = descriptor.uri_template.clone();
                        let theirs = !target.owned.templates.contains(&uri)
                            && registry.templates().iter().any(|t| t.uri_template == uri);
                        if theirs {
                            synced.collisions.push(uri);
                            continue;
                        }
                        registry.remove_template(&uri);
                        registry.add_template(self.template(descriptor));
                        now.insert(uri);
                    }
                    for gone in target.owned.templates.difference(&now) {
                        registry.remove_template(gone);
                    }
                    synced.templates += now.len();
                    target.owned.templates = now;
                    if changed {
                        target.server.notify_list_changed(ListKind::Resources);
                    }
                }
            }
        }
        Ok(synced)
    }

    /// Record the listing of kind `slot`; whether it differs from the last one.
    pub(super) fn changed(&self, slot: usize, listing: String) -> bool {
        let mut listed = lock(&self.inner.listed);
        let changed = listed[slot].as_deref() != Some(listing.as_str());
        listed[slot] = Some(listing);
        changed
    }

    /// Pass an upstream notification that is not a list change on.
    pub(super) fn pass_on(&self, n: &JsonRpcNotification) {
        pass_on(&self.inner, n);
    }

    fn tool(&self, descriptor: &ToolDescriptor, name: &str) -> Tool {
        let mut mirrored = descriptor.clone();
        mirrored.name = name.to_owned();
        // Served plain downstream (the targets declare no tasks): a tool the upstream runs only
        // as a task is called as one there, and its result answers the plain call.
        let as_task = descriptor.task_support() == TaskSupport::Required;
        mirrored.execution = None;
        let (gateway, upstream) = (self.clone(), descriptor.name.clone());
        Tool::from_json(name, descriptor.input_schema.clone(), move |args, ctx| {
            let (gateway, upstream) = (gateway.clone(), upstream.clone());
            async move {
                if as_task {
                    gateway.call_tool_as_task(upstream, args).await
                } else {
                    gateway.call_tool(upstream, args, ctx).await
                }
            }
        })
        .with_descriptor(mirrored)
    }

    /// A tool the upstream runs only as a task (`taskSupport: "required"`): run as one, polled
    /// to its end with [`McpClient::wait_task`](crate::client::McpClient::wait_task) (input the
    /// upstream asks for goes to the gateway client's handler, as for any upstream request), its
    /// result the call's. A call ended early cancels the upstream task.
    async fn call_tool_as_task(
        &self,
        name: String,
        arguments: Map<String, Value>,
    ) -> Result<ToolResult, ErrorObject> {
        let client = &self.inner.client;
        let task = match client
            .call_tool_as_task(&name, Value::Object(arguments), None)
            .await
            .map_err(upstream_error)?
        {
            ToolCall::Result(result) => return Ok(result),
            ToolCall::Task(task) => task,
        };
        // Dropped before its end (the downstream call cancelled): cancel the upstream task.
        struct CancelOnDrop(Option<(crate::client::McpClient, String)>);
        impl Drop for CancelOnDrop {
            fn drop(&mut self) {
                if let (Some((client, id)), Some(spawn)) =
                    (self.0.take(), crate::host::defaults::spawner())
                {
                    spawn(Box::pin(async move {
                        let _ = client.cancel_task(&id).await;
                    }));
                }
            }
        }
        let mut guard = CancelOnDrop(Some((client.clone(), task.task_id.clone())));
        let result = client.wait_task(&task, &|_| {}).await;
        guard.0 = None;
        result.map_err(upstream_error)
    }

    async fn call_tool(
        &self,
        name: String,
        arguments: Map<String, Value>,
        ctx: RequestContext,
    ) -> Result<ToolResult, ErrorObject> {
        let client = self.inner.client.clone();
        let shown = name.clone();
        let start: Start = Box::new(move |options| {
            Box::pin(async move {
                let result = client
                    .call_tool_with(&name, Value::Object(arguments), options)
                    .await?;
                serde_json::to_value(result)
                    .map_err(|e| ClientError::InvalidResponse(e.to_string()))
            })
        });
        let value = self.run("tools/call", &shown, &ctx, start).await?;
        parse(value)
    }

    fn prompt(&self, descriptor: &PromptDescriptor, name: &str) -> Prompt {
        let mut mirrored = descriptor.clone();
        mirrored.name = name.to_owned();
        let (gateway, upstream) = (self.clone(), descriptor.name.clone());
        Prompt::new(name, move |arguments, ctx| {
            let (gateway, upstream) = (gateway.clone(), upstream.clone());
            async move {
                let params = json!({ "name": upstream, "arguments": arguments });
                let value = gateway.forward("prompts/get", params, &ctx).await?;
                parse::<GetPromptResult>(value)
            }
        })
        .with_descriptor(mirrored)
    }

    fn resource(&self, descriptor: &ResourceDescriptor) -> Resource {
        let gateway = self.clone();
        Resource::new(
            descriptor.uri.clone(),
            descriptor.name.clone(),
            move |uri, ctx| {
                let gateway = gateway.clone();
                async move { gateway.read(uri, ctx).await }
            },
        )
        .with_descriptor(descriptor.clone())
    }

    fn template(&self, descriptor: &TemplateDescriptor) -> ResourceTemplate {
        let gateway = self.clone();
        ResourceTemplate::new(
            descriptor.uri_template.clone(),
            descriptor.name.clone(),
            move |uri, _variables, ctx| {
                let gateway = gateway.clone();
                async move { gateway.read(uri, ctx).await }
            },
        )
        .with_descriptor(descriptor.clone())
    }

    async fn read(
        &self,
        uri: String,
        ctx: RequestContext,
    ) -> Result<Vec<ResourceContents>, ErrorObject> {
        let value = self
            .forward("resources/read", json!({ "uri": uri }), &ctx)
            .await?;
        parse(value["contents"].clone())
    }

    /// One request upstream through the relay.
    async fn forward(
        &self,
        method: &'static str,
        params: Value,
        ctx: &RequestContext,
    ) -> Result<Value, ErrorObject> {
        let client = self.inner.client.clone();
        let shown = match method {
            "resources/read" => params["uri"].as_str(),
            _ => params["name"].as_str(),
        }
        .unwrap_or_default()
        .to_owned();
        let start: Start = Box::new(move |options| {
            Box::pin(async move { client.request(method, Some(params), options).await })
        });
        self.run(method, &shown, ctx, start).await
    }

    /// Run one call through the relay, logged when [`Gateway::set_call_log`] asked for it.
    async fn run(
        &self,
        method: &str,
        name: &str,
        ctx: &RequestContext,
        start: Start,
    ) -> Result<Value, ErrorObject> {
        let label = lock(&self.inner.call_log).clone();
        let Some(server) = label else {
            return self.inner.relay.run(ctx, start).await;
        };
        let began = std::time::Instant::now();
        // Dropped before its end (the client cancelled, or went away): logged so.
        let mut pending = Cancelled {
            server: &server,
            method,
            name,
            began,
            armed: true,
        };
        let outcome = self.inner.relay.run(ctx, start).await;
        pending.armed = false;
        let ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &outcome {
            Ok(value) if value["isError"] == true => {
                tracing::info!(%server, method, name, ms, "call: an error result");
            }
            Ok(_) => tracing::info!(%server, method, name, ms, "call: ok"),
            Err(e) if e.code == ErrorCode::INPUT_REQUIRED => {
                tracing::info!(%server, method, name, ms, "call: waiting for its client's input");
            }
            Err(e) => {
                tracing::info!(%server, method, name, ms, code = e.code.0, error = %e.message, "call: failed");
            }
        }
        outcome
    }
}

/// Logs a call of [`Gateway::set_call_log`] that was dropped before its end.
struct Cancelled<'a> {
    server: &'a str,
    method: &'a str,
    name: &'a str,
    began: std::time::Instant,
    armed: bool,
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if self.armed {
            let ms = u64::try_from(self.began.elapsed().as_millis()).unwrap_or(u64::MAX);
            let (server, method, name) = (self.server, self.method, self.name);
            tracing::info!(%server, method, name, ms, "call: cancelled");
        }
    }
}

/// The first entry of each key (a name, a URI) in an upstream's list; a repeat is left out with
/// a warning, so every endpoint serves the same one and no repeat reads as a collision.
fn first_of_each<T>(items: Vec<T>, what: &str, key: impl Fn(&T) -> &String) -> Vec<T> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|item| {
            let fresh = seen.insert(key(item).clone());
            if !fresh {
                tracing::warn!(what, key = %key(item), "gateway: the upstream lists it twice; the first is served");
            }
            fresh
        })
        .collect()
}
