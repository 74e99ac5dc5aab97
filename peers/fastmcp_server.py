"""A FastMCP server (PyPI `fastmcp[tasks]`, pinned in fastmcp-requirements.txt) with background tasks.

    .peers/fastmcp/bin/python peers/fastmcp_server.py stdio
    .peers/fastmcp/bin/python peers/fastmcp_server.py http PORT   # Streamable HTTP at http://127.0.0.1:PORT/mcp

FastMCP 4 serves every revision 2024-11-05 ... 2026-07-28 (the `initialize` handshake and the
2026-07-28 `server/discover` era, through the Python SDK `mcp` 2.3.0 it builds on). Its tasks are the
2026-07-28 extension `io.modelcontextprotocol/tasks` (SEP-2663) from `fastmcp-tasks`: a client that
declares the extension gets a `CreateTaskResult` (`resultType: "task"`) for a task tool and follows it
with `tasks/get` / `tasks/update` / `tasks/cancel`; the methods exist only on a 2026-07-28 connection.
FastMCP 4 does not speak the 2025-11-25 (SEP-1686) task form. The task backend is docket's in-process
`memory://` (the default): tasks live as long as this process, which serves every client that connects
to it, so a client that comes back (a restarted host on the same HTTP server) finds its task.

Tools:
    echo(text)                  the text back
    add(a, b)                   a + b, also as structured content
    slow_report(topic, steps, step_ms)
                                a task ("required"): `steps` steps of `step_ms` ms (default 4 x 500),
                                each reported as progress ("step i/n"), then "report on <topic>"
    sleepy(ms)                  a task if the client asks for one ("optional"), else at once:
                                "slept <ms> ms"
    confirm_delete(filename)    a task ("required") that asks for input mid-task: it goes
                                `input_required` with an elicitation (a boolean `confirm`), and ends
                                "deleted <filename>" when confirmed, "kept <filename>" when not
    failing_task()              a task ("required") whose tool raises: completed with isError
"""

import os
import sys
from datetime import timedelta

# Nothing leaves the machine: no banner, and no update check on PyPI (FastMCP's banner does one).
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("fastmcp-peer")
mcp.add_extension(TasksExtension(url="memory://"))

# FastMCP's default poll interval is 5 s (the `pollIntervalMs` of each task); 200 ms keeps the tests
# short while a client still polls a working task several times.
POLL = timedelta(milliseconds=200)
REQUIRED = TaskConfig(mode="required", poll_interval=POLL)


@mcp.tool
def echo(text: str) -> str:
    """Returns the text."""
    return text


@mcp.tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.tool(task=REQUIRED)
async def slow_report(topic: str, ctx: Context, steps: int = 4, step_ms: int = 500) -> str:
    """Writes a report in steps, reporting each as progress; runs only as a task."""
    for i in range(steps):
        await ctx.report_progress(i, steps, f"step {i + 1}/{steps}")
        await anyio.sleep(step_ms / 1000)
    return f"report on {topic}"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def sleepy(ms: int) -> str:
    """Sleeps; runs as a task when the client asks for one."""
    await anyio.sleep(ms / 1000)
    return f"slept {ms} ms"


@mcp.tool(task=REQUIRED)
async def confirm_delete(filename: str, ctx: Context):
    """Asks for confirmation mid-task (input_required), then deletes (pretends to)."""
    answers = ctx.input_responses or {}
    answer = answers.get("confirm")
    if answer is None:
        return mcp_types.InputRequiredResult(
            input_requests={
                "confirm": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestFormParams(
                        message=f"Delete {filename}?",
                        requested_schema={
                            "type": "object",
                            "properties": {"confirm": {"type": "boolean"}},
                            "required": ["confirm"],
                        },
                    )
                )
            }
        )
    content = getattr(answer, "content", None) or {}
    if getattr(answer, "action", None) == "accept" and content.get("confirm") is True:
        return f"deleted {filename}"
    return f"kept {filename}"


@mcp.tool(task=REQUIRED)
async def failing_task() -> str:
    """A task whose tool fails."""
    raise ToolError("job failed: bad input")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run(transport="stdio", show_banner=False, log_level="warning")
    elif mode == "http":
        # Warnings only: uvicorn logs every request otherwise, into the output of the tests that run this.
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp", show_banner=False, log_level="warning")
    else:
        sys.exit(f"usage: {sys.argv[0]} stdio | http PORT")
