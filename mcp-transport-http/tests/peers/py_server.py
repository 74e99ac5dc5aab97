"""A small MCP server on the Python SDK (mcp==2.3.0), Streamable HTTP, both eras.

Usage: python py_server.py PORT [streamable-http|sse] [SESSION_IDLE_TIMEOUT_SECONDS]
"""
import sys
from typing import Annotated

import anyio

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("py-peer")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@mcp.tool()
def regional(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    query: str,
) -> str:
    """A tool whose `region` is mirrored into the Mcp-Param-Region header."""
    return f"{region}: {query}"


@mcp.tool()
async def progress(ctx: Context, steps: int = 3) -> str:
    """Reports progress, then answers (forces an SSE response)."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
    return "done"


CANCELLED = {"slow": False}


@mcp.tool()
async def slow(ctx: Context) -> str:
    """Reports progress, then works for a long time; remembers being cancelled."""
    try:
        await ctx.report_progress(1, 100)
        await anyio.sleep(30)
        return "finished"
    except anyio.get_cancelled_exc_class():
        CANCELLED["slow"] = True
        raise


@mcp.tool()
def was_cancelled() -> str:
    """Whether a `slow` call was cancelled."""
    return str(CANCELLED["slow"]).lower()


if __name__ == "__main__":
    # python py_server.py PORT [streamable-http|sse] [SESSION_IDLE_TIMEOUT_SECONDS]
    mode = sys.argv[2] if len(sys.argv) > 2 else "streamable-http"
    if len(sys.argv) > 3:
        # A session idle this long is ended: its id then answers 404.
        mcp.run(mode, host="127.0.0.1", port=int(sys.argv[1]), session_idle_timeout=float(sys.argv[3]))
    else:
        mcp.run(mode, host="127.0.0.1", port=int(sys.argv[1]))
