//! Skills (the `io.modelcontextprotocol/skills` extension,
//! [SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension)): skills served as
//! resources under `skill://`, listed by `skills/list`, fetched by `skills/get`, their
//! directories read by `resources/directory/read`.
//!
//! A [`Skill`] is a directory of files whose root holds a `SKILL.md` that begins with YAML
//! frontmatter (`name`, `description`, [Agent Skills](https://agentskills.io/specification)).
//! It is built once — frontmatter parsed, each file's SHA-256 digest and size computed — and
//! then served as it is. A [`SkillRegistry`] holds skills built in code and any number of
//! [`SkillSource`]s (the native `SkillDirectory` serves a directory tree and rebuilds what
//! changed on disk); the server answers from the union of both.
//!
//! | file | what |
//! |---|---|
//! | `skills.rs` | the wire types ([`SkillEntry`], [`SkillResource`]), digests, naming rules, [`Skill`], [`SkillRegistry`] |
//! | `skills/frontmatter.rs` | [`frontmatter`]: the `SKILL.md` frontmatter read into JSON, compared field by field |
//! | `skills/tree.rs` | the served namespace as a tree: `resources/list` entries, reads, directory listings |
//! | `skills/tests.rs` | building skills, the entries' shapes, digests and names |

pub mod frontmatter;
mod tree;

use std::fmt;
use std::sync::{Arc, RwLock};

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::primitives::resources::ResourceContents;
use crate::wire::jsonrpc::ErrorObject;
use crate::{MaybeSend, MaybeSync};

pub use frontmatter::{
    frontmatter_block, frontmatter_differences, parse_frontmatter, split_frontmatter,
    FrontmatterError, MAX_FRONTMATTER_NODES,
};
pub use tree::SkillTree;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// The file every skill holds at its root.
pub const SKILL_FILE: &str = "SKILL.md";
/// The scheme this crate serves skills under (`skill://<skill-path>/<file-path>`).
pub const SKILL_SCHEME: &str = "skill";
/// The `mimeType` of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The `mimeType` of a `SKILL.md` resource.
pub const SKILL_MIME_TYPE: &str = "text/markdown";
/// The most files one skill may have, `SKILL.md` included (the spec's per-skill limit): 512.
pub const MAX_SKILL_RESOURCES: usize = 512;
/// The most bytes one skill's files may add up to (the spec's per-skill limit): 16 MiB.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One file of a skill with the digest and size of its content (spec `SkillResource`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits: the SHA-256 of the file's raw bytes.
    pub digest: String,
    /// The file's length in bytes (the bytes the digest covers).
    pub size: u64,
}

/// A skill's files: the complete list, or `"dynamic"` when the server publishes no digests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file of the skill, each once, `SKILL.md` included.
    Listed(Vec<SkillResource>),
    /// The string `"dynamic"`: generated content with no stable digests (nothing to verify).
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Listed(files) => files.serialize(s),
            SkillResources::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "dynamic" => Ok(SkillResources::Dynamic),
            v @ Value::Array(_) => serde_json::from_value(v)
                .map(SkillResources::Listed)
                .map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                r#""resources" must be an array of {{uri, digest, size}} or "dynamic", not {}"#,
                crate::wire::json_text::JsonText(&other)
            ))),
        }
    }
}

/// The entry for one skill, as `skills/list` and `skills/get` carry it (spec `Skill`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`, readable with `resources/read`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as a JSON object, every field kept (`name` and `description`
    /// always present).
    pub frontmatter: Map<String, Value>,
    /// The skill's files.
    pub resources: SkillResources,
}

impl SkillEntry {
    /// The skill's `name` (its frontmatter's; the last segment of its skill path).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The skill's `description`.
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The listed file at `uri`, `None` when it is not listed (or the entry is dynamic).
    pub fn resource(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }

    /// The skill's root directory URI: its `uri` without `/SKILL.md`.
    pub fn root(&self) -> &str {
        self.uri
            .strip_suffix(SKILL_FILE)
            .and_then(|r| r.strip_suffix('/'))
            .unwrap_or(&self.uri)
    }

    /// Resolve a reference relative to the skill's root (`references/FORMS.md` →
    /// `skill://pdf-processing/references/FORMS.md`); a full URI (with `://`) stays as it is.
    pub fn resolve(&self, reference: &str) -> String {
        if reference.contains("://") {
            return reference.to_owned();
        }
        format!("{}/{}", self.root(), reference.trim_start_matches("./"))
    }
}

