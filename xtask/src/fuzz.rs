//! `cargo xtask fuzz [--seconds N] [--target NAME]...`: builds the libFuzzer
//! targets in `fuzz/` on the stable toolchain and runs each for N seconds
//! (see `fuzz/README.md` for why this works without nightly).
//!
//! The coverage instrumentation is what `cargo fuzz` passes, minus its
//! nightly-only sanitizer flag: `-Cpasses=sancov-module` with the
//! `-sanitizer-coverage-*` LLVM options are stable codegen flags, and
//! `libfuzzer-sys` compiles libFuzzer itself with the machine's C++ compiler.
//! `--target <host>` keeps the flags off build scripts and proc macros.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{Result, cargo, root, run};

/// Every target, in the order they run. Each has a seed corpus in
/// `fuzz/corpus/<name>` and a harness in its crate's `fuzzing` module.
pub(crate) const TARGETS: &[&str] = &[
    "envelope",
    "stdio_codec",
    "sse_decoder",
    "auth_parsers",
    "session",
];

const RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing";

/// What one run of one target did, from libFuzzer's final stats.
#[derive(Debug, Default)]
struct Outcome {
    execs: u64,
    new_units: u64,
    cov: u64,
    findings: Vec<String>,
}

pub(crate) fn fuzz(args: &[String]) -> Result {
    let mut seconds = 60u64;
    let mut targets: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().ok_or("--seconds needs a number")?;
                seconds = v
                    .parse()
                    .map_err(|_| format!("--seconds {v}: not a number"))?;
            }
            "--target" => {
                let v = it.next().ok_or("--target needs a name")?;
                let t = TARGETS
                    .iter()
                    .find(|t| *t == v)
                    .ok_or_else(|| format!("no fuzz target {v}; the targets are {TARGETS:?}"))?;
                targets.push(t);
            }
            other => {
                return Err(format!(
                    "fuzz: unknown argument {other} (usage: cargo xtask fuzz [--seconds N] [--target NAME]...)"
                ));
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    sync_lock()?;
    let host = host_triple()?;
    let target_dir = root().join("target/fuzz");
    run(cargo()
        .args([
            "build",
            "--release",
            "--bins",
            "--manifest-path",
            "fuzz/Cargo.toml",
        ])
        .args(["--target", &host])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env_remove("CARGO_ENCODED_RUSTFLAGS"))?;
    let bin_dir = target_dir.join(&host).join("release");

    let mut table = Vec::new();
    for name in &targets {
        let o = run_target(&bin_dir.join(name), name, seconds)?;
        table.push((*name, o));
    }
    eprintln!(
        "\n{:<14} {:>8} {:>12} {:>9} {:>6} {:>9}",
        "target", "seconds", "executions", "exec/s", "cov", "findings"
    );
    let mut findings = 0;
    for (name, o) in &table {
        eprintln!(
            "{name:<14} {seconds:>8} {:>12} {:>9} {:>6} {:>9}",
            o.execs,
            o.execs / seconds.max(1),
            o.cov,
            o.findings.len()
        );
        for f in &o.findings {
            eprintln!("  reproducer: {f}");
            eprintln!("  replay: {} {f}", bin_dir.join(name).display());
        }
        findings += o.findings.len();
    }
    if findings > 0 {
        return Err(format!(
            "{findings} finding(s); each reproducer is saved under fuzz/artifacts/ (fix it and add it as a unit test)"
        ));
    }
    Ok(())
}

/// Runs `bin` for `seconds` on its seeds; new inputs go to a working corpus
/// under `target/fuzz/corpus/` (the checked-in seeds stay as they are).
fn run_target(bin: &Path, name: &str, seconds: u64) -> Result<Outcome> {
    let seeds = root().join("fuzz/corpus").join(name);
    let work = root().join("target/fuzz/corpus").join(name);
    let artifacts = root().join("fuzz/artifacts").join(name);
    let log = root().join("target/fuzz/logs").join(format!("{name}.log"));
    for dir in [
        &work,
        &artifacts,
        &log.parent().unwrap_or(&work).to_path_buf(),
    ] {
        fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    }
    eprintln!(
        "xtask: fuzzing {name} for {seconds} s (log: {})",
        log.display()
    );
    let out = Command::new(bin)
        .arg(format!("-max_total_time={seconds}"))
        .arg("-timeout=10")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&work)
        .arg(&seeds)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("could not start {}: {e}", bin.display()))?;
    let text = String::from_utf8_lossy(&out.stderr);
    fs::write(&log, text.as_bytes()).map_err(|e| format!("write {}: {e}", log.display()))?;
    let o = parse_stats(&text);
    if !out.status.success() && o.findings.is_empty() {
        return Err(format!(
            "{name}: libFuzzer failed with {} and saved no reproducer; see {}",
            out.status,
            log.display()
        ));
    }
    Ok(o)
}

fn parse_stats(log: &str) -> Outcome {
    let mut o = Outcome::default();
    let num = |line: &str, key: &str| -> Option<u64> {
        let rest = line.split(key).nth(1)?;
        rest.split_whitespace().next()?.parse().ok()
    };
    for line in log.lines() {
        if let Some(n) = num(line, "stat::number_of_executed_units:") {
            o.execs = n;
        } else if let Some(n) = num(line, "stat::new_units_added:") {
            o.new_units = n;
        } else if let Some(n) = line.starts_with('#').then(|| num(line, " cov:")).flatten() {
            o.cov = n;
        } else if let Some(path) = line.split("Test unit written to ").nth(1) {
            o.findings.push(path.trim().to_owned());
        }
    }
    o
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV printed no host triple".into())
}

