//! [`StdioTransport`]: a server process spoken to over its stdin and stdout.

use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use mcp_proto::Message;
use mcp_proto::error::chain;
use mcp_proto::transport::{Transport, TransportError, TransportErrorKind};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{Notify, oneshot};
use tokio::time::{Instant, Sleep, sleep};

use crate::command::{ServerCommand, SpawnError, StderrMode};
use crate::line::LineTransport;
use crate::stderr::{self, Tail};
use crate::sys::Group;

/// After stdout ends, how long to wait for the exit status before reporting
/// a server that closed stdout but keeps running.
const EXIT_AFTER_EOF_WAIT: Duration = Duration::from_secs(2);

/// After the server exits while something it started still holds stdout
/// open, how long to keep reading before killing the group.
const STDOUT_AFTER_EXIT_WAIT: Duration = Duration::from_secs(1);

/// After the server exits, how long to wait for the rest of its stderr (for
/// the exit error) when something it started still holds stderr open.
const STDERR_AFTER_EXIT_WAIT: Duration = Duration::from_millis(200);

/// After `SIGKILL`, how long close waits for the exit before giving up.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Asks the task that owns the [`Child`] to kill it (the portable fallback
/// when there is no process group to signal).
#[derive(Debug, Clone, Default)]
pub(crate) struct KillSwitch(Arc<Notify>);

impl KillSwitch {
    pub(crate) fn kill(&self) {
        self.0.notify_one();
    }
}

/// How the server ended.
#[derive(Debug, Clone, Copy)]
enum Exit {
    Status(ExitStatus),
    /// Waiting for the child failed; it is gone, status unknown.
    Unknown,
}

