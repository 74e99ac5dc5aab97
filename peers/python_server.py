"""A test server built on the Python MCP SDK (PyPI `mcp`, pinned in requirements.txt).

It speaks both eras: 2026-07-28 (server/discover, per-request _meta, MRTR) and the
legacy `initialize` revisions, as the SDK does.

    .peers/py/bin/python peers/python_server.py stdio
    .peers/py/bin/python peers/python_server.py http PORT      # Streamable HTTP at http://127.0.0.1:PORT/mcp
    .peers/py/bin/python -m uvicorn --uds PATH --app-dir peers --factory python_server:socket_app
                                                               # Streamable HTTP on the Unix socket PATH,
                                                               # at unix://PATH#/mcp

Test modes, by environment variable:
    MCP_TEST_REQUEST_LOG=PATH      append the method of every request received to PATH, one a line
    MCP_TEST_LIST_TTL_MS=N         list and resources/read results carry ttlMs N, cacheScope "public" (SEP-2549)
    MCP_TEST_EXIT_AFTER_CALLS=N    exit with status 3 on the N-th tools/call (a server that crashes)
    MCP_TEST_OTEL_SPANS=PATH       record the SDK's OpenTelemetry spans (OpenTelemetry's Python SDK) and
                                   append each, when it ends, to PATH as one JSON line: name, kind,
                                   trace_id, span_id, parent_span_id (W3C hex) and attributes
    MCP_TEST_TOOLS=PATH            a JSON object of tool name -> description, read at start: `echo` and
                                   `add` take the description given; any other name is one more tool
                                   echoing its `text` (a server whose tools change between runs)
"""

import os
import sys
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError

_ttl = os.environ.get("MCP_TEST_LIST_TTL_MS")
_hints = None
if _ttl is not None:
    _hint = CacheHint(ttl_ms=int(_ttl), scope="public")
    _hints = {m: _hint for m in ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")}

_otel_spans = os.environ.get("MCP_TEST_OTEL_SPANS")
if _otel_spans:
    import json

    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class _JsonLines(SpanExporter):
        def export(self, spans):
            with open(_otel_spans, "a") as f:
                for s in spans:
                    parent = s.parent.span_id if s.parent is not None else 0
                    f.write(json.dumps({
                        "name": s.name,
                        "kind": s.kind.name,
                        "trace_id": format(s.context.trace_id, "032x"),
                        "span_id": format(s.context.span_id, "016x"),
                        "parent_span_id": format(parent, "016x"),
                        "trace_state": s.context.trace_state.to_header(),
                        "attributes": {k: v for k, v in (s.attributes or {}).items()},
                    }) + "\n")
            return SpanExportResult.SUCCESS

    _provider = TracerProvider()
    _provider.add_span_processor(SimpleSpanProcessor(_JsonLines()))
    trace.set_tracer_provider(_provider)

server = MCPServer("python-test-server", instructions="A test server for mcp-rs.", cache_hints=_hints)

_described = {}
if os.environ.get("MCP_TEST_TOOLS"):
    import json as _json

    with open(os.environ["MCP_TEST_TOOLS"]) as _f:
        _described = _json.load(_f)

_request_log = os.environ.get("MCP_TEST_REQUEST_LOG")
_exit_after = int(os.environ.get("MCP_TEST_EXIT_AFTER_CALLS", "0"))
_calls = 0


async def _test_modes(ctx, call_next):
    global _calls
    if ctx.request_id is not None:
        if _request_log:
            with open(_request_log, "a") as f:
                f.write(ctx.method + "\n")
        if ctx.method == "tools/call" and _exit_after:
            _calls += 1
            if _calls >= _exit_after:
                print(f"crashing on purpose after {_calls} calls", file=sys.stderr, flush=True)
                os._exit(3)
    return await call_next(ctx)


if _request_log or _exit_after:
    server.middleware.append(_test_modes)


@server.tool(description=_described.get("echo"))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


for _name, _description in _described.items():
    if _name not in ("echo", "add"):
        server.add_tool(echo, name=_name, description=_description)


@server.tool(structured_output=False)
def blob(mib: int) -> str:
    """Return `mib` MiB of text: one JSON-RPC line larger than a client's limit."""
    return "x" * (mib << 20)


@server.tool(description=_described.get("add"))
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


@server.tool()
async def log_levels(ctx: Context) -> str:
    """Send one log message at each of debug, info, warning and error, then return."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, f"a {level} message", logger_name="levels")
    return "logged"


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


def socket_app():
    """The Streamable HTTP app for a Unix socket (`uvicorn --uds PATH --factory`).

    The SDK turns its DNS-rebinding check on for apps built for 127.0.0.1, and
    that check allows only `Host: <loopback>:<port>`; a socket client (VS Code,
    mcp-rs) sends `Host: localhost`, with no port. The check stays on here,
    allowing exactly that host: a browser cannot reach a Unix socket, so the
    Host header only has to name this server.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=["localhost"], allowed_origins=[]
    )
    return server.streamable_http_app(transport_security=security)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        port = int(sys.argv[2])
        if len(sys.argv) > 3:
            # Sessions idle this many seconds are ended (their id then answers 404).
            server.run(
                "streamable-http",
                host="127.0.0.1",
                port=port,
                session_idle_timeout=float(sys.argv[3]),
            )
        else:
            server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        sys.exit(f"usage: {sys.argv[0]} stdio | http PORT [SESSION_IDLE_SECONDS]")


if __name__ == "__main__":
    main()
