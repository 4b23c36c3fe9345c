// Drives `interpreter exec --experimental-json` through the official TypeScript Codex SDK
// (@openai/codex-sdk, via `codexPathOverride`) against the scripted mock model `mock-llm`.
//
// Run: cargo build -p interpreter -p interpreter-tests && cd tests/node && npm ci --omit=optional --ignore-scripts && npm test
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import { setup, messageText, textReply, toolReply } from "./helpers.mjs";

const TIMEOUT = 30_000;

const USAGE = { prompt_tokens: 42, completion_tokens: 5, cached_tokens: 12 };

test("run() returns finalResponse, items, usage and sets thread.id", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hi!", USAGE)] });
  const thread = ctx.codex().startThread(ctx.threadOptions());
  assert.equal(thread.id, null);

  const turn = await ctx.run(thread, "Say hi");

  assert.equal(turn.finalResponse, "Hi!");
  const messages = turn.items.filter((i) => i.type === "agent_message");
  assert.equal(messages.length, 1, `items: ${JSON.stringify(turn.items)}`);
  assert.equal(messages[0].text, "Hi!");
  assert.equal(typeof messages[0].id, "string");
  assert.ok(turn.usage, "usage must be set");
  assert.equal(turn.usage.input_tokens, 42);
  assert.equal(turn.usage.cached_input_tokens, 12);
  assert.equal(turn.usage.output_tokens, 5);
  assert.equal(turn.usage.cache_write_input_tokens, 0);
  assert.equal(typeof thread.id, "string");
  assert.ok(thread.id.length > 0);

  // The prompt reached the model as the last user message.
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 1);
  assert.equal(reqs[0].body.model, "mock-model");
  const last = reqs[0].body.input.at(-1);
  assert.equal(last.role, "user");
  assert.equal(last.content[0].text, "Say hi");
});

test("run() works with a provider that has no model key: the default model is used", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hi!", USAGE)] });
  const thread = ctx.codex({ withoutModel: true }).startThread(ctx.threadOptions());

  const turn = await ctx.run(thread, "Say hi");

  assert.equal(turn.finalResponse, "Hi!");
  assert.equal(turn.items.filter((i) => i.type === "agent_message").length, 1, JSON.stringify(turn.items));
  assert.equal(turn.usage.input_tokens, 42);
  assert.equal(typeof thread.id, "string");
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 1);
  assert.equal(reqs[0].body.model, "kimi-k3");
  // The default model's harness (kimi-code) sends a reminder, in an item of its own before
  // the prompt: the last user item is the prompt, as the SDK's caller wrote it.
  const users = reqs[0].body.input.filter((i) => i.role === "user");
  assert.equal(messageText(users.at(-1)), "Say hi", JSON.stringify(reqs[0].body.input));
  assert.ok(messageText(users.at(-2)).startsWith("<system-reminder>"), JSON.stringify(users));
});

test("structured input: the last user item starts with the prompt's own text, then the image", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("A red dot.", USAGE), textReply("Still red.", USAGE)] });
  // A 1x1 PNG.
  const png = path.join(ctx.root, "dot.png");
  await writeFile(
    png,
    Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64"),
  );
  const thread = ctx.codex({ withoutModel: true }).startThread(ctx.threadOptions());
  const input = [
    { type: "text", text: "Describe this image" },
    { type: "text", text: "in one line" },
    { type: "local_image", path: png },
  ];
  assert.equal((await ctx.run(thread, input)).finalResponse, "A red dot.");
  assert.equal((await ctx.run(thread, "And now?")).finalResponse, "Still red.");
  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const lastUser = (req) => req.body.input.filter((i) => i.role === "user").at(-1);
  const first = lastUser(reqs[0]);
  assert.equal(first.content[0].type, "input_text");
  assert.equal(first.content[0].text, "Describe this image\n\nin one line", JSON.stringify(first));
  assert.equal(first.content[1].type, "input_image");
  assert.ok(first.content[1].image_url.startsWith("data:image/png;base64,"), first.content[1].image_url.slice(0, 40));
  // The second turn, resumed in a new process, ends with its own prompt too.
  assert.equal(messageText(lastUser(reqs[1])), "And now?", JSON.stringify(reqs[1].body.input));
});

test("runStreamed() yields exactly thread.started, turn.started, item.completed, turn.completed", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hi!", USAGE)] });
  const thread = ctx.codex().startThread(ctx.threadOptions());

  const all = await ctx.runStreamed(thread, "Say hi");

  assert.deepEqual(
    all.map((e) => e.type),
    ["thread.started", "turn.started", "item.completed", "turn.completed"],
    `events: ${JSON.stringify(all)}`,
  );
  assert.equal(typeof all[0].thread_id, "string");
  assert.equal(thread.id, all[0].thread_id);
  assert.equal(all[2].item.type, "agent_message");
  assert.equal(all[2].item.text, "Hi!");
  assert.deepEqual(all[3].usage, {
    input_tokens: 42,
    cached_input_tokens: 12,
    cache_write_input_tokens: 0,
    output_tokens: 5,
    reasoning_output_tokens: 0,
  });
});

