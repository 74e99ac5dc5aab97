//! The library half of the `mcp` command-line client (the binary is `mcp`:
//! `cargo install mcp-cli`, then `mcp --help`).
//!
//! It holds what the binary shares with the workspace's examples and tests:
//!
//! - [`demo_server`]: the built-in MCP demo server (`mcp demo-server`), a
//!   hand-written server over stdin/stdout speaking both protocol eras, which
//!   `mcp` talks to when no server is named;
//! - [`raw_json`]: JSON text handling that keeps a peer's key order, used to
//!   print what a server sent exactly as it sent it;
//! - [`terminal`]: server text made safe for a person's terminal (control
//!   sequences, bidi and invisible characters escaped visibly).
//!
//! These modules serve the CLI; they are not meant as a stable library API.

// docs.rs (`--cfg docsrs`, nightly): each item gated by a feature or a
// platform carries a badge saying which.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "chaos")]
mod chaos;
pub mod demo_server;
pub mod raw_json;
pub mod terminal;
