#!/usr/bin/env python3
"""Writes a link-order file: the functions `interpreter` runs while it starts each face and
answers a first turn, in first-run order, for the linker's --symbol-ordering-file.

Why: start-up touches about a thousand functions spread over a 16 MB text section, and every
page fault maps 64 KB around it, so most of the idle RSS is code that never ran. Placing those
functions together makes start-up touch a few hundred KB of text instead.

The runs happen under valgrind's callgrind (exact, not sampled) against the mock model:
`exec` on every bench task, then an ACP session (initialize, session/new, the five-read turn),
an app-server thread and an LSP initialize. Symbol names carry a hash of the build's
metadata, so the file is only good for the build it was made from: scripts/dist.sh makes it
from the binary it is about to ship, relinks that binary with it, and checks the match:

    python3 bench/order_file.py --bin BIN --mock MOCK --out order.txt
    python3 bench/order_file.py --bin RELINKED --check order.txt --min 0.9

Nothing of it is committed: a file from another machine or checkout would not match.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))

import tasks as T  # noqa: E402
from agents import Agent  # noqa: E402
from runner import Mock  # noqa: E402

ROOT = HERE.parent
MAX_NAME = 400


class Recorder:
    """valgrind command lines whose outputs sort in the order the flows ran."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.n = 0

    def __call__(self, name: str) -> list[str]:
        self.n += 1
        return ["valgrind", "--tool=callgrind", "--demangle=no", "--trace-children=no",
                f"--callgrind-out-file={self.out_dir}/{self.n:03d}-{name}.%p", "--"]


class Lines:
    """A JSON-lines peer: requests with ids, notifications, and answers to server requests."""

    def __init__(self, argv: list[str], env: dict, cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next_id = 0

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, jsonrpc: bool = True, until=None) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if jsonrpc:
            msg["jsonrpc"] = "2.0"
        self.send(msg)
        done = until or (lambda m: m.get("id") == self.next_id and "method" not in m)
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: the agent exited")
            m = json.loads(line)
            if "method" in m and "id" in m:
                self.answer(m, jsonrpc)
            elif done(m):
                return m

    def answer(self, m: dict, jsonrpc: bool) -> None:
        method = m["method"]
        if method == "session/request_permission":
            options = m["params"].get("options", [])
            allow = next((o["optionId"] for o in options if o.get("kind", "").startswith("allow")), None)
            result = {"outcome": {"outcome": "selected", "optionId": allow}} if allow else {
                "outcome": {"outcome": "cancelled"}}
        elif "requestApproval" in method:
            result = {"decision": "accept"}
        else:
            result = None
        reply = {"id": m["id"], "result": result}
        if jsonrpc:
            reply["jsonrpc"] = "2.0"
        self.send(reply)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


class LspPeer(Lines):
    """Content-Length framing for the LSP face."""

    def send(self, msg: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, jsonrpc: bool = True, until=None) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            length = 0
            while (line := self.proc.stdout.readline().strip()):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                raise RuntimeError(f"{method}: the language server exited")
            m = json.loads(self.proc.stdout.read(length))
            if "method" in m and "id" in m:
                self.send({"id": m["id"], "result": None})
            elif m.get("id") == self.next_id:
                return m


def drop_settings(argv: list[str], keys: tuple[str, ...]) -> list[str]:
    """argv without the `-c key=…` pairs of `keys`."""
    out: list[str] = []
    for a in argv:
        if out and out[-1] == "-c" and a.split("=", 1)[0] in keys:
            out.pop()
        else:
            out.append(a)
    return out


