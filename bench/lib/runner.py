"""Runs agents against the mock and measures them. See bench/README.md for the method."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path

import tasks as T
from agents import MOCK, Agent
from loop import AcpClient, Loop, Proxy, RpcError, kill_tree, now, tree_cpu_ms, tree_mem_kb

INIT_PARAMS = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
    "clientInfo": {"name": "interpreter-bench", "version": "0.1.0"},
}
IDLE_S = 2.0  # settle time before an idle RSS sample
AFTER_TURN_S = 1.0  # settle time before the after-turn RSS sample
SSE_CHUNKS, SSE_GAP_MS = 20, 25


def ms(ns: int) -> float:
    return ns / 1e6


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Mock:
    """A mock-llm process; its script is replaced through POST /_mock/script."""

    def __init__(self, log: Path, script: dict, binary: Path | None = None) -> None:
        path = log.with_suffix(".script.json")
        path.write_text(json.dumps(script))
        self.proc = subprocess.Popen(
            [str(binary or MOCK), "--script", str(path)], stdout=subprocess.PIPE, stderr=open(log, "w"), start_new_session=True
        )
        line = self.proc.stdout.readline().decode()
        if not line.startswith("MOCK_LISTENING "):
            raise RuntimeError(f"mock-llm did not start: {line!r}")
        self.url = line.split()[1]  # http://127.0.0.1:PORT/v1
        self.port = int(self.url.split(":")[2].split("/")[0])
        self.base = self.url[: -len("/v1")]

    def _call(self, method: str, path: str, body: bytes | None = None):
        req = urllib.request.Request(self.base + path, data=body, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def script(self, replies: list, when_exhausted: dict | None = None) -> None:
        s = {"replies": replies}
        if when_exhausted:
            s["when_exhausted"] = when_exhausted
        self._call("POST", "/_mock/script", json.dumps(s).encode())
        self._call("DELETE", "/_mock/requests")

    def requests(self) -> list:
        return [r for r in self._call("GET", "/_mock/requests") if r["method"] == "POST"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


AUX_SCRIPT = {"replies": [], "when_exhausted": {"events": [{"text": "Bench session"}]}}


class Bench:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.scratch = out / "scratch"
        shutil.rmtree(self.scratch, ignore_errors=True)
        self.scratch.mkdir(parents=True)
        self.loop = Loop()
        self.mock = Mock(out / "mock.log", {"replies": []})
        self.aux = Mock(out / "mock-aux.log", AUX_SCRIPT)
        self.proxy = Proxy(self.loop, self.mock.port)
        self.aux_proxy = Proxy(self.loop, self.aux.port)
        self.base_url = f"http://127.0.0.1:{self.proxy.port}/v1"
        self.aux_url = f"http://127.0.0.1:{self.aux_proxy.port}/v1"
        self._n = 0

    def close(self) -> None:
        self.mock.stop()
        self.aux.stop()

    def busy(self, since: int, until: int) -> int:
        # Requests to the main and the aux mock can overlap (opencode's title request), so the
        # union of both proxies' busy intervals is what the model side spent.
        spans = [
            (max(e.start, since), min(e.end, until))
            for p in (self.proxy, self.aux_proxy)
            for e in p.exchanges
            if e.end > since and e.start < until
        ]
        spans.sort()
        total, cs, ce = 0, None, None
        for s, e in spans:
            if ce is None or s > ce:
                if ce is not None:
                    total += ce - cs
                cs, ce = s, e
            else:
                ce = max(ce, e)
        return total + (ce - cs if ce is not None else 0)

    def fresh(self, agent: Agent, tag: str, overrides: dict | None = None) -> tuple[Path, Path]:
        self._n += 1
        d = self.scratch / f"{agent.key}-{tag}-{self._n}"
        ws, home = d / "ws", d / "home"
        ws.mkdir(parents=True)
        T.make_fixture(ws, overrides)
        return ws, home

    def spawn(self, agent: Agent, ws: Path, home: Path, log_name: str, stdin=subprocess.PIPE, rusage_file=None,
              **kw):
        argv, env = agent.command(self.base_url, self.aux_url, home, ws, **kw)
        if rusage_file and os.path.exists(GNU_TIME):
            # GNU time forks the agent from a ~1 MB process and reports its ru_maxrss. Taking
            # ru_maxrss from our own wait4 would be wrong: a child forked from Python carries
            # Python's resident pages into its high-water mark until it execs.
            argv = [GNU_TIME, "-f", "%M", "-o", str(rusage_file), *argv]
        log = open(home.parent / log_name, "a")
        t0 = now()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=log, env=env, cwd=ws, start_new_session=True)
        return proc, t0

    # -------------------------------------------------------------- ACP performance

    def init_run(self, agent: Agent) -> float | None:
        """Spawn → `initialize` reply, nothing else (cheap, so it is sampled more often)."""
        ws, home = self.fresh(agent, "init")
        proc, t0 = self.spawn(agent, ws, home, "agent.log")
        client = AcpClient(self.loop, proc)
        try:
            _, t1, _ = client.request("initialize", INIT_PARAMS, 120)
            return ms(t1 - t0)
        except RpcError:
            return None
        finally:
            client.close()
            kill_tree(proc)

    def acp_perf_run(self, agent: Agent) -> dict:
        ws, home = self.fresh(agent, "perf")
        turn = T.script_for(agent.tools, T.LATENCY_TURN, ws, "lat")
        self.mock.script(turn + T.sse_script(SSE_CHUNKS, SSE_GAP_MS))
        self.proxy.reset()
        self.aux_proxy.reset()
        r: dict = {}
        proc, t0 = self.spawn(agent, ws, home, "agent.log")
        client = AcpClient(self.loop, proc)
        try:
            _, t_init, init = client.request("initialize", INIT_PARAMS, 120)
            r["initialize_ms"] = ms(t_init - t0)
            r["initialize_cpu_ms"] = tree_cpu_ms(proc.pid)
            r["agent_info"] = init.get("agentInfo")
            t_new0, t_new, new = client.request("session/new", {"cwd": str(ws), "mcpServers": []}, 120)
            r["session_new_ms"] = ms(t_new - t_new0)
            sid = new["sessionId"]
            self.loop.sleep(IDLE_S)
            mem = tree_mem_kb(proc.pid)
            r["rss_idle_kb"], r["anon_idle_kb"] = mem["rss"], mem["anon"]

            # The 5-tool-call turn.
            n_before = len(client.updates)
            cpu0 = tree_cpu_ms(proc.pid)
            t_p0, t_p1, res = client.request(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": T.LATENCY_PROMPT}]}, 120
            )
            r["turn_cpu_ms"] = tree_cpu_ms(proc.pid) - cpu0
            reqs = self.mock.requests()
            wall, busy = t_p1 - t_p0, self.busy(t_p0, t_p1)
            r["turn_stop"] = res.get("stopReason")
            r["turn_requests"] = len(reqs)
            r["turn_wall_ms"] = ms(wall)
            r["turn_mock_ms"] = ms(busy)
            r["turn_overhead_ms"] = ms(wall - busy)
            r["per_tool_ms"] = ms(wall - busy) / 5
            gaps = self.proxy.gaps_ns(t_p0, t_p1)
            r["gap_median_ms"] = ms(statistics.median(gaps)) if gaps else None
            first = [e.start for e in self.proxy.exchanges if e.start >= t_p0]
            r["prompt_to_first_request_ms"] = ms(min(first) - t_p0) if first else None
            ends = [e.end for e in self.proxy.exchanges if e.end <= t_p1]
            r["last_response_to_reply_ms"] = ms(t_p1 - max(ends)) if ends else None
            r["turn_ok"] = len(reqs) == 6 and all(_tool_results_ok(agent, reqs))
            r["turn_updates"] = len(client.updates) - n_before
            self.loop.sleep(AFTER_TURN_S)
            mem = tree_mem_kb(proc.pid)
            r["rss_after_turn_kb"], r["anon_after_turn_kb"] = mem["rss"], mem["anon"]

            # SSE chunk -> session/update.
            n_before = len(client.updates)
            t_s0, t_s1, _ = client.request(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Stream a test message."}]}, 120
            )
            lat = []
            ups = client.updates[n_before:]
            for i in range(SSE_CHUNKS):
                mk = T.marker(i)
                t_fwd = self.proxy.first_forward_containing(mk.encode(), t_s0)
                t_up = next((t for t, u in ups if mk in _update_text(u)), None)
                if t_fwd is not None and t_up is not None:
                    lat.append(t_up - t_fwd)
            r["sse_matched"] = len(lat)
            r["sse_update_ms"] = ms(statistics.median(lat)) if lat else None
            r["sse_update_p90_ms"] = ms(sorted(lat)[int(len(lat) * 0.9) - 1]) if len(lat) >= 10 else None
            r["sse_update_max_ms"] = ms(max(lat)) if lat else None
        except RpcError as e:
            r["error"] = str(e)
        finally:
            client.close()
            kill_tree(proc)
        return r

    # -------------------------------------------------------------- exec performance

    def exec_run(self, agent: Agent, replies: list | None, prompt: str, ws: Path, home: Path, timeout_s=120,
                 **kw) -> dict:
        """One `exec` process. `replies=None` keeps the mock's script (a later turn)."""
        if replies is not None:
            self.mock.script(replies)
        self.proxy.reset()
        self.aux_proxy.reset()
        rusage_file = home.parent / "rusage.txt"
        proc, t0 = self.spawn(agent, ws, home, "agent.log", rusage_file=rusage_file, **kw)
        proc.stdin.write(prompt.encode())
        proc.stdin.close()
        status = {}

        def done():
            if "rusage" in status:
                return True
            pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status.update(t=now(), status=st, rusage=ru)
                return True
            return False

        out = b""
        os.set_blocking(proc.stdout.fileno(), False)

        def drain(_fd):
            nonlocal out
            try:
                chunk = os.read(proc.stdout.fileno(), 1 << 20)
            except BlockingIOError:
                return
            if chunk:
                out += chunk
            else:
                self.loop.remove(proc.stdout.fileno())

        self.loop.add(proc.stdout.fileno(), drain)
        # A pidfd becomes readable when the process exits, so the loop wakes at the exit
        # instead of at its next poll timeout (which would add up to 50 ms to the wall time).
        pidfd = os.pidfd_open(proc.pid)
        self.loop.add(pidfd, lambda _fd: None)
        ok = self.loop.run_until(done, timeout_s)
        self.loop.remove(pidfd)
        os.close(pidfd)
        self.loop.remove(proc.stdout.fileno())
        if not ok:
            kill_tree(proc)
            return {"error": f"exec did not finish within {timeout_s} s"}
        proc.returncode = os.waitstatus_to_exitcode(status["status"])
        # Reap anything left in the group (there should be nothing).
        kill_tree(proc)
        t1 = status["t"]
        busy = self.busy(t0, t1)
        events = [json.loads(x) for x in out.decode(errors="replace").splitlines() if x.strip().startswith("{")]
        starts = [e.start for e in self.proxy.exchanges if e.start >= t0]
        ends = [e.end for e in self.proxy.exchanges if e.end <= t1]
        gaps = self.proxy.gaps_ns(t0, t1)
        return {
            "to_first_request_ms": ms(min(starts) - t0) if starts else None,
            "after_last_response_ms": ms(t1 - max(ends)) if ends else None,
            "gap_median_ms": ms(statistics.median(gaps)) if gaps else None,
            "exit": proc.returncode,
            "wall_ms": ms(t1 - t0),
            "mock_ms": ms(busy),
            "overhead_ms": ms(t1 - t0 - busy),
            "max_rss_kb": _read_maxrss(rusage_file),
            # user + system CPU of the agent (and GNU time's own sliver): not inflated by load.
            "cpu_ms": (status["rusage"].ru_utime + status["rusage"].ru_stime) * 1000,
            "requests": len(self.mock.requests()),
            # Codex JSONL (ours, codex exec) or the stream-json of Claude Code and Qwen Code.
            "completed": any(e.get("type") == "turn.completed"
                             or (e.get("type") == "result" and e.get("subtype") == "success" and not e.get("is_error"))
                             for e in events),
            "thread_id": next((e.get("thread_id") if e.get("type") == "thread.started" else e.get("session_id")
                               for e in events
                               if e.get("type") == "thread.started" or (e.get("type") == "system" and e.get("subtype") == "init")),
                              None),
        }

    def exec_perf_run(self, agent: Agent) -> dict:
        r = {}
        ws, home = self.fresh(agent, "exec-hello")
        hello = self.exec_run(agent, [{"events": [{"text": "Hello from the mock model."}]}], "say hi", ws, home)
        for k, v in hello.items():
            r[f"hello_{k}"] = v
        ws, home = self.fresh(agent, "exec-tools")
        tools = self.exec_run(agent, T.script_for(agent.tools, T.LATENCY_TURN, ws, "lat"), T.LATENCY_PROMPT, ws, home)
        for k, v in tools.items():
            r[f"tools_{k}"] = v
        return r

    # -------------------------------------------------------------- token economy

    def task_run(self, agent: Agent, task: T.Task) -> dict:
        ws, home = self.fresh(agent, task.key, task.fixture)
        turns = task.turns()
        replies = [rep for n, (_, steps) in enumerate(turns) for rep in T.script_for(agent.tools, steps, ws, f"t{n + 1}")]
        r: dict = {"task": task.key, "error": ""}
        self.mock.script(replies)
        self.aux.script(AUX_SCRIPT["replies"], AUX_SCRIPT["when_exhausted"])  # also forgets earlier side requests
        if agent.kind == "exec":
            thread = None
            for n, (prompt, _) in enumerate(turns):
                res = self.exec_run(agent, None, prompt, ws, home, resume=thread, ephemeral=len(turns) == 1)
                thread = res.get("thread_id")
                if res.get("error") or not res.get("completed"):
                    r["error"] = res.get("error") or f"turn {n + 1}: exit {res.get('exit')}, no turn.completed"
                    break
        else:
            self.proxy.reset()
            self.aux_proxy.reset()
            proc, _ = self.spawn(agent, ws, home, "agent.log")
            client = AcpClient(self.loop, proc)
            try:
                client.request("initialize", INIT_PARAMS, 120)
                _, _, new = client.request("session/new", {"cwd": str(ws), "mcpServers": []}, 120)
                for n, (prompt, _) in enumerate(turns):
                    _, _, res = client.request(
                        "session/prompt",
                        {"sessionId": new["sessionId"], "prompt": [{"type": "text", "text": prompt}]},
                        180,
                    )
                    if res.get("stopReason") != "end_turn":
                        r["error"] = f"turn {n + 1}: stopReason {res.get('stopReason')}"
                        break
            except RpcError as e:
                r["error"] = str(e)
            finally:
                client.close()
                kill_tree(proc)
        reqs = self.mock.requests()
        aux = self.aux.requests()
        self.aux._call("DELETE", "/_mock/requests")
        # A title request that went to the main mock (our opencode harness) is a side request.
        aux += [q for q in reqs if is_title_request(q["body"])]
        reqs = [q for q in reqs if not is_title_request(q["body"])]
        r["requests"] = [request_metrics(q["body"]) for q in reqs]
        r["aux_requests"] = [request_metrics(q["body"]) for q in aux if isinstance(q["body"], dict)]
        r["expected_requests"] = task.n_requests()
        problem = task.check(ws) if not r["error"] else ""
        if not r["error"] and len(reqs) != task.n_requests():
            problem = f"{len(reqs)} model requests, expected {task.n_requests()}"
        r["check"] = problem
        r["tool_errors"] = _tool_errors(agent, reqs)
        dump = self.out / "requests" / agent.key
        dump.mkdir(parents=True, exist_ok=True)
        (dump / f"{task.key}.json").write_text(json.dumps([q["body"] for q in reqs], indent=1))
        return r


