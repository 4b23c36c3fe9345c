//! Golden Seatbelt profiles per mode (reviewed by hand against Codex's policy files), and the
//! `sandbox-exec` command line. Pure: they run on every platform.

use super::*;

fn workspace_write(network: bool) -> Confinement {
    Confinement {
        writable: vec![
            PathBuf::from("/Users/dev/project"),
            PathBuf::from("/Users/dev/shared cache"),
            PathBuf::from("/private/tmp"),
            PathBuf::from("/private/var/folders/xy/abc123/T"),
        ],
        network,
        protected: Vec::new(),
    }
}

fn golden(c: &Confinement) -> String {
    let p = profile(c);
    let mut out = p.text;
    out.push_str("\n;; params\n");
    for (name, dir) in p.params {
        out.push_str(&format!(";; -D{name}={}\n", dir.display()));
    }
    out
}

#[test]
fn read_only_profile() {
    let c = Confinement::read_only();
    let text = golden(&c);
    assert!(!text.contains("(allow file-write*"), "{text}");
    assert!(!text.contains("(allow network-outbound)"), "{text}");
    insta::assert_snapshot!("seatbelt_read_only", text);
}

#[test]
fn workspace_write_profile_without_network() {
    let c = workspace_write(false);
    let text = golden(&c);
    assert!(!text.contains("(allow network-outbound)"), "{text}");
    insta::assert_snapshot!("seatbelt_workspace_write", text);
}

#[test]
fn workspace_write_profile_with_network() {
    let c = workspace_write(true);
    let text = golden(&c);
    assert!(text.contains("(allow network-outbound)"), "{text}");
    insta::assert_snapshot!("seatbelt_workspace_write_network", text);
}

#[test]
fn read_only_with_network_allows_sockets_but_no_writes() {
    let c = Confinement {
        writable: Vec::new(),
        network: true,
        protected: Vec::new(),
    };
    let p = profile(&c);
    assert!(p.params.is_empty());
    assert!(p.text.contains("(allow network-outbound)"));
    assert!(!p.text.contains("file-write*\n  (subpath"));
}

#[test]
fn every_writable_folder_is_a_parameter_never_text() {
    let c = Confinement {
        writable: vec![PathBuf::from("/tmp/a\") (allow file-write* (subpath \"/")],
        network: false,
        protected: Vec::new(),
    };
    let p = profile(&c);
    // The hostile folder name reaches sandbox-exec as a -D value only.
    assert!(!p.text.contains("/tmp/a"), "{}", p.text);
    assert_eq!(p.params.len(), 1);
    assert_eq!(
        p.text.matches("(subpath (param \"WRITABLE_ROOT_").count(),
        1
    );
}

#[test]
fn sandbox_exec_arguments_wrap_the_shell() {
    let c = workspace_write(false);
    let argv: Vec<OsString> = ["/bin/bash", "-c", "echo hi"]
        .iter()
        .map(OsString::from)
        .collect();
    let args = command_args(&c, &argv);
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(args[0], "-p");
    assert_eq!(args[1], profile(&c).text);
    assert_eq!(
        &args[2..],
        [
            "-DWRITABLE_ROOT_0=/Users/dev/project",
            "-DWRITABLE_ROOT_1=/Users/dev/shared cache",
            "-DWRITABLE_ROOT_2=/private/tmp",
            "-DWRITABLE_ROOT_3=/private/var/folders/xy/abc123/T",
            "--",
            "/bin/bash",
            "-c",
            "echo hi",
        ]
    );
}

#[test]
fn the_profile_is_balanced() {
    for c in [
        Confinement::read_only(),
        workspace_write(false),
        workspace_write(true),
    ] {
        let text = profile(&c).text;
        let mut depth = 0i32;
        let mut in_string = false;
        let mut in_comment = false;
        for ch in text.chars() {
            match ch {
                '\n' => in_comment = false,
                _ if in_comment => {}
                '"' => in_string = !in_string,
                ';' if !in_string => in_comment = true,
                '(' if !in_string => depth += 1,
                ')' if !in_string => {
                    depth -= 1;
                    assert!(depth >= 0, "unbalanced profile:\n{text}");
                }
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced profile:\n{text}");
        assert!(!in_string);
        assert!(text.starts_with("(version 1)"));
    }
}

/// The generated profile really holds on macOS: inside the workspace and the temp folder a
/// command writes, outside it cannot.
#[cfg(target_os = "macos")]
#[tokio::test]
async fn sandbox_exec_holds_commands_to_the_workspace() {
    use crate::config::DEFAULT_MAX_PROCESSES;
    use crate::tools::exec::run_command_confined;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in(dirs::home_dir().unwrap()).unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let c = Confinement::workspace_write(std::slice::from_ref(&root), &[], false);
    let victim = outside.path().join("victim.txt");
    let command = format!(
        "echo in > inside.txt && echo tmp > /tmp/interpreter-seatbelt-$$ && rm /tmp/interpreter-seatbelt-$$ && echo ok; echo out > '{}'",
        victim.display()
    );
    let r = run_command_confined(
        &command,
        &root,
        Duration::from_secs(30),
        &CancellationToken::new(),
        Some(&c),
        DEFAULT_MAX_PROCESSES,
        |_| {},
    )
    .await
    .unwrap();
    assert!(r.output.contains("ok"), "{}", r.output);
    assert!(root.join("inside.txt").exists());
    assert!(
        !victim.exists(),
        "a write outside the workspace got through: {}",
        r.output
    );
}

#[test]
fn protected_folders_are_denied_after_the_writable_ones() {
    let mut c = workspace_write(false);
    c.protected = vec![
        PathBuf::from("/Users/dev/project/.git"),
        PathBuf::from("/Users/dev/project/.openinterpreter"),
    ];
    let p = profile(&c);
    let allow = p.text.find("(allow file-write*").unwrap();
    let deny = p.text.find("(deny file-write*").unwrap();
    // Seatbelt's last matching rule wins: the deny comes after the allow.
    assert!(deny > allow, "{}", p.text);
    assert!(
        p.text.contains("(subpath (param \"PROTECTED_1\"))"),
        "{}",
        p.text
    );
    assert!(p.params.contains(&(
        "PROTECTED_0".to_string(),
        PathBuf::from("/Users/dev/project/.git")
    )));
}
