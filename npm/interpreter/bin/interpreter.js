#!/usr/bin/env node
// The `interpreter` (and `i`) command from npm. npm installs exactly one platform package
// (an optionalDependency whose os/cpu fields match); this finds its binary and runs it.
// stdio is inherited, so ACP and LSP bytes never pass through Node; SIGINT, SIGTERM and
// SIGHUP are passed on, and the child's exit status (or the signal that ended it) becomes ours.
"use strict";

const { spawn } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

const { version } = require("../package.json");

// process.platform-process.arch -> the package npm installs there (package.json lists the same).
const PLATFORM_PACKAGES = {
  "linux-x64": "@openinterpreter/interpreter-linux-x64",
  "linux-arm64": "@openinterpreter/interpreter-linux-arm64",
  "darwin-x64": "@openinterpreter/interpreter-darwin-x64",
  "darwin-arm64": "@openinterpreter/interpreter-darwin-arm64",
  "win32-x64": "@openinterpreter/interpreter-win32-x64",
};

const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

function fail(message, status) {
  process.stderr.write(`interpreter: ${message}\n`);
  process.exit(status);
}

function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[platform];
  if (!pkg) {
    fail(
      `no prebuilt binary for ${platform} (there are: ${Object.keys(PLATFORM_PACKAGES).join(", ")}). ` +
        "Build it from source: cargo install --locked --git https://github.com/openinterpreter/interpreter interpreter",
      1,
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the platform package ${pkg} is not installed. npm installs it as an optional dependency of ` +
        `@openinterpreter/interpreter; it is skipped by --omit=optional, --no-optional or an ` +
        `os/cpu override. Install it: npm install ${pkg}@${version}`,
      1,
    );
  }
  return { pkg, bin: path.join(dir, "bin", process.platform === "win32" ? "interpreter.exe" : "interpreter") };
}

function main() {
  const { pkg, bin } = binaryPath();
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

  const forward = (signal) => {
    try {
      child.kill(signal);
    } catch {
      // Not deliverable here (e.g. SIGHUP on Windows): the child ends with us or on its own.
    }
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);

  child.on("error", (err) => {
    if (err.code === "ENOENT") fail(`${bin} is missing: reinstall ${pkg}@${version}`, 127);
    if (err.code === "EACCES") fail(`${bin} is not executable (${err.message})`, 126);
    fail(`could not start ${bin}: ${err.message}`, 1);
  });

  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal so the caller sees it; fall back to the shell's 128+n.
      for (const s of FORWARDED_SIGNALS) process.removeListener(s, forward);
      try {
        process.kill(process.pid, signal);
      } catch {
        // Fall through to the exit code below.
      }
      setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 200);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
