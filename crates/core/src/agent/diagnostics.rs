//! Diagnostics after edits, for front ends that offer the editor's (`FaceAbilities`): the
//! session asks for the files an edit will touch before it runs and for the files it
//! changed after, and puts the errors and warnings that are new after the call's result.
//! At the end of a turn it asks once more for every file the turn changed, since language
//! servers can be slow: what appeared since goes into history for the next request.

use interpreter_protocol::{FileChange, ToolKind};
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::model::HistoryItem;
use crate::tools::diagnostics::{new_problems, render};

impl Session {
    /// Before a call that edits `locations`: the editor's diagnostics for them now.
    pub(super) async fn diagnostics_before(
        &mut self,
        kind: ToolKind,
        locations: &[PathBuf],
        cancel: &CancellationToken,
    ) {
        let edits = matches!(kind, ToolKind::Edit | ToolKind::Delete | ToolKind::Move);
        if !edits || locations.is_empty() || !self.services.asks.offers_diagnostics() {
            return;
        }
        if let Some(map) = self
            .services
            .asks
            .diagnostics(locations.to_vec(), cancel)
            .await
        {
            self.active.diagnostics_seen.by_path.extend(map);
        }
    }

    /// After a call that changed files: the lines to add to its result (empty when
    /// nothing is new).
    pub(super) async fn diagnostics_after(
        &mut self,
        changes: &[FileChange],
        cancel: &CancellationToken,
    ) -> String {
        if changes.is_empty() || !self.services.asks.offers_diagnostics() {
            return String::new();
        }
        let paths: Vec<PathBuf> = changes
            .iter()
            .flat_map(|c| std::iter::once(c.path.clone()).chain(c.move_path.clone()))
            .collect();
        self.active
            .diagnostics_seen
            .changed
            .extend(paths.iter().cloned());
        let found = self.new_diagnostics(paths, cancel).await;
        if found.is_empty() {
            return String::new();
        }
        format!("\n\nNew diagnostics after this edit:\n{found}")
    }

    /// At the end of a turn that changed files: what appeared since the last look goes into
    /// history, so the next request carries it.
    pub(super) async fn diagnostics_at_turn_end(&mut self, cancel: &CancellationToken) {
        let changed = std::mem::take(&mut self.active.diagnostics_seen.changed);
        if changed.is_empty() || !self.services.asks.offers_diagnostics() {
            return;
        }
        let found = self
            .new_diagnostics(changed.into_iter().collect(), cancel)
            .await;
        if !found.is_empty() {
            self.push_history(HistoryItem::User {
                text: format!(
                    "New diagnostics in the files you changed, reported after your last turn:\n{found}"
                ),
                images: vec![],
                synthetic: true,
            });
        }
    }

    /// Asks for `paths`; renders the problems new since the last look and remembers these.
    async fn new_diagnostics(&mut self, paths: Vec<PathBuf>, cancel: &CancellationToken) -> String {
        let Some(map) = self.services.asks.diagnostics(paths, cancel).await else {
            return String::new();
        };
        let mut found = Vec::new();
        for (path, after) in map {
            let before = self
                .active
                .diagnostics_seen
                .by_path
                .get(&path)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            found.extend(
                new_problems(before, &after)
                    .into_iter()
                    .map(|d| (path.clone(), d.clone())),
            );
            self.active.diagnostics_seen.by_path.insert(path, after);
        }
        render(&found, self.services.workspace.cwd())
    }
}
