//! `cargo xtask conformance`: runs our conformance client against the
//! official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `peers/package.json`) in two jobs:
//!
//! - the matrix: every client scenario at every revision it is tagged with
//!   (`--spec-version`; the extensions, which are on no revision, without
//!   it), one at a time;
//! - the requirement sets: `client --requirements <revision>`, exactly as
//!   the suite's tier check runs them, every scenario of the set at once.
//!
//! Each run is judged from its `checks.json` by our own rule
//! ([`judge::Outcome::passed`]); the command fails when a scenario ×
//! revision listed in `xtask/conformance-expected.txt` does not pass in
//! every run.

mod judge;
mod suite;

use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use judge::{EXTENSION, Rows};
use suite::Runner;

use crate::{Result, peers, root};

const USAGE: &str = "\
usage: cargo xtask conformance [--matrix] [--requirements REVISION]...
                               [--scenario NAME]... [--revision REVISION]...
                               [--suite core|auth|all] [--runs N] [--keep DIR]

Runs the conformance client (examples/src/bin/conformance-client.rs) against
@modelcontextprotocol/conformance and prints a table per job. A scenario
passes with at least one SUCCESS check, no FAILURE, no WARNING, and client
exit status 0 (for the scenarios where the client must give up, a non-zero
exit instead). Fails when a scenario × revision listed in
xtask/conformance-expected.txt does not pass, in any run.

Jobs (default: the matrix and both requirement sets):
  --matrix               every client scenario at every revision it is tagged
                         with (--spec-version; extensions without), one at a time
  --requirements REV     `client --requirements REV`, as the suite's tier check
                         runs it: every scenario of the set in parallel
                         (repeatable; the suite has 2025-11-25 and 2026-07-28)
