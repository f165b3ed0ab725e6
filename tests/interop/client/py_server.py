"""A small MCP server on the official Python SDK (mcp 2.3.0, MCPServer — FastMCP's new name),
for the client interop tests: `python py_server.py` (stdio) or `python py_server.py http PORT`
(Streamable HTTP on 127.0.0.1:PORT/mcp)."""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-interop")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.tool()
def explode(message: str) -> str:
    """Fail with the message."""
    raise ValueError(message)


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report `steps` progress notifications, then answer."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.resource("interop://motd", name="motd", mime_type="text/plain")
def motd() -> str:
    """The message of the day."""
    return "hello from python"


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review: {code}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
