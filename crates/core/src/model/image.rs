//! Images the user names by path, as the data URLs every wire carries.

use base64::Engine;
use std::path::Path;

/// Largest image attached from a file.
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// A local image file as a data URL; the error starts with the path. The user named the
/// file, so it is read as given (a turn's `LocalImage`, `exec --image`), not through the
/// agent's workspace confinement.
pub fn image_data_url(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return Err(format!("{shown}: unsupported type (png, jpeg, gif, webp)")),
    };
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {e}"))?
        .len();
    if size > MAX_IMAGE_BYTES {
        return Err(format!("{shown} is larger than 20 MiB"));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_images_become_data_urls() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("a.png");
        std::fs::write(&png, [0x89, b'P', b'N', b'G']).unwrap();
        assert_eq!(
            image_data_url(&png).unwrap(),
            "data:image/png;base64,iVBORw=="
        );
        let txt = dir.path().join("a.txt");
        std::fs::write(&txt, "x").unwrap();
        assert!(
            image_data_url(&txt)
                .unwrap_err()
                .contains("unsupported type")
        );
        assert!(image_data_url(&dir.path().join("missing.png")).is_err());
    }
}
