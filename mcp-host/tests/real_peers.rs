//! The host against real servers nobody here wrote, over stdio:
//! `@modelcontextprotocol/server-everything` (legacy era) and the Python SDK
//! test server (`peers/python_server.py`, 2026-07-28), plus servers that are
//! broken on purpose (a command that exits at once with an error, one that
//! does not exist, one that never answers, one that crashes after N calls).
//!
//! The peers are installed by `cargo xtask peers` into `.peers/`. Without
//! them these tests skip with a message, unless `MCP_REQUIRE_PEERS=1`.
//!
//! No test depends on absolute times: waits are on status changes (with
//! generous limits), and the one timing claim (servers start concurrently)
//! compares the host's start against the sum of the same servers' solo
//! starts, with each server's start padded by a sleep that overlaps when
//! concurrent and adds up when not.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_host::{
    Backoff, CacheTarget, FileStore, Host, Launcher, ResponseCache, ServerReport, ServerSpec,
    ServerStatus,
};
use mcp_proto::schema::Prompt;
use mcp_tools::{Tool, ToolError};
use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
use serde_json::json;
use test_support::PeerCommand;

/// Generous: the machine is shared and busy.
const WAIT: Duration = Duration::from_secs(90);

type Pids = Arc<Mutex<Vec<u32>>>;

/// A real peer as a stdio server command.
fn stdio(peer: PeerCommand) -> ServerCommand {
    ServerCommand::new(peer.program).args(peer.args)
}

fn everything() -> Option<ServerCommand> {
    Some(stdio(test_support::everything()?.arg("stdio")))
}

fn python_server() -> Option<ServerCommand> {
    Some(stdio(test_support::python_server()?.arg("stdio")))
}

/// `cmd` started after `delay` (a shell sleeps first, then becomes the server).
fn delayed(cmd: &ServerCommand, delay: Duration) -> ServerCommand {
    let mut line = format!("sleep {}; exec", delay.as_secs_f64());
    for part in std::iter::once(cmd.get_program()).chain(cmd.get_args()) {
        line.push_str(&format!(" '{}'", part.to_string_lossy()));
    }
    ServerCommand::new("sh").arg("-c").arg(line)
}

/// Spawns `cmd` on every launch and connects; records each process id.
fn launcher(cmd: ServerCommand, pids: &Pids) -> Launcher {
    let pids = pids.clone();
    let cmd = cmd.stderr(Stderr::discard());
    Launcher::new(move || {
        let cmd = cmd.clone();
        let pids = pids.clone();
        async move {
            let transport = StdioTransport::spawn(cmd)?;
            if let Some(pid) = transport.pid() {
                pids.lock().unwrap().push(pid);
            }
            // A Python server can take more than the default 5 s probe to
            // start on a busy machine; a late probe answer would then meet
            // the legacy fallback.
            Ok(Client::builder("mcp-host-tests", "0.1.0")
                .probe_timeout(WAIT)
                .connect(transport)
                .await?)
        }
    })
}

/// Quick retries, so tests do not wait out the default backoff.
fn quick() -> Backoff {
    Backoff::new()
        .initial(Duration::from_millis(200))
        .max(Duration::from_secs(2))
}

/// Waits until `name`'s status satisfies `pred`; returns it.
async fn wait_for(
    host: &Host,
    name: &str,
    what: &str,
    pred: impl Fn(&ServerStatus) -> bool,
) -> ServerStatus {
    let mut rx = host.watch();
    let found = tokio::time::timeout(
        WAIT,
        rx.wait_for(|all: &Vec<ServerReport>| {
            all.iter().any(|r| r.name == name && pred(&r.status))
        }),
    )
    .await;
    match found {
        Ok(Ok(all)) => all
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.status.clone())
            .unwrap(),
        _ => panic!(
            "{name} did not become {what} within {WAIT:?}; status: {:?}",
            host.status()
        ),
    }
}

