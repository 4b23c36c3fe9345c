// The draft subagent updates (`subagent_spawned`, `subagent_state_update`) are
// `session/update`s the SDK's schema does not know yet: it rejects them before any handler
// runs. This filter renames them, on the way in, to a client-side method the panel
// registers itself; every other line passes through untouched.

/** What the renamed updates arrive as (never sent on the wire). */
export const SUBAGENT_UPDATE_METHOD = "_interpreter/subagent_update";

function rename(line: string): string {
  if (!line.includes("subagent_")) return line;
  try {
    const msg = JSON.parse(line) as { method?: string; params?: { update?: { sessionUpdate?: unknown } } };
    const kind = msg.params?.update?.sessionUpdate;
    if (msg.method === "session/update" && typeof kind === "string" && kind.startsWith("subagent_")) {
      return JSON.stringify({ ...msg, method: SUBAGENT_UPDATE_METHOD });
    }
  } catch {
    // Not JSON: the SDK reports it.
  }
  return line;
}

/** A byte stream of JSON lines with the subagent updates renamed. */
export function renameSubagentUpdates(input: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        if (lines.length) out.enqueue(encoder.encode(lines.map(rename).join("\n") + "\n"));
      },
      flush(out) {
        pending += decoder.decode();
        if (pending) out.enqueue(encoder.encode(rename(pending)));
      },
    }),
  );
}
