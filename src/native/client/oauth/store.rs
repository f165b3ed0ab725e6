//! A [`TokenStore`] in a file: one JSON object keyed by the MCP server's canonical resource
//! URI, written whole (a temporary file renamed over it), readable by its owner only (mode
//! `0600` on Unix).

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

    fn write(&self, all: &BTreeMap<String, StoredCredentials>) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        std::io::Write::write_all(&mut file, &serde_json::to_vec_pretty(all)?)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &self.path)
    }

    fn update(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, StoredCredentials>) -> bool,
    ) -> bool {
        let _one = self.lock.lock().unwrap_or_else(|e| e.into_inner());
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
}
