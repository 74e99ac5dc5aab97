"""A FastMCP server (the pinned `fastmcp`, .peers/fastmcp) whose tools touch
the machine, for the sandbox tests: run confined, what it may not do fails
as a tool error; unconfined it works.

    read_file(path)       the file's text
    write_file(path, text)
    fetch(url)            urllib GET (the proxy variables apply)
"""

import os
import urllib.request

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-files")


@mcp.tool
def read_file(path: str) -> str:
    with open(path) as f:
        return f.read()


@mcp.tool
def write_file(path: str, text: str) -> str:
    with open(path, "w") as f:
        f.write(text)
    return "wrote"


@mcp.tool
def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=15) as r:
        return r.read().decode()


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False, log_level="warning")
