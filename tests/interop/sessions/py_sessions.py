"""Interop: the Python SDK `mcp` 1.x clients against `orkestrel-mcp serve --http`.

- WebSocket (`mcp.client.websocket.websocket_client`, subprotocol `mcp`): initialize, tools/list,
  concurrent calls answered by id, progress notifications.
- Streamable HTTP with a session (`streamablehttp_client`): the session id, a call with progress,
  and the DELETE on exit (the old id then answers 404).

Usage: python py_sessions.py http://127.0.0.1:PORT/mcp
Exit status 0 when every check passed, 1 otherwise. INTEROP_TIMEOUT (s) bounds the whole run.
"""

import os
import re
import sys

import anyio
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.client.websocket import websocket_client

failures = 0


def check(name: str, ok: bool, detail: object = None) -> None:
    global failures
    suffix = "" if ok or detail is None else f" ({detail!r})"
    print(f"{'ok  ' if ok else 'FAIL'} py-sessions: {name}{suffix}", flush=True)
    if not ok:
        failures += 1


def text(result) -> str | None:
    return result.content[0].text if result.content else None


async def websocket(url: str) -> None:
    ws_url = re.sub(r"^http", "ws", url)
    async with websocket_client(ws_url) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("ws: initialize", init.serverInfo.name == "orkestrel-mcp", init.serverInfo)
            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            check("ws: tools/list", {"echo", "add", "sleep", "progress"} <= names, names)

            results: dict[str, str | None] = {}

            async def call(key: str, name: str, args: dict) -> None:
                results[key] = text(await session.call_tool(name, args))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "slow", "sleep", {"ms": 300})
                tg.start_soon(call, "fast", "echo", {"text": "fast"})
            check(
                "ws: concurrent calls answered by id",
                results == {"slow": "slept 300 ms", "fast": "fast"},
                results,
            )

            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            counted = await session.call_tool(
                "progress", {"steps": 2, "ms": 5}, progress_callback=on_progress
            )
            check("ws: a tool's progress reaches the caller", progress[:1] == [1] and text(counted) == "done 2 steps", progress)


async def http_session(url: str) -> None:
    async with streamablehttp_client(url) as (read, write, get_session_id):
        async with ClientSession(read, write) as session:
            await session.initialize()
            session_id = get_session_id()
            check(
                "http: initialize mints a visible-ASCII session id",
                bool(session_id) and re.fullmatch(r"[\x21-\x7e]+", session_id) is not None,
                session_id,
            )
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            counted = await session.call_tool(
                "progress", {"steps": 3, "ms": 5}, progress_callback=on_progress
            )
            check("http: progress on the POST stream", progress == [1, 2, 3], progress)
            check("http: the call answers", text(counted) == "done 3 steps", counted)
            added = await session.call_tool("add", {"a": 2, "b": 5})
            check("http: add in the session", added.structuredContent == {"sum": 7}, added)
    # Leaving the client sent DELETE: the id is gone.
    async with httpx.AsyncClient() as client:
        reply = await client.post(
            url,
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-session-id": session_id or "",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    check("http: the session ended on exit (404)", reply.status_code == 404, reply.status_code)


async def main(url: str) -> None:
    bound = float(os.environ.get("INTEROP_TIMEOUT", "30"))
    with anyio.fail_after(bound):
        # PY_SESSIONS_HTTP_ONLY=1: behind an HTTP-only proxy (tests/redis.rs, two instances).
        http_only = os.environ.get("PY_SESSIONS_HTTP_ONLY") == "1"
        for part in (http_session,) if http_only else (websocket, http_session):
            try:
                await part(url)
            except Exception as error:  # report, keep going
                check(f"{part.__name__}: no exception", False, repr(error))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python py_sessions.py http://127.0.0.1:PORT/mcp", file=sys.stderr)
        sys.exit(2)
    anyio.run(main, sys.argv[1])
    print(f"py-sessions: {'all checks passed' if failures == 0 else f'{failures} check(s) failed'}")
    sys.exit(0 if failures == 0 else 1)
