//! Skills served from a directory tree ([SEP-2640](https://modelcontextprotocol.io/seps/2640-skills-extension)):
//! every directory below the root that holds a `SKILL.md` is a skill, its path below the root
//! its skill path (`<root>/acme/billing/refunds/SKILL.md` → `skill://acme/billing/refunds/SKILL.md`),
//! every file below it one of its files (a nested skill's files too, as the spec's
//! completeness rule asks).
//!
//! The tree is read and every digest computed once; each later access only lists the tree
//! (one `stat` per entry) and compares every file's size and modification time with what was
//! read: when anything differs — a file added, removed or rewritten — the tree is read again.
//! The listing runs on the task that asks (a `stat` per entry, no thread of its own); a rewrite
//! that keeps a file's size and lands within the filesystem's timestamp granularity of the
//! previous one is seen at the next change. Hidden entries (`.git`, `.DS_Store`) and symbolic
//! links are not served (a link could reach outside the root). A skill that cannot
//! be served (broken frontmatter, a name that is not its directory's, beyond the per-skill
//! limits) is left out and reported by [`SkillDirectory::problems`] and a `tracing` warning;
//! the others are served. A file whose name cannot be a URI path segment (a space, a
//! non-ASCII letter) is left out of its skill the same way; the skill is served without it.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::primitives::skills::{
    is_file_path, Skill, SkillError, SkillSource, MAX_SKILL_BYTES, SKILL_FILE,
};

/// The most entries (files and directories) a skill tree may hold: 100 000. Beyond it the
/// listing stops and the problem is reported.
pub const MAX_TREE_ENTRIES: usize = 100_000;
/// The deepest a skill tree is listed: 32 directory levels.
pub const MAX_TREE_DEPTH: usize = 32;

/// One file as listed: its `/`-separated path below the root, size and modification time.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    path: String,
    size: u64,
    modified: Option<SystemTime>,
}

#[derive(Default)]
struct State {
    stamps: Vec<Stamp>,
    skills: Vec<Arc<Skill>>,
    problems: Vec<String>,
}

/// A [`SkillSource`] over a directory tree, refreshed when its files change.
///
/// ```no_run
/// use orkestrel_mcp::native::skills::SkillDirectory;
/// use orkestrel_mcp::{McpServer, ServerOptions};
/// let server = McpServer::new(ServerOptions::new("docs", "1.0.0"));
/// server.skills().add_source(SkillDirectory::open("./skills")?);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct SkillDirectory {
    root: PathBuf,
    state: Mutex<State>,
}

impl std::fmt::Debug for SkillDirectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillDirectory")
            .field("root", &self.root)
            .finish()
    }
}

impl SkillDirectory {
    /// Read the tree at `root` (a directory) and build its skills.
    ///
    /// # Errors
    /// The I/O error when `root` cannot be listed or is not a directory.
    pub fn open(root: impl Into<PathBuf>) -> io::Result<SkillDirectory> {
        let root = root.into();
        if !std::fs::metadata(&root)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", root.display()),
            ));
        }
        let directory = SkillDirectory {
            root,
            state: Mutex::new(State::default()),
        };
        let (stamps, problems) = list(&directory.root)?;
        let state = build(&directory.root, stamps, problems);
        *directory.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
        Ok(directory)
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What was left out at the last read of the tree, one line each (a skill or one of its
    /// files, and why).
    pub fn problems(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .problems
            .clone()
    }

    /// List the tree and read it again when any file's size or modification time changed;
    /// `true` when it was read again.
    pub fn refresh(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match list(&self.root) {
            Ok((stamps, _)) if stamps == state.stamps => false,
            Ok((stamps, problems)) => {
                *state = build(&self.root, stamps, problems);
                true
            }
            Err(e) => {
                // The root went away or cannot be listed: keep serving what was read.
                tracing::warn!(root = %self.root.display(), error = %e, "cannot list the skill directory");
                false
            }
        }
    }
}

impl SkillSource for SkillDirectory {
    fn skills(&self) -> Vec<Arc<Skill>> {
        self.refresh();
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .skills
            .clone()
    }
}

