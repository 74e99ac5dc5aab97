//! `mcp-transport-http`: not built yet (see the project's issues).
