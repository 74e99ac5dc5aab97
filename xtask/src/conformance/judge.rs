//! Our own reading of the suite's results: the checks of one run, how the
//! client ended, the pass rule, the expected-pass list and the table.

use std::collections::BTreeMap;

use crate::json::Json;

/// Scenarios where a correct client gives up and exits non-zero (the
/// suite marks them `allowClientError`): authorization it must refuse, a
/// skill whose content fails verification.
pub(super) const CLIENT_MUST_FAIL: &[&str] = &[
    "auth/scope-retry-limit",
    "auth/resource-mismatch",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// The revision label of the scenarios that are not on the spec timeline.
pub(super) const EXTENSION: &str = "extension";

/// Tally of one scenario's checks.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Tally {
    pub(super) success: usize,
    pub(super) failure: usize,
    pub(super) warning: usize,
    /// `id: message` of each FAILURE and WARNING.
    pub(super) problems: Vec<String>,
}

pub(super) fn tally(checks: &Json) -> Result<Tally, String> {
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

/// How the client process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClientExit {
    Code(i32),
    /// Killed by the runner, or ended without saying how.
    TimedOut,
}

/// One scenario run alone: the runner prints `Client exited with code N` for
/// a non-zero exit and `Client timed out after Nms` when it killed the
/// client; silence means 0.
pub(super) fn client_exit(runner_stderr: &str) -> ClientExit {
    if runner_stderr.contains("Client timed out after") {
        return ClientExit::TimedOut;
    }
    runner_stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("Client exited with code "))
        .and_then(|c| c.trim().parse().ok())
        .map_or(ClientExit::Code(0), ClientExit::Code)
}

/// In the parallel run the runner's messages are interleaved and name no
/// scenario, so the client's own `stderr.txt` says how it ended: the
/// conformance client's last words are `...: done in Ns` (exit 0) or
/// `...: FAILED after Ns: why` (exit 1). Neither: it was killed.
pub(super) fn client_exit_from_own_stderr(client_stderr: &str) -> ClientExit {
    let last = client_stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("conformance-client: scenario "));
    match last {
        Some(l) if l.contains(": done in ") => ClientExit::Code(0),
        Some(l) if l.contains(": FAILED after ") => ClientExit::Code(1),
        _ => ClientExit::TimedOut,
    }
}

/// One scenario at one revision, and how it went.
#[derive(Debug)]
pub(super) struct Outcome {
    pub(super) scenario: String,
    /// A dated revision, or [`EXTENSION`].
    pub(super) revision: String,
    pub(super) tally: Option<Tally>,
    pub(super) exit: ClientExit,
    pub(super) secs: f64,
    /// Why the scenario could not be judged (no checks.json...).
    pub(super) error: Option<String>,
}

impl Outcome {
    pub(super) fn new(scenario: &str, revision: &str) -> Self {
        Outcome {
            scenario: scenario.to_owned(),
            revision: revision.to_owned(),
            tally: None,
            exit: ClientExit::Code(0),
            secs: 0.0,
            error: None,
        }
    }

    /// At least one SUCCESS, no FAILURE, no WARNING, and the exit status a
    /// correct client has here.
    pub(super) fn passed(&self) -> bool {
        let Some(t) = &self.tally else { return false };
        let checks_ok = t.success > 0 && t.failure == 0 && t.warning == 0;
        let exit_ok = match self.exit {
            ClientExit::TimedOut => false,
            ClientExit::Code(c) if CLIENT_MUST_FAIL.contains(&self.scenario.as_str()) => c != 0,
            ClientExit::Code(c) => c == 0,
        };
        self.error.is_none() && checks_ok && exit_ok
    }

    /// Every reason it did not pass, one a line.
    pub(super) fn why(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = &self.error {
            out.push(e.clone());
        }
        if let Some(t) = &self.tally {
            if t.success == 0 && t.failure == 0 && t.warning == 0 {
                out.push(
                    "no SUCCESS check (the runner alone passes a client that does nothing)".into(),
                );
            }
            out.extend(t.problems.iter().cloned());
        }
        let must_fail = CLIENT_MUST_FAIL.contains(&self.scenario.as_str());
        match self.exit {
            ClientExit::TimedOut => {
                out.push("the client was killed or ended without its last line (timeout?)".into())
            }
            ClientExit::Code(0) if must_fail => {
                out.push("the client exited 0 but must give up here".into())
            }
            ClientExit::Code(c) if c != 0 && !must_fail => {
                out.push(format!("the client exited with status {c}"))
            }
            ClientExit::Code(_) => {}
        }
        out
    }
}

/// The expected-pass list: `<scenario> <revision>` a line (revision: a date
/// or `extension`), `#` starts a comment.
pub(super) fn parse_expected(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some(s), Some(r), None) => out.push((s.to_owned(), r.to_owned())),
            _ => {
                return Err(format!(
                    "line {}: {line:?} is not `<scenario> <revision>` (revision: a date such as \
                     2025-11-25, or `extension`)",
                    n + 1
                ));
            }
        }
    }
    Ok(out)
}

/// Whether a scenario at a revision is listed as expected to pass.
pub(super) type Expected<'a> = dyn Fn(&str, &str) -> bool + 'a;

/// Several runs of the same job, gathered per scenario × revision.
#[derive(Debug, Default)]
pub(super) struct Rows {
    /// Key: (scenario, revision) in first-seen order index.
    order: Vec<(String, String)>,
    runs: BTreeMap<(String, String), Vec<Outcome>>,
}

