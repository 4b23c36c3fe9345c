//! Secrets: API keys and tokens never leave the process in text we produce (logs, session
//! files, events, tool output echoed to the model, error messages).
//!
//! Two kinds of secrets are recognised: the values we resolved ourselves (provider keys,
//! secret-looking headers: [`register`]) wherever they appear, and common key formats
//! (`sk-…`, `Bearer …`, AWS access key ids and secrets, GitHub, Slack and Google tokens).
//! Redaction happens at the choke points: the tracing writer ([`Redacting`]), the event sink
//! ([`EventRedactor`], which also handles keys split across streamed chunks), history items
//! (`model::redact_history_item`) and session log lines ([`to_redacted_json`]). Child processes do
//! not inherit the variables keys were read from ([`secret_env_vars`]); the process scrubs
//! them from its own environment block at start and makes its memory unreadable to other
//! processes ([`protect_process`]). Every registered key is also redacted in its base64, hex
//! and reversed forms ([`encodings`]), so `base64 config.toml` or `rev` give nothing away.

mod encodings;
mod process;

pub use process::{env_var, protect_process};

use interpreter_protocol::{
    Event, ToolCallBegin, ToolCallEnd, TranscriptItem, TurnEndReason, TurnEnded,
};
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::{Mutex, OnceLock, RwLock};

/// What a secret is replaced with.
pub(crate) const REDACTED: &str = "[REDACTED]";
/// Shorter values are not registered: redacting them would mangle ordinary text.
const MIN_SECRET_LEN: usize = 8;

#[derive(Default)]
struct Registry {
    values: Vec<String>,
    env_vars: Vec<String>,
    /// Encoded forms of the values (base64, hex, reversed), which tools may wrap across lines.
    encoded: Vec<String>,
    encoded_re: Option<Regex>,
}

fn registry() -> &'static RwLock<Registry> {
    static R: OnceLock<RwLock<Registry>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// Records a secret value (an API key, a token) to redact wherever it appears.
pub(crate) fn register(value: &str) {
    let v = value.trim();
    if v.len() < MIN_SECRET_LEN {
        return;
    }
    let mut r = registry().write().unwrap_or_else(|e| e.into_inner());
    if !r.values.iter().any(|x| x == v) {
        r.values.push(v.to_string());
        // Longest first, so a key that contains another is replaced whole.
        r.values.sort_by_key(|x| std::cmp::Reverse(x.len()));
        let mut added = false;
        for e in encodings::of(v) {
            if e.len() >= MIN_SECRET_LEN && !r.encoded.contains(&e) {
                r.encoded.push(e);
                added = true;
            }
        }
        if added {
            r.encoded_re = encodings::regex(&r.encoded);
        }
    }
}

/// Whether a header or query parameter of this name carries a secret (`Authorization`,
/// `x-api-key`, …).
pub(crate) fn secret_name(n: &str) -> bool {
    let n = n.to_ascii_lowercase();
    ["auth", "key", "token", "secret", "password", "signature"]
        .iter()
        .any(|s| n.contains(s))
}

/// Records an environment variable that holds a secret: child processes do not inherit it.
pub(crate) fn register_env_var(name: &str) {
    if name.is_empty() {
        return;
    }
    let mut r = registry().write().unwrap_or_else(|e| e.into_inner());
    if !r.env_vars.iter().any(|x| x == name) {
        r.env_vars.push(name.to_string());
    }
}

/// Variables to remove from the environment of commands we start.
pub(crate) fn secret_env_vars() -> Vec<String> {
    registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .env_vars
        .clone()
}

struct Pattern {
    re: Regex,
    /// Only matches that contain a digit count (keeps prose like "Bearer authentication").
    needs_digit: bool,
}

/// A key format: its regex, whether a match needs a digit, and literals one of which every
/// match contains (the prefilter; `ci`: compared ignoring ASCII case).
struct KeyFormat {
    re: &'static str,
    needs_digit: bool,
    literals: &'static [&'static str],
    ci: bool,
}

