"""`interpreter app-server` next to `codex app-server` (from the `openai-codex-cli-bin` wheel
the Python SDK installs): what a Python SDK user waits for.

Per run: spawn → `initialize` reply, `thread/start`, a one-reply turn and a five-tool turn
(`turn/start` sent → `turn/completed` read, minus the time the mock spent answering), and
the process tree's RSS after `thread/start` and after the turns. Approvals are off and the
sandbox is open for both, as in the rest of the bench.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import tasks as T
from agents import BENCH, OURS, _isolated_env
from loop import AcpClient, Loop, RpcError, kill_tree, now, tree_mem_kb

PIN = "openai-codex-cli-bin==0.163.0"
CODEX_DIR = BENCH / ".peers" / "codex-cli-bin"
CODEX = CODEX_DIR / "codex_cli_bin" / "bin" / "codex"
INIT = {"clientInfo": {"name": "interpreter-bench", "title": "bench", "version": "0.1.0"},
        "capabilities": {"experimentalApi": True}}
IDLE_S = 2.0


def ms(ns: int) -> float:
    return ns / 1e6


class AppServerClient(AcpClient):
    """JSON lines to an app-server: requests get ids, approvals are accepted, every
    notification is kept with the time it was read."""

    def __init__(self, loop: Loop, proc: subprocess.Popen) -> None:
        super().__init__(loop, proc)
        self.notes: list[tuple[int, dict]] = []

    def _message(self, t: int, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "method" in msg and "id" in msg:
            self._write({"id": msg["id"], "result": {"decision": "accept"}})
        elif "method" in msg:
            self.notes.append((t, msg))
        elif "id" in msg:
            self.responses[msg["id"]] = (t, msg)

    def _write(self, obj: dict) -> int:
        obj.pop("jsonrpc", None)  # the app-server wire has none
        return super()._write(obj)

    def until(self, pred, timeout_s: float) -> tuple[int, dict]:
        seen = len(self.notes)

        def found():
            nonlocal seen
            for i in range(seen, len(self.notes)):
                if pred(self.notes[i][1]):
                    return self.notes[i]
            seen = len(self.notes)
            return None

        ok = self.loop.run_until(lambda: found() is not None or self.eof, timeout_s)
        hit = found()
        if not ok or hit is None:
            raise RpcError("agent exited" if self.eof else f"no matching notification within {timeout_s:.0f} s")
        return hit


def command(key: str, base_url: str, home: Path) -> tuple[list[str], dict]:
    env = _isolated_env(home)
    conf = ["-c", 'approval_policy="never"', "-c", 'sandbox_mode="danger-full-access"', "-c", 'model_provider="mock"']
    if key == "ours-app":
        env["OPENINTERPRETER_HOME"] = str(home / "oi")
        (home / "oi").mkdir(exist_ok=True)
        conf += ["-c", f'model_providers.mock={{name="mock", base_url="{base_url}", wire_api="chat"}}',
                 "-c", 'model="mock-model"']
        return [str(OURS), *conf, "app-server", "--listen", "stdio://"], env
    env["CODEX_HOME"] = str(home / "codex")
    (home / "codex").mkdir(exist_ok=True)
    conf += ["-c", 'model_providers.mock.name="mock"', "-c", f'model_providers.mock.base_url="{base_url}"',
             "-c", 'model_providers.mock.wire_api="responses"', "-c", 'model="gpt-5.5"']
    return [str(CODEX), *conf, "app-server", "--listen", "stdio://"], env


AGENTS = {
    # key: (label, tool dialect of its scripted turn)
    "ours-app": ("interpreter app-server", "native"),
    "codex-app": ("codex app-server 0.163.0", "codex"),
}


def missing(key: str) -> str:
    path = OURS if key == "ours-app" else CODEX
    return "" if path.exists() else f"{path} missing ({'build it' if key == 'ours-app' else PIN})"


def run_once(bench, key: str) -> dict:
    """One process: initialize, thread/start, the one-reply turn, the five-tool turn."""
    _, dialect = AGENTS[key]
    d = bench.scratch / f"{key}-{bench._n}"
    bench._n += 1
    ws, home = d / "ws", d / "home"
    ws.mkdir(parents=True)
    T.make_fixture(ws, None)
    replies = [{"events": [{"text": "Hello from the mock model."}]}]
    replies += T.script_for(dialect, T.LATENCY_TURN, ws, "lat")
    bench.mock.script(replies)
    bench.proxy.reset()
    argv, env = command(key, bench.base_url, home)
    t0 = now()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(d / "agent.log", "w"),
                            env=env, cwd=ws, start_new_session=True)
    client = AppServerClient(bench.loop, proc)
    r: dict = {}
    try:
        _, t_init, _ = client.request("initialize", INIT, 120)
        r["initialize_ms"] = ms(t_init - t0)
        client._write({"method": "initialized"})
        t_s0, t_s1, started = client.request("thread/start", {"cwd": str(ws)}, 120)
        r["thread_start_ms"] = ms(t_s1 - t_s0)
        thread_id = started["thread"]["id"]
        bench.loop.sleep(IDLE_S)
        r["rss_idle_kb"] = tree_mem_kb(proc.pid)["rss"]
        for name, prompt in (("hello", "say hi"), ("tools", T.LATENCY_PROMPT)):
            before = len(bench.mock.requests())
            _, t_p0 = client.send("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": prompt}]})
            t_done, done = client.until(lambda m: m.get("method") == "turn/completed", 120)
            wall, busy = t_done - t_p0, bench.busy(t_p0, t_done)
            r[f"{name}_status"] = done["params"]["turn"]["status"]
            r[f"{name}_requests"] = len(bench.mock.requests()) - before
            r[f"{name}_wall_ms"] = ms(wall)
            r[f"{name}_overhead_ms"] = ms(wall - busy)
        r["rss_after_kb"] = tree_mem_kb(proc.pid)["rss"]
        r["ok"] = r["hello_status"] == "completed" and r["tools_status"] == "completed" and r["tools_requests"] == 6
    except RpcError as e:
        r["error"] = str(e)
    finally:
        client.close()
        kill_tree(proc)
    return r


def install_hint() -> str:
    return f"pip install --no-deps --target {CODEX_DIR} {PIN}"

