//! Skills (SEP-2640) test helpers: a skill tree in a fresh temporary directory, removed when
//! dropped, and the digest computed independently of the crate's own.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// A directory under the system temp dir, unique to this process and call, removed on drop.
pub struct Tree(pub PathBuf);

impl Tree {
    /// A new empty tree.
    pub fn new(label: &str) -> Tree {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "orkestrel-skills-{label}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tree(dir)
    }

    /// Write `bytes` at `path` (below the root; parents created) and give it a modification
    /// time one second past any it had, so a rewrite is seen whatever the clock's granularity.
    pub fn write(&self, path: &str, bytes: impl AsRef<[u8]>) -> &Tree {
        let file = self.0.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let before = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
        std::fs::write(&file, bytes).unwrap();
        let after = before.map_or(SystemTime::now(), |t| t + Duration::from_secs(1));
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(after.max(SystemTime::now()))
            .unwrap();
        self
    }

    /// Remove the file or directory at `path`.
    pub fn remove(&self, path: &str) {
        let p = self.0.join(path);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sha256:{hex}` of `bytes`, computed here (not by the crate under test).
pub fn sha256(bytes: impl AsRef<[u8]>) -> String {
    let hex: String = Sha256::digest(bytes.as_ref())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// A `SKILL.md` with this name and description, then `body`.
pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}")
}
