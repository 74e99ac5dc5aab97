"""FastMCP-style sample tools (the Python SDK's `MCPServer`, FastMCP's
successor in `mcp` 2.x, generates their schemas from type hints and
pydantic models, as FastMCP does). Only their `tools/list` is used: the
catalog benchmark takes tool shapes from it (`capture.py`).

    .peers/py/bin/python examples/catalog/fastmcp_samples.py
"""

from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("fastmcp-samples")


class Address(BaseModel):
    street: str
    city: str
    postal_code: Annotated[str, Field(description="Postal or ZIP code")]
    country: str = "US"


class User(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    email: str
    age: Annotated[int | None, Field(ge=0, le=150)] = None
    address: Address | None = None
    tags: list[str] = []


class Priority(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


class Task(BaseModel):
    title: str
    description: str | None = None
    priority: Priority = Priority.medium
    due_date: Annotated[str | None, Field(description="ISO 8601 date")] = None
    assignees: list[str] = []


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def get_weather(
    city: Annotated[str, Field(description="City name, e.g. 'Berlin'")],
    units: Literal["metric", "imperial"] = "metric",
) -> str:
    """Get the current weather for a city."""
    return f"{city}: 21 degrees ({units})"


@server.tool()
def search_products(
    query: Annotated[str, Field(description="Free-text search query")],
    category: Literal["electronics", "books", "clothing", "home", "toys"] | None = None,
    min_price: Annotated[float | None, Field(ge=0)] = None,
    max_price: Annotated[float | None, Field(ge=0)] = None,
    in_stock_only: bool = True,
    sort_by: Literal["relevance", "price_asc", "price_desc", "rating"] = "relevance",
    max_results: Annotated[int, Field(ge=1, le=100, description="How many results to return")] = 10,
) -> list[dict]:
    """Search the product catalog with filtering and sorting options."""
    return []


@server.tool()
def create_user(user: User, send_welcome_email: bool = True) -> dict:
    """Create a new user account."""
    return {"ok": True}


@server.tool()
def create_task(
    project_id: Annotated[str, Field(description="The project to add the task to")],
    task: Task,
    notify: bool = False,
) -> dict:
    """Create a task in a project and optionally notify its assignees."""
    return {"ok": True}


@server.tool()
def query_database(
    sql: Annotated[str, Field(description="A read-only SQL query")],
    parameters: Annotated[list[str | int | float | None], Field(description="Positional query parameters")] = [],
    timeout_seconds: Annotated[int, Field(ge=1, le=300)] = 30,
    max_rows: Annotated[int, Field(ge=1, le=10000)] = 1000,
) -> list[dict]:
    """Run a read-only SQL query against the analytics database and return the rows."""
    return []


if __name__ == "__main__":
    server.run("stdio")
