//! Every protocol extension of ours, named once: the `_meta` keys and `_interpreter/*`
//! methods an ACP client may adopt (docs/acp-extensions.md), and the app-server's own methods.
//! The editor clients mirror the ACP names in `editors/vscode/src/shared/extensions.ts` and
//! `editors/neovim/lua/interpreter/extensions.lua`; a test compares the three lists and fails
//! on a name written anywhere else, as rust-analyzer keeps `lsp_ext.rs` and `lsp_ext.ts`.

/// ACP request, agent → client: the editor's diagnostics for files the agent changed.
pub const ACP_DIAGNOSTICS_METHOD: &str = "_interpreter/diagnostics";
/// ACP `clientCapabilities._meta` key: the client answers [`ACP_DIAGNOSTICS_METHOD`].
pub const ACP_DIAGNOSTICS_CAPABILITY: &str = "interpreter/diagnostics";
/// ACP `_meta` key of a prompt's answer and of a replayed user message: the turn it ran.
pub const ACP_TURN_ID: &str = "interpreter/turnId";
/// ACP `_meta` key of an undo's answer: the turns and files it took back.
pub const ACP_UNDONE: &str = "interpreter/undone";
/// app-server method: undo a thread's last turns, files included.
pub const APP_SERVER_THREAD_UNDO: &str = "interpreter/thread/undo";
/// app-server method: the harnesses a thread can use.
pub const APP_SERVER_HARNESS_LIST: &str = "interpreter/harness/list";
/// app-server method: switch a thread's harness.
pub const APP_SERVER_HARNESS_SET: &str = "interpreter/harness/set";

/// The ACP names, which the editor clients mirror: (constant, value).
pub const ACP: &[(&str, &str)] = &[
    ("ACP_DIAGNOSTICS_METHOD", ACP_DIAGNOSTICS_METHOD),
    ("ACP_DIAGNOSTICS_CAPABILITY", ACP_DIAGNOSTICS_CAPABILITY),
    ("ACP_TURN_ID", ACP_TURN_ID),
    ("ACP_UNDONE", ACP_UNDONE),
];

/// Every name: (constant, value).
pub const ALL: &[(&str, &str)] = &[
    ("ACP_DIAGNOSTICS_METHOD", ACP_DIAGNOSTICS_METHOD),
    ("ACP_DIAGNOSTICS_CAPABILITY", ACP_DIAGNOSTICS_CAPABILITY),
    ("ACP_TURN_ID", ACP_TURN_ID),
    ("ACP_UNDONE", ACP_UNDONE),
    ("APP_SERVER_THREAD_UNDO", APP_SERVER_THREAD_UNDO),
    ("APP_SERVER_HARNESS_LIST", APP_SERVER_HARNESS_LIST),
    ("APP_SERVER_HARNESS_SET", APP_SERVER_HARNESS_SET),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// `NAME = "value"` pairs of a mirror module (TypeScript `export const`, Lua `M.`).
    fn mirrored(rel: &str, prefix: &str) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(root().join(rel)).unwrap();
        text.lines()
            .filter_map(|l| {
                let rest = l.trim().strip_prefix(prefix)?;
                let (name, value) = rest.split_once('=')?;
                let value = value.trim().trim_end_matches(';').trim_matches('"');
                Some((name.trim().to_string(), value.to_string()))
            })
            .collect()
    }

    #[test]
    fn the_editor_clients_mirror_the_acp_names() {
        let ours: Vec<(String, String)> = ACP
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            mirrored("editors/vscode/src/shared/extensions.ts", "export const "),
            ours
        );
        assert_eq!(
            mirrored("editors/neovim/lua/interpreter/extensions.lua", "M."),
            ours
        );
        for (name, value) in ACP {
            assert!(ALL.contains(&(name, value)), "{name}");
        }
    }

    /// An extension's name in code lives only in the three modules (comments and tests may
    /// quote it).
    #[test]
    fn no_extension_name_is_written_elsewhere() {
        let homes = [
            "crates/protocol/src/ext.rs",
            "editors/vscode/src/shared/extensions.ts",
            "editors/neovim/lua/interpreter/extensions.lua",
        ];
        let mut found = Vec::new();
        for dir in ["crates", "editors/vscode/src", "editors/neovim/lua"] {
            let mut files = Vec::new();
            collect(&root().join(dir), &mut files);
            for file in files {
                let rel = file
                    .strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let rel = rel.trim_start_matches("./").to_string();
                if homes.contains(&rel.as_str()) || rel.contains("test") {
                    continue;
                }
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                for (i, line) in text.lines().enumerate() {
                    let code = line.trim_start();
                    if ["//", "--", "*", "/*", "#"]
                        .iter()
                        .any(|c| code.starts_with(c))
                    {
                        continue;
                    }
                    for (_, value) in ALL {
                        if line.contains(&format!("\"{value}\"")) {
                            found.push(format!("{rel}:{}: {value}", i + 1));
                        }
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "extension names outside ext.rs and its mirrors: {found:#?}"
        );
    }

    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                if !matches!(name.as_str(), "node_modules" | "target" | "out" | "dist") {
                    collect(&p, out);
                }
            } else if [".rs", ".ts", ".lua", ".mjs", ".js"]
                .iter()
                .any(|x| name.ends_with(x))
            {
                out.push(p);
            }
        }
    }
}
