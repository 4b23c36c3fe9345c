// Which `interpreter` binary to run: the `interpreter.path` setting when set, else the one
// bundled in a platform VSIX (`<extension>/bin/interpreter`), else PATH. Pure (no vscode
// import; file checks are injected), so every branch is unit-tested.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export type BinarySource = "setting" | "bundled" | "path";

export interface Resolved {
  ok: true;
  command: string;
  source: BinarySource;
}

export interface Unresolved {
  ok: false;
  /** What to tell the user, naming the path or the setting. */
  message: string;
}

/** File checks, replaceable in tests. */
export interface FileChecks {
  isFile(p: string): boolean;
  isExecutable(p: string): boolean;
}

export const realFiles: FileChecks = {
  isFile(p) {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  },
  isExecutable(p) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

export interface ResolveOptions {
  /** `interpreter.path`, trimmed; empty means "not set". */
  setting: string;
  extensionPath: string;
  workspaceFolder?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
  files?: FileChecks;
}

/** Where docs/vscode.md tells how to install the binary. */
export const INSTALL_DOCS = "https://github.com/openinterpreter/interpreter/blob/main/docs/vscode.md#install";

export function binaryName(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? "interpreter.exe" : "interpreter";
}

/** `~` expanded; a relative path with a separator is taken from the first workspace folder. */
export function expandSetting(setting: string, workspaceFolder?: string, home = os.homedir()): string {
  const p = setting.trim();
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  if (path.isAbsolute(p) || !/[\\/]/.test(p)) return p;
  return workspaceFolder ? path.resolve(workspaceFolder, p) : p;
}

/** Looks `name` up on PATH (with PATHEXT on Windows); the first executable file wins. */
export function findOnPath(
  name: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  files: FileChecks,
): string | undefined {
  const pathVar = env.PATH ?? env.Path ?? "";
  const sep = platform === "win32" ? ";" : ":";
  const exts =
    platform === "win32" && !path.extname(name)
      ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean)
      : [""];
  for (const dir of pathVar.split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (files.isFile(candidate) && (platform === "win32" || files.isExecutable(candidate))) return candidate;
    }
  }
  return undefined;
}

export function resolveBinary(o: ResolveOptions): Resolved | Unresolved {
  const env = o.env ?? process.env;
  const platform = o.platform ?? process.platform;
  const files = o.files ?? realFiles;
  const setting = o.setting.trim();
  const executable = (p: string) => files.isFile(p) && (platform === "win32" || files.isExecutable(p));

  if (setting) {
    const p = expandSetting(setting, o.workspaceFolder, o.home);
    if (!/[\\/]/.test(p)) {
      const found = findOnPath(p, env, platform, files);
      if (found) return { ok: true, command: found, source: "setting" };
      return { ok: false, message: `interpreter.path is \`${setting}\`, and no such program is on PATH.` };
    }
    if (!files.isFile(p)) return { ok: false, message: `interpreter.path names ${p}, which does not exist.` };
    if (!executable(p)) return { ok: false, message: `interpreter.path names ${p}, which is not executable (chmod +x).` };
    return { ok: true, command: p, source: "setting" };
  }

  const bundled = path.join(o.extensionPath, "bin", binaryName(platform));
  if (executable(bundled)) return { ok: true, command: bundled, source: "bundled" };
  const found = findOnPath(binaryName(platform).replace(/\.exe$/, ""), env, platform, files);
  if (found) return { ok: true, command: found, source: "path" };
  const bundledNote = files.isFile(bundled) ? ` The bundled ${bundled} is not executable.` : "";
  return {
    ok: false,
    message: `the \`interpreter\` binary was not found: it is not bundled with this extension and not on PATH.${bundledNote} Install it, or set interpreter.path.`,
  };
}
