//! Core microbenchmarks (figures in docs/benchmarks.md, run by `bench/run`).
//!
//! - `apply_patch`: parse a Codex-format patch and plan it (`parse_patch` + `plan_patch`, in
//!   memory) against a 10,000-line file: one hunk near the end (the seek dominates) and 50
//!   hunks spread over the file.
//! - `grep`: `tools::files::grep` (the native harness's grep_files) and `tools::files::search`
//!   (kimi-code's Grep) over a generated tree of 50,000 files, and `rg` on the same tree in
//!   the same run (single-threaded `-j1` and its default thread count) when it is on PATH.
//! - `sse`: `model::sse::SseDecoder` + `model::chat::ChatStream` over a recorded-shape Chat
//!   Completions stream (text deltas and a streamed tool call), fed in 1,400-byte reads.
//!
//! Run: `cargo bench -p interpreter-core --bench core` (add `-- grep` to run one group).
//! Nothing here asserts a timing.

// A benchmark stops at its first broken input: unwrapping is its way to say so.
#![allow(clippy::unwrap_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use interpreter_core::model::chat::ChatStream;
use interpreter_core::model::sse::SseDecoder;
use interpreter_core::tools::apply_patch::{parse_patch, plan_patch};
use interpreter_core::tools::files::{GrepOptions, SearchOptions, grep, search};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// xorshift64*: deterministic inputs, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "let", "value", "result", "match", "self", "return", "config", "items", "fn", "index",
    "buffer", "parse", "total", "count", "render", "state", "=", "+", "(", ")", "{", "}", ";",
];

/// A code-like line; `i` makes every line unique so patch context is unambiguous.
fn code_line(rng: &mut Rng, i: usize) -> String {
    let mut s = "    ".repeat(rng.below(4));
    let _ = write!(s, "let v{i} = ");
    for _ in 0..(3 + rng.below(6)) {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(' ');
    }
    s.push(';');
    s
}

// ------------------------------------------------------------------ apply_patch

const PATCH_FILE_LINES: usize = 10_000;

fn patch_file() -> (String, Vec<String>) {
    let mut rng = Rng(0x5eed_0001);
    let lines: Vec<String> = (0..PATCH_FILE_LINES)
        .map(|i| code_line(&mut rng, i))
        .collect();
    let mut text = lines.join("\n");
    text.push('\n');
    (text, lines)
}

/// A patch with one chunk per target line: 3 lines of context before, the line replaced,
/// 3 lines after (Codex's usual shape).
fn patch_for(lines: &[String], targets: &[usize]) -> String {
    let mut p = String::from("*** Begin Patch\n*** Update File: src/big.rs\n");
    for &t in targets {
        p.push_str("@@\n");
        for line in &lines[t - 3..t] {
            let _ = writeln!(p, " {line}");
        }
        let _ = writeln!(p, "-{}", lines[t]);
        let _ = writeln!(p, "+{} // changed", lines[t]);
        for line in &lines[t + 1..t + 4] {
            let _ = writeln!(p, " {line}");
        }
    }
    p.push_str("*** End Patch\n");
    p
}

fn bench_apply_patch(c: &mut Criterion) {
    let (text, lines) = patch_file();
    let one = patch_for(&lines, &[PATCH_FILE_LINES - 20]);
    let spread: Vec<usize> = (0..50)
        .map(|k| 10 + k * (PATCH_FILE_LINES - 20) / 50)
        .collect();
    let fifty = patch_for(&lines, &spread);
    let mut g = c.benchmark_group("apply_patch");
    g.throughput(Throughput::Bytes(text.len() as u64));
    for (name, patch) in [
        ("10k-line file, 1 hunk near the end", &one),
        ("10k-line file, 50 hunks", &fifty),
    ] {
        // Check once that the patch applies, outside the timing.
        let parsed = parse_patch(patch).expect("patch parses");
        let changes = plan_patch(&parsed, |_| Ok(text.clone())).expect("patch applies");
        assert_eq!(changes.len(), 1);
        g.bench_function(name, |b| {
            b.iter(|| {
                let parsed = parse_patch(black_box(patch)).unwrap();
                let changes = plan_patch(&parsed, |_| Ok(text.clone())).unwrap();
                black_box(changes)
            })
        });
    }
    g.finish();
}

// ------------------------------------------------------------------ grep

const TREE_FILES: usize = 50_000;
const FILES_PER_DIR: usize = 200;
/// One file in this many holds the needle.
const NEEDLE_EVERY: usize = 97;

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bytes: u64,
    needles: usize,
}

/// 50,000 files of 10 to 40 code-like lines in 250 folders, built once per process.
fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("interpreter-grep-bench")
            .tempdir()
            .expect("temp dir");
        let root = dir.path().to_path_buf();
        let mut rng = Rng(0x5eed_0002);
        let mut bytes = 0u64;
        let mut needles = 0;
        for f in 0..TREE_FILES {
            let sub = root.join(format!("pkg{:03}", f / FILES_PER_DIR));
            if f % FILES_PER_DIR == 0 {
                std::fs::create_dir_all(&sub).expect("mkdir");
            }
            let mut text = String::new();
            let n = 10 + rng.below(31);
            for i in 0..n {
                text.push_str(&code_line(&mut rng, i));
                text.push('\n');
            }
            if f % NEEDLE_EVERY == 0 {
                let _ = writeln!(text, "    let needle_{f} = locate_needle({f});");
                needles += 1;
            }
            bytes += text.len() as u64;
            std::fs::write(sub.join(format!("mod{:05}.rs", f)), text).expect("write");
        }
        Tree {
            _dir: dir,
            root,
            bytes,
            needles,
        }
    })
}