Matrix filters:
  --scenario NAME        only this scenario (repeatable)
  --revision REV         only this revision, or `extension` (repeatable)
  --suite SUITE          core: every non-auth scenario; auth: the auth/* ones;
                         all (default)
Other:
  --runs N               run each job N times in a row; the table says how
                         often each scenario passed (a flaky pass is a failure)
  --keep DIR             keep the suite's output (checks.json, client stdout and
                         stderr, the runner's log) under DIR/";

/// The checked-in list of scenario × revision runs that must pass.
const EXPECTED_FILE: &str = "xtask/conformance-expected.txt";

/// The requirement sets the pinned suite freezes (`requirements/*.yaml`).
const REQUIREMENT_SETS: &[&str] = &["2025-11-25", "2026-07-28"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suite {
    Core,
    Auth,
    All,
}

impl Suite {
    fn contains(self, scenario: &str) -> bool {
        let auth = scenario.starts_with("auth/");
        match self {
            Suite::Core => !auth,
            Suite::Auth => auth,
            Suite::All => true,
        }
    }
}

#[derive(Debug)]
struct Options {
    matrix: bool,
    requirements: Vec<String>,
    scenarios: Vec<String>,
    revisions: Vec<String>,
    suite: Suite,
    runs: usize,
    keep: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options> {
    let mut o = Options {
        matrix: false,
        requirements: Vec::new(),
        scenarios: Vec::new(),
        revisions: Vec::new(),
        suite: Suite::All,
        runs: 1,
        keep: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"))
        };
        match flag {
            "--matrix" => o.matrix = true,
            "--requirements" => o.requirements.push(value("--requirements")?),
            "--scenario" => o.scenarios.push(value("--scenario")?),
            "--revision" => o.revisions.push(value("--revision")?),
            "--suite" => {
                o.suite = match value("--suite")?.as_str() {
                    "core" => Suite::Core,
                    "auth" => Suite::Auth,
                    "all" => Suite::All,
                    other => {
                        return Err(format!(
                            "unknown suite {other:?}: use core, auth or all\n\n{USAGE}"
                        ));
                    }
                }
            }
            "--runs" => {
                o.runs = value("--runs")?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--runs needs a positive number\n\n{USAGE}"))?
            }
            "--keep" => o.keep = Some(PathBuf::from(value("--keep")?)),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    let filtered = !o.scenarios.is_empty() || !o.revisions.is_empty();
    if !o.matrix && o.requirements.is_empty() {
        o.matrix = true;
        if !filtered && o.suite == Suite::All {
            o.requirements = REQUIREMENT_SETS.iter().map(|s| s.to_string()).collect();
        }
    }
    if let Some(bad) = o
        .requirements
        .iter()
        .find(|r| !REQUIREMENT_SETS.contains(&r.as_str()))
    {
        return Err(format!(
            "no requirement set {bad:?}: the suite has {}",
            REQUIREMENT_SETS.join(", ")
        ));
    }
    Ok(o)
}

fn read_expected() -> Result<Vec<(String, String)>> {
    let path = root().join(EXPECTED_FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    judge::parse_expected(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The matrix's runs: (scenario, revision) for every tag, filtered.
fn matrix_runs(known: &[(String, Vec<String>)], o: &Options) -> Result<Vec<(String, String)>> {
    if let Some(bad) = o
        .scenarios
        .iter()
        .find(|s| !known.iter().any(|(k, _)| k == *s))
    {
        let names: Vec<&str> = known.iter().map(|(k, _)| k.as_str()).collect();
        return Err(format!(
            "unknown scenario {bad:?}; the suite's client scenarios are: {}",
            names.join(", ")
        ));
    }
    let runs: Vec<(String, String)> = known
        .iter()
        .filter(|(s, _)| o.suite.contains(s))
        .filter(|(s, _)| o.scenarios.is_empty() || o.scenarios.contains(s))
        .flat_map(|(s, tags)| tags.iter().map(move |t| (s.clone(), t.clone())))
        .filter(|(_, t)| o.revisions.is_empty() || o.revisions.contains(t))
        .collect();
    if runs.is_empty() {
        return Err("no scenario × revision matches the filters".into());
    }
    Ok(runs)
}

pub(crate) fn conformance(args: &[String]) -> Result {
    let opts = parse_args(args)?;
    peers()?;
    let runner = Runner::locate()?;
    let known = runner.scenarios()?;
    let expected = read_expected()?;
    if let Some((s, r)) = expected
        .iter()
        .find(|(s, r)| !known.iter().any(|(k, tags)| k == s && tags.contains(r)))
    {
        return Err(format!(
            "{EXPECTED_FILE} lists {s} at {r}, which the suite does not run \
             (`conformance list --client` names each scenario's revisions)"
        ));
    }
    let extension = |s: &str| {
        known
            .iter()
            .any(|(k, tags)| k == s && tags.iter().any(|t| t == EXTENSION))
    };
    // A scenario run in a requirement set at the set's revision is held to
    // its entry at that revision, or (an extension) to its extension entry.
    let is_expected = |s: &str, r: &str| {
        let listed = |r: &str| expected.iter().any(|(es, er)| es == s && er == r);
        listed(r) || (extension(s) && listed(EXTENSION))
    };
    let matrix = if opts.matrix {
        matrix_runs(&known, &opts)?
    } else {
        Vec::new()
    };
    let bin = suite::build_client()?;
    let command = suite::shell_command(&bin)?;

    let (base, scratch) = match &opts.keep {
        Some(dir) => {
            let dir =
                std::path::absolute(dir).map_err(|e| format!("--keep {}: {e}", dir.display()))?;
            (dir, false)
        }
        None => (
            root()
                .join(".conformance")
                .join(format!("run-{}", std::process::id())),
            true,
        ),
    };
    let mut tables = Vec::new();
    let mut regressions = Vec::new();
    let mut summary = Vec::new();

    if !matrix.is_empty() {
        let started = Instant::now();
        let mut rows = Rows::default();
        for run in 1..=opts.runs {
            for (i, (scenario, revision)) in matrix.iter().enumerate() {
                let dir = base
                    .join(format!("matrix-{run}"))
                    .join(suite::dir_name(scenario, revision));
                let o = runner.run_one(&command, scenario, revision, &dir);
                eprintln!(
                    "xtask: matrix run {run}/{} [{}/{}] {scenario} @ {revision}: {} in {:.1}s",
                    opts.runs,
                    i + 1,
                    matrix.len(),
                    if o.passed() { "pass" } else { "FAIL" },
                    o.secs
                );
                rows.push(o);
            }
        }
        let secs = started.elapsed().as_secs_f64();
        let passed = rows
            .iter()
            .filter(|(_, r)| r.iter().all(|o| o.passed()))
            .count();
        let title = format!(
            "matrix: every scenario at every revision it is tagged with, one at a time \
             ({} run(s), {secs:.0}s)",
            opts.runs
        );
        tables.push(judge::report(&title, &rows, &is_expected, None));
        summary.push(format!(
            "matrix: {passed}/{} scenario × revision runs passed every time ({} run(s), {secs:.0}s)",
            matrix.len(),
            opts.runs
        ));
        regressions.extend(rows.regressions(&is_expected));
    }

    for revision in &opts.requirements {
        let (scored, unscored) = runner.requirements(revision)?;
        let names: Vec<String> = scored.iter().chain(&unscored).cloned().collect();
        let mut rows = Rows::default();
        let mut walls = Vec::new();
        let mut suite_verdicts = Vec::new();
        for run in 1..=opts.runs {
            let dir = base.join(format!("requirements-{revision}-{run}"));
            let (outcomes, secs, code) =
                runner.run_requirements(&command, revision, &names, &dir)?;
            let ok = outcomes
                .iter()
                .filter(|o| o.passed() && scored.contains(&o.scenario))
                .count();
            eprintln!(
                "xtask: requirements {revision} run {run}/{}: {ok}/{} required pass in {secs:.1}s \
                 (suite's exit: {})",
                opts.runs,
                scored.len(),
                code.map_or("signal".into(), |c| c.to_string())
            );
            walls.push(secs);
            suite_verdicts.push(code == Some(0));
            outcomes.into_iter().for_each(|o| rows.push(o));
        }
        let all_ok = rows
            .iter()
            .filter(|((s, _), runs)| scored.contains(s) && runs.iter().all(|o| o.passed()))
            .count();
        let wall = walls.iter().copied().fold(0.0, f64::max);
        let title = format!(
            "requirements {revision}: the suite's parallel run, {} scored + {} not scored \
             ({} run(s), slowest {wall:.0}s)",
            scored.len(),
            unscored.len(),
            opts.runs
        );
        tables.push(judge::report(&title, &rows, &is_expected, Some(&scored)));
        summary.push(format!(
            "requirements {revision}: {all_ok}/{} required passed in all {} parallel run(s); \
             the suite's own verdict passed {}/{}",
            scored.len(),
            opts.runs,
            suite_verdicts.iter().filter(|v| **v).count(),
            opts.runs
        ));
        regressions.extend(
            rows.regressions(&is_expected)
                .into_iter()
                .map(|r| format!("{r} (parallel, requirements {revision})")),
        );
    }

    if scratch {
        let _ = fs::remove_dir_all(&base);
    } else {
        eprintln!("xtask: results kept in {}", base.display());
    }
    for t in &tables {
        println!("\n{t}");
    }
    for s in &summary {
        println!("{s}");
    }
    println!("{} entries in {EXPECTED_FILE}", expected.len());
    if regressions.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "conformance regression: {} did not pass, but {EXPECTED_FILE} lists it as passing",
            regressions.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments() {
        let o = parse_args(&a(&["--scenario", "x", "--scenario=y", "--suite", "core"])).unwrap();
        assert_eq!(o.scenarios, a(&["x", "y"]));
        assert_eq!(o.suite, Suite::Core);
        assert!(o.matrix && o.requirements.is_empty());
        assert!(parse_args(&a(&["--suite", "nope"])).is_err());
        assert!(parse_args(&a(&["--keep"])).is_err());
        assert!(parse_args(&a(&["--bogus"])).is_err());
        assert!(parse_args(&a(&["--runs", "0"])).is_err());
        assert!(parse_args(&a(&["--requirements", "2024-01-01"])).is_err());
        let all = parse_args(&[]).unwrap();
        assert!(all.matrix && all.requirements == a(REQUIREMENT_SETS));
        let req = parse_args(&a(&["--requirements", "2025-11-25", "--runs", "5"])).unwrap();
        assert!(!req.matrix && req.runs == 5);
        assert!(Suite::Core.contains("sse-retry") && !Suite::Core.contains("auth/x"));
        assert!(Suite::Auth.contains("auth/x") && !Suite::Auth.contains("tools_call"));
    }

    #[test]
    fn matrix_expands_every_tag() {
        let known = vec![
            ("initialize".to_owned(), a(&["2025-06-18", "2025-11-25"])),
            ("auth/dpop".to_owned(), a(&["extension"])),
        ];
        let o = parse_args(&[]).unwrap();
        let runs = matrix_runs(&known, &o).unwrap();
        assert_eq!(runs.len(), 3);
        let o = parse_args(&a(&["--revision", "extension"])).unwrap();
        assert_eq!(
            matrix_runs(&known, &o).unwrap(),
            vec![("auth/dpop".to_owned(), "extension".to_owned())]
        );
        assert!(matrix_runs(&known, &parse_args(&a(&["--scenario", "zz"])).unwrap()).is_err());
    }
}
