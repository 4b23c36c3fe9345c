#!/usr/bin/env python3
"""What undo's checkpoints cost a turn: `interpreter exec` turns against the mock model, with
checkpoints (the default) and without (`-c undo_turns=0`), in this repository and in a
generated tree of 100,000 files, then the same files in a repository (committed, packed).
Prints median wall times and their differences for

- the first turn in a folder, with and without checkpoints (a reply: the snapshot before it is
  stopped when the turn ends without a tool call, keeping what it read), and a first command
  turn (every file is read and stored before the command runs);
- a reply turn (no tool call) and a command turn (a `shell` call, then the reply), each with
  the model answering after `--latency-ms` (default 1000: a fast model's first token).

The snapshot before a turn runs beside its first model request, so a turn pays for it only
where it takes longer than the model; the one after walks the folder only after a command.

    python3 bench/checkpoint.py --bin target/release/interpreter --mock target/release/mock-llm
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def reply(latency_ms: int) -> dict:
    return {"delay_ms": latency_ms, "events": [{"text": "ok"}]}


def command(latency_ms: int) -> dict:
    call = {"id": "c1", "name": "shell", "arguments": {"command": "true"}}
    return {"delay_ms": latency_ms, "events": [{"tool_call": call}]}


def start_mock(mock: str, tmp: Path, replies: list[dict]) -> tuple[subprocess.Popen, str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"replies": replies}))
    port_file = tmp / "port"
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


def turn(binary: str, url: str, cwd: Path, home: Path, extra: list[str]) -> float:
    args = [
        binary, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "-c", 'model_provider="mock"',
        "-c", f'model_providers.mock={{name="mock", base_url="{url}", wire_api="chat"}}',
        "-c", 'model="mock-model"',
        *extra, "say ok",
    ]
    env = dict(os.environ, OPENINTERPRETER_HOME=str(home))
    start = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=600)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"exec failed: {out.stderr.decode(errors='replace')}")
    return elapsed


def tree(root: Path, files: int) -> None:
    per_dir = 100
    for i in range(files):
        d = root / f"d{i // per_dir // per_dir}" / f"e{i // per_dir % per_dir}"
        if i % per_dir == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"file {i}\n" * 8)


OFF = ["-c", "undo_turns=0"]


def measure(name: str, binary: str, mock: str, folder: Path, runs: int, latency: int) -> dict:
    # The mock answers in order: the script follows the runs below exactly.
    kinds = [("reply", [reply(latency)]), ("command", [command(latency), reply(latency)])]
    # Two first turns (without checkpoints, then with), each in a fresh home; then a first
    # command turn in a third fresh home.
    replies = [reply(0), reply(0), command(latency), reply(latency)]
    for _, script in kinds:
        replies += script * (2 * runs)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        proc, url = start_mock(mock, tmp, replies)
        try:
            for h in ("home-off", "home-command", "home"):
                (tmp / h).mkdir()
            home = tmp / "home"
            off = turn(binary, url, folder, tmp / "home-off", OFF)
            on = turn(binary, url, folder, home, [])
            result = {
                "folder": name,
                "first_turn_off_s": round(off, 3),
                "first_turn_s": round(on, 3),
                "first_turn_cost_ms": round((on - off) * 1000, 1),
                "first_command_turn_s": round(turn(binary, url, folder, tmp / "home-command", []), 3),
            }
            for kind, _ in kinds:
                on = statistics.median(turn(binary, url, folder, home, []) for _ in range(runs))
                off = statistics.median(turn(binary, url, folder, home, OFF) for _ in range(runs))
                result[f"{kind}_on_s"] = round(on, 3)
                result[f"{kind}_off_s"] = round(off, 3)
                result[f"{kind}_cost_ms"] = round((on - off) * 1000, 1)
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/interpreter"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/mock-llm"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--latency-ms", type=int, default=1000)
    a = ap.parse_args()
    results = [measure("this repository", a.bin, a.mock, ROOT, a.runs, a.latency_ms)]
    big = Path(tempfile.mkdtemp(prefix="interpreter-checkpoint-bench-"))
    try:
        tree(big, a.files)
        results.append(
            measure(f"{a.files:,} files", a.bin, a.mock, big, a.runs, a.latency_ms)
        )
        # The same files in a repository, committed and packed as a clone's are: a first
        # snapshot starts from the repository's index.
        env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"], ["repack", "-adq"]):
            subprocess.run(["git", *args], cwd=big, env=env, check=True)
        name = f"{a.files:,} files, a repository"
        results.append(measure(name, a.bin, a.mock, big, a.runs, a.latency_ms))
    finally:
        shutil.rmtree(big, ignore_errors=True)
    print(f"model latency {a.latency_ms} ms; medians of {a.runs}")
    print("| folder | first turn: with / without (cost) | first command turn | reply turn: with / without (cost) | command turn: with / without (cost) |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['folder']} | {r['first_turn_s']} / {r['first_turn_off_s']} s ({r['first_turn_cost_ms']} ms)"
            f" | {r['first_command_turn_s']} s"
            f" | {r['reply_on_s']} / {r['reply_off_s']} s ({r['reply_cost_ms']} ms)"
            f" | {r['command_on_s']} / {r['command_off_s']} s ({r['command_cost_ms']} ms) |"
        )
    json.dump(results, sys.stderr)


if __name__ == "__main__":
    main()
