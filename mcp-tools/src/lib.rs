//! `mcp-tools`: not built yet (see the project's issues).
