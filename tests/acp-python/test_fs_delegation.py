"""File reads are delegated to the ACP client (editor buffers win over the disk).

Drives `interpreter acp` with the official Python ACP SDK (`agent-client-protocol`, import
`acp`) via `acp.spawn_agent_process`, against the scripted mock model `mock-llm`. The client
advertises `fs.readTextFile`; `notes.txt` on disk says "disk text" but the client's
`read_text_file` handler answers "UNSAVED BUFFER TEXT". The model calls `read_file` on
notes.txt: the agent must ask the client (absolute path) and hand the buffer text, not the
disk text, to the model.

Run (from the workspace root, after `cargo build -p interpreter -p interpreter-tests`):
    .venv-acp/bin/python tests/acp-python/test_fs_delegation.py
INTERPRETER_BIN / MOCK_LLM_BIN override the binaries (default target/debug/…).
Exits non-zero on failure. Plain asyncio, no test runner needed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import urllib.request
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
)

ROOT = Path(__file__).resolve().parents[2]
INTERPRETER_BIN = Path(os.environ.get("INTERPRETER_BIN") or ROOT / "target/debug/interpreter").resolve()
MOCK_LLM_BIN = Path(os.environ.get("MOCK_LLM_BIN") or ROOT / "target/debug/mock-llm").resolve()
TIMEOUT_S = 30

BUFFER_TEXT = "UNSAVED BUFFER TEXT"
DISK_TEXT = "disk text"


class Mock:
    """A running mock-llm; `requests()` returns what it recorded."""

    def __init__(self, proc: asyncio.subprocess.Process, base_url: str) -> None:
        self.proc = proc
        self.base_url = base_url
        self.origin = re.match(r"^(https?://[^/]+)", base_url).group(1)

    @classmethod
    async def start(cls, script: dict[str, Any], workdir: Path) -> "Mock":
        path = workdir / "mock-script.json"
        path.write_text(json.dumps(script))
        proc = await asyncio.create_subprocess_exec(
            str(MOCK_LLM_BIN), "--script", str(path), "--port", "0", "--exit-on-stdin-eof",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 10)
        m = re.match(rb"^MOCK_LISTENING (\S+)", line)
        if not m:
            proc.kill()
            raise RuntimeError(f"mock-llm did not start: {line!r}")
        return cls(proc, m.group(1).decode())

    def requests(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.origin}/_mock/requests", timeout=5) as r:
            reqs = json.load(r)
        return [q for q in reqs if q["method"] == "POST" and q["path"].endswith("/chat/completions")]

    async def stop(self) -> None:
        if self.proc.returncode is not None:
            return
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 2)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()


class BufferClient:
    """An editor-like client: its buffer for notes.txt differs from the disk."""

    def __init__(self) -> None:
        self.reads: list[dict[str, Any]] = []
        self.permissions: list[Any] = []
        self.updates: list[Any] = []

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.permissions.append(tool_call)
        opt = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=opt.option_id))

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def read_text_file(self, path, session_id, limit=None, line=None, **kwargs):
        self.reads.append({"path": path, "session_id": session_id, "line": line, "limit": limit})
        return ReadTextFileResponse(content=BUFFER_TEXT + "\n")

    async def write_text_file(self, content, path, session_id, **kwargs):
        raise acp.RequestError.method_not_found("fs/write_text_file")

    async def create_terminal(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("terminal/create")

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        return None


async def run(tmp: Path) -> None:
    home, work = tmp / "home", tmp / "work"
    home.mkdir()
    work.mkdir()
    notes = work / "notes.txt"
    notes.write_text(DISK_TEXT + "\n")

    mock = await Mock.start(
        {
            "replies": [
                {"events": [{"tool_call": {"id": "call_read", "name": "read_file",
                                           "arguments": json.dumps({"path": "notes.txt"})}}]},
                {"events": [{"text": "The notes say UNSAVED BUFFER TEXT."}]},
            ]
        },
        tmp,
    )
    stderr_path = tmp / "agent-stderr.log"
    try:
        with stderr_path.open("wb") as stderr:
            client = BufferClient()
            args = [
                "acp",
                "-c", 'model_provider="mock"',
                "-c", f'model_providers.mock={{base_url="{mock.base_url}", wire_api="chat", '
                      "retry_base_delay_ms=10, request_max_retries=1}",
                "-c", 'model="mock-model"',
            ]
            env = {k: v for k, v in os.environ.items() if not k.startswith("OPENINTERPRETER_")}
            env["OPENINTERPRETER_HOME"] = str(home)
            async with acp.spawn_agent_process(
                client, str(INTERPRETER_BIN), *args, env=env, cwd=str(work),
                transport_kwargs={"stderr": stderr},
            ) as (conn, _proc):
                init = await conn.initialize(
                    protocol_version=acp.PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=True, write_text_file=False), terminal=False
                    ),
                    client_info=Implementation(name="interpreter-acp-python-test", version="0.0.1"),
                )
                assert init.protocol_version == 1, init
                sess = await conn.new_session(cwd=str(work), mcp_servers=[])
                res = await conn.prompt(session_id=sess.session_id, prompt=[acp.text_block("what do my notes say?")])
                assert res.stop_reason == "end_turn", res

                # The agent asked the client, with the absolute path, for this session.
                assert len(client.reads) == 1, f"fs/read_text_file calls: {client.reads}"
                read = client.reads[0]
                assert os.path.isabs(read["path"]), read
                assert read["path"] == str(notes), f"{read['path']} != {notes}"
                assert read["session_id"] == sess.session_id, read
                assert client.permissions == [], "reading a file in the workspace must not ask"

                # The read tool call was shown and completed with the buffer text.
                calls = [u for u in client.updates if getattr(u, "tool_call_id", None) == "call_read"]
                assert calls and calls[0].session_update == "tool_call", calls
                assert calls[0].kind == "read", calls[0]
                assert calls[-1].status == "completed", calls[-1]
                shown = json.dumps([u.model_dump(by_alias=True, exclude_none=True) for u in calls])
                assert BUFFER_TEXT in shown, shown
                assert DISK_TEXT not in shown, shown

        # The model got the buffer, not the disk.
        reqs = mock.requests()
        assert len(reqs) == 2, f"{len(reqs)} model requests"
        tool_msgs = [m for m in reqs[1]["body"]["messages"] if m.get("role") == "tool"]
        assert len(tool_msgs) == 1, reqs[1]["body"]["messages"]
        assert tool_msgs[0]["tool_call_id"] == "call_read", tool_msgs[0]
        result = json.dumps(tool_msgs[0]["content"])
        assert BUFFER_TEXT in result, f"tool result lacks the buffer text: {result}"
        assert DISK_TEXT not in result, f"tool result has the disk text: {result}"
        assert DISK_TEXT not in json.dumps(reqs[1]["body"]), "the disk text reached the model"
        assert notes.read_text() == DISK_TEXT + "\n", "the file on disk changed"
    except BaseException:
        sys.stderr.write(f"--- agent stderr ---\n{stderr_path.read_text(errors='replace') if stderr_path.exists() else ''}\n")
        raise
    finally:
        await mock.stop()


def main() -> int:
    for b in (INTERPRETER_BIN, MOCK_LLM_BIN):
        if not b.exists():
            print(f"{b} not found: run `cargo build -p interpreter -p interpreter-tests`", file=sys.stderr)
            return 2
    tmp = Path(tempfile.mkdtemp(prefix="interp-acp-py-"))
    try:
        asyncio.run(asyncio.wait_for(run(tmp), TIMEOUT_S))
    except BaseException:
        traceback.print_exc()
        print("not ok - fs/read_text_file delegation (python SDK)")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"ok - fs/read_text_file delegation (python SDK agent-client-protocol {_sdk_version()})")
    return 0


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("agent-client-protocol")
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    sys.exit(main())
