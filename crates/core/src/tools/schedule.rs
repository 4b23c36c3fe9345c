//! Scheduled prompts (`CronCreate`, `CronList`, `CronDelete`, `ScheduleWakeup`): a session
//! that stays open runs a prompt on a five-field cron schedule, in local time, or once after
//! a delay (a wakeup). Jobs are per session, at most
//! [`MAX_JOBS`], prompts at most [`MAX_PROMPT_BYTES`]; they are written beside the session's
//! background tasks, so a resumed session keeps them. A recurring job ends after
//! [`RECURRING_LIFETIME`] (as Claude Code's and Kimi Code's do). Due jobs run when the session
//! is idle (`agent/task.rs`): fires missed while it was busy run once, counted.

use chrono::{DateTime, Local};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Jobs a session keeps at most.
pub(crate) const MAX_JOBS: usize = 50;
/// The longest prompt a job takes.
pub(crate) const MAX_PROMPT_BYTES: usize = 8 * 1024;
/// A recurring job ends this long after it was made.
pub(crate) const RECURRING_LIFETIME: chrono::Duration = chrono::Duration::days(7);

/// One scheduled prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) cron: String,
    pub(crate) prompt: String,
    pub(crate) recurring: bool,
    pub(crate) created: DateTime<Local>,
    /// When it runs next.
    pub(crate) next: DateTime<Local>,
    /// A wakeup (ScheduleWakeup) runs once, at `next`, and has no cron; this is its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) wakeup: Option<String>,
}

/// A job that is due, and how many of its fires it stands for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fire {
    pub(crate) job: Job,
    pub(crate) coalesced: u32,
}

impl Fire {
    /// The user message the turn runs (Kimi Code's shape; a wakeup's prompt as it was given).
    pub(crate) fn message(&self) -> String {
        if self.job.wakeup.is_some() {
            return self.job.prompt.clone();
        }
        format!(
            "<cron-fire jobId=\"{}\" cron=\"{}\" recurring=\"{}\" coalescedCount=\"{}\">\n<prompt>\n{}\n</prompt>\n</cron-fire>",
            self.job.id, self.job.cron, self.job.recurring, self.coalesced, self.job.prompt
        )
    }
}

/// A session's scheduled prompts.
pub(crate) struct Schedule {
    /// Where the jobs are kept (None: a session that keeps nothing).
    path: Option<PathBuf>,
    /// The session stays open between turns (else no job can run, and none is made).
    pub(crate) runs: bool,
    jobs: Mutex<Vec<Job>>,
    /// Wakes the session's idle wait when the jobs change.
    pub(crate) changed: tokio::sync::Notify,
}

