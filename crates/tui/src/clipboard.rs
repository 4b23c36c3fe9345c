//! The image on the system clipboard, for Ctrl+V (Alt+V on Windows, where Ctrl+V pastes text):
//! read with the platform's own tool into a private file, since terminals paste text only.
//! macOS: `osascript`; Linux: `wl-paste` (Wayland) or `xclip` (X11); Windows: PowerShell.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a clipboard tool may take.
const TIMEOUT: Duration = Duration::from_secs(3);
/// The largest image taken from the clipboard.
const MAX_BYTES: u64 = 20 * 1024 * 1024;
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Writes the clipboard's image to a new PNG file under `dir` and returns its path; an error
/// says why there is none.
pub(crate) fn save_image(dir: &Path) -> Result<PathBuf, String> {
    create_private_dir(dir)?;
    let path = dir.join(format!(
        "clipboard-{}-{}.png",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let mut tried = Vec::new();
    for tool in tools(&path) {
        tried.push(tool.name);
        match run(&tool, &path) {
            Ok(()) => match check_png(&path) {
                Ok(()) => return Ok(path),
                Err(e) => {
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
            },
            Err(Missing) => continue,
            Err(Failed(e)) => {
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
        }
    }
    let _ = std::fs::remove_file(&path);
    Err(match tried.is_empty() {
        true => "no clipboard is reachable from this terminal".into(),
        false => format!(
            "no clipboard tool found (tried {}): install one to paste images",
            tried.join(", ")
        ),
    })
}

/// A command that puts the clipboard's PNG on its stdout (`to_stdout`) or in the file.
struct Tool {
    name: &'static str,
    program: &'static str,
    args: Vec<String>,
    to_stdout: bool,
}

fn tools(path: &Path) -> Vec<Tool> {
    let mut out = Vec::new();
    let file = path.display().to_string();
    if cfg!(target_os = "macos") {
        let script = format!(
            "set f to open for access POSIX file \"{}\" with write permission\n\
             try\nwrite (the clipboard as «class PNGf») to f\nend try\nclose access f",
            file.replace('\\', "\\\\").replace('"', "\\\"")
        );
        out.push(Tool {
            name: "osascript",
            program: "osascript",
            args: vec!["-e".into(), script],
            to_stdout: false,
        });
    } else if cfg!(windows) {
        let script = format!(
            "Add-Type -AssemblyName System.Windows.Forms,System.Drawing; \
             $i = [System.Windows.Forms.Clipboard]::GetImage(); \
             if ($i) {{ $i.Save('{}', [System.Drawing.Imaging.ImageFormat]::Png) }}",
            file.replace('\'', "''")
        );
        out.push(Tool {
            name: "powershell",
            program: "powershell",
            args: vec![
                "-NoProfile".into(),
                "-STA".into(),
                "-Command".into(),
                script,
            ],
            to_stdout: false,
        });
    } else {
        if std::env::var_os("WAYLAND_DISPLAY").is_some() {
            out.push(Tool {
                name: "wl-paste",
                program: "wl-paste",
                args: vec!["--no-newline".into(), "--type".into(), "image/png".into()],
                to_stdout: true,
            });
        }
        if std::env::var_os("DISPLAY").is_some() {
            out.push(Tool {
                name: "xclip",
                program: "xclip",
                args: ["-selection", "clipboard", "-target", "image/png", "-out"]
                    .map(String::from)
                    .to_vec(),
                to_stdout: true,
            });
        }
    }
    out
}

enum RunError {
    Missing,
    Failed(String),
}
use RunError::{Failed, Missing};

fn run(tool: &Tool, path: &Path) -> Result<(), RunError> {
    let mut cmd = Command::new(tool.program);
    cmd.args(&tool.args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .stdout(if tool.to_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Missing),
        Err(e) => return Err(Failed(format!("{} failed to start: {e}", tool.name))),
    };
    // Read the image on a thread, bounded, so a tool that hangs is killed at the deadline.
    let reader = child.stdout.take().map(|out| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let read = out.take(MAX_BYTES + 1).read_to_end(&mut buf);
            read.map(|_| buf)
        })
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Failed(format!(
                    "{} did not answer within {} s",
                    tool.name,
                    TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(Failed(format!("{}: {e}", tool.name))),
        }
    };
    let bytes = match reader.map(|r| r.join()) {
        Some(Ok(Ok(b))) => Some(b),
        Some(_) => return Err(Failed(format!("reading {}'s output failed", tool.name))),
        None => None,
    };
    if !status.success() {
        return Err(Failed("there is no image in the clipboard".into()));
    }
    if let Some(bytes) = bytes {
        write_private(path, &bytes).map_err(|e| Failed(format!("saving the image: {e}")))?;
    }
    Ok(())
}

/// The file holds a PNG of a sane size.
fn check_png(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|_| "there is no image in the clipboard")?;
    if meta.len() == 0 {
        return Err("there is no image in the clipboard".into());
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "the clipboard's image is larger than {} MiB",
            MAX_BYTES >> 20
        ));
    }
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    match read {
        Ok(()) if head == PNG_MAGIC => Ok(()),
        _ => Err("the clipboard holds no PNG image".into()),
    }
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    std::io::Write::write_all(&mut opts.open(path)?, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_png_of_sane_size_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.png");
        std::fs::write(&p, b"").unwrap();
        assert!(check_png(&p).unwrap_err().contains("no image"));
        std::fs::write(&p, b"GIF89a....").unwrap();
        assert!(check_png(&p).unwrap_err().contains("no PNG"));
        std::fs::write(&p, mock_llm::e2e::TINY_PNG).unwrap();
        check_png(&p).unwrap();
    }
}
