//! Whether a sandbox can be had here, before anything is started.

/// The environment variable that makes this crate act as if a part of the
/// sandbox were missing: `landlock`, `userns` or `all`. For testing the
/// fail-closed path; it can only refuse a start, never weaken a sandbox.
pub const PRETEND_UNAVAILABLE_VAR: &str = "MCP_SANDBOX_PRETEND_UNAVAILABLE";

/// The lowest Landlock ABI the sandbox accepts: 3 (Linux 6.2), the first
/// that also restricts `truncate(2)` (with ABI 1 and 2 a file outside the
/// writable folders could still be emptied).
pub const MIN_LANDLOCK_ABI: u8 = 3;

/// How to run the server without a sandbox: said by every [`Unavailable`],
/// right after what is missing (a host that shortens a long reason keeps
/// its beginning).
pub const OPT_OUT: &str =
    "to run it unconfined, drop \"sandboxEnabled\": true (or ServerCommand::sandbox)";

/// Why a server that asked for a sandbox is not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unavailable {
    /// Not Linux: macOS and Windows sandboxes are described in the crate
    /// docs but not built.
    #[error("sandboxed stdio servers run on Linux only (this is {os}); {OPT_OUT}")]
    Platform {
        /// `std::env::consts::OS`.
        os: &'static str,
    },
    /// The kernel has no (or too old a) Landlock.
    #[error(
        "the kernel offers no Landlock ABI {MIN_LANDLOCK_ABI} or later ({found}); {OPT_OUT}, or use Linux 6.2 or later with Landlock enabled (`lsm=...,landlock` on the kernel command line)"
    )]
    Landlock {
        /// What was found.
        found: String,
    },
    /// Unprivileged user namespaces are off.
    #[error(
        "unprivileged user namespaces are disabled ({found}); {OPT_OUT}, or enable them (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or an AppArmor profile allowing userns)"
    )]
    UserNamespaces {
        /// What was found.
        found: String,
    },
    /// No launcher program was found.
    #[error(
        "no sandbox launcher found ({looked}); {OPT_OUT}, or call mcp_sandbox::hook() first in main, install mcp-sandbox-launch beside the program or in PATH, or set MCP_SANDBOX_LAUNCHER"
    )]
    NoLauncher {
        /// Where it looked.
        looked: String,
    },
    /// A setting cannot be enforced as written.
    #[error("the sandbox settings cannot be enforced: {reason}; {OPT_OUT}")]
    Setting {
        /// What is wrong.
        reason: String,
    },
    /// The host side could not be prepared (its folder or proxy).
    #[error("the sandbox could not be prepared: {reason}; {OPT_OUT}")]
    Host {
        /// What failed.
        reason: String,
    },
}

/// Whether a sandbox can be had on this machine: Linux, Landlock ABI
/// [`MIN_LANDLOCK_ABI`] or later, user namespaces not switched off. Cheap
/// (one syscall, two small reads), so it is checked at every start; the
/// launcher checks again and refuses to start the server on its own if
/// anything fails later (mounting `/proc`, the uid map...).
pub fn check() -> Result<(), Unavailable> {
    pretended(std::env::var(PRETEND_UNAVAILABLE_VAR).ok().as_deref())?;
    platform_check()
}

/// The [`PRETEND_UNAVAILABLE_VAR`] knob, as the launcher checks it too.
pub(crate) fn pretended(knob: Option<&str>) -> Result<(), Unavailable> {
    let found = || format!("pretended by {PRETEND_UNAVAILABLE_VAR}");
    match knob {
        Some("landlock" | "all") => Err(Unavailable::Landlock { found: found() }),
        Some("userns") => Err(Unavailable::UserNamespaces { found: found() }),
        _ => Ok(()),
    }
}

#[cfg(target_os = "linux")]
fn platform_check() -> Result<(), Unavailable> {
    crate::linux::landlock_usable()?;
    userns_enabled()
}

#[cfg(not(target_os = "linux"))]
fn platform_check() -> Result<(), Unavailable> {
    Err(Unavailable::Platform {
        os: std::env::consts::OS,
    })
}

/// The sysctls that switch unprivileged user namespaces off. (Ubuntu's
/// AppArmor restriction cannot be told from here: the launcher finds out.)
#[cfg(target_os = "linux")]
fn userns_enabled() -> Result<(), Unavailable> {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned());
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Err(Unavailable::UserNamespaces {
            found: "user.max_user_namespaces is 0".into(),
        });
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0")
        && !nix::unistd::geteuid().is_root()
    {
        return Err(Unavailable::UserNamespaces {
            found: "kernel.unprivileged_userns_clone is 0".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knob_only_refuses() {
        assert!(matches!(
            pretended(Some("landlock")),
            Err(Unavailable::Landlock { .. })
        ));
        assert!(matches!(
            pretended(Some("userns")),
            Err(Unavailable::UserNamespaces { .. })
        ));
        assert_eq!(pretended(Some("nothing")), Ok(()));
        assert_eq!(pretended(None), Ok(()));
        let text = pretended(Some("all")).err().map(|e| e.to_string());
        assert!(
            text.as_deref()
                .is_some_and(|t| t.contains("sandboxEnabled") && t.contains("Landlock")),
            "{text:?}"
        );
    }
}
