//! Reading images for the model: Kimi Code's `ReadMediaFile`, and Claude Code's `Read` of an
//! image file; PDFs as one image per page (`tools::pdf`). The image goes to the model in a message after the response's results (see
//! `agent/turn.rs`); the result says what was read.

use interpreter_protocol::ToolKind;
use serde_json::{Value, json};
use std::sync::Arc;

use crate::tools::media::{self, Fit, Region};
use crate::tools::table::{FnTool, Tool, ToolError, ToolResult, Wording, location, spec, str_arg};
use crate::tools::{CallDescription, ToolContext, ToolOutcome};

/// `full_resolution`: a larger edge and budget than Kimi Code's default fit.
const FULL_RESOLUTION: Fit = Fit {
    max_edge: 4096,
    max_bytes: 4 * 1024 * 1024,
};

/// A PDF page's fit: Claude's recommended edge, and a budget that keeps 20 pages in one
/// request.
pub(crate) const PDF_FIT: Fit = Fit {
    max_edge: 1568,
    max_bytes: 512 * 1024,
};
/// Pages of a PDF `ReadMediaFile` reads whole: four pages in Kimi Code's fit stay well under
/// Moonshot's 2 MiB request limit.
const KIMI_PDF_PAGES: u32 = 4;

/// Kimi Code's `ReadMediaFile`: images, and short PDFs as page images (video is not read
/// here).
pub(crate) fn read_media_file(wording: Wording) -> Arc<dyn Tool> {
    FnTool::plain(
        wording,
        spec(
            "ReadMediaFile",
            "Read an image file (PNG, JPEG, GIF, WebP) so you can see it: screenshots, diagrams, mockups. Large images are scaled down; use region to look at a part at its own resolution. A PDF of at most 4 pages comes back as one image per page.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The image file"},
                "region": {"type": "object", "description": "A part of the image, in its pixels", "properties": {
                    "x": {"type": "integer", "minimum": 0},
                    "y": {"type": "integer", "minimum": 0},
                    "width": {"type": "integer", "minimum": 1},
                    "height": {"type": "integer", "minimum": 1}
                }, "required": ["x", "y", "width", "height"], "additionalProperties": false},
                "full_resolution": {"type": "boolean", "default": false, "description": "Keep more pixels (costs more tokens)"}
            }, "required": ["path"], "additionalProperties": false}),
        ),
        |a, ws| {
            CallDescription::new(
                ToolKind::Read,
                format!("Read {}", crate::tools::table::str_or_empty(a, "path")),
                location(ws, a, "path"),
            )
        },
        |a, c| Box::pin(run_read_media(c, a)),
    )
}

async fn run_read_media(ctx: &ToolContext, args: Value) -> ToolResult {
    let Some(raw) = str_arg(&args, "path") else {
        return Err(ToolError::message("`path` is required."));
    };
    if crate::tools::pdf::is_pdf_path(std::path::Path::new(raw)) {
        return pdf_outcome(ctx, raw, None, KIMI_PDF_PAGES, media::KIMI_FIT).await;
    }
    let region = match args.get("region") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let n = |k: &str| {
                r.get(k)
                    .and_then(Value::as_u64)
                    .map(|v| v.min(u32::MAX as u64) as u32)
            };
            match (n("x"), n("y"), n("width"), n("height")) {
                (Some(x), Some(y), Some(width), Some(height)) => Some(Region {
                    x,
                    y,
                    width,
                    height,
                }),
                _ => return Err(ToolError::message("`region` needs x, y, width and height.")),
            }
        }
    };
    let fit = match args.get("full_resolution").and_then(Value::as_bool) {
        Some(true) => FULL_RESOLUTION,
        _ => media::KIMI_FIT,
    };
    image_outcome(ctx, raw, fit, region).await
}

/// The image at `raw` (a workspace path) for the model, fitted to `fit`; the result text
/// says what it is.
pub(crate) async fn image_outcome(
    ctx: &ToolContext,
    raw: &str,
    fit: Fit,
    region: Option<Region>,
) -> ToolResult {
    if !ctx.model_images {
        return Err(ToolError::message(format!(
            "{raw} is an image, and this model does not take images."
        )));
    }
    let path = ctx.workspace.resolve(raw)?;
    let img = media::read_image(&path, fit, region)
        .await
        .map_err(ToolError::message)?;
    let scaled = match img.original == (img.width, img.height) || region.is_some() {
        true => String::new(),
        false => format!(", scaled from {}x{}", img.original.0, img.original.1),
    };
    let text = format!(
        "<system>Read image file {}: {}, {}x{} pixels{scaled}. The image follows this turn's tool results.</system>",
        ctx.workspace.display_path(&path),
        img.mime,
        img.width,
        img.height
    );
    let mut outcome = ToolOutcome::ok(text);
    outcome.images = vec![img.data_url];
    Ok(outcome)
}

/// The pages of the PDF at `raw` (a workspace path) for the model, one image each: those
/// `pages` names, else all of a PDF of at most `default_max` pages.
pub(crate) async fn pdf_outcome(
    ctx: &ToolContext,
    raw: &str,
    pages: Option<&str>,
    default_max: u32,
    fit: Fit,
) -> ToolResult {
    if !ctx.model_images {
        return Err(ToolError::message(format!(
            "{raw} is a PDF, read as page images, and this model does not take images."
        )));
    }
    let path = ctx.workspace.resolve(raw)?;
    let read = crate::tools::pdf::read_pages(&path, pages, default_max, fit)
        .await
        .map_err(ToolError::message)?;
    let numbers: Vec<String> = read.pages.iter().map(|(n, _)| n.to_string()).collect();
    let text = format!(
        "<system>Read PDF file {}: page{} {} of {}, one image per page. The pages follow this turn's tool results.</system>",
        ctx.workspace.display_path(&path),
        if numbers.len() == 1 { "" } else { "s" },
        numbers.join(", "),
        read.total
    );
    let mut outcome = ToolOutcome::ok(text);
    outcome.images = read.pages.into_iter().map(|(_, i)| i.data_url).collect();
    Ok(outcome)
}
