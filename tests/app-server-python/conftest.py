"""The official Python Codex SDK (`openai-codex`) driving `interpreter app-server`.

Every test runs against the scripted mock model (`mock-llm`), once per variant: the Chat
Completions wire, the Responses wire, and the Kimi Code harness. Every message the server
sends is validated with the SDK's own generated pydantic models in strict mode (unknown
fields are allowed; a missing or mistyped field fails the test).

Binaries: INTERPRETER_BIN and MOCK_LLM_BIN, else target/debug/{interpreter,mock-llm}.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from openai_codex import AsyncCodex, Codex, CodexConfig
from openai_codex.client import CodexClient
from openai_codex.generated import v2_all as v2
from openai_codex.generated.notification_registry import NOTIFICATION_MODELS

ROOT = Path(__file__).resolve().parents[2]
INTERPRETER_BIN = Path(os.environ.get("INTERPRETER_BIN") or ROOT / "target/debug/interpreter").resolve()
MOCK_LLM_BIN = Path(os.environ.get("MOCK_LLM_BIN") or ROOT / "target/debug/mock-llm").resolve()

# (wire, harness): the harness decides the shell tool's name.
VARIANTS = {
    "chat": ("chat", None),
    "responses": ("responses", None),
    "kimi-code": ("chat", "kimi-code"),
}

RESPONSE_MODELS = {
    "thread/start": v2.ThreadStartResponse,
    "thread/resume": v2.ThreadResumeResponse,
    "thread/fork": v2.ThreadForkResponse,
    "thread/read": v2.ThreadReadResponse,
    "thread/list": v2.ThreadListResponse,
    "thread/archive": v2.ThreadArchiveResponse,
    "thread/unarchive": v2.ThreadUnarchiveResponse,
    "thread/name/set": v2.ThreadSetNameResponse,
    "thread/compact/start": v2.ThreadCompactStartResponse,
    "turn/start": v2.TurnStartResponse,
    "turn/interrupt": v2.TurnInterruptResponse,
    "turn/steer": v2.TurnSteerResponse,
    "review/start": v2.ReviewStartResponse,
    "model/list": v2.ModelListResponse,
    "account/read": v2.GetAccountResponse,
    "account/login/start": v2.LoginAccountResponse,
    "account/logout": v2.LogoutAccountResponse,
    "mcpServerStatus/list": v2.ListMcpServerStatusResponse,
    "config/mcpServer/reload": v2.McpServerRefreshResponse,
}

# Server requests have no generated model in the SDK; these are the schema's required fields.
SERVER_REQUESTS = {
    "item/commandExecution/requestApproval": {"threadId": str, "turnId": str, "itemId": str, "startedAtMs": int},
    "item/fileChange/requestApproval": {"threadId": str, "turnId": str, "itemId": str, "startedAtMs": int},
    "item/tool/requestUserInput": {"threadId": str, "turnId": str, "itemId": str, "questions": list},
}


class Violations:
    """Messages that failed validation, reported when the test ends."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.lock = threading.Lock()

    def add(self, what: str) -> None:
        with self.lock:
            self.items.append(what)


def _strict(model: Any, payload: Any) -> None:
    model.model_validate_json(json.dumps(payload), strict=True)


def check_message(client: CodexClient, msg: dict[str, Any], violations: Violations) -> None:
    """Validates one message from the server against the SDK's models."""
    sent: dict[str, str] = client.__dict__.setdefault("_sent_methods", {})
    try:
        if "method" in msg and "id" in msg:
            required = SERVER_REQUESTS.get(msg["method"])
            if required is None:
                raise AssertionError(f"unknown server request {msg['method']}")
            params = msg.get("params") or {}
            for field, kind in required.items():
                if not isinstance(params.get(field), kind) or isinstance(params.get(field), bool):
                    raise AssertionError(f"{msg['method']}: `{field}` missing or not {kind.__name__}")
        elif "method" in msg:
            model = NOTIFICATION_MODELS.get(msg["method"])
            if model is None:
                raise AssertionError(f"unknown notification {msg['method']}")
            _strict(model, msg.get("params") or {})
        else:
            method = sent.get(msg.get("id"))
            if "error" in msg:
                err = msg["error"]
                assert isinstance(err.get("code"), int) and isinstance(err.get("message"), str), msg
            elif method == "initialize":
                for field in ("userAgent", "codexHome", "platformFamily", "platformOs"):
                    assert isinstance(msg["result"].get(field), str), f"initialize: {field}"
                assert isinstance(msg["result"]["serverInfo"]["version"], str)
            elif method in RESPONSE_MODELS:
                _strict(RESPONSE_MODELS[method], msg["result"])
            elif method is None:
                raise AssertionError(f"a response to no request: {msg}")
    except Exception as e:  # noqa: BLE001 - every failure is reported
        violations.add(f"{type(e).__name__}: {e}\n  message: {json.dumps(msg)[:2000]}")


