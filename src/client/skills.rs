//! The client side of the Skills extension ([SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension)):
//! list and fetch skill entries without retrieving any file (Lazy Retrieval), then load a skill
//! and read its files on demand, each verified against the held entry (Verification on Read):
//! its size, its SHA-256 digest and, for a `SKILL.md`, its frontmatter field by field. Content
//! that fails is refused with a [`SkillVerificationError`] and never returned.
//!
//! ```text
//!  list_skills / get_skill ─► SkillEntry (uri, frontmatter, resources: {uri, digest, size}…)
//!  load_skill(entry) ─► resources/read SKILL.md ─► size? digest? frontmatter? ─► LoadedSkill
//!  read_skill_file(entry, "references/FORMS.md") ─► listed? ─► resources/read ─► size? digest?
//! ```

use base64::Engine;
use serde_json::{json, Value};

use super::{ClientError, McpClient};
use crate::primitives::resources::ResourceDescriptor;
use crate::primitives::skills::{
    digest, frontmatter_differences, parse_frontmatter, split_frontmatter, FrontmatterError,
    SkillEntry, SkillResources, SKILLS_EXTENSION,
};

/// Why a skill file's content was refused: it is not what the held entry describes (corrupt,
/// tampered with, or stale). Refresh the entry with [`McpClient::get_skill`] to go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillVerificationError {
    /// The content's length differs from the entry's `size`.
    #[error("{uri}: {actual} bytes where the skill entry lists {expected}")]
    SizeMismatch {
        /// The file read.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The content's SHA-256 differs from the entry's `digest`.
    #[error("{uri}: the content's digest {actual} differs from the skill entry's {expected}")]
    DigestMismatch {
        /// The file read.
        uri: String,
        /// The entry's `digest`.
        expected: String,
        /// The digest of the bytes read.
        actual: String,
    },
    /// The fetched `SKILL.md`'s frontmatter differs from the entry's `frontmatter`.
    #[error("{uri}: the SKILL.md frontmatter differs from the skill entry's in {}", fields.join(", "))]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The fields that differ, sorted.
        fields: Vec<String>,
    },
    /// The fetched `SKILL.md` has no usable frontmatter.
    #[error("{uri}: {error}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What is wrong with it.
        error: FrontmatterError,
    },
    /// The file is not among the entry's `resources` (or, for a dynamic skill, not within the
    /// skill's directory): an unlisted file is a change to the skill.
    #[error("{uri} is not a file of the skill entry {skill}")]
    Unlisted {
        /// The file asked for.
        uri: String,
        /// The skill's `SKILL.md` URI.
        skill: String,
    },
    /// `resources/read` returned no contents for the file (or a `blob` that is not base64).
    #[error("{uri}: resources/read returned no readable contents")]
    NoContent {
        /// The file read.
        uri: String,
    },
}

impl SkillVerificationError {
    /// The URI of the file that failed.
    pub fn uri(&self) -> &str {
        match self {
            SkillVerificationError::SizeMismatch { uri, .. }
            | SkillVerificationError::DigestMismatch { uri, .. }
            | SkillVerificationError::FrontmatterMismatch { uri, .. }
            | SkillVerificationError::Frontmatter { uri, .. }
            | SkillVerificationError::Unlisted { uri, .. }
            | SkillVerificationError::NoContent { uri } => uri,
        }
    }
}

/// A skill loaded under its entry: the `SKILL.md` verified, the entry held for every later read
/// ([`McpClient::read_skill_file`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedSkill {
    /// The entry the skill was loaded from.
    pub entry: SkillEntry,
    /// The verified `SKILL.md` text.
    pub skill_md: String,
}

impl LoadedSkill {
    /// The `SKILL.md` after its frontmatter block (the instructions).
    pub fn body(&self) -> &str {
        split_frontmatter(&self.skill_md).map_or(&self.skill_md, |(_, body)| body)
    }
}

fn verification(e: SkillVerificationError) -> ClientError {
    ClientError::Skill(e)
}

fn entry_of(value: Value, what: &str) -> Result<SkillEntry, ClientError> {
    let entry: SkillEntry = serde_json::from_value(value)
        .map_err(|e| ClientError::InvalidResponse(format!("{what}: {e}")))?;
    for field in ["name", "description"] {
        if !entry.frontmatter.get(field).is_some_and(Value::is_string) {
            return Err(ClientError::InvalidResponse(format!(
                "{what} ({}): frontmatter has no string {field:?}",
                entry.uri
            )));
        }
    }
    Ok(entry)
}

