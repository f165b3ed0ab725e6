//! The namespace of the skills served at one moment, as a tree of resources: every skill file
//! is a resource (`resources/list`, `resources/read`), every level above a file a directory
//! resource (`resources/directory/read`), as the spec's
//! [Resource Mapping](https://modelcontextprotocol.io/seps/2640-skills-extension) lays out.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::{Skill, SkillFile, DIRECTORY_MIME_TYPE};
use crate::primitives::resources::ResourceDescriptor;
use crate::wire::jsonrpc::ErrorObject;

/// The skills served at one moment ([`SkillRegistry::snapshot`](super::SkillRegistry::snapshot)).
/// Nested skills share files: a file is one resource whichever skills list it.
#[derive(Clone, Debug, Default)]
pub struct SkillTree {
    skills: Vec<Arc<Skill>>,
}

impl SkillTree {
    /// A tree over these skills (one per URI, in serving order).
    pub fn new(skills: Vec<Arc<Skill>>) -> Self {
        SkillTree { skills }
    }

    /// The skills, in serving order.
    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    /// Whether no skill is served.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The served file at `uri`, with the skill that holds it: for a nested skill's
    /// `SKILL.md`, that skill; for another file several skills hold, the first.
    pub fn file(&self, uri: &str) -> Option<(&Skill, &SkillFile)> {
        if let Some(own) = self.skills.iter().find(|s| s.uri() == uri) {
            return Some((own, &own.files()[0]));
        }
        self.skills
            .iter()
            .find_map(|s| s.file(uri).map(|f| (&**s, f)))
    }

    /// Every file as a `resources/list` entry, once each, skill by skill. A `SKILL.md` is
    /// named and described from its frontmatter, as the spec's Resource Metadata asks.
    pub fn resources(&self) -> Vec<ResourceDescriptor> {
        let mut seen = crate::collections::HashSet::<&str>::default();
        let mut out = Vec::new();
        for skill in &self.skills {
            for file in skill.files() {
                if seen.insert(file.uri()) {
                    let (_, served) = self.file(file.uri()).unwrap_or((skill, file));
                    out.push(descriptor(self, served));
                }
            }
        }
        out
    }

    /// The direct children of the directory resource at `uri` (`resources/directory/read`):
    /// files with their resource metadata, subdirectories with `mimeType: inode/directory`,
    /// sorted by name. A directory is any level above a served file: a skill's root, its
    /// subdirectories, and the prefix levels of nested skill paths.
    ///
    /// # Errors
    /// `-32602` (with `data.uri`) when `uri` is a file or no directory of the namespace.
    pub fn read_directory(&self, uri: &str) -> Result<Vec<ResourceDescriptor>, ErrorObject> {
        let prefix = format!("{uri}/");
        let well_formed = uri
            .find("://")
            .is_some_and(|at| at + 3 < uri.len() && !uri.ends_with('/'));
        let mut children: BTreeMap<&str, Option<&SkillFile>> = BTreeMap::new();
        if well_formed {
            for skill in &self.skills {
                for file in skill.files() {
                    let Some(rest) = file.uri().strip_prefix(&prefix) else {
                        continue;
                    };
                    match rest.split_once('/') {
                        Some((dir, _)) => {
                            children.entry(dir).or_insert(None);
                        }
                        None => {
                            let (_, served) = self.file(file.uri()).unwrap_or((skill, file));
                            children.insert(rest, Some(served));
                        }
                    }
                }
            }
        }
        if children.is_empty() {
            let why = if self.file(uri).is_some() {
                format!("{uri} is not a directory resource")
            } else {
                format!("No directory resource is served at {uri}")
            };
            return Err(ErrorObject::invalid_params(why).with_data(json!({ "uri": uri })));
        }
        Ok(children
            .into_iter()
            .map(|(name, file)| match file {
                Some(file) => descriptor(self, file),
                None => ResourceDescriptor {
                    uri: format!("{prefix}{name}"),
                    name: name.to_owned(),
                    title: None,
                    description: None,
                    mime_type: Some(DIRECTORY_MIME_TYPE.to_owned()),
                    size: None,
                    annotations: None,
                    icons: None,
                    meta: None,
                },
            })
            .collect())
    }
}

/// The resource metadata of a file: a `SKILL.md` named and described by its skill's
/// frontmatter, any other file by its last path segment.
fn descriptor(tree: &SkillTree, file: &SkillFile) -> ResourceDescriptor {
    let skill = tree.skills.iter().find(|s| s.uri() == file.uri());
    let name = match skill {
        Some(skill) => skill.name().to_owned(),
        None => file
            .path()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    ResourceDescriptor {
        uri: file.uri().to_owned(),
        name,
        title: None,
        description: skill.and_then(|s| s.frontmatter()["description"].as_str().map(str::to_owned)),
        mime_type: Some(file.mime_type().to_owned()),
        size: Some(file.bytes().len() as u64),
        annotations: None,
        icons: None,
        meta: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(path: &str, name: &str) -> Skill {
        Skill::new(
            path,
            format!("---\nname: {name}\ndescription: about {name}\n---\nbody\n"),
        )
        .unwrap()
    }

    #[test]
    fn directories_list_direct_children_and_refuse_files_and_unknowns() {
        let outer = skill("acme/billing", "billing")
            .with_file(
                "refunds/SKILL.md",
                "---\nname: refunds\ndescription: r\n---\n",
            )
            .unwrap()
            .with_file("templates/a.md", "a")
            .unwrap();
        let inner = skill("acme/billing/refunds", "refunds");
        let tree = SkillTree::new(vec![Arc::new(outer), Arc::new(inner)]);
        let names = |uri: &str| -> Vec<(String, Option<String>)> {
            tree.read_directory(uri)
                .unwrap()
                .into_iter()
                .map(|d| (d.name, d.mime_type))
                .collect()
        };
        let dir = Some(DIRECTORY_MIME_TYPE.to_owned());
        let md = Some("text/markdown".to_owned());
        assert_eq!(names("skill://acme"), vec![("billing".into(), dir.clone())]);
        assert_eq!(
            names("skill://acme/billing"),
            vec![
                // A SKILL.md carries its ordinary resource metadata: its skill's name.
                ("billing".into(), md.clone()),
                ("refunds".into(), dir.clone()),
                ("templates".into(), dir)
            ]
        );
        assert_eq!(
            names("skill://acme/billing/templates"),
            vec![("a.md".into(), md)]
        );
        for bad in [
            "skill://acme/billing/SKILL.md",
            "skill://nope",
            "skill://",
            "skill://acme/",
        ] {
            let e = tree.read_directory(bad).unwrap_err();
            assert_eq!(
                e.code,
                crate::wire::jsonrpc::ErrorCode::INVALID_PARAMS,
                "{bad}"
            );
        }
        // The nested skill's SKILL.md is one resource, named and described by its own skill.
        let listed = tree.resources();
        assert_eq!(listed.len(), 3);
        let nested = listed
            .iter()
            .find(|d| d.uri == "skill://acme/billing/refunds/SKILL.md")
            .unwrap();
        assert_eq!(
            (nested.name.as_str(), nested.description.as_deref()),
            ("refunds", Some("about refunds"))
        );
    }
}
