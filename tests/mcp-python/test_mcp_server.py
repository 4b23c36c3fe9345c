"""The official MCP Python SDK (mcp, pinned in requirements.txt) driving `interpreter mcp-server`.

A plain asyncio script (no pytest): every check is an assert, and the exit status is non-zero
on the first failure. It runs the agent against the scripted mock model (`mock-llm`): two
threads at once, a reply, progress and `codex/event` notifications, an approval answered as an
elicitation (and refused where the client cannot be asked), a thread resumed by a new server
process, and hostile input, both through the SDK and as raw JSON-RPC lines.

Binaries: INTERPRETER_BIN and MOCK_LLM_BIN, else target/debug/{interpreter,mock-llm}.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from mcp import types
from mcp.client import ClientSession
from mcp.client.extension import NotificationBinding
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[2]
INTERPRETER_BIN = Path(os.environ.get("INTERPRETER_BIN") or ROOT / "target/debug/interpreter").resolve()
MOCK_LLM_BIN = Path(os.environ.get("MOCK_LLM_BIN") or ROOT / "target/debug/mock-llm").resolve()

SLOW = {"events": [{"text": "working"}, {"delay_ms": 1500}, {"text": " done"}]}


def text(s: str) -> dict[str, Any]:
    return {"events": [{"text": s}]}


def shell(call_id: str, command: str) -> dict[str, Any]:
    return {"events": [{"tool_call": {"id": call_id, "name": "shell", "arguments": {"command": command}}}]}


# Model replies in the order the scenarios below ask for them.
REPLIES = [
    SLOW,  # thread A and thread B, at once
    SLOW,
    text("second answer"),  # codex-reply on A
    shell("call_ok", "touch approved.txt"),  # approved through an elicitation
    text("created it"),
    shell("call_no", "touch declined.txt"),  # declined
    text("left it"),
    shell("call_nobody", "touch refused.txt"),  # a client without elicitation
    text("could not"),
    text("resumed answer"),  # A again, from a new server process
]


class Mock:
    def __init__(self, tmp: Path) -> None:
        script = tmp / "mock-script.json"
        script.write_text(json.dumps({"replies": REPLIES}))
        self.proc = subprocess.Popen(
            [str(MOCK_LLM_BIN), "--script", str(script), "--port", "0", "--exit-on-stdin-eof"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        m = re.match(r"^MOCK_LISTENING (\S+)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError(f"mock-llm did not start: {line!r}")
        self.url = m.group(1)

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class World:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.repo = tmp / "repo"
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=False)
        self.home = tmp / "home"
        self.home.mkdir()
        self.mock = Mock(tmp)

    def server(self) -> StdioServerParameters:
        overrides = [
            'model_provider="mock"',
            f'model_providers.mock={{name="mock", base_url="{self.mock.url}", wire_api="chat", retry_base_delay_ms=10}}',
            'model="mock-model"',
        ]
        args = ["mcp-server"]
        for o in overrides:
            args += ["-c", o]
        env = dict(os.environ)
        env.update({"OPENINTERPRETER_HOME": str(self.home), "CODEX_HOME": "", "OPENINTERPRETER_MODEL": "",
                    "OPENINTERPRETER_PROVIDER": "", "OPENINTERPRETER_HARNESS": ""})
        return StdioServerParameters(command=str(INTERPRETER_BIN), args=args, env=env, cwd=str(self.repo))


class CodexEvent(BaseModel):
    model_config = ConfigDict(extra="allow")


class Events:
    """Every `codex/event` notification, in arrival order."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    async def on(self, params: CodexEvent) -> None:
        self.items.append(params.model_dump(by_alias=True))

    def of(self, thread_id: str) -> list[dict[str, Any]]:
        return [e for e in self.items if e["_meta"]["threadId"] == thread_id]

    def types(self, thread_id: str) -> list[str]:
        return [e["msg"]["type"] for e in self.of(thread_id)]


