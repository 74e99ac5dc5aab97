//! `mcp bridge`: the picked server offered as a stdio MCP server on this
//! process's stdin and stdout, for a host that speaks only stdio (its
//! config's `command` is `mcp`, its `args` `["bridge", "--http", URL]`).
//!
//! The server's transport is the one any `mcp` command gets (`--http` with
//! its headers, OAuth and token cache, a Unix socket, a configured server
//! with its trust rules, `--stdio`); the host's is newline-delimited
//! JSON-RPC over stdin/stdout ([`crate::own_stdio`]).
//! Between them runs `mcp_client::relay`: every message passes both ways,
//! ids mapped, backpressure both ways, the era line refused with an error
//! naming both revisions (see that module).
//!
//! A configured server keeps its entry's rules ([`gate`]): tools the entry
//! leaves out, denies or holds back (pins) are not listed to the host, and
//! their calls are answered by the bridge without reaching the server.
//!
//! The bridge ends when the host closes stdin (exit 0: the server's side is
//! closed first, an HTTP session deleted) or when the server's side ends
//! (exit 3, one line on stderr saying why; the host's requests in flight
//! were answered with that error first). Nothing but JSON-RPC is written
//! to stdout; what the bridge has to say goes to stderr, which hosts keep
//! in their logs.

use mcp_client::relay::{RelayConfig, RelayDriver, RelayEnd};
use mcp_proto::error::chain;

mod gate;

use crate::Interrupts;
use crate::args::{Options, Server};
use crate::connect::transport;
use crate::failure::Failure;

/// Runs the bridge until the host or the server ends it, or a signal.
pub(crate) async fn run(opts: Options) -> Result<(), Failure> {
    let mut interrupts = Interrupts::listen();
    let (server, _oauth) = tokio::select! {
        r = transport(&opts) => r?,
        code = interrupts.recv() => return Err(Failure::Interrupted(code)),
    };
    let server = match &opts.server {
        Server::Configured(cfg) => Box::pin(gate::Gated::new(
            server,
            (**cfg).clone(),
            crate::policy::pins(),
            opts.yes,
        )),
        _ => server,
    };
    let host = crate::own_stdio::transport(opts.max_message_size);
    let relay = RelayDriver::new(host, server, RelayConfig::default());
    let end = tokio::select! {
        end = relay => end,
        // Dropping the relay drops the server's transport: a spawned
        // server's process group is killed, HTTP requests are abandoned.
        code = interrupts.recv() => return Err(Failure::Interrupted(code)),
    };
    match end {
        RelayEnd::HostClosed => Ok(()),
        RelayEnd::ServerClosed(None) => Err(Failure::fatal(
            "connection error",
            "the server closed the connection",
        )),
        RelayEnd::ServerClosed(Some(e)) => Err(Failure::fatal(
            "connection error",
            format!("the connection to the server was lost: {}", chain(&e)),
        )),
        RelayEnd::SessionLost(e) => Err(Failure::fatal(
            "protocol error",
            format!(
                "the server ended the session and refused a new one: {}",
                e.message
            ),
        )),
        other => Err(Failure::fatal(
            "connection error",
            format!("the relay ended: {other:?}"),
        )),
    }
}
