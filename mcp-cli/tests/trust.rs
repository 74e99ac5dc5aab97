//! Project config files are code from whoever wrote the repository (issue
//! 33, item 11): `mcp` in a directory with a `.mcp.json` it was never told
//! to trust starts nothing from it. Each server here would leave a marker
//! file when started; the attack "worked" when the marker exists.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

/// A fresh project directory whose `.mcp.json` has one server, `demo`: the
/// demo server started through `sh`, which first creates `started` in the
/// directory, with an injection variable and a secret in its `env`.
fn repository(name: &str) -> PathBuf {
    let dir = temp_path(name);
    std::fs::create_dir_all(&dir).unwrap();
    write_config(&dir, "started");
    dir
}

fn write_config(dir: &Path, marker: &str) {
    let script = format!(
        "touch '{}'; exec '{MCP}' demo-server",
        dir.join(marker).display()
    );
    std::fs::write(
        dir.join(".mcp.json"),
        serde_json::to_string_pretty(&json!({"mcpServers": {"demo": {
            "command": "sh",
            "args": ["-c", script],
            "env": {"API_TOKEN": "hunter2-secret", "NODE_OPTIONS": "--require ./steal.js"},
        }}}))
        .unwrap(),
    )
    .unwrap();
}

fn started(dir: &Path, marker: &str) -> bool {
    dir.join(marker).exists()
}

