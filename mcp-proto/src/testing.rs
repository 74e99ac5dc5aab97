//! Helpers for tests that run against real MCP peers (feature `test-util`),
//! and [`assert_causes_once`], the check of the workspace's error rule.
//!
//! The peers (server-everything, the Python SDK, the conformance suite) are
//! installed by `cargo xtask peers` into `<workspace>/.peers`, or wherever
//! `MCP_PEERS_DIR` points. A test that needs one calls [`peer`]: when the
//! peer is missing it prints a skip message and returns `None`, unless
//! `MCP_REQUIRE_PEERS=1` (set by `cargo xtask test` and CI), in which case a
//! missing peer is a failure.

use std::path::PathBuf;

/// Where the peers are: `MCP_PEERS_DIR`, else `<workspace>/.peers`.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("MCP_PEERS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.peers"),
        PathBuf::from,
    )
}

/// Whether missing peers fail the test (`MCP_REQUIRE_PEERS=1`).
pub fn peers_required() -> bool {
    std::env::var("MCP_REQUIRE_PEERS").as_deref() == Ok("1")
}

/// The path `rel` inside [`peers_dir`], if it exists; otherwise `None` after a
/// skip message.
///
/// # Panics
///
/// When the peer is missing and [`peers_required`].
pub fn peer(rel: &str) -> Option<PathBuf> {
    let p = peers_dir().join(rel);
    if p.exists() {
        return Some(p);
    }
    assert!(
        !peers_required(),
        "required peer {} is missing (MCP_REQUIRE_PEERS=1): run `cargo xtask peers`",
        p.display()
    );
    eprintln!(
        "SKIP: peer {} is missing (run `cargo xtask peers`)",
        p.display()
    );
    None
}

/// Asserts the workspace's error rule (see [`crate::error`]) for `err` and
/// every error in its [`source`](std::error::Error::source) chain: no
/// level's `Display` contains the `Display` of its source, so a reporter
/// that walks the chain prints each cause once.
///
/// # Panics
///
/// At the first level that repeats its source, naming both texts.
pub fn assert_causes_once(err: &(dyn std::error::Error + 'static)) {
    let mut level = Some(err);
    let mut depth = 0;
    while let Some(e) = level {
        let Some(source) = e.source() else { return };
        let (own, cause) = (e.to_string(), source.to_string());
        assert!(
            cause.is_empty() || !own.contains(&cause),
            "level {depth} of the chain prints its source again: its Display is {own:?}, \
             its source's is {cause:?} ({e:?})"
        );
        level = Some(source);
        depth += 1;
        assert!(depth < 64, "a source chain over 64 levels deep: {err:?}");
    }
}
