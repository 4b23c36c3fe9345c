//! A session's task list (Claude Code's `TaskCreate`, `TaskGet`, `TaskList`, `TaskUpdate`):
//! numbered items with a subject, a description, a status, an owner and dependencies. Not
//! the background tasks of `background.rs`. Kept in `task_list.json` beside the session's
//! task outputs, so a resumed session has it; its subagents share it.

use interpreter_protocol::{Plan, PlanItem, PlanStatus};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Items a session keeps at most; the model is told when the list is full.
const MAX_ITEMS: usize = 500;

/// One item of the list.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Item {
    pub(crate) id: String,
    pub(crate) subject: String,
    pub(crate) description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) active_form: Option<String>,
    pub(crate) status: PlanStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    /// Items that wait for this one.
    #[serde(default)]
    pub(crate) blocks: Vec<String>,
    /// Items this one waits for.
    #[serde(default)]
    pub(crate) blocked_by: Vec<String>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub(crate) metadata: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    /// The last id given: ids are not reused after a delete.
    last_id: u64,
    items: Vec<Item>,
}

/// What TaskUpdate may change; `None` leaves a field as it is.
#[derive(Debug, Default)]
pub(crate) struct Update {
    pub(crate) subject: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) active_form: Option<String>,
    /// A status, or `deleted`.
    pub(crate) status: Option<String>,
    pub(crate) owner: Option<String>,
    pub(crate) add_blocks: Vec<String>,
    pub(crate) add_blocked_by: Vec<String>,
    /// Keys to merge; a null value removes its key.
    pub(crate) metadata: serde_json::Map<String, serde_json::Value>,
}

/// The session's task list.
pub(crate) struct TaskList {
    path: PathBuf,
    stored: Mutex<Stored>,
}

fn parse_status(s: &str) -> Result<PlanStatus, String> {
    match s {
        "pending" => Ok(PlanStatus::Pending),
        "in_progress" => Ok(PlanStatus::InProgress),
        "completed" => Ok(PlanStatus::Completed),
        other => Err(format!(
            "Unknown status `{other}` (pending, in_progress, completed or deleted)"
        )),
    }
}

/// The status as the model writes it.
pub(crate) fn status_name(s: PlanStatus) -> &'static str {
    match s {
        PlanStatus::Pending => "pending",
        PlanStatus::InProgress => "in_progress",
        PlanStatus::Completed => "completed",
    }
}

