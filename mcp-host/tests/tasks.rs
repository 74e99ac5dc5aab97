//! Durable tasks across a host that is killed: a real host process (this
//! test binary, run again as a child in `child_host`) starts a task, is
//! killed with SIGKILL while it runs, and a new host process on the same
//! `FileTicketStore` file picks the task up. The hosts have no response
//! cache: tickets have a store of their own.
//!
//! - Against a server that keeps its tasks across processes (the test's
//!   `durable_task_server.py`, tasks in a state file as a database would
//!   keep them), the new host gets the task's result.
//! - Against FastMCP (`peers/fastmcp_server.py`, PyPI `fastmcp[tasks]`
//!   4.1.4: the 2026-07-28 tasks extension, SEP-2663) over Streamable
//!   HTTP: the server outlives the killed host (tasks in its in-process
//!   `memory://` backend), and the new host, on a new connection, gets the
//!   task's result from it.
//! - Against server-everything 2026.8.31 over stdio, whose tasks live in
//!   the memory of the process the killed host spawned, the new host's
//!   server process does not know the task: the outcome is a typed
//!   `TicketError::Unknown` at once (the server answers -32602), not a
//!   wait, and the ticket is forgotten.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_client::{Client, ClientError, TaskOptions, TicketError};
use mcp_host::http::HttpTransport;
use mcp_host::tools::{ToolError, ToolTask};
use mcp_host::{FileTicketStore, Host, HostTaskError, Launcher, ServerSpec};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;

/// How long a child host may take for one step on a loaded machine.
const STEP: Duration = Duration::from_secs(60);

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-host-tasks-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The server a child host runs, by name.
fn server_command(which: &str, dir: &Path) -> Option<ServerCommand> {
    let peer = match which {
        "everything" => test_support::everything()?.arg("stdio"),
        _ => test_support::python_running(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/durable_task_server.py"
        ))?
        .arg(dir.join("server-state.json")),
    };
    Some(ServerCommand::new(peer.program).args(peer.args))
}

/// The child host: `MCP_TASK_CHILD=start` starts a task and prints
/// `STARTED <id>`, then waits to be killed; `=resume` prints `TICKETS <n>`,
/// then each recorded task's outcome (`RESULT <text>` / `ERROR <debug>`),
/// then `LEFT <n>`. Without the variable (a normal test run) it does nothing.
///
/// `MCP_TASK_SERVER` names the server: `everything` and `durable` are
/// spawned over stdio by the host (it prints `SERVER_PID <pid>`); `fastmcp`
/// is the Streamable HTTP server at `MCP_TASK_URL`, started by the test.
#[test]
fn child_host() {
    let Ok(mode) = std::env::var("MCP_TASK_CHILD") else {
        return;
    };
    let dir = PathBuf::from(std::env::var("MCP_TASK_DIR").unwrap());
    let which = std::env::var("MCP_TASK_SERVER").unwrap();
    let (tool, args) = match which.as_str() {
        "everything" => ("simulate-research-query", json!({"topic": "durable"})),
        // About 6 s: the host is killed while it runs.
        "fastmcp" => (
            "slow_report",
            json!({"topic": "durable", "steps": 12, "step_ms": 500}),
        ),
        _ => ("slow-report", json!({"topic": "durable"})),
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let launcher = if which == "fastmcp" {
            let url = std::env::var("MCP_TASK_URL").unwrap();
            Launcher::new(move || {
                let url = url.clone();
                async move {
                    Ok(Client::builder("durable-host", "1")
                        .connect(HttpTransport::new(&url)?)
                        .await?)
                }
            })
        } else {
            let cmd = server_command(&which, &dir)
                .unwrap()
                .stderr(Stderr::discard());
            Launcher::new(move || {
                let cmd = cmd.clone();
                async move {
                    let transport = StdioTransport::spawn(cmd)?;
                    if let Some(pid) = transport.pid() {
                        println!("SERVER_PID {pid}");
                    }
                    Ok(Client::builder("durable-host", "1")
                        .connect(transport)
                        .await?)
                }
            })
        };
        let host = Host::builder()
            .server(ServerSpec::new("research", launcher).startup_timeout(STEP))
            .tickets(FileTicketStore::open(dir.join("tickets.json")).unwrap())
            .start()
            .await
            .unwrap();
        if mode == "start" {
            let options = TaskOptions::new().deadline(Duration::from_secs(300));
            let started = host.start_task(tool, args, options).await.unwrap();
            let ToolTask::Started(ticket) = started else {
                panic!("not run as a task: {started:?}")
            };
            println!("STARTED {}", ticket.task_id);
            tokio::time::sleep(Duration::from_secs(600)).await;
            return;
        }
        let tickets = host.tasks().unwrap();
        println!("TICKETS {}", tickets.len());
        for t in &tickets {
            match host.task_result(t).await {
                Ok(out) => println!("RESULT {}", out.text),
                Err(e) => println!("ERROR {e:?}"),
            }
        }
        println!("LEFT {}", host.tasks().unwrap().len());
        host.close().await;
    });
}

