//! The server's view of the filesystem, in its private mount namespace:
//! its own `/proc`, `denyRead` paths hidden, `denyWrite` paths read-only.
//!
//! Denials are mounts, not Landlock rules: Landlock only grants, so "read
//! everything but X" would have to grant each sibling along X's path, and
//! then a file created later beside X (by the server itself, in a writable
//! folder) could not be read back, nor could a new file be created next to
//! a `denyWrite` folder without the right to create inside it too. A mount
//! over X is exact, and Landlock forbids the server to undo it (a
//! Landlock-restricted process may not mount or unmount).

use std::path::Path;

use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

const NONE: Option<&str> = None;

/// Mounts never propagate back to the host.
pub(super) fn make_private() -> Result<(), String> {
    mount(NONE, "/", NONE, MsFlags::MS_REC | MsFlags::MS_PRIVATE, NONE)
        .map_err(|e| format!("making the mounts private: {e}"))
}

/// A `/proc` of the new pid namespace over the host's: the server sees its
/// own processes only.
pub(super) fn private_proc() -> Result<(), String> {
    mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        NONE,
    )
    .map_err(|e| format!("mounting a private /proc: {e}"))
}

/// Hides `path`: an empty, read-only folder over a folder; over a file, a
/// read-only `/dev/null` that may not be opened (`nodev`), so reading it
/// fails with "permission denied".
pub(super) fn hide(path: &Path) -> Result<(), String> {
    let fail = |e: nix::Error| format!("hiding {}: {e}", path.display());
    if path.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("mode=000,size=4k,nr_inodes=1"),
        )
        .map_err(fail)
    } else {
        mount(Some("/dev/null"), path, NONE, MsFlags::MS_BIND, NONE).map_err(fail)?;
        remount_read_only(
            path,
            MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_NOSUID,
        )
    }
}

/// Makes `path` (a folder or a file) read-only.
pub(super) fn read_only(path: &Path) -> Result<(), String> {
    mount(
        Some(path),
        path,
        NONE,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        NONE,
    )
    .map_err(|e| format!("binding {}: {e}", path.display()))?;
    remount_read_only(path, MsFlags::empty())
}

/// Remounts the bind mount at `path` read-only with `extra`, keeping the
/// flags of the mount it came from: in a user namespace, a mount's
/// `nosuid`, `nodev`, `noexec` and atime flags are locked and a remount
/// that drops one is refused.
fn remount_read_only(path: &Path, extra: MsFlags) -> Result<(), String> {
    let fail = |e: nix::Error| format!("making {} read-only: {e}", path.display());
    let have = statvfs(path).map_err(fail)?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | extra;
    for (st, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if have.contains(st) {
            flags |= ms;
        }
    }
    mount(NONE, path, NONE, flags, NONE).map_err(fail)
}
