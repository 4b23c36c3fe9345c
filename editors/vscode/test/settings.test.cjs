"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { stub, deactivate, activate, run, settle } = require("./helpers.cjs");
const settings = require("../out/settings.js");

test.after(() => deactivate());

test("readSettings trims, defaults the path and drops non-string args", () => {
  const values = { path: "  ", provider: " kimi ", model: 3, extraArgs: ["--profile", 7, "fast"] };
  assert.deepEqual(settings.readSettings((k) => values[k]), {
    path: "",
    provider: "kimi",
    model: "",
    harness: "",
    baseUrl: "",
    wireApi: "",
    extraArgs: ["--profile", "fast"],
  });
});

test("acpSpec: `acp`, the extra args, then -c overrides matching the LSP's initializationOptions", () => {
  const s = { ...settings.readSettings(() => undefined), provider: "local", model: "m", harness: "native", baseUrl: "http://127.0.0.1:8080/v1", wireApi: "chat", extraArgs: ["--profile", "fast"] };
  const spec = settings.acpSpec(s, { local: "sk-local" }, { PATH: "/bin" }, "/w", "/opt/interpreter");
  assert.equal(spec.command, "/opt/interpreter");
  assert.deepEqual(spec.args, [
    "acp", "--profile", "fast",
    "-c", 'model_provider="local"',
    "-c", 'model="m"',
    "-c", 'harness="native"',
    "-c", 'model_providers."local".base_url="http://127.0.0.1:8080/v1"',
    "-c", 'model_providers."local".wire_api="chat"',
    "-c", 'model_providers."local".env_key="INTERPRETER_API_KEY"',
  ]);
  assert.equal(spec.env.INTERPRETER_API_KEY, "sk-local");
  assert.equal(spec.cwd, "/w");
  assert.deepEqual(settings.acpSpec(settings.readSettings(() => undefined), {}, {}, undefined, "i").args, ["acp"]);
  assert.equal(settings.providerFromAuthError("Authentication required: missing API key for provider `deepseek`: set DEEPSEEK_API_KEY"), "deepseek");
});

test("keys: each built-in provider's own variable; a custom provider's key travels with envKey", () => {
  const base = settings.readSettings(() => undefined);
  assert.deepEqual(settings.keyEnvironment(base, { kimi: "k1", deepseek: "k2", openai: undefined }), {
    MOONSHOT_API_KEY: "k1",
    DEEPSEEK_API_KEY: "k2",
  });
  const custom = { ...base, provider: "local", baseUrl: "http://127.0.0.1:8080/v1", wireApi: "chat" };
  const spec = settings.serverSpec(custom, { local: "sk-local", other: "ignored" }, { PATH: "/bin" }, "/w", "/x/interpreter");
  assert.equal(spec.command, "/x/interpreter");
  assert.equal(spec.env.INTERPRETER_API_KEY, "sk-local");
  assert.equal(spec.env.PATH, "/bin");
  assert.deepEqual(spec.initializationOptions, {
    provider: "local",
    baseUrl: "http://127.0.0.1:8080/v1",
    wireApi: "chat",
    envKey: "INTERPRETER_API_KEY",
  });
  assert.equal(spec.cwd, "/w");
  // No stored key: no envKey, so config.toml's env_key stays in force.
  assert.equal(settings.serverSpec(custom, {}, {}, "/w", "i").initializationOptions.envKey, undefined);
});

test("initializationOptions carry only keys the server knows", () => {
  const s = { ...settings.readSettings(() => undefined), path: "/x", extraArgs: ["-c", "a=1"], harness: "native" };
  assert.deepEqual(settings.initializationOptions(s, false), { harness: "native" });
});