/// `sha256:` followed by the 64 lowercase hex digits of the SHA-256 of `bytes` (the spec's
/// digest format).
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Whether `name` follows the Agent Skills naming rules: 1–64 characters of lowercase ASCII
/// letters, digits and hyphens, with no leading, trailing or doubled hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skill name a `…/<name>/SKILL.md` URI carries (its last skill-path segment), any scheme.
pub fn skill_name_of(uri: &str) -> Option<&str> {
    let path = &uri[uri.find("://")? + 3..];
    let root = path.strip_suffix(SKILL_FILE)?.strip_suffix('/')?;
    root.rsplit('/').next().filter(|s| !s.is_empty())
}

/// Why a skill cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The `SKILL.md` frontmatter is missing or broken.
    #[error(transparent)]
    Frontmatter(#[from] FrontmatterError),
    /// The skill path is empty, has an empty, `.` or `..` segment, or a character a URI path
    /// segment cannot hold.
    #[error(
        "invalid skill path {0:?}: one or more `/`-separated segments of unreserved URI characters"
    )]
    InvalidPath(String),
    /// The frontmatter `name` breaks the naming rules ([`is_valid_skill_name`]).
    #[error("invalid skill name {0:?}: 1-64 lowercase letters, digits and single hyphens, not at either end")]
    InvalidName(String),
    /// The skill path's last segment differs from the frontmatter `name`.
    #[error("the skill path ends in {segment:?} but the frontmatter name is {name:?}: they must be equal")]
    NameMismatch {
        /// The last segment of the skill path.
        segment: String,
        /// The frontmatter `name`.
        name: String,
    },
    /// A file path is absolute, empty, has an empty, `.` or `..` segment, or names `SKILL.md`
    /// at the root (given separately).
    #[error("invalid file path {0:?} in a skill")]
    InvalidFile(String),
    /// Two files with one path.
    #[error("the file {0:?} is in the skill twice")]
    DuplicateFile(String),
    /// More than [`MAX_SKILL_RESOURCES`] files or [`MAX_SKILL_BYTES`] bytes.
    #[error("the skill exceeds the per-skill limits ({MAX_SKILL_RESOURCES} files, {MAX_SKILL_BYTES} bytes): {files} files, {bytes} bytes")]
    TooLarge {
        /// Its files, `SKILL.md` included.
        files: usize,
        /// Their bytes.
        bytes: u64,
    },
}

/// One file of a served skill: its path in the skill, URI, media type, bytes and digest.
#[derive(Clone)]
pub struct SkillFile {
    path: String,
    uri: String,
    mime_type: String,
    bytes: Arc<[u8]>,
    digest: String,
}

impl fmt::Debug for SkillFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillFile")
            .field("uri", &self.uri)
            .field("size", &self.bytes.len())
            .field("digest", &self.digest)
            .finish()
    }
}

impl SkillFile {
    fn new(root: &str, path: String, bytes: Arc<[u8]>) -> Self {
        SkillFile {
            uri: format!("{root}/{path}"),
            mime_type: mime_type_of(&path, &bytes).to_owned(),
            digest: digest(&bytes),
            path,
            bytes,
        }
    }

    /// The path within the skill (`SKILL.md`, `references/FORMS.md`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The resource URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The media type (from the file extension; `text/markdown` for `.md`).
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The entry of this file in its skill's `resources`.
    pub fn resource(&self) -> SkillResource {
        SkillResource {
            uri: self.uri.clone(),
            digest: self.digest.clone(),
            size: self.bytes.len() as u64,
        }
    }

    /// The `resources/read` contents: `text` when the bytes are UTF-8, else base64 `blob` (a
    /// reader gets the same bytes either way).
    pub fn contents(&self) -> ResourceContents {
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => ResourceContents::text(&self.uri, Some(&self.mime_type), text),
            Err(_) => {
                use base64::Engine;
                let blob = base64::engine::general_purpose::STANDARD.encode(&self.bytes);
                ResourceContents::blob(&self.uri, Some(&self.mime_type), blob)
            }
        }
    }
}

