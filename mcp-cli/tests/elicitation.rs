//! The CLI answers its server (issue 36): elicitation asked on a terminal
//! (driven through a pseudo-terminal with `script`, typed as a person
//! types: each answer after its question shows), declined without one,
//! URL mode, `--root`, and `--log-level`. Real peers: server-everything
//! (stdio) and the Python SDK server (`peers/python_server.py`, both eras).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::terminal::Terminal;
use common::*;

#[test]
fn a_person_fills_in_server_everythings_form() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let mut t = Terminal::run(&[
        "--stdio",
        &everything,
        "call",
        "trigger-elicitation-request",
    ]);
    t.expect("asks: Please provide inputs for the following fields:");
    // In the server's order.
    t.expect("String (name), required: Your full, legal name");
    t.expect("  text: ");
    t.answer("");
    t.expect("required: type a value");
    t.expect("  text: ");
    t.answer("Ann Example");
    t.expect("yes or no: ");
    t.answer("y");
    t.expect("[It was a dark and stormy night.]: ");
    t.answer("");
    t.expect("email address: ");
    t.answer("ann@example.com");
    t.expect("URI: ");
    t.answer("");
    t.expect("date (YYYY-MM-DD): ");
    t.answer("next tuesday");
    t.expect("a date like 2025-12-31, please");
    t.expect("date (YYYY-MM-DD): ");
    t.answer("1990-01-15");
    t.expect("integer from 1 to 100 [42]: ");
    t.answer("101");
    t.expect("from 1 to 100, please");
    t.expect("[42]: ");
    t.answer("7");
    t.expect("number from 0 to 1000 [3.14]: ");
    t.answer("");
    t.expect("[Monica]: ");
    t.answer("3");
    t.expect("[Guitar]: ");
    t.answer("");
    t.expect("[Superman]: ");
    t.answer("Wonder Woman");
    t.expect("1) Tuna  2) Salmon  3) Trout");
    t.expect("[Tuna]: ");
    t.answer("2, trout");
    t.expect("1) Cats  2) Dogs");
    t.expect("[Cats]: ");
    t.answer("2");
    t.expect("  name: Ann Example");
    t.expect("send them? [Y/n] ");
    t.answer("");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "{screen}");
    for shown in [
        "User provided the requested information",
        "- Name: Ann Example",
        "- Agreed to terms: true",
        "- Email: ann@example.com",
        "- Birthdate: 1990-01-15",
        "- Favorite Integer: 7",
        "- Favorite Number: 3.14",
        "\"fish-2\"",
        "\"fish-3\"",
        "\"hero-3\"",
        "\"pet-2\"",
        "\"Joey\"",
        "\"Guitar\"",
    ] {
        assert!(screen.contains(shown), "{shown:?} missing:\n{screen}");
    }
    // No homepage: an optional field left empty is left out.
    assert!(!screen.contains("\"homepage\""), "{screen}");
}

#[test]
fn ctrl_c_cancels_the_form_and_ctrl_d_declines_it() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let mut t = Terminal::run(&[
        "--stdio",
        &everything,
        "call",
        "trigger-elicitation-request",
    ]);
    t.expect("  text: ");
    t.press("Ann");
    t.press("\x03");
    t.expect("mcp: cancelled");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("User cancelled the elicitation dialog"),
        "{screen}"
    );
    assert!(screen.contains("\"action\": \"cancel\""), "{screen}");

    let mut t = Terminal::run(&[
        "--stdio",
        &everything,
        "call",
        "trigger-elicitation-request",
    ]);
    t.expect("  text: ");
    t.press("\x04");
    t.expect("mcp: declined");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("User declined"), "{screen}");
}

#[test]
fn without_a_terminal_the_request_is_declined_with_a_line_saying_why() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let r = mcp(&[
        "--stdio",
        &everything,
        "call",
        "trigger-elicitation-request",
    ]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("User declined"), "{}", r.stdout);
    assert!(r.stdout.contains("\"action\": \"decline\""), "{}", r.stdout);
    let lines = r.error_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].starts_with("mcp: declined mcp-servers/everything's request for input")
            && lines[0].contains("stdin is not a terminal"),
        "{}",
        lines[0]
    );

    let r = mcp(&[
        "--stdio",
        &everything,
        "call",
        "trigger-url-elicitation",
        r#"{"url": "https://example.com/login"}"#,
    ]);
    assert_code(&r, 0);
    assert!(
        r.stdout.contains("User declined to open the URL"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("https://example.com/login"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("stdin is not a terminal"), "{}", r.stderr);
}

#[test]
fn url_mode_shows_the_url_and_waits_for_the_person() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let mut t = Terminal::run(&[
        "--stdio",
        &everything,
        "call",
        "trigger-url-elicitation",
        r#"{"url": "https://example.com/login?step=1", "message": "Sign in \u001b]0;x\u0007 please"}"#,
    ]);
    t.expect("asks you to open this URL in a browser: Sign in ^[]0;x^G please");
    t.expect("  https://example.com/login?step=1");
    t.expect("press Enter once you have opened it");
    t.answer("");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("User completed the URL elicitation flow"),
        "{screen}"
    );
    assert!(!screen.contains('\u{7}'), "{screen}");
}

