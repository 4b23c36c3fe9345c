//! From shell text to the simple commands it runs: a tree-sitter-bash parse, walked in order so
//! that variables and `cd` set earlier are known later, with every command inside `$(…)`,
//! `<(…)`, pipelines, lists, subshells, functions and control flow included.

use tree_sitter::Node;

mod expand;

use super::resolve;
use super::words::{Cwd, Part, Vars, Word, split_fields};

/// Longest script we judge; a longer one counts as one we cannot judge.
const MAX_SCRIPT_BYTES: usize = 1 << 20;
/// Deepest syntax nesting we follow.
const MAX_DEPTH: usize = 200;

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stdin {
    /// The session's (`/dev/null` for the agent's runner).
    Inherited,
    /// A file (`< f`).
    File,
    /// Text written in the script: a here-document or here-string.
    Text(Word),
    /// The output of the commands before it in a pipeline.
    Pipe(Producer),
}

/// What an earlier pipeline stage writes into a pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Producer {
    /// Something fetched from the network (`curl`, `wget`, …) is in it.
    Download,
    /// Text written in the script (`echo …`, `printf …`, `cat <<EOF`).
    Text(Word),
    /// The output of some other command.
    Other,
}

/// One simple command, with its words expanded as far as they can be before it runs.
#[derive(Debug, Clone)]
pub(super) struct Simple {
    pub argv: Vec<Word>,
    /// `NAME=value` words before the command name.
    pub assignments: Vec<String>,
    /// Targets of output redirections (`>`, `>>`, `&>`, `<>`), its own and its enclosing
    /// statements'.
    pub writes: Vec<Word>,
    pub stdin: Stdin,
    pub cwd: Cwd,
}

/// A parsed script.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub commands: Vec<Simple>,
    /// Why the script cannot be judged (a syntax error, a construct we do not follow).
    pub broken: Option<String>,
    /// `$(…)`, backquotes or `<(…)` occur.
    pub substitutions: bool,
    /// Functions are defined.
    pub functions: bool,
    /// More than one simple command, or control flow around one.
    pub compound: bool,
}

#[derive(Clone)]
struct Ctx {
    stdin: Stdin,
    writes: Vec<Word>,
    /// Words after a here-document operator (`cat <<EOF file`): the command's arguments.
    extra_args: Vec<Word>,
}

impl Ctx {
    fn top() -> Ctx {
        Ctx {
            stdin: Stdin::Inherited,
            writes: Vec::new(),
            extra_args: Vec::new(),
        }
    }

    fn with_stdin(&self, stdin: Stdin) -> Ctx {
        Ctx {
            stdin,
            writes: self.writes.clone(),
            extra_args: Vec::new(),
        }
    }
}

/// Parses `script` as bash run in `cwd`.
pub(super) fn parse(script: &str, cwd: Cwd) -> Parsed {
    let mut parsed = Parsed::default();
    if script.len() > MAX_SCRIPT_BYTES {
        parsed.broken = Some("the command is too long to check".into());
        return parsed;
    }
    let Some(tree) = parse_tree(script) else {
        parsed.broken = Some("the command could not be parsed".into());
        return parsed;
    };
    let root = tree.root_node();
    if root.has_error() {
        parsed.broken = Some(
            "the command could not be parsed (unbalanced quotes or brackets, or a syntax error)"
                .into(),
        );
        return parsed;
    }
    let mut w = Walker {
        src: script,
        vars: Vars::default(),
        cwd,
        parsed,
        depth: 0,
        statements: 0,
    };
    w.stmt(root, &Ctx::top());
    let mut parsed = w.parsed;
    parsed.compound |= parsed.commands.len() > 1 || w.statements > 1;
    parsed
}

fn parse_tree(script: &str) -> Option<tree_sitter::Tree> {
    thread_local! {
        static PARSER: std::cell::RefCell<Option<tree_sitter::Parser>> =
            const { std::cell::RefCell::new(None) };
    }
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *p = Some(parser);
        }
        let parser = p.as_mut()?;
        parser.reset();
        parser.parse(script, None)
    })
}

