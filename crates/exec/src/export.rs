//! `interpreter export`: a stored session as Markdown or HTML, on stdout or in a file. Needs
//! no key and opens no session: it reads the log.

use interpreter_core::config::{Config, Overrides};
use interpreter_core::sessions::Sessions;
use interpreter_face::export::{self, Format};
use std::io::Write as _;
use std::path::PathBuf;

use crate::output::{EXIT_CONFIG, fail};

/// What `interpreter export` was asked for.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// A session's id, a unique prefix of one, or a path to its log file.
    pub session: Option<String>,
    /// The newest session started in the current folder instead.
    pub last: bool,
    /// HTML instead of Markdown (a file named `*.html` is HTML anyway).
    pub html: bool,
    /// The file to write; stdout without it.
    pub output: Option<PathBuf>,
}

/// `interpreter export`: 0 when the export was written, 1 when the session is unknown or
/// the file cannot be written, 2 for a bad configuration.
pub fn export(overrides: Overrides, opts: ExportOptions) -> i32 {
    let config = match Config::load(&overrides) {
        Ok(c) => c,
        Err(e) => return fail(EXIT_CONFIG, &format!("{e:#}")),
    };
    let sessions = Sessions::new(&config.home);
    let log = match (&opts.session, opts.last) {
        (Some(q), _) => sessions.find(q),
        (None, true) => {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
            match sessions.list(Some(&cwd)).first() {
                Some((m, _)) => sessions.find(&m.id),
                None => Err(anyhow::anyhow!(
                    "no session was started in {}",
                    cwd.display()
                )),
            }
        }
        (None, false) => Err(anyhow::anyhow!(
            "name a session (an id, its start, or its file), or use --last"
        )),
    };
    let exported = match log.and_then(|log| sessions.export(&log)) {
        Ok(e) => e,
        Err(e) => return fail(1, &format!("{e:#}")),
    };
    let Some(file) = opts.output else {
        let format = if opts.html {
            Format::Html
        } else {
            Format::Markdown
        };
        let page = export::render(&exported, format);
        let mut out = std::io::stdout().lock();
        return match out.write_all(page.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => 0,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            Err(e) => fail(1, &format!("writing to stdout: {e}")),
        };
    };
    let format = if opts.html {
        Format::Html
    } else {
        Format::of_path(&file)
    };
    match export::write(&exported, format, &file) {
        Ok(written) => {
            eprintln!("Exported session {} to {}", exported.id, file.display());
            if written.len() > 1 {
                eprintln!("  and {} image file(s) beside it", written.len() - 1);
            }
            0
        }
        Err(e) => fail(1, &e),
    }
}
