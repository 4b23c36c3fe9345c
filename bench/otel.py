#!/usr/bin/env python3
"""What `[otel]` costs a turn: one `interpreter exec` turn (three shell calls, then an answer)
against the mock, with `[otel]` off, exporting to a local OTLP/HTTP receiver (protobuf), and
exporting to a collector that is down. Prints the median wall time of each, side by side, in
one table.

    python3 bench/otel.py --bin target/release/interpreter --mock target/release/mock-llm
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Receiver(http.server.BaseHTTPRequestHandler):
    """Answers every export 200, as a collector does."""

    protocol_version = "HTTP/1.1"
    spans_bytes = 0

    def do_POST(self):  # noqa: N802 (http.server's name)
        n = int(self.headers.get("content-length", 0))
        Receiver.spans_bytes += len(self.rfile.read(n))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


def start_mock(mock: str, tmp: Path, replies: list[dict]) -> tuple[subprocess.Popen, str]:
    script = tmp / "model.json"
    script.write_text(json.dumps({"replies": replies}))
    port_file = tmp / "model.port"
    proc = subprocess.Popen(
        [mock, "--script", str(script), "--port-file", str(port_file), "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        if port_file.exists() and port_file.read_text().strip():
            return proc, port_file.read_text().strip()
        time.sleep(0.02)
    raise SystemExit("mock-llm did not start")


def calls() -> dict:
    return {"events": [
        {"tool_call": {"id": f"c{i}", "name": "shell", "arguments": {"command": f"echo {i}"}}}
        for i in range(3)
    ]}


def turn(binary: str, url: str, home: Path, cwd: Path) -> float:
    args = [
        binary, "exec", "--skip-git-repo-check", "-s", "workspace-write",
        "-c", 'model_provider="mock"',
        "-c", f'model_providers.mock={{name="mock", base_url="{url}", wire_api="chat"}}',
        "-c", 'model="mock-model"', "-c", 'harness="native"',
        "run the echoes",
    ]
    env = dict(os.environ, OPENINTERPRETER_HOME=str(home))
    start = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=600)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"exec failed: {out.stderr.decode(errors='replace')}")
    return elapsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/interpreter"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/mock-llm"))
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    a.bin, a.mock = str(Path(a.bin).resolve()), str(Path(a.mock).resolve())
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    up = f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces"
    down = f"http://127.0.0.1:{free_port()}/v1/traces"
    modes = {
        "off": "",
        "on (local receiver)": f'[otel]\nexporter = {{ otlp-http = {{ endpoint = "{up}" }} }}\n',
        "on (collector down)": f'[otel]\nexporter = {{ otlp-http = {{ endpoint = "{down}" }} }}\n',
    }
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        replies = [calls(), {"events": [{"text": "done"}]}] * (len(modes) * a.runs)
        proc, url = start_mock(a.mock, tmp, replies)
        (tmp / "cwd").mkdir()
        homes = {}
        for i, (name, text) in enumerate(modes.items()):
            homes[name] = tmp / f"home{i}"
            homes[name].mkdir()
            (homes[name] / "config.toml").write_text(text)
        times = {name: [] for name in modes}
        try:
            # Interleaved, so a noisy moment falls on every mode alike.
            for _ in range(a.runs):
                for name in modes:
                    times[name].append(turn(a.bin, url, homes[name], tmp / "cwd"))
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)
    receiver.shutdown()
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"One exec turn (three shell calls, then an answer), median of {a.runs} runs:\n")
    print("| [otel] | turn | vs off |")
    print("|---|---|---|")
    for name, m in medians.items():
        print(f"| {name} | {m * 1000:.0f} ms | {(m - medians['off']) * 1000:+.0f} ms |")
    print(f"\n{Receiver.spans_bytes} bytes of spans received.")
    print(json.dumps({"otel_turn_ms": {k: round(v * 1000, 1) for k, v in medians.items()}}))


if __name__ == "__main__":
    main()
