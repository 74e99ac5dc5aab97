//! Stage 2: pid 1 of the sandbox. Confines itself, starts the server,
//! reaps until it exits.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use crate::spec::LaunchSpec;

/// The proxy variables set for a server with network (both cases: curl
/// reads the lowercase ones, others the uppercase). `NODE_USE_ENV_PROXY`
/// makes Node's `fetch` follow them (Node 22.21+, 24.5+).
const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

pub(super) fn run(spec_arg: &OsStr, program: &OsStr, args: &[OsString]) -> Result<i32, String> {
    let spec = LaunchSpec::from_arg(spec_arg)?;
    // If stage 1 is killed, so is the sandbox (pid 1's exit kills the rest).
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| format!("setting the parent-death signal: {e}"))?;

    super::mounts::private_proc()?;
    for p in &spec.deny_read {
        super::mounts::hide(p)?;
    }
    for p in &spec.deny_write {
        super::mounts::read_only(p)?;
    }
    // The working folder was resolved before the mounts: enter it again so
    // that a hidden one is hidden here too.
    if let Ok(cwd) = std::env::current_dir() {
        std::env::set_current_dir(&cwd)
            .map_err(|e| format!("entering {} again: {e}", cwd.display()))?;
    }

    let mut writable = spec.allow_write.clone();
    writable.push(spec.tmp_dir.clone());
    super::landlock_rules::restrict(&writable)?;

    let bridge = match &spec.proxy {
        Some(socket) => Some(super::bridge::start(socket)?),
        None => None,
    };
    super::seccomp::restrict()?;

    let mut server = Command::new(program);
    server
        .args(args)
        .env("TMPDIR", &spec.tmp_dir)
        .env("TMP", &spec.tmp_dir)
        .env("TEMP", &spec.tmp_dir)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for var in PROXY_VARS {
        match bridge {
            Some(port) => server.env(var, format!("http://127.0.0.1:{port}")),
            None => server.env_remove(var),
        };
    }
    if bridge.is_some() {
        server.env("NODE_USE_ENV_PROXY", "1");
    }
    let child = server
        .spawn()
        .map_err(|e| format!("starting {} in the sandbox: {e}", program.to_string_lossy()))?;
    let pid = i32::try_from(child.id())
        .map(Pid::from_raw)
        .map_err(|e| e.to_string())?;
    release_stdio();
    reap_until(pid)
}

/// Closes this process's copies of stdin and stdout (pointing them at
/// `/dev/null`), so that the host sees the server's end of them.
pub(super) fn release_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
    }
}

/// Reaps every child (as pid 1 it inherits the server's orphans) until the
/// server exits; returns its status as an exit code.
fn reap_until(server: Pid) -> Result<i32, String> {
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == server => return Ok(code),
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == server => return Ok(128 + sig as i32),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(format!("waiting for the server: {e}")),
        }
    }
}

/// An exit status as the code to exit with (a signal as 128 + its number,
/// as a shell reports it).
pub(super) fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(crate::spec::LAUNCH_FAILED)
}