/// `#1, #2`
pub(crate) fn refs(ids: &[String]) -> String {
    ids.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Records that `from` blocks `to`, on both items; whether anything was new.
fn link(s: &mut Stored, from: &str, to: &str) -> bool {
    let mut added = false;
    for i in &mut s.items {
        if i.id == from && !i.blocks.iter().any(|b| b == to) {
            i.blocks.push(to.to_string());
            added = true;
        }
        if i.id == to && !i.blocked_by.iter().any(|b| b == from) {
            i.blocked_by.push(from.to_string());
            added = true;
        }
    }
    added
}

fn norm_id(id: &str) -> &str {
    id.trim().trim_start_matches('#')
}

impl TaskList {
    /// The list kept in `dir` (empty when there is none or it cannot be read).
    pub(crate) fn new(dir: &Path) -> Self {
        let path = dir.join("task_list.json");
        let stored = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        TaskList {
            path,
            stored: Mutex::new(stored),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stored> {
        self.stored.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn save(&self, stored: &Stored) {
        let wrote = self
            .path
            .parent()
            .map_or(Ok(()), super::background::create_private_dir)
            .and_then(|()| {
                let json = serde_json::to_vec(stored).map_err(std::io::Error::other)?;
                let tmp = self.path.with_extension("json.tmp");
                super::background::write_private(&tmp, &json)?;
                std::fs::rename(&tmp, &self.path)
            });
        if let Err(e) = wrote {
            tracing::warn!(
                "could not keep the task list in {}: {e}",
                self.path.display()
            );
        }
    }

    /// Adds a pending item and returns it.
    pub(crate) fn create(
        &self,
        subject: &str,
        description: &str,
        active_form: Option<&str>,
        metadata: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Item, String> {
        let subject = subject.trim();
        if subject.is_empty() {
            return Err("`subject` must not be empty".into());
        }
        let mut s = self.lock();
        if s.items.len() >= MAX_ITEMS {
            return Err(format!(
                "The task list already holds {MAX_ITEMS} tasks; delete finished ones first."
            ));
        }
        s.last_id += 1;
        let item = Item {
            id: s.last_id.to_string(),
            subject: subject.to_string(),
            description: description.trim().to_string(),
            active_form: active_form
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(String::from),
            status: PlanStatus::Pending,
            owner: None,
            blocks: vec![],
            blocked_by: vec![],
            metadata,
        };
        s.items.push(item.clone());
        self.save(&s);
        Ok(item)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Item> {
        let id = norm_id(id);
        self.lock().items.iter().find(|i| i.id == id).cloned()
    }

    /// Every item, in id order.
    pub(crate) fn list(&self) -> Vec<Item> {
        self.lock().items.clone()
    }

    /// The ids of `item`'s blockers that are not completed.
    pub(crate) fn open_blockers(&self, item: &Item) -> Vec<String> {
        let s = self.lock();
        item.blocked_by
            .iter()
            .filter(|b| {
                s.items
                    .iter()
                    .any(|i| &i.id == *b && i.status != PlanStatus::Completed)
            })
            .cloned()
            .collect()
    }

    /// Applies `u` to item `id`; returns the names of the fields that changed (`deleted`
    /// when it was removed). Nothing changes when any part of the update is wrong.
    pub(crate) fn update(&self, id: &str, u: Update) -> Result<Vec<&'static str>, String> {
        let id = norm_id(id).to_string();
        let mut s = self.lock();
        let Some(at) = s.items.iter().position(|i| i.id == id) else {
            return Err(format!("Task #{id} not found"));
        };
        if u.status.as_deref() == Some("deleted") {
            s.items.remove(at);
            // Nothing waits for, or is waited on by, an item that is gone.
            for i in &mut s.items {
                i.blocks.retain(|b| *b != id);
                i.blocked_by.retain(|b| *b != id);
            }
            self.save(&s);
            return Ok(vec!["deleted"]);
        }
        let status = u.status.as_deref().map(parse_status).transpose()?;
        let links: Vec<String> = u
            .add_blocks
            .iter()
            .chain(&u.add_blocked_by)
            .map(|l| norm_id(l).to_string())
            .collect();
        for l in &links {
            if *l == id {
                return Err(format!("Task #{id} cannot block itself"));
            }
            if !s.items.iter().any(|i| i.id == *l) {
                return Err(format!("Task #{l} not found"));
            }
        }
        let mut changed = Vec::new();
        let item = &mut s.items[at];
        let mut set = |field: &mut String, v: Option<String>, name: &'static str| {
            if let Some(v) = v.map(|v| v.trim().to_string())
                && *field != v
            {
                *field = v;
                changed.push(name);
            }
        };
        set(
            &mut item.subject,
            u.subject.filter(|v| !v.trim().is_empty()),
            "subject",
        );
        set(&mut item.description, u.description, "description");
        let mut active = item.active_form.clone().unwrap_or_default();
        set(&mut active, u.active_form, "activeForm");
        item.active_form = Some(active).filter(|a| !a.is_empty());
        let mut owner = item.owner.clone().unwrap_or_default();
        set(&mut owner, u.owner, "owner");
        item.owner = Some(owner).filter(|o| !o.is_empty());
        if let Some(st) = status
            && item.status != st
        {
            item.status = st;
            changed.push("status");
        }
        if !u.metadata.is_empty() {
            for (k, v) in u.metadata {
                if v.is_null() {
                    item.metadata.remove(&k);
                } else {
                    item.metadata.insert(k, v);
                }
            }
            changed.push("metadata");
        }
        let (blocks, blocked_by) = links.split_at(u.add_blocks.len());
        if blocks.iter().fold(false, |a, b| link(&mut s, &id, b) | a) {
            changed.push("blocks");
        }
        if blocked_by
            .iter()
            .fold(false, |a, b| link(&mut s, b, &id) | a)
        {
            changed.push("blockedBy");
        }
        if !changed.is_empty() {
            self.save(&s);
        }
        Ok(changed)
    }

    /// The list as the session's plan, for every face to show.
    pub(crate) fn plan(&self) -> Plan {
        Plan {
            explanation: None,
            items: self
                .lock()
                .items
                .iter()
                .map(|i| PlanItem {
                    step: i.subject.clone(),
                    status: i.status,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    #[test]
    fn items_are_numbered_linked_updated_and_kept_for_a_resume() {
        let dir = tempfile::tempdir().unwrap();
        let l = TaskList::new(dir.path());
        assert!(l.create(" ", "x", None, none()).is_err());
        let a = l
            .create("Fix add", "make add add", Some("Fixing add"), none())
            .unwrap();
        let b = l.create("Check it", "run the check", None, none()).unwrap();
        assert_eq!((a.id.as_str(), b.id.as_str()), ("1", "2"));
        let changed = l
            .update(
                "2",
                Update {
                    add_blocked_by: vec!["#1".into()],
                    owner: Some("me".into()),
                    ..Update::default()
                },
            )
            .unwrap();
        assert_eq!(changed, ["owner", "blockedBy"]);
        assert_eq!(l.get("1").unwrap().blocks, ["2"]);
        assert_eq!(l.open_blockers(&l.get("2").unwrap()), ["1"]);
        let changed = l
            .update(
                "1",
                Update {
                    status: Some("completed".into()),
                    ..Update::default()
                },
            )
            .unwrap();
        assert_eq!(changed, ["status"]);
        // A completed blocker no longer holds its item back.
        assert!(l.open_blockers(&l.get("2").unwrap()).is_empty());
        // The same value again changes nothing.
        let same = Update {
            status: Some("completed".into()),
            ..Update::default()
        };
        assert!(l.update("1", same).unwrap().is_empty());
        let again = TaskList::new(dir.path());
        assert_eq!(again.list(), l.list());
        assert_eq!(
            again.plan().items,
            [
                PlanItem {
                    step: "Fix add".into(),
                    status: PlanStatus::Completed
                },
                PlanItem {
                    step: "Check it".into(),
                    status: PlanStatus::Pending
                }
            ]
        );
    }

    #[test]
    fn wrong_updates_change_nothing_and_deletes_unlink_without_reusing_ids() {
        let dir = tempfile::tempdir().unwrap();
        let l = TaskList::new(dir.path());
        l.create("a", "", None, none()).unwrap();
        l.create("b", "", None, none()).unwrap();
        let bad = |status: &str, blocks: &[&str]| Update {
            status: Some(status.into()),
            add_blocks: blocks.iter().map(|s| s.to_string()).collect(),
            subject: Some("renamed".into()),
            ..Update::default()
        };
        assert!(
            l.update("1", bad("done", &[]))
                .unwrap_err()
                .contains("Unknown status")
        );
        assert_eq!(
            l.update("1", bad("pending", &["9"])).unwrap_err(),
            "Task #9 not found"
        );
        assert!(
            l.update("1", bad("pending", &["1"]))
                .unwrap_err()
                .contains("itself")
        );
        assert_eq!(
            l.update("7", Update::default()).unwrap_err(),
            "Task #7 not found"
        );
        assert_eq!(l.get("1").unwrap().subject, "a");
        l.update("1", bad("pending", &["2"])).unwrap();
        assert_eq!(l.get("2").unwrap().blocked_by, ["1"]);
        assert_eq!(l.update("1", bad("deleted", &[])).unwrap(), ["deleted"]);
        assert!(l.get("1").is_none());
        assert!(l.get("2").unwrap().blocked_by.is_empty());
        assert_eq!(l.create("c", "", None, none()).unwrap().id, "3");
        let mut m = none();
        m.insert("k".into(), serde_json::json!(1));
        let meta = |m| Update {
            metadata: m,
            ..Update::default()
        };
        l.update("3", meta(m)).unwrap();
        assert_eq!(l.get("3").unwrap().metadata["k"], 1);
        let mut del = none();
        del.insert("k".into(), serde_json::Value::Null);
        l.update("3", meta(del)).unwrap();
        assert!(l.get("3").unwrap().metadata.is_empty());
    }
}
