//! `cargo xtask docs`: every library crate's documentation built the way
//! docs.rs builds it, as far as the stable toolchain allows.
//!
//! docs.rs documents one crate at a time: its library only, with the
//! features its `[package.metadata.docs.rs]` asks for (here every
//! feature), no dependency documented beside it. So does this command:
//! `cargo doc -p <crate> --lib --no-deps --all-features` for each
//! publishable crate with a library, with warnings denied (broken links,
//! bad HTML), into one `target/doc` so the crates link to each other. A
//! crate without the docs.rs table (all features and `--cfg docsrs`) fails
//! the command, and so does a feature-gated item missing from the output
//! (the pages in [`GATED_PAGES`]).
//!
//! What differs from docs.rs, which runs nightly rustdoc:
//!
//! - **Feature badges.** docs.rs passes `--cfg docsrs`, which turns on
//!   nightly's `doc_cfg`: every item gated by a feature (or a platform)
//!   carries "Available on crate feature `config` only". Stable rustdoc
//!   cannot enable it (`--cfg docsrs` would fail the build), so here the
//!   items carry no badge; each one's docs also say "Needs the `config`
//!   feature." so readers of a local build see it too.
//! - **Links to dependencies.** docs.rs links third-party types to their
//!   docs.rs pages (`-Zrustdoc-map`); here, with `--no-deps`, they are not
//!   links. Links between this workspace's crates work in both.
//! - **Sources and lints.** docs.rs builds the published `.crate` (only the
//!   files in the package) with the newest dependencies semver allows, and
//!   caps lints at warnings; here the workspace and its `Cargo.lock`, with
//!   warnings denied.
//! - **Targets.** Each crate's table names one target,
//!   `x86_64-unknown-linux-gnu` (the API is the same everywhere; the
//!   Windows named-pipe code is not built on docs.rs either); here the
//!   host's.

use std::path::PathBuf;

use crate::json::Json;
use crate::{Result, cargo, run};

/// Pages a feature-gated API must appear on, with a text each must hold:
/// proof that the crate was documented with all its features.
const GATED_PAGES: &[(&str, &str)] = &[
    ("mcp_host/struct.Host.html", "apply_config"),
    ("mcp_host/struct.HostBuilder.html", "config_servers"),
    ("mcp_host/struct.ServerSpec.html", "from_config"),
    (
        "mcp_host/struct.ConfigChanges.html",
        "Needs the <code>config</code> feature",
    ),
    (
        "mcp_proto/transport/kit/index.html",
        "feature <code>test-kit</code>",
    ),
    (
        "mcp_proto/transport/framed/index.html",
        "<code>framed</code>",
    ),
    (
        "mcp_proto/macro.transport_kit_tests.html",
        "Needs the <code>test-kit</code> feature",
    ),
    ("mcp_tools/rig/index.html", "feature <code>rig</code>"),
    (
        "mcp_config/enum.Prepared.html",
        "Needs the <code>stdio</code> feature",
    ),
    (
        "mcp_transport_http/struct.HttpTransportBuilder.html",
        "native_roots",
    ),
    (
        "mcp_transport_stdio/struct.ServerCommand.html",
        "Needs the <code>sandbox</code> feature",
    ),
    (
        "mcp_sandbox/struct.Sandbox.html",
        "Needs the <code>host</code> feature",
    ),
];

/// One publishable library crate.
struct Crate {
    name: String,
    /// `[package.metadata.docs.rs]`, if any.
    docs_rs: Option<Json>,
}

/// Builds every library crate's docs (see the module docs), after checking
/// the facts the docs state that a program can check (`doc_facts.rs`).
pub(crate) fn docs() -> Result {
    crate::doc_facts::check()?;
    let (crates, target) = library_crates()?;
    let mut missing = Vec::new();
    for c in &crates {
        let all = c.docs_rs.as_ref().and_then(|d| d.get("all-features"));
        let args = c
            .docs_rs
            .as_ref()
            .and_then(|d| d.get("rustdoc-args"))
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_str).collect::<Vec<_>>());
        if all != Some(&Json::Bool(true)) || args.as_deref() != Some(&["--cfg", "docsrs"][..]) {
            missing.push(c.name.as_str());
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "no [package.metadata.docs.rs] with all-features = true and rustdoc-args = [\"--cfg\", \"docsrs\"] in: {}",
            missing.join(", ")
        ));
    }
    for c in &crates {
        run(cargo()
            .args(["doc", "-p", &c.name, "--lib", "--no-deps", "--all-features"])
            .env("RUSTDOCFLAGS", "-D warnings"))?;
    }
    let doc = target.join("doc");
    for (page, text) in GATED_PAGES {
        let path = doc.join(page);
        let html = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: {e} (a feature-gated page is missing)", path.display()))?;
        if !html.contains(text) {
            return Err(format!("{} does not contain {text:?}", path.display()));
        }
    }
    let names: Vec<&str> = crates.iter().map(|c| c.name.as_str()).collect();
    eprintln!(
        "xtask: the docs of {} are in {} (e.g. mcp_host/index.html)",
        names.join(", "),
        doc.display()
    );
    Ok(())
}

/// The workspace's publishable crates with a library (from `cargo
/// metadata`), and the target directory.
fn library_crates() -> Result<(Vec<Crate>, PathBuf)> {
    let meta = crate::workspace_metadata()?;
    let target = meta
        .get("target_directory")
        .and_then(Json::as_str)
        .map(PathBuf::from)
        .ok_or("cargo metadata has no target_directory")?;
    let mut crates = Vec::new();
    for p in meta.get("packages").and_then(Json::as_array).unwrap_or(&[]) {
        // `publish = false` reads as an empty list; absent, as null.
        let unpublished = p
            .get("publish")
            .and_then(Json::as_array)
            .is_some_and(<[Json]>::is_empty);
        let has_lib = p
            .get("targets")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .any(|t| {
                t.get("kind")
                    .and_then(Json::as_array)
                    .is_some_and(|k| k.iter().any(|k| k.as_str() == Some("lib")))
            });
        let Some(name) = p.get("name").and_then(Json::as_str) else {
            continue;
        };
        if unpublished || !has_lib {
            continue;
        }
        crates.push(Crate {
            name: name.to_owned(),
            docs_rs: p
                .get("metadata")
                .and_then(|m| m.get("docs"))
                .and_then(|d| d.get("rs"))
                .cloned(),
        });
    }
    Ok((crates, target))
}