test("changing a setting restarts the server with the new settings", async () => {
  const { api, client, item } = await activate({ "interpreter.model": "kimi-k3" });
  stub.changeConfig({ "interpreter.model": "kimi-k2.6", "interpreter.harness": "native" });
  await settle(api);
  assert.equal(stub.state.clients.length, 2);
  assert.ok(client.disposed, "the old server is stopped");
  const next = stub.state.clients[1];
  assert.deepEqual(next.clientOptions.initializationOptions, { model: "kimi-k2.6", harness: "native" });
  assert.equal(next.state, stub.State.Running);
  assert.equal(item.text, "$(sparkle) kimi-k2.6");

  stub.changeConfig({ "interpreter.extraArgs": ["--profile", "fast"] });
  await settle(api);
  assert.deepEqual(stub.state.clients[2].serverOptions.args, ["lsp", "--profile", "fast"]);
});

test("other settings and the live trace setting do not restart", async () => {
  const { api } = await activate();
  stub.changeConfig({ "editor.fontSize": 14 });
  stub.changeConfig({ "interpreter.trace.server": "verbose" });
  await settle(api);
  assert.equal(stub.state.clients.length, 1);
});

test("a burst of changes restarts once", async () => {
  const { api } = await activate();
  for (const model of ["k", "ki", "kim", "kimi"]) stub.changeConfig({ "interpreter.model": model });
  await settle(api);
  assert.equal(stub.state.clients.length, 2);
  assert.equal(stub.state.clients[1].clientOptions.initializationOptions.model, "kimi");
});

test("setApiKey stores the key in SecretStorage and restarts with it in the environment", async () => {
  const { api, ctx } = await activate({ "interpreter.provider": "deepseek" });
  stub.state.pickAnswers.push("deepseek");
  stub.state.inputAnswers.push(" sk-deep-456 ");
  await run("interpreter.setApiKey");
  const picker = stub.state.quickPicks.at(-1);
  assert.equal(picker.items[0].label, "deepseek", "the current provider comes first");
  assert.equal(stub.state.inputBoxes.at(-1).password, true);
  assert.equal(ctx.secrets.values.get("interpreter.apiKey.deepseek"), "sk-deep-456");
  await settle(api);
  const next = stub.state.clients.at(-1);
  assert.equal(stub.state.clients.length, 2);
  assert.equal(next.serverOptions.options.env.DEEPSEEK_API_KEY, "sk-deep-456");
  // Never in settings, never in the logs.
  assert.ok(!JSON.stringify(stub.state.config).includes("sk-deep"));
  assert.ok(!JSON.stringify(next.clientOptions.initializationOptions).includes("sk-deep"));
  for (const out of stub.state.outputs) {
    assert.ok(!out.lines.join("\n").includes("sk-deep"), "the key is not logged");
  }
  assert.ok(stub.state.outputs[0].lines.some((l) => l.includes("DEEPSEEK_API_KEY")));
});

test("setApiKey: dismissing the picker or the input stores nothing", async () => {
  const { ctx } = await activate();
  stub.state.pickAnswers.push(undefined);
  await run("interpreter.setApiKey");
  stub.state.pickAnswers.push("kimi");
  stub.state.inputAnswers.push(undefined);
  await run("interpreter.setApiKey");
  assert.equal(ctx.secrets.values.size, 0);
});

test("clearApiKey forgets a stored key and restarts without it", async () => {
  const saved = process.env.MOONSHOT_API_KEY;
  delete process.env.MOONSHOT_API_KEY;
  try {
    const { api, ctx, client } = await activate({}, { "interpreter.apiKey.kimi": "sk-old" });
    assert.equal(client.serverOptions.options.env.MOONSHOT_API_KEY, "sk-old");
    stub.state.pickAnswers.push("kimi");
    await run("interpreter.clearApiKey");
    assert.equal(ctx.secrets.values.size, 0);
    await settle(api);
    assert.equal(stub.state.clients.at(-1).serverOptions.options.env.MOONSHOT_API_KEY, undefined);
  } finally {
    if (saved !== undefined) process.env.MOONSHOT_API_KEY = saved;
  }
});
