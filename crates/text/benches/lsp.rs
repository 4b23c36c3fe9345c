//! Document-model benchmarks for `interpreter lsp` (figures in docs/benchmarks.md).
//!
//! - didChange: one keystroke (insert or delete one char at a UTF-16 position) on a 5 MB
//!   document, through `DocumentStore::change` (lock, position conversion, rope edit).
//! - Position conversions: 1M random UTF-16 positions → char index, and back, on that
//!   document.
//! - Edit generation: line diff + char refinement + positions for a 20k-line file with 1 %
//!   of its lines changed (`minimal_edits`).
//!
//! Run: `cargo bench -p interpreter-text --bench lsp`. Nothing here asserts a timing.

// A benchmark stops at its first broken input: unwrapping is its way to say so.
#![allow(clippy::unwrap_used)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use interpreter_text::documents::{Document, DocumentStore, TextChange};
use interpreter_text::edits::minimal_edits;
use interpreter_text::positions::{
    Position, PositionEncoding, Range, char_to_position, position_to_char,
};
use ropey::Rope;
use std::hint::black_box;
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

/// Code-like lines; about 3 % carry non-ASCII (é, →, 日本語, 😀, 🦀).
fn line(rng: &mut Rng, i: usize) -> String {
    const WORDS: &[&str] = &[
        "let", "value", "result", "match", "self", "return", "config", "items", "fn", "=", "+",
        "(", ")", "{", "}", ";", "index", "buffer",
    ];
    const WIDE: &[&str] = &["é", "→", "日本語", "😀", "🦀"];
    let indent = "    ".repeat(rng.below(4));
    let mut s = format!("{indent}// {i}: ");
    for _ in 0..(3 + rng.below(6)) {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(' ');
    }
    if rng.below(100) < 3 {
        s.push_str(WIDE[rng.below(WIDE.len())]);
    }
    s.push('\n');
    s
}

fn document_text(bytes: usize) -> String {
    let mut rng = Rng(0x0bad_5eed);
    let mut text = String::with_capacity(bytes + 128);
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&line(&mut rng, i));
        i += 1;
    }
    text
}

fn random_positions(rope: &Rope, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng(seed);
    let lines = rope.len_lines() as u32;
    (0..n)
        .map(|_| Position::new(rng.below(lines as usize) as u32, rng.below(48) as u32))
        .collect()
}

fn did_change(c: &mut Criterion) {
    let text = document_text(5 * 1024 * 1024);
    let store = DocumentStore::new();
    let uri = "file:///bench/big.rs";
    store.open(Document::new(uri.into(), None, "rust".into(), 0, &text));
    let rope = Rope::from_str(&text);
    let positions = random_positions(&rope, 4096, 7);
    let mut g = c.benchmark_group("didChange");
    g.throughput(Throughput::Elements(1));
    let (mut version, mut k) = (0i32, 0usize);
    g.bench_function("keystroke on a 5 MB document (utf-16)", |b| {
        b.iter(|| {
            // Type a character, then delete it again on the next iteration: the document
            // stays 5 MB however long criterion runs.
            let p = positions[(k / 2) % positions.len()];
            let change = if k % 2 == 0 {
                TextChange {
                    range: Some(Range::new(p, p)),
                    text: "x".into(),
                }
            } else {
                let end = Position::new(p.line, p.character + 1);
                TextChange {
                    range: Some(Range::new(p, end)),
                    text: String::new(),
                }
            };
            k += 1;
            version += 1;
            store
                .change(
                    uri,
                    version,
                    std::slice::from_ref(&change),
                    PositionEncoding::Utf16,
                )
                .unwrap();
        })
    });
    g.finish();
}

fn conversions(c: &mut Criterion) {
    let text = document_text(5 * 1024 * 1024);
    let rope = Rope::from_str(&text);
    let positions = random_positions(&rope, 1_000_000, 11);
    let mut rng = Rng(13);
    let chars: Vec<usize> = (0..1_000_000)
        .map(|_| rng.below(rope.len_chars()))
        .collect();
    let mut g = c.benchmark_group("positions");
    g.sample_size(10);
    g.throughput(Throughput::Elements(1_000_000));
    for enc in [
        PositionEncoding::Utf16,
        PositionEncoding::Utf8,
        PositionEncoding::Utf32,
    ] {
        g.bench_function(format!("1M position→char ({})", enc.as_str()), |b| {
            b.iter(|| {
                let mut sum = 0usize;
                for p in &positions {
                    sum = sum.wrapping_add(position_to_char(&rope, *p, enc));
                }
                black_box(sum)
            })
        });
    }
    g.bench_function("1M char→position (utf-16)", |b| {
        b.iter(|| {
            let mut sum = 0u32;
            for i in &chars {
                sum = sum
                    .wrapping_add(char_to_position(&rope, *i, PositionEncoding::Utf16).character);
            }
            black_box(sum)
        })
    });
    g.finish();
}

fn edit_generation(c: &mut Criterion) {
    let mut rng = Rng(17);
    let lines: Vec<String> = (0..20_000).map(|i| line(&mut rng, i)).collect();
    let old: String = lines.concat();
    let mut changed = lines.clone();
    for _ in 0..200 {
        let i = rng.below(changed.len());
        changed[i] = changed[i]
            .replacen("// ", "// changed ", 1)
            .replace("value", "total");
    }
    let new: String = changed.concat();
    let rope = Rope::from_str(&old);
    let edits = minimal_edits(&rope, &new, PositionEncoding::Utf16);
    eprintln!(
        "edit generation input: {} lines, {} bytes, ~200 lines changed → {} edits",
        lines.len(),
        old.len(),
        edits.len()
    );
    let mut g = c.benchmark_group("edits");
    g.bench_function("minimal edits, 20k lines, 1% changed (utf-16)", |b| {
        b.iter_batched(
            || rope.clone(),
            |r| black_box(minimal_edits(&r, &new, PositionEncoding::Utf16)),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = did_change, conversions, edit_generation
}
criterion_main!(benches);