test("a shell tool call becomes a command_execution item and its output goes back to the model", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, {
    replies: [
      toolReply("call_1", "shell", { command: "echo hello-from-tool" }),
      textReply("The command printed hello-from-tool."),
    ],
  });
  const thread = ctx.codex().startThread(ctx.threadOptions());

  const turn = await ctx.run(thread, "Run echo");

  const cmdIdx = turn.items.findIndex((i) => i.type === "command_execution");
  assert.ok(cmdIdx >= 0, `no command_execution item in ${JSON.stringify(turn.items)}`);
  const cmd = turn.items[cmdIdx];
  assert.match(cmd.command, /echo hello-from-tool/);
  assert.match(cmd.aggregated_output, /hello-from-tool/);
  assert.equal(cmd.exit_code, 0);
  assert.equal(cmd.status, "completed");
  const msgIdx = turn.items.findIndex((i) => i.type === "agent_message");
  assert.ok(msgIdx > cmdIdx, `agent_message must follow the command: ${JSON.stringify(turn.items)}`);
  assert.equal(turn.finalResponse, "The command printed hello-from-tool.");

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const outputs = reqs[1].body.input.filter((i) => i.type === "function_call_output");
  assert.equal(outputs.length, 1, `input: ${JSON.stringify(reqs[1].body.input)}`);
  assert.equal(outputs[0].call_id, "call_1");
  const output = typeof outputs[0].output === "string" ? outputs[0].output : JSON.stringify(outputs[0].output);
  assert.match(output, /hello-from-tool/);
  // The call itself is replayed before its output.
  const call = reqs[1].body.input.find((i) => i.type === "function_call");
  assert.ok(call, "function_call must be replayed");
  assert.equal(call.call_id, "call_1");
  assert.equal(call.name, "shell");
});

test("apply_patch adding a file becomes a file_change item and writes the file", { timeout: TIMEOUT }, async (t) => {
  const patch = ["*** Begin Patch", "*** Add File: notes/hello.txt", "+hello from apply_patch", "*** End Patch", ""].join("\n");
  const ctx = await setup(t, {
    replies: [toolReply("call_patch", "apply_patch", { input: patch }), textReply("Added notes/hello.txt.")],
  });
  const thread = ctx.codex().startThread(ctx.threadOptions());

  const turn = await ctx.run(thread, "Add a file");

  const change = turn.items.find((i) => i.type === "file_change");
  assert.ok(change, `no file_change item in ${JSON.stringify(turn.items)}`);
  assert.equal(change.status, "completed");
  assert.equal(change.changes.length, 1, JSON.stringify(change));
  assert.equal(change.changes[0].kind, "add");
  assert.ok(
    change.changes[0].path.endsWith(path.join("notes", "hello.txt")),
    `unexpected path ${change.changes[0].path}`,
  );
  assert.equal(turn.finalResponse, "Added notes/hello.txt.");

  const content = await readFile(path.join(ctx.workdir, "notes", "hello.txt"), "utf8");
  assert.equal(content, "hello from apply_patch\n");
});

test("resumeThread(id) continues the thread in a new process with the history", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("first reply"), textReply("second reply")] });
  const codex = ctx.codex();

  const first = codex.startThread(ctx.threadOptions());
  const turn1 = await ctx.run(first, "first");
  assert.equal(turn1.finalResponse, "first reply");
  const id = first.id;
  assert.equal(typeof id, "string");

  const resumed = ctx.codex().resumeThread(id, ctx.threadOptions());
  assert.equal(resumed.id, id);
  const turn2 = await ctx.run(resumed, "second");
  assert.equal(turn2.finalResponse, "second reply");
  assert.equal(resumed.id, id, "resumed thread keeps its id");

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  const input = reqs.at(-1).body.input;
  assert.ok(
    input.some((i) => i.role === "user" && messageText(i) === "first"),
    `first user message missing from ${JSON.stringify(input)}`,
  );
  const assistant = input.find((i) => i.role === "assistant");
  assert.ok(assistant, `no assistant message in ${JSON.stringify(input)}`);
  assert.equal(assistant.content[0].type, "output_text");
  assert.equal(assistant.content[0].text, "first reply");
  const last = input.at(-1);
  assert.equal(last.role, "user");
  assert.equal(last.content[0].text, "second");
  // Order: first user turn, then the assistant reply, then the new user message.
  const firstIdx = input.findIndex((i) => i.role === "user" && messageText(i) === "first");
  assert.ok(firstIdx < input.indexOf(assistant) && input.indexOf(assistant) < input.length - 1);
});

