use super::*;
use crate::model::HistoryItem;
use crate::store::{SessionMeta, SessionStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn meta(id: &str) -> SessionMeta {
    SessionMeta {
        id: id.into(),
        cwd: "/w".into(),
        created_at: "now".into(),
        provider: "p".into(),
        model: "m".into(),
        harness: "native".into(),
        additional_directories: vec![],
    }
}

fn user(text: &str) -> LogLine {
    LogLine::Item {
        item: HistoryItem::User {
            text: text.into(),
            images: vec![],
            synthetic: false,
        },
    }
}

/// A log file on a disk that fills up: `room` bytes are left; a write past them gets what
/// fits in and then fails as a full disk does. `sync_fails` fails every fsync.
struct FillingFile {
    file: File,
    room: Arc<AtomicUsize>,
    sync_fails: Arc<AtomicBool>,
}

impl LogFile for FillingFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let room = self.room.load(Ordering::SeqCst);
        let n = room.min(bytes.len());
        self.file.write_all(&bytes[..n])?;
        self.room.store(room - n, Ordering::SeqCst);
        if n < bytes.len() {
            return Err(io::Error::from_raw_os_error(28));
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.sync_fails.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(5));
        }
        self.file.sync_data()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        let before = self.file.metadata()?.len();
        self.file.set_len(len)?;
        // Cutting frees room, as on a real disk.
        self.room
            .fetch_add(before.saturating_sub(len) as usize, Ordering::SeqCst);
        Ok(())
    }
}

/// A store with session `s1` (header and one message), and a log of it that writes through
/// a [`FillingFile`].
fn filling_log(home: &Path) -> (SessionStore, SessionLog, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let store = SessionStore::new(home);
    let mut log = store.create(&meta("s1")).unwrap();
    log.append(&user("first")).unwrap();
    log.sync().unwrap();
    drop(log);
    let path = home.join("sessions/s1.jsonl");
    let (file, len) = open_for_append(&path).unwrap();
    let room = Arc::new(AtomicUsize::new(usize::MAX / 2));
    let sync_fails = Arc::new(AtomicBool::new(false));
    let faulty = FillingFile {
        file,
        room: room.clone(),
        sync_fails: sync_fails.clone(),
    };
    let log = SessionLog::claimed("s1", path, Box::new(faulty), None, len);
    (store, log, room, sync_fails)
}

