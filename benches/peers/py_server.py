#!/usr/bin/env python3
"""Benchmark peer: the official MCP Python SDK 2.x server with one `echo` tool.

Usage: python py_server.py http PORT   # Streamable HTTP, stateless, JSON responses, 127.0.0.1 only
       python py_server.py stdio
"""

import sys

from mcp.server import MCPServer

server = MCPServer("bench-py", version="0.0.0", log_level="WARNING")


@server.tool(description="Echo the text back.", structured_output=False)
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            json_response=True,
            stateless_http=True,
        )
    elif len(sys.argv) >= 2 and sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        sys.exit("usage: py_server.py http PORT | stdio")
