"use strict";

// package.json is the extension's contract with VS Code: check it against the code.

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { stub, deactivate, activate } = require("./helpers.cjs");
const { COMMAND_IDS: LSP_COMMAND_IDS } = require("../out/commands.js");
const { CHAT_COMMAND_IDS } = require("../out/extension.js");
const COMMAND_IDS = [...LSP_COMMAND_IDS, ...CHAT_COMMAND_IDS];

const root = path.join(__dirname, "..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));

test.after(() => deactivate());

test("@types/vscode matches engines.vscode, and every dependency is pinned exactly", () => {
  assert.equal(pkg.engines.vscode, `^${pkg.devDependencies["@types/vscode"]}`);
  for (const [name, version] of Object.entries(pkg.devDependencies)) {
    assert.match(version, /^\d+\.\d+\.\d+$/, `${name} pinned`);
  }
  assert.equal(pkg.dependencies, undefined, "everything is bundled by esbuild");
  const lc = JSON.parse(fs.readFileSync(path.join(root, "node_modules/vscode-languageclient/package.json"), "utf8"));
  const need = lc.engines.vscode.replace(/^\^/, "").split(".").map(Number);
  const have = pkg.engines.vscode.replace(/^\^/, "").split(".").map(Number);
  assert.ok(have[0] > need[0] || (have[0] === need[0] && have[1] >= need[1]), `vscode-languageclient needs ${lc.engines.vscode}`);
});

test("the bundle is the entry point, activated at startup; vsce needs publisher, license, repository", () => {
  assert.equal(pkg.main, "./dist/extension.js");
  assert.deepEqual(pkg.activationEvents, ["onStartupFinished"]);
  for (const key of ["publisher", "license", "repository", "displayName", "description"]) {
    assert.ok(pkg[key], key);
  }
  const ignore = fs.readFileSync(path.join(root, ".vscodeignore"), "utf8");
  for (const p of ["src/**", "out/**", "test/**", "node_modules/**"]) assert.ok(ignore.includes(p), p);
  // A platform VSIX carries the binary in bin/ (issue 14): nothing may exclude it.
  const rules = ignore.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
  assert.ok(!rules.some((r) => /^(\*\*\/)?bin(\/|$)|^\*\*$/.test(r)), `.vscodeignore must keep bin/: ${rules}`);
  assert.ok(fs.readFileSync(path.join(root, ".gitignore"), "utf8").split("\n").includes("bin/"), "bin/ is not committed");
});

test("the chat panel: its own activity-bar container holding a webview view, and its commands", () => {
  const c = pkg.contributes;
  const container = c.viewsContainers.activitybar.find((v) => v.id === "interpreter");
  assert.ok(container && fs.existsSync(path.join(root, container.icon)), "activity-bar container with an icon file");
  assert.deepEqual(c.views.interpreter.map((v) => [v.type, v.id]), [["webview", "interpreter.chat"]]);
  assert.ok(c.menus["editor/context"].some((m) => m.command === "interpreter.addSelectionToChat"), "Add Selection to Chat in the editor menu");
  for (const dep of ["@agentclientprotocol/sdk", "markdown-it", "dompurify"]) assert.ok(pkg.devDependencies[dep], `${dep} bundled`);
  assert.equal(pkg.devDependencies["@agentclientprotocol/sdk"], "2.4.0", "the same SDK as tests/acp-node");
});

test("the settings the issue asks for exist; the API key is not one of them", () => {
  const props = pkg.contributes.configuration.properties;
  for (const key of ["path", "provider", "model", "harness", "extraArgs"]) {
    assert.ok(props[`interpreter.${key}`], `interpreter.${key}`);
  }
  assert.ok(!Object.keys(props).some((k) => /key|secret|token/i.test(k)), "no key in settings");
  const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const key of ["interpreter.path", "interpreter.extraArgs", "interpreter.baseUrl"]) {
    assert.ok(restricted.includes(key), `${key} is restricted in untrusted workspaces`);
  }
});

test("every contributed command has a handler after activation", async () => {
  await activate();
  const contributed = pkg.contributes.commands.map((c) => c.command);
  for (const id of ["interpreter.ask", "interpreter.fixDiagnostics", "interpreter.explain", "interpreter.restartServer", "interpreter.showLogs", "interpreter.setApiKey"]) {
    assert.ok(contributed.includes(id), `${id} contributed`);
  }
  for (const id of contributed) {
    assert.ok(COMMAND_IDS.includes(id), `${id} in COMMAND_IDS`);
    assert.ok(stub.state.commands.has(id), `${id} registered`);
  }
  for (const menu of Object.values(pkg.contributes.menus)) {
    for (const entry of menu) assert.ok(contributed.includes(entry.command), entry.command);
  }
});
