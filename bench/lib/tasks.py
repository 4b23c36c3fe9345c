"""The token-economy task set and the scripted mock conversations behind it.

A task is a user prompt, a fixture repository and a list of logical steps (read a file, grep,
edit, write, run a command, answer). Every agent performs the same steps with its own tool
names and argument shapes (its "dialect"); the mock replays them, and the agent really runs
each tool in a fresh copy of the fixture, so the tool results it sends back are its own.
A check after the run confirms the steps had their effect (the bug is fixed, the tests pass).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# ------------------------------------------------------------------ fixture repository

FIXTURE: dict[str, str] = {
    "README.md": "# shop\n\nA tiny shop library used by the interpreter benchmarks.\n\n"
    "Run the tests with `python3 -m unittest -q`.\n",
    "shop/__init__.py": "",
    "shop/config.py": '''"""Shop settings: tax rate and currency, plus a parser for key = value files."""

TAX_RATE = 0.2
CURRENCY = "EUR"


def parse_cfg(text):
    """Parses `key = value` lines into a dict; blank lines and # comments are skipped."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out
''',
    "shop/pricing.py": '''"""Prices are integers in cents."""

from shop.config import TAX_RATE


def subtotal(items):
    """Sum of price * quantity over (price, quantity) pairs."""
    return sum(price * qty for price, qty in items)


def apply_discount(amount, percent):
    """`percent` off `amount`, rounded down to a cent."""
    return amount - amount * percent // 100


def total(items, discount_percent=0):
    """Subtotal, minus the discount, plus tax."""
    net = apply_discount(subtotal(items), discount_percent)
    net = apply_discount(net, discount_percent)
    return round(net * (1 + TAX_RATE))
''',
    "shop/cart.py": '''"""A shopping cart: (price in cents, quantity) lines."""


class Cart:
    def __init__(self):
        self.items = []

    def add(self, price, qty=1):
        if qty < 1:
            raise ValueError("quantity must be positive")
        self.items.append((price, qty))

    def count(self):
        """Number of articles in the cart (quantities summed)."""
        return sum(qty for _, qty in self.items)
''',
    "shop/cli.py": '''"""python3 -m shop.cli SETTINGS_FILE PRICE:QTY..."""

import sys

from shop import config, pricing


def main(argv):
    with open(argv[0]) as f:
        settings = config.parse_cfg(f.read())
    items = [tuple(int(x) for x in arg.split(":")) for arg in argv[1:]]
    discount = int(settings.get("discount", "0"))
    print(pricing.total(items, discount), settings.get("currency", config.CURRENCY))


if __name__ == "__main__":
    main(sys.argv[1:])
''',
    "tests/__init__.py": "",
    "tests/test_pricing.py": '''import unittest

from shop import pricing


class PricingTest(unittest.TestCase):
    def test_subtotal(self):
        self.assertEqual(pricing.subtotal([(100, 2), (50, 1)]), 250)

    def test_total_without_discount(self):
        self.assertEqual(pricing.total([(100, 1)]), 120)
''',
    "tests/test_cart.py": '''import unittest

from shop.cart import Cart


class CartTest(unittest.TestCase):
    def test_count_sums_quantities(self):
        cart = Cart()
        cart.add(100, 2)
        cart.add(50)
        self.assertEqual(cart.count(), 3)

    def test_rejects_zero(self):
        with self.assertRaises(ValueError):
            Cart().add(100, 0)
''',
    "tests/test_config.py": '''import unittest

from shop import config


class ConfigTest(unittest.TestCase):
    def test_parse(self):
        text = "# settings\\ncurrency = USD\\n\\ndiscount = 10\\n"
        self.assertEqual(config.parse_cfg(text), {"currency": "USD", "discount": "10"})