const fn format(
    re: &'static str,
    needs_digit: bool,
    literals: &'static [&'static str],
    ci: bool,
) -> KeyFormat {
    KeyFormat {
        re,
        needs_digit,
        literals,
        ci,
    }
}

const KEY_FORMATS: &[KeyFormat] = &[
    // OpenAI, Moonshot/Kimi (sk-kimi-…), Anthropic (sk-ant-…), project keys.
    format(
        r"\b(?:sk|rk)-[A-Za-z0-9][A-Za-z0-9_\-]{15,}",
        true,
        &["sk-", "rk-"],
        false,
    ),
    // Stripe-style live/test keys.
    format(
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
        false,
        &["k_live_", "k_test_"],
        false,
    ),
    // Authorization headers: keep the scheme, drop the token.
    format(
        r"(?i)(?P<keep>\bbearer\s+)(?P<secret>[A-Za-z0-9._~+/\-]{8,}=*)",
        true,
        &["bearer"],
        true,
    ),
    // AWS access key ids and secret keys in their usual assignments.
    format(
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        false,
        &["AKIA", "ASIA", "ABIA", "ACCA"],
        false,
    ),
    format(
        r#"(?i)(?P<keep>aws_secret_access_key["']?\s*[=:]\s*["']?)(?P<secret>[A-Za-z0-9/+=]{40})"#,
        false,
        &["aws_secret_access_key"],
        true,
    ),
    // GitHub personal, OAuth, app and refresh tokens; fine-grained PATs.
    format(
        r"\bgh[pousr]_[A-Za-z0-9]{36,}",
        false,
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        false,
    ),
    format(
        r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        false,
        &["github_pat_"],
        false,
    ),
    // Slack and Google API keys.
    format(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", false, &["xox"], false),
    format(r"\bAIza[0-9A-Za-z_\-]{35}", false, &["AIza"], false),
];

fn patterns() -> &'static [Pattern] {
    static P: OnceLock<Vec<Pattern>> = OnceLock::new();
    P.get_or_init(|| {
        KEY_FORMATS
            .iter()
            .map(|f| Pattern {
                re: Regex::new(f.re).expect("secret pattern compiles"),
                needs_digit: f.needs_digit,
            })
            .collect()
    })
}

/// Whether `text` holds a literal some key format needs. Nearly all text holds none, and then
/// the regexes are neither run nor, in a process that never sees one, compiled.
fn may_hold_key_format(text: &str) -> bool {
    let hay = text.as_bytes();
    KEY_FORMATS.iter().any(|f| {
        f.literals.iter().any(|lit| {
            let lit = lit.as_bytes();
            if !f.ci {
                return memchr::memmem::find(hay, lit).is_some();
            }
            let first = lit[0];
            memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), hay).any(
                |i| {
                    hay.get(i..i + lit.len())
                        .is_some_and(|w| w.eq_ignore_ascii_case(lit))
                },
            )
        })
    })
}

/// `text` with every registered secret and every key-shaped token replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    {
        let r = registry().read().unwrap_or_else(|e| e.into_inner());
        for v in &r.values {
            if out.contains(v.as_str()) {
                out = Cow::Owned(out.replace(v.as_str(), REDACTED));
            }
        }
        if let Some(re) = &r.encoded_re
            && re.is_match(&out)
        {
            out = Cow::Owned(re.replace_all(&out, REDACTED).into_owned());
        }
    }
    if !may_hold_key_format(&out) {
        return out;
    }
    for p in patterns() {
        if !p.re.is_match(&out) {
            continue;
        }
        let replaced = p.re.replace_all(&out, |c: &Captures| {
            let whole = &c[0];
            let secret = c.name("secret").map(|m| m.as_str()).unwrap_or(whole);
            if p.needs_digit && !secret.bytes().any(|b| b.is_ascii_digit()) {
                return whole.to_string();
            }
            match c.name("keep") {
                Some(k) => format!("{}{REDACTED}", k.as_str()),
                None => REDACTED.to_string(),
            }
        });
        // A match kept whole (no digit) still comes back owned: only take real changes.
        if let Cow::Owned(s) = replaced
            && s != *out
        {
            out = Cow::Owned(s);
        }
    }
    out
}

