//! The Landlock domain of the server: reads everywhere, writes only under
//! the allowed folders, no signal or abstract-socket connection out of it.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};

/// The filesystem rights handled: ABI 3's set (every right up to
/// `Truncate`; ABI 5's device ioctls are left alone, so a terminal or
/// `/dev/null` behaves as usual).
const FS_ABI: ABI = ABI::V3;

/// Devices every process may write.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Fails unless a ruleset needing ABI 3 can be created here.
pub(super) fn probe() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(FS_ABI))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Confines the calling thread (and every process it starts).
pub(super) fn restrict(writable: &[PathBuf]) -> Result<(), String> {
    let read = AccessFs::from_read(FS_ABI);
    let all = AccessFs::from_all(FS_ABI);
    let fail = |e: landlock::RulesetError| format!("Landlock: {e}");
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(fail)?
        // Scopes need ABI 6; with an older kernel the pid namespace already
        // keeps the host's processes out of reach.
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(fail)?
        .set_compatibility(CompatLevel::HardRequirement)
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(["/"], read))
        .map_err(fail)?
        .add_rules(path_beneath_rules(writable, all))
        .map_err(fail)?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, all))
        .map_err(fail)?;
    let status = ruleset.restrict_self().map_err(fail)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
        RulesetStatus::NotEnforced => Err("Landlock did not enforce the ruleset".into()),
    }
}
