// A line diff for tool cards and permission prompts: LCS on lines, shown as hunks with three
// lines of context. Big inputs fall back to "all removed, all added" rather than stall.

export type DiffLine = { op: " " | "-" | "+"; text: string; oldNo?: number; newNo?: number };
export type Hunk = { lines: DiffLine[] };

const MAX_CELLS = 2_000_000;
const CONTEXT = 3;

function splitLines(s: string): string[] {
  if (s === "") return [];
  const lines = s.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Every line of both texts, in order, marked kept, removed or added. */
export function diffLines(oldText: string | null | undefined, newText: string): DiffLine[] {
  const a = splitLines(oldText ?? "");
  const b = splitLines(newText);
  // Common prefix and suffix first: most edits are small.
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const out: DiffLine[] = [];
  for (let i = 0; i < pre; i++) out.push({ op: " ", text: a[i], oldNo: i + 1, newNo: i + 1 });
  const n = am.length;
  const m = bm.length;
  if (n * m > MAX_CELLS) {
    am.forEach((t, i) => out.push({ op: "-", text: t, oldNo: pre + i + 1 }));
    bm.forEach((t, j) => out.push({ op: "+", text: t, newNo: pre + j + 1 }));
  } else {
    // lcs[i][j] = LCS length of am[i..] and bm[j..], in one flat array.
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        out.push({ op: " ", text: am[i], oldNo: pre + i + 1, newNo: pre + j + 1 });
        i++;
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])) {
        // Removals before additions, as in a unified diff.
        out.push({ op: "-", text: am[i], oldNo: pre + i + 1 });
        i++;
      } else {
        out.push({ op: "+", text: bm[j], newNo: pre + j + 1 });
        j++;
      }
    }
  }
  for (let k = 0; k < suf; k++) {
    const oi = a.length - suf + k;
    const ni = b.length - suf + k;
    out.push({ op: " ", text: a[oi], oldNo: oi + 1, newNo: ni + 1 });
  }
  return out;
}

/** The changed lines with CONTEXT lines around them, split where the gaps are. */
export function hunks(lines: DiffLine[]): Hunk[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op === " ") return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) keep[k] = true;
  });
  const out: Hunk[] = [];
  let cur: Hunk | undefined;
  lines.forEach((l, i) => {
    if (!keep[i]) {
      cur = undefined;
      return;
    }
    if (!cur) {
      cur = { lines: [] };
      out.push(cur);
    }
    cur.lines.push(l);
  });
  return out;
}

export function countChanges(oldText: string | null | undefined, newText: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of diffLines(oldText, newText)) {
    if (l.op === "+") added++;
    else if (l.op === "-") removed++;
  }
  return { added, removed };
}
