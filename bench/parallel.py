#!/usr/bin/env python3
"""Parallel tool calls: one model response with four independent reads, run by `interpreter
exec` against the mock, with the calls of a response run together (the default) and one by one
(`-c parallel_tool_calls=false`). Each read is a fetch of a page the mock serves after
`--page-ms` (default 500, a slow site), so a read costs about that long. Prints the median
wall time of each way, side by side, in one table, for 1, 2 and 4 reads.

    python3 bench/parallel.py --bin target/release/interpreter --mock target/release/mock-llm
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_mock(mock: str, tmp: Path, name: str, replies: list[dict]) -> tuple[subprocess.Popen, str]:
    script = tmp / f"{name}.json"
    script.write_text(json.dumps({"replies": replies}))
    port_file = tmp / f"{name}.port"
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


def origin(url: str) -> str:
    """`http://127.0.0.1:PORT` of a mock URL (which may end in `/v1`)."""
    return url.removesuffix("/").removesuffix("/v1")


def reads(web: str, n: int, page_ms: int) -> dict:
    calls = [
        {"tool_call": {"id": f"f{i}", "name": "FetchURL",
                       "arguments": {"url": f"{web}/web/slow/{page_ms}/page-{i}"}}}
        for i in range(n)
    ]
    return {"events": calls}


def turn(binary: str, url: str, web: str, home: Path, cwd: Path, parallel: bool) -> float:
    args = [
        binary, "exec", "--skip-git-repo-check",
        "-c", 'model_provider="mock"',
        "-c", f'model_providers.mock={{name="mock", base_url="{url}", wire_api="chat"}}',
        "-c", 'model="kimi-k3"', "-c", 'harness="kimi-code"',
        "-c", "web.allow_private=true",
        "-c", f"parallel_tool_calls={'true' if parallel else 'false'}",
        "read the pages",
    ]
    env = dict(os.environ, OPENINTERPRETER_HOME=str(home))
    start = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=600)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"exec failed: {out.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/interpreter"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/mock-llm"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--page-ms", type=int, default=500)
    a = ap.parse_args()
    a.bin, a.mock = str(Path(a.bin).resolve()), str(Path(a.mock).resolve())
    counts = [1, 2, 4]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        web_proc, web_url = start_mock(a.mock, tmp, "web", [])
        web = origin(web_url)
        # The model mock answers in order: per run, the reads, then a reply.
        replies = []
        for n in counts:
            replies += [reads(web, n, a.page_ms), {"events": [{"text": "done"}]}] * (2 * a.runs)
        proc, url = start_mock(a.mock, tmp, "model", replies)
        (tmp / "home").mkdir()
        (tmp / "cwd").mkdir()
        rows = []
        try:
            for n in counts:
                times = {True: [], False: []}
                for _ in range(a.runs):
                    for parallel in (False, True):
                        times[parallel].append(
                            turn(a.bin, url, web, tmp / "home", tmp / "cwd", parallel)
                        )
                seq, par = statistics.median(times[False]), statistics.median(times[True])
                rows.append((n, seq, par))
        finally:
            for p in (proc, web_proc):
                p.stdin.close()
                p.wait(timeout=10)
    print(f"Reads of {a.page_ms} ms each in one response, median of {a.runs} `exec` runs:\n")
    print("| reads | one by one | together | saved |")
    print("|---|---|---|---|")
    for n, seq, par in rows:
        print(f"| {n} | {seq:.2f} s | {par:.2f} s | {seq - par:.2f} s |")
    print(json.dumps({"parallel_reads": [
        {"reads": n, "sequential_s": round(s, 3), "parallel_s": round(p, 3)} for n, s, p in rows
    ]}))


if __name__ == "__main__":
    main()