/// A write to the server's stdin failed because the server closed it (it
/// exited, most likely): the io error, and how long to wait for the exit.
struct WriteFailure {
    error: io::Error,
    deadline: Pin<Box<Sleep>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseStage {
    Open,
    /// Stdin is being flushed and closed; waiting for a voluntary exit.
    Stdin,
    /// `SIGTERM` sent to the group.
    Term,
    /// `SIGKILL` sent to the group.
    Kill,
    Done,
}

/// The server that sent a message no longer runs: the terminal error of a
/// [`StdioTransport`] whose server exited with a failure status or was
/// killed, carried as the [`cause`](TransportError::cause) of a
/// [`TransportErrorKind::Closed`] error.
///
/// Its `Display` reads `server exited with status 1: fatal: config missing`:
/// the status, then the last lines of stderr (joined by ` | `) when stderr
/// was captured.
#[derive(Debug, Clone)]
pub struct ServerExited {
    program: String,
    status: Option<ExitStatus>,
    stderr_tail: Vec<String>,
}

impl ServerExited {
    /// The program that was started.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The exit status, if it could be read.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// The last lines the server wrote to stderr (empty with
    /// [`Stderr::inherit`](crate::Stderr::inherit)).
    pub fn stderr_tail(&self) -> &[String] {
        &self.stderr_tail
    }
}

impl fmt::Display for ServerExited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(s) => match s.code() {
                Some(code) => write!(f, "server exited with status {code}")?,
                None => match signal_of(s) {
                    Some(sig) => write!(f, "server was killed by signal {sig}")?,
                    None => write!(f, "server exited abnormally ({s})")?,
                },
            },
            None => f.write_str("server exited (status unknown)")?,
        }
        let mut lines = self.stderr_tail.iter().filter(|l| !l.trim().is_empty());
        if let Some(first) = lines.next() {
            write!(f, ": {}", first.trim_end())?;
            for l in lines {
                write!(f, " | {}", l.trim_end())?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ServerExited {}

#[cfg(all(test, unix))]
impl ServerExited {
    /// An exit with `code` after writing `stderr` lines.
    pub(crate) fn for_test(code: i32, stderr: &[&str]) -> Self {
        use std::os::unix::process::ExitStatusExt;
        ServerExited {
            program: "srv".into(),
            status: Some(ExitStatus::from_raw(code << 8)),
            stderr_tail: stderr.iter().map(|l| (*l).to_owned()).collect(),
        }
    }
}

#[cfg(unix)]
fn signal_of(s: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&s)
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

/// An MCP server running as a child process, spoken to with
/// newline-delimited JSON-RPC over its stdin and stdout.
///
/// Create it with [`spawn`](Self::spawn); use it through
/// [`Transport`] (or `TransportExt`'s `send`/`recv`/`close`). See the
/// [crate docs](crate) for the lifecycle.
pub struct StdioTransport {
    io: LineTransport<ChildStdout, ChildStdin>,
    program: String,
    pid: Option<u32>,
    group: Group,
    exit_rx: Option<oneshot::Receiver<io::Result<ExitStatus>>>,
    exit: Option<Exit>,
    tail: Tail,

    /// Stdout ended (or failed): waiting for the exit status, bounded.
    awaiting_exit: Option<Pin<Box<Sleep>>>,
    /// The server exited but stdout is still open: bounded drain.
    stdout_after_exit: Option<Pin<Box<Sleep>>>,
    recv_done: bool,
    /// Writing to stdin failed because the server closed it: waiting,
    /// bounded, for the exit status to report instead of the raw io error.
    write_failed: Option<WriteFailure>,
    /// A terminal error was returned (by `poll_recv` or `poll_flush`); it is
    /// not reported a second time.
    terminal_reported: bool,

    close: CloseStage,
    close_deadline: Option<Pin<Box<Sleep>>>,
    stdin_grace: Duration,
    term_grace: Duration,
    /// The group was killed after the server's exit; nothing left to do on drop.
    swept: bool,
    /// The sandbox's proxy and private folder, kept while the server runs.
    #[cfg(feature = "sandbox")]
    _sandbox: Option<mcp_sandbox::Running>,
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioTransport")
            .field("program", &self.program)
            .field("pid", &self.pid)
            .field("exit", &self.exit)
            .field("close", &self.close)
            .field("io", &self.io)
            .finish_non_exhaustive()
    }
}

impl StdioTransport {
    /// Starts the server.
    ///
    /// Must be called within a Tokio runtime (with IO and time enabled): the
    /// transport runs two small tasks, one waiting for the child's exit and
    /// one draining its stderr.
    ///
    /// The child is the leader of a new process group (POSIX), has piped
    /// stdin/stdout, and stderr as [`ServerCommand::stderr`] says.
    pub fn spawn(cmd: ServerCommand) -> Result<Self, SpawnError> {
        let program = cmd.program_name();
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return Err(SpawnError::NoRuntime { program });
        };
        if let Some(dir) = &cmd.cwd
            && !dir.is_dir()
        {
            return Err(SpawnError::WorkingDirectory {
                program,
                dir: dir.clone(),
            });
        }

        #[cfg(feature = "sandbox")]
        let (mut c, sandbox) = match &cmd.sandbox {
            Some(s) => {
                let confined =
                    s.prepare(&cmd.program, &cmd.args)
                        .map_err(|reason| SpawnError::Sandbox {
                            program: program.clone(),
                            reason,
                        })?;
                let mut c = tokio::process::Command::new(&confined.program);
                c.args(&confined.args);
                (c, Some(confined.running))
            }
            None => {
                let mut c = tokio::process::Command::new(&cmd.program);
                c.args(&cmd.args);
                (c, None)
            }
        };
        #[cfg(not(feature = "sandbox"))]
        let mut c = {
            let mut c = tokio::process::Command::new(&cmd.program);
            c.args(&cmd.args);
            c
        };
        cmd.configure(&mut c);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match cmd.stderr.0 {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard | StderrMode::Forward(_) => Stdio::piped(),
            })
            // Backstop if the reaper task is dropped with the runtime.
            .kill_on_drop(true);
        Group::configure(&mut c);

        let mut child = c
            .spawn()
            .map_err(|e| SpawnError::from_io(program.clone(), e))?;
        let pid = child.id();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.start_kill();
            return Err(SpawnError::Io {
                program,
                source: io::Error::other("the child's stdio pipes were not created"),
            });
        };

        let tail = Tail::default();
        let stderr_done = child.stderr.take().map(|err| {
            let (forward, callback) = match &cmd.stderr.0 {
                StderrMode::Forward(cb) => (true, cb.clone()),
                _ => (false, None),
            };
            let (done_tx, done_rx) = oneshot::channel();
            rt.spawn(stderr::drain(
                err,
                program.clone(),
                forward,
                callback,
                tail.clone(),
                done_tx,
            ));
            done_rx
        });

        let killer = KillSwitch::default();
        let (exit_tx, exit_rx) = oneshot::channel();
        rt.spawn(reap(child, killer.clone(), stderr_done, exit_tx));
        tracing::debug!(server = %program, ?pid, "spawned MCP server");

        Ok(StdioTransport {
            io: LineTransport::new(stdout, stdin)
                .with_max_message_size(cmd.max_message_size)
                .with_write_buffer_limit(cmd.write_buffer_limit),
            program,
            pid,
            group: Group::new(pid, killer),
            exit_rx: Some(exit_rx),
            exit: None,
            tail,
            awaiting_exit: None,
            stdout_after_exit: None,
            recv_done: false,
            write_failed: None,
            terminal_reported: false,
            close: CloseStage::Open,
            close_deadline: None,
            stdin_grace: cmd.stdin_grace,
            term_grace: cmd.term_grace,
            swept: false,
            #[cfg(feature = "sandbox")]
            _sandbox: sandbox,
        })
    }

    /// The server's process id (also its process group id on POSIX).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The server's exit status, if it has exited (checked without waiting).
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none()
            && let Some(rx) = self.exit_rx.as_mut()
        {
            match rx.try_recv() {
                Ok(res) => self.set_exit(Ok(res)),
                Err(oneshot::error::TryRecvError::Empty) => {}
                Err(oneshot::error::TryRecvError::Closed) => self.set_exit(Err(())),
            }
        }
        match self.exit {
            Some(Exit::Status(s)) => Some(s),
            _ => None,
        }
    }

    /// How many non-JSON lines the server printed on stdout (skipped).
    pub fn skipped_lines(&self) -> u64 {
        self.io.skipped_lines()
    }

    /// The last lines the server wrote to stderr (none with
    /// [`Stderr::inherit`](crate::Stderr::inherit)).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    fn set_exit(&mut self, res: Result<io::Result<ExitStatus>, ()>) {
        self.exit_rx = None;
        self.exit = Some(match res {
            Ok(Ok(s)) => Exit::Status(s),
            _ => Exit::Unknown,
        });
    }

    fn poll_exit(&mut self, cx: &mut Context<'_>) -> Poll<Exit> {
        if let Some(exit) = self.exit {
            return Poll::Ready(exit);
        }
        let Some(rx) = self.exit_rx.as_mut() else {
            self.exit = Some(Exit::Unknown);
            return Poll::Ready(Exit::Unknown);
        };
        match Pin::new(rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(res) => {
                self.set_exit(res.map_err(|_| ()));
                Poll::Ready(self.exit.unwrap_or(Exit::Unknown))
            }
        }
    }

    /// The terminal error for an exit, or `None` for a clean (zero) exit.
    fn exit_error(&self, exit: Exit) -> Option<TransportError> {
        let status = match exit {
            Exit::Status(s) if s.success() => return None,
            Exit::Status(s) => Some(s),
            Exit::Unknown => None,
        };
        let err = ServerExited {
            program: self.program.clone(),
            status,
            stderr_tail: self.tail.lines(),
        };
        Some(TransportError::new(TransportErrorKind::Closed, err))
    }

    /// Kills whatever is left in the group once the server itself is gone.
    fn sweep(&mut self) {
        if !self.swept {
            self.group.kill();
            self.swept = true;
        }
    }

    fn poll_recv_inner(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        loop {
            if self.recv_done {
                return Poll::Ready(None);
            }
            if let Some(deadline) = self.awaiting_exit.as_mut() {
                let timed_out = deadline.as_mut().poll(cx).is_ready();
                if let Poll::Ready(exit) = self.poll_exit(cx) {
                    self.recv_done = true;
                    self.awaiting_exit = None;
                    self.sweep();
                    let err = self.exit_error(exit);
                    self.terminal_reported |= err.is_some();
                    return Poll::Ready(err.map(Err));
                }
                if timed_out {
                    self.recv_done = true;
                    self.awaiting_exit = None;
                    self.terminal_reported = true;
                    return Poll::Ready(Some(Err(TransportError::new(
                        TransportErrorKind::Closed,
                        format!(
                            "server `{}` closed its stdout but is still running; close the transport to stop it",
                            self.program
                        ),
                    ))));
                }
                return Poll::Pending;
            }

            match self.io.read.poll_recv(cx) {
                Poll::Ready(Some(Ok(m))) => return Poll::Ready(Some(Ok(m))),
                Poll::Ready(Some(Err(e))) if !e.is_terminal() => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Err(e))) => {
                    tracing::debug!(server = %self.program, error = %chain(&e), "reading the server's stdout failed");
                    self.awaiting_exit = Some(Box::pin(sleep(EXIT_AFTER_EOF_WAIT)));
                }
                Poll::Ready(None) => {
                    self.awaiting_exit = Some(Box::pin(sleep(EXIT_AFTER_EOF_WAIT)));
                }
                Poll::Pending => {
                    // The server may be gone while a process it started keeps
                    // stdout open: read what is left for a moment, then kill
                    // the group so stdout ends.
                    if self.poll_exit(cx).is_pending() {
                        return Poll::Pending;
                    }
                    let drain = self
                        .stdout_after_exit
                        .get_or_insert_with(|| Box::pin(sleep(STDOUT_AFTER_EXIT_WAIT)));
                    if drain.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    self.sweep();
                    self.awaiting_exit = Some(Box::pin(sleep(Duration::ZERO)));
                }
            }
        }
    }

    /// Flushes stdin. A write that fails because the server closed its
    /// stdin (it exited) is reported as the exit, like the read side does:
    /// the raw `Broken pipe` would hide the status and stderr.
    fn poll_flush_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.write_failed.is_none() {
            match self.io.write.poll_flush(cx) {
                Poll::Ready(Err(e)) => {
                    let Some(error) = stdin_gone(&e) else {
                        return Poll::Ready(Err(e));
                    };
                    tracing::debug!(server = %self.program, error = %chain(&e), "writing to the server's stdin failed");
                    // Nothing more can be written; drop the pipe and whatever
                    // was queued, then wait for the exit status.
                    self.io.write.abort();
                    self.write_failed = Some(WriteFailure {
                        error,
                        deadline: Box::pin(sleep(EXIT_AFTER_EOF_WAIT)),
                    });
                }
                other => return other,
            }
        }
        let Some(failure) = self.write_failed.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        let timed_out = failure.deadline.as_mut().poll(cx).is_ready();
        let exit = match self.poll_exit(cx) {
            Poll::Ready(exit) => Some(exit),
            Poll::Pending if timed_out => None,
            Poll::Pending => return Poll::Pending,
        };
        let Some(WriteFailure { error, .. }) = self.write_failed.take() else {
            return Poll::Ready(Ok(()));
        };
        if exit.is_some() {
            self.sweep();
        }
        let err = match exit.and_then(|exit| self.exit_error(exit)) {
            // Told already by `poll_recv`: say so instead of repeating it.
            _ if self.terminal_reported => TransportError::new(
                TransportErrorKind::Closed,
                format!(
                    "cannot send: server `{}` has exited (its exit was reported by `poll_recv`): {error}",
                    self.program
                ),
            ),
            Some(exited) => exited,
            None if exit.is_some() => TransportError::new(
                TransportErrorKind::Closed,
                format!(
                    "server `{}` exited (status 0) without reading what was sent to it: {error}",
                    self.program
                ),
            ),
            None => TransportError::new(
                TransportErrorKind::Closed,
                format!(
                    "server `{}` closed its stdin but is still running ({error}); close the transport to stop it",
                    self.program
                ),
            ),
        };
        // Terminal: the following `poll_recv` returns `None`.
        self.terminal_reported = true;
        self.recv_done = true;
        Poll::Ready(Err(err))
    }

    fn poll_close_inner(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        loop {
            match self.close {
                CloseStage::Done => return Poll::Ready(Ok(())),
                CloseStage::Open => {
                    self.recv_done = true;
                    self.close = CloseStage::Stdin;
                    self.close_deadline = Some(Box::pin(sleep(self.stdin_grace)));
                    continue;
                }
                CloseStage::Stdin => {
                    if !self.io.write.is_closed()
                        && let Poll::Ready(Err(e)) = self.io.write.poll_close(cx)
                    {
                        // The server is not reading (or gone): just close the pipe.
                        tracing::debug!(server = %self.program, error = %chain(&e), "flushing before close failed");
                        self.io.write.abort();
                    }
                }
                CloseStage::Term | CloseStage::Kill => {}
            }
            // Keep stdout drained so a server blocked writing can exit.
            self.io.read.poll_drain(cx);
            let expired = self
                .close_deadline
                .as_mut()
                .is_none_or(|d| d.as_mut().poll(cx).is_ready());
            if let Poll::Ready(exit) = self.poll_exit(cx) {
                self.finish_close(exit);
                return Poll::Ready(Ok(()));
            }
            if !expired {
                return Poll::Pending;
            }
            let next = match self.close {
                CloseStage::Stdin => {
                    tracing::debug!(server = %self.program, "server did not exit after stdin was closed; sending SIGTERM");
                    self.io.write.abort();
                    self.group.terminate();
                    (CloseStage::Term, self.term_grace)
                }
                CloseStage::Term => {
                    tracing::debug!(server = %self.program, "server did not exit after SIGTERM; sending SIGKILL");
                    self.group.kill();
                    (CloseStage::Kill, KILL_WAIT)
                }
                _ => {
                    self.close = CloseStage::Done;
                    self.close_deadline = None;
                    return Poll::Ready(Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        format!(
                            "server `{}` (pid {:?}) did not exit even after SIGKILL",
                            self.program, self.pid
                        ),
                    )));
                }
            };
            self.close = next.0;
            if let Some(d) = self.close_deadline.as_mut() {
                d.as_mut().reset(Instant::now() + next.1);
            }
        }
    }

    fn finish_close(&mut self, exit: Exit) {
        self.close = CloseStage::Done;
        self.close_deadline = None;
        self.io.write.abort();
        // Anything still in the group is an orphan of the server.
        self.sweep();
        if let Exit::Status(s) = exit {
            tracing::debug!(server = %self.program, status = %s, "server stopped");
        }
    }
}