/// Whether `text` holds anything [`redact`] would replace.
pub(crate) fn contains_secret(text: &str) -> bool {
    matches!(redact(text), Cow::Owned(ref s) if s != text)
}

pub(crate) fn redact_in_place(s: &mut String) {
    if let Cow::Owned(r) = redact(s) {
        *s = r;
    }
}

/// Redacts every string inside a JSON value.
pub(crate) fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => redact_in_place(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_json),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// `value` as JSON text, secrets redacted inside strings (so escapes stay valid). Text
/// without secrets is exactly `serde_json::to_string`'s.
pub(crate) fn to_redacted_json<T: serde::Serialize>(value: &T) -> serde_json::Result<String> {
    let text = serde_json::to_string(value)?;
    // Escapes (`\n`) would hide a key's word boundary from the patterns: look at the text
    // with them blanked out before deciding nothing needs redacting.
    let unescaped = text
        .replace("\\n", "  ")
        .replace("\\t", "  ")
        .replace("\\r", "  ");
    if !contains_secret(&unescaped) {
        return Ok(text);
    }
    let mut v = serde_json::to_value(value)?;
    redact_json(&mut v);
    serde_json::to_string(&v)
}

/// Every key a configuration can hold, whether or not its provider is the active one: for
/// redaction and for keeping them away from commands.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConfiguredKeys {
    /// `api_key`, `experimental_bearer_token` and secret-looking header and query values, with
    /// where each is (`model_providers.x.api_key`).
    pub values: Vec<(String, String)>,
    /// Variables keys are read from: every provider's `env_key` (the catalog's too), and the
    /// variables of `env_http_headers`.
    pub env_vars: Vec<String>,
}

/// Streamed text redacted chunk by chunk: a key split across chunks is held back until it is
/// whole. Text is released up to the last whitespace (keys contain none), and in the chunks it
/// came in: a client sees each delta the provider sent, unmerged, once the word it ends in is
/// whole. Only a chunk that held a key comes out merged with its neighbours, redacted.
#[derive(Debug, Default)]
pub(crate) struct StreamRedactor {
    pending: String,
    /// Where each chunk in `pending` ends.
    ends: Vec<usize>,
}

/// Text without whitespace held back at most; beyond it, all but a tail is released.
const MAX_HELD: usize = 8 * 1024;
const HELD_TAIL: usize = 512;

impl StreamRedactor {
    /// Adds a chunk; returns the redacted chunks that are safe to release now (maybe none).
    pub(crate) fn push(&mut self, chunk: &str) -> Vec<String> {
        if chunk.is_empty() {
            return Vec::new();
        }
        self.pending.push_str(chunk);
        self.ends.push(self.pending.len());
        let cut = safe_cut(&self.pending);
        if cut == 0 {
            return Vec::new();
        }
        if let Some(redacted) = changed(redact(&self.pending[..cut])) {
            self.drain(cut);
            return vec![redacted];
        }
        // Nothing up to `cut` is a key or can end as one: the whole chunks in it are safe.
        match self.ends.iter().rev().find(|&&e| e <= cut) {
            Some(&whole) => self.release(whole),
            // One long chunk without a break: what `safe_cut` let go of it.
            None if self.pending.len() > MAX_HELD => {
                let head = self.pending[..cut].to_string();
                self.drain(cut);
                vec![head]
            }
            None => Vec::new(),
        }
    }

    /// Everything still held, redacted: its chunks as they came unless one held a key.
    pub(crate) fn finish(&mut self) -> Vec<String> {
        let len = self.pending.len();
        match changed(redact(&self.pending)) {
            Some(redacted) => {
                self.drain(len);
                vec![redacted]
            }
            None => self.release(len),
        }
    }

