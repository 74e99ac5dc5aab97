//! `cargo xtask package` and `cargo xtask release-check`: what publishing
//! needs, checked without publishing.
//!
//! `package` (part of `ci`): every publishable package's metadata as
//! crates.io requires and docs.rs shows it (below), then `cargo package`
//! of each (what `cargo package --workspace` does for the publishable
//! ones), which packs each crate and builds it from its packed files alone (a file the package leaves out fails here, not after
//! publishing); crates of this workspace that are not on crates.io yet
//! resolve to their packed versions.
//!
//! `release-check`: `package`, then:
//!
//! - **The names.** Each package's name is asked of crates.io (`cargo
//!   info`): one that belongs to another project fails the check (ours are
//!   recognized by their `repository`).
//! - **The docs as docs.rs builds them.** Each packed crate on its own, with
//!   the newest dependencies semver allows (no lock file, as docs.rs
//!   resolves), all features and `--cfg docsrs`, its library only, on the
//!   nightly toolchain when it is installed (docs.rs runs nightly; the
//!   feature badges of `doc_cfg` then build). Without nightly it says so and
//!   builds on stable without `--cfg docsrs` (as `cargo xtask docs` does):
//!   what then differs is the badges, and docs.rs's `-Zrustdoc-map` links to
//!   dependencies' pages.
//! - **Semver** against the last release tag (`v*`) with
//!   `cargo-semver-checks`, when both exist; otherwise it says which is
//!   missing.
//!
//! Metadata each publishable package must have: a description; `license`;
//! `repository`; `documentation` at `https://docs.rs/<package>`; a
//! `readme` that exists; at most five keywords of at most 20 characters
//! (letters, digits, `_`, `-`, `+`, starting with a letter or digit);
//! categories from crates.io's list (those in [`CATEGORIES`]); and a
//! `rust-version`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::json::Json;
use crate::{Result, cargo, root, run};

/// crates.io category slugs this workspace may use (crates.io rejects a
/// slug it does not know; add one here from its list when a crate needs it).
const CATEGORIES: &[&str] = &[
    "api-bindings",
    "asynchronous",
    "authentication",
    "command-line-utilities",
    "config",
    "development-tools::testing",
    "encoding",
    "network-programming",
    "os::linux-apis",
    "web-programming::http-client",
];

/// A publishable package, as `cargo metadata` describes it.
struct Package {
    name: String,
    version: String,
    dir: PathBuf,
    meta: Json,
}

