#!/usr/bin/env python3
"""What undo's checkpoints cost a turn: `interpreter exec` turns against the mock model, with
checkpoints (the default) and without (`-c undo_turns=0`), in this repository and in a
generated tree of 100,000 files. Prints the median wall time of each and the difference (two
snapshots a turn: before and after). The first turn in a folder hashes every file; later ones
only what changed, so the first is reported apart.

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


def start_mock(mock: str, tmp: Path, turns: int) -> tuple[subprocess.Popen, str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"replies": [{"events": [{"text": "ok"}]}] * turns}))
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
        binary, "exec", "--skip-git-repo-check",
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


def measure(name: str, binary: str, mock: str, folder: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        proc, url = start_mock(mock, tmp, 4 * runs + 4)
        try:
            home = tmp / "home"
            home.mkdir()
            first = turn(binary, url, folder, home, [])
            on = [turn(binary, url, folder, home, []) for _ in range(runs)]
            off = [turn(binary, url, folder, home, ["-c", "undo_turns=0"]) for _ in range(runs)]
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)
    result = {
        "folder": name,
        "first_turn_s": round(first, 3),
        "turn_with_checkpoints_s": round(statistics.median(on), 3),
        "turn_without_s": round(statistics.median(off), 3),
    }
    result["checkpoints_cost_ms"] = round(
        (result["turn_with_checkpoints_s"] - result["turn_without_s"]) * 1000, 1
    )
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/interpreter"))
    ap.add_argument("--mock", default=str(ROOT / "target/release/mock-llm"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=100_000)
    a = ap.parse_args()
    results = [measure("this repository", a.bin, a.mock, ROOT, a.runs)]
    big = Path(tempfile.mkdtemp(prefix="interpreter-checkpoint-bench-"))
    try:
        tree(big, a.files)
        results.append(measure(f"{a.files:,} files", a.bin, a.mock, big, a.runs))
    finally:
        shutil.rmtree(big, ignore_errors=True)
    print("| folder | first turn | turn with checkpoints | without | checkpoints per turn |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['folder']} | {r['first_turn_s']} s | {r['turn_with_checkpoints_s']} s"
            f" | {r['turn_without_s']} s | {r['checkpoints_cost_ms']} ms |"
        )
    json.dump(results, sys.stderr)


if __name__ == "__main__":
    main()