/// Every regular file below `root` (hidden entries and symbolic links left out), sorted by path,
/// with the problems met (a name that is not UTF-8, the entry or depth bound reached).
fn list(root: &Path) -> io::Result<(Vec<Stamp>, Vec<String>)> {
    let mut stamps = Vec::new();
    let mut problems = Vec::new();
    let mut entries = 0usize;
    let mut pending = vec![(root.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel, depth)) = pending.pop() {
        let listing = match std::fs::read_dir(&dir) {
            Ok(listing) => listing,
            Err(e) if depth == 0 => return Err(e),
            Err(e) => {
                problems.push(format!("{rel}: cannot be listed: {e}"));
                continue;
            }
        };
        for entry in listing.flatten() {
            entries += 1;
            if entries > MAX_TREE_ENTRIES {
                problems.push(format!(
                    "the tree holds more than {MAX_TREE_ENTRIES} entries; the rest is not served"
                ));
                pending.clear();
                break;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                problems.push(format!("{rel}: a name that is not UTF-8 is not served"));
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // `DirEntry::metadata` does not follow symbolic links: a link is neither.
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                if depth + 1 >= MAX_TREE_DEPTH {
                    problems.push(format!(
                        "{path}: deeper than {MAX_TREE_DEPTH} levels; not served"
                    ));
                } else {
                    pending.push((entry.path(), path, depth + 1));
                }
            } else if meta.is_file() {
                stamps.push(Stamp {
                    path,
                    size: meta.len(),
                    modified: meta.modified().ok(),
                });
            }
        }
    }
    stamps.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((stamps, problems))
}

/// The bytes of the regular file `rel` (`/`-separated) below `root`, opened one component at a
/// time without following a symbolic link at any of them (`O_NOFOLLOW`), and read no further
/// than [`MAX_SKILL_BYTES`]: the listing saw a regular file, but a link (or a FIFO, a device)
/// put in its place before the read — out of the root, or to `/dev/zero` — is refused, not
/// served or read without end.
#[cfg(unix)]
fn read_beneath(root: &Path, rel: &str) -> io::Result<Vec<u8>> {
    use nix::fcntl::{openat, OFlag};
    use nix::sys::stat::Mode;
    use std::os::fd::OwnedFd;
    let mut at: OwnedFd = std::fs::File::open(root)?.into();
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        let kind = if parts.peek().is_some() {
            OFlag::O_DIRECTORY
        } else {
            // A FIFO put in the file's place would block the open without it.
            OFlag::O_NONBLOCK
        };
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | kind;
        at = openat(&at, part, flags, Mode::empty()).map_err(io::Error::from)?;
    }
    read_bounded(std::fs::File::from(at))
}

/// [`read_beneath`] where there is no `openat`: each component is checked not to be a link
/// before the file is opened (a narrower race than reading by path alone), then read as there.
#[cfg(not(unix))]
fn read_beneath(root: &Path, rel: &str) -> io::Result<Vec<u8>> {
    let mut path = root.to_path_buf();
    for part in rel.split('/') {
        path.push(part);
        if std::fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a symbolic link",
            ));
        }
    }
    read_bounded(std::fs::File::open(path)?)
}

/// The bytes of `file`, a regular file no larger than [`MAX_SKILL_BYTES`].
fn read_bounded(file: std::fs::File) -> io::Result<Vec<u8>> {
    use std::io::Read;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SKILL_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the {MAX_SKILL_BYTES}-byte limit"),
        ));
    }
    Ok(bytes)
}

/// Build the skills of a listed tree: each directory with a `SKILL.md` (not the root itself),
/// with every file below it; a file is read once however many skills hold it.
fn build(root: &Path, stamps: Vec<Stamp>, mut problems: Vec<String>) -> State {
    let mut read: HashMap<String, Arc<[u8]>> = HashMap::new();
    let mut skills = Vec::new();
    let suffix = format!("/{SKILL_FILE}");
    if stamps.iter().any(|s| s.path == SKILL_FILE) {
        problems.push(format!(
            "{SKILL_FILE} at the root is not served: put each skill in a directory named after it"
        ));
    }
    for manifest in stamps.iter().filter(|s| s.path.ends_with(&suffix)) {
        let skill_path = &manifest.path[..manifest.path.len() - suffix.len()];
        let prefix = format!("{skill_path}/");
        let files: Vec<&Stamp> = stamps
            .iter()
            .filter(|s| s.path.starts_with(&prefix))
            .collect();
        let total: u64 = files.iter().map(|s| s.size).sum();
        if total > MAX_SKILL_BYTES {
            problems.push(format!(
                "{skill_path}: {total} bytes, beyond the {MAX_SKILL_BYTES}-byte limit; not served"
            ));
            continue;
        }
        match build_skill(root, skill_path, &files, &mut read, &mut problems) {
            Ok(skill) => skills.push(Arc::new(skill)),
            Err(why) => problems.push(format!("{skill_path}: {why}; not served")),
        }
    }
    for problem in &problems {
        tracing::warn!(root = %root.display(), "skills: {problem}");
    }
    State {
        stamps,
        skills,
        problems,
    }
}

