"""Release consistency: versions agree, and every published name points at something the
release workflow makes.

Standard library only (Python 3.11+ for tomllib):

    python3 tests/dist/test_release.py                  # the repository
    python3 tests/dist/test_release.py --assets DIR     # + the assembled release assets in DIR

- The version in Cargo.toml (workspace.package.version) is the one in agent.json (and its
  URLs and npx package), editors/zed/extension.toml, the npm packages (and the launcher's
  optionalDependencies), editors/vscode/package.json and its lock file, the Neovim plugin,
  the Action's pinned release and every `openinterpreter/interpreter@v…` in the docs.
- Every archive agent.json names is an asset of a released (non-experimental) target of
  .github/workflows/release.yml, under the tag of that version, for the right platform; every
  released target is in agent.json; the npm platform packages are exactly the released
  targets; the install script and the Neovim plugin ask for targets that are released.
- With --assets: every agent.json archive is in DIR and in DIR/SHA256SUMS with the right hash.
"""

import hashlib
import json
import re
import sys
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPO_URL = "https://github.com/openinterpreter/interpreter"
ASSETS: Path | None = None


def read(rel: str) -> str:
    return (ROOT / rel).read_text()


def version() -> str:
    return tomllib.loads(read("Cargo.toml"))["workspace"]["package"]["version"]


def agent() -> dict:
    return json.loads(read("editors/zed/registry/interpreter/agent.json"))


def release_matrix() -> list[dict]:
    """The build matrix of release.yml: one `- { target: …, os: …, experimental: … }` per line."""
    entries = []
    for line in read(".github/workflows/release.yml").splitlines():
        m = re.match(r"^\s*- \{(.*)\}\s*$", line)
        if not m or "target:" not in m.group(1):
            continue
        entry = {}
        for part in m.group(1).split(","):
            key, _, value = part.partition(":")
            entry[key.strip()] = value.strip()
        entries.append(entry)
    return entries


def released_targets() -> list[str]:
    return [e["target"] for e in release_matrix() if e.get("experimental") != "true"]


def archive_name(ver: str, target: str) -> str:
    ext = "zip" if "-windows-" in target else "tar.gz"
    return f"interpreter-v{ver}-{target}.{ext}"


# Target triple -> the ACP Registry platform, the npm platform package and the VS Code target.
def registry_platform(target: str) -> str:
    arch = target.split("-")[0]
    os_ = "darwin" if "apple-darwin" in target else "windows" if "-windows-" in target else "linux"
    return f"{os_}-{arch}"


def node_platform(target: str) -> str:
    arch = {"x86_64": "x64", "aarch64": "arm64"}[target.split("-")[0]]
    os_ = "darwin" if "apple-darwin" in target else "win32" if "-windows-" in target else "linux"
    return f"{os_}-{arch}"


