//! The last fence, on the server alone (stage 2's bridge thread keeps its
//! Unix socket): no new `AF_UNIX` or `AF_VSOCK` socket (Landlock of this
//! ABI does not check connecting to a socket file, and a VM's vsock leads
//! out of the network namespace), no io_uring (its operations bypass
//! seccomp), no kernel keyring (it outlives namespaces).
//! `socketpair(2)` stays allowed: runtimes use it for their own pipes.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

#[cfg(target_arch = "x86_64")]
const ARCH: Option<TargetArch> = Some(TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<TargetArch> = Some(TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
const ARCH: Option<TargetArch> = Some(TargetArch::riscv64);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const ARCH: Option<TargetArch> = None;

/// Installs the filter on the calling thread (inherited by what it starts).
pub(super) fn restrict() -> Result<(), String> {
    let fail = |e: seccompiler::BackendError| format!("seccomp: {e}");
    let Some(arch) = ARCH else {
        return Err(format!(
            "seccomp filters are not built for {}",
            std::env::consts::ARCH
        ));
    };
    let family = |f: libc::c_int| -> Result<SeccompRule, String> {
        let value = u64::try_from(f).map_err(|e| e.to_string())?;
        let c = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .map_err(fail)?;
        SeccompRule::new(vec![c]).map_err(fail)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_socket,
        vec![family(libc::AF_UNIX)?, family(libc::AF_VSOCK)?],
    );
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        rules.insert(call, Vec::new());
    }
    let errno = u32::try_from(libc::EACCES).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(fail)?;
    let program = BpfProgram::try_from(filter).map_err(fail)?;
    seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))
}
