#!/usr/bin/env python3
"""Side-by-side bench: interpreter vs its peers against the project's mock model.

Usually started by `bench/run`, which builds, installs the pinned peers and then calls
this with the right Python. Results: bench/out/results.json, bench/out/report.md and the
charts; `--update-docs` also rewrites the generated section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

import agents as A  # noqa: E402
import appserver as AS  # noqa: E402
import runner as R  # noqa: E402
import tasks as T  # noqa: E402


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    osr = ""
    try:
        osr = dict(
            line.rstrip().split("=", 1) for line in open("/etc/os-release") if "=" in line
        ).get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass

    def ver(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        except Exception:
            return "?"

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": osr,
        "kernel": platform.release(),
        "rustc": ver(["rustc", "--version"]),
        "python": platform.python_version(),
        "node22": ver([str(A.NODE22), "--version"]) if A.NODE22.exists() else "missing",
        "rg": ver(["rg", "--version"]),
        "interpreter": ver([str(A.OURS), "--version"]),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (median reported; at least 5)")
    ap.add_argument("--init-runs", type=int, default=15, help="spawn → initialize samples per ACP agent")
    ap.add_argument("--agents", default="", help="comma-separated agent keys (default: all)")
    ap.add_argument("--skip-perf", action="store_true")
    ap.add_argument("--skip-tokens", action="store_true")
    ap.add_argument("--skip-app-server", action="store_true", help="skip interpreter vs codex app-server")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "out"))
    ap.add_argument("--update-docs", action="store_true", help="rewrite the generated section of docs/benchmarks.md")
    ap.add_argument("--keep-scratch", action="store_true",
                    help="keep out/scratch (every run's workspace, home dir and agent log; opencode's is ~100 MB each)")
    ap.add_argument("--report-only", action="store_true",
                    help="re-render report.md (and the docs with --update-docs) from out/results.json")
    args = ap.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        return render(json.loads((out / "results.json").read_text()), out, args.update_docs)
    agents = A.all_agents()
    if args.agents:
        want = set(args.agents.split(","))
        agents = [a for a in agents if a.key in want]
    A.check_installed(agents)
    results: dict = {"machine": machine(), "runs": args.runs, "init_runs": args.init_runs, "agents": {}, "init": {},
                     "perf": {}, "exec": {}, "tokens": {}, "app_server": {}, "app_server_agents": {}}
    for a in agents:
        results["agents"][a.key] = {"label": a.label, "kind": a.kind, "wire": a.wire, "tools": a.tools,
                                    "model": a.model, "missing": a.missing}
        if a.missing:
            log(f"{a.key}: NOT AVAILABLE: {a.missing}")

    bench = R.Bench(out)
    try:
        if not args.skip_perf:
            for a in [a for a in agents if a.available() and a.kind == "acp"]:
                log(f"{a.key}: {args.init_runs} initialize samples")
                results["init"][a.key] = [bench.init_run(a) for _ in range(args.init_runs)]
            for a in [a for a in agents if a.available()]:
                runs = []
                for i in range(args.runs):
                    log(f"{a.key}: perf run {i + 1}/{args.runs}")
                    r = bench.acp_perf_run(a) if a.kind == "acp" else bench.exec_perf_run(a)
                    if r.get("error"):
                        log(f"{a.key}: run failed: {r['error']}")
                    runs.append(r)
                results["perf" if a.kind == "acp" else "exec"][a.key] = runs
        if not args.skip_app_server:
            for key, (label, _) in AS.AGENTS.items():
                miss = AS.missing(key)
                results["app_server_agents"][key] = {"label": label, "missing": miss}
                if miss:
                    log(f"{key}: NOT AVAILABLE: {miss}")
                    continue
                runs = []
                for i in range(args.runs):
                    log(f"{key}: app-server run {i + 1}/{args.runs}")
                    r = AS.run_once(bench, key)
                    if r.get("error"):
                        log(f"{key}: run failed: {r['error']}")
                    runs.append(r)
                results["app_server"][key] = runs
        if not args.skip_tokens:
            for a in [a for a in agents if a.available()]:
                rows = []
                for task in T.TASKS:
                    log(f"{a.key}: task {task.key}")
                    r = bench.task_run(a, task)
                    s = R.summarize_task(r)
                    if s["error"]:
                        log(f"{a.key}: task {task.key}: {s['error']}")
                    rows.append(s)
                results["tokens"][a.key] = rows
    finally:
        bench.close()
        if not args.keep_scratch:
            import shutil

            shutil.rmtree(out / "scratch", ignore_errors=True)
    results["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    log(f"wrote {out / 'results.json'}")

    return render(results, out, args.update_docs)


def render(results: dict, out: Path, update_docs: bool) -> int:
    import report

    md = report.render(results, out)
    (out / "report.md").write_text(md)
    print(report.console_summary(results))
    if update_docs:
        report.update_docs(md, out)
        log("updated docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
