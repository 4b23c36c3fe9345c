"""Checks the Zed extension manifest, the ACP Registry entry and the Zed docs snippet.

Standard library only (Python 3.11+ for tomllib):

    python3 editors/zed/tests/test_manifests.py                 # manifests and docs
    INTERPRETER_BIN=target/debug/interpreter python3 editors/zed/tests/test_manifests.py
                                                                # + the registry's auth check

The agent.json rules mirror agentclientprotocol/registry (agent.schema.json, FORMAT.md and the
icon and auth rules its CI applies). The auth check sends the same `initialize` request as the
registry's verifier (.github/workflows/client.py) and applies its rule: at least one auth
method of type "agent" or "terminal" (a method without a type counts as "agent").
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

ZED = Path(__file__).resolve().parents[1]
ROOT = ZED.parents[1]
ENTRY = ZED / "registry" / "interpreter"

REGISTRY_PLATFORMS = {
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
}
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2")


def load_toml(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def workspace_version() -> str:
    return load_toml(ROOT / "Cargo.toml")["workspace"]["package"]["version"]


class ExtensionManifest(unittest.TestCase):
    def setUp(self):
        self.manifest = load_toml(ZED / "extension.toml")
        self.cargo = load_toml(ZED / "Cargo.toml")

    def test_required_fields(self):
        m = self.manifest
        for key in ("id", "name", "version", "description", "repository"):
            self.assertIsInstance(m.get(key), str, key)
            self.assertTrue(m[key].strip(), key)
        self.assertEqual(m["id"], "interpreter")
        self.assertEqual(m["schema_version"], 1)
        self.assertTrue(m["authors"] and all(isinstance(a, str) for a in m["authors"]))
        self.assertRegex(m["version"], r"^\d+\.\d+\.\d+$")
        self.assertEqual(m["version"], self.cargo["package"]["version"])

    def test_language_server(self):
        servers = self.manifest["language_servers"]
        self.assertEqual(list(servers), ["interpreter"])
        server = servers["interpreter"]
        self.assertEqual(server["name"], "interpreter")
        languages = server["languages"]
        self.assertGreaterEqual(len(languages), 10)
        self.assertEqual(len(languages), len(set(languages)), "duplicate language")
        for lang in ("Rust", "Python", "TypeScript", "TSX", "JavaScript", "Go", "C", "C++"):
            self.assertIn(lang, languages)
        # The Rust code looks its settings up under the same id.
        lib = (ZED / "src" / "lib.rs").read_text()
        self.assertIn('const SERVER_ID: &str = "interpreter";', lib)
        self.assertIn('const DEFAULT_ARGS: &[&str] = &["lsp"];', lib)

    def test_crate_is_a_standalone_cdylib(self):
        c = self.cargo
        self.assertIn("workspace", c, "needs its own [workspace] so the root workspace ignores it")
        self.assertEqual(c["lib"]["crate-type"], ["cdylib"])
        self.assertRegex(c["dependencies"]["zed_extension_api"], r"^=\d+\.\d+\.\d+$")
        root_members = load_toml(ROOT / "Cargo.toml")["workspace"]["members"]
        self.assertFalse(any(m.startswith("editors") for m in root_members))


class RegistryEntry(unittest.TestCase):
    def setUp(self):
        self.agent = json.loads((ENTRY / "agent.json").read_text())

    def test_required_fields(self):
        a = self.agent
        for key in ("id", "name", "version", "description", "distribution"):
            self.assertIn(key, a)
        self.assertRegex(a["id"], r"^[a-z][a-z0-9-]*$")
        self.assertEqual(a["id"], ENTRY.name, "the id must match the folder name")
        self.assertTrue(a["name"].strip())
        self.assertTrue(a["description"].strip())
        self.assertRegex(a["version"], r"^[0-9]+\.[0-9]+\.[0-9]+$")
        self.assertEqual(a["version"], workspace_version())
        self.assertRegex(a["repository"], r"^https://github\.com/[^/]+/[^/]+$")
        self.assertEqual(a["license"], "Apache-2.0")
        self.assertTrue(all(isinstance(x, str) for x in a.get("authors", [])))

    def test_binary_distribution(self):
        dist = self.agent["distribution"]
        self.assertLessEqual(set(dist), {"binary", "npx", "uvx"})
        binary = dist["binary"]
        self.assertTrue(binary)
        self.assertLessEqual(set(binary), REGISTRY_PLATFORMS)
        # The Registry lists an agent only with builds for all three.
        for os_family in ("darwin", "linux", "windows"):
            self.assertTrue(any(p.startswith(os_family) for p in binary), os_family)
        version = self.agent["version"]
        for platform, target in binary.items():
            with self.subTest(platform=platform):
                self.assertLessEqual(set(target), {"archive", "sha256", "cmd", "args", "env"})
                archive = target["archive"]
                self.assertTrue(archive.startswith("https://"), archive)
                self.assertTrue(archive.endswith(ARCHIVE_SUFFIXES), archive)
                self.assertIn(f"/v{version}/", archive, "the release tag follows the version")
                exe = "./interpreter.exe" if platform.startswith("windows") else "./interpreter"
                self.assertEqual(target["cmd"], exe)
                if platform.startswith("windows"):
                    self.assertTrue(archive.endswith(".zip"), archive)
                self.assertEqual(target["args"], ["acp"])
                if "sha256" in target:
                    self.assertRegex(target["sha256"], r"^[a-fA-F0-9]{64}$")

    def test_npx_distribution(self):
        # The schema's packageDistribution: package (with an optional @version), args, env.
        npx = self.agent["distribution"]["npx"]
        self.assertLessEqual(set(npx), {"package", "args", "env"})
        self.assertEqual(npx["package"], f"@openinterpreter/interpreter@{self.agent['version']}")
        self.assertEqual(npx["args"], ["acp"])
        launcher = json.loads((ROOT / "npm" / "interpreter" / "package.json").read_text())
        self.assertEqual(launcher["name"], "@openinterpreter/interpreter")
        # npx runs the bin named like the package when there are several.
        self.assertIn("interpreter", launcher["bin"])

    def test_icon(self):
        svg = ET.parse(ENTRY / "icon.svg").getroot()
        self.assertTrue(svg.tag.endswith("svg"))
        size = (svg.get("width"), svg.get("height"))
        self.assertTrue(size == ("16", "16") or svg.get("viewBox") == "0 0 16 16", size)
        for el in svg.iter():
            for attr in ("fill", "stroke"):
                value = el.get(attr)
                if value is not None:
                    self.assertIn(value, ("currentColor", "none"), f"{el.tag} {attr}={value}")
            self.assertNotRegex(el.get("style") or "", r"(fill|stroke)\s*:\s*(?!currentColor|none)")


class ZedDocs(unittest.TestCase):
    def test_agent_servers_snippet(self):
        for doc in (ROOT / "docs" / "zed.md", ROOT / "README.md"):
            with self.subTest(doc=doc.name):
                blocks = re.findall(r"```json\n(.*?)```", doc.read_text(), re.S)
                snippets = [json.loads(b) for b in blocks if '"agent_servers"' in b]
                self.assertTrue(snippets, f"{doc} has no agent_servers JSON block")
                entry = snippets[0]["agent_servers"]["interpreter"]
                self.assertEqual(entry["type"], "custom")
                self.assertEqual(entry["command"], "interpreter")
                self.assertEqual(entry["args"], ["acp"])
                self.assertIn("MOONSHOT_API_KEY", entry.get("env", {}))


def auth_method_types(methods: list) -> list:
    """The registry verifier's reading of authMethods (client.py parse_auth_methods)."""
    types = []
    for m in methods:
        t = m.get("type")
        meta = m.get("_meta") if isinstance(m.get("_meta"), dict) else {}
        if not t and "terminal-auth" in meta:
            t = "terminal"
        elif not t and "agent-auth" in meta:
            t = "agent"
        types.append(t or "agent")
    return types