const PATTERN: &str = r"needle_\d+";

fn rg_version() -> Option<String> {
    let out = Command::new("rg").arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(str::to_string)
}

fn run_rg(root: &Path, threads: Option<usize>) -> usize {
    let mut cmd = Command::new("rg");
    cmd.args(["-n", "--no-heading", "--color", "never"]);
    if let Some(j) = threads {
        cmd.arg(format!("-j{j}"));
    }
    let out = cmd
        .arg(PATTERN)
        .arg(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("rg runs");
    out.stdout.iter().filter(|&&b| b == b'\n').count()
}

fn bench_grep(c: &mut Criterion) {
    let t = tree();
    let grep_opts = GrepOptions {
        limit: usize::MAX,
        ..GrepOptions::default()
    };
    let search_opts = SearchOptions {
        max_lines: usize::MAX,
        ..SearchOptions::default()
    };
    // Same answers before timing anything.
    let (hits, truncated) = grep(&t.root, PATTERN, &grep_opts).expect("grep");
    assert_eq!((hits.len(), truncated), (t.needles, false));
    let files = search(&t.root, PATTERN, &search_opts).expect("search");
    assert_eq!(files.len(), t.needles);
    let rg = rg_version();
    match &rg {
        Some(v) => {
            assert_eq!(
                run_rg(&t.root, Some(1)),
                t.needles,
                "rg finds the same lines"
            );
            eprintln!(
                "grep bench: {TREE_FILES} files, {} bytes, {} matches; comparing with {v}",
                t.bytes, t.needles
            );
        }
        None => eprintln!("grep bench: rg not found on PATH, skipping the rg comparison"),
    }

    let mut g = c.benchmark_group("grep");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(TREE_FILES as u64));
    g.bench_function("50k files: tools::files::grep", |b| {
        b.iter(|| black_box(grep(&t.root, PATTERN, &grep_opts).unwrap()))
    });
    g.bench_function("50k files: tools::files::search", |b| {
        b.iter(|| black_box(search(&t.root, PATTERN, &search_opts).unwrap()))
    });
    if rg.is_some() {
        g.bench_function("50k files: rg -j1 (process)", |b| {
            b.iter(|| black_box(run_rg(&t.root, Some(1))))
        });
        g.bench_function("50k files: rg, default threads (process)", |b| {
            b.iter(|| black_box(run_rg(&t.root, None)))
        });
    }
    g.finish();
}

// ------------------------------------------------------------------ SSE

/// A Chat Completions stream as providers send it: a role chunk, `n_text` content deltas of
/// a few words, one tool call whose arguments come in 40 pieces, the finish chunk, a usage
/// chunk and `[DONE]`.
fn chat_sse(n_text: usize) -> Vec<u8> {
    let mut rng = Rng(0x5eed_0003);
    let mut s = String::new();
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764460800,"model":"kimi-k3","choices":[{"index":0,"delta":"#;
    let _ = write!(
        s,
        "data: {head}{{\"role\":\"assistant\",\"content\":\"\"}},\"finish_reason\":null}}]}}\n\n"
    );
    for _ in 0..n_text {
        let mut words = String::new();
        for _ in 0..(1 + rng.below(4)) {
            words.push_str(WORDS[rng.below(WORDS.len())]);
            words.push(' ');
        }
        let delta = serde_json::json!({ "content": words });
        let _ = write!(s, "data: {head}{delta},\"finish_reason\":null}}]}}\n\n");
    }
    let args = serde_json::json!({"path": "src/lib.rs", "old_string": "let value = parse(config);", "new_string": "let value = parse(&config)?;"}).to_string();
    let chars: Vec<char> = args.chars().collect();
    for (i, piece) in chars.chunks(chars.len().div_ceil(40)).enumerate() {
        let piece: String = piece.iter().collect();
        let call = if i == 0 {
            serde_json::json!({"index": 0, "id": "call_1", "type": "function", "function": {"name": "Edit", "arguments": piece}})
        } else {
            serde_json::json!({"index": 0, "function": {"arguments": piece}})
        };
        let _ = write!(
            s,
            "data: {head}{{\"tool_calls\":[{call}]}},\"finish_reason\":null}}]}}\n\n"
        );
    }
    let _ = write!(
        s,
        "data: {head}{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n"
    );
    s.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":900,\"total_tokens\":2100}}\n\n");
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

fn parse_stream(bytes: &[u8], read: usize) -> usize {
    let mut dec = SseDecoder::new();
    let mut stream = ChatStream::new("bench");
    let mut deltas = 0;
    for piece in bytes.chunks(read) {
        for ev in dec.feed(piece) {
            deltas += stream.handle(&ev.data).expect("valid stream").len();
        }
    }
    let response = stream.finish().expect("complete stream");
    black_box(response);
    deltas
}

fn bench_sse(c: &mut Criterion) {
    let body = chat_sse(5_000);
    assert_eq!(parse_stream(&body, 1400), 5_000);
    let mut g = c.benchmark_group("sse");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("chat stream, 5k deltas + tool call, 1400-byte reads", |b| {
        b.iter(|| black_box(parse_stream(&body, 1400)))
    });
    g.bench_function("chat stream, 5k deltas + tool call, 64-byte reads", |b| {
        b.iter(|| black_box(parse_stream(&body, 64)))
    });
    g.finish();
}

criterion_group!(benches, bench_apply_patch, bench_grep, bench_sse);
criterion_main!(benches);
