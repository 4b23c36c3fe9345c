//! Finding a Chromium-family executable: the one `[web] browser` (or `INTERPRETER_BROWSER`)
//! names, else the usual names on PATH, else the usual install folders. Only file lookups: a
//! session asks this at its start to decide whether the Browser tools are offered.

use std::path::{Path, PathBuf};

/// Names looked for on PATH, in this order.
const NAMES: [&str; 6] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "msedge",
];

/// What to do when no browser is found: said whenever a Browser tool cannot start one.
pub(crate) const INSTALL_HINT: &str = "Install Chromium (Debian and Ubuntu: `apt-get install chromium`; macOS: `brew install --cask chromium`), Google Chrome or Microsoft Edge, or name the executable with `[web] browser = \"/path/to/chromium\"` in config.toml or the INTERPRETER_BROWSER environment variable.";

/// The browser to run: `configured` when given (a path, or a name looked up on PATH), else
/// the first of [`NAMES`] on PATH, else a standard install. The error says what to install.
pub(crate) fn find_executable(configured: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(c) = configured {
        let found = match c.components().count() {
            1 if !c.is_absolute() => on_path(&c.to_string_lossy()),
            _ => c.is_file().then(|| c.to_path_buf()),
        };
        return found.ok_or_else(|| {
            format!(
                "[web] browser (or INTERPRETER_BROWSER) names `{}`, which is not an executable file. {INSTALL_HINT}",
                c.display()
            )
        });
    }
    NAMES
        .iter()
        .find_map(|n| on_path(n))
        .or_else(|| installed().into_iter().find(|p| p.is_file()))
        .ok_or_else(|| {
            format!(
                "The Browser tools need Chromium, Google Chrome or Microsoft Edge, and none was found (on PATH as {}, or in the usual install folders). {INSTALL_HINT}",
                NAMES.join(", ")
            )
        })
}

/// `name` (with `.exe` on Windows) in a folder of PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let file = match cfg!(windows) && !name.ends_with(".exe") {
        true => format!("{name}.exe"),
        false => name.to_string(),
    };
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
}

/// Where installers put a browser outside PATH: macOS's applications, Windows' program
/// folders.
fn installed() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if cfg!(target_os = "macos") {
        for app in [
            "Google Chrome.app/Contents/MacOS/Google Chrome",
            "Chromium.app/Contents/MacOS/Chromium",
            "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
        ] {
            out.push(Path::new("/Applications").join(app));
            if let Some(home) = dirs::home_dir() {
                out.push(home.join("Applications").join(app));
            }
        }
    }
    if cfg!(windows) {
        for var in ["ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"] {
            let Some(base) = std::env::var_os(var).map(PathBuf::from) else {
                continue;
            };
            for exe in [
                r"Google\Chrome\Application\chrome.exe",
                r"Chromium\Application\chrome.exe",
                r"Microsoft\Edge\Application\msedge.exe",
            ] {
                out.push(base.join(exe));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_path_must_be_a_file_and_the_errors_say_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("my-chrome");
        std::fs::write(&exe, "").unwrap();
        assert_eq!(find_executable(Some(&exe)), Ok(exe.clone()));
        let missing = dir.path().join("nothing-here");
        let err = find_executable(Some(&missing)).unwrap_err();
        assert!(
            err.contains("nothing-here") && err.contains("apt-get install chromium"),
            "{err}"
        );
        let err = find_executable(Some(Path::new("no-such-browser-on-path"))).unwrap_err();
        assert!(err.contains("no-such-browser-on-path"), "{err}");
    }
}