test("outputSchema is sent as text.format json_schema", { timeout: TIMEOUT }, async (t) => {
  const schema = {
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false,
  };
  const ctx = await setup(t, { replies: [textReply('{"answer":"42"}')] });
  const thread = ctx.codex().startThread(ctx.threadOptions());

  const turn = await ctx.run(thread, "Answer in JSON", { outputSchema: schema });
  assert.deepEqual(JSON.parse(turn.finalResponse), { answer: "42" });

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 1);
  const format = reqs[0].body.text?.format;
  assert.ok(format, `no text.format in ${JSON.stringify(reqs[0].body.text)}`);
  assert.equal(format.name, "codex_output_schema");
  assert.equal(format.type, "json_schema");
  assert.equal(format.strict, true);
  assert.deepEqual(format.schema, schema);
});

test("provider errors make run() reject with the provider's message", { timeout: TIMEOUT }, async (t) => {
  const message = "mock provider is on fire";
  const ctx = await setup(t, { replies: [{ status: 500, error: { message }, repeat: 12 }] });
  const codex = ctx.codex({ providerExtra: { request_max_retries: 1, retry_base_delay_ms: 10 } });
  const thread = codex.startThread(ctx.threadOptions());

  const started = Date.now();
  await assert.rejects(ctx.run(thread, "Fail please"), (err) => {
    assert.ok(err instanceof Error);
    assert.ok(err.message.includes(message), `error message: ${err.message}`);
    return true;
  });
  assert.ok(Date.now() - started < 15_000, "retries must honour the configured small delay");
  const reqs = await ctx.mock.modelRequests();
  assert.ok(reqs.length >= 1 && reqs.length <= 2, `request_max_retries=1 → at most 2 requests, got ${reqs.length}`);
});

test("a non-git working directory is refused without skipGitRepoCheck", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("should not be reached")] }, { git: false });
  const thread = ctx.codex().startThread(ctx.threadOptions());

  await assert.rejects(ctx.run(thread, "hello"), (err) => {
    assert.ok(err.message.includes("Not inside a trusted directory"), `error message: ${err.message}`);
    return true;
  });
  assert.equal((await ctx.mock.modelRequests()).length, 0, "no model request before the git check");
});

test("skipGitRepoCheck allows a non-git working directory", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("Hi outside git!")] }, { git: false });
  const thread = ctx.codex().startThread(ctx.threadOptions({ skipGitRepoCheck: true }));

  const turn = await ctx.run(thread, "hello");
  assert.equal(turn.finalResponse, "Hi outside git!");
});

test("provider config as a raw inline table via configOverrides works too", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, { replies: [textReply("inline ok")] });
  const codex = ctx.codex({ inlineProvider: true });
  const turn = await ctx.run(codex.startThread(ctx.threadOptions()), "hello");
  assert.equal(turn.finalResponse, "inline ok");
});

test("requests carry the originator header codex_sdk_ts", { timeout: TIMEOUT }, async (t) => {
  const ctx = await setup(t, {
    replies: [toolReply("call_o", "shell", { command: "true" }), textReply("done")],
  });
  const thread = ctx.codex().startThread(ctx.threadOptions());
  await ctx.run(thread, "hello");

  const reqs = await ctx.mock.modelRequests();
  assert.equal(reqs.length, 2);
  for (const r of reqs) {
    assert.equal(r.headers.originator, "codex_sdk_ts", `headers: ${JSON.stringify(r.headers)}`);
  }
});

test("aborting a turn (TurnOptions.signal) stops the binary promptly", { timeout: TIMEOUT }, async (t) => {
  // The model takes 8 s to answer; the SDK sends SIGTERM when the signal aborts.
  const ctx = await setup(t, { replies: [{ delay_ms: 8_000, events: [{ text: "too late" }] }] });
  const thread = ctx.codex().startThread(ctx.threadOptions());
  // Our interpreter process, identified by its unique --cd argument.
  const running = () =>
    execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes(ctx.workdir) && l.includes(" exec "));
  const abort = new AbortController();
  let sawProcess = false;
  // Abort once the model request is in flight.
  const poll = setInterval(async () => {
    try {
      if (!abort.signal.aborted && (await ctx.mock.modelRequests()).length > 0) {
        sawProcess = running().length > 0;
        abort.abort();
      }
    } catch {
      // the mock is gone: the test is over
    }
  }, 50);
  t.after(() => clearInterval(poll));

  const started = Date.now();
  await assert.rejects(thread.run("slow", { signal: abort.signal }), { name: "AbortError" });
  clearInterval(poll);
  assert.ok(Date.now() - started < 5_000, "run() must reject well before the model would answer");
  assert.ok(sawProcess, "the interpreter process was found while the turn ran");

  const deadline = Date.now() + 3_000;
  while (running().length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(running(), [], "interpreter still running after SIGTERM");
});