fn user_texts(store: &SessionStore) -> Vec<String> {
    let loaded = store.load("s1").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded
        .history
        .iter()
        .filter_map(|h| match h {
            HistoryItem::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_short_write_fails_the_turn_once_and_leaves_only_whole_records() {
    let home = tempfile::tempdir().unwrap();
    let (store, mut log, room, _) = filling_log(home.path());
    log.begin_turn().unwrap();
    log.append(&user("second")).unwrap();
    // The disk fills in the middle of the next record.
    room.store(10, Ordering::SeqCst);
    let err = log.append(&user("third")).unwrap_err();
    assert!(err.to_string().contains("os error 28"), "{err}");
    // Later records of the turn are left out, without another error.
    room.store(usize::MAX / 2, Ordering::SeqCst);
    log.append(&user("fourth")).unwrap();
    let end = log.end_turn().unwrap_err().to_string();
    assert!(
        end.contains("appending to session log") && end.contains("os error 28"),
        "{end}"
    );
    // Nothing torn: the file ends with a whole record, and the lost one is absent.
    let text = std::fs::read_to_string(home.path().join("sessions/s1.jsonl")).unwrap();
    assert!(text.ends_with('\n'), "{text:?}");
    assert_eq!(user_texts(&store), ["first", "second"]);
    // The next turn writes again, each record on a line of its own.
    log.begin_turn().unwrap();
    log.append(&user("fifth")).unwrap();
    log.end_turn().unwrap();
    assert_eq!(user_texts(&store), ["first", "second", "fifth"]);
}

#[test]
fn a_failed_fsync_fails_the_turn() {
    let home = tempfile::tempdir().unwrap();
    let (_store, mut log, _, sync_fails) = filling_log(home.path());
    log.begin_turn().unwrap();
    log.append(&user("second")).unwrap();
    sync_fails.store(true, Ordering::SeqCst);
    let err = log.end_turn().unwrap_err().to_string();
    assert!(
        err.contains("syncing session log") && err.contains("os error 5"),
        "{err}"
    );
    sync_fails.store(false, Ordering::SeqCst);
    log.begin_turn().unwrap();
    log.end_turn().unwrap();
}

#[test]
fn between_turns_each_failure_is_returned_and_nothing_is_torn() {
    let home = tempfile::tempdir().unwrap();
    let (store, mut log, room, _) = filling_log(home.path());
    room.store(5, Ordering::SeqCst);
    assert!(log.append(&user("lost")).is_err());
    assert!(log.append(&user("lost too")).is_err());
    room.store(usize::MAX / 2, Ordering::SeqCst);
    log.append(&user("kept")).unwrap();
    log.sync().unwrap();
    assert_eq!(user_texts(&store), ["first", "kept"]);
}

#[test]
fn a_torn_tail_is_cut_before_the_next_record() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let mut log = store.create(&meta("s1")).unwrap();
    log.append(&user("first")).unwrap();
    log.sync().unwrap();
    drop(log);
    // A crash in the middle of a write.
    let path = home.path().join("sessions/s1.jsonl");
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"type":"item","item":{"type":"user","te"#)
        .unwrap();
    drop(f);
    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.warnings.len(), 1, "the torn line is skipped on load");
    let mut log = store.reopen("s1").unwrap();
    log.append(&user("second")).unwrap();
    log.sync().unwrap();
    assert_eq!(user_texts(&store), ["first", "second"]);
}

#[test]
fn a_second_writer_is_refused_until_the_first_is_gone() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    let first = store.create(&meta("s1")).unwrap();
    let Err(err) = store.reopen("s1") else {
        panic!("a second writer was let in")
    };
    let busy = err.downcast_ref::<SessionBusy>().expect("a SessionBusy");
    assert_eq!(busy.id, "s1");
    assert!(
        err.to_string()
            .contains("session `s1` is open elsewhere in this interpreter"),
        "{err}"
    );
    // Readers need no lock.
    assert!(store.load("s1").is_ok());
    drop(first);
    let again = store.reopen("s1").unwrap();
    drop(again);
    assert!(
        !home.path().join("sessions/s1.jsonl.holder").exists(),
        "the holder file goes with the lock"
    );
}

#[test]
fn the_holder_is_named_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let holder = dir.path().join("s.jsonl.holder");
    std::fs::write(&holder, "4242 acp\n").unwrap();
    assert_eq!(
        describe_holder(&holder),
        "in another interpreter (pid 4242, acp)"
    );
    std::fs::write(&holder, format!("{} exec\n", std::process::id())).unwrap();
    assert_eq!(describe_holder(&holder), "elsewhere in this interpreter");
    std::fs::remove_file(&holder).unwrap();
    assert_eq!(describe_holder(&holder), "in another interpreter");
}

#[test]
fn a_loaded_log_writes_nothing_until_its_first_turn() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    drop(store.create(&meta("s1")).unwrap());
    let path = home.path().join("sessions/s1.jsonl");
    let len = std::fs::metadata(&path).unwrap().len();
    let mut loaded = store.reopen_later("s1", len).unwrap();
    loaded.append(&user("setting")).unwrap();
    loaded.sync().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    // Another writer may come and go meanwhile.
    drop(store.reopen("s1").unwrap());
    // While one holds the log, the first turn is refused.
    let holder = store.reopen("s1").unwrap();
    let err = loaded.begin_turn().unwrap_err();
    assert!(err.downcast_ref::<SessionBusy>().is_some(), "{err}");
    drop(holder);
    loaded.begin_turn().unwrap();
    loaded.append(&user("prompt")).unwrap();
    loaded.end_turn().unwrap();
    assert_eq!(user_texts(&store), ["setting", "prompt"]);
}

#[test]
fn a_loaded_log_that_changed_since_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let store = SessionStore::new(home.path());
    drop(store.create(&meta("s1")).unwrap());
    let len = std::fs::metadata(home.path().join("sessions/s1.jsonl"))
        .unwrap()
        .len();
    let mut loaded = store.reopen_later("s1", len).unwrap();
    let mut other = store.reopen("s1").unwrap();
    other.append(&user("from elsewhere")).unwrap();
    other.sync().unwrap();
    drop(other);
    let err = loaded.begin_turn().unwrap_err().to_string();
    assert!(err.contains("changed by another interpreter"), "{err}");
}
