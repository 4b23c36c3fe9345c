#!/usr/bin/env python3
"""The terminal UI's own costs, measured on the real binary in a pseudo-terminal against
the mock model (nothing leaves 127.0.0.1). Prints:

  - spawn -> first drawn prompt (the composer is on screen) and -> ready (session open);
  - RSS at idle and after a 200-message session (100 prompts, 100 answers);
  - redraw cost while 5,000 tokens stream in: frames, median and max frame time.

Targets: under 20 ms to the prompt, under 20 MB RSS, no frame over 16 ms.

  bench/tui.py [--bin target/release/interpreter] [--mock target/release/mock-llm] [--runs 5]

The pty answers the terminal queries the TUI makes (cursor position, device attributes), as
a terminal would. Frame times come from INTERPRETER_TUI_FRAME_STATS (written at exit).
"""
import argparse
import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

ROWS, COLS = 40, 120
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Pty:
    """The binary on a pty of ROWS x COLS; reads its output and answers its queries."""

    def __init__(self, argv, env, cwd):
        self.start = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        self.out = b""
        self.seen = 0

    def pump(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return False
        self.out += data
        # Answer queries a terminal answers: cursor position and primary device attributes.
        tail = self.out[max(0, self.seen - 8):]
        n = tail.count(b"\x1b[6n")
        for _ in range(n):
            os.write(self.fd, b"\x1b[1;1R")
        for _ in range(tail.count(b"\x1b[c")):
            os.write(self.fd, b"\x1b[?62;22c")
        self.seen = len(self.out)
        return True

    def wait_for(self, needle, limit=30.0, after=0):
        deadline = time.perf_counter() + limit
        while needle not in self.out[after:]:
            if time.perf_counter() > deadline:
                raise SystemExit(f"timed out waiting for {needle!r}; output tail: {self.out[-400:]!r}")
            self.pump(0.01)
        return time.perf_counter()

    def send(self, data):
        os.write(self.fd, data)

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def quit(self):
        self.send(b"\x04")  # Ctrl+D on an empty prompt
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline:
            self.pump(0.05)
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def start_mock(mock, replies, tmp):
    script = os.path.join(tmp, f"script-{len(os.listdir(tmp))}.json")
    with open(script, "w") as f:
        json.dump({"replies": replies}, f)
    port_file = script + ".port"
    proc = subprocess.Popen([mock, "--script", script, "--port-file", port_file],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return proc, open(port_file).read().strip()
        time.sleep(0.01)
    raise SystemExit("mock-llm did not start")


def setup(tmp, url):
    repo = tempfile.mkdtemp(dir=tmp)
    home = tempfile.mkdtemp(dir=tmp)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("# bench\n")
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'model_provider = "mock"\nmodel = "mock-model"\n\n[model_providers.mock]\n'
                f'name = "mock"\nbase_url = "{url}"\nwire_api = "chat"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENINTERPRETER_", "CODEX_"))}
    env.update(OPENINTERPRETER_HOME=home, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    return repo, env


def answer(i):
    return (f"Answer {i}: the change is in **src/lib.rs**.\n\n- it reads the file\n- it checks "
            f"`parse()`\n\n```rust\nfn f{i}() -> u32 {{ {i} }}\n```\n\nDone {i}.")


def startup(args, tmp):
    mock, url = start_mock(args.mock, [], tmp)
    try:
        first, ready = [], []
        for _ in range(args.runs):
            repo, env = setup(tmp, url)
            p = Pty([args.bin], env, repo)
            t1 = p.wait_for(b"\xe2\x80\xba ")  # the composer's prompt mark, first frame
            t2 = p.wait_for(b"Ask anything")
            first.append((t1 - p.start) * 1000)
            ready.append((t2 - p.start) * 1000)
            p.quit()
        return statistics.median(first), statistics.median(ready)
    finally:
        mock.kill()


def memory(args, tmp):
    replies = [{"events": [{"text": answer(i)}]} for i in range(100)]
    mock, url = start_mock(args.mock, replies, tmp)
    try:
        repo, env = setup(tmp, url)
        p = Pty([args.bin], env, repo)
        p.wait_for(b"Ask anything")
        end = time.perf_counter() + 1.0
        while time.perf_counter() < end:
            p.pump(0.05)
        idle = p.rss_kb()
        for i in range(100):
            mark = len(p.out)
            p.send(f"question {i}\r".encode())
            p.wait_for(f"Done {i}.".encode(), after=mark)
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            p.pump(0.05)
        after = p.rss_kb()
        p.quit()
        return idle / 1024, after / 1024
    finally:
        mock.kill()


def streaming(args, tmp):
    events = []
    words = ["The", "parser", "reads", "each", "token", "and", "`checks`", "its", "**kind**", "then"]
    for i in range(5000):
        if i % 400 == 0:
            events.append({"text": "\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n"})
        elif i % 60 == 0:
            events.append({"text": "\n\n- "})
        events.append({"text": words[i % len(words)] + " "})
        if i % 10 == 9:
            events.append({"delay_ms": 2})
    events.append({"text": "\n\nSTREAM-END"})
    mock, url = start_mock(args.mock, [{"events": events}], tmp)
    try:
        repo, env = setup(tmp, url)
        stats = os.path.join(tmp, "frames.json")
        env["INTERPRETER_TUI_FRAME_STATS"] = stats
        p = Pty([args.bin], env, repo)
        p.wait_for(b"Ask anything")
        mark = len(p.out)
        t0 = time.perf_counter()
        p.send(b"stream please\r")
        p.wait_for(b"STREAM-END", limit=120, after=mark)
        took = time.perf_counter() - t0
        p.quit()
        with open(stats) as f:
            s = json.load(f)
        return s, took
    finally:
        mock.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/interpreter"))
    ap.add_argument("--mock", default=os.path.join(ROOT, "target/release/mock-llm"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    args.bin, args.mock = os.path.abspath(args.bin), os.path.abspath(args.mock)
    for b in (args.bin, args.mock):
        if not os.path.exists(b):
            raise SystemExit(f"{b} not found: cargo build --release -p interpreter -p interpreter-tests --bins")
    with tempfile.TemporaryDirectory() as tmp:
        first, ready = startup(args, tmp)
        idle, after = memory(args, tmp)
        frames, took = streaming(args, tmp)
    ok = lambda c: "ok" if c else "OVER TARGET"
    print(f"binary: {args.bin}")
    print(f"spawn -> first drawn prompt: {first:.1f} ms (median of {args.runs})  target < 20 ms  {ok(first < 20)}")
    print(f"spawn -> session ready:      {ready:.1f} ms")
    print(f"RSS idle:                    {idle:.1f} MB  target < 20 MB  {ok(idle < 20)}")
    print(f"RSS after 200 messages:      {after:.1f} MB  target < 20 MB  {ok(after < 20)}")
    print(f"streaming 5,000 tokens:      {frames['frames']} frames in {took:.1f} s, "
          f"median {frames['median_ms']:.2f} ms, max {frames['max_ms']:.2f} ms  "
          f"target max < 16 ms  {ok(frames['max_ms'] < 16)}")
    os.makedirs(os.path.join(ROOT, "bench/out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench/out/tui.json"), "w") as f:
        json.dump({"first_prompt_ms": first, "ready_ms": ready, "rss_idle_mb": idle,
                   "rss_200_messages_mb": after, "stream_frames": frames, "stream_seconds": took}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
