//! Resources (spec 2025-11-25 `server/resources`): static resources by URI, URI templates
//! (RFC 6570 level 1 `{var}` and `{+var}`), their contents, and subscriptions.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, RwLock};

use futures::FutureExt;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::primitives::listing::{ListCache, Listing};
use crate::server::context::RequestContext;
use crate::wire::jsonrpc::{ErrorCode, ErrorObject};
use crate::{BoxFuture, MaybeSend, MaybeSync};

/// `-32002`: the legacy "Resource not found" code (2026-07-28 uses `-32602`); an alias of
/// [`ErrorCode::RESOURCE_NOT_FOUND`], its home.
pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode::RESOURCE_NOT_FOUND;

/// A `resources/list` entry (spec `Resource`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDescriptor {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Media type of its contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Annotations, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons to show for it (spec 2025-11-25 `Icon[]`: `src`, `mimeType`, `sizes`, `theme`),
    /// passed through as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A `resources/templates/list` entry (spec `ResourceTemplate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateDescriptor {
    /// The RFC 6570 URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Media type of the contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons to show for it (spec 2025-11-25 `Icon[]`: `src`, `mimeType`, `sizes`, `theme`),
    /// passed through as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// One item of a `resources/read` result: text or base64 `blob` (spec `ResourceContents`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// `{ uri, mimeType?, text }`
    Text {
        /// The URI read.
        uri: String,
        /// Media type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// `{ uri, mimeType?, blob }` with base64 bytes.
    Blob {
        /// The URI read.
        uri: String,
        /// Media type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64-encoded bytes.
        blob: String,
    },
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
        }
    }

    /// Binary contents, already base64-encoded.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        base64: impl Into<String>,
    ) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64.into(),
        }
    }
}

type ReadResult = Result<Vec<ResourceContents>, ErrorObject>;

cfg_if::cfg_if! {
    if #[cfg(target_family = "wasm")] {
        type Reader = Arc<dyn Fn(String, Map<String, Value>, RequestContext) -> BoxFuture<'static, ReadResult>>;
    } else {
        type Reader = Arc<dyn Fn(String, Map<String, Value>, RequestContext) -> BoxFuture<'static, ReadResult> + Send + Sync>;
    }
}

fn reader<F, Fut>(read: F) -> Reader
where
    F: Fn(String, Map<String, Value>, RequestContext) -> Fut + MaybeSend + MaybeSync + 'static,
    Fut: Future<Output = ReadResult> + MaybeSend + 'static,
{
    Arc::new(move |uri, vars, ctx| Box::pin(read(uri, vars, ctx).map(|r| r)))
}

/// A static resource: its descriptor and how to read it.
#[derive(Clone)]
pub struct Resource {
    descriptor: ResourceDescriptor,
    read: Reader,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.descriptor.fmt(f)
    }
}

impl Resource {
    /// A resource at `uri` named `name`, read by `read(uri, ctx)`.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(String, RequestContext) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = ReadResult> + MaybeSend + 'static,
    {
        Resource {
            descriptor: ResourceDescriptor {
                uri: uri.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
                annotations: None,
                icons: None,
                meta: None,
            },
            read: reader(move |uri, _vars, ctx| read(uri, ctx)),
        }
    }

    /// A resource whose contents are fixed text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: &str,
        text: impl Into<String>,
    ) -> Self {
        let (mime, text) = (mime_type.to_owned(), text.into());
        Resource::new(uri, name, move |uri, _| {
            let contents = ResourceContents::text(uri, Some(&mime), text.clone());
            async move { Ok(vec![contents]) }
        })
        .with_mime_type(mime_type)
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.descriptor.description = Some(description.into());
        self
    }

    /// Set the media type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.descriptor.mime_type = Some(mime_type.into());
        self
    }

    /// Replace the whole descriptor (its `uri` included), e.g. with one a server listed (a
    /// gateway re-serving it).
    pub fn with_descriptor(mut self, descriptor: ResourceDescriptor) -> Self {
        self.descriptor = descriptor;
        self
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }
}

/// A URI template and how to read the URIs it matches (the matched variables are passed in).
#[derive(Clone)]
pub struct ResourceTemplate {
    descriptor: TemplateDescriptor,
    read: Reader,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.descriptor.fmt(f)
    }
}

impl ResourceTemplate {
    /// A template such as `test://template/{id}/data`, read by `read(uri, variables, ctx)`.
    pub fn new<F, Fut>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(String, Map<String, Value>, RequestContext) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = ReadResult> + MaybeSend + 'static,
    {
        ResourceTemplate {
            descriptor: TemplateDescriptor {
                uri_template: uri_template.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                annotations: None,
                icons: None,
                meta: None,
            },
            read: reader(read),
        }
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.descriptor.description = Some(description.into());
        self
    }

