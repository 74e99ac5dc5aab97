"""A FastMCP server whose tool takes every argument type `mcp call key=value` types.

    .peers/fastmcp/bin/python mcp-cli/tests/peers/fastmcp_typed.py

Tools:
    describe(name, count, ratio, loud, mode, tags, sizes, origin, note)
        the arguments it received, as JSON with sorted keys: str, int, float,
        bool, a Literal (enum), list[str], list[int], a nested model
        ($ref to $defs) and an optional str (anyOf string/null)
"""

import json
import os
from typing import Literal, Optional

# Nothing leaves the machine: no banner, and no update check.
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import FastMCP
from pydantic import BaseModel


class Point(BaseModel):
    x: int
    y: int


mcp = FastMCP("typed-args")


@mcp.tool
def describe(
    name: str,
    count: int,
    ratio: float,
    loud: bool,
    mode: Literal["fast", "slow"],
    tags: list[str],
    sizes: list[int] = [],
    origin: Optional[Point] = None,
    note: Optional[str] = None,
) -> str:
    """The arguments received, as JSON."""
    return json.dumps(
        {
            "name": name,
            "count": count,
            "ratio": ratio,
            "loud": loud,
            "mode": mode,
            "tags": tags,
            "sizes": sizes,
            "origin": origin.model_dump() if origin else None,
            "note": note,
        },
        sort_keys=True,
    )


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False, log_level="warning")