#[test]
fn roots_are_advertised_with_root() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let dir = temp_path("root dir");
    std::fs::create_dir_all(&dir).unwrap();
    let canonical = std::fs::canonicalize(&dir).unwrap();
    let r = mcp(&[
        "--stdio",
        &everything,
        "--root",
        dir.to_str().unwrap(),
        "call",
        "get-roots-list",
    ]);
    assert_code(&r, 0);
    let uri = format!("file://{}", canonical.to_str().unwrap().replace(' ', "%20"));
    assert!(
        r.stdout.contains("Current MCP Roots (1 total)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("URI: {uri}\n")),
        "{uri} missing:\n{}",
        r.stdout
    );
    // Without --root: no roots capability, so the server has no such tool
    // (server-everything says so as a tool error).
    let r = mcp(&["--stdio", &everything, "call", "get-roots-list"]);
    assert_code(&r, 1);
    assert!(
        r.stdout.contains("get-roots-list not found"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The Python SDK asks through `elicitation/create` in the legacy era and
/// through an `input_required` result in 2026-07-28: the same form answers.
#[test]
fn the_python_sdk_server_asks_in_both_eras() {
    let Some(py) = test_support::python_server() else {
        return;
    };
    let py = py.arg("stdio").shell_line();
    for protocol in ["2025-11-25", "2026-07-28"] {
        let mut t = Terminal::run(&["--stdio", &py, "--protocol", protocol, "call", "greet"]);
        t.expect("python-test-server asks: What is your name?");
        t.expect("Name (name), required");
        t.expect("text: ");
        t.answer("Ann");
        t.expect("send them? [Y/n] ");
        t.answer("y");
        let (code, screen) = t.finish();
        assert_eq!(code, Some(0), "{protocol}: {screen}");
        assert!(screen.contains("Hello, Ann!"), "{protocol}: {screen}");
    }
}

/// The person's time is not the server's: a question left on the terminal
/// longer than `--timeout` does not time the call out; the deadline starts
/// again once the answer is sent.
#[test]
fn time_spent_answering_does_not_count_against_the_timeout() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let mut t = Terminal::run(&[
        "--stdio",
        &everything,
        "--timeout",
        "6",
        "call",
        "trigger-elicitation-request",
    ]);
    t.expect("  text: ");
    // A person thinking longer than --timeout.
    std::thread::sleep(Duration::from_secs(7));
    t.answer("Ann");
    for _ in 0..12 {
        t.expect(": ");
        t.answer("");
    }
    t.expect("send them? [Y/n] ");
    t.answer("y");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("- Name: Ann"), "{screen}");
}

/// `--log-level` in both eras on the Python SDK: `logging/setLevel` in
/// 2025-11-25, the `_meta` level of each request in 2026-07-28 (without
/// it the modern server sends none); messages below the level are not
/// shown.
#[test]
fn log_level_reaches_the_python_sdk_server_in_both_eras() {
    let Some(py) = test_support::python_server() else {
        return;
    };
    let py = py.arg("stdio").shell_line();
    for protocol in ["2025-11-25", "2026-07-28"] {
        for (level, shown) in [
            ("debug", &["debug", "info", "warning", "error"][..]),
            ("warning", &["warning", "error"]),
        ] {
            let r = mcp(&[
                "--stdio",
                &py,
                "--protocol",
                protocol,
                "--log-level",
                level,
                "call",
                "log_levels",
            ]);
            assert_code(&r, 0);
            let logged: Vec<&str> = r
                .stderr
                .lines()
                .filter_map(|l| l.strip_prefix("mcp: server log ["))
                .filter_map(|l| l.split(']').next())
                .collect();
            assert_eq!(logged, shown, "{protocol} at {level}: {}", r.stderr);
            assert!(
                r.stderr
                    .contains("mcp: server log [error] levels: a error message"),
                "{}",
                r.stderr
            );
        }
        // Without --log-level nothing is shown.
        let r = mcp(&["--stdio", &py, "--protocol", protocol, "call", "log_levels"]);
        assert_code(&r, 0);
        assert!(!r.stderr.contains("server log"), "{protocol}: {}", r.stderr);
    }
}

/// A `URLElicitationRequired` error (-32042) names what to open: the one
/// line of the refusal ends with the http(s) URL and what to do.
#[test]
fn a_url_elicitation_required_error_says_what_to_open() {
    let Some(everything) = everything_stdio() else {
        return;
    };
    let r = mcp(&[
        "--stdio",
        &everything,
        "call",
        "trigger-url-elicitation",
        r#"{"url": "https://example.com/a", "errorPath": true}"#,
    ]);
    assert_one_line_error(
        &r,
        4,
        "mcp: the server answered tools/call trigger-url-elicitation",
    );
    assert!(
        r.stderr.trim_end().ends_with(
            "; open https://modelcontextprotocol.io in a browser, then run the command again"
        ),
        "{}",
        r.stderr
    );
}
