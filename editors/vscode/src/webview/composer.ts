// The composer: the prompt box (Enter sends, Shift+Enter breaks the line), `/` completion from
// the agent's commands, `@` file mentions, attachment chips, the config pickers from
// `configOptions`, Send/Stop, and the usage line.

import type { Attachment, SessionConfigOption } from "../shared/protocol";
import { type Ctx, h } from "./items";
import type { Model } from "./model";

interface Choice {
  label: string;
  detail?: string;
  apply: () => void;
}

type SelectOption = { value: string; name: string; description?: string | null };

function flatOptions(o: SessionConfigOption): SelectOption[] {
  if (o.type !== "select") return [];
  const out: SelectOption[] = [];
  for (const x of o.options as unknown as Array<SelectOption | { group: string; name: string; options: SelectOption[] }>) {
    if ("options" in x) out.push(...x.options);
    else out.push(x);
  }
  return out;
}

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1000) return `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k`;
  return String(n);
}

export function usageText(u: Model["usage"]): string {
  if (!u) return "";
  const pct = u.size ? Math.round((100 * u.used) / u.size) : 0;
  let s = `Context ${compact(u.used)} / ${compact(u.size)} (${pct}%)`;
  if (u.cost) s += ` · ${u.cost.currency === "USD" ? "$" : `${u.cost.currency} `}${u.cost.amount.toFixed(4)}`;
  return s;
}

/** The largest image attached: its base64 must fit in one ACP message (16 MiB). */
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

