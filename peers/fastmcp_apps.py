"""A FastMCP server (PyPI `fastmcp`, pinned in fastmcp-requirements.txt) using MCP Apps.

    .peers/fastmcp/bin/python peers/fastmcp_apps.py stdio

MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`) through FastMCP's own support
(`fastmcp.apps`: `app=AppConfig(...)` on tools and resources), not hand-written `_meta`: what a real
server built with it sends. One UI resource and tools of each audience:

    get_weather(city)       model and app (no visibility: the default), with the dashboard UI
    refresh_dashboard(city) app only (`visibility: ["app"]`): for the dashboard's refresh button;
                            it must never be offered to a model
    weather_summary(city)   model only (`visibility: ["model"]`): the UI may not call it
    legacy_view()           the deprecated flat `_meta["ui/resourceUri"]` spelling
    client_has_ui()         "yes" if the client declared the extension, else "no"

    ui://weather/dashboard.html   the dashboard (`text/html;profile=mcp-app`) with CSP
                                  domains, a camera permission and a border preference
"""

import os
import sys

# Nothing leaves the machine: no banner, and no update check on PyPI.
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")

from fastmcp import Context, FastMCP
from fastmcp.apps.config import UI_EXTENSION_ID, AppConfig, ResourceCSP, ResourcePermissions

DASHBOARD = "ui://weather/dashboard.html"
HTML = "<!DOCTYPE html><html><body><h1>Weather</h1><button id=refresh>Refresh</button></body></html>"

mcp = FastMCP("fastmcp-apps")


@mcp.resource(
    DASHBOARD,
    name="weather_dashboard",
    app=AppConfig(
        csp=ResourceCSP(connect_domains=["https://api.weather.example"], resource_domains=["https://cdn.example"]),
        permissions=ResourcePermissions(camera={}),
        prefers_border=True,
    ),
)
def dashboard() -> str:
    """The interactive weather dashboard."""
    return HTML


@mcp.tool(app=AppConfig(resource_uri=DASHBOARD))
def get_weather(city: str) -> str:
    """Current weather for a city, shown on the dashboard."""
    return f"sunny in {city}, 21 C"


@mcp.tool(app=AppConfig(resource_uri=DASHBOARD, visibility=["app"]))
def refresh_dashboard(city: str) -> str:
    """Refreshes the dashboard's data (called by the dashboard's refresh button)."""
    return f"refreshed {city}"


@mcp.tool(app=AppConfig(visibility=["model"]))
def weather_summary(city: str) -> str:
    """A one-line weather summary for the model."""
    return f"{city}: sunny"


@mcp.tool(meta={"ui/resourceUri": DASHBOARD})
def legacy_view() -> str:
    """A tool with the deprecated flat UI key."""
    return "legacy"


@mcp.tool
def client_has_ui(ctx: Context) -> str:
    """Whether the client declared the MCP Apps extension."""
    return "yes" if ctx.client_supports_extension(UI_EXTENSION_ID) else "no"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode != "stdio":
        sys.exit(f"usage: {sys.argv[0]} stdio")
    mcp.run("stdio", show_banner=False, log_level="WARNING")