impl Schedule {
    /// The schedule of session `session_id`, read back from `<home>/tasks/<session_id>/`
    /// when it persists.
    pub(crate) fn new(home: &Path, session_id: &str, persist: bool, runs: bool) -> Schedule {
        let path = persist.then(|| home.join("tasks").join(session_id).join("cron.json"));
        let jobs = path
            .as_deref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Schedule {
            path,
            runs,
            jobs: Mutex::new(jobs),
            changed: tokio::sync::Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Job>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes a job; an error the model can act on when the schedule or prompt is wrong.
    pub(crate) fn create(
        &self,
        cron: &str,
        prompt: &str,
        recurring: bool,
        now: DateTime<Local>,
    ) -> Result<Job, String> {
        let prompt = check_prompt(self.runs, prompt)?;
        let next = next_after(cron, now)?;
        self.push(Job {
            id: format!("{:08x}", rand_id()),
            cron: cron.trim().to_string(),
            prompt,
            recurring,
            created: now,
            next,
            wakeup: None,
        })
    }

    /// Makes a wakeup: `prompt` runs once, `delay` after `now`.
    pub(crate) fn wakeup(
        &self,
        delay: chrono::Duration,
        reason: &str,
        prompt: &str,
        now: DateTime<Local>,
    ) -> Result<Job, String> {
        let prompt = check_prompt(self.runs, prompt)?;
        self.push(Job {
            id: format!("{:08x}", rand_id()),
            cron: String::new(),
            prompt,
            recurring: false,
            created: now,
            next: now + delay,
            wakeup: Some(reason.trim().to_string()),
        })
    }

    fn push(&self, job: Job) -> Result<Job, String> {
        let mut jobs = self.lock();
        if jobs.len() >= MAX_JOBS {
            return Err(format!(
                "This session has {MAX_JOBS} scheduled jobs, the most it keeps. Delete one with CronDelete first."
            ));
        }
        jobs.push(job.clone());
        self.save(&jobs);
        drop(jobs);
        self.changed.notify_waiters();
        Ok(job)
    }

    pub(crate) fn delete(&self, id: &str) -> Result<Job, String> {
        let mut jobs = self.lock();
        let Some(i) = jobs.iter().position(|j| j.id == id.trim()) else {
            let known: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
            return Err(match known.is_empty() {
                true => format!("No job with id `{id}`: nothing is scheduled."),
                false => format!("No job with id `{id}`. Scheduled: {}.", known.join(", ")),
            });
        };
        let job = jobs.remove(i);
        self.save(&jobs);
        drop(jobs);
        self.changed.notify_waiters();
        Ok(job)
    }

    pub(crate) fn list(&self) -> Vec<Job> {
        self.lock().clone()
    }

    /// When the next job is due.
    pub(crate) fn next_due(&self) -> Option<DateTime<Local>> {
        self.runs
            .then(|| self.lock().iter().map(|j| j.next).min())
            .flatten()
    }

    /// The first job due at `now`, its next run set (or the job removed: it ran once, or
    /// its week is over).
    pub(crate) fn take_due(&self, now: DateTime<Local>) -> Option<Fire> {
        if !self.runs {
            return None;
        }
        let mut jobs = self.lock();
        let i = (0..jobs.len())
            .filter(|i| jobs[*i].next <= now)
            .min_by_key(|i| jobs[*i].next)?;
        let job = jobs[i].clone();
        if job.wakeup.is_some() {
            jobs.remove(i);
            self.save(&jobs);
            return Some(Fire { job, coalesced: 1 });
        }
        let mut coalesced = 1;
        let mut next = next_after(&job.cron, job.next).ok();
        while let Some(n) = next.filter(|n| *n <= now && coalesced < 1000) {
            coalesced += 1;
            next = next_after(&job.cron, n).ok();
        }
        // Past the count's bound, the next run is simply the first after now.
        if next.is_some_and(|n| n <= now) {
            next = next_after(&job.cron, now).ok();
        }
        match next {
            Some(n) if job.recurring && n < job.created + RECURRING_LIFETIME => jobs[i].next = n,
            _ => {
                jobs.remove(i);
            }
        }
        self.save(&jobs);
        Some(Fire { job, coalesced })
    }

    fn save(&self, jobs: &[Job]) {
        let Some(path) = &self.path else {
            return;
        };
        let wrote = path
            .parent()
            .map_or(Ok(()), super::background::create_private_dir)
            .and_then(|()| {
                let json = serde_json::to_vec_pretty(jobs).map_err(std::io::Error::other)?;
                let tmp = path.with_extension("json.tmp");
                super::background::write_private(&tmp, &json)?;
                std::fs::rename(&tmp, path)
            });
        if let Err(e) = wrote {
            tracing::warn!("could not record the schedule in {}: {e}", path.display());
        }
    }
}

/// The prompt of a new job, trimmed; an error when the session cannot keep one or it is
/// empty or too long.
fn check_prompt(runs: bool, prompt: &str) -> Result<String, String> {
    if !runs {
        return Err("This session ends after its turn, so it cannot keep a schedule. Scheduled prompts run in sessions that stay open: the terminal, an editor (ACP) or the app-server.".into());
    }
    let prompt = prompt.trim();
    if prompt.is_empty() {
        return Err("`prompt` must not be empty.".into());
    }
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(format!(
            "`prompt` is {} bytes; at most {MAX_PROMPT_BYTES} are kept.",
            prompt.len()
        ));
    }
    Ok(prompt.to_string())
}

/// The next time `cron` (five fields, local time; six with seconds first, our extension)
/// matches after `after`.
pub(crate) fn next_after(cron: &str, after: DateTime<Local>) -> Result<DateTime<Local>, String> {
    let fields = cron.split_whitespace().count();
    if !(5..=6).contains(&fields) {
        return Err(format!(
            "`{cron}` is not a five-field cron expression (minute hour day-of-month month day-of-week), e.g. `*/10 * * * *`."
        ));
    }
    let parsed = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(cron.trim())
        .map_err(|e| format!("`{cron}` is not a valid cron expression: {e}."))?;
    parsed
        .find_next_occurrence(&after, false)
        .map_err(|e| format!("`{cron}` never runs: {e}."))
}

fn rand_id() -> u32 {
    let id = uuid::Uuid::new_v4();
    u32::from_le_bytes(id.as_bytes()[..4].try_into().unwrap_or_default())
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