def structured(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    s = result.structured_content
    assert isinstance(s, dict) and isinstance(s.get("threadId"), str), result
    assert result.content and result.content[0].text == s["content"], result
    return s


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, result
    return " ".join(c.text for c in result.content)


async def threads_replies_progress_and_approvals(world: World) -> str:
    events = Events()
    asked: list[types.ElicitRequestFormParams] = []
    answers = ["accept", "decline"]

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=answers[len(asked) - 1], content={} if len(asked) == 1 else None)

    async def roots(_ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=world.repo.as_uri())])

    async with stdio_client(world.server()) as (read, write):
        async with ClientSession(
            read,
            write,
            elicitation_callback=elicit,
            list_roots_callback=roots,
            notification_bindings=[NotificationBinding(method="codex/event", params_type=CodexEvent, handler=events.on)],
        ) as session:
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == {"codex", "codex-reply"}, tools
            assert tools["codex"].input_schema["required"] == ["prompt"]
            assert {"prompt", "cwd", "model", "profile", "sandbox", "approval-policy", "config"} <= set(
                tools["codex"].input_schema["properties"]
            )
            assert "threadId" in tools["codex-reply"].input_schema["properties"]

            # Two threads at once, one with a progress token.
            progress: list[tuple[float, str | None]] = []

            async def on_progress(p: float, _total: float | None, message: str | None) -> None:
                progress.append((p, message))

            async def busy_reply() -> str:
                # A thread's events flow only while a call runs on it: this one is busy.
                while not events.items:
                    await asyncio.sleep(0.01)
                busy = events.items[0]["_meta"]["threadId"]
                return error_text(await session.call_tool("codex-reply", {"threadId": busy, "prompt": "meanwhile"}))

            a, b, busy = await asyncio.gather(
                session.call_tool("codex", {"prompt": "first task"}, progress_callback=on_progress),
                session.call_tool("codex", {"prompt": "second task", "cwd": str(world.repo)}),
                busy_reply(),
            )
            assert "is running another call" in busy, busy
            a, b = structured(a), structured(b)
            assert a["threadId"] != b["threadId"]
            assert a["content"] == b["content"] == "working done", (a, b)
            # Each turn waits 1.5 s in the model: both started before either ended.
            order = [(e["msg"]["type"], e["_meta"]["threadId"]) for e in events.items]
            first_end = min(order.index(("turn_ended", t["threadId"])) for t in (a, b))
            last_start = max(order.index(("turn_started", t["threadId"])) for t in (a, b))
            assert last_start < first_end, f"the threads ran one after the other: {order}"
            for t in (a, b):
                kinds = events.types(t["threadId"])
                assert "turn_started" in kinds and "agent_message" in kinds and "turn_ended" in kinds, kinds
            assert progress and all(m for _, m in progress), progress
            assert [p for p, _ in progress] == sorted(p for p, _ in progress), progress

            # A reply continues the thread.
            r = structured(await session.call_tool("codex-reply", {"threadId": a["threadId"], "prompt": "more"}))
            assert r == {"threadId": a["threadId"], "content": "second answer"}, r

            # Approvals: asked as elicitations; accepted runs, declined does not.
            c = structured(
                await session.call_tool(
                    "codex",
                    {"prompt": "make a file", "approval-policy": "untrusted", "sandbox": "workspace-write"},
                )
            )
            assert c["content"] == "created it", c
            assert (world.repo / "approved.txt").exists()
            assert len(asked) == 1 and "touch approved.txt" in asked[0].message, asked
            assert asked[0].meta and asked[0].meta.get("threadId") == c["threadId"], asked[0]
            d = structured(await session.call_tool("codex-reply", {"conversationId": c["threadId"], "prompt": "again"}))
            assert d["content"] == "left it", d
            assert len(asked) == 2 and not (world.repo / "declined.txt").exists()

            await hostile_calls(session, world)
            # Still serving.
            assert len((await session.list_tools()).tools) == 2
    return a["threadId"]