#[test]
fn an_untrusted_project_file_starts_nothing_and_says_how_to_trust_it() {
    let dir = repository("untrusted");
    let store = dir.join("state/trust.json").display().to_string();
    let env = [("MCP_TRUST_FILE", store.as_str())];
    for args in [
        &["info"][..],
        &["servers"],
        &["tools"],
        &["--server", "demo", "info"],
        &["call", "demo/echo", r#"{"text": "hi"}"#],
    ] {
        let r = mcp_in(&dir, args, &env);
        assert_code(&r, 2);
        assert!(!started(&dir, "started"), "mcp {args:?} started the server");
        // What it would run, in full; names of variables, not values.
        assert!(r.stderr.contains("demo: runs sh -c"), "{}", r.stderr);
        assert!(r.stderr.contains("demo-server"), "{}", r.stderr);
        assert!(
            r.stderr.contains("env: API_TOKEN NODE_OPTIONS"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("warning: env NODE_OPTIONS"),
            "{}",
            r.stderr
        );
        assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
        // The last line says exactly how to trust it.
        let last = r.stderr.lines().last().unwrap();
        assert!(
            last.starts_with("mcp: .mcp.json is a project config file not trusted yet"),
            "{last}"
        );
        assert!(last.contains("`mcp trust .mcp.json`"), "{last}");
        assert!(last.contains("`--config .mcp.json`"), "{last}");
    }
    assert!(
        !Path::new(&store).exists(),
        "nothing trusted, nothing written"
    );

    // Doing what it says works, and is remembered.
    let r = mcp_in(&dir, &["trust", ".mcp.json"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.contains("demo: runs sh -c"), "{}", r.stdout);
    assert!(
        r.stdout.contains("trusted .mcp.json until it changes"),
        "{}",
        r.stdout
    );
    let r = mcp_in(&dir, &["call", "echo", r#"{"text": "hi"}"#], &env);
    assert_code(&r, 0);
    assert_eq!(r.stdout, "hi\n");
    assert!(started(&dir, "started"));

    // A changed file asks again.
    write_config(&dir, "started-after-edit");
    let r = mcp_in(&dir, &["info"], &env);
    assert_code(&r, 2);
    assert!(r.stderr.contains("started-after-edit"), "{}", r.stderr);
    assert!(!started(&dir, "started-after-edit"));

    // Naming the file is trusting it, for that run.
    let r = mcp_in(&dir, &["--config", ".mcp.json", "info"], &env);
    assert_code(&r, 0);
    assert!(started(&dir, "started-after-edit"));
    std::fs::remove_file(dir.join("started-after-edit")).unwrap();
    let r = mcp_in(&dir, &["info"], &env);
    assert_code(&r, 2);

    // Trusted, then forgotten.
    assert_code(&mcp_in(&dir, &["trust"], &env), 0);
    assert_code(&mcp_in(&dir, &["info"], &env), 0);
    let r = mcp_in(&dir, &["trust", "--revoke"], &env);
    assert_code(&r, 0);
    assert!(r.stdout.contains("forgot .mcp.json"), "{}", r.stdout);
    std::fs::remove_file(dir.join("started-after-edit")).unwrap();
    assert_code(&mcp_in(&dir, &["info"], &env), 2);
    assert!(!started(&dir, "started-after-edit"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_store_is_per_user_and_files_in_home_are_the_users_own() {
    // Without MCP_TRUST_FILE: $XDG_CONFIG_HOME/mcp/trusted-configs.json.
    let dir = repository("xdg");
    let xdg = dir.join("xdg-config");
    let xdg_text = xdg.display().to_string();
    let env = [("XDG_CONFIG_HOME", xdg_text.as_str())];
    assert_code(&mcp_in(&dir, &["info"], &env), 2);
    assert_code(&mcp_in(&dir, &["trust"], &env), 0);
    assert!(xdg.join("mcp/trusted-configs.json").is_file());
    assert_code(&mcp_in(&dir, &["info"], &env), 0);

    // A .mcp.json in the home folder itself is the user's own file.
    let home = repository("home");
    let home_text = home.display().to_string();
    let store = home.join("store.json").display().to_string();
    let r = mcp_in(
        &home,
        &["info"],
        &[
            ("HOME", home_text.as_str()),
            ("MCP_TRUST_FILE", store.as_str()),
        ],
    );
    assert_code(&r, 0);
    assert!(started(&home, "started"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&home);
}

/// On a terminal (a pty from util-linux `script`), `mcp` shows the file and
/// asks: "n" starts nothing, "y" starts it and remembers the decision.
#[cfg(unix)]
#[test]
fn on_a_terminal_the_user_is_asked() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: util-linux `script` (to get a terminal) is not installed");
        return;
    }
    let dir = repository("terminal");
    let store = dir.join("trust.json").display().to_string();
    let on_terminal = |answer: &'static str| {
        let line = format!("'{MCP}' call echo '{{\"text\": \"hi\"}}'");
        let mut child = Command::new("script")
            .args(["-q", "-f", "-e", "-c", &line, "/dev/null"])
            .current_dir(&dir)
            .env("MCP_TRUST_FILE", &store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        // Answer once the question is on the terminal.
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 256];
            let mut stdout = stdout;
            let mut answered = false;
            loop {
                let n = std::io::Read::read(&mut stdout, &mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if !answered && String::from_utf8_lossy(&seen).contains("[y/N] ") {
                    writeln!(stdin, "{answer}").unwrap();
                    answered = true;
                }
            }
            String::from_utf8_lossy(&seen).into_owned()
        });
        let status = wait_exit(&mut child, Duration::from_secs(60));
        (status.code(), reader.join().unwrap())
    };

    let (code, screen) = on_terminal("n");
    assert_eq!(code, Some(2), "{screen}");
    assert!(screen.contains("demo: runs sh -c"), "{screen}");
    assert!(screen.contains("warning: env NODE_OPTIONS"), "{screen}");
    assert!(
        screen.contains("not trusted, so no server was started"),
        "{screen}"
    );
    assert!(!started(&dir, "started"));

    let (code, screen) = on_terminal("y");
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("hi"), "{screen}");
    assert!(started(&dir, "started"));
    // Remembered: no question the next time, even without a terminal.
    std::fs::remove_file(dir.join("started")).unwrap();
    let r = mcp_in(&dir, &["info"], &[("MCP_TRUST_FILE", &store)]);
    assert_code(&r, 0);
    assert!(!r.stderr.contains("[y/N]"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
