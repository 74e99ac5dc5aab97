//! `mcp-transport-stdio`: not built yet (see the project's issues).
