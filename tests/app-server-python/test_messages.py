"""What the model said, as it said it: one agentMessage per message with its phase, one delta
per delta the provider sent, and steering that keeps the answer in flight."""

from __future__ import annotations

import asyncio

import pytest

from conftest import request_text, run, text_reply


def responses_only(env) -> None:
    # Phases and separate message items are the Responses wire's; Chat has one message.
    if env.wire != "responses":
        pytest.skip("message phases exist on the Responses wire only")


def agent_messages(result) -> list[tuple[str, str | None]]:
    out = []
    for item in result.items:
        item = item.root
        if item.type == "agentMessage":
            out.append((item.text, item.phase.value if item.phase else None))
    return out


def test_two_messages_are_two_items_with_their_phases(env, mode):
    responses_only(env)
    env.start_mock(
        [
            {
                "events": [
                    {"message": {"text": "Thinking out loud first.", "phase": "commentary"}},
                    {"message": {"text": "The final answer.", "phase": "final_answer"}},
                ]
            }
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("answer me")
        assert agent_messages(result) == [
            ("Thinking out loud first.", "commentary"),
            ("The final answer.", "final_answer"),
        ]
        assert result.final_response == "The final answer."

    run(mode, env, scenario)


def test_commentary_alone_is_no_final_answer(env, mode):
    responses_only(env)
    env.start_mock([{"events": [{"message": {"text": "Still looking.", "phase": "commentary"}}]}])

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("answer me")
        assert agent_messages(result) == [("Still looking.", "commentary")]
        assert result.final_response is None

    run(mode, env, scenario)


def test_an_empty_last_message_is_an_empty_final_answer(env, mode):
    responses_only(env)
    env.start_mock(
        [
            {
                "events": [
                    {"message": {"text": "Done with the edit.", "phase": "commentary"}},
                    {"message": {"deltas": [], "phase": "final_answer"}},
                ]
            }
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        result = await thread.run("answer me")
        assert agent_messages(result) == [
            ("Done with the edit.", "commentary"),
            ("", "final_answer"),
        ]
        assert result.final_response == ""

    run(mode, env, scenario)


async def deltas_of(turn) -> list[tuple[str, str, str]]:
    """(threadId, itemId, delta) of each agentMessage delta of a turn, in order."""
    out = []
    async for event in turn.stream():
        if event.method == "item/agentMessage/delta":
            p = event.payload
            out.append((p.thread_id, p.item_id, p.delta))
    return out


def test_each_delta_reaches_the_client_as_it_was_sent(env, mode):
    env.start_mock([{"events": [{"message": {"deltas": ["ab", "cd", "ef", "gh"]}}]}])

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("stream it")
        deltas = await deltas_of(turn)
        assert [d for _, _, d in deltas] == ["ab", "cd", "ef", "gh"]
        assert len({item for _, item, _ in deltas}) == 1

    run(mode, env, scenario)


def test_two_threads_streaming_at_once_get_their_own_deltas(env, mode):
    env.start_mock(
        [
            {"events": [{"text": "a1 a2 "}, {"delay_ms": 1500}, {"text": "a3"}]},
            text_reply("b1 b2"),
        ]
    )

    async def scenario(side):
        a = await side.thread_start()
        b = await side.thread_start()
        turn_a = await a.turn("question A")
        await asyncio.to_thread(env.mock.wait_for_requests, 1)
        turn_b = await b.turn("question B")
        deltas_b = await deltas_of(turn_b)
        deltas_a = await deltas_of(turn_a)
        assert deltas_a and {t for t, _, _ in deltas_a} == {a.id}
        assert deltas_b and {t for t, _, _ in deltas_b} == {b.id}
        assert [d for _, _, d in deltas_a] == ["a1 ", "a2 ", "a3"]
        assert [d for _, _, d in deltas_b] == ["b1 ", "b2"]

    run(mode, env, scenario)


def test_a_steer_while_the_answer_streams_keeps_the_answer(env, mode):
    env.start_mock(
        [
            {"events": [{"text": "Working "}, {"delay_ms": 1500}, {"text": "on it."}]},
            text_reply("Steered answer."),
        ]
    )

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("start the work")
        steered = None
        completed = []
        async for event in turn.stream():
            if event.method == "item/agentMessage/delta" and steered is None:
                steered = await turn.steer("also say it was steered")
            if event.method == "item/completed" and event.payload.item.root.type == "agentMessage":
                completed.append(event.payload.item.root.text)
        assert steered is not None
        # The answer in flight finished and stayed; the steer got a request of its own.
        assert completed == ["Working on it.", "Steered answer."]
        requests = env.mock.requests()
        assert len(requests) == 2
        second = request_text(requests[1])
        assert "Working on it." in second
        assert second.index("Working on it.") < second.index("also say it was steered")

    run(mode, env, scenario)