class Versions(unittest.TestCase):
    def setUp(self):
        self.version = version()

    def test_cargo_version_is_semver(self):
        self.assertRegex(self.version, r"^\d+\.\d+\.\d+$")

    def test_agent_json(self):
        a = agent()
        self.assertEqual(a["version"], self.version)
        for platform, t in a["distribution"]["binary"].items():
            self.assertIn(f"/download/v{self.version}/", t["archive"], platform)
            self.assertIn(f"-v{self.version}-", t["archive"], platform)
        self.assertEqual(a["distribution"]["npx"]["package"], f"@openinterpreter/interpreter@{self.version}")

    def test_zed_extension(self):
        self.assertEqual(tomllib.loads(read("editors/zed/extension.toml"))["version"], self.version)
        self.assertEqual(tomllib.loads(read("editors/zed/Cargo.toml"))["package"]["version"], self.version)

    def test_npm_packages(self):
        launcher = json.loads(read("npm/interpreter/package.json"))
        self.assertEqual(launcher["version"], self.version)
        for name, spec in launcher["optionalDependencies"].items():
            self.assertEqual(spec, self.version, name)
        platforms = sorted((ROOT / "npm" / "platforms").glob("*/package.json"))
        self.assertTrue(platforms)
        for p in platforms:
            self.assertEqual(json.loads(p.read_text())["version"], self.version, p)

    def test_vscode_extension(self):
        self.assertEqual(json.loads(read("editors/vscode/package.json"))["version"], self.version)
        lock = json.loads(read("editors/vscode/package-lock.json"))
        self.assertEqual(lock["version"], self.version)
        self.assertEqual(lock["packages"][""]["version"], self.version)

    def test_neovim_plugin(self):
        m = re.search(r'^M\.version = "([^"]+)"', read("editors/neovim/lua/interpreter/init.lua"), re.M)
        self.assertTrue(m)
        self.assertEqual(m.group(1), self.version)

    def test_action_pins_this_release(self):
        m = re.search(r"^PINNED_VERSION=(\S+)$", read("scripts/action.sh"), re.M)
        self.assertTrue(m)
        self.assertEqual(m.group(1), self.version)

    def test_docs_name_this_release(self):
        for doc in ["README.md", "docs/ci.md", "docs/neovim.md", "docs/zed.md", "editors/neovim/README.md"]:
            text = read(doc)
            for m in re.finditer(r"openinterpreter/interpreter@v([0-9][^\s`'\"]*)", text):
                self.assertEqual(m.group(1), self.version, f"{doc}: {m.group(0)}")
            for m in re.finditer(r"@openinterpreter/interpreter@([0-9][^\s`'\"]*)", text):
                self.assertEqual(m.group(1), self.version, f"{doc}: {m.group(0)}")