    /// Set the media type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.descriptor.mime_type = Some(mime_type.into());
        self
    }

    /// Replace the whole descriptor (its `uriTemplate` included), e.g. with one a server
    /// listed (a gateway re-serving it).
    pub fn with_descriptor(mut self, descriptor: TemplateDescriptor) -> Self {
        self.descriptor = descriptor;
        self
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &TemplateDescriptor {
        &self.descriptor
    }
}

/// Match `uri` against an RFC 6570 level-1 template: `{var}` matches one or more characters
/// other than `/` (its value percent-decoded, as simple expansion encodes it), `{+var}` any
/// non-empty run (kept as is). Returns the variables, or `None`.
pub fn match_template(template: &str, uri: &str) -> Option<Map<String, Value>> {
    /// A template with variables side by side could try every split of a long URI (cubic
    /// and worse in its length, the URI being the peer's): at most this many splits are
    /// tried, then the URI does not match.
    const MAX_ATTEMPTS: usize = 10_000;
    fn go(t: &str, u: &str, vars: &mut Map<String, Value>, budget: &mut usize) -> bool {
        let Some(open) = t.find('{') else {
            return t == u;
        };
        let (literal, rest) = t.split_at(open);
        let Some(u) = u.strip_prefix(literal) else {
            return false;
        };
        let Some(close) = rest.find('}') else {
            return false;
        };
        let name = &rest[1..close];
        let after = &rest[close + 1..];
        let (reserved, name) = match name.strip_prefix('+') {
            Some(n) => (true, n),
            None => (false, name),
        };
        let limit = if reserved {
            u.len()
        } else {
            u.find('/').unwrap_or(u.len())
        };
        for end in (1..=limit).rev() {
            if !u.is_char_boundary(end) {
                continue;
            }
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            let mut attempt = vars.clone();
            // Simple expansion percent-encodes what it substitutes (RFC 6570 §3.2.2): the
            // variable is its decoded text; `{+var}` keeps reserved expansion's text as is.
            let value = if reserved {
                u[..end].to_owned()
            } else {
                percent_decode(&u[..end])
            };
            attempt.insert(name.to_owned(), Value::String(value));
            if go(after, &u[end..], &mut attempt, budget) {
                *vars = attempt;
                return true;
            }
        }
        false
    }
    let mut vars = Map::new();
    let mut budget = MAX_ATTEMPTS;
    go(template, uri, &mut vars, &mut budget).then_some(vars)
}

/// `%XX` sequences decoded; the text kept as is where they do not make UTF-8.
fn percent_decode(text: &str) -> String {
    use crate::wire::percent::{decode, Plus};
    decode(text, Plus::Kept).unwrap_or_else(|| text.to_owned())
}

/// The live set of resources and templates a server exposes.
#[derive(Default)]
pub struct ResourceRegistry {
    resources: RwLock<IndexMap<String, Resource>>,
    templates: RwLock<Vec<ResourceTemplate>>,
    /// The resource descriptors serialized, built on the first `resources/list` after a change.
    listing: ListCache,
    /// The template descriptors serialized, likewise for `resources/templates/list`.
    template_listing: ListCache,
}

impl fmt::Debug for ResourceRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceRegistry")
            .field("resources", &self.list().len())
            .field("templates", &self.templates().len())
            .finish()
    }
}

