use super::*;

fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .unwrap();
    out
}

#[test]
fn a_small_png_goes_as_it_is() {
    let bytes = png(40, 30);
    let img = prepare(&bytes, KIMI_FIT, None).unwrap();
    assert_eq!((img.width, img.height, img.original), (40, 30, (40, 30)));
    assert_eq!(img.mime, "image/png");
    let b64 = img.data_url.strip_prefix("data:image/png;base64,").unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
        bytes
    );
}

#[test]
fn a_big_image_is_scaled_to_the_edge_and_the_byte_budget() {
    let img = prepare(&png(3000, 1500), KIMI_FIT, None).unwrap();
    // Within the edge, the shape kept; smaller still if the bytes need it (this one's
    // pattern compresses badly).
    assert!(img.width <= 2000 && img.width >= 1000, "{}", img.width);
    assert_eq!(img.width, img.height * 2);
    assert_eq!(img.original, (3000, 1500));
    let b64 = img.data_url.split_once(',').unwrap().1;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert!(bytes.len() <= KIMI_FIT.max_bytes, "{}", bytes.len());
}

#[test]
fn a_region_is_cropped_and_checked() {
    let region = Region {
        x: 10,
        y: 5,
        width: 20,
        height: 10,
    };
    let img = prepare(&png(40, 30), KIMI_FIT, Some(region)).unwrap();
    assert_eq!((img.width, img.height), (20, 10));
    let outside = Region {
        x: 30,
        y: 0,
        width: 20,
        height: 10,
    };
    let err = prepare(&png(40, 30), KIMI_FIT, Some(outside)).unwrap_err();
    assert!(err.contains("is not inside the 40x30 image"), "{err}");
}

#[test]
fn not_an_image_a_corrupt_one_and_a_bomb_are_clear_errors() {
    assert!(
        prepare(b"hello, world", KIMI_FIT, None)
            .unwrap_err()
            .contains("not a PNG")
    );
    let mut cut = png(100, 100);
    cut.truncate(cut.len() / 2);
    assert!(
        prepare(&cut, KIMI_FIT, None)
            .unwrap_err()
            .contains("not a readable image")
    );
    // A PNG header that claims 100,000 x 100,000 pixels is refused before any allocation.
    let mut bomb = png(1, 1);
    bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let err = prepare(&bomb, KIMI_FIT, None).unwrap_err();
    assert!(err.contains("not a readable image"), "{err}");
}
