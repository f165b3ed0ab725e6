//! [`ServerOptions`]: what a server is built from — its identity, registries, handlers, the
//! listeners' error handler, paging and the injected clock.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tasks::TaskOptions;
use super::{Clock, ErrorHandler};
use crate::primitives::prompts::PromptRegistry;
use crate::primitives::resources::ResourceRegistry;
use crate::primitives::skills::SkillRegistry;
use crate::primitives::tools::ToolRegistry;
use crate::protocol::Implementation;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorObject, RequestId};
use crate::BoxFuture;

/// A `completion/complete` answer (spec `CompleteResult.completion`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values (at most 100).
    pub values: Vec<String>,
    /// How many values exist in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// Answers `completion/complete`: `(params, ctx)` where `params` holds `ref`, `argument`
        /// and `context` as the client sent them.
        pub type Completer = Arc<dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Completion, ErrorObject>>>;
    } else {
        /// Answers `completion/complete`: `(params, ctx)` where `params` holds `ref`, `argument`
        /// and `context` as the client sent them.
        pub type Completer = Arc<dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Completion, ErrorObject>> + Send + Sync>;
    }
}

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        /// A `request` listener: `(method, id)`; `id` is `None` for a notification (seed
        /// `MCPServerEventMap`). `Send + Sync` on native targets only (a JS listener is neither).
        pub type RequestListener = Arc<dyn Fn(&str, Option<&RequestId>)>;
    } else {
        /// A `request` listener: `(method, id)`; `id` is `None` for a notification (seed
        /// `MCPServerEventMap`). `Send + Sync` on native targets only (a JS listener is neither).
        pub type RequestListener = Arc<dyn Fn(&str, Option<&RequestId>) + Send + Sync>;
    }
}

/// Options for [`McpServer::new`](super::McpServer::new) (seed `MCPServerOptions`).
#[derive(Clone)]
pub struct ServerOptions {
    /// The server's identity (`serverInfo`).
    pub info: Implementation,
    /// The live tool registry the server exposes.
    pub tools: Arc<ToolRegistry>,
    /// Optional `instructions` for the `initialize` result.
    pub instructions: Option<String>,
    /// Where a panicking event listener is reported (seed `error` option). Default: a
    /// `tracing` error.
    pub on_error: Option<ErrorHandler>,
    /// The resources (advertised when not empty).
    pub resources: Arc<ResourceRegistry>,
    /// The prompts (advertised when not empty).
    pub prompts: Arc<PromptRegistry>,
    /// The skills (the `io.modelcontextprotocol/skills` extension, with `resources`,
    /// advertised when not empty).
    pub skills: Arc<SkillRegistry>,
    /// The `completion/complete` handler (advertised as `completions` when set).
    pub completer: Option<Completer>,
    /// Whether to advertise `logging` and accept `logging/setLevel` (default `false`).
    pub logging: bool,
    /// Declare and serve `resources` and `prompts` even while their registries are empty (a
    /// gateway whose upstreams fill them later, announcing `list_changed`); default `false`:
    /// declared while not empty.
    pub declare_lists: bool,
    /// Items per page of the list methods; `None` (the default) returns everything at once.
    pub page_size: Option<usize>,
    /// `ttlMs` on cacheable modern results (default 0: always revalidate).
    pub cache_ttl_ms: u64,
    /// Tasks ([`ServerOptions::with_tasks`]); `None` (the default): no task runs, `tasks/*` is
    /// `-32601` and every tool call is plain.
    pub tasks: Option<TaskOptions>,
    /// The clock (ms since the Unix epoch) used to expire `requestState` and tasks; default
    /// [`host::defaults::clock`](crate::host::defaults::clock): the system clock on native
    /// targets, none (no expiry) on wasm.
    pub clock: Option<Clock>,
}

impl ServerOptions {
    /// Options with a name, a version and an empty registry.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerOptions {
            info: Implementation::new(name, version),
            tools: Arc::new(ToolRegistry::new()),
            instructions: None,
            on_error: None,
            resources: Arc::new(ResourceRegistry::new()),
            prompts: Arc::new(PromptRegistry::new()),
            skills: Arc::new(SkillRegistry::new()),
            completer: None,
            logging: false,
            declare_lists: false,
            page_size: None,
            cache_ttl_ms: 0,
            tasks: None,
            clock: crate::host::defaults::clock(),
        }
    }

    /// Advertise `logging` and accept `logging/setLevel`.
    pub fn with_logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// Declare `resources` and `prompts` from the start, empty or not
    /// ([`ServerOptions::declare_lists`]).
    pub fn with_declared_lists(mut self) -> Self {
        self.declare_lists = true;
        self
    }

    /// Paginate every list method with `page_size` items per page.
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = Some(page_size.max(1));
        self
    }

    /// Answer `completion/complete` with `completer(params, ctx)`.
    pub fn with_completer<F, Fut>(mut self, completer: F) -> Self
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Completion, ErrorObject>>
            + crate::MaybeSend
            + 'static,
    {
        self.completer = Some(Arc::new(move |params, ctx| {
            Box::pin(completer(params, ctx))
        }));
        self
    }

    /// Run task-supporting tools as tasks ([`crate::server::tasks`]): advertise `tasks`
    /// (2025-11-25) and the `io.modelcontextprotocol/tasks` extension (2026-07-28), and serve
    /// the `tasks/*` methods.
    pub fn with_tasks(mut self, tasks: TaskOptions) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Use this registry.
    pub fn with_tools(mut self, tools: Arc<ToolRegistry>) -> Self {
        self.tools = tools;
        self
    }

    /// Serve the skills of this registry.
    pub fn with_skills(mut self, skills: Arc<SkillRegistry>) -> Self {
        self.skills = skills;
        self
    }

    /// Set the `initialize` instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Read time from `clock` (ms since the Unix epoch) instead of the default.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Set the handler that receives listener panics.
    pub fn with_error_handler(
        mut self,
        handler: impl Fn(&str, &str) + Send + Sync + 'static,
    ) -> Self {
        self.on_error = Some(Arc::new(handler));
        self
    }
}