@unittest.skipUnless(os.environ.get("INTERPRETER_BIN"), "set INTERPRETER_BIN to run the auth check")
class RegistryAuthCheck(unittest.TestCase):
    def initialize(self, client_capabilities: dict) -> dict:
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
                "clientCapabilities": client_capabilities,
            },
        }
        with tempfile.TemporaryDirectory(prefix="acp-auth-check-") as home:
            # Like the verifier: an empty HOME, no API keys, only PATH passed through.
            env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "TERM": "dumb"}
            done = subprocess.run(
                [os.path.abspath(os.environ["INTERPRETER_BIN"]), "acp"],
                input=json.dumps(request) + "\n",
                capture_output=True,
                text=True,
                env=env,
                cwd=home,
                timeout=30,
            )
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        self.assertTrue(lines, f"no answer; stderr: {done.stderr[-2000:]}")
        for line in lines:
            json.loads(line)  # the registry quarantines agents that write non-JSON to stdout
        response = json.loads(lines[0])
        self.assertNotIn("error", response)
        return response["result"]

    def test_registry_verifier_request(self):
        result = self.initialize(
            {
                "terminal": True,
                "fs": {"readTextFile": True, "writeTextFile": True},
                "_meta": {"terminal_output": True, "terminal-auth": True},
            }
        )
        types = auth_method_types(result.get("authMethods", []))
        self.assertTrue(set(types) & {"agent", "terminal"}, types)

    def test_agent_and_terminal_methods(self):
        result = self.initialize({"auth": {"terminal": True}})
        methods = result["authMethods"]
        types = auth_method_types(methods)
        self.assertIn("agent", types)
        self.assertIn("terminal", types)
        terminal = methods[types.index("terminal")]
        self.assertEqual(terminal.get("args"), ["login"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[1:])
