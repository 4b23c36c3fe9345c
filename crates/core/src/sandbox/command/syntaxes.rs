//! The option syntax of each program whose options the rules read ([`super::options`]): its
//! short letters and long names (GNU coreutils, util-linux, findutils and git spellings; the
//! BSD ones are mostly a subset). A wrapper's command starts where its options stop.

use super::options::Syntax;

pub(super) const NONE: Syntax = Syntax::gnu("", &["help", "version"]).stop();
pub(super) const COMMAND: Syntax = Syntax::gnu("pvV", &[]).stop().exact();
pub(super) const EXEC: Syntax = Syntax::gnu("a:cl", &[]).stop().exact();
pub(super) const NICE: Syntax = Syntax::gnu("n:", &["adjustment=", "help", "version"])
    .stop()
    .numbers();
pub(super) const TIME: Syntax = Syntax::gnu(
    "af:o:pqvVh",
    &[
        "append",
        "format=",
        "output=",
        "portability",
        "quiet",
        "verbose",
        "help",
        "version",
    ],
)
.stop();
pub(super) const TIMEOUT: Syntax = Syntax::gnu(
    "fk:ps:v",
    &[
        "foreground",
        "kill-after=",
        "preserve-status",
        "signal=",
        "verbose",
        "help",
        "version",
    ],
)
.stop();
pub(super) const ENV: Syntax = Syntax::gnu(
    "a:C:iS:u:v0",
    &[
        "argv0=",
        "block-signal=?",
        "chdir=",
        "debug",
        "default-signal=?",
        "ignore-environment",
        "ignore-signal=?",
        "list-signal-handling",
        "null",
        "split-string=",
        "unset=",
        "help",
        "version",
    ],
)
.stop();
pub(super) const XARGS: Syntax = Syntax::gnu(
    "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
    &[
        "null",
        "arg-file=",
        "delimiter=",
        "eof=?",
        "replace=?",
        "max-lines=?",
        "max-args=",
        "open-tty",
        "interactive",
        "no-run-if-empty",
        "max-chars=",
        "show-limits",
        "verbose",
        "exit",
        "max-procs=",
        "process-slot-var=",
        "help",
        "version",
    ],
)
.stop();
pub(super) const SETSID: Syntax =
    Syntax::gnu("cfwhV", &["ctty", "fork", "wait", "help", "version"]).stop();