''',
}

# Extra small files for the latency turn (five reads).
LATENCY_FILES = {f"notes/n{i}.txt": f"note {i}\n" + "lorem ipsum dolor sit amet\n" * 8 for i in range(1, 6)}


def make_fixture(dest: Path, overrides: dict | None = None) -> None:
    for rel, text in {**FIXTURE, **LATENCY_FILES, **(overrides or {})}.items():
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


# ------------------------------------------------------------------ logical steps


@dataclass
class Step:
    op: str  # read | grep | edit | write | run | say
    path: str = ""
    pattern: str = ""
    old: str = ""
    new: str = ""
    content: str = ""
    command: str = ""
    text: str = ""


def read(path):
    return Step("read", path=path)


def grep(pattern):
    return Step("grep", pattern=pattern)


def edit(path, old, new):
    return Step("edit", path=path, old=old, new=new)


def write(path, content):
    return Step("write", path=path, content=content)


def run(command):
    return Step("run", command=command)


def say(text):
    return Step("say", text=text)


TESTS = "python3 -m unittest -q"


def _tests_pass(ws: Path) -> bool:
    r = subprocess.run(["python3", "-m", "unittest", "-q"], cwd=ws, capture_output=True, timeout=60)
    return r.returncode == 0


@dataclass
class Task:
    key: str
    title: str
    prompt: str
    steps: list
    check: object = None  # fn(ws) -> str ("" when fine)
    fixture: dict = field(default_factory=dict)  # files that differ from FIXTURE for this task
    more_turns: list = field(default_factory=list)  # later prompts in the same session: [(prompt, steps)]

    def turns(self) -> list:
        return [(self.prompt, self.steps), *self.more_turns]

    def n_requests(self) -> int:
        return sum(len(steps) for _, steps in self.turns())


def _check_fix_bug(ws: Path) -> str:
    src = (ws / "shop/pricing.py").read_text()
    return "" if src.count("apply_discount(") == 2 else "the duplicate discount line is still there"


def _check_rename(ws: Path) -> str:
    for rel in ("shop/config.py", "shop/cli.py", "tests/test_config.py"):
        src = (ws / rel).read_text()
        if "parse_cfg" in src or "parse_config" not in src:
            return f"{rel} not renamed"
    return "" if _tests_pass(ws) else "tests fail after the rename"


def _check_test_fix(ws: Path) -> str:
    return "" if _tests_pass(ws) else "tests still fail"


def _check_feature(ws: Path) -> str:
    if not (ws / "shop/format.py").exists() or not (ws / "tests/test_format.py").exists():
        return "files not written"
    return "" if _tests_pass(ws) else "tests fail"


def _check_none(ws: Path) -> str:
    return ""


def _check_follow_up(ws: Path) -> str:
    if "def clear(self):" not in (ws / "shop/cart.py").read_text():
        return "Cart.clear() not added"
    return "" if _tests_pass(ws) else "tests fail"


FORMAT_PY = '''"""Formatting prices for display."""

from shop.config import CURRENCY


def format_price(cents, currency=CURRENCY):
    """1234 -> "12.34 EUR"."""
    return f"{cents // 100}.{cents % 100:02d} {currency}"
'''

TEST_FORMAT_PY = '''import unittest

from shop.format import format_price


class FormatTest(unittest.TestCase):
    def test_format(self):
        self.assertEqual(format_price(1234), "12.34 EUR")
        self.assertEqual(format_price(5, "USD"), "0.05 USD")