impl McpClient {
    /// The server's `io.modelcontextprotocol/skills` settings (`{}` or `{"directoryRead":
    /// true}`), `None` when it did not declare the extension.
    pub fn skills_extension(&self) -> Option<Value> {
        self.server_capabilities()?
            .get("extensions")?
            .get(SKILLS_EXTENSION)
            .cloned()
    }

    fn needs_skills(&self, method: &str, setting: Option<&str>) -> Result<(), ClientError> {
        if !self.is_connected() {
            return Ok(()); // the request itself reports it
        }
        let declared = self.skills_extension().is_some_and(|s| match setting {
            Some(key) => s.get(key) == Some(&Value::Bool(true)),
            None => s.is_object(),
        });
        if declared {
            return Ok(());
        }
        Err(ClientError::NotDeclared {
            method: method.to_owned(),
            capability: match setting {
                Some(key) => format!("extensions.{SKILLS_EXTENSION}.{key}"),
                None => format!("extensions.{SKILLS_EXTENSION}"),
            },
            side: "server",
        })
    }

    /// Every skill entry the server lists (`skills/list`, all pages). No file is retrieved.
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] when the server did not declare the extension;
    /// [`ClientError::InvalidResponse`] for an entry that is not a skill entry (no `uri`, no
    /// `name` / `description`, `resources` neither a list nor `"dynamic"`); as
    /// [`McpClient::list_all`].
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        self.needs_skills("skills/list", None)?;
        let items = self.list_all("skills/list", "skills").await?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| entry_of(v, &format!("skills/list entry {i}")))
            .collect()
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), to load a skill
    /// known only by its URI or to refresh a stale entry. No file is retrieved.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] `-32602` when the server serves no skill there; as
    /// [`McpClient::list_skills`].
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        self.needs_skills("skills/get", None)?;
        let result = self
            .request(
                "skills/get",
                Some(json!({ "uri": uri })),
                Default::default(),
            )
            .await?;
        let skill = result.get("skill").cloned().ok_or_else(|| {
            ClientError::InvalidResponse("skills/get result has no \"skill\"".into())
        })?;
        let entry = entry_of(skill, "skills/get")?;
        // The entry of another skill verifies nothing about this one (its files were read,
        // checked against themselves, and shown as this skill).
        if entry.uri != uri {
            return Err(ClientError::InvalidResponse(format!(
                "skills/get for {uri} returned the entry of {}",
                crate::wire::cut_text(&entry.uri, 256)
            )));
        }
        Ok(entry)
    }

    /// Load a skill: read its `SKILL.md`, verify its size and digest against the entry (when
    /// the entry lists its files) and its frontmatter field by field (always).
    ///
    /// # Errors
    /// [`ClientError::Skill`] with the [`SkillVerificationError`] when the content is not what
    /// the entry describes; as [`McpClient::read_resource`].
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        let bytes = self.read_skill_file(entry, &entry.uri).await?;
        let uri = entry.uri.clone();
        let skill_md = String::from_utf8(bytes).map_err(|_| {
            verification(SkillVerificationError::Frontmatter {
                uri: uri.clone(),
                error: FrontmatterError::Missing,
            })
        })?;
        let frontmatter = parse_frontmatter(&skill_md).map_err(|error| {
            verification(SkillVerificationError::Frontmatter {
                uri: uri.clone(),
                error,
            })
        })?;
        let fields = frontmatter_differences(&frontmatter, &entry.frontmatter);
        if !fields.is_empty() {
            return Err(verification(SkillVerificationError::FrontmatterMismatch {
                uri,
                fields,
            }));
        }
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }

    /// Read one file of a skill — `reference` relative to the skill's root
    /// (`references/FORMS.md`) or a full URI — verified against the held entry: it must be
    /// listed, and its size and digest must match. For a `"dynamic"` entry the file must lie
    /// within the skill's directory and nothing can be verified.
    ///
    /// # Errors
    /// [`ClientError::Skill`] ([`SkillVerificationError::Unlisted`] before any request, the
    /// mismatches after); as [`McpClient::read_resource`].
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        reference: &str,
    ) -> Result<Vec<u8>, ClientError> {
        let uri = entry.resolve(reference);
        let listed = match &entry.resources {
            SkillResources::Listed(_) => entry.resource(&uri).cloned(),
            SkillResources::Dynamic => None,
        };
        // Within the skill's directory: below its root, each segment — as written and
        // percent-decoded (`%2e%2e`, `%2F`) — neither empty, `.` nor `..`, and no `/` or `\`
        // within one (`../../x` began with the root and led out of it).
        let within = uri == entry.uri
            || uri
                .strip_prefix(&format!("{}/", entry.root()))
                .is_some_and(|below| below.split('/').all(stays_within));
        if (matches!(entry.resources, SkillResources::Listed(_)) && listed.is_none()) || !within {
            return Err(verification(SkillVerificationError::Unlisted {
                uri,
                skill: entry.uri.clone(),
            }));
        }
        let result = self.read_resource(&uri).await?;
        let bytes = contents_bytes(&result, &uri)
            .ok_or_else(|| verification(SkillVerificationError::NoContent { uri: uri.clone() }))?;
        if let Some(file) = listed {
            if bytes.len() as u64 != file.size {
                return Err(verification(SkillVerificationError::SizeMismatch {
                    uri,
                    expected: file.size,
                    actual: bytes.len() as u64,
                }));
            }
            let actual = digest(&bytes);
            if actual != file.digest {
                return Err(verification(SkillVerificationError::DigestMismatch {
                    uri,
                    expected: file.digest,
                    actual,
                }));
            }
        }
        Ok(bytes)
    }

    /// The direct children of a directory resource (`resources/directory/read`, all pages):
    /// files with their metadata, subdirectories with `mimeType: inode/directory`. A live view
    /// that never extends a held entry.
    ///
    /// # Errors
    /// [`ClientError::NotDeclared`] unless the server declared `directoryRead: true`;
    /// [`ClientError::Rpc`] `-32602` for a file or an unknown URI; as [`McpClient::request`].
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<ResourceDescriptor>, ClientError> {
        self.needs_skills("resources/directory/read", Some("directoryRead"))?;
        let mut out = Vec::new();
        self.walk_pages(
            "resources/directory/read",
            json!({ "uri": uri }),
            |mut page| {
                let items: Vec<ResourceDescriptor> = page
                    .get_mut("resources")
                    .map(Value::take)
                    .and_then(|r| serde_json::from_value(r).ok())
                    .ok_or_else(|| {
                        ClientError::InvalidResponse(
                            "resources/directory/read result has no \"resources\" list".into(),
                        )
                    })?;
                out.extend(items);
                Ok(())
            },
        )
        .await?;
        Ok(out)
    }
}