pub(super) const IONICE: Syntax = Syntax::gnu(
    "c:n:p:P:tu:hV",
    &[
        "class=",
        "classdata=",
        "pid=",
        "pgid=",
        "ignore",
        "uid=",
        "help",
        "version",
    ],
)
.stop();
pub(super) const STDBUF: Syntax = Syntax::gnu(
    "i:o:e:",
    &["input=", "output=", "error=", "help", "version"],
)
.stop();
pub(super) const DOAS: Syntax = Syntax::gnu("a:C:Lnsu:", &[]).stop().exact();
pub(super) const RUNUSER: Syntax = Syntax::gnu(
    "u:mpw:g:G:lc:fs:PhV",
    &[
        "user=",
        "preserve-environment",
        "whitelist-environment=",
        "group=",
        "supp-group=",
        "login",
        "command=",
        "session-command=",
        "fast",
        "shell=",
        "pty",
        "help",
        "version",
    ],
);
pub(super) const CHRT: Syntax = Syntax::gnu(
    "abdfiomprRT:P:D:vhV",
    &[
        "all-tasks",
        "batch",
        "deadline",
        "fifo",
        "idle",
        "other",
        "max",
        "pid",
        "rr",
        "reset-on-fork",
        "sched-runtime=",
        "sched-period=",
        "sched-deadline=",
        "verbose",
        "help",
        "version",
    ],
)
.stop();
pub(super) const TASKSET: Syntax = Syntax::gnu(
    "apchV",
    &["all-tasks", "pid", "cpu-list", "help", "version"],
)
.stop();
pub(super) const CHROOT: Syntax = Syntax::gnu(
    "",
    &["groups=", "userspec=", "skip-chdir", "help", "version"],
)
.stop();
pub(super) const FLOCK: Syntax = Syntax::gnu(
    "sexunw:E:oc:FhV",
    &[
        "shared",
        "exclusive",
        "unlock",
        "nonblock",
        "nb",
        "timeout=",
        "wait=",
        "conflict-exit-code=",
        "close",
        "command=",
        "no-fork",
        "verbose",
        "help",
        "version",
    ],
)
.stop();
pub(super) const STRACE: Syntax = Syntax::gnu(
    "a:b:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYz",
    &[
        "output=", "trace=", "signal=", "attach=", "user=", "env=", "help", "version",
    ],
)
.stop();
pub(super) const SYSTEMD_RUN: Syntax = Syntax::gnu(
    "p:E:M:u:H:qGdtPhV",
    &[
        "property=",
        "setenv=",
        "unit=",
        "description=",
        "slice=",
        "uid=",
        "gid=",
        "machine=",
        "host=",
        "working-directory=",
        "user",
        "system",
        "scope",
        "wait",
        "pipe",
        "pty",
        "quiet",
        "collect",
        "same-dir",
        "help",
        "version",
    ],
)
.stop();
pub(super) const WATCH: Syntax = Syntax::gnu(
    "bcCd::egq:n:ptwxhv",
    &[
        "beep",
        "color",
        "no-color",
        "differences=?",
        "errexit",
        "chgexit",
        "equexit=",
        "interval=",
        "precise",
        "no-title",
        "no-wrap",
        "exec",
        "help",
        "version",
    ],
)
.stop();
pub(super) const SU: Syntax = Syntax::gnu(
    "c:fg:G:lmpPs:w:hV",
    &[
        "command=",
        "session-command=",
        "fast",
        "group=",
        "supp-group=",
        "login",
        "preserve-environment",
        "pty",
        "shell=",
        "whitelist-environment=",
        "help",
        "version",
    ],
);
pub(super) const SCRIPT: Syntax = Syntax::gnu(
    "I:O:B:T:t::m:ac:efE:o:qhV",
    &[
        "log-in=",
        "log-out=",
        "log-io=",
        "log-timing=",
        "timing=?",
        "logging-format=",
        "append",
        "command=",
        "return",
        "flush",
        "force",
        "echo=",
        "output-limit=",
        "quiet",
        "help",
        "version",
    ],
);
pub(super) const SUDO: Syntax = Syntax::gnu(
    "AbBC:D:Eeg:Hh::iKklnPp:R:r:SsT:t:U:u:Vv",
    &[
        "askpass",
        "background",
        "bell",
        "close-from=",
        "chdir=",
        "preserve-env=?",
        "edit",
        "group=",
        "set-home",
        "help",
        "host=",
        "login",
        "remove-timestamp",
        "reset-timestamp",
        "list",
        "non-interactive",
        "preserve-groups",
        "prompt=",
        "chroot=",
        "role=",
        "stdin",
        "shell",
        "type=",
        "command-timeout=",
        "other-user=",
        "user=",
        "version",
        "validate",
    ],
)
.stop();

/// The syntax of the wrapper `name`, or None when it is not a wrapper whose options we read.
pub(super) fn wrapper(name: &str) -> Option<&'static Syntax> {
    Some(match name {
        "builtin" | "nohup" | "unbuffer" | "pkexec" | "coproc" | "then" | "do" | "else" => &NONE,
        "command" => &COMMAND,
        "exec" => &EXEC,
        "nice" => &NICE,
        "time" => &TIME,
        "timeout" => &TIMEOUT,
        "env" => &ENV,
        "xargs" => &XARGS,
        "setsid" => &SETSID,
        "ionice" => &IONICE,
        "stdbuf" => &STDBUF,
        "doas" => &DOAS,
        "runuser" => &RUNUSER,
        "chrt" => &CHRT,
        "taskset" => &TASKSET,
        "chroot" => &CHROOT,
        "flock" => &FLOCK,
        "strace" | "ltrace" => &STRACE,
        "systemd-run" => &SYSTEMD_RUN,
        "watch" => &WATCH,
        "su" => &SU,
        "script" => &SCRIPT,
        "sudo" => &SUDO,
        _ => return None,
    })
}

// Programs the read-only list and the dangerous rules judge by their options.

