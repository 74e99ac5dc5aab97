//! The host side of a sandboxed start (feature `host`): the server's
//! private folder, the proxy, and the launcher's command line.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::check::{Unavailable, check};
use crate::launcher::Launcher;
use crate::policy::Sandbox;
use crate::proxy::Proxy;
use crate::spec::{LAUNCH_MARKER, LaunchSpec};

/// What to spawn instead of the server, and what the host keeps while it
/// runs ([`Sandbox::prepare`]).
///
/// Needs the `host` feature.
#[derive(Debug)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "host")))]
pub struct Confined {
    /// The launcher program.
    pub program: PathBuf,
    /// Its arguments (the marker, the launch spec, the server's program and
    /// arguments).
    pub args: Vec<OsString>,
    /// Keep it as long as the server runs.
    pub running: Running,
}

/// The server's private folder (its `TMPDIR`, the proxy's socket) and the
/// proxy. Dropping it stops the proxy and removes the folder.
///
/// Needs the `host` feature.
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "host")))]
pub struct Running {
    dir: PathBuf,
    /// Stopped when dropped.
    proxy: Option<Proxy>,
}

impl Running {
    /// The server's private folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the server has network (a proxy runs for it).
    pub fn has_proxy(&self) -> bool {
        self.proxy.is_some()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Sandbox {
    /// Prepares a sandboxed start of `program args`: checks that a sandbox
    /// can be had ([`check`]), finds the [`Launcher`], makes the server's
    /// private folder (mode 0700, in the system's temporary folder) and, if
    /// the server has network, starts the proxy on the current tokio
    /// runtime. Spawn [`Confined::program`] with [`Confined::args`] (stdin,
    /// stdout, stderr, working folder and environment as for the server
    /// itself) and keep [`Confined::running`].
    ///
    /// Fails closed: any problem is an [`Unavailable`] and nothing starts.
    ///
    /// Needs the `host` feature.
    #[cfg_attr(docsrs, doc(cfg(feature = "host")))]
    pub fn prepare(&self, program: &OsStr, args: &[OsString]) -> Result<Confined, Unavailable> {
        check()?;
        let launcher = Launcher::find(self.launcher.as_deref())?;
        let allow_write = existing(&self.allow_write, "allowWrite")?;
        let deny_read = existing(&self.deny_read, "denyRead")?;
        let deny_write = existing(&self.deny_write, "denyWrite")?;
        let dir = private_dir().map_err(|e| Unavailable::Host {
            reason: format!("cannot create the server's private folder: {e}"),
        })?;
        // From here on, an early return removes the folder.
        let mut running = Running { dir, proxy: None };
        let tmp_dir = running.dir.join("tmp");
        std::fs::create_dir(&tmp_dir).map_err(|e| Unavailable::Host {
            reason: format!("cannot create {}: {e}", tmp_dir.display()),
        })?;
        let mut proxy_socket = None;
        if self.has_network() {
            let socket = running.dir.join("proxy.sock");
            let proxy =
                Proxy::start(&socket, Arc::new(self.clone())).map_err(|e| Unavailable::Host {
                    reason: format!("cannot start the network proxy: {e}"),
                })?;
            running.proxy = Some(proxy);
            proxy_socket = Some(socket);
        }
        let spec = LaunchSpec {
            allow_write,
            deny_read,
            deny_write,
            tmp_dir,
            proxy: proxy_socket,
        };
        let spec = spec
            .to_arg()
            .map_err(|reason| Unavailable::Setting { reason })?;
        let mut argv = vec![LAUNCH_MARKER.into(), spec, program.to_owned()];
        argv.extend(args.iter().cloned());
        Ok(Confined {
            program: launcher.path().to_owned(),
            args: argv,
            running,
        })
    }
}

/// The canonical form of each path that exists (a missing path has nothing
/// to allow or protect); a relative path is a setting error.
fn existing(paths: &[PathBuf], field: &str) -> Result<Vec<PathBuf>, Unavailable> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_absolute() {
            return Err(Unavailable::Setting {
                reason: format!(
                    "{field} path {} is not absolute (write ${{workspaceFolder}}/... or ${{userHome}}/...)",
                    p.display()
                ),
            });
        }
        match std::fs::canonicalize(p) {
            Ok(c) => out.push(c),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::debug!(path = %p.display(), field, "sandbox path does not exist: skipped");
            }
            Err(e) => {
                return Err(Unavailable::Setting {
                    reason: format!("{field} path {}: {e}", p.display()),
                });
            }
        }
    }
    Ok(out)
}

/// `$TMPDIR/mcp-sandbox-<pid>-<n>`, created 0700 (a name already taken is
/// skipped, never reused).
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("mcp-sandbox-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return std::fs::canonicalize(&dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
