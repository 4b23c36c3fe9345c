"""Hooks through the Python SDK (issue 38): a user hooks file in Codex's shape, and the
`hook/started` and `hook/completed` notifications in the protocol's `HookRunSummary` shape,
checked by the SDK's own models like every other message."""

from __future__ import annotations

import json

from conftest import request_text, run, text_reply


def test_hooks_run_and_each_run_is_a_hook_notification(env, mode):
    (env.home / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "echo 'not in this repository' >&2; exit 2",
                                    "statusMessage": "Checking the command",
                                }
                            ],
                        }
                    ],
                    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'Team rule'"}]}],
                }
            }
        )
    )
    env.start_mock([env.shell("c1", "rm -rf build"), text_reply("Blocked, then.")])

    async def scenario(side):
        thread = await side.thread_start()
        turn = await thread.turn("clean up")
        started, completed = [], []
        async for event in turn.stream():
            if event.method == "hook/started":
                started.append(event.payload.run)
            if event.method == "hook/completed":
                completed.append(event.payload.run)
        assert [r.event_name.value for r in started] == ["userPromptSubmit", "preToolUse"], started
        assert started[1].status_message == "Checking the command"
        by_event = {r.event_name.value: r for r in completed}
        pre = by_event["preToolUse"]
        assert pre.status.value == "blocked"
        assert [(e.kind.value, e.text) for e in pre.entries] == [("feedback", "not in this repository")]
        assert by_event["userPromptSubmit"].entries[0].kind.value == "context"
        assert pre.source.value == "user" and pre.source_path.root.endswith("hooks.json")
        second = request_text(env.mock.requests()[1])
        assert "A PreToolUse hook blocked this tool call: not in this repository" in second
        assert "Team rule" in request_text(env.mock.requests()[0])

    run(mode, env, scenario)
