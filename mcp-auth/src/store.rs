//! Tokens and where they are kept.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::crypto::now_secs;
use crate::error::{AuthError, AuthErrorKind};

/// Tokens from a token endpoint. `Debug` redacts them.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Expiry, seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scopes (space-separated), as the server reported them or
    /// as requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// For a DPoP-bound token (`token_type: DPoP`, RFC 9449 §5): the RFC
    /// 7638 thumbprint of the key it is bound to; it is sent with the `DPoP`
    /// scheme and a proof by that key. `None`: a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("dpop_jkt", &self.dpop_jkt)
            .finish()
    }
}

impl TokenSet {
    /// Whether the access token expires within `margin_secs`.
    pub fn expires_within(&self, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs().saturating_add(margin_secs))
    }
}

/// A client registration (pre-registered, CIMD, or dynamic).
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The client secret (confidential clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint auth method the server registered, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish()
    }
}

/// What a [`TokenStore`] keeps per MCP server: tokens, the issuer they came
/// from, and the dynamically registered clients, keyed by the issuer of the
/// authorization server that registered them (SEP-2352: a registration is
/// only good there, and one is not registered again).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredAuth {
    /// The tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    /// The issuer of the tokens (and, in files written before `clients`
    /// existed, of `client`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// A dynamically registered client, as files written before `clients`
    /// existed keep it (read, never written: see [`registrations`](Self::registrations)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientCredentials>,
    /// Dynamically registered clients by authorization server issuer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clients: BTreeMap<String, ClientCredentials>,
}

impl StoredAuth {
    /// The registrations by issuer, the legacy `client` included under its
    /// `issuer` (dropped when it has none: its server is unknown, so it
    /// cannot be used safely).
    pub fn registrations(&self) -> BTreeMap<String, ClientCredentials> {
        let mut all = self.clients.clone();
        if let (Some(c), Some(iss)) = (&self.client, &self.issuer) {
            all.entry(iss.clone()).or_insert_with(|| c.clone());
        }
        all
    }
}

/// Keeps [`StoredAuth`] per MCP server (keyed by its canonical URI).
pub trait TokenStore: Send + Sync + 'static {
    /// What is stored for `key`.
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, AuthError>;
    /// Replaces what is stored for `key`.
    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), AuthError>;
    /// Forgets `key`.
    fn clear(&self, key: &str) -> Result<(), AuthError>;
}

/// The default store: memory only, gone with the process.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<String, StoredAuth>>);

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryStore(..)")
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, AuthError> {
        Ok(self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned())
    }
    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), AuthError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_owned(), value.clone());
        Ok(())
    }
    fn clear(&self, key: &str) -> Result<(), AuthError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
        Ok(())
    }
}

/// A JSON file of `{ server: StoredAuth }`, for CLIs. Written atomically
/// (temporary file + rename) and, on Unix, readable by the owner only
/// (mode 0600).
pub struct FileStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl fmt::Debug for FileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileStore")
            .field("path", &self.path)
            .finish()
    }
}

impl FileStore {
    /// A store in `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    fn read_all(&self) -> Result<HashMap<String, StoredAuth>, AuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                AuthError::new(
                    AuthErrorKind::Store,
                    format!(
                        "{} is not a token file; delete it to start over",
                        self.path.display()
                    ),
                )
                .with_source(e)
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
            Err(e) => Err(AuthError::new(
                AuthErrorKind::Store,
                format!("cannot read {}", self.path.display()),
            )
            .with_source(e)),
        }
    }

    fn write_all(&self, all: &HashMap<String, StoredAuth>) -> Result<(), AuthError> {
        let err = |e: std::io::Error| {
            AuthError::new(
                AuthErrorKind::Store,
                format!("cannot write {}", self.path.display()),
            )
            .with_source(e)
        };
        if let Some(dir) = self.path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let tmp = self.path.with_extension("tmp");
        let bytes = serde_json::to_vec_pretty(all).map_err(|e| {
            AuthError::new(AuthErrorKind::Store, "could not encode the tokens").with_source(e)
        })?;
        {
            use std::io::Write;
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts.open(&tmp).map_err(err)?;
            f.write_all(&bytes).map_err(err)?;
            f.sync_all().map_err(err)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(err)
    }
}

