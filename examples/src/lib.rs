//! Runnable examples of the mcp-rs crates.
//!
//! The binaries live in `src/bin/` (`self_spawn`, `toolbox`, `host`, `mcp-http`,
//! `unix_socket`, `tcp`, `bench-client`, `scale-bench`, `conformance-client`). The `mcp`
//! command-line client is its own crate, `mcp-cli`. The benchmark binaries
//! read their `--flag value` command lines with [`flags`]; the per-call
//! benchmark's clients (`bench-client`, `bench-floor`) share [`bench`]; the scale
//! benchmark's measurements are in [`scale`]. [`tcp`] is MCP over a TCP
//! socket through `mcp_transport_stdio::LineTransport`; `unix_socket` (Unix
//! only) is a transport over a Unix-domain socket written with
//! `mcp_proto::transport::halves`.
//!
//! Several examples run the CLI's built-in demo server in-process; this
//! library re-exports it from `mcp-cli` (one copy) as [`demo_server`].

pub use mcp_cli::demo_server;

pub mod bench;
pub mod flags;
pub mod scale;
pub mod tcp;
#[cfg(unix)]
pub mod unix_socket;