@pytest.fixture(autouse=True)
def validated(monkeypatch: pytest.MonkeyPatch):
    """Wraps the SDK's transport so every message is checked; fails the test on violations."""
    violations = Violations()
    read, write = CodexClient._read_message, CodexClient._write_message

    def checked_read(self: CodexClient) -> dict[str, Any]:
        msg = read(self)
        check_message(self, msg, violations)
        return msg

    def recorded_write(self: CodexClient, payload: dict[str, Any]) -> None:
        if "method" in payload and "id" in payload:
            self.__dict__.setdefault("_sent_methods", {})[payload["id"]] = payload["method"]
        write(self, payload)

    monkeypatch.setattr(CodexClient, "_read_message", checked_read)
    monkeypatch.setattr(CodexClient, "_write_message", recorded_write)
    yield violations
    assert not violations.items, "messages that fail the SDK's models:\n" + "\n".join(violations.items)


class Mock:
    """A running mock-llm serving `script`."""

    def __init__(self, script: dict[str, Any], workdir: Path) -> None:
        path = workdir / "mock-script.json"
        path.write_text(json.dumps(script))
        self.proc = subprocess.Popen(
            [str(MOCK_LLM_BIN), "--script", str(path), "--port", "0", "--exit-on-stdin-eof"],
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
        self.origin = re.match(r"^(https?://[^/]+)", self.url).group(1)

    def requests(self) -> list[dict[str, Any]]:
        """The model requests received so far, oldest first."""
        with urllib.request.urlopen(f"{self.origin}/_mock/requests", timeout=5) as r:
            reqs = json.load(r)
        return [q for q in reqs if q["method"] == "POST" and q["path"].endswith(("/chat/completions", "/responses"))]

    def wait_for_requests(self, n: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests()) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"the mock got {len(self.requests())} requests, expected {n}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            if self.proc.stdin:
                self.proc.stdin.close()
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Env:
    """One test's world: a git repository, a home folder, the variant, and its mock."""

    def __init__(self, tmp: Path, variant: str) -> None:
        self.variant = variant
        self.wire, self.harness = VARIANTS[variant]
        self.repo = tmp / "repo"
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=False)
        self.home = tmp / "home"
        self.home.mkdir()
        self.tmp = tmp
        self.mock: Mock | None = None
        # More `--config` overrides, set by a test before it opens the SDK.
        self.extra_overrides: list[str] = []

    @property
    def shell_tool(self) -> str:
        return "Bash" if self.harness == "kimi-code" else "shell"

    def shell(self, call_id: str, command: str) -> dict[str, Any]:
        """A script reply: one shell call in this variant's harness."""
        return {"events": [{"tool_call": {"id": call_id, "name": self.shell_tool, "arguments": {"command": command}}}]}

    def start_mock(self, replies: list[dict[str, Any]]) -> Mock:
        self.mock = Mock({"replies": replies}, self.tmp)
        return self.mock

    def config(self) -> CodexConfig:
        assert self.mock, "start the mock first"
        overrides = [
            'model_provider="mock"',
            f'model_providers.mock={{name="mock", base_url="{self.mock.url}", wire_api="{self.wire}", retry_base_delay_ms=10}}',
            'model="mock-model"',
        ]
        if self.harness:
            overrides.append(f'harness="{self.harness}"')
        overrides += self.extra_overrides
        env = {"OPENINTERPRETER_HOME": str(self.home), "CODEX_HOME": ""}
        for var in ("OPENINTERPRETER_MODEL", "OPENINTERPRETER_PROVIDER", "OPENINTERPRETER_HARNESS"):
            env[var] = ""
        return CodexConfig(
            codex_bin=str(INTERPRETER_BIN),
            config_overrides=tuple(overrides),
            cwd=str(self.repo),
            env=env,
        )


@pytest.fixture(params=list(VARIANTS))
def env(request: pytest.FixtureRequest, tmp_path: Path):
    e = Env(tmp_path, request.param)
    yield e
    if e.mock:
        e.mock.stop()


# The same scenario through both faces of the SDK: `Codex` (blocking calls) and `AsyncCodex`.
# Scenarios are written once as coroutines; the sync side calls the blocking API directly.