class ReleaseNames(unittest.TestCase):
    def setUp(self):
        self.version = version()
        self.matrix = release_matrix()
        self.released = released_targets()

    def test_matrix(self):
        targets = [e["target"] for e in self.matrix]
        self.assertEqual(
            sorted(targets),
            sorted(
                [
                    "x86_64-unknown-linux-musl",
                    "aarch64-unknown-linux-musl",
                    "x86_64-apple-darwin",
                    "aarch64-apple-darwin",
                    "x86_64-pc-windows-msvc",
                ]
            ),
        )
        for e in self.matrix:
            self.assertIn(e.get("experimental"), ("true", "false"), e)
            self.assertTrue(e.get("os"), e)

    def test_macos_and_windows_are_tested_and_released(self):
        workflow = read(".github/workflows/release.yml")
        tests = re.findall(r"^\s*- \{ platform: ([^,]+), os: ([^,]+),", workflow, re.M)
        self.assertIn(("aarch64-apple-darwin", "macos-15"), tests)
        self.assertIn(("x86_64-apple-darwin", "macos-15"), tests)
        self.assertIn(("x86_64-pc-windows-msvc", "windows-2022"), tests)
        self.assertIn("needs: [build, test]", workflow, "a release waits for the platform tests")
        for t in ("aarch64-apple-darwin", "x86_64-apple-darwin", "x86_64-pc-windows-msvc"):
            self.assertIn(t, self.released, f"{t} is released (not experimental)")
        self.assertIn("windows-x86_64", agent()["distribution"]["binary"])
        self.assertIn("x86_64-pc-windows-*) echo win32-x64", read("scripts/dist.sh"))
        self.assertIn("install.ps1", workflow)

    def test_every_registry_archive_is_a_release_asset(self):
        assets = {archive_name(self.version, t): t for t in self.released}
        binary = agent()["distribution"]["binary"]
        for platform, t in binary.items():
            with self.subTest(platform=platform):
                prefix = f"{REPO_URL}/releases/download/v{self.version}/"
                self.assertTrue(t["archive"].startswith(prefix), t["archive"])
                name = t["archive"][len(prefix):]
                self.assertIn(name, assets, f"no release job makes {name}")
                self.assertEqual(registry_platform(assets[name]), platform)
                exe = "./interpreter.exe" if platform.startswith("windows") else "./interpreter"
                self.assertEqual(t["cmd"], exe)
        # And every released target is offered.
        self.assertEqual(sorted(binary), sorted(registry_platform(t) for t in self.released))

    def test_linux_archives_are_static_musl_builds(self):
        for t in self.released:
            if "linux" in t:
                self.assertTrue(t.endswith("-linux-musl"), t)

    def test_npm_platform_packages_are_the_released_targets(self):
        dirs = sorted(p.name for p in (ROOT / "npm" / "platforms").iterdir() if p.is_dir())
        self.assertEqual(dirs, sorted(node_platform(t) for t in self.released))
        launcher = json.loads(read("npm/interpreter/package.json"))
        self.assertEqual(
            sorted(launcher["optionalDependencies"]),
            sorted(f"@openinterpreter/interpreter-{d}" for d in dirs),
        )
        self.assertEqual(launcher["bin"], {"interpreter": "bin/interpreter.js", "i": "bin/interpreter.js"})
        self.assertEqual(launcher.get("dependencies", {}), {})
        script = read("npm/interpreter/bin/interpreter.js")
        table = dict(re.findall(r'"([a-z0-9]+-[a-z0-9]+)": "(@openinterpreter/interpreter-[a-z0-9-]+)"', script))
        self.assertEqual(table, {d: f"@openinterpreter/interpreter-{d}" for d in dirs})
        for d in dirs:
            pkg = json.loads((ROOT / "npm" / "platforms" / d / "package.json").read_text())
            os_, cpu = d.split("-")
            self.assertEqual(pkg["name"], f"@openinterpreter/interpreter-{d}")
            self.assertEqual((pkg["os"], pkg["cpu"]), ([os_], [cpu]))
            self.assertNotIn("bin", pkg, "only the launcher puts commands on PATH")

    def test_installers_ask_for_released_targets(self):
        released = set(self.released)
        install_sh = read("scripts/install.sh")
        install_lua = read("editors/neovim/lua/interpreter/install.lua")
        for arch in ("x86_64", "aarch64"):
            for target in (f"{arch}-unknown-linux-musl", f"{arch}-apple-darwin"):
                self.assertIn(target, released)
        self.assertIn('"$arch-unknown-linux-musl"', install_sh)
        self.assertIn('"$arch-apple-darwin"', install_sh)
        self.assertIn('arch .. "-unknown-linux-musl"', install_lua)
        self.assertIn('arch .. "-apple-darwin"', install_lua)
        install_ps1 = read("scripts/install.ps1")
        self.assertIn("x86_64-pc-windows-msvc", released)
        self.assertIn("x86_64-pc-windows-msvc", install_ps1)

    def test_health_check_knows_the_provider_key_variables(self):
        catalog = read("crates/core/src/model/catalog.rs")
        pairs = re.findall(r'id: "([^"]+)",.*?env_key: (None|Some\("([^"]+)"\))', catalog, re.S)
        self.assertGreaterEqual(len(pairs), 5)
        health = read("editors/neovim/lua/interpreter/health.lua")
        for pid, raw, var in pairs:
            key = re.escape(pid)
            expected = f'"{var}"' if raw != "None" else "false"
            self.assertRegex(health, rf'(\[\"{key}\"\]|\b{key}) = {re.escape(expected)},', pid)


@unittest.skipUnless(ASSETS is not None or "--assets" in sys.argv, "give --assets DIR")
class Assets(unittest.TestCase):
    def test_registry_archives_are_in_the_assets_with_their_checksums(self):
        ver = version()
        sums = {}
        for line in (ASSETS / "SHA256SUMS").read_text().splitlines():
            digest, _, name = line.partition("  ")
            sums[name.lstrip("*")] = digest
        for platform, t in agent()["distribution"]["binary"].items():
            name = t["archive"].rsplit("/", 1)[1]
            with self.subTest(platform=platform):
                path = ASSETS / name
                self.assertTrue(path.is_file(), f"{name} is not among the assets")
                self.assertEqual(sums.get(name), hashlib.sha256(path.read_bytes()).hexdigest())
        self.assertEqual((ASSETS / "latest").read_text().strip(), ver)
        self.assertTrue((ASSETS / "install.sh").is_file())


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--assets" in args:
        i = args.index("--assets")
        ASSETS = Path(args[i + 1]).resolve()
        del args[i : i + 2]
    unittest.main(argv=[sys.argv[0], "-v"] + args)