/// The workspace's publishable packages.
fn publishable() -> Result<Vec<Package>> {
    let meta = crate::workspace_metadata()?;
    let mut found = Vec::new();
    for p in meta.get("packages").and_then(Json::as_array).unwrap_or(&[]) {
        let unpublished = p
            .get("publish")
            .and_then(Json::as_array)
            .is_some_and(<[Json]>::is_empty);
        let text = |k: &str| {
            p.get(k)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        if unpublished {
            continue;
        }
        let manifest = PathBuf::from(text("manifest_path"));
        found.push(Package {
            name: text("name"),
            version: text("version"),
            dir: manifest.parent().map(Path::to_path_buf).unwrap_or_default(),
            meta: p.clone(),
        });
    }
    Ok(found)
}

/// What is wrong with `p`'s metadata, one sentence each.
fn metadata_problems(p: &Package) -> Vec<String> {
    let text = |k: &str| p.meta.get(k).and_then(Json::as_str).unwrap_or_default();
    let list = |k: &str| -> Vec<String> {
        p.meta
            .get(k)
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let mut problems = Vec::new();
    for field in ["description", "license", "repository", "rust_version"] {
        if text(field).is_empty() {
            problems.push(format!("no {}", field.replace('_', "-")));
        }
    }
    let docs = format!("https://docs.rs/{}", p.name);
    if text("documentation") != docs {
        problems.push(format!("documentation is not {docs}"));
    }
    match text("readme") {
        "" => problems.push("no readme".into()),
        r if !p.dir.join(r).is_file() => problems.push(format!("the readme {r} does not exist")),
        _ => {}
    }
    let keywords = list("keywords");
    if keywords.is_empty() || keywords.len() > 5 {
        problems.push(format!(
            "{} keywords (crates.io takes 1 to 5)",
            keywords.len()
        ));
    }
    for k in &keywords {
        let ok = k.len() <= 20
            && k.starts_with(|c: char| c.is_ascii_alphanumeric())
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-+".contains(c));
        if !ok {
            problems.push(format!("keyword {k:?} is not one crates.io takes"));
        }
    }
    let categories = list("categories");
    if categories.is_empty() {
        problems.push("no categories".into());
    }
    for c in categories
        .iter()
        .filter(|c| !CATEGORIES.contains(&c.as_str()))
    {
        problems.push(format!(
            "category {c:?} is not in xtask's list of crates.io's"
        ));
    }
    problems
}

/// `cargo xtask package`: metadata, then `cargo package --workspace`.
pub(crate) fn package() -> Result {
    let packages = publishable()?;
    let mut problems = Vec::new();
    for p in &packages {
        problems.extend(
            metadata_problems(p)
                .into_iter()
                .map(|m| format!("{}: {m}", p.name)),
        );
    }
    if !problems.is_empty() {
        return Err(format!("package metadata:\n  {}", problems.join("\n  ")));
    }
    // `--workspace` would pack the unpublished examples and tools too.
    let mut cmd = cargo();
    cmd.args(["package", "--locked", "--allow-dirty"]);
    // Verifying builds each packed crate against the others as registry
    // crates, which cargo takes as unchanged while their name and version
    // are: one built or unpacked from an earlier packing (same 0.1.0, older
    // source) would be reused. So packing builds in a target dir of its own
    // whose builds of our crates are forgotten first, and the sources cargo
    // unpacked from its temporary registry before are removed; third-party
    // builds stay.
    let target = root().join("target").join("package-verify");
    forget_builds_of(&target, packages.iter().map(|p| p.name.as_str()))?;
    forget_unpacked(&packages)?;
    cmd.env("CARGO_TARGET_DIR", &target);
    for p in &packages {
        cmd.args(["-p", &p.name]);
    }
    run(&mut cmd)
}

/// Removes `target`'s fingerprints of `names`, so cargo builds them again.
fn forget_builds_of<'a>(target: &Path, names: impl Iterator<Item = &'a str>) -> Result {
    let names: Vec<String> = names.map(|n| format!("{n}-")).collect();
    let fingerprints = target.join("debug").join(".fingerprint");
    let Ok(entries) = fs::read_dir(&fingerprints) else {
        return Ok(()); // nothing built there yet
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        if names.iter().any(|n| file.starts_with(n.as_str())) {
            fs::remove_dir_all(entry.path())
                .map_err(|e| format!("removing {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Removes what cargo unpacked of `packages` from the temporary local
/// registries `cargo package` verifies against (`$CARGO_HOME/registry/src/-HASH/NAME-VERSION`):
/// cargo unpacks a registry crate once and reuses the folder while its name
/// and version stay, so a later packing of changed sources would be
/// verified against the old ones.
fn forget_unpacked(packages: &[Package]) -> Result {
    let home = match std::env::var_os("CARGO_HOME") {
        Some(h) => PathBuf::from(h),
        None => match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(".cargo"),
            None => return Ok(()),
        },
    };
    let Ok(registries) = fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        // A local registry's folder has no host name: `-HASH`.
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for p in packages {
            let unpacked = registry.path().join(format!("{}-{}", p.name, p.version));
            if unpacked.exists() {
                fs::remove_dir_all(&unpacked)
                    .map_err(|e| format!("removing {}: {e}", unpacked.display()))?;
            }
        }
    }
    Ok(())
}

/// `cargo xtask release-check`.
pub(crate) fn release_check() -> Result {
    package()?;
    let packages = publishable()?;
    names(&packages)?;
    docs_rs(&packages)?;
    semver()
}

/// Fails when crates.io has one of our names for another project.
fn names(packages: &[Package]) -> Result {
    let ours = packages
        .first()
        .and_then(|p| p.meta.get("repository"))
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut taken = Vec::new();
    for p in packages {
        let out = cargo()
            .args(["info", "--registry", "crates-io", &p.name])
            .output()
            .map_err(|e| format!("cargo info: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let repo = text
                .lines()
                .find_map(|l| l.strip_prefix("repository: "))
                .unwrap_or("(none)");
            if repo.trim_end_matches('/') != ours.trim_end_matches('/') {
                taken.push(format!("{} (repository {repo})", p.name));
            }
        } else if err.contains("could not find") {
            eprintln!("xtask: {} is free on crates.io", p.name);
        } else {
            return Err(format!("cargo info {}: {}", p.name, err.trim()));
        }
    }
    if taken.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "taken on crates.io by other projects: {}",
            taken.join(", ")
        ))
    }
}

/// Each packed crate's docs as docs.rs builds them (see the module docs).
fn docs_rs(packages: &[Package]) -> Result {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustdoc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        eprintln!(
            "xtask: no nightly toolchain: the docs are built on stable without --cfg docsrs \
             (docs.rs's feature badges and its links to dependencies' docs are what differ)"
        );
    }
    let packed = root().join("target/package");
    let dir = |p: &Package| packed.join(format!("{}-{}", p.name, p.version));
    // Crates of ours that are not on crates.io yet: their packed copies.
    let mut patches = Vec::new();
    for p in packages {
        patches.push("--config".to_owned());
        patches.push(format!(
            "patch.crates-io.{}.path={:?}",
            p.name,
            dir(p).display().to_string()
        ));
    }
    let target = root().join("target/docs-rs");
    for p in packages {
        let has_lib = p
            .meta
            .get("targets")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .any(|t| {
                t.get("kind")
                    .and_then(Json::as_array)
                    .is_some_and(|k| k.iter().any(|k| k.as_str() == Some("lib")))
            });
        if !has_lib {
            continue;
        }
        let d = dir(p);
        // docs.rs resolves the newest versions semver allows.
        let _ = fs::remove_file(d.join("Cargo.lock"));
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        if nightly {
            cmd = Command::new("rustup");
            cmd.args(["run", "nightly", "cargo"]);
        }
        cmd.current_dir(&d)
            .arg("doc")
            .args(&patches)
            .args(["--lib", "--no-deps", "--all-features"])
            .env("CARGO_TARGET_DIR", &target)
            .env(
                "RUSTDOCFLAGS",
                if nightly {
                    "--cfg docsrs -D warnings"
                } else {
                    "-D warnings"
                },
            );
        run(&mut cmd).map_err(|e| format!("{}: docs as docs.rs builds them: {e}", p.name))?;
    }
    eprintln!(
        "xtask: docs.rs's build of every crate is in {}",
        target.join("doc").display()
    );
    Ok(())
}

/// `cargo semver-checks` against the last `v*` tag, when both exist.
fn semver() -> Result {
    let tag = Command::new("git")
        .args(["describe", "--tags", "--abbrev=0", "--match", "v*"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let Some(tag) = tag else {
        eprintln!("xtask: no release tag (v*) yet: no semver check");
        return Ok(());
    };
    let installed = cargo()
        .args(["semver-checks", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "xtask: cargo-semver-checks is not installed (cargo install cargo-semver-checks): \
             no semver check against {tag}"
        );
        return Ok(());
    }
    run(cargo().args(["semver-checks", "--workspace", "--baseline-rev", &tag]))
}
