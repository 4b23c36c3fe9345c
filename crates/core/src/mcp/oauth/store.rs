//! Where an MCP server's OAuth tokens live: the OS keyring (the Secret Service over D-Bus,
//! the Keychain, the Credential Manager), or `$OPENINTERPRETER_HOME/.credentials.json` with
//! mode 0600, as Codex's `mcp_oauth_credentials_store` chooses. `auto` tries the keyring and
//! falls back to the file when none answers (a server without a desktop session).
//!
//! One entry per server name and URL: a changed URL is a new sign-in. Nothing here logs a
//! token; rmcp's `StoredCredentials` prints them redacted.

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::Duration;

use crate::config::mcp::{CredentialsStore, OAuthSettings};

/// The keyring service every entry is filed under.
const SERVICE: &str = "interpreter MCP credentials";
/// The file beside config.toml.
const FILE_NAME: &str = ".credentials.json";
/// A keyring that does not answer in this long counts as none (a D-Bus that hangs).
const KEYRING_TIMEOUT: Duration = Duration::from_secs(5);

/// The tokens of one server.
#[derive(Debug, Clone)]
pub(crate) struct TokenStore {
    mode: CredentialsStore,
    file: PathBuf,
    key: String,
}

impl TokenStore {
    pub(crate) fn new(settings: &OAuthSettings, server: &str, url: &str) -> TokenStore {
        let digest = Sha256::digest(url.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        TokenStore {
            mode: settings.store,
            file: settings.home.join(FILE_NAME),
            key: format!("{server}|{hex}"),
        }
    }

    /// The saved credentials, from the keyring first then the file (`auto` may have used
    /// either on an earlier run).
    pub(crate) fn load_now(&self) -> Result<Option<StoredCredentials>, String> {
        let found = self.load_unredacted()?;
        if let Some(c) = &found {
            hide(c);
        }
        Ok(found)
    }

    fn load_unredacted(&self) -> Result<Option<StoredCredentials>, String> {
        if self.mode != CredentialsStore::File {
            match keyring_op(self.key.clone(), KeyringOp::Get) {
                Ok(Some(text)) => return parse(&text).map(Some),
                Ok(None) => {}
                Err(e) if self.mode == CredentialsStore::Keyring => return Err(e),
                Err(e) => tracing::debug!("keyring unavailable, trying the file: {e}"),
            }
        }
        if self.mode == CredentialsStore::Keyring {
            return Ok(None);
        }
        match read_file(&self.file)?.remove(&self.key) {
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| format!("{} holds a broken entry: {e}", self.file.display())),
            None => Ok(None),
        }
    }

    pub(crate) fn save_now(&self, credentials: &StoredCredentials) -> Result<(), String> {
        hide(credentials);
        let text = serde_json::to_string(credentials).map_err(|e| e.to_string())?;
        if self.mode != CredentialsStore::File {
            match keyring_op(self.key.clone(), KeyringOp::Set(text.clone())) {
                Ok(_) => {
                    // A stale copy in the file would win no load, but leaves a token on disk.
                    if self.mode == CredentialsStore::Auto {
                        let _ = self.remove_from_file();
                    }
                    return Ok(());
                }
                Err(e) if self.mode == CredentialsStore::Keyring => return Err(e),
                Err(e) => tracing::debug!("keyring unavailable, saving to the file: {e}"),
            }
        }
        let mut all = read_file(&self.file)?;
        all.insert(
            self.key.clone(),
            serde_json::from_str(&text).map_err(|e| e.to_string())?,
        );
        write_file(&self.file, &all)
    }

    /// Removes the credentials from every place they may be; true when some were there.
    pub(crate) fn clear_now(&self) -> Result<bool, String> {
        let mut found = false;
        if self.mode != CredentialsStore::File {
            match keyring_op(self.key.clone(), KeyringOp::Delete) {
                Ok(Some(_)) => found = true,
                Ok(None) => {}
                Err(e) if self.mode == CredentialsStore::Keyring => return Err(e),
                Err(_) => {}
            }
        }
        if self.mode != CredentialsStore::Keyring {
            found |= self.remove_from_file()?;
        }
        Ok(found)
    }

