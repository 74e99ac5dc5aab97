"""A test server built on the Python MCP SDK (PyPI `mcp`, pinned in requirements.txt).

It speaks both eras: 2026-07-28 (server/discover, per-request _meta, MRTR) and the
legacy `initialize` revisions, as the SDK does.

    .peers/py/bin/python peers/python_server.py stdio
    .peers/py/bin/python peers/python_server.py http PORT      # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

import sys
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-test-server", instructions="A test server for mcp-rs.")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers (structured output)."""
    return a + b


@server.tool()
async def slow_count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress, 50 ms per step."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await anyio.sleep(0.05)
    return f"counted to {steps}"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(reason)


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greets the user, asking for the name by elicitation."""
    return f"Hello, {who.name}!"


@server.resource("test://static/hello")
def hello_resource() -> str:
    """A static text resource."""
    return "hello from python"


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review:\n{code}"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        sys.exit(f"usage: {sys.argv[0]} stdio | http PORT")


if __name__ == "__main__":
    main()
