//! `mcp` on a pseudo-terminal, typed at as a person types.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{MCP, wait_exit};

/// `mcp` on a pseudo-terminal (`script -qfec`): what it shows (stdout and
/// stderr, and the terminal's echo of what is typed) and a keyboard.
pub struct Terminal {
    child: Child,
    keys: Option<ChildStdin>,
    screen: Arc<Mutex<Vec<u8>>>,
    /// How much of the screen earlier `expect`s consumed.
    seen: usize,
}

/// `'arg'` for a POSIX shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Terminal {
    pub fn run(args: &[&str]) -> Terminal {
        Self::run_env(args, &[])
    }

    /// [`run`](Self::run) with `env` set.
    pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Terminal {
        let line: Vec<String> = std::iter::once(MCP)
            .chain(args.iter().copied())
            .map(quote)
            .collect();
        // `exec`: script(1) runs the line with $SHELL, and a shell that
        // stays as mcp's parent (dash does) is in the terminal's foreground
        // group too, so Ctrl-C would kill it and script would report 130
        // whatever mcp does.
        let mut child = Command::new("script")
            .args(["-qfec", &format!("exec {}", line.join(" ")), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .envs(env.iter().copied())
            .spawn()
            .expect("script(1) from util-linux");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let mut out = child.stdout.take().unwrap();
        let shared = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shared.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            keys: child.stdin.take(),
            child,
            screen,
            seen: 0,
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until `text` shows after what was already seen.
    pub fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen.lock().unwrap().clone();
            let rest = String::from_utf8_lossy(screen.get(self.seen..).unwrap_or_default());
            if let Some(i) = rest.find(text) {
                self.seen += rest[..i + text.len()].len();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{text:?} never showed; the screen:\n{}",
                String::from_utf8_lossy(&screen)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` and Enter.
    pub fn answer(&mut self, keys: &str) {
        self.press(&format!("{keys}\r"));
    }

    pub fn press(&mut self, keys: &str) {
        let k = self.keys.as_mut().unwrap();
        k.write_all(keys.as_bytes()).unwrap();
        k.flush().unwrap();
    }

    /// Waits for `mcp` to exit: its status and the whole screen.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let status = wait_exit(&mut self.child, Duration::from_secs(60));
        drop(self.keys.take());
        // The reader thread drains the rest.
        std::thread::sleep(Duration::from_millis(100));
        (status.code(), self.text())
    }
}
