"""A Python SDK server whose surface a test changes between runs, for `mcp diff`.

    python py_surface.py            (stdio)

MCP_TEST_ECHO_DESCRIPTION sets the `echo` tool's description (default
"Echo the text back."); MCP_TEST_EXTRA_TOOL=1 adds a tool `extra`.
"""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("surface-test-server")


@server.tool(description=os.environ.get("MCP_TEST_ECHO_DESCRIPTION", "Echo the text back."))
def echo(text: str) -> str:
    return text


if os.environ.get("MCP_TEST_EXTRA_TOOL") == "1":

    @server.tool()
    def extra() -> str:
        """An extra tool."""
        return "extra"


@server.resource("test://surface/readme")
def readme() -> str:
    """A static resource."""
    return "hello"


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    server.run("stdio")
