//! `NotebookEdit`: replace, insert or delete one cell of a Jupyter notebook (nbformat 4).
//! The edit is made on the notebook's JSON and written like Write and Edit write (the
//! workspace's boundary, the approval with its diff, undo). The rest of the file stays as it
//! was: key order, metadata, the indentation Jupyter uses (one space) and the final newline.

use interpreter_protocol::ToolKind;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::tools::table::{ToolError, ToolResult, str_arg};
use crate::tools::{CallDescription, ToolContext, ToolOutcome, patch_runner};
use crate::workspace::Workspace;

/// What one call asks for.
#[derive(Debug)]
pub(super) struct CellEdit<'a> {
    pub(super) cell_id: Option<&'a str>,
    pub(super) source: &'a str,
    pub(super) cell_type: Option<&'a str>,
    pub(super) mode: &'a str,
}

pub(super) fn describe(a: &Value, ws: &Workspace) -> CallDescription {
    CallDescription {
        kind: ToolKind::Edit,
        title: format!(
            "Edit notebook {}",
            crate::tools::table::str_or_empty(a, "notebook_path")
        ),
        locations: crate::tools::table::location(ws, a, "notebook_path"),
        command: None,
    }
}

pub(super) async fn run(ctx: &ToolContext, a: Value) -> ToolResult {
    let Some(raw) = str_arg(&a, "notebook_path") else {
        return Err(ToolError::message(
            "InputValidationError: NotebookEdit failed due to the following issue:\nThe required parameter `notebook_path` is missing",
        ));
    };
    let edit = CellEdit {
        cell_id: str_arg(&a, "cell_id").filter(|c| !c.trim().is_empty()),
        source: str_arg(&a, "new_source").unwrap_or_default(),
        cell_type: str_arg(&a, "cell_type"),
        mode: str_arg(&a, "edit_mode").unwrap_or("replace"),
    };
    if a.get("new_source").is_none() && edit.mode != "delete" {
        return Err(ToolError::message(
            "InputValidationError: NotebookEdit failed due to the following issue:\nThe required parameter `new_source` is missing",
        ));
    }
    let ws = &ctx.workspace;
    let path = ws.resolve(raw)?;
    if path.extension().and_then(|e| e.to_str()) != Some("ipynb") {
        return Err(ToolError::message(
            "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the Edit tool.",
        ));
    }
    let text = match ws.read_text(&path).await {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::message(format!(
                "Notebook file does not exist: {}",
                ws.display_path(&path)
            )));
        }
        Err(e) => {
            return Err(ToolError::Read {
                path: ws.display_path(&path),
                source: e,
            });
        }
    };
    let (new_text, message) = edit_cells(&text, &edit).map_err(ToolError::message)?;
    let change = patch_runner::write_one(ctx, "NotebookEdit", &path, Some(text), new_text).await?;
    let mut o = ToolOutcome::ok(message);
    o.changes = vec![change];
    Ok(o)
}

