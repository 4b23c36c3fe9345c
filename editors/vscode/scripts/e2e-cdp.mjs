// Drives the code-server workbench in headless Chromium over the DevTools protocol, for
// e2e-code-server.sh. Needs Node 22+ (global WebSocket).
//
// usage: node e2e-cdp.mjs <cdp-port> <code-server-port> <run-dir> <timeout-seconds> [<code-server-pid>]
//
// 1. The light bulb: status bar model, Ctrl+. on a line of Python, Explain against the mock.
// 2. The chat panel: open it from the activity bar, send a prompt whose reply edits stats.py,
//    approve the permission from the keyboard, see the diff in the tool card and the review
//    bar, check the disk is untouched, screenshot the panel, Keep, and see the disk change.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";

import { connect, frames, sleep } from "./cdp.mjs";

const [cdpPort, serverPort, runDir, timeoutArg, codeServerPid] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg || 120) * 1000;
const cdp = await connect({ cdpPort, serverPort, runDir, timeoutMs });

const CTRL = 2;
// Editors render spaces as no-break spaces: compare with all whitespace folded.
const text = (s) => `document.body.innerText.replace(/\\s+/g, ' ').includes(${JSON.stringify(s)})`;
const statsPath = `${runDir}/project/stats.py`;
const original = readFileSync(statsPath, "utf8");

/** RSS (MiB) of code-server's extension host: the process in its session with --type=extensionHost. */
function extensionHostMiB() {
  if (!codeServerPid) return undefined;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const sid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3];
      if (sid !== codeServerPid) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=extensionHost")) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return rss ? Math.round(Number(rss[1]) / 1024) : undefined;
    } catch {
      // The process went away.
    }
  }
  return undefined;
}

// ---- 1. the light bulb ------------------------------------------------------------------

await cdp.waitFor("the status bar shows the model", `(document.querySelector('.statusbar')?.innerText ?? '').includes('mock-model')`);
await cdp.waitFor("the workbench is ready", `!!document.querySelector('.monaco-workbench .part.editor')`);
await cdp.key("p", "KeyP", 80, CTRL);
await sleep(1000);
await cdp.send("Input.insertText", { text: "stats.py" });
await sleep(1000);
await cdp.key("Enter", "Enter", 13);
await cdp.waitFor("stats.py is open", `!!document.querySelector('.monaco-editor .view-lines') && ${text("sum(values)")}`);
await sleep(1500);
await cdp.click("line 2 of stats.py", `[...document.querySelectorAll('.monaco-editor .view-line')].find((l) => l.innerText.replace(/\\s+/g, ' ').includes('return sum'))`);
await sleep(2000);
await cdp.key(".", "Period", 190, CTRL);
await cdp.waitFor("the light bulb lists the server's actions", text("Explain with interpreter"));
await sleep(500);
await cdp.screenshot("lightbulb.png");
await cdp.click(
  "Explain with interpreter",
  `[...document.querySelectorAll('.action-widget .monaco-list-row')].find((r) => r.innerText.includes('Explain with interpreter'))`,
);
await cdp.waitFor("the explanation from the mock model opens", text("Hello from the mock model."));
await cdp.screenshot("explain.png");
// Back to one editor, so the panel's edit is what the screenshot shows.
await cdp.key("Escape", "Escape", 27);

// ---- 2. the chat panel ------------------------------------------------------------------

/** The execution context of the chat webview's content frame (the innermost webview frame). */
async function panelContext() {
  const all = await frames(cdp);
  const inner = all.filter((f) => f.url.includes("purpose=webviewView") && all.some((p) => p.id === f.parentId && p.url.includes("purpose=webviewView")));
  for (const f of inner) {
    const id = cdp.contexts.get(f.id);
    if (id && (await cdp.evaluate("!!document.querySelector('.composer')", id).catch(() => false))) return id;
  }
  return undefined;
}
const inPanel = async (what, expression) => cdp.waitFor(what, expression, panelContext);
const panelEval = async (expression) => cdp.evaluate(expression, await panelContext());

const extHostBeforeMiB = extensionHostMiB();
const openedAt = Date.now();
await cdp.click("the interpreter activity-bar item", `[...document.querySelectorAll('.activitybar .action-item .action-label')].find((a) => a.getAttribute('aria-label') === 'interpreter')`);
await inPanel("the chat panel is open with the agent's pickers", `document.querySelectorAll('.pickers select').length === 4`);
const panelReadyMs = Date.now() - openedAt;
// A wider side bar for the screenshot: drag the sash between it and the editor.
const sash = await cdp.evaluate(`(() => { const r = document.querySelector('.part.sidebar').getBoundingClientRect(); return { x: r.right + 1, y: r.y + r.height / 2 }; })()`);
await cdp.send("Input.dispatchMouseEvent", { type: "mouseMoved", x: sash.x, y: sash.y });
await cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", x: sash.x, y: sash.y, button: "left", clickCount: 1 });
for (let dx = 20; dx <= 160; dx += 20) await cdp.send("Input.dispatchMouseEvent", { type: "mouseMoved", x: sash.x + dx, y: sash.y, button: "left" });
await cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", x: sash.x + 160, y: sash.y, button: "left", clickCount: 1 });
await sleep(500);

