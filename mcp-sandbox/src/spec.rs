//! What the host hands the launcher: the command line of a confined start.
//!
//! `LAUNCHER MARKER SPEC PROGRAM ARGS...`: `MARKER` says "run as the
//! launcher" (so a host's own executable can be one), `SPEC` is a
//! [`LaunchSpec`] as JSON. Paths and flags only: no secret is ever part of
//! it (it is visible in `ps`).

use std::path::PathBuf;

/// `argv[1]` of a launcher run by a host.
pub const LAUNCH_MARKER: &str = "--mcp-sandbox-launch";
/// `argv[1]` of the launcher's second stage (inside the namespaces).
pub(crate) const STAGE2_MARKER: &str = "--mcp-sandbox-stage2";

/// The exit status of a launcher that could not confine the server (it
/// started nothing; its reason is on stderr).
pub const LAUNCH_FAILED: i32 = 125;

/// Everything the launcher needs, already resolved by the host: absolute,
/// canonical paths that exist.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct LaunchSpec {
    /// Writable subtrees (the server's temporary folder included).
    pub(crate) allow_write: Vec<PathBuf>,
    /// Hidden: an empty read-only folder or file is mounted over each.
    pub(crate) deny_read: Vec<PathBuf>,
    /// Read-only bind mounts.
    pub(crate) deny_write: Vec<PathBuf>,
    /// The server's `TMPDIR`.
    pub(crate) tmp_dir: PathBuf,
    /// The host proxy's Unix socket, when the server has network.
    pub(crate) proxy: Option<PathBuf>,
}

impl LaunchSpec {
    /// As one argument; fails on a path that is not UTF-8.
    #[cfg(feature = "host")]
    pub(crate) fn to_arg(&self) -> Result<std::ffi::OsString, String> {
        serde_json::to_string(self)
            .map(std::ffi::OsString::from)
            .map_err(|e| format!("a sandbox path cannot be passed to the launcher: {e}"))
    }

    pub(crate) fn from_arg(arg: &std::ffi::OsStr) -> Result<Self, String> {
        let text = arg
            .to_str()
            .ok_or("the launch spec is not UTF-8 (a path with invalid UTF-8?)")?;
        serde_json::from_str(text).map_err(|e| format!("the launch spec is not valid: {e}"))
    }
}