impl Transport for StdioTransport {
    fn endpoint(&self) -> mcp_proto::transport::Endpoint {
        mcp_proto::transport::Endpoint::pipe()
    }

    fn poll_recv(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Message, TransportError>>> {
        self.get_mut().poll_recv_inner(cx)
    }

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let this = self.get_mut();
        if this.close != CloseStage::Open {
            return Poll::Ready(Err(closed_error()));
        }
        if this.write_failed.is_some() || this.io.write.is_full() {
            ready!(this.poll_flush_inner(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, msg: Message) -> Result<(), TransportError> {
        let this = self.get_mut();
        if this.close != CloseStage::Open {
            return Err(closed_error());
        }
        this.io.queue(msg)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().poll_flush_inner(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        self.get_mut().poll_close_inner(cx)
    }
}

/// The io error of a write that failed because the reading end of the pipe
/// is closed, or `None` for any other error.
fn stdin_gone(e: &TransportError) -> Option<io::Error> {
    let io = e.cause()?.downcast_ref::<io::Error>()?;
    match io.kind() {
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::WriteZero => {
            Some(io::Error::new(io.kind(), io.to_string()))
        }
        _ => None,
    }
}

fn closed_error() -> TransportError {
    TransportError::new(
        TransportErrorKind::Closed,
        "cannot send: the stdio transport is closing or closed",
    )
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Not closed (or not finished closing): kill the whole group now.
        // The reaper task then reaps the child; nothing here blocks.
        if !self.swept {
            self.group.kill();
        }
    }
}

/// Owns the child: waits for its exit (killing it on request), waits briefly
/// for stderr to be fully read, then reports the status.
async fn reap(
    mut child: Child,
    killer: KillSwitch,
    stderr_done: Option<oneshot::Receiver<()>>,
    report: oneshot::Sender<io::Result<ExitStatus>>,
) {
    enum Event {
        Exited(io::Result<ExitStatus>),
        KillRequested,
    }
    let status = loop {
        let event = {
            let mut wait = pin!(child.wait());
            let mut kill = pin!(killer.0.notified());
            poll_fn(|cx| {
                if let Poll::Ready(r) = wait.as_mut().poll(cx) {
                    return Poll::Ready(Event::Exited(r));
                }
                if kill.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Event::KillRequested);
                }
                Poll::Pending
            })
            .await
        };
        match event {
            Event::Exited(r) => break r,
            Event::KillRequested => {
                let _ = child.start_kill();
            }
        }
    };
    if let Some(done) = stderr_done {
        let _ = tokio::time::timeout(STDERR_AFTER_EXIT_WAIT, done).await;
    }
    let _ = report.send(status);
}