const STATEMENTS: &[&str] = &[
    "command",
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "pipeline",
    "redirected_statement",
    "function_definition",
    "list",
    "subshell",
    "compound_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "negated_command",
    "test_command",
    "comment",
    "do_group",
    "elif_clause",
    "else_clause",
    "case_item",
];

struct Walker<'s> {
    src: &'s str,
    vars: Vars,
    cwd: Cwd,
    parsed: Parsed,
    depth: usize,
    /// Top-level statements seen (for `compound`).
    statements: usize,
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// Children with the name of the field each is in.
fn fielded_children<'t>(n: Node<'t>) -> Vec<(Option<&'static str>, Node<'t>)> {
    let mut out = Vec::new();
    let mut c = n.walk();
    if c.goto_first_child() {
        loop {
            out.push((c.field_name(), c.node()));
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

impl<'s> Walker<'s> {
    fn text(&self, n: Node) -> &'s str {
        &self.src[n.byte_range()]
    }

    fn broken(&mut self, why: &str) {
        if self.parsed.broken.is_none() {
            self.parsed.broken = Some(why.to_string());
        }
    }

    fn stmt(&mut self, n: Node, ctx: &Ctx) {
        if self.parsed.broken.is_some() {
            return;
        }
        if n.is_error() || n.is_missing() {
            self.broken("the command could not be parsed");
            return;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.broken("the command is nested too deeply to check");
        } else {
            self.stmt_inner(n, ctx);
        }
        self.depth -= 1;
    }

    fn stmt_inner(&mut self, n: Node, ctx: &Ctx) {
        match n.kind() {
            "program" => {
                for c in named_children(n) {
                    if c.kind() != "comment" {
                        self.statements += 1;
                    }
                    self.stmt(c, ctx);
                }
            }
            "command" => self.command(n, ctx),
            "variable_assignment" => self.assignment(n),
            "variable_assignments" => {
                for c in named_children(n) {
                    self.assignment(c);
                }
            }
            "declaration_command" => {
                for c in named_children(n) {
                    match c.kind() {
                        "variable_assignment" => self.assignment(c),
                        "variable_name" => {
                            // `local x`, `export x`: keeps or empties the value; unknown to us.
                            let name = self.text(c).to_string();
                            self.vars.assign(&name, None);
                        }
                        _ => self.scan(c),
                    }
                }
            }
            "unset_command" => {
                for c in named_children(n) {
                    let name = self.text(c).to_string();
                    self.vars.assign(&name, None);
                }
            }
            "pipeline" => self.pipeline(named_children(n), ctx),
            "redirected_statement" => self.redirected(n, ctx),
            "function_definition" => {
                self.parsed.functions = true;
                self.parsed.compound = true;
                if let Some(body) = n.child_by_field_name("body") {
                    self.stmt(body, ctx);
                }
            }
            "comment" => {}
            "for_statement" => {
                self.parsed.compound = true;
                for (field, c) in fielded_children(n) {
                    match field {
                        Some("variable") => {
                            let name = self.text(c).to_string();
                            self.vars.assign(&name, None);
                        }
                        Some("body") => self.stmt(c, ctx),
                        _ if c.is_named() => self.scan(c),
                        _ => {}
                    }
                }
            }
            "test_command" => self.scan(n),
            _ => {
                if n.kind() != "list" {
                    self.parsed.compound = true;
                }
                for c in named_children(n) {
                    if STATEMENTS.contains(&c.kind()) {
                        self.stmt(c, ctx);
                    } else {
                        self.scan(c);
                    }
                }
            }
        }
    }

    /// Follows the commands inside `$(…)` and `<(…)` anywhere below `n`.
    fn scan(&mut self, n: Node) {
        if n.is_error() || n.is_missing() {
            self.broken("the command could not be parsed");
            return;
        }
        match n.kind() {
            "command_substitution" | "process_substitution" => {
                self.substitution(n);
            }
            _ => {
                for c in named_children(n) {
                    self.scan(c);
                }
            }
        }
    }

    /// Walks the commands of a substitution; whether one of them downloads.
    fn substitution(&mut self, n: Node) -> bool {
        self.parsed.substitutions = true;
        self.parsed.compound = true;
        let from = self.parsed.commands.len();
        // Assignments and `cd` inside a substitution happen in a subshell.
        let (vars, cwd) = (self.vars.clone(), self.cwd.clone());
        for c in named_children(n) {
            if STATEMENTS.contains(&c.kind()) {
                self.stmt(c, &Ctx::top());
            } else {
                self.scan(c);
            }
        }
        self.vars = vars;
        self.cwd = cwd;
        self.downloads_since(from)
    }

    fn downloads_since(&self, from: usize) -> bool {
        self.parsed.commands[from..]
            .iter()
            .any(|c| resolve::chain(&c.argv).downloads())
    }

    fn assignment(&mut self, n: Node) {
        let Some(name) = n.child_by_field_name("name") else {
            return;
        };
        let name = self.text(name).to_string();
        let appends = fielded_children(n)
            .iter()
            .any(|(_, c)| self.text(*c) == "+=");
        let value = match n.child_by_field_name("value") {
            Some(v) if v.kind() == "array" => {
                self.scan(v);
                None
            }
            Some(v) => {
                let mut parts = Vec::new();
                self.parts(v, true, true, &mut parts);
                Some(parts)
            }
            None => Some(vec![Part::Lit {
                text: String::new(),
                glob: false,
            }]),
        };
        self.vars.assign(&name, if appends { None } else { value });
    }

    fn pipeline(&mut self, stages: Vec<Node>, ctx: &Ctx) {
        self.parsed.compound = true;
        let start = self.parsed.commands.len();
        let mut stdin = ctx.stdin.clone();
        for stage in stages {
            let from = self.parsed.commands.len();
            self.stmt(stage, &ctx.with_stdin(stdin.clone()));
            stdin = Stdin::Pipe(self.producer(start, from));
        }
    }

    /// What the stages so far (commands from `start`; the last stage's from `last`) write.
    fn producer(&self, start: usize, last: usize) -> Producer {
        if self.downloads_since(start) {
            return Producer::Download;
        }
        match &self.parsed.commands[last..] {
            [only] => match literal_output(only) {
                Some(text) => Producer::Text(text),
                None => Producer::Other,
            },
            _ => Producer::Other,
        }
    }

    fn redirected(&mut self, n: Node, ctx: &Ctx) {
        let mut ctx = ctx.clone();
        let mut after = Vec::new();
        let mut body = None;
        for (field, c) in fielded_children(n) {
            match (field, c.kind()) {
                (Some("body"), _) => body = Some(c),
                (_, "file_redirect" | "heredoc_redirect" | "herestring_redirect") => {
                    self.redirect(c, &mut ctx, &mut after)
                }
                _ if c.is_named() => self.scan(c),
                _ => {}
            }
        }
        let from = self.parsed.commands.len();
        if let Some(body) = body {
            if !ctx.extra_args.is_empty() && body.kind() != "command" {
                self.broken("a here-document whose command cannot be checked");
            }
            self.stmt(body, &ctx);
        }
        self.continuations(after, from, &ctx);
    }

    /// Statements a here-document's first line continues with (`cat <<EOF | sh`,
    /// `cat <<EOF && rm …`), after the command it belongs to (its commands from `from`).
    fn continuations(&mut self, after: Vec<Continuation>, from: usize, ctx: &Ctx) {
        for cont in after {
            match cont {
                Continuation::Pipe(stages) => {
                    self.parsed.compound = true;
                    let mut stdin = Stdin::Pipe(self.producer(from, from));
                    for stage in stages {
                        let stage_from = self.parsed.commands.len();
                        self.stmt(stage, &Ctx::top().with_stdin(stdin.clone()));
                        stdin = Stdin::Pipe(self.producer(from, stage_from));
                    }
                }
                Continuation::Then(stmt) => {
                    self.parsed.compound = true;
                    self.stmt(stmt, &Ctx::top().with_stdin(ctx.stdin.clone()));
                }
            }
        }
    }

    fn redirect<'t>(&mut self, n: Node<'t>, ctx: &mut Ctx, after: &mut Vec<Continuation<'t>>) {
        match n.kind() {
            "file_redirect" => {
                let op = fielded_children(n)
                    .into_iter()
                    .find(|(f, c)| f.is_none() && !c.is_named())
                    .map(|(_, c)| self.text(c))
                    .unwrap_or("");
                let Some(dest) = n.child_by_field_name("destination") else {
                    return;
                };
                let mut parts = Vec::new();
                self.parts(dest, false, true, &mut parts);
                let word = Word {
                    parts: parts.into_iter().filter(|p| *p != Part::Split).collect(),
                };
                match op {
                    "<" | "<&" => {
                        ctx.stdin = if word.is_downloaded() {
                            Stdin::Pipe(Producer::Download)
                        } else if word.has_unknown() && dest.kind() == "process_substitution" {
                            Stdin::Pipe(Producer::Other)
                        } else {
                            Stdin::File
                        };
                    }
                    ">&" | "<&-" | ">&-" if is_fd(&word) => {}
                    _ => ctx.writes.push(word),
                }
            }
            "herestring_redirect" => {
                let mut parts = Vec::new();
                for c in named_children(n) {
                    if c.kind() != "file_descriptor" {
                        self.parts(c, false, true, &mut parts);
                    }
                }
                ctx.stdin = Stdin::Text(Word {
                    parts: parts.into_iter().filter(|p| *p != Part::Split).collect(),
                });
            }
            "heredoc_redirect" => self.heredoc(n, ctx, after),
            _ => self.scan(n),
        }
    }

    fn heredoc<'t>(&mut self, n: Node<'t>, ctx: &mut Ctx, after: &mut Vec<Continuation<'t>>) {
        let mut start = None;
        let mut end = None;
        // The here-document's text starts on the line after its operator.
        let mut first_line_end = usize::MAX;
        for (field, c) in fielded_children(n) {
            match (field, c.kind()) {
                (_, "heredoc_start") => {
                    start = Some(self.text(c));
                    first_line_end = self.src[c.end_byte()..]
                        .find('\n')
                        .map_or(usize::MAX, |i| c.end_byte() + i);
                }
                (Some("argument"), _) => {
                    if c.start_byte() >= first_line_end {
                        // tree-sitter took lines of the text for words (a line starting
                        // with `\`): it does not read the here-document as bash does.
                        self.broken("a here-document that cannot be checked");
                    }
                    let mut parts = Vec::new();
                    self.parts(c, false, true, &mut parts);
                    ctx.extra_args.extend(split_fields(parts));
                }
                (_, "heredoc_end") => end = Some(self.text(c)),
                (_, "heredoc_body") => {
                    let quoted = start.is_some_and(|s| s.contains(['\'', '"', '\\']));
                    let word = if quoted {
                        Word::lit(self.text(c))
                    } else {
                        self.heredoc_body(c)
                    };
                    ctx.stdin = Stdin::Text(word);
                }
                (_, "pipeline") => after.push(Continuation::Pipe(named_children(c))),
                (Some("right"), _) => after.push(Continuation::Then(c)),
                (_, "file_redirect" | "herestring_redirect") => self.redirect(c, ctx, after),
                _ if c.is_named() => self.scan(c),
                _ => {}
            }
        }
        // A delimiter we read differently from bash would hide what follows it.
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        };
        let unquoted = start.map(|s| s.trim_matches(['\'', '"']).trim_start_matches('\\'));
        let ok = match (unquoted, end) {
            (Some(s), Some(e)) => plain(s) && s == e.trim(),
            (Some(s), None) => plain(s),
            _ => false,
        };
        if !ok {
            self.broken("a here-document whose delimiter cannot be checked");
        }
    }

    fn command(&mut self, n: Node, ctx: &Ctx) {
        let mut ctx = ctx.clone();
        let mut argv = Vec::new();
        let mut assignments = Vec::new();
        let mut after = Vec::new();
        for (field, c) in fielded_children(n) {
            match (field, c.kind()) {
                (_, "variable_assignment") => {
                    if let Some(name) = c.child_by_field_name("name") {
                        assignments.push(self.text(name).to_string());
                    }
                    if let Some(v) = c.child_by_field_name("value") {
                        self.scan(v);
                    }
                }
                (_, "file_redirect" | "heredoc_redirect" | "herestring_redirect") => {
                    self.redirect(c, &mut ctx, &mut after)
                }
                (Some("name"), _) => {
                    let target = named_children(c).into_iter().next().unwrap_or(c);
                    self.word_into(target, &mut argv);
                }
                (Some("argument"), _) => self.word_into(c, &mut argv),
                (_, "subshell") => self.stmt(c, &ctx),
                _ if c.is_named() => self.scan(c),
                _ => {}
            }
        }
        argv.append(&mut ctx.extra_args);
        let from = self.parsed.commands.len();
        self.builtin_effects(&argv);
        self.parsed.commands.push(Simple {
            argv,
            assignments,
            writes: ctx.writes.clone(),
            stdin: ctx.stdin.clone(),
            cwd: self.cwd.clone(),
        });
        if let Some(last) = self.parsed.commands.last() {
            let argv = last.argv.clone();
            self.after_command(&argv);
        }
        self.continuations(after, from, &ctx);
    }

    fn word_into(&mut self, n: Node, argv: &mut Vec<Word>) {
        let mut parts = Vec::new();
        self.parts(n, false, true, &mut parts);
        argv.extend(split_fields(parts));
    }

    /// Variables a command sets (`read x`, `mapfile a`, `printf -v x`): unknown from then on.
    fn builtin_effects(&mut self, argv: &[Word]) {
        let Some(name) = argv.first().and_then(Word::literal) else {
            return;
        };
        if matches!(
            name.as_str(),
            "read" | "mapfile" | "readarray" | "printf" | "getopts" | "let" | "typeset"
        ) {
            for a in &argv[1..] {
                if let Some(l) = a.literal() {
                    let ident = l.split(['=', '[']).next().unwrap_or("");
                    if !ident.is_empty()
                        && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.vars.assign(ident, None);
                    }
                }
            }
        }
    }

    /// `cd`, `pushd`, `popd`: where later commands run.
    fn after_command(&mut self, argv: &[Word]) {
        let name = argv.first().and_then(Word::literal);
        match name.as_deref() {
            Some("cd") => {
                let target = argv[1..].iter().find(|a| !a.starts_with("-") || a.is("-"));
                self.cwd = match (target, &self.cwd) {
                    (Some(t), Cwd::Inside(base)) => match t.literal() {
                        Some(l) if !l.starts_with('/') && l != "-" && !t.globs() => {
                            let mut path = base.clone();
                            let mut ok = true;
                            for comp in l.split('/') {
                                match comp {
                                    "" | "." => {}
                                    ".." => ok &= path.pop().is_some(),
                                    c => path.push(c.to_string()),
                                }
                            }
                            if ok { Cwd::Inside(path) } else { Cwd::Unknown }
                        }
                        _ => Cwd::Unknown,
                    },
                    _ => Cwd::Unknown,
                };
            }
            Some("pushd" | "popd") => self.cwd = Cwd::Unknown,
            _ => {}
        }
    }
}