/// The index of the cell `id` names: its `id`, else the `cell-N` form for the N-th cell
/// (what a notebook without cell ids is addressed by).
fn find_cell(cells: &[Value], id: &str) -> Option<usize> {
    cells
        .iter()
        .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
        .or_else(|| {
            id.strip_prefix("cell-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < cells.len())
        })
}

/// Jupyter's form of a cell's source: its lines, each but the last keeping its newline.
fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// A fresh cell id as nbformat 4.5 makes them (eight hex digits is enough within a notebook).
fn new_cell_id(cells: &[Value]) -> String {
    loop {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
        if find_cell(cells, &id).is_none() {
            return id;
        }
    }
}

fn set_type(cell: &mut Map<String, Value>, kind: &str) {
    cell.insert("cell_type".into(), json!(kind));
    if kind == "code" {
        // A changed code cell's old outputs no longer belong to it.
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    } else {
        cell.remove("execution_count");
        cell.remove("outputs");
    }
}

/// The notebook `text` with `edit` made, and the text the model reads back.
pub(super) fn edit_cells(text: &str, edit: &CellEdit) -> Result<(String, String), String> {
    let mut nb: Value =
        serde_json::from_str(text).map_err(|e| format!("Notebook is not valid JSON: {e}"))?;
    let (major, minor) = (
        nb.get("nbformat").and_then(Value::as_u64).unwrap_or(0),
        nb.get("nbformat_minor")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    );
    let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err("Notebook has no `cells` list (is it nbformat 4?)".into());
    };
    if let Some(t) = edit.cell_type
        && !matches!(t, "code" | "markdown")
    {
        return Err(format!("cell_type must be code or markdown, not `{t}`"));
    }
    let at = match edit.cell_id {
        Some(id) => Some(
            find_cell(cells, id)
                .ok_or_else(|| format!("Cell with ID \"{id}\" not found in notebook."))?,
        ),
        None => None,
    };
    let message = match (edit.mode, at) {
        ("replace" | "delete", None) => {
            return Err("Cell ID must be specified when not inserting a new cell.".into());
        }
        ("replace", Some(i)) => {
            let Some(cell) = cells[i].as_object_mut() else {
                return Err(format!("Cell {i} of the notebook is not an object"));
            };
            cell.insert("source".into(), source_lines(edit.source));
            let kind = edit
                .cell_type
                .or_else(|| cell.get("cell_type").and_then(Value::as_str))
                .unwrap_or("code")
                .to_string();
            set_type(cell, &kind);
            format!(
                "Updated cell {} with {}",
                edit.cell_id.unwrap_or_default(),
                edit.source
            )
        }
        ("insert", at) => {
            let Some(kind) = edit.cell_type else {
                return Err("Cell type is required when using edit_mode=insert.".into());
            };
            let mut cell = Map::new();
            cell.insert("cell_type".into(), json!(kind));
            // Cell ids came with nbformat 4.5; older notebooks must not gain them.
            let id = (major > 4 || (major == 4 && minor >= 5)).then(|| new_cell_id(cells));
            if let Some(id) = &id {
                cell.insert("id".into(), json!(id));
            }
            cell.insert("metadata".into(), json!({}));
            cell.insert("source".into(), source_lines(edit.source));
            set_type(&mut cell, kind);
            let index = at.map_or(0, |i| i + 1);
            cells.insert(index, Value::Object(cell));
            let name = id.unwrap_or_else(|| format!("cell-{index}"));
            format!("Inserted cell {name} with {}", edit.source)
        }
        ("delete", Some(i)) => {
            cells.remove(i);
            format!("Deleted cell {}", edit.cell_id.unwrap_or_default())
        }
        (other, _) => {
            return Err(format!(
                "edit_mode must be replace, insert or delete, not `{other}`"
            ));
        }
    };
    Ok((write_like(text, &nb)?, message))
}