function isImage(i: DataTransferItem): boolean {
  return i.kind === "file" && /^image\/(png|jpeg|gif|webp)$/.test(i.type);
}

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly pickers: HTMLElement;
  private readonly chips: HTMLElement;
  private readonly popup: HTMLElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly usage: HTMLElement;
  private choices: Choice[] = [];
  private active = 0;
  private mentionQuery?: string;
  private searchTimer?: ReturnType<typeof setTimeout>;
  private model?: Model;

  constructor(
    private readonly ctx: Ctx,
    private readonly onDraft: (text: string) => void,
  ) {
    const d = ctx.doc;
    this.pickers = h(d, "div", { class: "pickers", role: "toolbar", "aria-label": "Session settings" });
    this.chips = h(d, "div", { class: "chips", "aria-label": "Attached" });
    this.popup = h(d, "div", { class: "popup", role: "listbox", id: "composer-popup", hidden: true });
    this.input = h(d, "textarea", {
      class: "prompt",
      rows: "3",
      placeholder: "Ask interpreter… (/ for commands, @ for files)",
      "aria-label": "Message to interpreter",
      "aria-autocomplete": "list",
      "aria-controls": "composer-popup",
    }) as HTMLTextAreaElement;
    this.sendButton = h(d, "button", { type: "button", class: "primary send" }, "Send") as HTMLButtonElement;
    this.usage = h(d, "div", { class: "usage", "aria-live": "polite" });
    const row = h(d, "div", { class: "composer-row" }, this.input, this.sendButton);
    this.el = h(d, "footer", { class: "composer" }, this.popup, this.chips, row, h(d, "div", { class: "composer-foot" }, this.pickers, this.usage));
    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.input.addEventListener("input", () => {
      this.onDraft(this.input.value);
      this.updatePopup();
    });
    this.sendButton.addEventListener("click", () => (this.model?.running ? this.ctx.post({ type: "cancel" }) : this.send()));
    // Images pasted or dropped into the prompt go with it as image blocks.
    this.input.addEventListener("paste", (e) => this.takeImages(e, e.clipboardData?.items));
    this.input.addEventListener("dragover", (e) => {
      if ([...(e.dataTransfer?.items ?? [])].some(isImage)) e.preventDefault();
    });
    this.input.addEventListener("drop", (e) => this.takeImages(e, e.dataTransfer?.items));
  }

  /** Attaches the images among `items` (a paste's or a drop's); other content is left alone. */
  private takeImages(e: Event, items: DataTransferItemList | undefined): void {
    const files = [...(items ?? [])].filter(isImage).map((i) => i.getAsFile());
    if (files.length === 0) return;
    e.preventDefault();
    for (const file of files) {
      if (!file) continue;
      if (file.size > MAX_IMAGE_BYTES) {
        const why = `${file.name || "The image"} is larger than ${MAX_IMAGE_BYTES >> 20} MiB: not attached`;
        this.chips.append(h(this.ctx.doc, "span", { class: "chip error", role: "alert" }, why));
        continue;
      }
      const win = this.ctx.doc.defaultView;
      if (!win) continue;
      const reader = new win.FileReader();
      reader.onload = () => {
        const url = String(reader.result ?? "");
        const comma = url.indexOf(",");
        if (!this.model || comma < 0) return;
        const n = this.model.attachments.filter((a) => a.kind === "image").length + 1;
        this.model.attachments.push({ kind: "image", path: file.name, label: `Image #${n}`, data: url.slice(comma + 1), mimeType: file.type });
        this.renderChips(this.model.attachments);
      };
      reader.readAsDataURL(file);
    }
  }

  setDraft(text: string): void {
    this.input.value = text;
  }

  /** A rewound prompt, back to edit and send again; text the user had typed stays after it. */
  restore(text: string): void {
    const own = this.input.value.trim();
    this.input.value = own ? `${text}\n\n${own}` : text;
    this.onDraft(this.input.value);
    this.input.focus();
    this.input.selectionStart = this.input.selectionEnd = text.length;
  }

  update(m: Model): void {
    this.model = m;
    this.sendButton.textContent = m.running ? "Stop" : "Send";
    this.sendButton.setAttribute("aria-label", m.running ? "Stop the turn (Escape)" : "Send (Enter)");
    this.sendButton.className = m.running ? "secondary send stop" : "primary send";
    this.usage.textContent = usageText(m.usage);
    this.renderChips(m.attachments);
    this.renderPickers(m.configOptions);
    if (this.mentionQuery !== undefined && m.files?.query === this.mentionQuery) this.updatePopup();
  }

  private renderChips(list: Attachment[]): void {
    this.chips.replaceChildren();
    list.forEach((a, i) => {
      const remove = h(this.ctx.doc, "button", { type: "button", class: "chip-x", "aria-label": `Remove ${a.label}` }, "×");
      remove.addEventListener("click", () => {
        list.splice(i, 1);
        this.renderChips(list);
      });
      this.chips.append(h(this.ctx.doc, "span", { class: "chip", title: a.path }, a.label, remove));
    });
  }

  private renderPickers(options: SessionConfigOption[]): void {
    const d = this.ctx.doc;
    this.pickers.replaceChildren();
    for (const o of options) {
      if (o.type !== "select") continue;
      const select = h(d, "select", { "aria-label": o.name, title: o.description ?? o.name, "data-config": o.id }) as HTMLSelectElement;
      for (const opt of flatOptions(o)) {
        const el = h(d, "option", { value: opt.value }, opt.name) as HTMLOptionElement;
        if (opt.value === o.currentValue) el.selected = true;
        select.append(el);
      }
      select.addEventListener("change", () => this.ctx.post({ type: "setConfig", configId: o.id, value: select.value }));
      this.pickers.append(select);
    }
  }

  private send(): void {
    const m = this.model;
    const text = this.input.value.trim();
    const attachments = m ? [...m.attachments] : [];
    if (!text && attachments.length === 0) return;
    this.ctx.post({ type: "send", text, attachments });
    this.input.value = "";
    this.onDraft("");
    if (m) m.attachments = [];
    this.renderChips([]);
    this.closePopup();
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.popup.hidden && this.choices.length) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        const n = this.choices.length;
        this.active = (this.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
        this.drawChoices();
        e.preventDefault();
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        this.choices[this.active].apply();
        e.preventDefault();
        return;
      }
      if (e.key === "Escape") {
        this.closePopup();
        e.preventDefault();
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      // While a turn runs, the message goes to the agent at once: it runs right after the
      // turn, whose answer finishes and stays.
      this.send();
    } else if (e.key === "Escape" && this.model?.running) {
      this.ctx.post({ type: "cancel" });
    }
  }

  private closePopup(): void {
    this.popup.hidden = true;
    this.choices = [];
    this.mentionQuery = undefined;
    this.input.removeAttribute("aria-activedescendant");
  }

  /** Shows `/` or `@` completions for the text before the caret. */
  private updatePopup(): void {
    const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const slash = /^\/(\S*)$/.exec(before);
    const mention = /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (slash && this.model) {
      const q = slash[1].toLowerCase();
      this.choices = this.model.commands
        .filter((c) => c.name.toLowerCase().startsWith(q))
        .map((c) => ({
          label: `/${c.name}`,
          detail: c.description,
          apply: () => {
            const rest = this.input.value.slice(before.length);
            this.input.value = `/${c.name} ${rest.trimStart()}`;
            this.input.selectionStart = this.input.selectionEnd = c.name.length + 2;
            this.closePopup();
          },
        }));
      this.mentionQuery = undefined;
    } else if (mention) {
      const q = mention[1];
      if (this.mentionQuery !== q) {
        this.mentionQuery = q;
        clearTimeout(this.searchTimer);
        this.searchTimer = setTimeout(() => this.ctx.post({ type: "searchFiles", query: q }), 80);
      }
      const items = this.model?.files?.query === q ? this.model.files.items : [];
      this.choices = items.map((f) => ({
        label: f.label,
        apply: () => {
          const start = before.length - q.length - 1;
          this.input.value = `${this.input.value.slice(0, start)}@${f.label} ${this.input.value.slice(before.length)}`;
          this.model?.attachments.push({ kind: "file", path: f.path, label: f.label });
          this.renderChips(this.model?.attachments ?? []);
          this.closePopup();
        },
      }));
    } else {
      this.closePopup();
      return;
    }
    this.active = 0;
    this.drawChoices();
  }

  private drawChoices(): void {
    const d = this.ctx.doc;
    this.popup.replaceChildren();
    this.popup.hidden = this.choices.length === 0;
    this.choices.forEach((c, i) => {
      const id = `choice-${i}`;
      const el = h(
        d,
        "div",
        { class: `choice${i === this.active ? " active" : ""}`, role: "option", id, "aria-selected": i === this.active ? "true" : "false" },
        h(d, "span", { class: "choice-label" }, c.label),
        c.detail ? h(d, "span", { class: "choice-detail" }, c.detail) : null,
      );
      el.addEventListener("mousedown", (e) => {
        e.preventDefault();
        c.apply();
      });
      this.popup.append(el);
      if (i === this.active) this.input.setAttribute("aria-activedescendant", id);
    });
  }
}
