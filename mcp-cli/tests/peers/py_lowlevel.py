"""A tools-only server on the Python MCP SDK's low-level `Server` (the pinned `mcp` in
.peers/py), as servers like `mcp-server-time` are written: only the tools handlers are
registered, so the SDK advertises only the `tools` capability.

    .peers/py/bin/python mcp-cli/tests/peers/py_lowlevel.py
"""

import anyio
import mcp_types as types

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[
        types.Tool(name="now", description="The time.", input_schema={"type": "object", "properties": {}}),
    ])


async def call_tool(ctx, params) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="12:00")])


server = Server("py-lowlevel", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
