import { test } from "node:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { setup, textReply, toolReply } from "./helpers.mjs";
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
test("probe options", {timeout: 30000}, async (t) => {
  const ctx = await setup(t, { replies: [textReply("a"), textReply("b"), {events:[{tool_call:{id:"c1",name:"update_plan",arguments:JSON.stringify({plan:[{step:"one",status:"completed"},{step:"two",status:"in_progress"}]})}}]}, {events:[{reasoning:"thinking hard"},{text:"c"}]}] });
  const img = path.join(ctx.root, "i.png"); writeFileSync(img, png);
  const th = ctx.codex().startThread(ctx.threadOptions({ model: "other-model", sandboxMode: "read-only", threadSource: "sdk-probe", modelReasoningEffort: "high", networkAccessEnabled: true, webSearchMode: "disabled", approvalPolicy: "never", additionalDirectories: [ctx.root] }));
  for (const [label, fn] of [
    ["turn1 opts+image", () => ctx.run(th, [{type:"text",text:"hi"},{type:"text",text:"there"},{type:"local_image",path:img}], {cyberAccessProgram:"standard"})],
    ["turn2 resume+image", () => ctx.run(th, [{type:"text",text:"again"},{type:"local_image",path:img}])],
    ["turn3 plan", () => ctx.runStreamed(th, "plan")],
  ]) {
    try { const r = await fn(); console.log(label, "OK", JSON.stringify(r).slice(0, 1500)); } catch (e) { console.log(label, "ERR", e.message.slice(0, 800)); }
  }
  const reqs = await ctx.mock.modelRequests();
  for (const r of reqs) console.log("REQ model=", r.body.model, "reasoning=", JSON.stringify(r.body.reasoning), "last input=", JSON.stringify(r.body.input.at(-1)).slice(0, 400));
});
