//! An `mcp bridge` driven by hand, as a stdio host drives it: JSON lines
//! in, JSON lines out.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use super::MCP;

pub struct Bridge {
    pub child: Child,
    out: BufReader<ChildStdout>,
}

impl Bridge {
    /// `mcp ARGS` (which name the `bridge` command) with `env` added;
    /// stderr is kept for [`Bridge::finish`].
    pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(MCP)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Bridge { child, out }
    }

    pub fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    /// Sends request `id` and returns its answer (what comes before it,
    /// notifications and the server's requests, is skipped).
    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
        }
    }

    /// The 2025-11-25 handshake, as a host does it.
    pub fn initialize(&mut self) -> Value {
        let init = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test-host", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// Closes stdin, waits for the exit, and returns what went to stderr.
    pub fn finish(mut self) -> String {
        drop(self.child.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}