enum Continuation<'t> {
    Pipe(Vec<Node<'t>>),
    Then(Node<'t>),
}

/// `>&2`, `2>&1`, `<&-`: a descriptor, not a file.
fn is_fd(w: &Word) -> bool {
    w.literal()
        .is_some_and(|l| l == "-" || (!l.is_empty() && l.bytes().all(|b| b.is_ascii_digit())))
}

/// Text a command prints as written in the script: `echo`/`printf` with literal arguments,
/// `cat` of a here-document.
fn literal_output(c: &Simple) -> Option<Word> {
    let name = c.argv.first()?.literal()?;
    let args = &c.argv[1..];
    match name.as_str() {
        "echo" => Some(join_words(args, " ")),
        // A format with conversions prints its arguments (`printf '%s\n' …`: one a line);
        // one without prints itself.
        "printf" => match args.first()?.literal() {
            Some(f) if f.contains('%') => Some(join_words(&args[1..], "\n")),
            Some(f) => Some(Word::lit(&f.replace("\\n", "\n"))),
            None => Some(join_words(args, " ")),
        },
        "cat" if args.is_empty() => match &c.stdin {
            Stdin::Text(w) => Some(w.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn join_words(words: &[Word], sep: &str) -> Word {
    let mut parts = Vec::new();
    for (i, a) in words.iter().enumerate() {
        if i > 0 {
            parts.push(Part::Lit {
                text: sep.into(),
                glob: false,
            });
        }
        parts.extend(a.parts.iter().cloned());
    }
    Word { parts }
}
