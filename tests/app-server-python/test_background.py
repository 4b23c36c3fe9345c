"""Background tasks, web searches and scheduled prompts as the Python SDK sees them: a task
is a `commandExecution` item with the task as its `processId`, in progress while it runs, its
output streamed as `item/commandExecution/outputDelta`, completed when it ends; a search is a
`webSearch` item; a scheduled prompt is a turn of its own."""

from __future__ import annotations

import json

import pytest

from openai_codex.generated import v2_all as v2

from conftest import run, text_reply
from test_protocol import Raw, mock_args


def tool_call(call_id: str, name: str, args: dict) -> dict:
    return {"events": [{"tool_call": {"id": call_id, "name": name, "arguments": args}}]}


def test_a_background_task_is_a_command_item_with_its_process_until_it_ends(env, mode):
    if env.harness != "kimi-code":
        pytest.skip("Bash with run_in_background is Kimi Code's (and Claude Code's)")
    env.start_mock(
        [
            tool_call(
                "c1",
                "Bash",
                {"command": "echo started; sleep 0.5; echo finished", "run_in_background": True, "description": "a job"},
            ),
            tool_call("c2", "TaskOutput", {"task_id": "b1", "block": True, "timeout": 30}),
            text_reply("The job finished."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("run the job in the background")
        started, deltas, completed = [], [], []
        async for event in turn.stream():
            if event.method == "item/started" and event.payload.item.root.type == "commandExecution":
                started.append(event.payload.item.root)
            if event.method == "item/commandExecution/outputDelta" and event.payload.item_id == "background-b1":
                deltas.append(event.payload.delta)
            if event.method == "item/completed" and event.payload.item.root.type == "commandExecution":
                completed.append(event.payload.item.root)
        task = [i for i in started if i.id == "background-b1"]
        assert len(task) == 1, started
        assert task[0].process_id == "b1" and task[0].status.value == "inProgress"
        assert "sleep 0.5" in task[0].command
        assert "finished" in "".join(deltas), deltas
        [done] = [i for i in completed if i.id == "background-b1"]
        assert done.status.value == "completed" and done.exit_code == 0
        assert "started" in done.aggregated_output and "finished" in done.aggregated_output
        assert done.duration_ms is not None and done.duration_ms >= 0
        # The Bash call itself answered at once, as an item of its own.
        assert any(i.id == "c1" for i in completed)

    run(mode, env, scenario)


def test_a_search_is_a_web_search_item(env, mode):
    if env.harness != "kimi-code":
        pytest.skip("WebSearch is Kimi Code's; native search is hosted (see tests/e2e/web.rs)")
    env.start_mock([tool_call("s1", "WebSearch", {"query": "ropey docs"}), text_reply("Found it.")])
    env.extra_overrides = ["web.allow_private=true", f'web.search_url="{env.mock.origin}/search"']

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("look it up")
        searches = [i.root for i in result.items if i.root.type == "webSearch"]
        assert len(searches) == 1, [i.root.type for i in result.items]
        assert searches[0].query == "ropey docs"
        assert searches[0].action.root.type == "search"
        assert result.final_response == "Found it."

    run(mode, env, scenario)


def test_a_scheduled_prompt_runs_as_a_turn_the_client_did_not_start(env):
    # On the wire: the SDK routes notifications to the turns it started, and this one it
    # did not start.
    if env.harness != "kimi-code":
        pytest.skip("CronCreate is Kimi Code's (and Claude Code's)")
    env.start_mock(
        [
            # Six fields (seconds first): every second, once.
            tool_call("c1", "CronCreate", {"cron": "* * * * * *", "prompt": "ping from cron", "recurring": False}),
            text_reply("scheduled"),
            text_reply("pong"),
        ]
    )
    raw = Raw(env, mock_args(env))
    try:
        raw.send({"id": 1, "method": "initialize", "params": {}})
        raw.recv()
        raw.send({"id": 2, "method": "thread/start", "params": {}})
        thread_id = raw.until(lambda m: m.get("id") == 2)[-1]["result"]["thread"]["id"]
        raw.send({"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "schedule a ping"}]}})
        seen = raw.until(lambda m: m.get("method") == "turn/completed")
        first = next(m for m in seen if m.get("id") == 3)["result"]["turn"]["id"]
        # The job fires on its own: turn/started, its answer, turn/completed.
        seen = raw.until(lambda m: m.get("method") == "turn/completed")
        started = next(m for m in seen if m.get("method") == "turn/started")
        v2.TurnStartedNotification.model_validate(started["params"])
        turn = started["params"]["turn"]["id"]
        assert turn != first and started["params"]["threadId"] == thread_id
        answers = [m["params"]["item"]["text"] for m in seen
                   if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "agentMessage"]
        assert answers == ["pong"]
        done = v2.TurnCompletedNotification.model_validate(seen[-1]["params"])
        assert done.turn.id == turn
        assert "ping from cron" in json.dumps(env.mock.requests()[2]["body"])
    finally:
        raw.close()