/// The raw bytes of the contents item for `uri` in a `resources/read` result (the only item
/// when there is one): `text` as UTF-8, `blob` base64-decoded.
/// Whether one segment of a path below a skill's root stays within it, as written and as a
/// server that percent-decodes it reads it.
fn stays_within(segment: &str) -> bool {
    crate::wire::percent::decode(segment, crate::wire::percent::Plus::Kept)
        .is_some_and(|s| !matches!(s.as_str(), "" | "." | "..") && !s.contains(['/', '\\']))
}

fn contents_bytes(result: &Value, uri: &str) -> Option<Vec<u8>> {
    let contents = result.get("contents")?.as_array()?;
    // The contents of `uri`; a lone item naming no URI is taken as it, one naming another is
    // not (it is another file's).
    let item = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| {
            (contents.len() == 1 && contents[0].get("uri").is_none()).then(|| &contents[0])
        })?;
    if let Some(text) = item.get("text").and_then(Value::as_str) {
        return Some(text.as_bytes().to_vec());
    }
    let blob = item.get("blob").and_then(Value::as_str)?;
    base64::engine::general_purpose::STANDARD.decode(blob).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{ClientOptions, MemoryTransport};
    use crate::primitives::skills::Skill;
    use crate::{McpServer, ServerOptions};

    const MD: &str = "---\nname: pdf\ndescription: PDFs\n---\n\nRead references/A.md\n";

    fn client() -> McpClient {
        let server = McpServer::new(ServerOptions::new("s", "1"));
        let skill = Skill::new("tools/pdf", MD)
            .unwrap()
            .with_file("references/A.md", vec![0xff, 0, 1])
            .unwrap();
        server.skills().add(skill);
        McpClient::new(MemoryTransport::new(server), ClientOptions::new("c", "1"))
    }

    #[test]
    fn a_listed_skill_loads_and_its_files_verify() {
        futures::executor::block_on(async {
            let client = client();
            client.connect().await.unwrap();
            assert_eq!(
                client.skills_extension(),
                Some(json!({"directoryRead": true}))
            );
            let entries = client.list_skills().await.unwrap();
            assert_eq!(entries.len(), 1);
            let entry = &entries[0];
            assert_eq!((entry.name(), entry.description()), ("pdf", "PDFs"));
            assert_eq!(client.get_skill(&entry.uri).await.unwrap(), *entry);
            let loaded = client.load_skill(entry).await.unwrap();
            assert_eq!(loaded.body(), "\nRead references/A.md\n");
            // A binary file travels as a blob and verifies against its raw bytes.
            assert_eq!(
                client
                    .read_skill_file(entry, "references/A.md")
                    .await
                    .unwrap(),
                vec![0xff, 0, 1]
            );
            let unlisted = client
                .read_skill_file(entry, "references/B.md")
                .await
                .unwrap_err();
            assert!(
                matches!(
                    unlisted,
                    ClientError::Skill(SkillVerificationError::Unlisted { .. })
                ),
                "{unlisted}"
            );
            let outside = client
                .read_skill_file(entry, "skill://other/SKILL.md")
                .await
                .unwrap_err();
            assert!(matches!(
                outside,
                ClientError::Skill(SkillVerificationError::Unlisted { .. })
            ));
            let children = client.read_directory("skill://tools/pdf").await.unwrap();
            let names: Vec<_> = children.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["pdf", "references"]);
            let missing = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
            assert_eq!(missing.code(), Some(crate::ErrorCode::INVALID_PARAMS));
        });
    }

    /// A dynamic skill's file must lie below its root: `..` (or `.`, or an empty segment)
    /// began with the root and led out of it; refused before any request.
    #[test]
    fn a_dynamic_skills_file_cannot_climb_out_of_its_directory() {
        futures::executor::block_on(async {
            let client = client();
            client.connect().await.unwrap();
            let mut entry = client.list_skills().await.unwrap().remove(0);
            entry.resources = SkillResources::Dynamic;
            for reference in [
                "../../../etc/passwd",
                "references/../../x",
                "./a//b",
                "a/./b",
                "%2e%2e/%2E./x",
                "references/.%2E/x",
                "..\\..\\x",
                "references%2F..%2F..%2Fx",
            ] {
                let refused = client.read_skill_file(&entry, reference).await.unwrap_err();
                assert!(
                    matches!(
                        refused,
                        ClientError::Skill(SkillVerificationError::Unlisted { .. })
                    ),
                    "{reference}: {refused}"
                );
            }
            // A file below the root is read (unverified: the entry lists none).
            let read = client.read_skill_file(&entry, "references/A.md").await;
            assert_eq!(read.unwrap(), vec![0xff, 0, 1]);
        });
    }

    /// The contents of another URI are not the file's (a lone item naming another file was
    /// taken for it); a lone item naming none still is.
    #[test]
    fn contents_of_another_uri_are_not_the_files() {
        let asked = "skill://a/SKILL.md";
        let other = json!({"contents": [{"uri": "skill://b/SKILL.md", "text": "b"}]});
        assert_eq!(contents_bytes(&other, asked), None);
        let unnamed = json!({"contents": [{"text": "a"}]});
        assert_eq!(contents_bytes(&unnamed, asked), Some(b"a".to_vec()));
        let named =
            json!({"contents": [{"uri": "skill://b/x", "text": "b"}, {"uri": asked, "text": "a"}]});
        assert_eq!(contents_bytes(&named, asked), Some(b"a".to_vec()));
    }

    #[test]
    fn a_tampered_entry_is_refused_with_what_differs() {
        futures::executor::block_on(async {
            let client = client();
            client.connect().await.unwrap();
            let good = client.list_skills().await.unwrap().remove(0);
            let mut entry = good.clone();
            entry
                .frontmatter
                .insert("description".into(), json!("other"));
            let err = client.load_skill(&entry).await.unwrap_err();
            assert_eq!(
                err,
                ClientError::Skill(SkillVerificationError::FrontmatterMismatch {
                    uri: good.uri.clone(),
                    fields: vec!["description".into()]
                })
            );
            let SkillResources::Listed(mut files) = good.resources.clone() else {
                unreachable!()
            };
            files[0].size += 1;
            entry = SkillEntry {
                resources: SkillResources::Listed(files.clone()),
                ..good.clone()
            };
            assert!(matches!(
                client.load_skill(&entry).await,
                Err(ClientError::Skill(
                    SkillVerificationError::SizeMismatch { .. }
                ))
            ));
            files[0].size -= 1;
            files[0].digest = digest(b"other");
            entry = SkillEntry {
                resources: SkillResources::Listed(files),
                ..good
            };
            assert!(matches!(
                client.load_skill(&entry).await,
                Err(ClientError::Skill(
                    SkillVerificationError::DigestMismatch { .. }
                ))
            ));
        });
    }
}