impl Rows {
    pub(super) fn push(&mut self, o: Outcome) {
        let key = (o.scenario.clone(), o.revision.clone());
        if !self.runs.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.runs.entry(key).or_default().push(o);
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&(String, String), &[Outcome])> {
        self.order
            .iter()
            .filter_map(|k| self.runs.get(k).map(|v| (k, v.as_slice())))
    }

    /// Keys that are expected to pass and did not, in at least one run.
    pub(super) fn regressions(&self, expected: &Expected<'_>) -> Vec<String> {
        self.iter()
            .filter(|((s, r), runs)| expected(s, r) && runs.iter().any(|o| !o.passed()))
            .map(|((s, r), _)| format!("{s} @ {r}"))
            .collect()
    }
}

fn exit_text(e: ClientExit) -> String {
    match e {
        ClientExit::Code(c) => c.to_string(),
        ClientExit::TimedOut => "killed".into(),
    }
}

/// The table of one job (every run of it), then why each failure failed.
/// `scored`: the scenarios the job's requirement set scores (`None`: all).
pub(super) fn report(
    title: &str,
    rows: &Rows,
    expected: &Expected<'_>,
    scored: Option<&[String]>,
) -> String {
    let width = rows
        .iter()
        .map(|((s, _), _)| s.len())
        .max()
        .unwrap_or(8)
        .max("scenario".len());
    let mut s = format!("{title}\n");
    s.push_str(&format!(
        "{:<width$}  {:<10}  {:>6}  {:>6}  {:>8}  {:>6}  {:>6}  {:>5}  result\n",
        "scenario", "revision", "passed", "failed", "warnings", "exit", "secs", "runs"
    ));
    s.push_str(&"-".repeat(width + 76));
    s.push('\n');
    let mut why = String::new();
    for ((scenario, revision), runs) in rows.iter() {
        let Some(last) = runs.last() else { continue };
        let (p, f, w) = last
            .tally
            .as_ref()
            .map_or(("-".into(), "-".into(), "-".into()), |t| {
                (
                    t.success.to_string(),
                    t.failure.to_string(),
                    t.warning.to_string(),
                )
            });
        let ok = runs.iter().filter(|o| o.passed()).count();
        let all = ok == runs.len();
        let listed = expected(scenario, revision);
        let mut result = match (all, listed) {
            (true, true) => "PASS".to_owned(),
            (true, false) => "PASS (new: add it to xtask/conformance-expected.txt)".to_owned(),
            (false, true) => "FAIL (REGRESSION: listed as expected to pass)".to_owned(),
            (false, false) => "FAIL".to_owned(),
        };
        if scored.is_some_and(|sc| !sc.contains(scenario)) {
            result.push_str(" [not scored]");
        }
        let secs = runs.iter().map(|o| o.secs).fold(0.0, f64::max);
        s.push_str(&format!(
            "{scenario:<width$}  {revision:<10}  {p:>6}  {f:>6}  {w:>8}  {:>6}  {secs:>6.1}  {:>5}  {result}\n",
            exit_text(last.exit),
            format!("{ok}/{}", runs.len()),
        ));
        for (i, o) in runs.iter().enumerate().filter(|(_, o)| !o.passed()) {
            why.push_str(&format!("  {scenario} @ {revision} (run {}):\n", i + 1));
            for line in o.why() {
                why.push_str(&format!("    {line}\n"));
            }
        }
    }
    if !why.is_empty() {
        s.push_str("\nwhy:\n");
        s.push_str(&why);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn outcome(scenario: &str, t: (usize, usize, usize), exit: ClientExit) -> Outcome {
        let mut o = Outcome::new(scenario, "2025-11-25");
        o.tally = Some(Tally {
            success: t.0,
            failure: t.1,
            warning: t.2,
            problems: Vec::new(),
        });
        o.exit = exit;
        o
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
    fn exits() {
        assert_eq!(
            client_exit("Starting\n\nClient exited with code 1\n"),
            ClientExit::Code(1)
        );
        assert_eq!(
            client_exit("Client timed out after 30000ms"),
            ClientExit::TimedOut
        );
        assert_eq!(client_exit("Results saved"), ClientExit::Code(0));
        let own = |s: &str| client_exit_from_own_stderr(s);
        assert_eq!(
            own("x\nconformance-client: scenario \"a\": done in 0.20s\n"),
            ClientExit::Code(0)
        );
        assert_eq!(
            own("conformance-client: scenario \"a\": FAILED after 1.00s: no"),
            ClientExit::Code(1)
        );
        assert_eq!(own("conformance-client: calling x"), ClientExit::TimedOut);
    }

    #[test]
    fn expected_list_and_rows() {
        let e =
            parse_expected("# c\ninitialize 2025-06-18\n\n  sse-retry 2025-11-25 # why\n").unwrap();
        assert_eq!(
            e,
            vec![
                ("initialize".to_owned(), "2025-06-18".to_owned()),
                ("sse-retry".to_owned(), "2025-11-25".to_owned())
            ]
        );
        assert!(parse_expected("initialize\n").is_err());
        assert!(parse_expected("a b c\n").is_err());

        let mut rows = Rows::default();
        let mut ok = outcome("sse-retry", (1, 0, 0), ClientExit::Code(0));
        ok.revision = "2025-11-25".into();
        rows.push(ok);
        rows.push(outcome("sse-retry", (1, 0, 1), ClientExit::Code(0)));
        let listed = |s: &str, r: &str| e.contains(&(s.to_owned(), r.to_owned()));
        assert_eq!(
            rows.regressions(&listed),
            vec!["sse-retry @ 2025-11-25".to_owned()]
        );
        let table = report("t", &rows, &listed, None);
        assert!(table.contains("1/2"), "{table}");
        assert!(table.contains("(run 2)"), "{table}");
    }
}