/// The media type of a skill file, from its extension (`application/octet-stream` for unknown
/// binary files, `text/plain` for unknown text).
pub fn mime_type_of(path: &str, bytes: &[u8]) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => SKILL_MIME_TYPE,
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "application/x-sh",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/typescript",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("toml") => "application/toml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// A served skill: its path, frontmatter and files, each file's digest and size computed once
/// when the skill is built.
///
/// ```
/// use orkestrel_mcp::primitives::skills::Skill;
/// let skill = Skill::new(
///     "pdf-processing",
///     "---\nname: pdf-processing\ndescription: Fill PDF forms\n---\n\nSee references/FORMS.md.\n",
/// )?
/// .with_file("references/FORMS.md", "Form fields.\n")?;
/// assert_eq!(skill.uri(), "skill://pdf-processing/SKILL.md");
/// assert_eq!(skill.files().len(), 2);
/// # Ok::<(), orkestrel_mcp::primitives::skills::SkillError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Skill {
    root: String,
    frontmatter: Map<String, Value>,
    files: Vec<SkillFile>,
    bytes: u64,
}

impl Skill {
    /// A skill at `skill://<skill_path>` whose `SKILL.md` is `skill_md`. The path is one or
    /// more `/`-separated segments; its last must equal the frontmatter `name`.
    ///
    /// # Errors
    /// [`SkillError`]: broken frontmatter, a bad path or name, or a name that is not the
    /// path's last segment.
    pub fn new(skill_path: &str, skill_md: impl Into<Vec<u8>>) -> Result<Skill, SkillError> {
        let skill_md: Arc<[u8]> = skill_md.into().into();
        let text = std::str::from_utf8(&skill_md).map_err(|_| FrontmatterError::Missing)?;
        let frontmatter = parse_frontmatter(text)?;
        let segments: Vec<&str> = skill_path.split('/').collect();
        if segments.iter().any(|s| !is_path_segment(s)) {
            return Err(SkillError::InvalidPath(skill_path.to_owned()));
        }
        let name = frontmatter["name"].as_str().unwrap_or_default().to_owned();
        if !is_valid_skill_name(&name) {
            return Err(SkillError::InvalidName(name));
        }
        let segment = segments.last().copied().unwrap_or_default();
        if segment != name {
            return Err(SkillError::NameMismatch {
                segment: segment.to_owned(),
                name,
            });
        }
        let root = format!("{SKILL_SCHEME}://{skill_path}");
        let bytes = skill_md.len() as u64;
        let skill = Skill {
            files: vec![SkillFile::new(&root, SKILL_FILE.to_owned(), skill_md)],
            root,
            frontmatter,
            bytes,
        };
        skill.check_limits()?;
        Ok(skill)
    }

    /// Add a supporting file at `path` (relative to the skill root, `/`-separated).
    ///
    /// # Errors
    /// [`SkillError::InvalidFile`], [`SkillError::DuplicateFile`], or
    /// [`SkillError::TooLarge`] when the skill would exceed the per-skill limits.
    pub fn with_file(mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Result<Skill, SkillError> {
        self.add_file(path, bytes.into().into())?;
        Ok(self)
    }

    /// Add a file whose bytes are already shared (a directory tree's files are read once and
    /// shared by every skill that holds them).
    ///
    /// # Errors
    /// As [`Skill::with_file`].
    pub fn add_file(&mut self, path: &str, bytes: Arc<[u8]>) -> Result<(), SkillError> {
        if !is_file_path(path) {
            return Err(SkillError::InvalidFile(path.to_owned()));
        }
        let at = match self.files[1..].binary_search_by(|f| f.path.as_str().cmp(path)) {
            Ok(_) => return Err(SkillError::DuplicateFile(path.to_owned())),
            Err(at) => at + 1,
        };
        self.bytes += bytes.len() as u64;
        self.files
            .insert(at, SkillFile::new(&self.root, path.to_owned(), bytes));
        self.check_limits()
    }

    fn check_limits(&self) -> Result<(), SkillError> {
        if self.files.len() > MAX_SKILL_RESOURCES || self.bytes > MAX_SKILL_BYTES {
            return Err(SkillError::TooLarge {
                files: self.files.len(),
                bytes: self.bytes,
            });
        }
        Ok(())
    }

    /// The URI of the skill's `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub fn uri(&self) -> &str {
        &self.files[0].uri
    }

    /// The skill's root directory URI (`skill://<skill-path>`).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The frontmatter `name`.
    pub fn name(&self) -> &str {
        self.frontmatter["name"].as_str().unwrap_or_default()
    }