async def hostile_calls(session: ClientSession, world: World) -> None:
    e = error_text(await session.call_tool("codex-reply", {"threadId": "0190-not-ours", "prompt": "hi"}))
    assert "no such thread" in e, e
    e = error_text(await session.call_tool("codex-reply", {"threadId": "../../etc/passwd", "prompt": "hi"}))
    assert "no such thread" in e, e
    e = error_text(await session.call_tool("codex-reply", {"prompt": "hi"}))
    assert "threadId" in e, e
    e = error_text(await session.call_tool("codex", {"prompt": "hi", "cwd": str(world.repo / "missing")}))
    assert "missing" in e, e
    e = error_text(await session.call_tool("codex", {"prompt": "hi", "cwd": "/"}))
    assert "outside the client's roots" in e, e
    e = error_text(await session.call_tool("codex", {"prompt": "hi", "sandbox": "wide-open"}))
    assert "sandbox" in e, e
    e = error_text(await session.call_tool("codex", {"prompt": "x" * (2 * 1024 * 1024)}))
    assert "over the limit" in e, e
    try:
        await session.call_tool("codex", {"prompt": "y" * (100 * 1024 * 1024)})
        raise AssertionError("a 100 MB request was answered")
    except MCPError as err:
        assert "over the limit" in str(err), err
    try:
        await session.call_tool("no-such-tool", {})
        raise AssertionError("an unknown tool was called")
    except MCPError as err:
        assert "no-such-tool" in str(err), err


async def no_elicitation_refuses(world: World) -> None:
    async with stdio_client(world.server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = structured(
                await session.call_tool(
                    "codex", {"prompt": "make a file", "approval-policy": "untrusted", "sandbox": "workspace-write"}
                )
            )
            assert r["content"] == "could not", r
            assert not (world.repo / "refused.txt").exists()


async def resumed_by_a_new_server(world: World, thread_id: str) -> None:
    assert (world.home / "sessions" / f"{thread_id}.jsonl").is_file(), list((world.home / "sessions").iterdir())
    async with stdio_client(world.server()) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = structured(await session.call_tool("codex-reply", {"threadId": thread_id, "prompt": "and now?"}))
            assert r == {"threadId": thread_id, "content": "resumed answer"}, r


async def raw_json_rpc(world: World) -> None:
    params = world.server()
    proc = await asyncio.create_subprocess_exec(
        params.command, *params.args, env=params.env, cwd=params.cwd,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin and proc.stdout

    async def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")
        await proc.stdin.drain()

    async def answer() -> dict[str, Any]:
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert line, "the server closed stdout"
        return json.loads(line)

    await send(b"this is not json")
    m = await answer()
    assert m["error"]["code"] == -32700 and m.get("id") is None, m
    await send(b'{"jsonrpc":"2.0","id":"bad","method":42}')
    m = await answer()
    assert m["id"] == "bad" and m["error"]["code"] == -32600, m
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    await send(json.dumps(init).encode())
    m = await answer()
    assert m["id"] == 1 and m["result"]["serverInfo"]["name"] == "interpreter-mcp-server", m
    await send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    big = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":"' + b"z" * (20 * 1024 * 1024) + b'"}}}'
    await send(big)
    m = await answer()
    assert m["id"] == 2 and "over the limit" in m["error"]["message"], m
    await send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
    m = await answer()
    assert m["id"] == 3 and len(m["result"]["tools"]) == 2, m
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 20) == 0


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        try:
            thread_id = await threads_replies_progress_and_approvals(world)
            await no_elicitation_refuses(world)
            await resumed_by_a_new_server(world, thread_id)
            await raw_json_rpc(world)
        finally:
            world.mock.stop()
    print("mcp-server: all checks passed")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception:  # noqa: BLE001 - any failure fails the run
        import traceback

        traceback.print_exc()
        sys.exit(1)
