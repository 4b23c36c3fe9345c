// The webview's entry point (bundled by esbuild into dist/webview.js).

import type { HostMessage, WebviewMessage } from "../shared/protocol";
import { App } from "./app";

interface VsCodeApi {
  postMessage(m: WebviewMessage): void;
  getState(): { draft?: string } | undefined;
  setState(s: { draft?: string }): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();
const root = document.getElementById("app")!;
const app = new App(window, root, (m) => api.postMessage(m), {
  draft: api.getState()?.draft,
  saveDraft: (draft) => api.setState({ draft }),
});
window.addEventListener("message", (e: MessageEvent<HostMessage>) => app.receive(e.data));
api.postMessage({ type: "ready" });
