//! Stage 1: the namespaces, then stage 2 inside them.

use std::ffi::{OsStr, OsString};
use std::process::Command;

use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::unistd::{getgid, getuid};

use crate::spec::{LaunchSpec, STAGE2_MARKER};

pub(super) fn run(spec_arg: &OsStr, program: &OsStr, args: &[OsString]) -> Result<i32, String> {
    let spec = LaunchSpec::from_arg(spec_arg)?;
    crate::check::check().map_err(|e| e.to_string())?;

    let (uid, gid) = (getuid(), getgid());
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| {
        format!(
            "cannot create a user namespace ({e}): unprivileged user namespaces are disabled here"
        )
    })?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("writing {file}: {e}"))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("0 {uid} 1"))?;
    write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    unshare(
        CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWNET
            | CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS,
    )
    .map_err(|e| {
        format!("cannot create mount, network and pid namespaces ({e}): is an AppArmor or seccomp policy restricting user namespaces?")
    })?;
    super::mounts::make_private()?;
    if spec.proxy.is_some() {
        super::netlink::loopback_up()?;
    }

    // The host signals the whole group to stop the server; this stage stays
    // to report the server's status. The child's mask is reset by std.
    let mut stop = SigSet::empty();
    for s in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        stop.add(s);
    }
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&stop), None)
        .map_err(|e| format!("blocking signals: {e}"))?;

    let mut stage2 = Command::new("/proc/self/exe")
        .arg(STAGE2_MARKER)
        .arg(spec_arg)
        .arg(program)
        .args(args)
        .spawn()
        .map_err(|e| format!("starting the sandbox's second stage: {e}"))?;
    super::stage2::release_stdio();
    let status = stage2
        .wait()
        .map_err(|e| format!("waiting for the server: {e}"))?;
    clean_up(&spec);
    Ok(super::stage2::exit_code(status))
}

/// Removes the server's private folder once nothing in the sandbox is left
/// (pid 1 has exited): the host removes it too when it drops its handle,
/// but a host that exits without dropping it (`process::exit`) would leave
/// it behind. Only what the host made there is removed: the temporary
/// folder, the proxy's socket, then the folder if empty.
fn clean_up(spec: &LaunchSpec) {
    let _ = std::fs::remove_dir_all(&spec.tmp_dir);
    if let Some(socket) = &spec.proxy {
        let _ = std::fs::remove_file(socket);
    }
    if let Some(dir) = spec.tmp_dir.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}