/// One skill: its `SKILL.md` (which it cannot be without) and every file beside it that can be
/// served; a file whose name cannot be a URI path segment (a space, a non-ASCII letter) is left
/// out with a line in `problems`, the rest still served.
fn build_skill(
    root: &Path,
    skill_path: &str,
    files: &[&Stamp],
    read: &mut HashMap<String, Arc<[u8]>>,
    problems: &mut Vec<String>,
) -> Result<Skill, String> {
    let mut bytes_of = |path: &str| -> Result<Arc<[u8]>, String> {
        if let Some(bytes) = read.get(path) {
            return Ok(bytes.clone());
        }
        let bytes: Arc<[u8]> = read_beneath(root, path)
            .map_err(|e| format!("{path} cannot be read: {e}"))?
            .into();
        read.insert(path.to_owned(), bytes.clone());
        Ok(bytes)
    };
    let manifest = format!("{skill_path}/{SKILL_FILE}");
    let mut skill =
        Skill::new(skill_path, bytes_of(&manifest)?.to_vec()).map_err(|e| e.to_string())?;
    for file in files.iter().filter(|f| f.path != manifest) {
        let relative = &file.path[skill_path.len() + 1..];
        // Judged by its name before it is read: a file left out is not read at all.
        if !is_file_path(relative) {
            let e = SkillError::InvalidFile(relative.to_owned());
            problems.push(format!("{skill_path}: {e}; that file is not served"));
            continue;
        }
        skill
            .add_file(relative, bytes_of(&file.path)?)
            .map_err(|e| e.to_string())?;
    }
    Ok(skill)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::primitives::skills::SkillFile;

    /// A scratch directory for one test, removed at the end.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A file whose name cannot be a URI path segment (a space, a non-ASCII letter) is left out
    /// of its skill with a problem line; the skill and its other files are served (one such
    /// file, `notes copy.md`, dropped the whole skill).
    #[test]
    fn a_file_named_outside_uri_characters_is_left_out_not_its_skill() {
        let dir = Scratch(
            std::env::temp_dir().join(format!("orkestrel-skill-names-{}", std::process::id())),
        );
        std::fs::create_dir_all(dir.0.join("demo/refs")).unwrap();
        std::fs::write(
            dir.0.join("demo/SKILL.md"),
            "---\nname: demo\ndescription: A demo.\n---\nBody\n",
        )
        .unwrap();
        std::fs::write(dir.0.join("demo/refs/ok.md"), "fine").unwrap();
        std::fs::write(dir.0.join("demo/notes copy.md"), "spaced").unwrap();
        std::fs::write(dir.0.join("demo/refs/caf\u{e9}.md"), "accented").unwrap();

        let directory = SkillDirectory::open(&dir.0).unwrap();
        let skills = directory.skills();
        assert_eq!(skills.len(), 1, "{:?}", directory.problems());
        let files: Vec<&str> = skills[0].files().iter().map(SkillFile::path).collect();
        assert_eq!(files, ["SKILL.md", "refs/ok.md"]);
        let problems = directory.problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems
                .iter()
                .all(|p| p.contains("that file is not served")),
            "{problems:?}"
        );
    }

    /// What the listing saw as a regular file may be something else by the time it is read: a
    /// link out of the root (at the file or at a directory on its way), a FIFO or a file grown
    /// past the limit. Each is refused (the read followed links, blocked on a FIFO and read
    /// without bound); the regular file is read.
    #[test]
    fn a_file_is_read_without_following_links_and_within_the_limit() {
        let dir = Scratch(
            std::env::temp_dir().join(format!("orkestrel-read-beneath-{}", std::process::id())),
        );
        let root = dir.0.join("root");
        std::fs::create_dir_all(root.join("s/refs")).unwrap();
        std::fs::write(root.join("s/refs/ok.md"), "fine").unwrap();
        std::fs::write(dir.0.join("secret.txt"), "TOP SECRET").unwrap();
        std::os::unix::fs::symlink(dir.0.join("secret.txt"), root.join("s/refs/link.md")).unwrap();
        std::os::unix::fs::symlink(dir.0.clone(), root.join("s/away")).unwrap();
        nix::unistd::mkfifo(&root.join("s/pipe.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let big = std::fs::File::create(root.join("s/big.md")).unwrap();
        big.set_len(MAX_SKILL_BYTES + 1).unwrap();

        assert_eq!(read_beneath(&root, "s/refs/ok.md").unwrap(), b"fine");
        for refused in [
            "s/refs/link.md",
            "s/away/secret.txt",
            "s/pipe.md",
            "s/big.md",
        ] {
            let error = read_beneath(&root, refused).unwrap_err();
            assert!(!error.to_string().is_empty(), "{refused}");
        }
        let big = read_beneath(&root, "s/big.md").unwrap_err();
        assert!(big.to_string().contains("byte limit"), "{big}");
    }
}
