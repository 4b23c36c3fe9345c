"""Questions for the user as `item/tool/requestUserInput`: Codex's `request_user_input` in the
native harness, Kimi Code's `AskUserQuestion`; the SDK's handler picks an option and the
answer reaches the next model request."""

from __future__ import annotations

import json

import pytest
from openai_codex.client import CodexClient
from openai_codex.generated.v2_all import TurnStatus

from conftest import Env, request_text, run, text_reply

OPTIONS = [{"label": "SQLite", "description": "a file"}, {"label": "Postgres", "description": "a server"}]


@pytest.fixture
def answer_questions(monkeypatch):
    """Answers `item/tool/requestUserInput` with the second option; records the requests."""
    asked = []

    def handler(self, method, params):
        asked.append((method, params))
        if method == "item/tool/requestUserInput":
            return {"answers": {q["id"]: {"answers": [q["options"][1]["label"]]} for q in params["questions"]}}
        return {"decision": "accept"}

    monkeypatch.setattr(CodexClient, "_default_approval_handler", handler)
    return asked


def question_call(env) -> dict:
    if env.harness == "kimi-code":
        name, args = "AskUserQuestion", {"questions": [{"question": "Which database?", "header": "DB", "options": OPTIONS}]}
    else:
        name, args = "request_user_input", {"questions": [{"id": "db", "header": "DB", "question": "Which database?", "options": OPTIONS}]}
    return {"events": [{"tool_call": {"id": "ask_1", "name": name, "arguments": args}}]}


async def ask_and_pick(side, answer_questions):
    """One turn whose question the fixture answers with the second option: the thread, the
    completed turn, and the params of the one `item/tool/requestUserInput` it sent."""
    thread = await side.thread_start()
    result = await thread.run("set up a database")
    assert result.status == TurnStatus.completed
    assert result.final_response == "Postgres it is."
    [(method, params)] = answer_questions
    assert method == "item/tool/requestUserInput" and params["itemId"] == "ask_1"
    return thread, result, params


def test_a_question_is_a_server_request_and_the_pick_reaches_the_model(env, mode, answer_questions):
    env.start_mock([question_call(env), text_reply("Postgres it is.")])

    async def scenario(side):
        thread, result, params = await ask_and_pick(side, answer_questions)
        assert params["turnId"] == result.id and params["threadId"] == thread.id
        q = params["questions"][0]
        assert q["question"] == "Which database?" and q["isOther"] is True
        assert [o["label"] for o in q["options"]] == ["SQLite", "Postgres"]
        sent = request_text(env.mock.requests()[1])
        if env.harness == "kimi-code":
            assert json.dumps('{"answers":{"Which database?":"Postgres"}}') in sent
        else:
            assert json.dumps('{"answers":{"db":{"answers":["Postgres"]}}}') in sent
        # The native harness lists request_user_input for a client that can answer it.
        tools = json.dumps(env.mock.requests()[0]["body"].get("tools", []))
        assert ("request_user_input" in tools) == (env.harness != "kimi-code")

    run(mode, env, scenario)


def test_a_subagent_is_a_collab_agent_item(env, mode):
    if env.harness != "kimi-code":
        pytest.skip("the native harness has no subagent tool")
    (env.repo / "notes.txt").write_text("the answer is 42\n")
    env.start_mock(
        [
            {"events": [{"tool_call": {"id": "a1", "name": "Agent", "arguments": {"description": "find the answer", "prompt": "Read notes.txt.", "subagent_type": "explore"}}}]},
            {"events": [{"tool_call": {"id": "r1", "name": "Read", "arguments": {"path": "notes.txt"}}}]},
            text_reply("The answer is 42."),
            text_reply("The subagent says 42."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("what is the answer?")
        assert result.status == TurnStatus.completed
        collab = [i.root for i in result.items if i.root.type == "collabAgentToolCall"]
        assert len(collab) == 1, [i.root.type for i in result.items]
        c = collab[0]
        assert c.tool.value == "spawnAgent" and c.status.value == "completed"
        assert c.sender_thread_id == thread.id
        [child] = c.receiver_thread_ids
        assert child != thread.id
        state = c.agents_states[child]
        assert state.status.value == "completed" and state.message == "The answer is 42."

    run(mode, env, scenario)


def test_claude_codes_ask_user_question_is_the_same_request(tmp_path, mode, answer_questions):
    """The claude-code harness's `AskUserQuestion` (Claude Code's shape, ids q1, q2, …) through
    the same server request; the answer reaches the model in Claude Code's words."""
    env = Env(tmp_path, "chat")
    env.harness = "claude-code"
    try:
        args = {"questions": [{"question": "Which database?", "header": "DB", "multiSelect": False, "options": OPTIONS}]}
        env.start_mock([{"events": [{"tool_call": {"id": "ask_1", "name": "AskUserQuestion", "arguments": args}}]}, text_reply("Postgres it is.")])

        async def scenario(side):
            _, _, params = await ask_and_pick(side, answer_questions)
            [q] = params["questions"]
            assert (q["id"], q["header"], q["question"]) == ("q1", "DB", "Which database?")
            assert [o["label"] for o in q["options"]] == ["SQLite", "Postgres"]
            sent = request_text(env.mock.requests()[1])
            said = 'User has answered your questions: "Which database?"="Postgres".'
            assert json.dumps(said)[1:-1] in sent, sent

        run(mode, env, scenario)
    finally:
        if env.mock:
            env.mock.stop()
