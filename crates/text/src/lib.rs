//! Pure text for the editor faces, in helix-core's manner: rope documents keyed by URI
//! (`documents`), LSP positions in every encoding (`positions`), minimal edits between two
//! texts (`edits`) and the three-way rebase of an edit onto text the user typed since
//! (`merge`). No I/O, no async, no dependency on the agent: a change here rebuilds only the
//! faces that use it.

pub mod documents;
pub mod edits;
pub mod merge;
pub mod positions;
