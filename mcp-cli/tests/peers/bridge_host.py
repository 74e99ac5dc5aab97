"""A stdio-only MCP host on the Python SDK's client (PyPI `mcp`, pinned in
peers/requirements.txt): it starts its server as a command over stdio, as
Claude Desktop and other stdio hosts do, and that command is `mcp bridge`.

    python bridge_host.py MODE SCENARIO COMMAND [ARGS...]

MODE is the client's `mode`: `legacy` (initialize), `auto` (server/discover,
falling back to initialize) or `2026-07-28`. It prints one JSON object on
stdout with what it saw, for the Rust test to check; an exception is printed
as {"error": ..., "code": ...}.

Scenarios (the servers are peers/python_server.py, server-everything and
peers/tasks_server.mjs):
    python     list tools, echo, add, slow_count with progress, greet (elicitation)
    everything echo, trigger-long-running-operation with progress,
               trigger-elicitation-request, simulate-research-query as a
               2025-11-25 task (tools/call with `task`, tasks/get, tasks/result)
    tasks      slow_task as a 2026-07-28 task (the tasks extension):
               tools/call answered with a task, tasks/get until completed
    echo       one echo call (for OAuth and era-mismatch runs)
"""

import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.exceptions import MCPError


def text_of(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def elicit(context, params):
    return types.ElicitResult(action="accept", content={"name": "Ann", "color": "red", "confirm": True})


async def raw_request(client: Client, method: str, params: dict) -> dict:
    """A request the SDK has no typed call for (tasks, a call answered with a
    task): stamped as the session stamps every request (2026-07-28 `_meta`),
    sent, and its result returned undecoded."""
    session = client.session
    data: dict[str, Any] = {"method": method, "params": params}
    opts: dict[str, Any] = {"timeout": 60}
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request(method, data.get("params"), opts)


async def main() -> None:
    mode, scenario, command, *args = sys.argv[1:]
    out: dict[str, Any] = {}
    extensions = None
    if scenario == "tasks":
        from mcp.client import advertise

        extensions = [advertise("io.modelcontextprotocol/tasks", {})]
    # A host passes its server the environment its config names; here the
    # SDK's default (PATH, HOME, ...) plus the MCP_* variables the test sets
    # (MCP_TOKEN_FILE: the bridge's token cache).
    env = {**get_default_environment(), **{k: v for k, v in os.environ.items() if k.startswith("MCP_")}}
    params = StdioServerParameters(command=command, args=args, env=env)
    progress: list[float] = []

    async def on_progress(p, total, message):
        progress.append(p)

    async with Client(
        params, mode=mode, elicitation_callback=elicit, extensions=extensions, read_timeout_seconds=60
    ) as client:
        out["protocolVersion"] = client.session.protocol_version
        if scenario == "python":
            tools = await client.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            out["echo"] = text_of(await client.call_tool("echo", {"text": "through the bridge"}))
            out["add"] = text_of(await client.call_tool("add", {"a": 2, "b": 3}))
            out["count"] = text_of(await client.call_tool("slow_count", {"steps": 3}, progress_callback=on_progress))
            out["progress"] = progress
            out["greet"] = text_of(await client.call_tool("greet", {}))
        elif scenario == "everything":
            out["echo"] = text_of(await client.call_tool("echo", {"message": "hi"}))
            r = await client.call_tool(
                "trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress
            )
            out["long"] = text_of(r)
            out["progress"] = progress
            out["elicit"] = text_of(await client.call_tool("trigger-elicitation-request", {}))
            created = await raw_request(
                client,
                "tools/call",
                {"name": "simulate-research-query", "arguments": {"topic": "bridges"}, "task": {"ttl": 60000}},
            )
            task_id = created["task"]["taskId"]
            statuses = []
            for _ in range(200):
                got = await raw_request(client, "tasks/get", {"taskId": task_id})
                statuses.append(got["status"])
                if got["status"] in ("completed", "failed", "cancelled"):
                    break
                if got["status"] == "input_required":
                    break
                await anyio.sleep(0.1)
            out["taskStatuses"] = statuses
            if statuses[-1] == "completed":
                result = await raw_request(client, "tasks/result", {"taskId": task_id})
                out["taskResult"] = "".join(c.get("text", "") for c in result.get("content", []))
        elif scenario == "tasks":
            created = await raw_request(
                client, "tools/call", {"name": "slow_task", "arguments": {"topic": "bridges", "ms": 300}}
            )
            out["created"] = created.get("resultType")
            task_id = created["task"]["taskId"] if "task" in created else created["taskId"]
            statuses = []
            for _ in range(100):
                got = await raw_request(client, "tasks/get", {"taskId": task_id})
                statuses.append(got["status"])
                if got["status"] in ("completed", "failed", "cancelled"):
                    out["final"] = got
                    break
                await anyio.sleep(0.1)
            out["taskStatuses"] = statuses
        elif scenario == "echo":
            out["echo"] = text_of(await client.call_tool("echo", {"text": "hi"}))
    print(json.dumps(out))


try:
    anyio.run(main)
except BaseException as e:  # noqa: BLE001 - the test reads what failed
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    print(json.dumps({"error": str(e), "code": getattr(getattr(e, "error", None), "code", None), "type": type(e).__name__}))
