"""Questions for the user as `item/tool/requestUserInput`: Codex's `request_user_input` in the
native harness, Kimi Code's `AskUserQuestion`; the SDK's handler picks an option and the
answer reaches the next model request."""

from __future__ import annotations

import json

import pytest
from openai_codex.client import CodexClient
from openai_codex.generated.v2_all import TurnStatus

from conftest import request_text, run, text_reply

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


def test_a_question_is_a_server_request_and_the_pick_reaches_the_model(env, mode, answer_questions):
    env.start_mock([question_call(env), text_reply("Postgres it is.")])

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("set up a database")
        assert result.status == TurnStatus.completed
        assert result.final_response == "Postgres it is."
        [(method, params)] = answer_questions
        assert method == "item/tool/requestUserInput"
        assert params["itemId"] == "ask_1" and params["turnId"] == result.id and params["threadId"] == thread.id
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
