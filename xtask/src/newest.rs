//! `cargo xtask newest-deps` (part of `ci`): the workspace checked with the
//! newest versions of its dependencies that semver allows, warnings denied.
//! That is what a user gets who adds these crates to a project of their own
//! (their lock file, not ours): a dependency's new deprecation must fail
//! here, in our CI, before it warns in their build.
//!
//! A scratch copy of the sources (every tracked or new, not ignored, file)
//! goes to `target/newest-deps/`, `cargo update` moves its lock file to the
//! newest versions, and `cargo clippy --workspace --all-targets
//! --all-features -D warnings` checks it into the workspace's own target
//! directory, so a dependency whose version did not move is not checked
//! again. The repository's `Cargo.lock` is not touched.

use std::fs;
use std::process::Command;

use crate::{Result, cargo, root, run};

/// Copies the sources, updates the copy's lock file and checks it.
pub(crate) fn newest_deps() -> Result {
    let scratch = root().join("target/newest-deps");
    let _ = fs::remove_dir_all(&scratch);
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !listed.status.success() {
        return Err("git ls-files failed".into());
    }
    let mut copied = 0;
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let rel = String::from_utf8_lossy(file).into_owned();
        let (from, to) = (root().join(&rel), scratch.join(&rel));
        if !from.is_file() {
            continue; // deleted in the work tree
        }
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::copy(&from, &to).map_err(|e| format!("copy {rel}: {e}"))?;
        copied += 1;
    }
    eprintln!("xtask: {copied} files copied to {}", scratch.display());
    run(cargo().current_dir(&scratch).arg("update"))?;
    run(cargo()
        .current_dir(&scratch)
        .args(crate::CLIPPY_ALL_FEATURES)
        .env("CARGO_TARGET_DIR", root().join("target")))
}