pub(super) const SORT: Syntax = Syntax::gnu(
    "bcCdfghik:mMno:rRsS:t:T:uVy:z",
    &[
        "ignore-leading-blanks",
        "debug",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "random-source=",
        "reverse",
        "sort=",
        "version-sort",
        "batch-size=",
        "check=?",
        "compress-program=",
        "files0-from=",
        "key=",
        "merge",
        "output=",
        "stable",
        "buffer-size=",
        "field-separator=",
        "temporary-directory=",
        "parallel=",
        "unique",
        "zero-terminated",
        "help",
        "version",
    ],
);
pub(super) const UNIQ: Syntax = Syntax::gnu(
    "cdDf:is:uw:z",
    &[
        "count",
        "repeated",
        "all-repeated=?",
        "group=?",
        "skip-fields=",
        "ignore-case",
        "skip-chars=",
        "unique",
        "zero-terminated",
        "check-chars=",
        "help",
        "version",
    ],
)
.numbers();
/// ripgrep matches long flags by their full name only.
pub(super) const RG: Syntax = Syntax::gnu(
    "A:B:C:E:e:f:g:j:M:m:r:t:T:d:abcFHhiIlLnNopPqsSuUvVwxz0",
    &[
        "pre=",
        "pre-glob=",
        "hostname-bin=",
        "search-zip",
        "after-context=",
        "before-context=",
        "context=",
        "encoding=",
        "regexp=",
        "file=",
        "glob=",
        "iglob=",
        "threads=",
        "max-columns=",
        "max-count=",
        "max-depth=",
        "max-filesize=",
        "replace=",
        "type=",
        "type-not=",
        "type-add=",
        "type-clear=",
        "sort=",
        "sortr=",
        "color=",
        "colors=",
        "context-separator=",
        "field-context-separator=",
        "field-match-separator=",
        "path-separator=",
        "ignore-file=",
        "engine=",
        "dfa-size-limit=",
        "regex-size-limit=",
        "hyperlink-format=",
        "generate=",
    ],
)
.exact();
pub(super) const RM: Syntax = Syntax::gnu(
    "dfirvIR",
    &[
        "directory",
        "force",
        "interactive=?",
        "one-file-system",
        "no-preserve-root",
        "preserve-root=?",
        "recursive",
        "verbose",
        "help",
        "version",
    ],
);
/// chmod, chown and chgrp: their long options (their short ones include modes like `-w`).
pub(super) const CHMOD_LONG: Syntax = Syntax::gnu(
    "",
    &[
        "changes",
        "dereference",
        "no-dereference",
        "from=",
        "no-preserve-root",
        "preserve-root",
        "quiet",
        "silent",
        "reference=",
        "recursive",
        "verbose",
        "help",
        "version",
    ],
);
pub(super) const GIT_RESET: Syntax = Syntax::gnu(
    "qpN",
    &[
        "quiet",
        "no-refresh",
        "refresh",
        "mixed",
        "soft",
        "hard",
        "merge",
        "keep",
        "recurse-submodules=?",
        "patch",
        "intent-to-add",
        "pathspec-from-file=",
        "pathspec-file-nul",
    ],
)
.git();
pub(super) const GIT_PUSH: Syntax = Syntax::gnu(
    "vqdnfuo:46",
    &[
        "verbose",
        "quiet",
        "repo=",
        "all",
        "branches",
        "mirror",
        "delete",
        "tags",
        "dry-run",
        "porcelain",
        "force",
        "force-with-lease=?",
        "force-if-includes",
        "recurse-submodules=",
        "thin",
        "receive-pack=",
        "exec=",
        "set-upstream",
        "progress",
        "prune",
        "no-verify",
        "verify",
        "follow-tags",
        "signed=?",
        "atomic",
        "push-option=",
        "ipv4",
        "ipv6",
    ],
)
.git();
pub(super) const GIT_CLEAN: Syntax = Syntax::gnu(
    "qnfide:xX",
    &["quiet", "dry-run", "force", "interactive", "exclude="],
)
.git();
pub(super) const GIT_BRANCH: Syntax = Syntax::gnu(
    "vqt::u:radDmMcClfi",
    &[
        "verbose",
        "quiet",
        "track=?",
        "set-upstream-to=",
        "unset-upstream",
        "color=?",
        "remotes",
        "contains=",
        "no-contains=",
        "abbrev=?",
        "all",
        "delete",
        "move",
        "omit-empty",
        "copy",
        "list",
        "show-current",
        "create-reflog",
        "edit-description",
        "force",
        "merged=",
        "no-merged=",
        "column=?",
        "sort=",
        "points-at=",
        "ignore-case",
        "recurse-submodules",
        "format=",
    ],
)
.git();