    /// The frontmatter, as parsed.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.frontmatter
    }

    /// The files, `SKILL.md` first, then by path.
    pub fn files(&self) -> &[SkillFile] {
        &self.files
    }

    /// The file at `uri`, if the skill holds it.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        let path = uri.strip_prefix(&self.root)?.strip_prefix('/')?;
        if path == SKILL_FILE {
            return self.files.first();
        }
        let rest = &self.files[1..];
        rest.binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &rest[i])
    }

    /// The skill's entry for `skills/list` and `skills/get`.
    pub fn entry(&self) -> SkillEntry {
        SkillEntry {
            uri: self.uri().to_owned(),
            frontmatter: self.frontmatter.clone(),
            resources: SkillResources::Listed(self.files.iter().map(SkillFile::resource).collect()),
        }
    }
}

/// Whether `path` can name a file of a skill ([`Skill::add_file`]): `/`-separated segments of
/// URI characters (no space, no non-ASCII letter, no `.` / `..`), not `SKILL.md` itself.
pub fn is_file_path(path: &str) -> bool {
    path != SKILL_FILE && path.split('/').all(is_path_segment)
}

/// A segment of a skill path or file path: non-empty, not `.` or `..`, of RFC 3986 unreserved
/// characters, sub-delimiters, `:` and `@` (no `%`, `/`, `?`, `#`, spaces or controls).
fn is_path_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b))
}

/// Where skills come from besides those built in code: a directory tree, a database. Asked on
/// every skills request (`skills/list`, `skills/get`, `resources/read` of a skill file,
/// `resources/directory/read`), so it answers from what it holds and refreshes cheaply.
pub trait SkillSource: MaybeSend + MaybeSync + 'static {
    /// The skills served now, each built once and shared.
    fn skills(&self) -> Vec<Arc<Skill>>;
}

/// The live set of skills a server serves: skills built in code and [`SkillSource`]s.
///
/// A skill built in code wins over a source's skill with the same URI; among sources, the one
/// added first wins.
#[derive(Default)]
pub struct SkillRegistry {
    skills: RwLock<IndexMap<String, Arc<Skill>>>,
    sources: RwLock<Vec<Arc<dyn SkillSource>>>,
}

impl fmt::Debug for SkillRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillRegistry")
            .field("skills", &self.skills.read().map(|s| s.len()).unwrap_or(0))
            .field(
                "sources",
                &self.sources.read().map(|s| s.len()).unwrap_or(0),
            )
            .finish()
    }
}

impl SkillRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        SkillRegistry::default()
    }

    /// Add (or replace, by URI) a skill built in code.
    pub fn add(&self, skill: Skill) {
        let mut map = self.skills.write().unwrap_or_else(|e| e.into_inner());
        map.insert(skill.uri().to_owned(), Arc::new(skill));
    }

    /// Remove a skill built in code by its `SKILL.md` URI; `true` when it was there.
    pub fn remove(&self, uri: &str) -> bool {
        let mut map = self.skills.write().unwrap_or_else(|e| e.into_inner());
        map.shift_remove(uri).is_some()
    }

    /// Serve the skills of `source` too.
    pub fn add_source(&self, source: impl SkillSource) {
        self.sources
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(source));
    }

    /// Whether there is nothing to serve: no skill built in code and no source (the extension
    /// is declared as soon as either exists, even while a source holds no skill).
    pub fn is_empty(&self) -> bool {
        self.skills.read().map_or(true, |s| s.is_empty())
            && self.sources.read().map_or(true, |s| s.is_empty())
    }

    /// Every skill served now: those built in code, then each source's, one per URI.
    pub fn snapshot(&self) -> SkillTree {
        let mut all: IndexMap<String, Arc<Skill>> = self
            .skills
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let sources = self
            .sources
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for source in sources {
            for skill in source.skills() {
                all.entry(skill.uri().to_owned()).or_insert(skill);
            }
        }
        SkillTree::new(all.into_values().collect())
    }

    /// The entries of every skill served now (`skills/list`).
    pub fn list(&self) -> Vec<SkillEntry> {
        self.snapshot().skills().iter().map(|s| s.entry()).collect()
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    ///
    /// # Errors
    /// `-32602` (with `data.uri`) when no skill is served there.
    pub fn get(&self, uri: &str) -> Result<SkillEntry, ErrorObject> {
        self.snapshot()
            .skills()
            .iter()
            .find(|s| s.uri() == uri)
            .map(|s| s.entry())
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!("No skill is served at {uri}"))
                    .with_data(json!({ "uri": uri }))
            })
    }
}

#[cfg(test)]
mod tests;
