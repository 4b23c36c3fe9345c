//! Windows path confinement: drive letters, UNC, verbatim prefixes, `..`, case. Pure, so it
//! runs on every platform.

use super::*;

fn p(s: &str) -> WinPath {
    parse(s).unwrap().unwrap()
}

fn roots() -> Vec<WinPath> {
    vec![p(r"C:\Users\dev\repo"), p(r"\\build\share\cache")]
}

fn ok(raw: &str) -> String {
    confine(&roots(), &roots()[0], raw, true)
        .unwrap_or_else(|e| panic!("{raw}: {e}"))
        .to_string()
}

fn refused(raw: &str) -> String {
    match confine(&roots(), &roots()[0], raw, true) {
        Ok(p) => panic!("{raw} was allowed as {p}"),
        Err(e) => e,
    }
}

#[test]
fn drive_letters_and_separators() {
    assert_eq!(ok(r"src\main.rs"), r"C:\Users\dev\repo\src\main.rs");
    assert_eq!(ok("src/main.rs"), r"C:\Users\dev\repo\src\main.rs");
    assert_eq!(ok(r"C:\Users\dev\repo\a\b"), r"C:\Users\dev\repo\a\b");
    assert_eq!(ok(r"c:/users/dev/repo/a"), r"C:\users\dev\repo\a");
    assert_eq!(ok(r"C:\Users\dev\repo"), r"C:\Users\dev\repo");
    assert!(refused(r"D:\Users\dev\repo\a").contains("outside the workspace roots"));
    assert!(refused(r"C:\Users\dev\repository\a").contains("outside"));
    assert!(refused(r"C:\Windows\System32\drivers\etc\hosts").contains("outside"));
    // Rooted on the current drive: from C:\, not from the workspace.
    assert!(refused(r"\Windows\win.ini").contains(r"C:\Windows\win.ini"));
}

#[test]
fn dot_dot_is_folded_and_never_climbs_out() {
    assert_eq!(ok(r"src\..\docs\.\a.md"), r"C:\Users\dev\repo\docs\a.md");
    assert!(refused(r"..\other\x").contains(r"C:\Users\dev\other\x"));
    assert!(refused(r"src\..\..\..\..\..\..\Windows").contains(r"C:\Windows"));
    assert!(refused(r"C:\Users\dev\repo\..\repo2").contains("outside"));
    assert!(refused("src/../../repo2/x").contains("outside"));
    // `..` at the root stays at the root.
    assert_eq!(p(r"C:\..\..\x").to_string(), r"C:\x");
}

#[test]
fn unc_and_verbatim_prefixes() {
    assert_eq!(
        ok(r"\\build\share\cache\obj\a.o"),
        r"\\build\share\cache\obj\a.o"
    );
    assert_eq!(ok(r"\\BUILD\Share\cache\x"), r"\\BUILD\Share\cache\x");
    assert!(refused(r"\\build\other\cache\x").contains("outside"));
    assert!(refused(r"\\evil\share\cache\x").contains("outside"));
    assert!(refused(r"\\build\share\cache\..\secrets").contains("outside"));
    // What canonicalize returns on Windows is the same place as the plain form.
    assert_eq!(ok(r"\\?\C:\Users\dev\repo\src"), r"C:\Users\dev\repo\src");
    assert_eq!(ok(r"\\?\UNC\build\share\cache\y"), r"\\build\share\cache\y");
    assert!(refused(r"\\?\D:\x").contains("outside"));
    assert!(refused(r"\\?\UNC\build\share\elsewhere").contains("outside"));
}

#[test]
fn device_and_ambiguous_forms_are_refused() {
    for raw in [
        r"\\.\PhysicalDrive0",
        r"\\.\C:\Users\dev\repo\x",
        r"\\?\Volume{26a21bda-a627-11d7-9931-806e6f6e6963}\x",
        r"\\?\GLOBALROOT\Device\HarddiskVolume1",
    ] {
        assert!(refused(raw).contains("device path"), "{raw}");
    }
    assert!(refused(r"C:x.txt").contains("drive-relative"));
    for raw in [
        r"src\a.txt:hidden",
        r"src\a.txt::$DATA",
        r"src\NUL",
        r"src\con.txt",
        r"src\COM1",
        r"src\x.",
        r"src\x ",
        r"src\... \y",
    ] {
        assert!(refused(raw).contains("reads differently"), "{raw}");
    }
    assert!(refused(r"\\server").contains("without a share"));
    assert!(refused(r"\\server\").contains("without a share"));
}

#[test]
fn case_follows_the_volume() {
    let r = p(r"C:\Users\dev\repo");
    let shouted = p(r"C:\USERS\DEV\REPO\SRC");
    assert!(is_within(&shouted, &r, true));
    // A case-sensitive folder (WSL's per-directory flag): another spelling is another place.
    assert!(!is_within(&shouted, &r, false));
    assert!(
        is_within(&p(r"c:\Users\dev\repo\src"), &r, false),
        "drive letters ignore case"
    );
    // Non-ASCII case folding.
    let umlaut = p(r"C:\Benutzer\Jörg");
    assert!(is_within(&p(r"C:\BENUTZER\JÖRG\x"), &umlaut, true));
    assert!(!is_within(&p(r"C:\BENUTZER\JÖRG\x"), &umlaut, false));
}

#[test]
fn relative_paths_have_no_root_of_their_own() {
    assert_eq!(parse(r"src\x").unwrap(), None);
    assert_eq!(parse("").unwrap(), None);
    assert!(parse(r"C:\a").unwrap().is_some());
}