/// `nb` written with the indentation and final newline of the file it came from.
fn write_like(original: &str, nb: &Value) -> Result<String, String> {
    let indent = original
        .lines()
        .nth(1)
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let pad = " ".repeat(indent);
    let mut out = Vec::with_capacity(original.len() + 256);
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes()),
    );
    nb.serialize(&mut ser).map_err(|e| e.to_string())?;
    let mut text = String::from_utf8(out).map_err(|e| e.to_string())?;
    if original.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NB: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 3,\n   \"id\": \"a1\",\n   \"metadata\": {\n    \"tags\": [\n     \"x\"\n    ]\n   },\n   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],\n   \"source\": [\n    \"print(1)\"\n   ]\n  },\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"b2\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\"\n   ]\n  }\n ],\n \"metadata\": {\n  \"kernelspec\": {\n   \"name\": \"python3\"\n  }\n },\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

    fn edit<'a>(
        id: Option<&'a str>,
        source: &'a str,
        t: Option<&'a str>,
        mode: &'a str,
    ) -> CellEdit<'a> {
        CellEdit {
            cell_id: id,
            source,
            cell_type: t,
            mode,
        }
    }

    fn cells(text: &str) -> Vec<Value> {
        serde_json::from_str::<Value>(text).unwrap()["cells"]
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn replace_clears_outputs_and_keeps_the_rest_of_the_file() {
        let (text, msg) =
            edit_cells(NB, &edit(Some("a1"), "x = 1\nprint(x)", None, "replace")).unwrap();
        assert_eq!(msg, "Updated cell a1 with x = 1\nprint(x)");
        let c = cells(&text);
        assert_eq!(c[0]["source"], json!(["x = 1\n", "print(x)"]));
        assert_eq!(c[0]["outputs"], json!([]));
        assert!(c[0]["execution_count"].is_null());
        assert_eq!(c[0]["metadata"]["tags"], json!(["x"]));
        // Only the edited cell's lines differ; key order, indentation and the final newline
        // are the file's.
        let rest =
            |t: &str| t[t.find("  {\n   \"cell_type\": \"markdown\"").unwrap()..].to_string();
        assert_eq!(rest(&text), rest(NB));
        assert!(text.starts_with("{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"a1\",\n   \"metadata\": {\n    \"tags\": [\n     \"x\"\n    ]\n   },\n   \"outputs\": [],\n   \"source\": [\n    \"x = 1\\n\",\n    \"print(x)\"\n   ]\n  },\n"));
        // A markdown cell turned into code gains the code fields.
        let (text, _) =
            edit_cells(NB, &edit(Some("b2"), "1 + 1", Some("code"), "replace")).unwrap();
        assert_eq!(cells(&text)[1]["outputs"], json!([]));
        // The cell-N form addresses a cell by index.
        let (text, msg) = edit_cells(NB, &edit(Some("cell-1"), "## Sub", None, "replace")).unwrap();
        assert_eq!(cells(&text)[1]["source"], json!(["## Sub"]));
        assert!(cells(&text)[1].get("outputs").is_none());
        assert_eq!(msg, "Updated cell cell-1 with ## Sub");
    }

    #[test]
    fn insert_and_delete_place_cells_and_errors_are_clear() {
        let (text, msg) =
            edit_cells(NB, &edit(Some("a1"), "# Notes", Some("markdown"), "insert")).unwrap();
        let c = cells(&text);
        assert_eq!(c.len(), 3);
        assert_eq!(c[1]["cell_type"], "markdown");
        assert_eq!(c[1]["metadata"], json!({}));
        let id = c[1]["id"].as_str().unwrap();
        assert_eq!(id.len(), 8);
        assert_eq!(msg, format!("Inserted cell {id} with # Notes"));
        let (text, _) = edit_cells(NB, &edit(None, "import os", Some("code"), "insert")).unwrap();
        let c = cells(&text);
        assert_eq!(c[0]["source"], json!(["import os"]));
        assert!(c[0]["execution_count"].is_null());
        let (text, msg) = edit_cells(NB, &edit(Some("a1"), "", None, "delete")).unwrap();
        assert_eq!(msg, "Deleted cell a1");
        assert_eq!(cells(&text).len(), 1);
        assert_eq!(cells(&text)[0]["id"], "b2");

        let err = |e: CellEdit| edit_cells(NB, &e).unwrap_err();
        assert_eq!(
            err(edit(Some("zz"), "x", None, "replace")),
            "Cell with ID \"zz\" not found in notebook."
        );
        assert!(err(edit(None, "x", None, "replace")).contains("Cell ID must be specified"));
        assert!(err(edit(None, "x", None, "insert")).contains("Cell type is required"));
        assert!(err(edit(Some("a1"), "x", None, "move")).contains("edit_mode must be"));
        assert!(err(edit(Some("a1"), "x", Some("raw"), "replace")).contains("code or markdown"));
        assert!(
            edit_cells("{not json", &edit(Some("a1"), "x", None, "replace"))
                .unwrap_err()
                .starts_with("Notebook is not valid JSON")
        );
        // Before nbformat 4.5 cells have no ids: an inserted one gets none, and is named by index.
        let old = NB.replace("\"nbformat_minor\": 5", "\"nbformat_minor\": 4");
        let (text, msg) =
            edit_cells(&old, &edit(Some("cell-1"), "y", Some("code"), "insert")).unwrap();
        assert!(cells(&text)[2].get("id").is_none());
        assert_eq!(msg, "Inserted cell cell-2 with y");
    }
}