/// `name → versions` of a Cargo.lock's packages.
fn lock_versions(text: &str) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"'));
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            out.entry(n).or_default().push(v.trim_matches('"'));
        }
    }
    out
}

/// The versions in the fuzz lock `f` that the main lock `m` does not have
/// (a package the main build does not use at all is the fuzz build's own).
fn drift(m: &BTreeMap<&str, Vec<&str>>, f: &BTreeMap<&str, Vec<&str>>) -> Vec<String> {
    f.iter()
        .filter_map(|(name, fv)| {
            let mv = m.get(name)?;
            let old: Vec<&str> = fv.iter().filter(|v| !mv.contains(v)).copied().collect();
            (!old.is_empty()).then(|| format!("{name} {} → {}", old.join("/"), mv.join("/")))
        })
        .collect()
}

/// Keeps `fuzz/Cargo.lock` on the main lock's versions: every version of a
/// package the fuzz build uses must be one the main build uses, so fuzzing tests the code that ships and a
/// dependency bump does not leave the fuzz build on old code. On drift the
/// main lock plus the fuzz-only packages is written over it (cargo then
/// drops what the fuzz workspace does not use).
fn sync_lock() -> Result {
    let main_path = root().join("Cargo.lock");
    let fuzz_path = root().join("fuzz/Cargo.lock");
    let main = fs::read_to_string(&main_path).map_err(|e| format!("read Cargo.lock: {e}"))?;
    let fuzz = fs::read_to_string(&fuzz_path).unwrap_or_default();
    let (m, f) = (lock_versions(&main), lock_versions(&fuzz));
    let drift = drift(&m, &f);
    if drift.is_empty() && !fuzz.is_empty() {
        return Ok(());
    }
    let mut merged = main.clone();
    for block in fuzz.split("\n[[package]]\n").skip(1) {
        let name = block.lines().find_map(|l| l.strip_prefix("name = "));
        if name.is_some_and(|n| !m.contains_key(n.trim_matches('"'))) {
            merged.push_str("\n[[package]]\n");
            merged.push_str(block.trim_end());
            merged.push('\n');
        }
    }
    fs::write(&fuzz_path, merged).map_err(|e| format!("write fuzz/Cargo.lock: {e}"))?;
    eprintln!(
        "xtask: fuzz/Cargo.lock now follows Cargo.lock ({}); commit it",
        if drift.is_empty() {
            "created".to_owned()
        } else {
            drift.join(", ")
        }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzer_final_stats_and_reproducers() {
        let log = "#4096\tpulse  cov: 101 ft: 300 corp: 40/2Kb exec/s: 2048 rss: 30Mb\n\
                   #8000\tDONE   cov: 120 ft: 350 corp: 44/3Kb lim: 4096 exec/s: 4000 rss: 31Mb\n\
                   ==1== ERROR: libFuzzer: deadly signal\n\
                   artifact_prefix='fuzz/artifacts/x/'; Test unit written to fuzz/artifacts/x/crash-ab12\n\
                   stat::number_of_executed_units: 8000\n\
                   stat::new_units_added: 4\n";
        let o = parse_stats(log);
        assert_eq!((o.execs, o.new_units, o.cov), (8000, 4, 120));
        assert_eq!(o.findings, vec!["fuzz/artifacts/x/crash-ab12".to_owned()]);
    }

    #[test]
    fn lock_versions_lists_every_version_of_a_name() {
        let lock = "[[package]]\nname = \"a\"\nversion = \"1.0.0\"\n\n[[package]]\nname = \"a\"\nversion = \"2.0.0\"\ndependencies = [\n \"b\",\n]\n";
        assert_eq!(lock_versions(lock).get("a"), Some(&vec!["1.0.0", "2.0.0"]));
    }

    #[test]
    fn drift_is_a_fuzz_version_the_main_lock_lacks() {
        let m = lock_versions(
            "name = \"a\"\nversion = \"1\"\nname = \"a\"\nversion = \"2\"\nname = \"b\"\nversion = \"2\"\n",
        );
        let same =
            lock_versions("name = \"a\"\nversion = \"2\"\nname = \"fuzz-only\"\nversion = \"9\"\n");
        assert!(drift(&m, &same).is_empty());
        let old = lock_versions("name = \"b\"\nversion = \"1\"\n");
        assert_eq!(drift(&m, &old), vec!["b 1 → 2".to_owned()]);
    }

    #[test]
    fn every_target_has_seeds_and_a_binary() {
        let manifest = fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap_or_default();
        for t in TARGETS {
            assert!(
                manifest.contains(&format!("name = \"{t}\"")),
                "{t} in fuzz/Cargo.toml"
            );
            let seeds = fs::read_dir(root().join("fuzz/corpus").join(t)).map(Iterator::count);
            assert!(seeds.unwrap_or(0) > 0, "seeds for {t}");
        }
    }
}