def run_flows(binary: Path, mock_bin: Path, work: Path, cg: Path) -> None:
    """Most important first: the ACP start-up, a one-reply exec, an ACP turn with five tool
    calls, then the rest. Functions are placed in the order these first ran them."""
    callgrind = Recorder(cg)
    exec_agent = Agent("ours-exec", "interpreter exec", "exec", "chat", "native", "mock-model")
    acp_agent = Agent("ours", "interpreter acp", "acp", "chat", "native", "mock-model")
    mock = Mock(work / "mock.log", {"replies": []}, mock_bin)
    try:
        def fresh(name: str) -> tuple[Path, Path]:
            ws, home = work / name / "ws", work / name / "home"
            T.make_fixture(ws)
            return ws, home

        # ACP start-up alone: initialize and session/new.
        ws, home = fresh("acp-start")
        argv, env = acp_agent.command(mock.url, mock.url, home, ws)
        argv[0] = str(binary)
        peer = Lines(callgrind("acp-start") + argv, env, ws)
        peer.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        peer.request("session/new", {"cwd": str(ws), "mcpServers": []})
        peer.close()

        # A one-reply exec.
        ws, home = fresh("exec-hello")
        mock.script([{"events": [{"text": "Hello from the mock model."}]}])
        argv, env = exec_agent.command(mock.url, mock.url, home, ws)
        argv[0] = str(binary)
        subprocess.run(callgrind("exec-hello") + argv, input=b"say hi", env=env, cwd=ws,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)

        # ACP: initialize, session/new, the latency turn.
        ws, home = fresh("acp")
        mock.script(T.script_for("native", T.LATENCY_TURN, ws, "lat"))
        argv, env = acp_agent.command(mock.url, mock.url, home, ws)
        argv[0] = str(binary)
        peer = Lines(callgrind("acp") + argv, env, ws)
        peer.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False}})
        sid = peer.request("session/new", {"cwd": str(ws), "mcpServers": []})["result"]["sessionId"]
        peer.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": T.LATENCY_PROMPT}]})
        peer.close()

        # exec: every bench task, once as the bench runs it and once with the default sandbox.
        for task in T.TASKS:
            for variant in ("bench", "default"):
                ws, home = fresh(f"exec-{task.key}-{variant}")
                mock.script(T.script_for("native", [s for _, steps in task.turns()[:1] for s in steps], ws))
                argv, env = exec_agent.command(mock.url, mock.url, home, ws, ephemeral=variant == "bench")
                if variant == "default":
                    argv = drop_settings(argv, ("approval_policy", "sandbox_mode")) + ["--full-auto"]
                argv[0] = str(binary)
                subprocess.run(callgrind(f"exec-{task.key}-{variant}") + argv, input=task.prompt.encode(),
                               env=env, cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)

        # app-server: initialize, thread/start, one turn.
        ws, home = fresh("app-server")
        mock.script([{"events": [{"text": "Hello from the mock model."}]}])
        argv, env = acp_agent.command(mock.url, mock.url, home, ws)
        argv[0] = str(binary)
        argv[1] = "app-server"
        peer = Lines(callgrind("app-server") + argv, env, ws)
        peer.request("initialize", {"clientInfo": {"name": "order-file", "title": "order", "version": "0"}},
                     jsonrpc=False)
        peer.send({"method": "initialized"})
        thread = peer.request("thread/start", {"cwd": str(ws)}, jsonrpc=False)["result"]["thread"]["id"]
        peer.request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "say hi"}]},
                     jsonrpc=False, until=lambda m: m.get("method") == "turn/completed")
        peer.close()

        # LSP: initialize and open a buffer.
        ws, home = fresh("lsp")
        argv, env = acp_agent.command(mock.url, mock.url, home, ws)
        argv[0] = str(binary)
        argv[1] = "lsp"
        peer = LspPeer(callgrind("lsp") + argv, env, ws)
        peer.request("initialize", {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}})
        peer.send({"method": "initialized", "params": {}})
        uri = (ws / "shop" / "cart.py").as_uri()
        text = (ws / "shop" / "cart.py").read_text()
        peer.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}}})
        peer.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "context": {"diagnostics": []}})
        peer.request("shutdown", {})
        peer.send({"method": "exit"})
        peer.proc.stdin.close()
        peer.proc.wait(timeout=120)
    finally:
        mock.stop()


FN = re.compile(r"^(c?fn|c?ob)=\((\d+)\)(?: (.*))?$")


def functions_run(files: list[Path], binary: Path) -> list[str]:
    """The functions of `binary` that ran, in the order they first ran across `files`."""
    seen: dict[str, None] = {}
    for f in files:
        names: dict[str, str] = {}
        objs: dict[str, str] = {}
        current_obj = None
        for line in f.read_text(errors="replace").splitlines():
            m = FN.match(line)
            if not m:
                continue
            kind, ident, text = m.groups()
            table = objs if kind.endswith("ob") else names
            if text:
                table[ident] = text
            if kind == "ob":
                current_obj = objs.get(ident)
            elif kind == "fn" and current_obj and Path(current_obj).name == binary.name:
                name = re.sub(r"'\d+$", "", names.get(ident, ""))
                if name and name not in seen:
                    seen[name] = None
    return list(seen)


def defined_names(binary: Path) -> set[str]:
    return set(subprocess.run(["nm", "--defined-only", "-j", str(binary)], capture_output=True, text=True,
                              check=True).stdout.split())


def check(binary: Path, order: Path, minimum: float) -> int:
    """Says how many of the file's names the binary defines; under `minimum` is a failure."""
    names = order.read_text().split()
    found = len(set(names) & defined_names(binary))
    share = found / len(names) if names else 0.0
    print(f"link order: {found} of {len(names)} functions ({share:.0%}) are in {binary.name}")
    if share < minimum:
        print(f"link order: under {minimum:.0%} of the names match: the order file is not from this build",
              file=sys.stderr)
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=Path, required=True, help="the interpreter binary to profile or check")
    ap.add_argument("--mock", type=Path, help="the mock-llm binary the runs talk to")
    ap.add_argument("--out", type=Path, help="where to write the order file")
    ap.add_argument("--check", type=Path, metavar="ORDER",
                    help="only say how much of ORDER the binary's names match")
    ap.add_argument("--min", type=float, default=0.9, help="with --check: the share that must match (0.9)")
    args = ap.parse_args()
    if args.check:
        return check(args.bin, args.check, args.min)
    if args.out is None or args.mock is None:
        ap.error("--out and --mock are needed to write an order file")
    if not shutil.which("valgrind"):
        print("valgrind is needed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if not args.bin.exists() or not args.mock.exists():
        print(f"build first: {args.bin} and {args.mock}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="order-file-") as tmp:
        work = Path(tmp)
        cg = work / "cg"
        cg.mkdir()
        run_flows(args.bin.resolve(), args.mock.resolve(), work, cg)
        names = functions_run(sorted(cg.iterdir()), args.bin.resolve())
    defined = defined_names(args.bin)
    # Very long names are small generic helpers; leaving them out keeps the file small.
    names = [n for n in names if n in defined and len(n) <= MAX_NAME]
    args.out.write_text("".join(n + "\n" for n in names))
    print(f"{args.out}: {len(names)} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