impl ResourceRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ResourceRegistry::default()
    }

    /// Add (or replace, by URI) a resource.
    pub fn add(&self, resource: Resource) {
        let mut map = self.resources.write().unwrap_or_else(|e| e.into_inner());
        self.listing.clear();
        map.insert(resource.descriptor.uri.clone(), resource);
    }

    /// Add a template (matched in insertion order after the static resources).
    pub fn add_template(&self, template: ResourceTemplate) {
        let mut list = self.templates.write().unwrap_or_else(|e| e.into_inner());
        self.template_listing.clear();
        list.push(template);
    }

    /// Remove a resource by URI; `true` when it was there.
    pub fn remove(&self, uri: &str) -> bool {
        let mut map = self.resources.write().unwrap_or_else(|e| e.into_inner());
        self.listing.clear();
        map.shift_remove(uri).is_some()
    }

    /// Remove a template by its `uriTemplate`; `true` when it was there.
    pub fn remove_template(&self, uri_template: &str) -> bool {
        let mut list = self.templates.write().unwrap_or_else(|e| e.into_inner());
        self.template_listing.clear();
        let before = list.len();
        list.retain(|t| t.descriptor.uri_template != uri_template);
        list.len() != before
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.resources
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
            && self
                .templates
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
    }

    /// Every resource descriptor, in insertion order.
    pub fn list(&self) -> Vec<ResourceDescriptor> {
        let map = self.resources.read().unwrap_or_else(|e| e.into_inner());
        map.values().map(|r| r.descriptor.clone()).collect()
    }

    /// Every template descriptor, in insertion order.
    pub fn templates(&self) -> Vec<TemplateDescriptor> {
        let list = self.templates.read().unwrap_or_else(|e| e.into_inner());
        list.iter().map(|t| t.descriptor.clone()).collect()
    }

    /// Every resource descriptor serialized, in insertion order, cached until the next change
    /// of the resources.
    pub(crate) fn listing(&self) -> Arc<Listing> {
        if let Some(listing) = self.listing.cached() {
            return listing;
        }
        let map = self.resources.read().unwrap_or_else(|e| e.into_inner());
        self.listing.fill(map.values().map(|r| &r.descriptor))
    }

    /// Every template descriptor serialized, in insertion order, cached until the next change
    /// of the templates.
    pub(crate) fn template_listing(&self) -> Arc<Listing> {
        if let Some(listing) = self.template_listing.cached() {
            return listing;
        }
        let list = self.templates.read().unwrap_or_else(|e| e.into_inner());
        self.template_listing
            .fill(list.iter().map(|t| &t.descriptor))
    }

    /// Read `uri`: a static resource first, then the first matching template.
    ///
    /// # Errors
    /// `-32002` "Resource not found" (with `data.uri`) when nothing matches; the reader's error.
    pub async fn read(&self, uri: &str, ctx: RequestContext) -> ReadResult {
        let found = {
            let map = self.resources.read().unwrap_or_else(|e| e.into_inner());
            map.get(uri).map(|r| (r.read.clone(), Map::new()))
        };
        let found = found.or_else(|| {
            let list = self.templates.read().unwrap_or_else(|e| e.into_inner());
            list.iter().find_map(|t| {
                match_template(&t.descriptor.uri_template, uri).map(|vars| (t.read.clone(), vars))
            })
        });
        match found {
            Some((read, vars)) => read(uri.to_owned(), vars, ctx).await,
            None => Err(
                ErrorObject::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
                    .with_data(serde_json::json!({ "uri": uri })),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_match_level_one_variables() {
        let vars = match_template("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(Value::Object(vars), json!({"id":"123"}));
        assert!(match_template("test://template/{id}/data", "test://template/1/2/data").is_none());
        assert!(match_template("test://template/{id}/data", "test://template//data").is_none());
        let vars = match_template("file:///{+path}", "file:///a/b.txt").unwrap();
        assert_eq!(vars["path"], "a/b.txt");
        assert!(match_template("x://{a}-{b}", "x://1-2").is_some());
        // Simple expansion's percent-encoding is undone; reserved expansion's text is kept.
        let vars = match_template("x://echo/{text}", "x://echo/hi%20there%2Fyou").unwrap();
        assert_eq!(vars["text"], "hi there/you");
        let vars = match_template("x://echo/{text}", "x://echo/100%25%zz%C3%A9").unwrap();
        assert_eq!(vars["text"], "100%%zzé");
        let vars = match_template("x://echo/{text}", "x://echo/bad%FF").unwrap();
        assert_eq!(vars["text"], "bad%FF", "not UTF-8: as sent");
        let vars = match_template("file:///{+path}", "file:///a%20b/c").unwrap();
        assert_eq!(vars["path"], "a%20b/c");
        // A long URI that cannot match a template of side-by-side variables ends at once.
        let long = format!("x://{}", "-".repeat(20_000));
        assert!(match_template("x://{a}-{b}-{c}.json", &long).is_none());
        assert!(match_template("x://{+a}{+b}{+c}z", &long).is_none());
    }

    #[test]
    fn read_finds_static_then_templates_else_not_found() {
        let r = ResourceRegistry::new();
        r.add(Resource::text(
            "test://static-text",
            "static",
            "text/plain",
            "hello",
        ));
        r.add_template(ResourceTemplate::new(
            "test://t/{id}",
            "t",
            |uri, vars, _| async move {
                Ok(vec![ResourceContents::text(
                    uri,
                    None,
                    format!("id={}", vars["id"].as_str().unwrap_or("")),
                )])
            },
        ));
        let run = |uri: &str| futures::executor::block_on(r.read(uri, RequestContext::new()));
        assert_eq!(
            run("test://static-text").unwrap(),
            vec![ResourceContents::text(
                "test://static-text",
                Some("text/plain"),
                "hello"
            )]
        );
        assert_eq!(
            run("test://t/9").unwrap(),
            vec![ResourceContents::text("test://t/9", None, "id=9")]
        );
        let err = run("test://missing").unwrap_err();
        assert_eq!(
            (err.code, err.data.unwrap()["uri"].clone()),
            (RESOURCE_NOT_FOUND, json!("test://missing"))
        );
        assert_eq!(
            serde_json::to_value(ResourceContents::blob("u", Some("image/png"), "AA==")).unwrap(),
            json!({"uri":"u","mimeType":"image/png","blob":"AA=="})
        );
    }
}