fn is_alive(pid: u32) -> bool {
    // Signal 0 checks existence; a reaped process is gone.
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Every process in `pids` exits within the wait (no orphans).
async fn assert_all_gone(pids: &Pids) {
    let pids = pids.lock().unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    for pid in pids {
        while is_alive(pid) {
            assert!(Instant::now() < deadline, "process {pid} outlived close()");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A host of the servers `specs`, its start time measured.
async fn timed_start(specs: Vec<ServerSpec>) -> (Host, Duration) {
    let mut b = Host::builder();
    for s in specs {
        b = b.server(s);
    }
    let t0 = Instant::now();
    let host = b.start().await.unwrap();
    (host, t0.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_servers_start_in_the_time_of_the_slowest_and_the_broken_one_is_retried() {
    let (Some(ev), Some(py)) = (everything(), python_server()) else {
        return;
    };
    let pids = Pids::default();
    // Each healthy server's start is padded: overlapping pads when the
    // servers start together, adding pads when one after the other.
    let pad = Duration::from_secs(3);
    let healthy = [
        ("ev", delayed(&ev, pad)),
        ("py", delayed(&py, pad)),
        ("ev2", delayed(&ev, pad)),
    ];
    let spec = |name: &str, cmd: &ServerCommand| {
        ServerSpec::new(name, launcher(cmd.clone(), &pids))
            .prefix(format!("{name}_"))
            .backoff(quick())
    };

    // The sum: each healthy server started alone.
    let mut sum = Duration::ZERO;
    for (name, cmd) in &healthy {
        let (host, took) = timed_start(vec![spec(name, cmd)]).await;
        assert!(
            host.server_status(name).unwrap().is_ready(),
            "{:?}",
            host.status()
        );
        host.close().await;
        sum += took;
    }

    // All four at once, one of them broken: exits at once with an error.
    let broken = ServerCommand::new("sh")
        .arg("-c")
        .arg("echo 'fatal: config file ~/.broken.toml missing' >&2; exit 1");
    let mut specs: Vec<ServerSpec> = healthy.iter().map(|(n, c)| spec(n, c)).collect();
    specs.push(spec("broken", &broken));
    let (host, together) = timed_start(specs).await;
    eprintln!("solo starts summed: {sum:?}; all four together: {together:?}");
    for (name, _) in &healthy {
        assert!(
            host.server_status(name).unwrap().is_ready(),
            "{:?}",
            host.status()
        );
    }
    assert!(
        together + pad < sum,
        "four servers took {together:?} to start together, the healthy ones {sum:?} one by one: not concurrent"
    );

    // The broken one is reported with its reason, and retried.
    let ServerStatus::Failed { why, .. } = host.server_status("broken").unwrap() else {
        panic!("{:?}", host.status())
    };
    assert!(
        why.contains("status 1") && why.contains("fatal: config file ~/.broken.toml missing"),
        "{why}"
    );
    let retried = wait_for(
        &host,
        "broken",
        "retried",
        |s| matches!(s, ServerStatus::Failed { attempts, .. } if *attempts >= 2),
    )
    .await;
    assert!(
        retried.to_string().starts_with("failed to start ("),
        "{retried}"
    );

    // Meanwhile the others serve calls.
    let out = host
        .call("ev_echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(out.text.contains("hi"), "{}", out.text);
    let out = host
        .call("py_echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(out.text, "hello");
    assert!(host.call("ev2_echo", json!({"message": "x"})).await.is_ok());
    let names: Vec<String> = host.tools().iter().map(|t| t.name().to_owned()).collect();
    assert!(names.iter().all(|n| !n.starts_with("broken_")), "{names:?}");

    host.close().await;
    assert!(
        host.status()
            .iter()
            .all(|r| r.status == ServerStatus::Stopped),
        "{:?}",
        host.status()
    );
    assert_all_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stdio_server_is_restarted_and_its_tools_come_back() {
    let Some(py) = python_server() else { return };
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("py", launcher(py, &pids)).backoff(quick()))
        .start()
        .await
        .unwrap();
    let ServerStatus::Ready {
        since: first_since,
        tools,
        ..
    } = host.server_status("py").unwrap()
    else {
        panic!("{:?}", host.status())
    };
    assert!(tools >= 4, "{tools}");
    let found = |hits: Vec<mcp_tools::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.name).collect()
    };
    assert_eq!(
        found(host.toolbox().search("echo a text back", 3).await)[0],
        "echo"
    );
    assert_eq!(
        host.call("echo", json!({"text": "one"}))
            .await
            .unwrap()
            .text,
        "one"
    );
    let first_pid = *pids.lock().unwrap().last().unwrap();

    // Kill it behind the host's back.
    let killed = std::process::Command::new("kill")
        .args(["-9", &first_pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());

    // Calls in between fail fast, with a message the model can act on.
    let mut failures = 0;
    let mut came_back = false;
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        let t0 = Instant::now();
        match host.call("echo", json!({"text": "two"})).await {
            Ok(out) => {
                assert_eq!(out.text, "two");
                came_back = true;
                break;
            }
            Err(e) => {
                let took = t0.elapsed();
                assert!(matches!(e, ToolError::Unavailable { .. }), "{e:?}");
                assert!(e.is_model_correctable());
                let msg = e.message_for_model();
                assert!(
                    msg.contains("tool `echo` is unavailable right now: its server `py`"),
                    "{msg}"
                );
                assert!(
                    took < Duration::from_secs(5),
                    "a failed call took {took:?}: not fast"
                );
                if failures == 0 {
                    eprintln!("first failed call ({took:?}): {msg}");
                }
                failures += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        came_back,
        "the server did not come back; status {:?}",
        host.status()
    );
    assert!(failures > 0, "no call saw the server down");

    // Without the host doing anything: a new process, tools listed again.
    let ServerStatus::Ready {
        since,
        tools: again,
        ..
    } = host.server_status("py").unwrap()
    else {
        panic!("{:?}", host.status())
    };
    assert!(since > first_since);
    assert_eq!(again, tools);
    let second_pid = *pids.lock().unwrap().last().unwrap();
    assert_ne!(second_pid, first_pid);
    assert!(host.toolbox().get("echo").is_some());
    // The restarted server's tools are searched (a new toolbox, a new index).
    assert_eq!(
        found(host.toolbox().search("echo a text back", 3).await)[0],
        "echo"
    );

    host.close().await;
    assert_all_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_replaces_a_running_server_with_a_new_process() {
    let Some(py) = python_server() else { return };
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("py", launcher(py, &pids)))
        .start()
        .await
        .unwrap();
    let ServerStatus::Ready {
        since: first_since, ..
    } = host.server_status("py").unwrap()
    else {
        panic!("{:?}", host.status())
    };
    let first_pid = *pids.lock().unwrap().last().unwrap();

    host.restart("py").unwrap();
    let again = wait_for(
        &host,
        "py",
        "ready again",
        |s| matches!(s, ServerStatus::Ready { since, .. } if *since > first_since),
    )
    .await;
    assert!(
        matches!(again, ServerStatus::Ready { tools, .. } if tools >= 4),
        "{again:?}"
    );
    let second_pid = *pids.lock().unwrap().last().unwrap();
    assert_ne!(second_pid, first_pid);
    let deadline = Instant::now() + Duration::from_secs(20);
    while is_alive(first_pid) {
        assert!(
            Instant::now() < deadline,
            "the old process {first_pid} outlived the restart"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        host.call("echo", json!({"text": "again"}))
            .await
            .unwrap()
            .text,
        "again"
    );
    assert!(matches!(
        host.restart("nope"),
        Err(mcp_host::HostError::UnknownServer(name)) if name == "nope"
    ));

    host.close().await;
    assert_all_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_at_run_time_serves_and_a_removed_one_is_shut_down() {
    let (Some(ev), Some(py)) = (everything(), python_server()) else {
        return;
    };
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("ev", launcher(ev, &pids)).prefix("ev_"))
        .start()
        .await
        .unwrap();
    assert!(host.toolbox().get("ev_echo").is_some());
    let ev_pid = *pids.lock().unwrap().last().unwrap();

    // Added: ready when `add` returns, its tools beside the first server's.
    host.add(ServerSpec::new("py", launcher(py, &pids)).prefix("py_"))
        .await
        .unwrap();
    assert!(
        host.server_status("py").unwrap().is_ready(),
        "{:?}",
        host.status()
    );
    assert_eq!(
        host.call("py_echo", json!({"text": "added"}))
            .await
            .unwrap()
            .text,
        "added"
    );
    let py_pid = *pids.lock().unwrap().last().unwrap();
    assert_ne!(py_pid, ev_pid);

    // Removed: its process has exited when `remove` returns, its tools and
    // its report are gone, and the other server serves on.
    host.remove("py").await.unwrap();
    assert!(!is_alive(py_pid), "process {py_pid} outlived remove()");
    assert!(host.server_status("py").is_none(), "{:?}", host.status());
    let err = host
        .call("py_echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::NotFound { .. }), "{err:?}");
    assert!(
        host.call("ev_echo", json!({"message": "still"}))
            .await
            .unwrap()
            .text
            .contains("still")
    );

    host.close().await;
    assert_all_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_after_n_calls_is_reported_with_its_stderr_and_restarted() {
    let Some(py) = python_server() else { return };
    let pids = Pids::default();
    let cmd = py.env("MCP_TEST_EXIT_AFTER_CALLS", "2");
    let host = Host::builder()
        .server(ServerSpec::new("py", launcher(cmd, &pids)).backoff(quick()))
        .start()
        .await
        .unwrap();
    let ServerStatus::Ready { since: first, .. } = host.server_status("py").unwrap() else {
        panic!("{:?}", host.status())
    };
    // Every status the server goes through.
    let mut rx = host.watch();
    let seen = tokio::spawn(async move {
        let mut seen = Vec::new();
        while rx.changed().await.is_ok() {
            let status = rx.borrow_and_update()[0].status.clone();
            let back = matches!(status, ServerStatus::Ready { since, .. } if since > first);
            seen.push(status);
            if back {
                break;
            }
        }
        seen
    });
    assert!(host.call("echo", json!({"text": "1"})).await.is_ok());
    let err = host.call("echo", json!({"text": "2"})).await.unwrap_err();
    assert!(matches!(err, ToolError::Unavailable { .. }), "{err:?}");
    let msg = err.message_for_model();
    assert!(msg.contains("went away during the call"), "{msg}");
    let seen = tokio::time::timeout(WAIT, seen).await.unwrap().unwrap();
    let why = seen
        .iter()
        .find_map(|s| match s {
            ServerStatus::Restarting { why, .. } => Some(why.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("never restarting: {seen:?}"));
    assert!(
        why.contains("status 3") && why.contains("crashing on purpose after 2 calls"),
        "{why}"
    );
    assert!(host.call("echo", json!({"text": "3"})).await.is_ok());
    host.close().await;
    assert_all_gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_silent_servers_fail_with_reasons_disabled_ones_wait_and_close_kills_all() {
    let Some(py) = python_server() else { return };
    let pids = Pids::default();
    let missing = ServerCommand::new("mcp-host-test-no-such-server");
    let silent = ServerCommand::new("sleep").arg("1000");
    let host = Host::builder()
        .server(ServerSpec::new("missing", launcher(missing, &pids)).backoff(quick()))
        .server(
            ServerSpec::new("silent", launcher(silent, &pids))
                .startup_timeout(Duration::from_secs(1))
                .backoff(quick()),
        )
        .server(
            ServerSpec::new("py", launcher(py, &pids))
                .enabled(false)
                .include(["echo", "add", "fail"])
                .exclude(["fail"]),
        )
        .start()
        .await
        .unwrap();
    let status = host.status();
    let ServerStatus::Failed { why, .. } = &status[0].status else {
        panic!("{status:?}")
    };
    assert!(why.contains("mcp-host-test-no-such-server"), "{why}");
    let ServerStatus::Failed { why, .. } = &status[1].status else {
        panic!("{status:?}")
    };
    assert!(why.contains("did not start within 1s"), "{why}");
    assert_eq!(status[2].status, ServerStatus::Disabled);
    assert!(host.tools().is_empty());

    // Enabled at run time: started, with the include/exclude applied.
    host.set_enabled("py", true).unwrap();
    let ready = wait_for(&host, "py", "ready", ServerStatus::is_ready).await;
    assert!(
        matches!(ready, ServerStatus::Ready { tools: 2, .. }),
        "{ready:?}"
    );
    let mut names: Vec<String> = host.tools().iter().map(|t| t.name().to_owned()).collect();
    names.sort();
    assert_eq!(names, ["add", "echo"]);

    // Disabled again: the process is shut down, its tools fail fast.
    host.set_enabled("py", false).unwrap();
    wait_for(&host, "py", "disabled", |s| *s == ServerStatus::Disabled).await;
    let err = host.call("echo", json!({"text": "x"})).await.unwrap_err();
    assert!(
        err.message_for_model()
            .contains("its server `py` is disabled"),
        "{err}"
    );
    assert!(host.set_enabled("nope", true).is_err());

    host.close().await;
    assert_all_gone(&pids).await;
}

fn count_lines(path: &Path, method: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == method)
        .count()
}

/// Starts a host of one Python server with a file cache, calls a tool,
/// closes; returns whether its tools came from the cache.
async fn start_once(py: &ServerCommand, cache_file: &Path) -> bool {
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("py", launcher(py.clone(), &pids)))
        .cache(ResponseCache::new(FileStore::open(cache_file)))
        .start()
        .await
        .unwrap();
    let ServerStatus::Ready {
        tools_from_cache,
        tools,
        ..
    } = host.server_status("py").unwrap()
    else {
        panic!("{:?}", host.status())
    };
    assert!(tools >= 4);
    assert_eq!(
        host.call("echo", json!({"text": "warm"}))
            .await
            .unwrap()
            .text,
        "warm"
    );
    // Other cacheable answers, through the host's cache and client.
    let (cache, client) = (host.cache().unwrap(), host.client("py").unwrap());
    let target = CacheTarget::new("py");
    for _ in 0..2 {
        let prompts: Vec<Prompt> = cache.list_all(&client, &target).await.unwrap();
        assert_eq!(prompts[0].name, "review");
        let read = cache
            .read_resource(&client, &target, "test://static/hello")
            .await
            .unwrap();
        assert_eq!(read.contents.len(), 1);
    }
    host.close().await;
    assert_all_gone(&pids).await;
    tools_from_cache
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_file_cache_sends_no_tools_list_to_a_server_whose_answer_is_fresh() {
    let Some(py) = python_server() else { return };
    let dir = std::env::temp_dir().join(format!("mcp-host-warm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("requests.log");
    let cache_file = dir.join("cache.json");

    // The server says its lists stay fresh for 10 minutes.
    let fresh = py
        .clone()
        .env("MCP_TEST_REQUEST_LOG", &log)
        .env("MCP_TEST_LIST_TTL_MS", "600000");
    assert!(!start_once(&fresh, &cache_file).await, "first start: cold");
    assert_eq!(count_lines(&log, "tools/list"), 1);
    assert!(start_once(&fresh, &cache_file).await, "second start: warm");
    assert_eq!(
        count_lines(&log, "tools/list"),
        1,
        "the warm start sent tools/list"
    );
    assert_eq!(
        count_lines(&log, "tools/call"),
        2,
        "both hosts served calls"
    );

    // Control: a server that gives no ttlMs is listed on every start.
    let log2 = dir.join("requests-no-ttl.log");
    let cache2 = dir.join("cache-no-ttl.json");
    let stale = py.env("MCP_TEST_REQUEST_LOG", &log2);
    assert!(!start_once(&stale, &cache2).await);
    assert!(!start_once(&stale, &cache2).await);
    assert_eq!(count_lines(&log2, "tools/list"), 2);
    assert_eq!(count_lines(&log2, "prompts/list"), 4);
    assert_eq!(count_lines(&log2, "resources/read"), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_lists_again_through_the_cache_and_the_toolbox_follows() {
    let script = test_support::workspace_dir().join("mcp-tools/tests/changing_server.py");
    let Some(changing) = test_support::python_running(script).map(stdio) else {
        return;
    };
    let pids = Pids::default();
    let cache = ResponseCache::memory();
    let host = Host::builder()
        .server(ServerSpec::new("ch", launcher(changing, &pids)))
        .cache(cache.clone())
        .start()
        .await
        .unwrap();
    assert!(host.toolbox().get("hello").is_none());
    let found = |hits: Vec<mcp_tools::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.name).collect()
    };
    assert!(!found(host.toolbox().search("say hello", 3).await).contains(&"hello".to_owned()));
    // The listen stream may not be open when the first `unlock` runs:
    // `unlock` is idempotent, ask until the change is seen.
    let deadline = Instant::now() + WAIT;
    while host.toolbox().get("hello").is_none() {
        assert!(
            Instant::now() < deadline,
            "the new tool never appeared: {:?}",
            host.status()
        );
        host.call("unlock", json!({})).await.unwrap();
        let mut rx = host.watch();
        let _ = tokio::time::timeout(Duration::from_secs(2), rx.changed()).await;
    }
    assert_eq!(
        host.call("hello", json!({})).await.unwrap().text,
        "hello from a new tool"
    );
    // The host's toolbox searches the new listing.
    assert_eq!(
        found(host.toolbox().search("say hello", 3).await)[0],
        "hello"
    );
    let ServerStatus::Ready {
        tools,
        tools_from_cache,
        ..
    } = host.server_status("ch").unwrap()
    else {
        panic!()
    };
    assert_eq!((tools, tools_from_cache), (2, false));
    host.close().await;
    assert_all_gone(&pids).await;
}

/// Collects the `mcp_tools::filter` warnings logged while `f`'s future runs
/// (on this thread: a current-thread runtime runs the host's tasks here).
fn filter_warnings<F: std::future::Future>(f: F) -> (F::Output, Vec<String>) {
    use std::fmt::Write as _;
    use tracing::field::{Field, Visit};
    use tracing::{Event, Metadata, span};

    struct Capture(Arc<Mutex<Vec<String>>>);
    struct Line(String);
    impl Visit for Line {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    impl tracing::Subscriber for Capture {
        fn enabled(&self, m: &Metadata<'_>) -> bool {
            m.target() == "mcp_tools::filter"
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, e: &Event<'_>) {
            let mut line = Line(String::new());
            e.record(&mut line);
            self.0.lock().unwrap().push(line.0);
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }
    let lines = Arc::new(Mutex::new(Vec::new()));
    let out = tracing::subscriber::with_default(Capture(lines.clone()), || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    });
    let lines = lines.lock().unwrap().clone();
    (out, lines)
}

/// A host's include or exclude pattern that matches none of the server's
/// tools is logged (with the hint for another dialect's syntax), as the
/// toolbox logs its own; patterns that match are not.
#[test]
fn a_filter_pattern_that_matches_no_tool_is_logged() {
    let Some(ev) = everything() else { return };
    let pids = Pids::default();
    let spec = ServerSpec::new("everything", launcher(ev, &pids))
        .include(["ech*", "nothing-like-this*"])
        .exclude(["t[0-9]*"]);
    let (tools, lines) = filter_warnings(async move {
        let host = Host::builder().server(spec).start().await.unwrap();
        let tools: Vec<String> = host.tools().iter().map(|t| t.name().to_owned()).collect();
        host.close().await;
        tools
    });
    assert!(tools.iter().any(|t| t.contains("echo")), "{tools:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("nothing-like-this*") && l.contains("include")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("t[0-9]*") && l.contains("exclude") && l.contains("hint")),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.contains("ech*")), "{lines:?}");
}

/// A tool the server runs only as a task (server-everything's
/// `simulate-research-query`, `taskSupport: required`), listed through the
/// host's response cache, is called as a task by the host: the call ends
/// with the research report, not the server's "requires task augmentation".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_required_tool_listed_through_the_cache_runs_as_a_task() {
    let Some(everything) = everything() else {
        return;
    };
    let pids = Pids::default();
    let host = Host::builder()
        .server(ServerSpec::new("everything", launcher(everything, &pids)))
        .cache(ResponseCache::memory())
        .start()
        .await
        .unwrap();
    let out = tokio::time::timeout(
        WAIT,
        host.call("simulate-research-query", json!({"topic": "tasks"})),
    )
    .await
    .expect("the task did not finish")
    .unwrap();
    assert!(out.text.contains("research report"), "{}", out.text);
    host.close().await;
    assert_all_gone(&pids).await;
}
