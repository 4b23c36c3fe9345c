"""Taking turns back over the app-server: the seed's `thread/rollback` (the history only, as
the seed documents it) and `interpreter/thread/undo` (the files too). The pinned SDK has no
method or response model for either (the seed deprecates rollback), so they go through the
client's raw request and the thread is checked against the SDK's `Thread` model."""

from __future__ import annotations

from openai_codex import Codex
from openai_codex.generated import v2_all as v2

from conftest import request_text, text_reply


def test_rollback_cuts_the_history_and_undo_puts_the_files_back(env):
    (env.repo / "notes.txt").write_text("before\n")
    env.start_mock(
        [
            env.shell("c1", "echo agent > notes.txt && echo new > made.txt"),
            text_reply("Wrote."),
            text_reply("Second."),
            text_reply("After the rollback."),
        ]
    )
    codex = Codex(env.config())
    try:
        thread = codex.thread_start()
        thread.run("write the notes")
        assert (env.repo / "made.txt").read_text() == "new\n"
        thread.run("remember PAPAYA")
        rolled = codex._client._request_raw(
            "thread/rollback", {"threadId": thread.id, "numTurns": 1}
        )
        assert len(v2.Thread.model_validate(rolled["thread"]).turns) == 1
        # The history only: the files stay.
        assert (env.repo / "made.txt").read_text() == "new\n"
        thread.run("and now?")
        last = request_text(env.mock.requests()[-1])
        assert "and now?" in last and "write the notes" in last
        assert "PAPAYA" not in last, last
        # Files too: both turns left, the first one's files back as they were.
        undone = codex._client._request_raw(
            "interpreter/thread/undo", {"threadId": thread.id, "numTurns": 2}
        )
        assert undone["removed"] == ["made.txt"], undone
        assert undone["restored"] == ["notes.txt"], undone
        assert undone["skipped"] == [], undone
        assert len(v2.Thread.model_validate(undone["thread"]).turns) == 0
        assert (env.repo / "notes.txt").read_text() == "before\n"
        assert not (env.repo / "made.txt").exists()
        try:
            codex._client._request_raw("thread/rollback", {"threadId": thread.id, "numTurns": 1})
            raise AssertionError("a rollback with no turn left was accepted")
        except AssertionError:
            raise
        except Exception as refused:
            assert "there is no turn to undo" in str(refused), refused
    finally:
        codex.close()
