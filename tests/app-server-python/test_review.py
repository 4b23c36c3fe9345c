"""`review/start`: each target's diff reaches the model, the turn opens with an
`enteredReviewMode` item and closes with `exitedReviewMode` holding the findings as text (all
checked against the SDK's generated models), and a bad target is an error with no model
request."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from openai_codex.client import CodexClient
from openai_codex.errors import JsonRpcError
from openai_codex.generated.v2_all import (
    BaseBranchReviewTarget,
    CommitReviewTarget,
    EnteredReviewModeThreadItem,
    ExitedReviewModeThreadItem,
    ReviewDelivery,
    ReviewStartParams,
    ReviewStartResponse,
    ReviewTarget,
    UncommittedChangesReviewTarget,
)

from conftest import request_text, run, text_reply

FINDINGS = {
    "findings": [
        {
            "title": "Guard the empty list",
            "body": "`first()` panics on an empty list.",
            "confidence_score": 0.9,
            "priority": 1,
            "code_location": {"absolute_file_path": "ROOT/lib.py", "line_range": {"start": 2, "end": 2}},
        }
    ],
    "overall_correctness": "patch is incorrect",
    "overall_explanation": "One crash.",
    "overall_confidence_score": 0.8,
}


def git(repo, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(["git", *ident, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def make_history(env) -> str:
    """main: one commit; feature: a commit adding MARKER_COMMIT; the tree: MARKER_WORKTREE."""
    repo = env.repo
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "lib.py").write_text("def a(): pass\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "lib.py").write_text("def a(): pass\n# MARKER_COMMIT\n")
    git(repo, "commit", "-q", "-am", "Add the marker")
    sha = git(repo, "rev-parse", "HEAD").strip()
    (repo / "lib.py").write_text("def a(): pass\n# MARKER_COMMIT\n# MARKER_WORKTREE\n")
    return sha


def review(client: CodexClient, thread_id: str, target) -> tuple[ReviewStartResponse, list]:
    """`review/start` through the SDK's client, then the turn's notifications to its end."""
    params = ReviewStartParams(thread_id=thread_id, target=ReviewTarget(root=target))
    payload = params.model_dump(by_alias=True, exclude_none=True, mode="json")
    with client._router.pending_turn(thread_id) as cursors:
        started = client.request("review/start", payload, response_model=ReviewStartResponse)
        client._router.prepare_turn(started.turn.id, thread_id, cursors, for_handle=False)
    events = []
    while True:
        n = client.next_turn_notification(started.turn.id)
        events.append(n)
        if n.method == "turn/completed":
            return started, events


def review_items(events) -> list:
    return [
        e.payload.item.root
        for e in events
        if e.method == "item/completed"
        and isinstance(e.payload.item.root, (EnteredReviewModeThreadItem, ExitedReviewModeThreadItem))
    ]


def test_each_target_reaches_the_model_and_ends_with_the_findings(env, mode):
    sha = make_history(env)
    answer = json.dumps(FINDINGS).replace("ROOT", str(env.repo.resolve()))
    env.start_mock([text_reply(answer), text_reply(answer), text_reply(answer)])
    cases = [
        (UncommittedChangesReviewTarget(type="uncommittedChanges"), "+# MARKER_WORKTREE", "uncommitted changes"),
        (BaseBranchReviewTarget(type="baseBranch", branch="main"), "+# MARKER_COMMIT", "changes against main"),
        (CommitReviewTarget(type="commit", sha=sha), "Add the marker", "commit "),
    ]

    async def scenario(side):
        thread = await side.thread_start()
        for i, (target, sent, entered) in enumerate(cases):
            started, events = await asyncio.to_thread(review, side.client, thread.id, target)
            assert started.review_thread_id == thread.id
            methods = [e.method for e in events]
            assert methods[0] == "turn/started" and methods[-1] == "turn/completed", methods
            assert events[-1].payload.turn.status.value == "completed"
            first, last = review_items(events)
            assert isinstance(first, EnteredReviewModeThreadItem) and first.review.startswith(entered), first
            assert isinstance(last, ExitedReviewModeThreadItem)
            assert last.review.startswith("Verdict: patch is incorrect"), last.review
            assert "[P1] Guard the empty list\n  lib.py:2\n" in last.review, last.review
            req = env.mock.requests()[i]
            assert sent in request_text(req), target
            # The answer is held to the findings schema.
            assert "overall_correctness" in json.dumps(req["body"].get("response_format") or req["body"].get("text"))
        # The read-only sandbox of the review is for its turns only.
        assert (env.repo / "lib.py").read_text().endswith("MARKER_WORKTREE\n")

    run(mode, env, scenario)


def test_a_bad_target_is_an_error_and_asks_no_model(env, mode):
    make_history(env)
    env.start_mock([text_reply("unused")])

    async def scenario(side):
        thread = await side.thread_start()

        def ask(target, delivery=None):
            params = ReviewStartParams(thread_id=thread.id, target=ReviewTarget(root=target), delivery=delivery)
            payload = params.model_dump(by_alias=True, exclude_none=True, mode="json")
            with pytest.raises(JsonRpcError) as e:
                side.client.request("review/start", payload, response_model=ReviewStartResponse)
            return str(e.value)

        message = await asyncio.to_thread(ask, BaseBranchReviewTarget(type="baseBranch", branch="nope"))
        assert "base branch `nope` not found" in message, message
        message = await asyncio.to_thread(ask, CommitReviewTarget(type="commit", sha="0123456789abcdef"))
        assert "commit `0123456789abcdef` not found" in message, message
        uncommitted = UncommittedChangesReviewTarget(type="uncommittedChanges")
        message = await asyncio.to_thread(ask, uncommitted, ReviewDelivery.detached)
        assert "delivery `detached` is not supported" in message, message
        assert env.mock.requests() == []

    run(mode, env, scenario)
