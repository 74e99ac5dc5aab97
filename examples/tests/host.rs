//! The `host` example follows edits of its config file while it runs: a
//! server added to the file starts, one deleted from it stops, a broken
//! file keeps the servers as they are, and Ctrl-C closes everything.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous: the machine is shared and busy.
const WAIT: Duration = Duration::from_secs(60);

fn config(names: &[&str]) -> String {
    let demo = env!("CARGO_BIN_EXE_host");
    let entries: Vec<String> = names
        .iter()
        .map(|n| format!(r#""{n}": {{"command": "{demo}", "args": ["--server"]}}"#))
        .collect();
    format!(r#"{{"mcpServers": {{{}}}}}"#, entries.join(", "))
}

/// Lines of the example's stdout, and what was read so far (for messages).
struct Output {
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Output {
    /// Waits for a line containing `text`.
    fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(text);
                    self.seen.push(line);
                    if hit {
                        return;
                    }
                }
                Err(_) => panic!(
                    "no line with {text:?} within {WAIT:?}; saw {:#?}",
                    self.seen
                ),
            }
        }
    }
}

#[test]
fn the_host_example_applies_edits_of_its_config_file() {
    let dir = std::env::temp_dir().join(format!("mcp-host-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file: PathBuf = dir.join(".mcp.json");
    std::fs::write(&file, config(&["a"])).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_host"))
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut out = Output {
        lines,
        seen: Vec::new(),
    };
    // Watched from the first attempt on (the host is spawned, not awaited).
    out.expect("a: is starting");
    out.expect("a: is ready with");

    std::fs::write(&file, config(&["a", "b"])).unwrap();
    out.expect(r#"applied: added ["b"], removed [], restarted []"#);
    out.expect("b: is ready with");

    std::fs::write(&file, config(&["b"])).unwrap();
    out.expect(r#"applied: added [], removed ["a"], restarted []"#);

    std::fs::write(&file, "{ not json").unwrap();
    out.expect("keeping the servers as they are");

    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    out.expect("b: was shut down");
    out.expect("closed");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}; saw {:#?}", out.seen);
    let _ = std::fs::remove_dir_all(&dir);
}