// Focus the prompt box with a real click (page coordinates: the webview's iframe + the box).
const frameRect = await cdp.evaluate(`(() => { const f = [...document.querySelectorAll('iframe.webview')].find((x) => x.offsetParent); const r = f.getBoundingClientRect(); return { x: r.x, y: r.y }; })()`);
const box = await panelEval(`(() => { const r = document.querySelector('textarea.prompt').getBoundingClientRect(); return { x: r.x + 20, y: r.y + 10 }; })()`);
// The outer webview frame may add its own offset: find the inner iframe's rect inside it.
const innerOffset = (await cdp.evaluate(
  `(() => { const f = [...document.querySelectorAll('iframe.webview')].find((x) => x.offsetParent); try { const i = f.contentDocument.querySelector('iframe'); const r = i.getBoundingClientRect(); return { x: r.x, y: r.y }; } catch { return { x: 0, y: 0 }; } })()`,
)) ?? { x: 0, y: 0 };
await cdp.clickAt(frameRect.x + innerOffset.x + box.x, frameRect.y + innerOffset.y + box.y);
await inPanel("the prompt box has the focus", `document.activeElement?.classList.contains('prompt')`);
await cdp.send("Input.insertText", { text: "Fix the off-by-one in stats.py" });
await cdp.key("Enter", "Enter", 13);
await inPanel("the prompt is in the transcript", `document.querySelector('.msg.user')?.textContent.includes('Fix the off-by-one')`);

// The edit asks first (approval_policy=untrusted): answer with the keyboard, as a user would.
await inPanel("the permission request shows the diff", `!!document.querySelector('.permission:not(.done) .diff .line.del')`);
await inPanel("its first answer has the focus", `document.activeElement?.getAttribute('data-option') === 'allow_once'`);
await cdp.key("1", "Digit1", 49);
await inPanel("the permission is answered", `document.querySelector('.permission.done .perm-answer')?.textContent === 'Allowed once'`);

await inPanel("the edit's tool card completed with its diff", `!!document.querySelector('.tool.status-completed .diff .line.add')`);
await inPanel("the review bar lists stats.py", `document.querySelector('.review-file .review-name')?.textContent === 'stats.py'`);
await inPanel("the turn ended", `document.querySelector('.send')?.textContent === 'Send' && document.querySelectorAll('.msg.agent').length >= 1`);
const diffText = await panelEval(`[...document.querySelectorAll('.tool.status-completed .diff .line')].map((l) => l.textContent).join('\\n')`);
console.log(`diff in the tool card:\n${diffText}`);
if (readFileSync(statsPath, "utf8") !== original) throw new Error("the disk changed before Keep");
console.log("ok: the disk is unchanged before Keep");
// The editor shows the unsaved edit.
const tabs = `[...document.querySelectorAll('.tab')].filter((t) => (t.getAttribute('aria-label') || t.textContent).includes('stats.py'))`;
await cdp.waitFor("the editor shows the agent's unsaved edit", `${tabs}.some((t) => t.classList.contains('dirty') || !!t.querySelector('.codicon-close-dirty, .codicon-circle-filled'))`);

await sleep(500);
const sidebar = await cdp.evaluate(`(() => { const r = document.querySelector('.part.sidebar').getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`);
await cdp.screenshot("panel-full.png");
const shot = await cdp.screenshot("panel.png", sidebar);
console.log(`screenshot: ${shot}`);

await panelEval(`document.querySelector('.review-file button[aria-label^="Keep"]').click()`);
await inPanel("the review bar is gone after Keep", `document.querySelector('.review').hidden`);
const until = Date.now() + timeoutMs;
let now = readFileSync(statsPath, "utf8");
while (now === original && Date.now() < until) {
  await sleep(200);
  now = readFileSync(statsPath, "utf8");
}
if (now === original) throw new Error("Keep did not save the edit to disk");
console.log(`ok: after Keep the disk holds the edit:\n${now}`);
const extHostPanelMiB = extensionHostMiB();
writeFileSync(`${runDir}/measure.json`, JSON.stringify({ panelReadyMs, extHostBeforeMiB, extHostPanelMiB }));
console.log(`extension host RSS: ${extHostBeforeMiB} MiB before the panel opened, ${extHostPanelMiB} MiB with it open after the turn`);
console.log(`panel open → pickers shown: ${panelReadyMs} ms`);
cdp.close();
