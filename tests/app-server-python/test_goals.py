"""Thread goals: `thread/goal/set|get|clear` and their notifications. An active goal runs
turns on its own until the model marks it complete (`update_goal`) or its token budget runs
out; the SDK's own goal operation drives the first test."""

from __future__ import annotations

import asyncio
import time

from openai_codex.generated.v2_all import (
    ThreadGoalClearResponse,
    ThreadGoalGetResponse,
    ThreadGoalSetResponse,
    ThreadGoalStatus,
)

from conftest import request_text, run, text_reply


def tool_names(req: dict) -> list[str]:
    out = []
    for t in req["body"].get("tools") or []:
        out.append(t.get("name") or t.get("function", {}).get("name"))
    return out


def goal_tool(env):
    """The tool that marks the goal: Kimi Code has its own."""
    return "UpdateGoal" if env.harness == "kimi-code" else "update_goal"


def test_a_goal_runs_turns_until_the_model_marks_it_complete(env, mode):
    env.start_mock(
        [
            text_reply("Step one is in."),
            text_reply("Step two is in."),
            {"events": [{"tool_call": {"id": "g1", "name": goal_tool(env), "arguments": {"status": "complete"}}}]},
            text_reply("The goal is met."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        client = side.client

        def drive():
            state, first_turn = client.start_goal_operation(thread.id, "Add both steps")
            # The SDK marks the operation finished as notifications arrive, ahead of this
            # reader: read on until the turn that ended the goal has completed.
            turns, ended = [], False
            while True:
                event = state.next_notification()
                if event.method == "thread/goal/updated":
                    ended = event.payload.goal.status != ThreadGoalStatus.active
                if event.method == "turn/completed":
                    turns.append(event.payload.turn.id)
                    if ended:
                        break
            return state, first_turn, turns

        state, first_turn, turns = await asyncio.to_thread(drive)
        assert state.status == ThreadGoalStatus.complete
        assert state.is_finished() and len(turns) == 3 and turns[0] == first_turn, turns
        goal = client.request("thread/goal/get", {"threadId": thread.id}, response_model=ThreadGoalGetResponse).goal
        assert goal.status == ThreadGoalStatus.complete and goal.objective == "Add both steps"
        assert goal.tokens_used > 0 and goal.thread_id == thread.id
        requests = env.mock.requests()
        # Each goal turn starts from the objective; the model can mark it; nothing runs after.
        assert len(requests) == 4
        assert "Add both steps" in request_text(requests[0]) and goal_tool(env) in tool_names(requests[0])
        time.sleep(0.3)
        assert len(env.mock.requests()) == 4

    run(mode, env, scenario)


def test_a_goal_stops_at_its_token_budget(env, mode):
    # Each reply reports 27 tokens: the second turn crosses a budget of 50.
    env.start_mock([text_reply("Working."), text_reply("Still working."), text_reply("never asked")])

    async def scenario(side):
        thread = await side.thread_start()
        client = side.client

        def drive():
            client.request(
                "thread/goal/set",
                {"threadId": thread.id, "objective": "Keep going", "status": "active", "tokenBudget": 50},
                response_model=ThreadGoalSetResponse,
            )
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                goal = client.request(
                    "thread/goal/get", {"threadId": thread.id}, response_model=ThreadGoalGetResponse
                ).goal
                if goal.status != ThreadGoalStatus.active:
                    return goal
                time.sleep(0.05)
            raise AssertionError("the goal never stopped")

        goal = await asyncio.to_thread(drive)
        assert goal.status == ThreadGoalStatus.budget_limited, goal
        assert goal.tokens_used >= 50 and goal.token_budget == 50
        time.sleep(0.3)
        assert len(env.mock.requests()) == 2
        # Cleared, it is gone.
        cleared = client.request("thread/goal/clear", {"threadId": thread.id}, response_model=ThreadGoalClearResponse)
        assert cleared.cleared
        got = client.request("thread/goal/get", {"threadId": thread.id}, response_model=ThreadGoalGetResponse)
        assert got.goal is None

    run(mode, env, scenario)


def test_a_goal_persists_with_the_thread_and_resume_keeps_it(env, mode):
    env.start_mock([])

    thread_id = None

    async def first(side):
        nonlocal thread_id
        thread = await side.thread_start()
        thread_id = thread.id
        set_ = side.client.request(
            "thread/goal/set",
            {"threadId": thread.id, "objective": "Ship it", "status": "paused", "tokenBudget": 1000},
            response_model=ThreadGoalSetResponse,
        )
        assert set_.goal.status == ThreadGoalStatus.paused and set_.goal.token_budget == 1000

    async def second(side):
        await side.thread_resume(thread_id)
        goal = side.client.request(
            "thread/goal/get", {"threadId": thread_id}, response_model=ThreadGoalGetResponse
        ).goal
        assert goal is not None and goal.objective == "Ship it"
        assert goal.status == ThreadGoalStatus.paused and goal.token_budget == 1000
        # Paused: no turn ran, before or after the resume.
        assert env.mock.requests() == []

    run(mode, env, first)
    run(mode, env, second)


def test_a_goal_changed_while_its_turn_runs_is_answered_before_the_turn_ends(env, mode):
    # The goal turn's first answer (slow) calls a command; the change lands meanwhile and the
    # turn's next request carries the new objective.
    update = {"tool_call": {"id": "g1", "name": goal_tool(env), "arguments": {"status": "complete"}}}
    env.start_mock(
        [
            {**env.shell("c1", "true"), "delay_ms": 3000},
            text_reply("Turned to the second aim."),
            {"events": [update]},
            text_reply("Done."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        client = side.client

        def drive():
            state, _ = client.start_goal_operation(thread.id, "First aim")
            changed = client.request(
                "thread/goal/set",
                {"threadId": thread.id, "objective": "Second aim"},
                response_model=ThreadGoalSetResponse,
            )
            while state.next_notification().method != "turn/completed":
                pass
            return changed.goal

        goal = await asyncio.to_thread(drive)
        assert goal.objective == "Second aim" and goal.status == ThreadGoalStatus.active
        requests = env.mock.requests()
        assert "Second aim" not in request_text(requests[0])
        # Applied while the turn ran, not at its end: the turn's own next request has it.
        second = request_text(requests[1])
        assert "changed the thread's goal" in second and "Second aim" in second, second

    run(mode, env, scenario)