class SyncTurn:
    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.id = handle.id

    async def stream(self):
        for event in self.handle.stream():
            yield event

    async def steer(self, text: str):
        return self.handle.steer(text)

    async def interrupt(self):
        return self.handle.interrupt()

    async def run(self):
        return self.handle.run()


class SyncThread:
    def __init__(self, thread: Any) -> None:
        self.thread = thread
        self.id = thread.id

    async def run(self, input: Any, **kw: Any):
        return self.thread.run(input, **kw)

    async def turn(self, input: Any, **kw: Any) -> SyncTurn:
        return SyncTurn(self.thread.turn(input, **kw))

    async def read(self, include_turns: bool = False):
        return self.thread.read(include_turns=include_turns)

    async def set_name(self, name: str):
        return self.thread.set_name(name)

    async def compact(self):
        return self.thread.compact()


class SyncSide:
    """The blocking SDK behind awaitable calls."""

    mode = "sync"

    def __init__(self, config: CodexConfig) -> None:
        self.codex = Codex(config)
        self.client = self.codex._client

    async def close(self) -> None:
        self.codex.close()

    async def thread_start(self, **kw: Any) -> SyncThread:
        return SyncThread(self.codex.thread_start(**kw))

    async def thread_resume(self, thread_id: str, **kw: Any) -> SyncThread:
        return SyncThread(self.codex.thread_resume(thread_id, **kw))

    async def thread_fork(self, thread_id: str, **kw: Any) -> SyncThread:
        return SyncThread(self.codex.thread_fork(thread_id, **kw))

    async def thread_list(self, **kw: Any):
        return self.codex.thread_list(**kw)

    async def thread_archive(self, thread_id: str):
        return self.codex.thread_archive(thread_id)

    async def thread_unarchive(self, thread_id: str) -> SyncThread:
        return SyncThread(self.codex.thread_unarchive(thread_id))

    async def models(self):
        return self.codex.models()

    async def next_notification(self):
        return self.client.next_notification()


class AsyncThreadSide:
    def __init__(self, thread: Any) -> None:
        self.thread = thread
        self.id = thread.id

    async def run(self, input: Any, **kw: Any):
        return await self.thread.run(input, **kw)

    async def turn(self, input: Any, **kw: Any):
        return await self.thread.turn(input, **kw)

    async def read(self, include_turns: bool = False):
        return await self.thread.read(include_turns=include_turns)

    async def set_name(self, name: str):
        return await self.thread.set_name(name)

    async def compact(self):
        return await self.thread.compact()


class AsyncSide:
    """`AsyncCodex` as it is."""

    mode = "async"

    def __init__(self, config: CodexConfig) -> None:
        self.codex = AsyncCodex(config)

    async def open(self) -> None:
        await self.codex.__aenter__()
        self.client = self.codex._client._sync

    async def close(self) -> None:
        await self.codex.close()

    async def thread_start(self, **kw: Any):
        return AsyncThreadSide(await self.codex.thread_start(**kw))

    async def thread_resume(self, thread_id: str, **kw: Any):
        return AsyncThreadSide(await self.codex.thread_resume(thread_id, **kw))

    async def thread_fork(self, thread_id: str, **kw: Any):
        return AsyncThreadSide(await self.codex.thread_fork(thread_id, **kw))

    async def thread_list(self, **kw: Any):
        return await self.codex.thread_list(**kw)

    async def thread_archive(self, thread_id: str):
        return await self.codex.thread_archive(thread_id)

    async def thread_unarchive(self, thread_id: str):
        return AsyncThreadSide(await self.codex.thread_unarchive(thread_id))

    async def models(self):
        return await self.codex.models()

    async def next_notification(self):
        return await asyncio.to_thread(self.client.next_notification)


async def open_side(mode: str, env: Env):
    if mode == "sync":
        return SyncSide(env.config())
    side = AsyncSide(env.config())
    await side.open()
    return side


def run(mode: str, env: Env, scenario) -> None:
    """Runs `scenario(side)` with a fresh SDK client of `mode`, then closes it."""

    async def main() -> None:
        side = await open_side(mode, env)
        try:
            await asyncio.wait_for(scenario(side), 60)
        finally:
            await side.close()

    asyncio.run(main())


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def request_text(req: dict[str, Any]) -> str:
    """Everything a model request carried, as text (for `in` checks)."""
    return json.dumps(req["body"])


def text_reply(text: str, **extra: Any) -> dict[str, Any]:
    return {"events": [{"text": text}], "usage": {"prompt_tokens": 20, "completion_tokens": 7}, **extra}
