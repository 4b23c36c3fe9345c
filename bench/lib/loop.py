"""One single-threaded event loop for a bench run: a timestamping TCP proxy in front of the
mock model, and an NDJSON JSON-RPC (ACP) client on an agent's stdio.

Every timestamp is `time.perf_counter_ns()` taken by this one thread when bytes are read or
written, so the proxy's and the client's clocks are the same clock.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import time
from dataclasses import dataclass, field

now = time.perf_counter_ns


class Loop:
    def __init__(self) -> None:
        self.sel = selectors.DefaultSelector()

    def add(self, fileobj, callback) -> None:
        self.sel.register(fileobj, selectors.EVENT_READ, callback)

    def remove(self, fileobj) -> None:
        try:
            self.sel.unregister(fileobj)
        except (KeyError, ValueError):
            pass

    def run_until(self, pred, timeout_s: float) -> bool:
        """Runs callbacks until `pred()` is true or the timeout passes. Returns pred()."""
        deadline = time.monotonic() + timeout_s
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                return pred()
            for key, _ in self.sel.select(min(left, 0.05)):
                key.data(key.fileobj)
        return True

    def sleep(self, seconds: float) -> None:
        """Keeps serving (proxy, agent output) while waiting."""
        self.run_until(lambda: False, seconds)


# ------------------------------------------------------------------ proxy


@dataclass
class Exchange:
    """One HTTP request/response on one proxied connection."""

    conn: int
    start: int  # first request byte from the agent
    end: int  # last response byte to the agent
    resp_chunks: list = field(default_factory=list)  # (t_forwarded, bytes)


class Proxy:
    """Forwards 127.0.0.1:<port> to the mock and timestamps every chunk.

    HTTP/1.1 without pipelining: on each connection a request is followed by its response,
    so an agent->mock chunk after response bytes starts a new exchange.
    """

    def __init__(self, loop: Loop, upstream_port: int) -> None:
        self.loop = loop
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.exchanges: list[Exchange] = []
        self._next_conn = 0
        self._open: dict[int, Exchange | None] = {}
        self._sockets: list[socket.socket] = []
        loop.add(self.listener, self._accept)

    def reset(self) -> None:
        self.exchanges = []

    def _accept(self, listener) -> None:
        try:
            client, _ = listener.accept()
        except BlockingIOError:
            return
        upstream = socket.create_connection(self.upstream)
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setblocking(True)
            self._sockets.append(s)
        conn = self._next_conn
        self._next_conn += 1
        self._open[conn] = None
        self.loop.add(client, lambda s, c=conn, o=upstream: self._from_agent(c, s, o))
        self.loop.add(upstream, lambda s, c=conn, o=client: self._from_mock(c, s, o))

    def _close(self, a, b) -> None:
        for s in (a, b):
            self.loop.remove(s)
            try:
                s.close()
            except OSError:
                pass

    def _from_agent(self, conn, sock, other) -> None:
        try:
            data = sock.recv(1 << 20)
        except (ConnectionError, OSError):
            data = b""
        t = now()
        if not data:
            self._close(sock, other)
            return
        ex = self._open.get(conn)
        if ex is None or ex.resp_chunks:
            ex = Exchange(conn=conn, start=t, end=t)
            self._open[conn] = ex
            self.exchanges.append(ex)
        try:
            other.sendall(data)
        except OSError:
            self._close(sock, other)

    def _from_mock(self, conn, sock, other) -> None:
        try:
            data = sock.recv(1 << 20)
        except (ConnectionError, OSError):
            data = b""
        if not data:
            self._close(sock, other)
            return
        try:
            other.sendall(data)
        except OSError:
            self._close(sock, other)
            return
        t = now()
        ex = self._open.get(conn)
        if ex is not None:
            ex.resp_chunks.append((t, data))
            ex.end = t

    def busy_ns(self, since: int, until: int) -> int:
        """Length of the union of exchange intervals inside [since, until]: the time the
        mock (plus the proxy's forwarding and loopback) had a request in hand."""
        spans = sorted(
            (max(e.start, since), min(e.end, until))
            for e in self.exchanges
            if e.end > since and e.start < until
        )
        total, cur_s, cur_e = 0, None, None
        for s, e in spans:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    total += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            total += cur_e - cur_s
        return total

    def gaps_ns(self, since: int, until: int) -> list[int]:
        """Agent-side gaps between consecutive exchanges (end of one response to the first
        byte of the next request), for sequential conversations."""
        ex = sorted((e for e in self.exchanges if e.start >= since and e.end <= until), key=lambda e: e.start)
        return [b.start - a.end for a, b in zip(ex, ex[1:])]

    def first_forward_containing(self, marker: bytes, since: int) -> int | None:
        for ex in self.exchanges:
            for t, data in ex.resp_chunks:
                if t >= since and marker in data:
                    return t
        return None


# ------------------------------------------------------------------ ACP client


class RpcError(Exception):
    pass


class AcpClient:
    """NDJSON JSON-RPC 2.0 over an agent's stdio. Answers the agent's requests:
    permission requests get the first `allow*` option, everything else a -32601 error."""

    def __init__(self, loop: Loop, proc: subprocess.Popen) -> None:
        self.loop = loop
        self.proc = proc
        self.out_fd = proc.stdout.fileno()
        os.set_blocking(self.out_fd, False)
        self.buf = b""
        self.next_id = 0
        self.responses: dict[int, tuple[int, dict]] = {}
        self.updates: list[tuple[int, dict]] = []  # (t_read, params.update)
        self.agent_requests: list[str] = []
        self.eof = False
        loop.add(self.out_fd, self._readable)

    def close(self) -> None:
        self.loop.remove(self.out_fd)

    def _readable(self, _fd) -> None:
        try:
            data = os.read(self.out_fd, 1 << 20)
        except BlockingIOError:
            return
        t = now()
        if not data:
            self.eof = True
            self.loop.remove(self.out_fd)
            return
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            if line.strip():
                self._message(t, line)

    def _message(self, t: int, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        if "method" in msg:
            method = msg["method"]
            if "id" in msg:
                self.agent_requests.append(method)
                self._answer(msg)
            elif method == "session/update":
                self.updates.append((t, (msg.get("params") or {}).get("update") or {}))
        elif "id" in msg:
            self.responses[msg["id"]] = (t, msg)

    def _answer(self, msg: dict) -> None:
        method, params = msg["method"], msg.get("params") or {}
        if method == "session/request_permission":
            options = params.get("options") or []
            pick = next((o for o in options if str(o.get("kind", "")).startswith("allow")), None)
            pick = pick or (options[0] if options else None)
            result = (
                {"outcome": {"outcome": "selected", "optionId": pick["optionId"]}}
                if pick
                else {"outcome": {"outcome": "cancelled"}}
            )
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        else:
            self._write(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"bench client: {method} not supported"}}
            )

    def _write(self, obj: dict) -> int:
        data = (json.dumps(obj) + "\n").encode()
        t = now()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t

    def send(self, method: str, params: dict) -> tuple[int, int]:
        self.next_id += 1
        t = self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id, t

    def wait(self, rid: int, timeout_s: float) -> tuple[int, dict]:
        ok = self.loop.run_until(lambda: rid in self.responses or self.eof, timeout_s)
        if rid not in self.responses:
            raise RpcError("agent exited" if self.eof else f"no reply within {timeout_s:.0f} s")
        t, msg = self.responses.pop(rid)
        if "error" in msg:
            raise RpcError(json.dumps(msg["error"])[:400])
        del ok
        return t, msg.get("result") or {}

    def request(self, method: str, params: dict, timeout_s: float = 60) -> tuple[int, int, dict]:
        """Returns (t_sent, t_reply, result)."""
        rid, t0 = self.send(method, params)
        t1, result = self.wait(rid, timeout_s)
        return t0, t1, result


