"""The wire itself, below the SDK: framing, bad input, ordering, shutdown, and the command line
the SDK uses (global `--config` before the subcommand)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from typing import Any

from openai_codex.generated import v2_all as v2

from conftest import INTERPRETER_BIN, text_reply


class Raw:
    """`interpreter [args] app-server` with JSON lines by hand."""

    def __init__(self, env, args_before: list[str], args_after: list[str] | None = None) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENINTERPRETER_", "CODEX_"))}
        self.proc = subprocess.Popen(
            [str(INTERPRETER_BIN), *args_before, "app-server", *(args_after or ["--listen", "stdio://"])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=env.repo, env={**clean, "OPENINTERPRETER_HOME": str(env.home)},
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in iter(self.proc.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(msg).encode() + b"\n")

    def recv(self, timeout: float = 20) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout}s") from None
        assert line, "stdout closed"
        return json.loads(line)  # stdout carries JSON lines only

    def until(self, pred) -> list[dict[str, Any]]:
        seen = []
        while True:
            m = self.recv()
            seen.append(m)
            if pred(m):
                return seen

    def close(self) -> float:
        """Closes stdin; how long the process took to exit."""
        start = time.monotonic()
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(10)
        return time.monotonic() - start


def mock_args(env) -> list[str]:
    args = [
        "--config", 'model_provider="mock"',
        "--config", f'model_providers.mock={{name="mock", base_url="{env.mock.url}", wire_api="{env.wire}"}}',
        "-c", 'model="mock-model"',
    ]
    if env.harness:
        args += ["-c", f'harness="{env.harness}"']
    return args


def test_bad_input_is_answered_and_the_server_keeps_serving(env):
    env.start_mock([])
    raw = Raw(env, mock_args(env))
    try:
        raw.send({"id": "early", "method": "thread/list"})
        assert raw.recv()["error"]["code"] == -32600, "requests before initialize are refused"
        raw.send({"id": "i", "method": "initialize", "params": {"clientInfo": {"name": "raw", "version": "0"}}})
        assert raw.recv()["result"]["serverInfo"]["name"] == "interpreter"
        raw.send({"method": "initialized"})
        raw.send({"id": 7, "method": "no/such/method", "params": {}})
        err = raw.recv()
        assert err == {"id": 7, "error": {"code": -32601, "message": "Method not found: `no/such/method`"}}
        raw.send_bytes(b"{this is not json" + b"x" * 5000 + b"\n")
        err = raw.recv()
        assert err["id"] is None and err["error"]["code"] == -32700
        assert len(err["error"]["message"].encode()) < 400, "quotes at most 200 bytes"
        raw.send_bytes(b"[1,2,3]\n")
        assert raw.recv()["error"]["code"] == -32600
        raw.send({"id": "p", "method": "thread/read", "params": {"threadId": 5}})
        assert raw.recv()["error"]["code"] == -32602
        raw.send_bytes(b"\xff\xfe not utf-8\n")
        assert raw.recv()["error"]["code"] == -32700
        # A message over 16 MiB is refused whole; the next one is served.
        raw.send_bytes(b'{"id":"big","method":"thread/list","params":{"x":"' + b"a" * (17 * 1024 * 1024) + b'"}}\n')
        err = raw.recv()
        assert err["error"]["code"] == -32600 and "16 MiB" in err["error"]["message"]
        raw.send({"id": "after", "method": "model/list", "params": {}})
        assert raw.recv()["id"] == "after"
        raw.send({"id": "i2", "method": "initialize", "params": {}})
        assert raw.recv()["error"]["message"] == "Already initialized"
    finally:
        took = raw.close()
    assert took < 5, f"exit after stdin EOF took {took:.1f}s"
    assert raw.proc.returncode == 0


def test_turn_start_answers_before_the_turn_and_completed_is_last(env):
    env.start_mock([text_reply("Ordered.")])
    # `--config` after the subcommand works as well as before it.
    raw = Raw(env, mock_args(env)[:2], mock_args(env)[2:] + ["--listen", "stdio://"])
    try:
        raw.send({"id": 1, "method": "initialize", "params": {}})
        raw.recv()
        raw.send({"id": 2, "method": "thread/start", "params": {}})
        started = raw.until(lambda m: m.get("id") == 2)[-1]["result"]
        v2.ThreadStartResponse.model_validate(started)
        thread_id = started["thread"]["id"]
        raw.send({"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}})
        seen = raw.until(lambda m: m.get("method") == "turn/completed")
        response = next(i for i, m in enumerate(seen) if m.get("id") == 3)
        turn_id = seen[response]["result"]["turn"]["id"]
        of_turn = [i for i, m in enumerate(seen) if (m.get("params") or {}).get("turnId") == turn_id
                   or ((m.get("params") or {}).get("turn") or {}).get("id") == turn_id]
        assert of_turn and min(of_turn) > response, "an event of the turn came before its response"
        assert seen[-1]["params"]["turn"]["status"] == "completed"
        raw.send({"id": 4, "method": "thread/read", "params": {"threadId": thread_id, "includeTurns": True}})
        read = raw.until(lambda m: m.get("id") == 4)[-1]
        assert read["result"]["thread"]["turns"][0]["id"] == turn_id
    finally:
        raw.close()


def test_a_provider_error_still_completes_the_turn(env):
    env.start_mock([{"status": 500, "error": {"message": "mock is down"}, "repeat": 10}])
    raw = Raw(env, mock_args(env) + ["-c", "model_providers.mock.request_max_retries=0"])
    try:
        raw.send({"id": 1, "method": "initialize", "params": {}})
        raw.recv()
        raw.send({"id": 2, "method": "thread/start", "params": {}})
        thread_id = raw.until(lambda m: m.get("id") == 2)[-1]["result"]["thread"]["id"]
        raw.send({"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}})
        seen = raw.until(lambda m: m.get("method") == "turn/completed")
        done = seen[-1]["params"]["turn"]
        assert done["status"] == "failed" and "mock is down" in done["error"]["message"]
        errors = [m for m in seen if m.get("method") == "error"]
        assert errors and errors[0]["params"]["willRetry"] is False
    finally:
        raw.close()


def test_sigterm_stops_a_running_turn_and_exits(env):
    env.start_mock([env.shell("call_1", "sleep 30 && touch late.txt")])
    raw = Raw(env, mock_args(env) + ["-c", 'sandbox_mode="danger-full-access"'])
    try:
        raw.send({"id": 1, "method": "initialize", "params": {}})
        raw.recv()
        raw.send({"id": 2, "method": "thread/start", "params": {}})
        thread_id = raw.until(lambda m: m.get("id") == 2)[-1]["result"]["thread"]["id"]
        raw.send({"id": 3, "method": "turn/start", "params": {"threadId": thread_id, "input": [{"type": "text", "text": "wait"}]}})
        raw.until(lambda m: m.get("method") == "item/started" and m["params"]["item"]["type"] == "commandExecution")
        start = time.monotonic()
        raw.proc.terminate()
        raw.proc.wait(10)
        assert time.monotonic() - start < 5
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
    pgrep = subprocess.run(["pgrep", "-f", "sleep 30 && touch late.txt"], capture_output=True, text=True)
    assert pgrep.stdout.strip() == "", "the command outlived the server"
