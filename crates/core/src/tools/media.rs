//! Images for the model: a file in the workspace read, checked, cropped on request and
//! fitted to the provider's limits (longest edge, bytes), as a data URL every wire carries.
//! Decoding is bounded (dimensions and allocation), so a corrupt or hostile file is an error,
//! never a spike in memory.

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use std::io::Cursor;
use std::path::Path;

/// Largest image file read.
pub(crate) const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// Largest dimensions decoded, and the most a decode may allocate.
const MAX_DIMENSION: u32 = 16_384;
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

/// How big an image may reach the model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fit {
    /// Longest edge, in pixels.
    pub(crate) max_edge: u32,
    /// Bytes of the encoded image.
    pub(crate) max_bytes: usize,
}

/// Kimi Code's defaults: a 2000 px edge and a 256 KiB budget.
pub(crate) const KIMI_FIT: Fit = Fit {
    max_edge: 2000,
    max_bytes: 256 * 1024,
};
/// What Claude and OpenAI models take without scaling it down themselves.
pub(crate) const WIDE_FIT: Fit = Fit {
    max_edge: 2048,
    max_bytes: 3 * 1024 * 1024,
};

/// A part of an image, in its own pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) x: u32,
    pub(crate) y: u32,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

/// An image ready for a request.
#[derive(Debug, Clone)]
pub(crate) struct ModelImage {
    pub(crate) data_url: String,
    pub(crate) mime: &'static str,
    pub(crate) width: u32,
    pub(crate) height: u32,
    /// The file's own dimensions.
    pub(crate) original: (u32, u32),
}

/// Whether `path` names an image by its extension.
pub(crate) fn is_image_path(path: &Path) -> bool {
    format_of(path).is_some()
}

fn format_of(path: &Path) -> Option<ImageFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some(ImageFormat::Png),
        "jpg" | "jpeg" => Some(ImageFormat::Jpeg),
        "gif" => Some(ImageFormat::Gif),
        "webp" => Some(ImageFormat::WebP),
        _ => None,
    }
}

/// Reads the image at `path` (already confined to the workspace) and fits it.
pub(crate) async fn read_image(
    path: &Path,
    fit: Fit,
    region: Option<Region>,
) -> Result<ModelImage, String> {
    let shown = path.display().to_string();
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| format!("could not read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{shown} is {} MiB; images of at most {} MiB are read",
            meta.len() >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| format!("could not read {shown}: {e}"))?;
    let fitted = tokio::task::spawn_blocking(move || prepare(&bytes, fit, region))
        .await
        .map_err(|e| format!("the image could not be prepared: {e}"))?;
    fitted.map_err(|e| format!("{shown}: {e}"))
}

/// Decodes `bytes`, crops `region`, scales to `fit` and encodes.
pub(crate) fn prepare(
    bytes: &[u8],
    fit: Fit,
    region: Option<Region>,
) -> Result<ModelImage, String> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("could not read the image: {e}"))?;
    let format = reader
        .format()
        .filter(|f| {
            matches!(
                f,
                ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
            )
        })
        .ok_or("not a PNG, JPEG, GIF or WebP image")?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let mut img = reader
        .decode()
        .map_err(|e| format!("not a readable image ({e})"))?;
    let original = (img.width(), img.height());
    if let Some(r) = region {
        if r.width == 0
            || r.height == 0
            || r.x.saturating_add(r.width) > img.width()
            || r.y.saturating_add(r.height) > img.height()
        {
            return Err(format!(
                "region {}x{} at ({}, {}) is not inside the {}x{} image",
                r.width, r.height, r.x, r.y, original.0, original.1
            ));
        }
        img = img.crop_imm(r.x, r.y, r.width, r.height);
    }
    let untouched = region.is_none() && img.width().max(img.height()) <= fit.max_edge;
    // The file as it is when it already fits and is a format every provider takes.
    if untouched
        && bytes.len() <= fit.max_bytes
        && matches!(format, ImageFormat::Png | ImageFormat::Jpeg)
    {
        let mime = mime_of(format);
        return Ok(model_image(bytes, mime, &img, original));
    }
    if img.width().max(img.height()) > fit.max_edge {
        img = img.resize(
            fit.max_edge,
            fit.max_edge,
            image::imageops::FilterType::Triangle,
        );
    }
    loop {
        if let Some((encoded, mime)) = encode_within(&img, fit.max_bytes)? {
            return Ok(model_image(&encoded, mime, &img, original));
        }
        if img.width().max(img.height()) <= 64 {
            return Err("the image cannot be made small enough".into());
        }
        img = img.resize(
            img.width() * 3 / 4,
            img.height() * 3 / 4,
            image::imageops::FilterType::Triangle,
        );
    }
}

/// PNG when it fits (sharp text and diagrams), else JPEG at falling quality; None when
/// nothing fits at this size.
fn encode_within(
    img: &DynamicImage,
    max_bytes: usize,
) -> Result<Option<(Vec<u8>, &'static str)>, String> {
    let mut png = Vec::new();
    img.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| format!("could not encode the image: {e}"))?;
    if png.len() <= max_bytes {
        return Ok(Some((png, "image/png")));
    }
    let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
    for quality in [85, 70, 55] {
        let mut jpeg = Vec::new();
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, quality);
        rgb.write_with_encoder(encoder)
            .map_err(|e| format!("could not encode the image: {e}"))?;
        if jpeg.len() <= max_bytes {
            return Ok(Some((jpeg, "image/jpeg")));
        }
    }
    Ok(None)
}

fn mime_of(f: ImageFormat) -> &'static str {
    match f {
        ImageFormat::Jpeg => "image/jpeg",
        _ => "image/png",
    }
}

fn model_image(
    bytes: &[u8],
    mime: &'static str,
    img: &DynamicImage,
    original: (u32, u32),
) -> ModelImage {
    ModelImage {
        data_url: format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ),
        mime,
        width: img.width(),
        height: img.height(),
        original,
    }
}

#[cfg(test)]
#[path = "media_tests.rs"]
mod tests;
