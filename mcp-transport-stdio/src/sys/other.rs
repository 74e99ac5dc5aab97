/// Without process groups only the direct child can be killed (through the
/// task that owns it). Windows Job Objects would go here.
#[derive(Debug)]
pub(crate) struct Group {
    killer: crate::stdio::KillSwitch,
}

impl Group {
    pub(crate) fn configure(_cmd: &mut tokio::process::Command) {}

    pub(crate) fn new(_pid: Option<u32>, killer: crate::stdio::KillSwitch) -> Self {
        Group { killer }
    }

    /// No graceful signal exists here: terminate kills.
    pub(crate) fn terminate(&self) {
        self.kill();
    }

    pub(crate) fn kill(&self) {
        self.killer.kill();
    }
}
