"""A Python SDK server whose tool set changes: `unlock` adds a `hello` tool and
announces it (2026-07-28: on `subscriptions/listen` streams; legacy:
`notifications/tools/list_changed`). Used by mcp-tools/tests/real_peers.rs.

    .peers/py/bin/python mcp-tools/tests/changing_server.py
"""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing-server")


def hello() -> str:
    """Says hello (added at runtime)."""
    return "hello from a new tool"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Adds the `hello` tool and announces the change (idempotent)."""
    if all(t.name != "hello" for t in server._tool_manager.list_tools()):
        server.add_tool(hello, name="hello")
    # Modern era: listen-stream subscribers; legacy era: the session's channel.
    await ctx.notify_tools_changed()
    await ctx.request_context.session.send_tool_list_changed()
    return "unlocked"


if __name__ == "__main__":
    server.run("stdio")
