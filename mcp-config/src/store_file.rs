//! The per-user JSON files this crate keeps decisions in (trusted
//! configuration files, pinned tool definitions): read with a size bound,
//! written atomically, readable by the user only.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::trust::TrustError;

/// Seconds since the Unix epoch (0 before it).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The JSON object in `path` whose `"version"` is `version`; `None` when
/// the file does not exist. A file over `max` bytes, not JSON, or of
/// another version is [`TrustError::Corrupt`].
pub(crate) fn read(path: &Path, max: u64, version: u64) -> Result<Option<Value>, TrustError> {
    let io = |what, source| TrustError::Io {
        path: path.to_owned(),
        what,
        source,
    };
    let corrupt = |reason: String| TrustError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("cannot read the trust store", e)),
    };
    if meta.len() > max {
        return Err(corrupt(format!("{} bytes, more than {max}", meta.len())));
    }
    let text = std::fs::read(path).map_err(|e| io("cannot read the trust store", e))?;
    let root: Value = serde_json::from_slice(&text).map_err(|e| corrupt(e.to_string()))?;
    if root.get("version").and_then(Value::as_u64) != Some(version) {
        return Err(corrupt(format!("no \"version\": {version}")));
    }
    Ok(Some(root))
}

/// Writes `root` to `path` atomically: a temporary file in the same folder
/// (created readable by the user only), flushed to disk, then renamed over
/// it. The folder is created (user-only) if missing.
pub(crate) fn write(path: &Path, root: &Value) -> Result<(), TrustError> {
    let io = |what, source| TrustError::Io {
        path: path.to_owned(),
        what,
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_private_dir(dir).map_err(|e| io("cannot create the trust store's folder", e))?;
    let mut text = serde_json::to_vec_pretty(root)
        .map_err(|e| io("cannot encode the trust store", e.into()))?;
    text.push(b'\n');
    let name = path
        .file_name()
        .map_or_else(|| "trust".into(), |n| n.to_string_lossy().into_owned());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = (|| {
        let mut f = create_private_file(&tmp)?;
        f.write_all(&text)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(|e| io("cannot write the trust store", e))
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}