impl TokenStore for FileStore {
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, AuthError> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        Ok(self.read_all()?.remove(key))
    }
    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), AuthError> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut all = self.read_all()?;
        all.insert(key.to_owned(), value.clone());
        self.write_all(&all)
    }
    fn clear(&self, key: &str) -> Result<(), AuthError> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut all = self.read_all()?;
        if all.remove(key).is_some() {
            self.write_all(&all)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredAuth {
        StoredAuth {
            tokens: Some(TokenSet {
                access_token: "at-SECRET".into(),
                refresh_token: Some("rt-SECRET".into()),
                expires_at: Some(now_secs() + 30),
                scope: Some("a b".into()),
                dpop_jkt: None,
            }),
            issuer: Some("https://as.example".into()),
            client: None,
            clients: BTreeMap::from([(
                "https://as.example".to_owned(),
                ClientCredentials {
                    client_id: "cid".into(),
                    client_secret: Some("cs-SECRET".into()),
                    token_endpoint_auth_method: None,
                },
            )]),
        }
    }

    #[test]
    fn registrations_are_keyed_by_issuer_and_legacy_files_still_read() {
        let legacy: StoredAuth = serde_json::from_str(
            r#"{"issuer":"https://as1","client":{"client_id":"old"},"tokens":{"access_token":"t"}}"#,
        )
        .unwrap();
        let regs = legacy.registrations();
        assert_eq!(regs.len(), 1);
        assert_eq!(regs["https://as1"].client_id, "old");
        assert_eq!(legacy.tokens.unwrap().dpop_jkt, None);
        // A legacy client without an issuer is not trusted anywhere.
        let orphan: StoredAuth = serde_json::from_str(r#"{"client":{"client_id":"x"}}"#).unwrap();
        assert!(orphan.registrations().is_empty());
        // The new shape round-trips and does not write `client`.
        let json = serde_json::to_string(&sample()).unwrap();
        assert!(
            json.contains(r#""clients":{"https://as.example""#),
            "{json}"
        );
        assert!(!json.contains(r#""client":"#), "{json}");
    }

    #[test]
    fn debug_redacts_secrets() {
        let s = format!("{:?}", sample());
        assert!(!s.contains("SECRET"), "{s}");
        assert!(s.contains("cid"));
    }

    #[test]
    fn expiry_margin() {
        let t = sample().tokens.unwrap();
        assert!(t.expires_within(60));
        assert!(!t.expires_within(0));
    }

    #[test]
    fn file_store_round_trips_with_owner_only_permissions() {
        // Unique per run: a dir left by an earlier process that had the same
        // pid would otherwise hold its tokens.json and fail the first load.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("mcp-auth-test-{}-{nanos}", std::process::id()));
        let path = dir.join("tokens.json");
        let store = FileStore::new(&path);
        assert_eq!(store.load("k").unwrap(), None);
        // One sample: its expiry is read from the clock, and a second
        // `sample()` made across a second's edge would differ from it.
        let saved = sample();
        store.save("k", &saved).unwrap();
        store.save("other", &StoredAuth::default()).unwrap();
        assert_eq!(store.load("k").unwrap(), Some(saved));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store.clear("k").unwrap();
        assert_eq!(store.load("k").unwrap(), None);
        assert!(store.load("other").unwrap().is_some());
        std::fs::write(&path, "not json").unwrap();
        assert!(
            store
                .load("k")
                .unwrap_err()
                .to_string()
                .contains("delete it")
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn memory_store() {
        let m = MemoryStore::new();
        let saved = sample();
        m.save("k", &saved).unwrap();
        assert_eq!(m.load("k").unwrap(), Some(saved));
        m.clear("k").unwrap();
        assert_eq!(m.load("k").unwrap(), None);
    }
}
