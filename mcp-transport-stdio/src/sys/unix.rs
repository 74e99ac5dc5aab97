use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The server's process group (its id is the server's pid).
#[derive(Debug)]
pub(crate) struct Group {
    /// `None` when the pid was unusable; then nothing is ever signalled.
    pgid: Option<Pid>,
    /// Also kills the direct child through Tokio (covers a pid we could
    /// not turn into a group id).
    killer: crate::stdio::KillSwitch,
}

impl Group {
    /// Makes the child the leader of a new process group, so that it and
    /// everything it starts (unless they move out with `setsid`) can be
    /// signalled together.
    pub(crate) fn configure(cmd: &mut tokio::process::Command) {
        cmd.process_group(0);
    }

    pub(crate) fn new(pid: Option<u32>, killer: crate::stdio::KillSwitch) -> Self {
        // Never signal group 0 (our own) or 1 (init's).
        let pgid = pid
            .and_then(|p| i32::try_from(p).ok())
            .filter(|p| *p > 1)
            .map(Pid::from_raw);
        Group { pgid, killer }
    }

    /// `SIGTERM` to the whole group.
    pub(crate) fn terminate(&self) {
        self.signal(Signal::SIGTERM);
    }

    /// `SIGKILL` to the whole group.
    pub(crate) fn kill(&self) {
        self.signal(Signal::SIGKILL);
        self.killer.kill();
    }

    fn signal(&self, sig: Signal) {
        let Some(pgid) = self.pgid else { return };
        match killpg(pgid, sig) {
            // ESRCH: the group is already empty.
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => {
                tracing::debug!(%pgid, ?sig, error = %e, "could not signal the server's process group")
            }
        }
    }
}