fn child(mode: &str, which: &str, dir: &Path, url: Option<&str>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    if let Some(url) = url {
        cmd.env("MCP_TASK_URL", url);
    }
    cmd.args(["child_host", "--exact", "--nocapture", "--test-threads=1"])
        .env("MCP_TASK_CHILD", mode)
        .env("MCP_TASK_SERVER", which)
        .env("MCP_TASK_DIR", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The child's stdout lines, as they come; the test harness's own
/// `test child_host ... ` before the first of ours is cut off.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let line = match line.find(" ... ") {
                Some(at) if line.starts_with("test ") => line[at + 5..].to_owned(),
                _ => line,
            };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// The next line starting with `prefix`, within `STEP` (else the child is
/// killed and the test fails).
fn expect(rx: &mpsc::Receiver<String>, child: &mut Child, prefix: &str) -> String {
    let end = Instant::now() + STEP;
    loop {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                if let Some(at) = line.find(prefix) {
                    return line[at + prefix.len()..].trim().to_owned();
                }
            }
            Err(e) => {
                let _ = child.kill();
                panic!("no `{prefix}` line from the child host: {e:?}");
            }
        }
    }
}

/// Kills a process the killed host left behind, when the test ends.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.0.to_string())
            .stderr(Stdio::null())
            .status();
    }
}

/// Starts a task in one host process, SIGKILLs it, and runs a second host
/// process on the same file: what the second one printed, after it exited.
/// `url` is the HTTP server's (which outlives the hosts); without it the
/// hosts spawn their server over stdio.
fn kill_and_resume(which: &str, dir: &Path, url: Option<&str>) -> (String, Vec<String>) {
    let mut first = child("start", which, dir, url);
    let out = lines(&mut first);
    let server: Option<u32> = match url {
        Some(_) => None,
        None => Some(expect(&out, &mut first, "SERVER_PID ").parse().unwrap()),
    };
    let id = expect(&out, &mut first, "STARTED ");
    // SIGKILL: no destructor, no clean shutdown; only the file remains.
    first.kill().unwrap();
    first.wait().unwrap();
    // The killed host could not stop its server; a server that does not
    // exit when its stdin closes (server-everything) is left running.
    let _reap = server.map(Reap);
    let mut second = child("resume", which, dir, url);
    let out = lines(&mut second);
    let tickets = expect(&out, &mut second, "TICKETS ");
    assert_eq!(
        tickets, "1",
        "the restarted host did not find the task's ticket"
    );
    let mut outcome = Vec::new();
    let end = Instant::now() + STEP;
    loop {
        match out.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(line)
                if line.starts_with("RESULT ")
                    || line.starts_with("ERROR ")
                    || line.starts_with("LEFT ") =>
            {
                let done = line.starts_with("LEFT ");
                outcome.push(line);
                if done {
                    break;
                }
            }
            Ok(_) => {}
            Err(e) => {
                let _ = second.kill();
                panic!("the restarted host hung on the task: {e:?} after {outcome:?}");
            }
        }
    }
    assert!(second.wait().unwrap().success());
    (id, outcome)
}

/// A host killed while a task runs, started again, gets the task's result
/// from a server that keeps its tasks, and forgets the ticket after.
#[test]
fn a_killed_host_started_again_gets_the_result_of_its_task() {
    if test_support::python().is_none() {
        return;
    }
    let dir = scratch("durable");
    let (_, outcome) = kill_and_resume("durable", &dir, None);
    assert_eq!(
        outcome,
        ["RESULT report on durable", "LEFT 0"],
        "{outcome:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The same against a server nobody here wrote: a host killed while its
/// task runs on FastMCP (Streamable HTTP, the tasks extension), started
/// again on the same file, gets the result from the server that stayed up,
/// and forgets the ticket after.
#[test]
fn a_killed_host_started_again_gets_the_result_of_its_fastmcp_task() {
    let Some(peer) = test_support::fastmcp_server() else {
        return;
    };
    let dir = scratch("fastmcp");
    let port = test_support::free_port();
    let mut cmd = peer.arg("http").arg(port.to_string()).to_std();
    cmd.stderr(Stdio::null());
    let _server = test_support::listening_blocking(cmd, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let t0 = Instant::now();
    let (_, outcome) = kill_and_resume("fastmcp", &dir, Some(&url));
    assert_eq!(
        outcome,
        ["RESULT report on durable", "LEFT 0"],
        "{outcome:?}"
    );
    // The task was still running when the first host was killed: the
    // result came from the server, after the kill (the task takes 6 s).
    assert!(t0.elapsed() >= Duration::from_secs(5), "{:?}", t0.elapsed());
    let _ = std::fs::remove_dir_all(dir);
}

/// server-everything (stdio) keeps its tasks in the killed host's server
/// process: the new host's server does not know the task, which is a typed
/// outcome at once, and the ticket is forgotten.
#[test]
fn a_task_of_server_everything_lost_with_its_process_is_a_typed_outcome() {
    if test_support::everything().is_none() {
        return;
    }
    let dir = scratch("everything");
    let t0 = Instant::now();
    let (id, outcome) = kill_and_resume("everything", &dir, None);
    assert_eq!(outcome.len(), 2, "{outcome:?}");
    assert!(
        outcome[0].starts_with("ERROR Tool(Fatal {")
            && outcome[0].contains("source: Ticket(Unknown {")
            && outcome[0].contains(&id),
        "{outcome:?}"
    );
    assert_eq!(outcome[1], "LEFT 0");
    // Not a wait for the task's ttl (300 s) or deadline.
    assert!(t0.elapsed() < 2 * STEP, "{:?}", t0.elapsed());
    let _ = std::fs::remove_dir_all(dir);
    // The types the outcome names, so a rename breaks this test's build.
    let _: fn(TicketError) -> HostTaskError = |e| {
        HostTaskError::Tool(ToolError::Fatal {
            tool: String::new(),
            source: ClientError::Ticket(e),
        })
    };
}
