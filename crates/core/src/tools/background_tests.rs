use super::*;

fn tasks(home: &Path, persist: bool) -> BackgroundTasks {
    BackgroundTasks::new(home, "s1", persist, EventSink::discard())
}

#[test]
fn past_the_running_limit_a_task_is_refused_with_a_clear_message() {
    let home = tempfile::tempdir().unwrap();
    let t = tasks(home.path(), false);
    for _ in 0..MAX_RUNNING {
        t.register("c", "sleep 1", "", None, false).unwrap();
    }
    let err = t.register("c", "sleep 1", "", None, false).unwrap_err();
    assert!(err.contains("16 background tasks are running"), "{err}");
    // One that ends makes room.
    let ended = ExecResult {
        exit_code: Some(0),
        output: String::new(),
        timed_out: false,
        cancelled: false,
        duration: Duration::from_secs(1),
    };
    t.finish("b1", Ok(ended), "was stopped");
    t.register("c", "sleep 1", "", None, false).unwrap();
    assert!(t.stop("b99").unwrap_err().contains("No task with id `b99`"));
}

#[test]
fn a_task_that_prints_forever_keeps_a_bounded_file_and_tail() {
    let home = tempfile::tempdir().unwrap();
    let t = tasks(home.path(), false);
    let (record, file, _) = t.register("c", "yes", "", None, false).unwrap();
    let mut file = Some(file);
    let chunk = "y\n".repeat(32 * 1024);
    let mut sent = 0u64;
    while sent <= MAX_OUTPUT_BYTES + 1024 * 1024 {
        t.output(&record.id, &chunk, &mut file);
        sent += chunk.len() as u64;
    }
    let len = std::fs::metadata(&record.output_path).unwrap().len();
    assert!(len <= MAX_OUTPUT_BYTES + 200, "{len}");
    let kept = t.get(&record.id).unwrap();
    assert_eq!(kept.output_bytes, sent);
    assert!(kept.tail.len() <= TAIL_BYTES * 2);
    let text = read_tail(&record.output_path, 200).unwrap();
    assert!(text.contains("is not kept; the task goes on"), "{text}");
}

#[test]
fn a_resumed_session_knows_its_tasks_and_hears_of_those_its_agent_left_running() {
    let home = tempfile::tempdir().unwrap();
    {
        let t = tasks(home.path(), true);
        let (record, mut file, _) = t
            .register("c1", "npm run dev", "dev server", None, false)
            .unwrap();
        let mut f = Some(file.try_clone().unwrap());
        t.output(&record.id, "listening on 3000\n", &mut f);
        file.flush().unwrap();
    }
    let t = tasks(home.path(), true);
    let list = t.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].status, BackgroundStatus::Stopped);
    assert_eq!(list[0].tail(100), "listening on 3000\n");
    let told = t.take_notifications();
    assert_eq!(told.len(), 1);
    assert_eq!(
        told[0].outcome(),
        "was stopped when the agent that ran it exited"
    );
    assert!(t.take_notifications().is_empty());
    // New tasks get new ids.
    assert_eq!(
        t.register("c2", "true", "", None, false).unwrap().0.id,
        "b2"
    );
}
