#!/usr/bin/env python3
"""Interop check: the official MCP Python SDK 2.x client drives an orkestrel-mcp server.

Usage:
    python py_client.py stdio <server-binary> [--mode legacy|auto|both]   # spawns `<server-binary> serve --stdio`
    python py_client.py http  <url>           [--mode legacy|auto|both]   # e.g. http://127.0.0.1:PORT/mcp

`--mode both` (the default) runs two independent connections:
  * legacy - `Client(..., mode="legacy")`: plain `initialize` handshake;
  * auto   - `Client(...)` with the SDK default `mode="auto"`: it first probes
             `server/discover` (2026-07-28) and must fall back to `initialize` when the
             server answers with a JSON-RPC error (or an HTTP 4xx).
Both run the same assertions. Exit code 0 and one summary line per mode on success;
exit code 1 and a message naming the first mismatch otherwise. Each mode is bounded by
INTEROP_TIMEOUT (seconds, default 30); a hard alarm backs that up.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import tempfile
import time
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

if sys.version_info < (3, 11):  # pragma: no cover - anyio pulls in the backport there
    from exceptiongroup import BaseExceptionGroup

EXPECTED_SERVER_NAME = "orkestrel-mcp"
EXPECTED_TOOLS = ("echo", "add", "fail", "sleep")
RUN_TIMEOUT = float(os.environ.get("INTEROP_TIMEOUT", "30"))
REQUEST_TIMEOUT = min(10.0, RUN_TIMEOUT)
# mcp.client.session.DISCOVER_TIMEOUT_SECONDS is 10 s: a server that never answers
# `server/discover` still "works" in auto mode, but only after that client-side timeout.
SLOW_AUTO_CONNECT = 8.0


class AssertionFailure(Exception):
    pass


def check(cond: Any, msg: str) -> None:
    if not cond:
        raise AssertionFailure(msg)


def single_text(result: Any, what: str) -> str:
    content = result.content
    check(len(content) == 1, f"{what}: expected exactly one content block, got {len(content)}: {content!r}")
    block = content[0]
    check(getattr(block, "type", None) == "text", f"{what}: expected a text block, got {block!r}")
    return block.text


async def run_once(kind: str, target: str, mode: str, errlog: Any) -> str:
    label = f"py {kind} {mode}"
    if kind == "stdio":
        params = StdioServerParameters(command=target, args=["serve", "--stdio"], env=dict(os.environ))
        server: Any = stdio_client(params, errlog=errlog)  # a Transport; lets us capture the server's stderr
    else:
        server = target  # a URL string selects the streamable HTTP transport

    started = time.monotonic()
    client = Client(
        server,
        mode=mode,
        read_timeout_seconds=REQUEST_TIMEOUT,
        client_info=Implementation(name="orkestrel-interop-py", version="0.0.0"),
    )
    connected = False
    try:
        async with client:
            connected = True
            return await _exercise(client, label, mode, started)
    except MCPError as e:
        if connected:
            raise
        raise AssertionFailure(f"connect ({mode}) failed with JSON-RPC error {e.code}: {e.message}") from e


async def _exercise(client: Client, label: str, mode: str, started: float) -> str:
    connect_s = time.monotonic() - started
    session = client.session

    # --- handshake ---
    if session.initialize_result is not None:
        era = "initialize" if mode == "legacy" else "discover->initialize fallback"
    else:
        era = "discover (2026-07-28 modern)"
    protocol = client.protocol_version
    check(isinstance(protocol, str) and protocol, f"no negotiated protocol version (got {protocol!r})")
    if mode == "legacy":
        check(protocol in HANDSHAKE_PROTOCOL_VERSIONS, f"legacy handshake negotiated unexpected version {protocol!r}")
    if mode == "auto":
        # The server speaks 2026-07-28 beside the handshake era: auto mode must negotiate it.
        check(protocol == "2026-07-28" and session.initialize_result is None,
              f"auto mode should negotiate 2026-07-28 via server/discover, got {protocol!r} ({era})")
    if mode == "auto" and session.initialize_result is not None:
        check(
            connect_s < SLOW_AUTO_CONNECT,
            f"auto mode fell back to initialize only after {connect_s:.1f}s: the server did not answer "
            "`server/discover` promptly (it must reply with a JSON-RPC error such as -32601, or HTTP 4xx)",
        )
    info = client.server_info
    check(info is not None and info.name == EXPECTED_SERVER_NAME,
          f"server name: expected {EXPECTED_SERVER_NAME!r}, got {getattr(info, 'name', None)!r}")
    check(client.server_capabilities.tools is not None,
          f"server capabilities lack 'tools': {client.server_capabilities!r}")

    # --- tools/list ---
    listed = await client.list_tools()
    by_name = {t.name: t for t in listed.tools}
    for name in EXPECTED_TOOLS:
        tool = by_name.get(name)
        check(tool is not None, f"tools/list lacks {name!r} (got {sorted(by_name)})")
        schema = tool.input_schema
        check(isinstance(schema, dict) and schema.get("type") == "object",
              f"tool {name}: inputSchema must be an object schema with type 'object', got {schema!r}")
    add_out = by_name["add"].output_schema
    check(isinstance(add_out, dict), f"tool add: missing outputSchema (got {add_out!r})")

    # --- echo ---
    echo = await client.call_tool("echo", {"text": "hello interop"})
    check(not echo.is_error, f"echo: isError must be absent/false: {echo!r}")
    check(single_text(echo, "echo") == "hello interop", f"echo: text mismatch: {echo.content!r}")

    # --- add (the SDK also validates structuredContent against add's outputSchema) ---
    add = await client.call_tool("add", {"a": 2, "b": 3})
    check(not add.is_error, f"add: isError must be absent/false: {add!r}")
    check(single_text(add, "add") == "5", f"add: text mismatch (want '5'): {add.content!r}")
    sc = add.structured_content
    check(
        isinstance(sc, dict) and list(sc) == ["sum"]
        and isinstance(sc["sum"], (int, float)) and not isinstance(sc["sum"], bool)
        and math.isclose(sc["sum"], 5),
        f"add: structuredContent must equal {{'sum': 5}}, got {sc!r}",
    )

    # --- fail: a tool-level error (isError result), not a JSON-RPC error ---
    try:
        fail = await client.call_tool("fail", {"message": "boom"})
    except MCPError as e:
        # The Python SDK returns isError results; an MCPError here means the server
        # answered with a JSON-RPC error, which breaks the contract.
        raise AssertionFailure(
            f"fail: server answered with a JSON-RPC error ({e.code}: {e.message}) instead of an isError result"
        ) from e
    check(fail.is_error is True, f"fail: expected isError: true, got {fail!r}")
    check(any(getattr(b, "type", None) == "text" and "boom" in b.text for b in fail.content),
          f"fail: no text block contains 'boom': {fail.content!r}")

    # --- sleep ---
    t0 = time.monotonic()
    sleep = await client.call_tool("sleep", {"ms": 10})
    slept_ms = (time.monotonic() - t0) * 1000
    check(not sleep.is_error, f"sleep: isError must be absent/false: {sleep!r}")
    check(single_text(sleep, "sleep") == "slept 10 ms", f"sleep: text mismatch: {sleep.content!r}")

    # --- resources: list and read the built-in text resource ---
    resources = (await client.list_resources()).resources
    check(any(str(r.uri) == "orkestrel://about" for r in resources),
          f"resources/list lacks orkestrel://about: {resources!r}")
    read = await client.read_resource("orkestrel://about")
    check(len(read.contents) == 1
          and getattr(read.contents[0], "text", None) == "orkestrel-mcp: a Rust MCP server and client.",
          f"resources/read orkestrel://about: {read!r}")

    # --- prompts: list and get with an argument ---
    prompts = (await client.list_prompts()).prompts
    check(any(p.name == "greet" for p in prompts), f"prompts/list lacks greet: {prompts!r}")
    prompt = await client.get_prompt("greet", {"name": "Py"})
    check(prompt.messages and prompt.messages[0].role == "user"
          and getattr(prompt.messages[0].content, "text", None) == "Please greet Py.",
          f"prompts/get greet: {prompt!r}")

    # --- progress: the SDK routes notifications/progress to the callback ---
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    counted = await client.call_tool("progress", {"steps": 3, "ms": 1}, progress_callback=on_progress)
    check(single_text(counted, "progress") == "done 3 steps", f"progress: text mismatch: {counted.content!r}")
    check(seen == [(1, 3), (2, 3), (3, 3)], f"progress: expected 3 notifications 1..3 of 3, got {seen!r}")

    total_ms = (time.monotonic() - started) * 1000
    return (
        f"{label} ok: protocol={protocol} via {era} server={info.name} {info.version} "
        f"tools={len(listed.tools)} calls=5 fail=isError result sleep={slept_ms:.0f}ms "
        f"resources={len(resources)} prompts={len(prompts)} progress={len(seen)} "
        f"connect={connect_s * 1000:.0f}ms total={total_ms:.0f}ms"
    )


def _dump_stderr(errlog: Any) -> None:
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read()
    except (OSError, ValueError):
        return
    if text.strip():
        print(f"--- server stderr (last 4 KiB) ---\n{text[-4096:]}", file=sys.stderr)


def _leaves(exc: BaseException) -> list[BaseException]:
    """Flatten (nested) exception groups: the SDK's task groups wrap what our code raised."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def _describe(exc: BaseException) -> str:
    leaves = _leaves(exc)
    for kind in (AssertionFailure, TimeoutError, MCPError):
        for leaf in leaves:
            if isinstance(leaf, kind):
                if kind is AssertionFailure:
                    return str(leaf)
                if kind is TimeoutError:
                    return f"timed out after {RUN_TIMEOUT:g} s"
                return f"JSON-RPC error {leaf.code}: {leaf.message}"  # type: ignore[attr-defined]
    return "unexpected error: " + "; ".join(f"{type(leaf).__name__}: {leaf}" for leaf in leaves)


async def main_async(kind: str, target: str, modes: list[str]) -> int:
    for mode in modes:
        label = f"py {kind} {mode}"
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            try:
                with anyio.fail_after(RUN_TIMEOUT):
                    summary = await run_once(kind, target, mode, errlog)
            except Exception as e:  # noqa: BLE001 - every failure becomes a clear FAIL line
                print(f"{label} FAIL: {_describe(e)}", file=sys.stderr)
                _dump_stderr(errlog)
                return 1
        print(summary, flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target", help="server binary (stdio) or MCP endpoint URL (http)")
    parser.add_argument("--mode", choices=["legacy", "auto", "both"], default="both")
    args = parser.parse_args()
    modes = ["legacy", "auto"] if args.mode == "both" else [args.mode]

    # Hard backstop in case cancellation or transport shutdown itself wedges.
    def _alarm(_signum: int, _frame: Any) -> None:
        print(f"py {args.transport} FAIL: hard timeout", file=sys.stderr, flush=True)
        os._exit(1)

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(RUN_TIMEOUT * len(modes) + 20))
    return anyio.run(main_async, args.transport, args.target, modes)


if __name__ == "__main__":
    sys.exit(main())
