//! Prompts (spec 2025-11-25 `server/prompts`): templates of messages with string arguments.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::primitives::listing::{ListCache, Listing};
use crate::protocol::Content;
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::ErrorObject;
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// An argument a prompt accepts (spec `PromptArgument`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Argument name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A `prompts/list` entry (spec `Prompt`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptDescriptor {
    /// Programmatic name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Icons to show for it (spec 2025-11-25 `Icon[]`: `src`, `mimeType`, `sizes`, `theme`),
    /// passed through as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `user` or `assistant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt (spec `PromptMessage`): a role and one content block (text, image,
/// audio, resource link or embedded resource).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

/// The `prompts/get` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Optional description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

type GetResult = Result<GetPromptResult, ErrorObject>;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        type Getter = Arc<dyn Fn(Map<String, Value>, RequestContext) -> BoxFuture<'static, GetResult>>;
    } else {
        type Getter = Arc<dyn Fn(Map<String, Value>, RequestContext) -> BoxFuture<'static, GetResult> + Send + Sync>;
    }
}

/// A prompt: its descriptor and how to render it.
#[derive(Clone)]
pub struct Prompt {
    descriptor: PromptDescriptor,
    get: Getter,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.descriptor.fmt(f)
    }
}

impl Prompt {
    /// A prompt named `name`, rendered by `get(arguments, ctx)`; `arguments` holds the strings
    /// the client sent, already checked against the declared required arguments.
    pub fn new<F, Fut>(name: impl Into<String>, get: F) -> Self
    where
        F: Fn(Map<String, Value>, RequestContext) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = GetResult> + MaybeSend + 'static,
    {
        Prompt {
            descriptor: PromptDescriptor {
                name: name.into(),
                title: None,
                description: None,
                arguments: Vec::new(),
                icons: None,
                meta: None,
            },
            get: Arc::new(move |args, ctx| Box::pin(get(args, ctx))),
        }
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.descriptor.description = Some(description.into());
        self
    }

    /// Declare an argument.
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.descriptor.arguments.push(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(required),
        });
        self
    }

    /// Replace the whole descriptor (name, title, description, arguments), e.g. with one a
    /// server listed (a gateway re-serving it).
    pub fn with_descriptor(mut self, descriptor: PromptDescriptor) -> Self {
        self.descriptor = descriptor;
        self
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &PromptDescriptor {
        &self.descriptor
    }
}

/// The live set of prompts a server exposes.
#[derive(Default)]
pub struct PromptRegistry {
    prompts: RwLock<IndexMap<String, Prompt>>,
    /// The descriptors serialized, built on the first `prompts/list` after a change.
    listing: ListCache,
}

impl fmt::Debug for PromptRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.list().iter().map(|p| &p.name))
            .finish()
    }
}

impl PromptRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        PromptRegistry::default()
    }

    /// Add (or replace, by name) a prompt.
    pub fn add(&self, prompt: Prompt) {
        let mut map = self.prompts.write().unwrap_or_else(|e| e.into_inner());
        self.listing.clear();
        map.insert(prompt.descriptor.name.clone(), prompt);
    }

    /// Remove a prompt; `true` when it was there.
    pub fn remove(&self, name: &str) -> bool {
        let mut map = self.prompts.write().unwrap_or_else(|e| e.into_inner());
        self.listing.clear();
        map.shift_remove(name).is_some()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.prompts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Every descriptor, in insertion order.
    pub fn list(&self) -> Vec<PromptDescriptor> {
        let map = self.prompts.read().unwrap_or_else(|e| e.into_inner());
        map.values().map(|p| p.descriptor.clone()).collect()
    }

    /// Every descriptor serialized, in insertion order, cached until the next `add` / `remove`.
    pub(crate) fn listing(&self) -> Arc<Listing> {
        if let Some(listing) = self.listing.cached() {
            return listing;
        }
        let map = self.prompts.read().unwrap_or_else(|e| e.into_inner());
        self.listing.fill(map.values().map(|p| &p.descriptor))
    }

    /// Render prompt `name` with `arguments`.
    ///
    /// # Errors
    /// `-32602` for an unknown prompt, a non-string argument or a missing required argument; the
    /// prompt's own error.
    pub async fn get(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: RequestContext,
    ) -> GetResult {
        let prompt = {
            let map = self.prompts.read().unwrap_or_else(|e| e.into_inner());
            map.get(name).cloned()
        }
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?;
        if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
            return Err(ErrorObject::invalid_params(format!(
                "argument {key} must be a string"
            )));
        }
        for arg in &prompt.descriptor.arguments {
            if arg.required == Some(true) && !arguments.contains_key(&arg.name) {
                return Err(ErrorObject::invalid_params(format!(
                    "missing required argument {} for prompt {name}",
                    arg.name
                )));
            }
        }
        (prompt.get)(arguments, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn get_checks_arguments() {
        let r = PromptRegistry::new();
        r.add(
            Prompt::new("greet", |args, _| async move {
                Ok(GetPromptResult {
                    description: None,
                    messages: vec![PromptMessage {
                        role: Role::User,
                        content: Content::text(format!(
                            "hi {}",
                            args["who"].as_str().unwrap_or("")
                        )),
                    }],
                })
            })
            .with_argument("who", "who to greet", true),
        );
        let run = |args: Value| {
            futures::executor::block_on(r.get(
                "greet",
                args.as_object().unwrap().clone(),
                RequestContext::new(),
            ))
        };
        assert_eq!(
            run(json!({"who":"ada"})).unwrap().messages[0].content,
            Content::text("hi ada")
        );
        assert_eq!(run(json!({})).unwrap_err().code.0, -32602);
        assert_eq!(run(json!({"who": 5})).unwrap_err().code.0, -32602);
        let unknown = futures::executor::block_on(r.get("nope", Map::new(), RequestContext::new()));
        assert_eq!(unknown.unwrap_err().code.0, -32602);
        assert_eq!(
            serde_json::to_value(&r.list()[0]).unwrap(),
            json!({"name":"greet","arguments":[{"name":"who","description":"who to greet","required":true}]})
        );
    }
}
