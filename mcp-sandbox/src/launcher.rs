//! The launcher: which program confines the server, and its entry points.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::check::Unavailable;
use crate::spec::{LAUNCH_MARKER, STAGE2_MARKER};

/// The launcher program's file name.
pub const LAUNCHER_NAME: &str = "mcp-sandbox-launch";

/// The environment variable naming the launcher program.
pub const LAUNCHER_VAR: &str = "MCP_SANDBOX_LAUNCHER";

/// Set by [`hook`]: this process's own executable is a launcher.
static HOOKED: AtomicBool = AtomicBool::new(false);

/// Makes this program its own sandbox launcher. Call it first thing in
/// `main`, before any thread or runtime starts:
///
/// ```no_run
/// // First in `main`:
/// mcp_sandbox::hook();
/// // ... then the application, which may start sandboxed servers.
/// ```
///
/// When the program was started as a launcher (its first argument is the
/// launch marker), this confines the process and runs the server in its
/// place: it never returns (on failure it prints why and exits with
/// [`LAUNCH_FAILED`](crate::LAUNCH_FAILED)). Otherwise it only records that
/// this executable can be the launcher ([`Launcher::find`]'s third choice)
/// and returns.
pub fn hook() {
    let mut args = std::env::args_os();
    match args.nth(1) {
        Some(m) if m == LAUNCH_MARKER || m == STAGE2_MARKER => launcher_main(),
        _ => HOOKED.store(true, Ordering::Relaxed),
    }
}

/// The whole `main` of a launcher program (`mcp-sandbox-launch` is only
/// this): reads `argv`, confines the process, runs the server. Never
/// returns.
pub fn launcher_main() -> ! {
    let args: Vec<OsString> = std::env::args_os().collect();
    let code = run(&args);
    std::process::exit(code)
}

#[cfg(target_os = "linux")]
fn run(args: &[OsString]) -> i32 {
    crate::linux::run(args)
}

#[cfg(not(target_os = "linux"))]
fn run(_: &[OsString]) -> i32 {
    eprintln!(
        "mcp-sandbox: {}",
        Unavailable::Platform {
            os: std::env::consts::OS
        }
    );
    crate::spec::LAUNCH_FAILED
}

/// A launcher program, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    path: PathBuf,
}

impl Launcher {
    /// The launcher to use, first found of:
    ///
    /// 1. `explicit` ([`Sandbox::launcher`](crate::Sandbox::launcher));
    /// 2. the `MCP_SANDBOX_LAUNCHER` environment variable;
    /// 3. this program itself, when it called [`hook`];
    /// 4. `mcp-sandbox-launch` in the folder of this program;
    /// 5. `mcp-sandbox-launch` in `PATH`.
    ///
    /// Explicit choices come first; a program that hooked needs nothing
    /// installed; a program shipped with the launcher beside it finds it
    /// without `PATH` (which a project could shadow); `PATH` is the last
    /// resort.
    pub fn find(explicit: Option<&Path>) -> Result<Launcher, Unavailable> {
        if let Some(p) = explicit {
            return Self::at(p.to_owned(), "the explicit launcher");
        }
        if let Some(p) = std::env::var_os(LAUNCHER_VAR).filter(|v| !v.is_empty()) {
            return Self::at(PathBuf::from(p), LAUNCHER_VAR);
        }
        let me = std::env::current_exe().ok();
        if HOOKED.load(Ordering::Relaxed) {
            if let Some(me) = &me {
                return Ok(Launcher { path: me.clone() });
            }
        }
        let beside = me
            .as_ref()
            .and_then(|m| m.parent())
            .map(|d| d.join(LAUNCHER_NAME));
        if let Some(b) = beside.as_ref().filter(|b| b.is_file()) {
            return Ok(Launcher { path: b.clone() });
        }
        if let Some(found) = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(LAUNCHER_NAME))
                .find(|p| p.is_file())
        }) {
            return Ok(Launcher { path: found });
        }
        Err(Unavailable::NoLauncher {
            looked: format!(
                "{LAUNCHER_VAR}, a hooked program, {}, PATH",
                beside.map_or_else(|| LAUNCHER_NAME.to_owned(), |b| b.display().to_string())
            ),
        })
    }

    fn at(path: PathBuf, what: &str) -> Result<Launcher, Unavailable> {
        if path.is_file() {
            Ok(Launcher { path })
        } else {
            Err(Unavailable::NoLauncher {
                looked: format!("{what}: {} is not a file", path.display()),
            })
        }
    }

    /// The program.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
