//! Opening the sign-in page: `$BROWSER` when set (a list split like Python's `webbrowser`
//! does, each entry a command line where `%s` stands for the URL), else the system's opener.
//! The browser gets no key variables, as commands do.

use std::process::{Command, Stdio};

/// Starts a browser on `url`; the error says why none could start. The browser is not
/// waited for: it outlives the sign-in, as the user's own program.
pub(super) fn open(url: &str) -> Result<(), String> {
    let mut tried = Vec::new();
    if let Some(list) = std::env::var_os("BROWSER").filter(|v| !v.is_empty()) {
        let list = list.to_string_lossy().into_owned();
        let separator = if cfg!(windows) { ';' } else { ':' };
        for entry in list.split(separator).filter(|e| !e.trim().is_empty()) {
            let Some(words) = shlex::split(entry).filter(|w| !w.is_empty()) else {
                tried.push(format!("`{entry}` is not a command line"));
                continue;
            };
            let mut args: Vec<String> = words.iter().map(|w| w.replace("%s", url)).collect();
            if !entry.contains("%s") {
                args.push(url.to_string());
            }
            match start(&args[0], &args[1..]) {
                Ok(()) => return Ok(()),
                Err(e) => tried.push(format!("`{}`: {e}", args[0])),
            }
        }
    } else {
        let (program, args) = system_opener(url);
        match start(program, &args) {
            Ok(()) => return Ok(()),
            Err(e) => tried.push(format!("`{program}`: {e}")),
        }
    }
    Err(tried.join("; "))
}

#[cfg(target_os = "macos")]
fn system_opener(url: &str) -> (&'static str, Vec<String>) {
    ("open", vec![url.to_string()])
}

// `start` would go through cmd, which splits the URL at its `&`s.
#[cfg(windows)]
fn system_opener(url: &str) -> (&'static str, Vec<String>) {
    (
        "rundll32",
        vec!["url.dll,FileProtocolHandler".into(), url.to_string()],
    )
}

#[cfg(not(any(target_os = "macos", windows)))]
fn system_opener(url: &str) -> (&'static str, Vec<String>) {
    ("xdg-open", vec![url.to_string()])
}

fn start(program: &str, args: &[String]) -> Result<(), String> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for var in crate::secrets::secret_env_vars() {
        cmd.env_remove(var);
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    // Reaped on a thread of its own, so no zombie is left behind.
    std::thread::spawn(move || child.wait());
    Ok(())
}
