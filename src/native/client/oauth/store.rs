//! A [`TokenStore`] in a file: one JSON object keyed by the MCP server's canonical resource
//! URI, written whole (a temporary file of its own renamed over it), readable by its owner only
//! (mode `0600` on Unix). Each read-modify-write holds an exclusive lock on `<file>.lock`
//! (`flock` on Unix), so processes (and stores) sharing the file lose none of each other's
//! tokens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::client::oauth::{StoredCredentials, TokenStore};

/// The file store of the CLI: one JSON object keyed by the MCP server's canonical resource
/// URI, written whole (a temporary file renamed over it), mode `0600` on Unix.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// One read-modify-write at a time within this process.
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// The store in `path` (created on the first save, with its folder).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The default place: `$ORKESTREL_MCP_TOKENS`, else
    /// `$XDG_CONFIG_HOME/orkestrel-mcp/tokens.json`, else `$HOME/.config/orkestrel-mcp/tokens.json`
    /// (`None`: none of these is set).
    pub fn default_path() -> Option<PathBuf> {
        if let Some(path) = std::env::var_os("ORKESTREL_MCP_TOKENS") {
            return Some(path.into());
        }
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
        Some(config.join("orkestrel-mcp").join("tokens.json"))
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> BTreeMap<String, StoredCredentials> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %self.path.display(), error = %e, "oauth: the token store is not readable JSON; starting empty");
                BTreeMap::new()
            }),
            Err(_) => BTreeMap::new(),
        }
    }

    /// Write `all` to a fresh temporary file beside the store — created exclusively (never one
    /// somebody else made, or a link), mode `0600` — then renamed over it.
    fn write(&self, all: &BTreeMap<String, StoredCredentials>) -> std::io::Result<()> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{suffix}.tmp"));
        let tmp = self.path.with_file_name(name);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        let written = (|| {
            std::io::Write::write_all(&mut file, &serde_json::to_vec_pretty(all)?)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// An exclusive lock on `<file>.lock` for one read-modify-write, held until dropped (on
    /// Unix; elsewhere only this store's own lock holds).
    fn lock_file(&self) -> std::io::Result<Option<Box<dyn std::any::Any>>> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let mut name = self.path.file_name().unwrap_or_default().to_os_string();
            name.push(".lock");
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(self.path.with_file_name(name))?;
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
                .map(|held| Some(Box::new(held) as Box<dyn std::any::Any>))
                .map_err(|(_, errno)| std::io::Error::from(errno))
        }
        #[cfg(not(unix))]
        Ok(None)
    }

    fn update(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, StoredCredentials>) -> bool,
    ) -> bool {
        let _one = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _file = match self.lock_file() {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "oauth: cannot lock the token store");
                return false;
            }
        };
        let mut all = self.read();
        let changed = change(&mut all);
        if changed {
            if let Err(e) = self.write(&all) {
                tracing::warn!(path = %self.path.display(), error = %e, "oauth: cannot write the token store");
            }
        }
        changed
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, resource: &str) -> Option<StoredCredentials> {
        self.read().remove(resource)
    }

    fn save(&self, resource: &str, credentials: &StoredCredentials) {
        self.update(|all| {
            all.insert(resource.to_owned(), credentials.clone());
            true
        });
    }

    fn remove(&self, resource: &str) -> bool {
        self.update(|all| all.remove(resource).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::Tokens;

    #[test]
    fn kept_per_resource_private_and_removable() {
        let dir = std::env::temp_dir().join(format!("orkestrel-tokens-{}", std::process::id()));
        let store = FileTokenStore::new(dir.join("sub").join("tokens.json"));
        assert_eq!(store.load("https://a/mcp"), None);
        let kept = StoredCredentials {
            issuer: "https://as".into(),
            client_id: Some("c".into()),
            tokens: Some(Tokens {
                access_token: "t".into(),
                refresh_token: Some("r".into()),
                expires_at: Some(10),
                scope: None,
                dpop: false,
            }),
            ..StoredCredentials::default()
        };
        store.save("https://a/mcp", &kept);
        store.save("https://b/mcp", &StoredCredentials::default());
        assert_eq!(store.load("https://a/mcp"), Some(kept));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(store.remove("https://a/mcp"));
        assert!(!store.remove("https://a/mcp"));
        assert!(store.load("https://b/mcp").is_some());
        // A damaged file reads as empty, and is replaced on the next save.
        std::fs::write(store.path(), b"{not json").unwrap();
        assert_eq!(store.load("https://b/mcp"), None);
        store.save("https://c/mcp", &StoredCredentials::default());
        assert!(store.load("https://c/mcp").is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Several stores on one file (as several processes, or a bridge's upstreams, have) lose
    /// none of each other's tokens (each read-modify-write holds the file's lock); a temporary
    /// file somebody left beside it, readable by all, is not written through (the store stays
    /// `0600`).
    #[test]
    fn stores_sharing_a_file_keep_every_write_and_a_stray_temporary_file_is_not_used() {
        let dir =
            std::env::temp_dir().join(format!("orkestrel-tokens-race-{}", std::process::id()));
        let path = dir.join("tokens.json");
        std::fs::create_dir_all(&dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let stray = dir.join("tokens.json.tmp");
            std::fs::write(&stray, b"").unwrap();
            std::fs::set_permissions(&stray, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let store = FileTokenStore::new(path);
                    for n in 0..16 {
                        store.save(
                            &format!("https://{w}-{n}/mcp"),
                            &StoredCredentials::default(),
                        );
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let kept = FileTokenStore::new(&path).read();
        assert_eq!(kept.len(), 8 * 16);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".tmp") && n != "tokens.json.tmp")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
