"""Turns: run, stream, interrupt, steer, failures, inputs, approvals, two threads at once."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from openai_codex import ApprovalMode, ImageInput, LocalImageInput, SkillInput, TextInput
from openai_codex.client import CodexClient
from openai_codex.generated.v2_all import TurnStatus

from conftest import request_text, run, text_reply

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_run_returns_the_final_answer_and_usage(env, mode):
    env.start_mock(
        [
            {
                "events": [{"reasoning": "Thinking it over."}, {"text": "Hello "}, {"text": "from the mock."}],
                "usage": {"prompt_tokens": 30, "completion_tokens": 9, "cached_tokens": 4},
            }
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("Say hello")
        assert result.status == TurnStatus.completed
        assert result.final_response == "Hello from the mock."
        assert result.usage is not None
        assert result.usage.total.input_tokens == 30
        assert result.usage.total.cached_input_tokens == 4
        assert result.usage.total.total_tokens == 39
        kinds = [item.root.type for item in result.items]
        assert kinds == ["userMessage", "reasoning", "agentMessage"], kinds
        assert result.items[2].root.phase.value == "final_answer"

    run(mode, env, scenario)


def test_stream_yields_deltas_then_completion(env, mode):
    env.start_mock([{"events": [{"text": "one "}, {"text": "two "}, {"text": "three"}]}])

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("count")
        methods, deltas = [], []
        async for event in turn.stream():
            methods.append(event.method)
            if event.method == "item/agentMessage/delta":
                deltas.append(event.payload.delta)
        assert "".join(deltas) == "one two three"
        assert methods[0] == "turn/started"
        assert methods[-1] == "turn/completed"
        assert methods.index("item/started") < methods.index("item/agentMessage/delta")

    run(mode, env, scenario)


def test_interrupt_then_a_follow_up_run(env, mode):
    env.start_mock(
        [
            {"events": [{"text": "Working on it. "}, {"delay_ms": 20000}, {"text": "never sent"}]},
            text_reply("Back after the interrupt."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("a long task")
        status = None
        interrupted = False
        async for event in turn.stream():
            if event.method == "item/agentMessage/delta" and not interrupted:
                interrupted = True
                await turn.interrupt()
            if event.method == "turn/completed":
                status = event.payload.turn.status
        assert status == TurnStatus.interrupted
        again = await thread.run("go on")
        assert again.final_response == "Back after the interrupt."

    run(mode, env, scenario)


def test_steer_joins_the_running_turn(env, mode):
    env.start_mock([env.shell("call_1", "sleep 1"), text_reply("Steered answer.")])

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("start a task")
        steered = None
        final = None
        async for event in turn.stream():
            if event.method == "item/started" and event.payload.item.root.type == "commandExecution" and not steered:
                steered = await turn.steer("also mention the steer")
            if event.method == "item/completed" and event.payload.item.root.type == "agentMessage":
                final = event.payload.item.root.text
            if event.method == "turn/completed":
                assert event.payload.turn.status == TurnStatus.completed
        assert steered is not None and steered.turn_id == turn.id
        assert final == "Steered answer."
        last = env.mock.requests()[-1]
        assert "also mention the steer" in request_text(last)

    run(mode, env, scenario)


def test_a_failed_turn_raises_with_the_providers_message(env, mode):
    env.start_mock([{"status": 400, "error": {"type": "invalid_request_error", "message": "mock says the prompt is too odd"}}])

    async def scenario(side):
        thread = await side.thread_start()
        with pytest.raises(RuntimeError, match="mock says the prompt is too odd"):
            await thread.run("hello")

    run(mode, env, scenario)


def test_image_and_local_image_inputs_reach_the_model(env, mode):
    env.start_mock([text_reply("I see a data URL."), text_reply("I see a file.")])
    png = env.tmp / "dot.png"
    png.write_bytes(PNG)
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()

    async def scenario(side):
        thread = await side.thread_start()
        first = await thread.run([TextInput("what is this?"), ImageInput(data_url)])
        assert first.final_response == "I see a data URL."
        second = await thread.run([TextInput("and this?"), LocalImageInput(str(png))])
        assert second.final_response == "I see a file."
        reqs = env.mock.requests()
        assert data_url in request_text(reqs[0])
        # The local file went out as a data URL of its bytes.
        assert request_text(reqs[1]).count(data_url) >= 2
        user = second.items[0].root
        assert user.type == "userMessage" and user.content[1].root.type == "localImage"

    run(mode, env, scenario)


def test_a_skill_input_sends_the_skill(env, mode):
    skill = env.repo / ".agents/skills/greet/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: greet\ndescription: Greets the user warmly.\n---\nSKILL BODY MARKER: greet in French.\n"
    )
    env.start_mock([text_reply("Bonjour !")])

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run([SkillInput("greet", str(skill)), TextInput("please")])
        assert result.final_response == "Bonjour !"
        # The skill rides in its own user item, with its name and path, right before the
        # prompt, which is the last user item and holds the user's words alone.
        users = user_texts(env.mock.requests()[0]["body"])
        assert users[-1] == "please", users
        injected = users[-2]
        assert injected.startswith("<skill>\n<name>greet</name>\n<path>"), injected
        assert "SKILL.md</path>" in injected and "SKILL BODY MARKER" in injected
        assert injected.endswith("</skill>"), injected

    run(mode, env, scenario)


def user_texts(body: dict) -> list[str]:
    """The text of each user item of a Chat or Responses request, in order."""
    out = []
    for item in body.get("messages") or body.get("input") or []:
        if item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out.append("".join(part.get("text", "") for part in content))
    return out


@pytest.fixture
def decline_approvals(monkeypatch):
    """Answers every approval request `decline` and records them."""
    asked = []

    def handler(self, method, params):
        asked.append((method, params))
        return {"decision": "decline"}

    monkeypatch.setattr(CodexClient, "_default_approval_handler", handler)
    return asked


def test_a_declined_approval_runs_nothing(env, mode, decline_approvals):
    marker = env.repo / "ran.txt"
    env.start_mock([env.shell("call_1", "touch ran.txt && git push --force origin main"), text_reply("I did not push.")])

    async def scenario(side):
        thread = await side.thread_start(approval_mode=ApprovalMode.auto_review)
        result = await thread.run("force push please")
        assert result.final_response == "I did not push."
        command = next(i.root for i in result.items if i.root.type == "commandExecution")
        assert command.status.value == "declined"
        assert [m for m, _ in decline_approvals] == ["item/commandExecution/requestApproval"]
        params = decline_approvals[0][1]
        assert params["itemId"] == command.id and params["turnId"] == result.id
        assert "git push --force" in params["command"]
        assert not marker.exists(), "the declined command ran"
        # The model was told the call did not run.
        assert "call_1" in request_text(env.mock.requests()[1])

    run(mode, env, scenario)


def test_the_approval_policy_survives_resume(env, mode, decline_approvals):
    env.start_mock(
        [
            text_reply("Ready."),
            env.shell("call_1", "touch ran.txt && git push --force origin main"),
            text_reply("Refused, as the policy says."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start(approval_mode=ApprovalMode.deny_all)
        await thread.run("get ready")
        thread_id = thread.id
        await side.close()
        # A new process: the thread's policy comes from the store.
        side2 = await __import__("conftest").open_side(mode, env)
        try:
            resumed = side2.client.thread_resume(thread_id)
            assert resumed.approval_policy.root.value == "never"
            forked = side2.client.thread_fork(thread_id)
            assert forked.approval_policy.root.value == "never", "and across fork"
            again = await side2.thread_resume(thread_id)
            result = await again.run("force push")
            command = next(i.root for i in result.items if i.root.type == "commandExecution")
            assert command.status.value == "declined"
            assert decline_approvals == [], "never asks"
            assert not (env.repo / "ran.txt").exists()
        finally:
            await side2.close()

    run(mode, env, scenario)


def test_two_threads_interleave_and_are_routed_by_id(env, mode):
    env.start_mock(
        [
            {"delay_ms": 1500, "events": [{"text": "Answer for A."}]},
            text_reply("Answer for B."),
        ]
    )

    async def scenario(side):
        a = await side.thread_start()
        b = await side.thread_start()
        turn_a = await a.turn("question A")
        await asyncio.to_thread(env.mock.wait_for_requests, 1)
        turn_b = await b.turn("question B")
        result_b = await turn_b.run()
        result_a = await turn_a.run()
        assert result_b.final_response == "Answer for B."
        assert result_a.final_response == "Answer for A."
        assert result_a.id != result_b.id

    run(mode, env, scenario)


def test_turn_overrides_reach_the_request(env, mode):
    env.start_mock([text_reply(json.dumps({"answer": 42})), text_reply("plain")])
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"], "additionalProperties": False}

    async def scenario(side):
        thread = await side.thread_start()
        first = await thread.run("structured", output_schema=schema, model="mock-model-2")
        assert json.loads(first.final_response) == {"answer": 42}
        await thread.run("unstructured")
        reqs = env.mock.requests()
        assert "mock-model-2" in request_text(reqs[0]) and "\"answer\"" in request_text(reqs[0])
        # The schema held for its turn only; the model switch lasts.
        assert "\"answer\"" not in request_text(reqs[1]) and "mock-model-2" in request_text(reqs[1])

    run(mode, env, scenario)