# ------------------------------------------------------------------ processes


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may contain spaces/parens: the fields after the last ')' are fixed.
        rest = stat[stat.rfind(b")") + 2 :].split()
        kids.setdefault(int(rest[1]), []).append(int(name))
    return kids


def tree_pids(root: int) -> list[int]:
    kids = _children_map()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def tree_mem_kb(root: int) -> dict:
    """VmRSS and RssAnon summed over `root` and all its descendants. RssAnon is the private
    part (heap, stacks); the rest of RSS is mostly mapped executable and library pages."""
    total = {"rss": 0, "anon": 0}
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total["rss"] += int(line.split()[1])
                    elif line.startswith("RssAnon:"):
                        total["anon"] += int(line.split()[1])
        except OSError:
            pass
    return total


def tree_cpu_ms(root: int) -> float:
    """CPU time used so far by every live thread of `root` and its descendants, from
    /proc/<pid>/task/<tid>/schedstat (nanoseconds). Independent of how busy the machine is."""
    total = 0
    for pid in tree_pids(root):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total / 1e6


def tree_rss_kb(root: int) -> int:
    """Sum of VmRSS over `root` and all its descendants."""
    return tree_mem_kb(root)["rss"]


def kill_tree(proc: subprocess.Popen) -> None:
    """The agent runs in its own process group (start_new_session): end that group, and any
    descendant that left it, by pid."""
    pids = tree_pids(proc.pid)
    try:
        os.killpg(proc.pid, 15)
    except OSError:
        pass
    for pid in pids:
        try:
            os.kill(pid, 15)
        except OSError:
            pass
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    for pid in tree_pids(proc.pid) + pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass
