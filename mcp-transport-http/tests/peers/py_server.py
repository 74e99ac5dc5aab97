"""A small MCP server on the Python SDK (mcp==2.3.0), Streamable HTTP, both eras.

Usage: python py_server.py PORT
"""
import sys
from typing import Annotated

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


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