    fn remove_from_file(&self) -> Result<bool, String> {
        let mut all = read_file(&self.file)?;
        if all.remove(&self.key).is_none() {
            return Ok(false);
        }
        write_file(&self.file, &all)?;
        Ok(true)
    }
}

/// The tokens join the values every log line, session file, export and span is redacted of, so
/// that nothing (rmcp's own logs at debug level included) can show one.
fn hide(c: &StoredCredentials) {
    use oauth2::TokenResponse;
    if let Some(t) = &c.token_response {
        crate::secrets::register(t.access_token().secret());
        if let Some(r) = t.refresh_token() {
            crate::secrets::register(r.secret());
        }
    }
}

fn parse(text: &str) -> Result<StoredCredentials, String> {
    serde_json::from_str(text).map_err(|e| format!("the keyring holds a broken entry: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let store = self.clone();
        blocking(move || store.load_now()).await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || store.save_now(&credentials)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let store = self.clone();
        blocking(move || store.clear_now().map(|_| ())).await
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, AuthError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(AuthError::CredentialStoreError),
        Err(e) => Err(AuthError::CredentialStoreError(e.to_string())),
    }
}

enum KeyringOp {
    Get,
    Set(String),
    Delete,
}

/// One keyring operation on a thread of its own, given up after [`KEYRING_TIMEOUT`]. Get and
/// Delete answer None when there was no entry.
fn keyring_op(key: String, op: KeyringOp) -> Result<Option<String>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = keyring::Entry::new(SERVICE, &key).and_then(|entry| match op {
            KeyringOp::Get => entry.get_password().map(Some),
            KeyringOp::Set(text) => entry.set_password(&text).map(|()| None),
            KeyringOp::Delete => entry.delete_credential().map(|()| Some(String::new())),
        });
        let _ = tx.send(match result {
            Ok(v) => Ok(v),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(format!("the OS keyring: {e}")),
        });
    });
    rx.recv_timeout(KEYRING_TIMEOUT)
        .unwrap_or_else(|_| Err("the OS keyring did not answer".into()))
}

fn read_file(path: &std::path::Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) | Err(_) => Err(format!(
                "{} is not a JSON object; move it away to sign in again",
                path.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("reading {}: {e}", path.display())),
    }
}

/// Writes the whole file through a private temporary beside it, so a crash leaves the old
/// one, and no other user can read it at any moment.
fn write_file(path: &std::path::Path, all: &Map<String, Value>) -> Result<(), String> {
    use std::io::Write;
    let dir = path.parent().ok_or("the credentials file has no folder")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let text = serde_json::to_vec_pretty(all).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!("{FILE_NAME}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut f| f.write_all(&text).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("writing {}: {e}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(home: &std::path::Path, name: &str, url: &str) -> TokenStore {
        TokenStore::new(
            &OAuthSettings {
                store: CredentialsStore::File,
                home: home.to_path_buf(),
                callback_port: None,
            },
            name,
            url,
        )
    }

    #[test]
    fn the_file_keeps_one_entry_per_server_and_url() {
        let home = tempfile::tempdir().unwrap();
        let a = store(home.path(), "a", "https://a.example/mcp");
        let moved = store(home.path(), "a", "https://b.example/mcp");
        assert!(a.load_now().unwrap().is_none());
        a.save_now(&StoredCredentials::new(
            "client-1".into(),
            None,
            vec![],
            None,
        ))
        .unwrap();
        assert_eq!(a.load_now().unwrap().unwrap().client_id, "client-1");
        assert!(
            moved.load_now().unwrap().is_none(),
            "a new URL signs in again"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.path().join(FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(a.clear_now().unwrap());
        assert!(!a.clear_now().unwrap());
        assert!(a.load_now().unwrap().is_none());
    }

    #[test]
    fn a_broken_file_is_named_and_left_alone() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(FILE_NAME), "[1,2]").unwrap();
        let a = store(home.path(), "a", "https://a.example/mcp");
        let e = a
            .save_now(&StoredCredentials::new("c".into(), None, vec![], None))
            .unwrap_err();
        assert!(e.contains(".credentials.json"), "{e}");
        assert_eq!(
            std::fs::read_to_string(home.path().join(FILE_NAME)).unwrap(),
            "[1,2]"
        );
    }
}
