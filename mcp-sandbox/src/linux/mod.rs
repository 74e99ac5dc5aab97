//! The Linux launcher: two stages, because a new pid namespace takes
//! effect for children only and a private `/proc` must be mounted from
//! inside it.
//!
//! - **Stage 1** (the program the host spawned, in the host's pid
//!   namespace): checks Landlock, enters a new user namespace (mapping the
//!   user to root inside it), then new mount, network, pid, IPC and UTS
//!   namespaces, brings up the loopback interface, makes every mount
//!   private, and starts stage 2. It blocks `SIGTERM`/`SIGINT`/`SIGHUP`/
//!   `SIGQUIT` (the host signals the whole process group: the server must
//!   get them, stage 1 must outlive it to report its status), closes its
//!   stdin/stdout, waits for stage 2 and exits with its status.
//! - **Stage 2** (pid 1 of the new pid namespace): mounts a private `/proc`,
//!   hides `denyRead` paths and makes `denyWrite` paths read-only by mounts,
//!   confines itself with Landlock (reads everywhere, writes only where
//!   allowed, no signals or abstract sockets out of the sandbox), starts the
//!   loopback bridge to the host's proxy when the server has network,
//!   forbids new Unix-socket and vsock sockets with seccomp (the host's
//!   D-Bus, ssh-agent or Docker sockets are files a server could otherwise
//!   connect to), starts the server, and reaps until it exits. When pid 1
//!   exits the kernel kills whatever the server left in the namespace.

mod bridge;
mod landlock_rules;
mod mounts;
mod netlink;
mod seccomp;
mod stage1;
mod stage2;

use std::ffi::OsString;

use crate::check::{OPT_OUT, Unavailable};
use crate::spec::{LAUNCH_FAILED, LAUNCH_MARKER, STAGE2_MARKER};

/// The launcher's `main`: `args` is the whole `argv`.
pub(crate) fn run(args: &[OsString]) -> i32 {
    let (Some(marker), Some(spec), Some(program)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!(
            "mcp-sandbox: usage: {} {LAUNCH_MARKER} SPEC PROGRAM [ARGS...] (started by a host, not by hand)",
            crate::launcher::LAUNCHER_NAME
        );
        return LAUNCH_FAILED;
    };
    let rest = args.get(4..).unwrap_or_default();
    let result = if marker == STAGE2_MARKER {
        stage2::run(spec, program, rest)
    } else if marker == LAUNCH_MARKER {
        stage1::run(spec, program, rest)
    } else {
        Err(format!("unknown marker {marker:?}"))
    };
    result.unwrap_or_else(|reason| {
        // An `Unavailable` already says how to opt out.
        let opt_out = if reason.contains(OPT_OUT) {
            String::new()
        } else {
            format!("; {OPT_OUT}")
        };
        eprintln!(
            "mcp-sandbox: cannot start {} sandboxed: {reason}{opt_out}",
            program.to_string_lossy()
        );
        LAUNCH_FAILED
    })
}

/// Whether Landlock of ABI [`MIN_LANDLOCK_ABI`](crate::MIN_LANDLOCK_ABI) or
/// later is there: creating (not applying) a ruleset that requires it.
pub(crate) fn landlock_usable() -> Result<(), Unavailable> {
    landlock_rules::probe().map_err(|found| Unavailable::Landlock { found })
}
