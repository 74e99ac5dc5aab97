//! The per-call benchmark's programs (`cargo xtask bench`) work together:
//! `bench-client` (ours) and `bench-floor` against `bench-server`, over
//! stdio and Streamable HTTP, in both eras, each run verifying every result
//! and printing its JSON line; a usage error is exit 2 with nothing on
//! stdout. The benchmark itself runs the release builds; these runs keep
//! the programs from rotting between benchmarks.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const SERVER: &str = env!("CARGO_BIN_EXE_bench-server");

/// A `bench-server --http 0`, killed when dropped.
struct Http(Child, String);

impl Http {
    fn start(modern: bool) -> Http {
        let mut cmd = Command::new(SERVER);
        cmd.args(["--http", "0"]);
        if modern {
            cmd.arg("--modern");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap()
            .to_owned();
        Http(child, url)
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `client` for 40 calls, 4 in flight, and returns its JSON line.
fn run(client: &str, http: bool, modern: bool) -> serde_json::Value {
    let server = http.then(|| Http::start(modern));
    let mut cmd = Command::new(client);
    match &server {
        Some(s) => cmd.args(["--transport", "http", "--url", &s.1]),
        None => {
            let line = format!("{SERVER} --stdio{}", if modern { " --modern" } else { "" });
            cmd.args(["--transport", "stdio", "--server-cmd", &line])
        }
    };
    cmd.args(["--calls", "40", "--concurrency", "4", "--payload", "300"]);
    if modern {
        cmd.args(["--era", "modern"]);
    }
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{client} http={http} modern={modern}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

#[test]
fn ours_and_the_floor_call_the_reference_server_in_both_eras_over_both_transports() {
    for client in [
        env!("CARGO_BIN_EXE_bench-client"),
        env!("CARGO_BIN_EXE_bench-floor"),
    ] {
        for http in [false, true] {
            for modern in [false, true] {
                let line = run(client, http, modern);
                assert_eq!(line["calls"], 40, "{line}");
                assert_eq!(line["transport"], if http { "http" } else { "stdio" });
                assert!(line["calls_per_s"].as_f64().unwrap() > 0.0, "{line}");
                assert!(line["p50_us"].as_f64().unwrap() > 0.0, "{line}");
            }
        }
    }
}

#[test]
fn a_client_without_a_server_is_a_usage_error() {
    for client in [
        env!("CARGO_BIN_EXE_bench-client"),
        env!("CARGO_BIN_EXE_bench-floor"),
    ] {
        let out = Command::new(client)
            .args(["--transport", "stdio", "--calls", "3"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{client}");
        assert!(out.stdout.is_empty(), "{client}");
    }
}
