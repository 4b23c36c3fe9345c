use super::*;

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[test]
fn a_prefix_added_after_a_cut_keeps_the_names_distinct() {
    // Two 72-character MCP names that share their first 64 characters, as the server's
    // names, then Claude Code's prefix: the last rule applied still leaves them apart.
    let shared = format!("srv__{}", "t".repeat(59));
    let (a, b) = (format!("{shared}_alpha__"), format!("{shared}_beta___"));
    assert_eq!((a.len(), b.len()), (72, 72));
    let mut inner = UniqueNames::default();
    let (ia, ib) = (inner.claim(&a), inner.claim(&b));
    assert_ne!(ia, ib);
    let mut outer = UniqueNames::default();
    let (oa, ob) = (
        outer.claim(&format!("mcp__{ia}")),
        outer.claim(&format!("mcp__{ib}")),
    );
    assert_ne!(oa, ob);
    assert!(valid(&oa) && valid(&ob), "{oa} {ob}");
    assert!(oa.starts_with("mcp__srv__ttt"), "{oa}");
}

#[test]
fn reserved_names_and_lookalikes_get_a_suffix_within_the_limit() {
    let mut names = UniqueNames::reserving(["Bash", "Read"]);
    assert_eq!(names.claim("Bash"), "Bash_2");
    assert_eq!(names.claim("Bash"), "Bash_3");
    assert_eq!(names.claim("Read"), "Read_2");
    // A long name and a short one spelled like its cut form.
    let long = "x".repeat(80);
    let cut = names.claim(&long);
    assert_eq!(cut.len(), MAX_NAME_LEN);
    let again = names.claim(&cut);
    assert_ne!(again, cut);
    assert!(valid(&again) && again.ends_with("_2"), "{again}");
    // Same requests, same order: same names.
    let mut fresh = UniqueNames::reserving(["Bash", "Read"]);
    assert_eq!(fresh.claim("Bash"), "Bash_2");
    assert_eq!(names.claim("é t"), "__t");
}
