//! `mcp-client`: not built yet (see the project's issues).
