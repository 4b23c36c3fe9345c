"""Threads: resume, fork, list, archive, read, name, compact, models, and the same store as
`interpreter exec` and `interpreter acp`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time

import acp
from acp.schema import ClientCapabilities, Implementation

from conftest import INTERPRETER_BIN, open_side, request_text, run, text_reply


def test_a_thread_open_in_another_server_is_refused_and_can_be_forked(env, mode):
    """One writer per session: a second app-server cannot resume a thread the first one has
    open; the error names the holder and offers thread/fork, which works."""
    env.start_mock([text_reply("First answer."), text_reply("Fork answer.")])

    async def scenario(side):
        thread = await side.thread_start()
        await thread.run("remember the word PAPAYA")
        side2 = await open_side(mode, env)
        try:
            try:
                await side2.thread_resume(thread.id)
                raise AssertionError("a second writer was let in")
            except AssertionError:
                raise
            except Exception as refused:  # the SDK's error for a JSON-RPC error response
                message = str(refused)
            assert f"session `{thread.id}` is open in another interpreter (pid " in message, message
            assert "app-server)" in message and "thread/fork" in message, message
            fork = await side2.thread_fork(thread.id)
            forked = await fork.run("and in the fork?")
            assert forked.final_response == "Fork answer."
            assert "PAPAYA" in request_text(env.mock.requests()[1])
        finally:
            await side2.close()

    run(mode, env, scenario)


def test_resume_and_fork_keep_the_history(env, mode):
    env.start_mock([text_reply("First answer."), text_reply("Second answer."), text_reply("Fork answer.")])

    async def scenario(side):
        thread = await side.thread_start()
        await thread.run("remember the word PAPAYA")
        thread_id = thread.id
        await side.close()
        side2 = await open_side(mode, env)
        try:
            resumed = await side2.thread_resume(thread_id, model="mock-model-resumed")
            assert resumed.id == thread_id
            second = await resumed.run("which word?")
            assert second.final_response == "Second answer."
            assert "PAPAYA" in request_text(env.mock.requests()[1])
            assert env.mock.requests()[1]["body"]["model"] == "mock-model-resumed"
            fork = await side2.thread_fork(thread_id)
            assert fork.id != thread_id
            forked = await fork.run("and in the fork?")
            assert forked.final_response == "Fork answer."
            fork_request = request_text(env.mock.requests()[2])
            assert "PAPAYA" in fork_request and "which word?" in fork_request
            read = await fork.read(include_turns=True)
            assert len(read.thread.turns) == 3
            original = await resumed.read(include_turns=True)
            assert len(original.thread.turns) == 2, "the fork left the original alone"
        finally:
            await side2.close()

    run(mode, env, scenario)


def test_list_archive_and_unarchive(env, mode):
    env.start_mock([text_reply("one"), text_reply("two")])

    async def scenario(side):
        a = await side.thread_start()
        await a.run("first thread")
        b = await side.thread_start()
        await b.run("second thread")
        listed = await side.thread_list()
        ids = [t.id for t in listed.data]
        assert a.id in ids and b.id in ids
        assert next(t for t in listed.data if t.id == a.id).preview == "first thread"
        found = await side.thread_list(search_term="SECOND")
        assert [t.id for t in found.data] == [b.id]
        page = await side.thread_list(limit=1)
        assert len(page.data) == 1 and page.next_cursor is not None
        rest = await side.thread_list(limit=1, cursor=page.next_cursor)
        assert {page.data[0].id, rest.data[0].id} == {a.id, b.id}
        await side.thread_archive(a.id)
        assert a.id not in [t.id for t in (await side.thread_list()).data]
        assert [t.id for t in (await side.thread_list(archived=True)).data] == [a.id]
        back = await side.thread_unarchive(a.id)
        assert back.id == a.id
        assert a.id in [t.id for t in (await side.thread_list()).data]

    run(mode, env, scenario)


def test_read_with_turns_and_name(env, mode):
    env.start_mock([text_reply("Answer one."), text_reply("Answer two.")])

    async def scenario(side):
        thread = await side.thread_start()
        first = await thread.run("question one")
        second = await thread.run("question two")
        read = await thread.read(include_turns=True)
        turns = read.thread.turns
        assert [t.id for t in turns] == [first.id, second.id]
        kinds = [[i.root.type for i in t.items] for t in turns]
        assert kinds == [["userMessage", "agentMessage"], ["userMessage", "agentMessage"]]
        assert turns[1].items[1].root.text == "Answer two."
        assert (await thread.read()).thread.turns == []
        await thread.set_name("Numbered questions")
        for _ in range(100):
            if (await thread.read()).thread.name == "Numbered questions":
                break
            await asyncio.sleep(0.02)
        assert (await thread.read()).thread.name == "Numbered questions"
        thread_id = thread.id
        await side.close()
        side2 = await open_side(mode, env)
        try:
            listed = await side2.thread_list()
            assert next(t for t in listed.data if t.id == thread_id).name == "Numbered questions"
            # Not loaded in this process: the turns come from the store.
            stored = side2.client.thread_read(thread_id, include_turns=True)
            assert [len(t.items) for t in stored.thread.turns] == [2, 2]
            assert stored.thread.status.root.type == "notLoaded"
        finally:
            await side2.close()

    run(mode, env, scenario)


def test_compact_summarizes_the_thread(env, mode):
    env.start_mock(
        [
            text_reply("A long answer."),
            text_reply("## Task\nHANDOFF SUMMARY MARKER"),
            text_reply("After compaction."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        await thread.run("do something long")
        await thread.compact()
        await asyncio.to_thread(env.mock.wait_for_requests, 2)
        for _ in range(200):
            if (await thread.read()).thread.status.root.type == "idle":
                break
            await asyncio.sleep(0.02)
        after = await thread.run("go on")
        assert after.final_response == "After compaction."
        assert "HANDOFF SUMMARY MARKER" in request_text(env.mock.requests()[2])

    run(mode, env, scenario)


def test_models_come_from_the_catalog(env, mode):
    env.start_mock([])

    async def scenario(side):
        models = await side.models()
        default = [m for m in models.data if m.is_default]
        assert [m.model for m in default] == ["mock-model"]

    run(mode, env, scenario)


def exec_resume(env, thread_id: str, prompt: str) -> list[dict]:
    args = [
        str(INTERPRETER_BIN),
        "-c", 'model_provider="mock"',
        "-c", f'model_providers.mock={{name="mock", base_url="{env.mock.url}", wire_api="{env.wire}"}}',
        "-c", 'model="mock-model"',
        "exec", "--json", "resume", thread_id, prompt,
    ]
    if env.harness:
        args[1:1] = ["-c", f'harness="{env.harness}"']
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENINTERPRETER_", "CODEX_"))}
    out = subprocess.run(
        args, cwd=env.repo, env={**clean, "OPENINTERPRETER_HOME": str(env.home)},
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


class QuietClient:
    """An ACP client that only collects updates."""

    def __init__(self) -> None:
        self.updates = []

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    async def request_permission(self, *args, **kwargs):
        raise acp.RequestError.method_not_found("session/request_permission")

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        return None


async def acp_load(env, thread_id: str) -> str:
    """Loads the thread in `interpreter acp` (as Zed does) and returns the replayed text."""
    client = QuietClient()
    args = [
        "acp",
        "-c", 'model_provider="mock"',
        "-c", f'model_providers.mock={{name="mock", base_url="{env.mock.url}", wire_api="{env.wire}"}}',
        "-c", 'model="mock-model"',
    ]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENINTERPRETER_", "CODEX_"))}
    async with acp.spawn_agent_process(
        client, str(INTERPRETER_BIN), *args, env={**clean, "OPENINTERPRETER_HOME": str(env.home)}, cwd=str(env.repo)
    ) as (conn, _proc):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="app-server-round-trip", version="0.0.1"),
        )
        await conn.load_session(session_id=thread_id, cwd=str(env.repo), mcp_servers=[])
    return json.dumps([u.model_dump(by_alias=True, exclude_none=True) for u in client.updates])


def test_threads_are_the_sessions_of_exec_and_acp(env, mode):
    env.start_mock([text_reply("From Python."), text_reply("From exec."), text_reply("Python again.")])

    async def scenario(side):
        thread = await side.thread_start()
        await thread.run("started in python")
        thread_id = thread.id
        await side.close()
        events = await asyncio.to_thread(exec_resume, env, thread_id, "continued in exec")
        assert events[0] == {"type": "thread.started", "thread_id": thread_id}
        assert any(e.get("item", {}).get("text") == "From exec." for e in events)
        replay = await acp_load(env, thread_id)
        assert "started in python" in replay and "From exec." in replay
        side2 = await open_side(mode, env)
        try:
            back = await side2.thread_resume(thread_id)
            result = await back.run("back in python")
            assert result.final_response == "Python again."
            turns = (await back.read(include_turns=True)).thread.turns
            texts = [i.root.text for t in turns for i in t.items if i.root.type == "agentMessage"]
            assert texts == ["From Python.", "From exec.", "Python again."]
        finally:
            await side2.close()

    run(mode, env, scenario)