'''

EXPLANATION = (
    "Tax is a flat rate: `TAX_RATE = 0.2` in shop/config.py (line 3). shop/pricing.py imports it "
    "(line 3) and `total()` (lines 16-20) applies it last: it takes the subtotal of price × quantity, "
    "subtracts the discount with `apply_discount`, then multiplies the net amount by `1 + TAX_RATE` and "
    "rounds to a whole cent. Note that the discount line is duplicated in `total()`, so a discount is "
    "currently applied twice before tax; the tax itself is computed correctly on whatever net amount "
    "reaches it. Changing the rate means editing the constant; there is no per-item or per-region tax."
)

TASKS: list[Task] = [
    Task(
        "fix-bug",
        "read a file and fix a bug",
        "total() in shop/pricing.py gives the wrong result when a discount is given. Find the bug and fix it.",
        [
            read("shop/pricing.py"),
            edit("shop/pricing.py", "    net = apply_discount(net, discount_percent)\n", ""),
            say("Fixed: `total()` applied the discount twice (a duplicated `apply_discount` line). "
                "I removed the second call, so the discount is now applied once before tax."),
        ],
        _check_fix_bug,
    ),
    Task(
        "rename",
        "rename a symbol across 3 files",
        "Rename the function parse_cfg to parse_config everywhere in the repository.",
        [
            grep("parse_cfg"),
            read("shop/config.py"),
            read("shop/cli.py"),
            read("tests/test_config.py"),
            edit("shop/config.py", "def parse_cfg(text):", "def parse_config(text):"),
            edit("shop/cli.py", "        settings = config.parse_cfg(f.read())",
                 "        settings = config.parse_config(f.read())"),
            edit("tests/test_config.py",
                 '        self.assertEqual(config.parse_cfg(text), {"currency": "USD", "discount": "10"})',
                 '        self.assertEqual(config.parse_config(text), {"currency": "USD", "discount": "10"})'),
            run(TESTS),
            say("Renamed `parse_cfg` to `parse_config` in shop/config.py (definition), shop/cli.py and "
                "tests/test_config.py (the two callers). The test suite passes."),
        ],
        _check_rename,
    ),
    Task(
        "test-fix",
        "run the tests and fix the failure",
        "Run the test suite and fix whatever fails.",
        [
            run(TESTS),
            read("shop/cart.py"),
            edit("shop/cart.py", "        return len(self.items)\n", "        return sum(qty for _, qty in self.items)\n"),
            run(TESTS),
            say("`Cart.count()` returned the number of lines instead of the number of articles. It now sums "
                "the quantities, and all tests pass."),
        ],
        _check_test_fix,
        fixture={"shop/cart.py": FIXTURE["shop/cart.py"].replace(
            "return sum(qty for _, qty in self.items)", "return len(self.items)")},
    ),
    Task(
        "feature",
        "add a function and its test",
        "Add shop/format.py with format_price(cents, currency) that renders 1234 as \"12.34 EUR\" "
        "(default currency from shop/config.py), plus a unit test.",
        [
            read("shop/config.py"),
            write("shop/format.py", FORMAT_PY),
            write("tests/test_format.py", TEST_FORMAT_PY),
            run(TESTS),
            say("Added shop/format.py with `format_price(cents, currency=CURRENCY)` and tests/test_format.py; "
                "the whole suite passes."),
        ],
        _check_feature,
    ),
    Task(
        "explain",
        "answer a question about the code (read-only)",
        "How is tax computed in this project? Answer briefly with file and line references.",
        [
            grep("TAX_RATE"),
            read("shop/config.py"),
            read("shop/pricing.py"),
            say(EXPLANATION),
        ],
        _check_none,
    ),
    Task(
        "follow-up",
        "two prompts in one session (question, then a change)",
        "What does shop/cart.py do?",
        [
            read("shop/cart.py"),
            say("shop/cart.py defines `Cart`, a list of (price in cents, quantity) lines: `add()` appends a "
                "line and rejects quantities below 1, `count()` returns the number of articles."),
        ],
        _check_follow_up,
        more_turns=[(
            "Add a clear() method that empties the cart, then run the tests.",
            [
                edit("shop/cart.py", "    def count(self):",
                     "    def clear(self):\n        self.items = []\n\n    def count(self):"),
                run(TESTS),
                say("Added `Cart.clear()`, which empties `items`; the tests pass."),
            ],
        )],
    ),
]

# The turn used for latency and RSS: five read-only tool calls, then a short answer.
LATENCY_TURN = [read(p) for p in LATENCY_FILES] + [say("Read the five notes.")]
LATENCY_PROMPT = "Read the five files under notes/ one by one, then say done."

# ------------------------------------------------------------------ dialects -> mock replies


def _patch_update(path: str, old: str, new: str) -> str:
    old_lines = old.rstrip("\n").split("\n")
    new_lines = new.rstrip("\n").split("\n") if new else []
    body = "".join(f"-{ln}\n" for ln in old_lines) + "".join(f"+{ln}\n" for ln in new_lines)
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}*** End Patch\n"


def _patch_add(path: str, content: str) -> str:
    body = "".join(f"+{ln}\n" for ln in content.rstrip("\n").split("\n"))
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def _tool(call_id: str, name: str, args: dict) -> dict:
    return {"tool_call": {"id": call_id, "name": name, "arguments": json.dumps(args)}}


def _custom_tool_call(call_id: str, name: str, text: str, index: int) -> list:
    """A Responses `custom_tool_call` (Codex's freeform apply_patch), written as raw SSE."""
    item = {"type": "custom_tool_call", "id": f"ctc_{call_id}", "call_id": call_id, "name": name, "input": "", "status": "in_progress"}
    done = dict(item, input=text, status="completed")
    evs = [
        ("response.output_item.added", {"output_index": index, "item": item}),
        ("response.custom_tool_call_input.delta", {"item_id": item["id"], "output_index": index, "delta": text}),
        ("response.output_item.done", {"output_index": index, "item": done}),
    ]
    return [{"raw": f"event: {k}\ndata: {json.dumps(dict(v, type=k))}\n\n"} for k, v in evs]


def step_events(dialect: str, step: Step, call_id: str, ws: Path) -> list:
    """The mock events of one step for one agent dialect."""
    op = step.op
    if op == "say":
        return [{"text": step.text}]
    absp = str(ws / step.path) if step.path else ""
    if dialect == "native":  # interpreter's Codex-style tools
        if op == "read":
            return [_tool(call_id, "read_file", {"path": step.path})]
        if op == "grep":
            return [_tool(call_id, "grep_files", {"pattern": step.pattern})]
        if op == "edit":
            return [_tool(call_id, "apply_patch", {"input": _patch_update(step.path, step.old, step.new)})]
        if op == "write":
            return [_tool(call_id, "apply_patch", {"input": _patch_add(step.path, step.content)})]
        if op == "run":
            return [_tool(call_id, "shell", {"command": step.command})]
    if dialect == "codex":  # Codex (gpt-5.5 tool set): exec_command + freeform apply_patch
        if op == "read":
            return [_tool(call_id, "exec_command", {"cmd": f"sed -n '1,200p' {shlex.quote(step.path)}"})]
        if op == "grep":
            return [_tool(call_id, "exec_command", {"cmd": f"rg -n {shlex.quote(step.pattern)}"})]
        if op == "edit":
            return _custom_tool_call(call_id, "apply_patch", _patch_update(step.path, step.old, step.new), 0)
        if op == "write":
            return _custom_tool_call(call_id, "apply_patch", _patch_add(step.path, step.content), 0)
        if op == "run":
            return [_tool(call_id, "exec_command", {"cmd": step.command})]
    if dialect == "opencode":
        if op == "read":
            return [_tool(call_id, "read", {"filePath": absp})]
        if op == "grep":
            return [_tool(call_id, "grep", {"pattern": step.pattern})]
        if op == "edit":
            return [_tool(call_id, "edit", {"filePath": absp, "oldString": step.old, "newString": step.new})]
        if op == "write":
            return [_tool(call_id, "write", {"filePath": absp, "content": step.content})]
        if op == "run":
            return [_tool(call_id, "bash", {"command": step.command, "description": "Run the tests"})]
    if dialect == "kimi":  # Kimi Code's tools (also interpreter's kimi-code harness)
        if op == "read":
            return [_tool(call_id, "Read", {"path": step.path})]
        if op == "grep":
            return [_tool(call_id, "Grep", {"pattern": step.pattern})]
        if op == "edit":
            return [_tool(call_id, "Edit", {"path": step.path, "old_string": step.old, "new_string": step.new})]
        if op == "write":
            return [_tool(call_id, "Write", {"path": step.path, "content": step.content})]
        if op == "run":
            return [_tool(call_id, "Bash", {"command": step.command})]
    if dialect in ("claude", "claude-code"):  # Claude Code's tools (also our claude-code harness)
        if op == "read":
            return [_tool(call_id, "Read", {"file_path": absp})]
        if op == "grep" and dialect == "claude":
            return [_tool(call_id, "Grep", {"pattern": step.pattern})]
        if op == "grep":  # Claude Code 2.1.332 lists no Grep tool: it searches with Bash
            return [_tool(call_id, "Bash", {"command": f"grep -rn {shlex.quote(step.pattern)} .",
                                            "description": "Search the code"})]
        if op == "edit":
            return [_tool(call_id, "Edit", {"file_path": absp, "old_string": step.old, "new_string": step.new})]
        if op == "write":
            return [_tool(call_id, "Write", {"file_path": absp, "content": step.content})]
        if op == "run":
            return [_tool(call_id, "Bash", {"command": step.command, "description": "Run the tests"})]
    if dialect == "qwen":  # Qwen Code's tools (also our qwen-code harness)
        if op == "read":
            return [_tool(call_id, "read_file", {"file_path": absp})]
        if op == "grep":
            return [_tool(call_id, "grep_search", {"pattern": step.pattern})]
        if op == "edit":
            return [_tool(call_id, "edit", {"file_path": absp, "old_string": step.old, "new_string": step.new})]
        if op == "write":
            return [_tool(call_id, "write_file", {"file_path": absp, "content": step.content})]
        if op == "run":
            return [_tool(call_id, "run_shell_command", {"command": step.command})]
    raise ValueError(f"{dialect}: {op}")


def script_for(dialect: str, steps: list, ws: Path, prefix: str = "call") -> list:
    """The mock replies for a list of steps: one reply per step."""
    return [{"events": step_events(dialect, s, f"{prefix}_{i + 1}", ws)} for i, s in enumerate(steps)]


def sse_script(n_chunks: int, gap_ms: int) -> list:
    """One reply streaming `n_chunks` text deltas `gap_ms` apart; each carries a unique marker."""
    events = []
    for i in range(n_chunks):
        events.append({"delay_ms": gap_ms})
        events.append({"text": f"{marker(i)} "})
    return [{"events": events}]


def marker(i: int) -> str:
    return f"zq{i:02d}q"
