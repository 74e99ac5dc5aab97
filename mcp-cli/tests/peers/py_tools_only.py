"""A tools-only server on the Python MCP SDK (the pinned `mcp` in .peers/py), for the CLI's
output tests: the SDK (pydantic) writes the schemas, so optional parameters come out as
`anyOf [T, null]` and lists as arrays with `items`, as in Python servers people run.

    .peers/py/bin/python mcp-cli/tests/peers/py_tools_only.py
"""

import base64
from typing import Optional

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-tools-only")


@server.tool()
def git_log(repo_path: str, max_count: int = 10, start_timestamp: Optional[str] = None,
            authors: list[str] = [], mode: int | str = 0) -> str:
    """Shows the commit logs."""
    return f"{repo_path}: {max_count} commits"


LONG = "\n".join(f"Line {i} of a very long description that goes on." for i in range(1, 46))


@server.tool(description=LONG)
def verbose() -> str:
    return "ok"


class Snapshot(BaseModel):
    mime_type: str
    data: str


# A 300 KB "image" (deterministic bytes).
PIXELS = bytes((i * 7) % 256 for i in range(300 * 1024))


@server.tool()
def screenshot() -> Snapshot:
    """Returns a screenshot; the image goes into structuredContent as base64."""
    return Snapshot(mime_type="image/png", data=base64.b64encode(PIXELS).decode())


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleeps, then says so."""
    await anyio.sleep(seconds)
    return f"slept {seconds} s"


if __name__ == "__main__":
    server.run("stdio")
