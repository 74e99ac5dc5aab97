//! Streamable HTTP transport for MCP (work in progress).

pub mod sse;
