//! Images the user names by path, as the data URLs every wire carries.

use base64::Engine;
use std::io::Read;
use std::path::Path;

/// Largest image attached from a file.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Largest picture attached, in pixels: its header is read before anything is decoded.
const MAX_IMAGE_PIXELS: u64 = 100_000_000;

/// A local image file as a data URL; the error starts with the path. The user named the
/// file, so it is read as given (a turn's `LocalImage`, `exec --image`), not through the
/// agent's workspace confinement. Only a regular file is read (checked on the open file, so a
/// link to `/dev/zero` or a FIFO is refused before a byte is read), at most
/// [`MAX_IMAGE_BYTES`] of it; its format comes from its bytes, never its name.
pub fn image_data_url(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let file = open_no_wait(path).map_err(|e| format!("{shown}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(format!("{shown} is larger than 20 MiB"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(format!("{shown} is larger than 20 MiB"));
    }
    let mime = sniff(&bytes).map_err(|e| format!("{shown}: {e}"))?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// The MIME type of image `bytes`, from their magic and header (png, jpeg, gif, webp), with
/// the dimensions checked before any decode.
pub fn sniff(bytes: &[u8]) -> Result<&'static str, String> {
    let not_image = || "not a png, jpeg, gif or webp image".to_string();
    let format = image::guess_format(bytes).map_err(|_| not_image())?;
    let mime = match format {
        image::ImageFormat::Png => "image/png",
        image::ImageFormat::Jpeg => "image/jpeg",
        image::ImageFormat::Gif => "image/gif",
        image::ImageFormat::WebP => "image/webp",
        _ => return Err(not_image()),
    };
    let (w, h) = image::ImageReader::with_format(std::io::Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(|e| format!("a broken {} header: {e}", &mime[6..]))?;
    if u64::from(w) * u64::from(h) > MAX_IMAGE_PIXELS {
        return Err(format!("{w}×{h} pixels is more than 100 megapixels"));
    }
    Ok(mime)
}

/// The MIME type of a base64 image a client sent (an ACP image block): bounded, decoded and
/// sniffed as a file's bytes are; the type the client claimed is not trusted.
pub fn sniff_base64(data: &str) -> Result<&'static str, String> {
    // Base64 takes 4 characters for 3 bytes.
    if data.len() as u64 > MAX_IMAGE_BYTES / 3 * 4 + 4 {
        return Err("larger than 20 MiB".into());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    sniff(&bytes)
}

/// Opens `path` for reading without waiting on a FIFO that has no writer.
fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1×1 PNG.
    const PNG: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60,
        0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0x7a, 0x5e, 0xab, 0x3f, 0x00, 0x00, 0x00, 0x00,
        0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];

    #[test]
    fn the_format_comes_from_the_bytes_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let named_jpg = dir.path().join("a.jpg");
        std::fs::write(&named_jpg, PNG).unwrap();
        assert!(
            image_data_url(&named_jpg)
                .unwrap()
                .starts_with("data:image/png;base64,")
        );
        let text = dir.path().join("notes.png");
        std::fs::write(&text, "just text").unwrap();
        let err = image_data_url(&text).unwrap_err();
        assert!(
            err.contains("notes.png") && err.contains("not a png"),
            "{err}"
        );
        assert!(image_data_url(&dir.path().join("missing.png")).is_err());
        // A PNG signature with a broken header is refused before any decode.
        let broken = dir.path().join("b.png");
        std::fs::write(&broken, &PNG[..12]).unwrap();
        assert!(image_data_url(&broken).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_device_or_a_fifo_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.png");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = image_data_url(&zero).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let fifo = dir.path().join("pipe.png");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            image_data_url(&fifo)
                .unwrap_err()
                .contains("not a regular file")
        );
    }
}
