//! The MCP stdio transport: start a server as a child process and exchange
//! newline-delimited JSON-RPC with it over its stdin and stdout, with the
//! process handling done right by default.
//!
//! - [`StdioTransport`]: spawns a [`ServerCommand`] and implements
//!   [`Transport`](mcp_proto::transport::Transport).
//! - [`LineTransport`]: the same framing over any `AsyncRead` +
//!   `AsyncWrite` pair (TCP, Unix sockets, `tokio::io::duplex`), for third
//!   parties that have a byte stream.
//! - [`JsonLineCodec`]: the sans-IO line decoder/encoder underneath both.
//!
//! # What it is not
//!
//! Not a client: ids, pending requests and timeouts live in `mcp-client`.
//! No shell: [`ServerCommand::parse_shell_words`] splits a command line
//! into words but never runs `sh -c`.
//!
//! # Example
//!
//! ```no_run
//! use mcp_proto::jsonrpc::Request;
//! use mcp_proto::transport::TransportExt;
//! use mcp_transport_stdio::{ServerCommand, Stderr, StdioTransport};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let cmd = ServerCommand::parse_shell_words("npx -y @modelcontextprotocol/server-everything")?
//!     .env_clear_to_allowlist()
//!     .stderr(Stderr::forward_to(|line| eprintln!("[server] {line}")));
//! let mut server = StdioTransport::spawn(cmd)?;
//!
//! server.send(Request::new(1.into(), "ping", None).into()).await?;
//! match server.recv().await {
//!     Some(Ok(reply)) => println!("reply to {:?}", reply.id()),
//!     // e.g. "connection closed: server exited with status 1: fatal: config missing"
//!     Some(Err(e)) => eprintln!("{}", mcp_proto::error::chain(&e)),
//!     None => eprintln!("server exited cleanly"),
//! }
//! server.close().await?; // stdin EOF, then SIGTERM, then SIGKILL
//! # Ok(()) }
//! ```
//!
//! # Lifecycle
//!
//! - **Spawn.** The server gets piped stdin/stdout, the environment you chose
//!   (inherited by default, or [`env_clear_to_allowlist`](ServerCommand::env_clear_to_allowlist)),
//!   and runs as the leader of its own process group, so the processes a
//!   launcher like `npx` or `uvx` starts are signalled with it. A missing or
//!   non-executable program is a [`SpawnError`] naming it.
//! - **Stderr** is drained by a background task in every mode but
//!   [`Stderr::inherit`] (a server writing megabytes of logs never blocks),
//!   forwarded line by line to `tracing` and an optional callback, and its
//!   last [`STDERR_TAIL_LINES`] lines are kept.
//! - **The server exits on its own.** `poll_recv` yields the messages it
//!   wrote, then, if it exited with a non-zero status or a signal, one
//!   terminal [`TransportErrorKind::Closed`](mcp_proto::transport::TransportErrorKind::Closed)
//!   error whose cause is a [`ServerExited`] (`server exited with status 1:
//!   fatal: config missing`), then `None`. A zero exit is just `None`.
//!   If a write notices first (`Broken pipe` on stdin), `poll_flush` waits
//!   for the exit status (up to 2 s) and returns that same error instead of
//!   the io error, and `poll_recv` then returns `None`: the exit is reported
//!   once, by whichever side saw it first.
//!   The spawned process *is* the server: if it exits while something it
//!   started still holds stdout open, the transport reads for one more
//!   second, then kills the group and reports the exit (it never hangs
//!   waiting for an end of file that will not come).
//! - **Close** ([`poll_close`](mcp_proto::transport::Transport::poll_close)),
//!   as the MCP spec says: flush and close stdin, wait up to
//!   [`DEFAULT_STDIN_GRACE`] for the exit, `SIGTERM` the group, wait up to
//!   [`DEFAULT_TERM_GRACE`], `SIGKILL` the group. Once the server has exited,
//!   whatever is left in its group is killed too. Timeouts are set with
//!   [`ServerCommand::shutdown_timeouts`].
//! - **Drop** without close kills the whole group with `SIGKILL` at once;
//!   the child is reaped by a background task (no orphans, no zombies).
//!
//! # Framing
//!
//! One JSON-RPC message per line, UTF-8, `\n`-terminated; a `\r` before the
//! `\n` and blank lines are tolerated. A line that is not JSON (a banner a
//! server prints on stdout) is skipped with a `tracing` warning and counted
//! ([`StdioTransport::skipped_lines`]). A line that is JSON but not a valid
//! JSON-RPC message, or longer than the limit, is a scoped
//! [`TransportErrorKind::Decode`](mcp_proto::transport::TransportErrorKind::Decode)
//! error: the next line is read normally. Outgoing messages are queued by
//! `start_send` and written together by `poll_flush` (one `write` for many
//! small messages); they never contain an embedded newline. A large raw
//! `params` or `result` (32 KiB or more) is not copied into the write
//! buffer: it is written from the message's own allocation, with its
//! envelope, in one vectored write.
//!
//! # Cancel safety
//!
//! Every method is a `poll_*` method that keeps its progress in the
//! transport, so dropping a future that polls them (`recv()`, `send()`,
//! `close()` in a `select!`) loses nothing: a message is returned by
//! exactly one `poll_recv`, a message accepted by `start_send` stays queued
//! for the next flush, and a later `close()` resumes the shutdown where the
//! dropped one stopped (the timers keep running).
//!
//! # Limits
//!
//! | limit | default | set with |
//! |---|---|---|
//! | largest incoming message | [`DEFAULT_MAX_MESSAGE_SIZE`] (16 MiB) | [`ServerCommand::max_message_size`] |
//! | unsent bytes before `poll_ready` waits | [`DEFAULT_WRITE_BUFFER_LIMIT`] (1 MiB) | [`ServerCommand::write_buffer_limit`] |
//! | wait after closing stdin | [`DEFAULT_STDIN_GRACE`] (2 s) | [`ServerCommand::shutdown_timeouts`] |
//! | wait after `SIGTERM` | [`DEFAULT_TERM_GRACE`] (2 s) | [`ServerCommand::shutdown_timeouts`] |
//! | [`LineTransport`] close waiting for the peer to read | [`DEFAULT_CLOSE_TIMEOUT`] (2 s) | [`LineTransport::with_close_timeout`] |
//! | one stderr line passed on | [`MAX_STDERR_LINE`] (8 KiB, rest dropped) | fixed |
//! | stderr lines kept for exit errors | [`STDERR_TAIL_LINES`] | fixed |
//!
//! An oversized line is never buffered whole: reading memory stays below
//! the message limit plus one 64 KiB read.
//!
//! # Platform notes
//!
//! Process groups and signals are POSIX (`setpgid` at spawn, `killpg` to
//! signal, through the `nix` crate: no `unsafe` here). A server that leaves
//! its group on purpose (`setsid`, daemonising) is out of reach. On other
//! platforms the code compiles without process groups: close and drop kill
//! the direct child only, and `SIGTERM` becomes a kill; Windows Job Objects
//! belong in the private `sys` module behind the same interface. (On
//! Windows, launchers are `.cmd` files: spawn `npx.cmd`, or `cmd /c npx`.)
//!
//! `StdioTransport::spawn` needs a Tokio runtime with IO and time enabled.
//!
//! # Sandbox
//!
//! With the `sandbox` feature, `ServerCommand::sandbox` runs the server
//! confined (Linux: what it may read, write and reach, and no host process
//! in sight; see the `mcp-sandbox` crate, re-exported as `sandbox`). The
//! transport then spawns the sandbox launcher instead of the server, keeps
//! the sandbox's proxy and private folder while the server runs, and
//! signals and kills as above (the launcher and the server share the
//! process group; the server's exit status comes back through the
//! launcher, a signal as 128 + its number). Where no sandbox can be had,
//! `spawn` returns `SpawnError::Sandbox` and starts nothing.
//!
//! # Feature flags
//!
//! - `sandbox`: `ServerCommand::sandbox` (adds `mcp-sandbox`: Landlock,
//!   seccomp, nix's namespace calls, and tokio's `net` for the proxy).

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod codec;
mod command;
#[cfg(any(test, fuzzing))]
#[doc(hidden)]
pub mod fuzzing;
mod line;
mod stderr;
mod stdio;
mod sys;

pub use codec::{DEFAULT_MAX_MESSAGE_SIZE, Dropped, JsonLineCodec, JsonLineCodecError};
pub use command::{
    DEFAULT_ENV_ALLOWLIST, DEFAULT_STDIN_GRACE, DEFAULT_TERM_GRACE, ServerCommand, ShellWordsError,
    SpawnError, Stderr, StderrCallback,
};
pub use line::{DEFAULT_CLOSE_TIMEOUT, DEFAULT_WRITE_BUFFER_LIMIT, LineTransport};
pub use stderr::{MAX_STDERR_LINE, STDERR_TAIL_LINES};
pub use stdio::{ServerExited, StdioTransport};

/// Sandboxed servers: the `mcp-sandbox` crate, for
/// [`ServerCommand::sandbox`].
///
/// Needs the `sandbox` feature.
#[cfg(feature = "sandbox")]
#[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
pub use mcp_sandbox as sandbox;
