// Shared set-up for the unit tests: the vscode stub first, then the compiled extension.

"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

// A fake `interpreter` on PATH (the default when interpreter.path is empty), and one at a path.
const fakeBinDir = fs.mkdtempSync(path.join(os.tmpdir(), "interp-bin-"));
const FAKE_BIN = path.join(fakeBinDir, "interpreter");
fs.writeFileSync(FAKE_BIN, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
process.env.PATH = `${fakeBinDir}${path.delimiter}${process.env.PATH}`;

const stub = require("./vscode-stub.cjs");
const extension = require("../out/extension.js");
const notify = require("../out/notify.js");

extension.timing.restartDelayMs = 0;

let lastContext;

/** What VS Code does on deactivation: deactivate(), then dispose the subscriptions. */
async function deactivate() {
  await extension.deactivate();
  for (const d of lastContext?.subscriptions ?? []) d.dispose();
  lastContext = undefined;
}

/** Activates the extension with these settings and stored secrets; returns its API. */
async function activate(config = {}, secrets = {}, { failStart, secretsFail, messageAnswers = [] } = {}) {
  await deactivate();
  stub.reset(config);
  notify.resetNotices();
  stub.state.messageAnswers.push(...messageAnswers);
  stub.state.failNextStart = failStart;
  const ctx = stub.context();
  if (secretsFail) {
    ctx.secrets.get = async () => {
      throw secretsFail;
    };
  }
  lastContext = ctx;
  for (const [k, v] of Object.entries(secrets)) ctx.secrets.values.set(k, v);
  const api = await extension.activate(ctx);
  return { api, ctx, client: stub.state.clients.at(-1), item: stub.state.statusItems.at(-1) };
}

/** Runs a registered command the way VS Code does. */
function run(id, ...args) {
  const fn = stub.state.commands.get(id);
  if (!fn) throw new Error(`command ${id} is not registered`);
  return fn(...args);
}

/** Waits for a debounced restart to finish. */
async function settle(api) {
  await stub.tick(5);
  await api.manager.ready().catch(() => undefined);
  await stub.tick(1);
}

module.exports = { stub, extension, activate, deactivate, run, settle, FAKE_BIN, fakeBinDir };
