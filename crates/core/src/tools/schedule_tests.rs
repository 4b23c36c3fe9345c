use super::*;
use chrono::TimeZone as _;

fn at(h: u32, m: u32) -> DateTime<Local> {
    Local.with_ymd_and_hms(2026, 12, 4, h, m, 0).unwrap()
}

#[test]
fn jobs_are_checked_made_listed_and_deleted() {
    let home = tempfile::tempdir().unwrap();
    let s = Schedule::new(home.path(), "s1", true, true);
    assert!(
        s.create("* * *", "x", true, at(9, 0))
            .unwrap_err()
            .contains("five-field")
    );
    assert!(
        s.create("61 * * * *", "x", true, at(9, 0))
            .unwrap_err()
            .contains("not a valid cron")
    );
    assert!(
        s.create("* * * * *", " ", true, at(9, 0))
            .unwrap_err()
            .contains("must not be empty")
    );
    let long = "x".repeat(MAX_PROMPT_BYTES + 1);
    assert!(
        s.create("* * * * *", &long, true, at(9, 0))
            .unwrap_err()
            .contains("at most 8192")
    );
    let job = s
        .create("*/15 * * * *", "check the build", true, at(9, 1))
        .unwrap();
    assert_eq!(job.next, at(9, 15));
    assert_eq!(job.id.len(), 8);
    // Kept with the session: a resume reads it back.
    assert_eq!(
        Schedule::new(home.path(), "s1", true, true).list(),
        vec![job.clone()]
    );
    assert!(s.delete("nope").unwrap_err().contains(&job.id));
    s.delete(&job.id).unwrap();
    assert!(s.list().is_empty());
}

#[test]
fn a_session_that_ends_after_its_turn_keeps_no_schedule() {
    let home = tempfile::tempdir().unwrap();
    let s = Schedule::new(home.path(), "s1", false, false);
    let err = s.create("* * * * *", "x", true, at(9, 0)).unwrap_err();
    assert!(err.contains("cannot keep a schedule"), "{err}");
    assert_eq!(s.next_due(), None);
}

#[test]
fn due_jobs_fire_once_with_missed_fires_counted_and_end_when_done() {
    let home = tempfile::tempdir().unwrap();
    let s = Schedule::new(home.path(), "s1", false, true);
    let every = s.create("*/10 * * * *", "poll", true, at(9, 1)).unwrap();
    let once = s
        .create("30 9 * * *", "remind me", false, at(9, 1))
        .unwrap();
    assert_eq!(s.next_due(), Some(at(9, 10)));
    assert_eq!(s.take_due(at(9, 5)), None);
    // At 9:35 the recurring job missed three fires (9:10, 9:20, 9:30): it runs once.
    let fire = s.take_due(at(9, 35)).unwrap();
    assert_eq!(
        (fire.job.id.as_str(), fire.coalesced),
        (every.id.as_str(), 3)
    );
    assert!(fire.message().contains("coalescedCount=\"3\""));
    assert!(fire.message().contains("<prompt>\npoll\n</prompt>"));
    let fire = s.take_due(at(9, 35)).unwrap();
    assert_eq!(fire.job.id, once.id);
    assert_eq!(s.take_due(at(9, 35)), None);
    // The one-off is gone; the recurring one runs next at 9:40.
    assert_eq!(s.list().len(), 1);
    assert_eq!(s.next_due(), Some(at(9, 40)));
    // A week on, the recurring job has ended.
    let later = at(9, 35) + RECURRING_LIFETIME + chrono::Duration::hours(1);
    assert!(s.take_due(later).is_some());
    assert!(s.list().is_empty());
}

#[test]
fn a_wakeup_fires_once_with_its_own_prompt_and_is_kept_for_a_resume() {
    let home = tempfile::tempdir().unwrap();
    let s = Schedule::new(home.path(), "s1", true, true);
    let job = s
        .wakeup(
            chrono::Duration::seconds(90),
            "check the build",
            "look at ci",
            at(9, 0),
        )
        .unwrap();
    assert_eq!(job.next, at(9, 0) + chrono::Duration::seconds(90));
    assert_eq!(job.wakeup.as_deref(), Some("check the build"));
    assert!(
        s.wakeup(chrono::Duration::seconds(60), "r", " ", at(9, 0))
            .is_err()
    );
    let again = Schedule::new(home.path(), "s1", true, true);
    assert_eq!(again.list(), vec![job.clone()]);
    assert_eq!(again.next_due(), Some(job.next));
    assert!(again.take_due(at(9, 1)).is_none());
    let fire = again.take_due(at(9, 2)).unwrap();
    assert_eq!(fire.message(), "look at ci");
    assert_eq!(fire.coalesced, 1);
    // It ran once: nothing is left, on disk either.
    assert!(again.take_due(at(10, 0)).is_none());
    assert!(
        Schedule::new(home.path(), "s1", true, true)
            .list()
            .is_empty()
    );
    // A session that ends after its turn keeps no wakeup either.
    let closed = Schedule::new(home.path(), "s2", false, false);
    assert!(
        closed
            .wakeup(chrono::Duration::seconds(60), "r", "p", at(9, 0))
            .unwrap_err()
            .contains("cannot keep a schedule")
    );
}
