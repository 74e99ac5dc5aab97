//! Runnable examples and the `mcp` command-line client.
//!
//! The binaries live in `src/bin/`:
//!
//! - `mcp`: the command-line client (`mcp --help`). With no `--stdio` or
//!   `--http` it talks to its own built-in demo server, which it runs by
//!   spawning itself as `mcp demo-server`.
//! - `self_spawn`: a short, offline example of the client API. It spawns
//!   itself as a stdio server (the [`demo_server`] below), lists its tools
//!   and calls one.
//!
//! This library holds what the binaries share: the [`demo_server`] and
//! [`raw_json`], JSON text handling that keeps a peer's key order.

pub mod demo_server;
pub mod raw_json;