    /// The chunks of `pending` up to `end`, a chunk boundary, taken out as they came.
    fn release(&mut self, end: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut start = 0;
        for &e in self.ends.iter().take_while(|&&e| e <= end) {
            out.push(self.pending[start..e].to_string());
            start = e;
        }
        self.drain(end);
        out
    }

    /// Drops the first `n` bytes of `pending` and the chunk ends within them.
    fn drain(&mut self, n: usize) {
        self.pending.drain(..n);
        self.ends.retain(|&e| e > n);
        for e in &mut self.ends {
            *e -= n;
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The redacted text, when redaction changed anything.
fn changed(text: Cow<'_, str>) -> Option<String> {
    match text {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    }
}

/// Where `pending` may be cut: after its last whitespace, but before a word that introduces
/// a secret (`Bearer`, `key=`, `Authorization:`), so the pair is redacted together.
fn safe_cut(pending: &str) -> usize {
    let Some((ws, ch)) = pending
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
    else {
        return forced_cut(pending);
    };
    let mut cut = ws + ch.len_utf8();
    let before = pending[..ws].trim_end();
    let word_start = before
        .rfind(char::is_whitespace)
        .map(|i| i + before[i..].chars().next().map_or(1, char::len_utf8))
        .unwrap_or(0);
    let word = &before[word_start..];
    if word.eq_ignore_ascii_case("bearer")
        || word.eq_ignore_ascii_case("basic")
        || word.ends_with(':')
        || word.ends_with('=')
    {
        cut = word_start;
    }
    if cut == 0 {
        return forced_cut(pending);
    }
    cut
}

/// A very long run without whitespace: release all but a tail, at a char boundary.
fn forced_cut(pending: &str) -> usize {
    if pending.len() <= MAX_HELD {
        return 0;
    }
    let mut cut = pending.len() - HELD_TAIL;
    while !pending.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum StreamKey {
    Message(String),
    Reasoning(String),
    Output(String),
}

impl StreamKey {
    fn event(&self, text: String) -> Event {
        match self {
            StreamKey::Message(id) => Event::AgentMessageDelta {
                message_id: id.clone(),
                delta: text,
            },
            StreamKey::Reasoning(id) => Event::ReasoningDelta {
                message_id: id.clone(),
                delta: text,
            },
            StreamKey::Output(id) => Event::ToolCallOutputDelta {
                call_id: id.clone(),
                chunk: text,
            },
        }
    }
}

/// Redacts events on their way to a front end. Streamed deltas go through a
/// [`StreamRedactor`] per stream; whatever a stream holds back is released (as one more delta)
/// before any other event, so the order front ends see is kept.
#[derive(Debug, Default)]
pub(crate) struct EventRedactor {
    streams: Mutex<Vec<(StreamKey, StreamRedactor)>>,
}

impl EventRedactor {
    /// The events to send in place of `e` (held-back text first).
    pub(crate) fn redact(&self, e: Event) -> Vec<Event> {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let (key, text) = match e {
            Event::AgentMessageDelta { message_id, delta } => {
                (StreamKey::Message(message_id), delta)
            }
            Event::ReasoningDelta { message_id, delta } => {
                (StreamKey::Reasoning(message_id), delta)
            }
            Event::ToolCallOutputDelta { call_id, chunk } => (StreamKey::Output(call_id), chunk),
            other => {
                let mut out = flush(&mut streams, None);
                out.push(redact_event(other));
                return out;
            }
        };
        let mut out = flush(&mut streams, Some(&key));
        let idx = match streams.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                streams.push((key.clone(), StreamRedactor::default()));
                streams.len() - 1
            }
        };
        let ready = streams[idx].1.push(&text);
        if streams[idx].1.is_empty() {
            streams.swap_remove(idx);
        }
        out.extend(ready.into_iter().map(|piece| key.event(piece)));
        out
    }
}

/// Releases every held stream except `keep`.
fn flush(streams: &mut Vec<(StreamKey, StreamRedactor)>, keep: Option<&StreamKey>) -> Vec<Event> {
    let mut out = Vec::new();
    streams.retain_mut(|(k, r)| {
        if Some(&*k) == keep {
            return true;
        }
        out.extend(r.finish().into_iter().map(|piece| k.event(piece)));
        false
    });
    out
}

fn redact_begin(b: ToolCallBegin) -> ToolCallBegin {
    let mut b = ToolCallBegin {
        title: redact(&b.title).into_owned(),
        command: b.command.map(|c| redact(&c).into_owned()),
        ..b
    };
    redact_json(&mut b.input);
    b
}

/// Redacts the text fields of a non-streamed event. File changes keep their text: they are
/// the user's files, shown for review.
fn redact_event(e: Event) -> Event {
    let r = |s: String| match redact(&s) {
        Cow::Owned(o) => o,
        Cow::Borrowed(_) => s,
    };
    match e {
        Event::AgentMessage {
            message_id,
            text,
            phase,
        } => Event::AgentMessage {
            message_id,
            text: r(text),
            phase,
        },
        Event::Reasoning { message_id, text } => Event::Reasoning {
            message_id,
            text: r(text),
        },
        Event::ToolCallBegin(b) => Event::ToolCallBegin(redact_begin(b)),
        Event::ToolCallEnd(end) => Event::ToolCallEnd(ToolCallEnd {
            output: r(end.output),
            ..end
        }),
        Event::Warning { message } => Event::Warning {
            message: r(message),
        },
        Event::Error { message } => Event::Error {
            message: r(message),
        },
        Event::TitleChanged { title } => Event::TitleChanged { title: r(title) },
        Event::ApprovalRequested(mut req) => {
            req.title = r(req.title);
            req.reason = r(req.reason);
            req.command = req.command.map(r);
            req.remember_key = r(req.remember_key);
            Event::ApprovalRequested(req)
        }
        Event::Transcript(items) => Event::Transcript(
            items
                .into_iter()
                .map(|item| match item {
                    TranscriptItem::ToolCall { begin, end } => TranscriptItem::ToolCall {
                        begin: Box::new(redact_begin(*begin)),
                        end: Box::new(ToolCallEnd {
                            output: r(end.output),
                            ..*end
                        }),
                    },
                    TranscriptItem::AgentMessage { text, phase } => TranscriptItem::AgentMessage {
                        text: r(text),
                        phase,
                    },
                    TranscriptItem::Reasoning { text } => {
                        TranscriptItem::Reasoning { text: r(text) }
                    }
                    other => other,
                })
                .collect(),
        ),
        Event::RequestPreview {
            mut body,
            prompt_tokens,
            tool_tokens,
        } => {
            redact_json(&mut body);
            Event::RequestPreview {
                body,
                prompt_tokens,
                tool_tokens,
            }
        }
        Event::ContextCompacted {
            compaction_id,
            summary,
            tokens_before,
            tokens_after,
        } => Event::ContextCompacted {
            compaction_id,
            summary: r(summary),
            tokens_before,
            tokens_after,
        },
        Event::TurnEnded(TurnEnded {
            turn_id,
            reason: TurnEndReason::Failed { message },
        }) => Event::TurnEnded(TurnEnded {
            turn_id,
            reason: TurnEndReason::Failed {
                message: r(message),
            },
        }),
        other => other,
    }
}

/// A tracing writer factory that redacts every formatted log line before writing it.
pub struct Redacting<M>(pub M);

/// The writer [`Redacting`] makes: each formatted line is redacted before it reaches `W`.
pub struct RedactingWriter<W>(W);

impl<'a, M: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a>
    for Redacting<M>
{
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }
}

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The formatter hands over one whole event per call.
        match std::str::from_utf8(buf) {
            Ok(s) => self.0.write_all(redact(s).as_bytes())?,
            Err(_) => self
                .0
                .write_all(redact(&String::from_utf8_lossy(buf)).as_bytes())?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