GNU_TIME = "/usr/bin/time"


def _read_maxrss(path: Path) -> int | None:
    try:
        return int(path.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


# ------------------------------------------------------------------ request analysis


def canonical(body: dict) -> bytes:
    """The prompt as a provider would render it, in the order a prefix cache sees it: tool
    schemas, instructions, then the conversation items. Request parameters (model, stream,
    max tokens, cache keys) are left out. Each part is compact JSON."""
    parts = []
    if body.get("tools") is not None:
        parts.append(json.dumps(body["tools"], ensure_ascii=False, separators=(",", ":")))
    if body.get("instructions"):
        parts.append(json.dumps(body["instructions"], ensure_ascii=False))
    if body.get("system"):  # the Messages API keeps the system prompt apart
        parts.append(json.dumps(body["system"], ensure_ascii=False, separators=(",", ":")))
    items = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        items = [items]
    for m in items or []:
        parts.append(json.dumps(m, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(parts).encode()


def request_metrics(body) -> dict:
    if not isinstance(body, dict):
        return {"bytes": 0, "canon": b""}
    c = canonical(body)
    return {"bytes": len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()), "canon": c}


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    # binary search on equal prefixes (bytes compare is fast)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def summarize_task(r: dict) -> dict:
    reqs = r["requests"]
    toks = [len(q["canon"]) / 4 for q in reqs]
    shares = []
    for prev, cur in zip(reqs, reqs[1:]):
        shares.append(common_prefix(prev["canon"], cur["canon"]) / max(1, len(cur["canon"])))
    later = sum(len(q["canon"]) for q in reqs[1:])
    reused = sum(common_prefix(p["canon"], c["canon"]) for p, c in zip(reqs, reqs[1:]))
    return {
        "task": r["task"],
        "n": len(reqs),
        "first_tokens": toks[0] if toks else 0,
        "per_request_tokens": toks,
        "total_tokens": sum(toks),
        "body_tokens": sum(q["bytes"] for q in reqs) / 4,
        "aux_tokens": sum(len(q["canon"]) for q in r.get("aux_requests", [])) / 4,
        "aux_n": len(r.get("aux_requests", [])),
        "prefix_shares": shares,
        "prefix_reuse": reused / later if later else None,
        "prefix_min": min(shares) if shares else None,
        "error": r.get("error") or r.get("check") or "",
        "tool_errors": r.get("tool_errors", []),
    }


# ------------------------------------------------------------------ sanity checks on tool results


def _update_text(u: dict) -> str:
    c = u.get("content")
    if isinstance(c, dict):
        return c.get("text") or ""
    return ""


def _tool_outputs(reqs: list) -> list[str]:
    """Tool result texts in the last request (chat `tool` messages, Responses outputs)."""
    if not reqs:
        return []
    body = reqs[-1]["body"]
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "tool":
            c = m.get("content")
            out.append(c if isinstance(c, str) else json.dumps(c))
        if m.get("role") == "user" and isinstance(m.get("content"), list):  # Messages tool_result blocks
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b.get("content")
                    out.append(c if isinstance(c, str) else json.dumps(c))
    for it in body.get("input") or []:
        if isinstance(it, dict) and it.get("type") in ("function_call_output", "custom_tool_call_output"):
            o = it.get("output")
            out.append(o if isinstance(o, str) else json.dumps(o))
    return out


def _tool_results_ok(agent: Agent, reqs: list) -> list[bool]:
    outs = _tool_outputs(reqs)
    return [len(outs) == 5] + ["lorem ipsum" in o for o in outs]


ERROR_HINTS = ("error", "Error", "failed", "not found", "No such file", "must read", "rejected", "denied")


def _tool_errors(agent: Agent, reqs: list) -> list[str]:
    """Tool results that look like failures (for the report; a failing test run is expected
    in the test-fix task, so it is listed but does not fail the task)."""
    return [o[:160] for o in _tool_outputs(reqs) if any(h in o for h in ERROR_HINTS)]


def is_title_request(body) -> bool:
    """A harness's title request (opencode's): its user message asks for a title."""
    return isinstance(body, dict) and any(
        isinstance(m, dict) and m.get("role") == "user"
        and m.get("content") == "Generate a title for this conversation:\n"
        for m in body.get("messages", []))
