//! The qwen-code harness, the default for Qwen models on Chat: Qwen Code's tools
//! (`run_shell_command`, `read_file`, `write_file`, `edit`, `glob`, `grep_search`,
//! `list_directory`, `todo_write`, `agent`, plan mode and `skill`) with their parameters,
//! limits and result texts, its prompt structure, and its opening exchange (a context message
//! with the date, OS, folder and a listing, answered `Got it. Thanks for the context!`). The
//! names older Qwen Code releases used (`replace`, `search_file_content`) answer when called
//! without being listed.

mod prompt;
mod run;
mod specs;

use crate::harness::HarnessInfo;
use std::sync::Arc;

use super::claude_code as cc;
use super::session_tools::{PlanModeTool, PlanTool, SkillTool};
use super::{Harness, PromptEnv};
use crate::config::WireApi;
use crate::model::{AssistantReply, HistoryItem};
use crate::tools::question::{QuestionTool, parse_claude_style, render_claude_style};
use crate::tools::table::{FnTool, Tool, ToolTable, Wording};

/// Qwen Code's results carry their own words.
const WORDING: Wording = Wording {
    prefix: "",
    wrap: None,
};

pub(crate) struct QwenCode;

/// This harness's entry in the registry (`harness/mod.rs`).
pub(super) const INFO: HarnessInfo = HarnessInfo {
    name: "qwen-code",
    label: "Qwen Code",
    about: "Qwen Code's tools (run_shell_command, read_file, edit, write_file, glob, grep_search, todo_write, agent, plan mode); the default for Qwen on Chat",
    wires: &[WireApi::Chat],
};

impl Harness for QwenCode {
    fn request_shape(&self) -> crate::model::RequestShape {
        crate::model::RequestShape {
            max_tokens: Some(("max_tokens", 8_000)),
            ..Default::default()
        }
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn system_prompt(&self, env: &PromptEnv) -> String {
        prompt::system(env)
    }

    fn initial_context(&self, env: &PromptEnv) -> Vec<HistoryItem> {
        let today = chrono::Local::now().format("%A, %B %-d, %Y").to_string();
        vec![
            HistoryItem::User {
                text: prompt::context(env, &today),
                images: vec![],
                synthetic: true,
            },
            HistoryItem::Assistant(AssistantReply::new(
                "Got it. Thanks for the context!",
                vec![],
            )),
        ]
    }

    fn reminder(&self, env: &PromptEnv, _today: &str) -> Option<String> {
        Some(prompt::reminder(env))
    }

    fn tools(&self, env: &PromptEnv) -> ToolTable {
        table(env)
    }

    fn external_tool_name(&self, name: &str) -> String {
        cc::mcp_name(name)
    }
}

fn plan_tool(spec: crate::model::ToolSpec, which: PlanTool) -> Arc<dyn Tool> {
    Arc::new(PlanModeTool {
        spec,
        which,
        wording: WORDING,
    })
}

/// Qwen Code's tools in the order it registers them.
fn table(env: &PromptEnv) -> ToolTable {
    let mut tools = vec![FnTool::subagent(
        WORDING,
        specs::agent(),
        cc::describe_agent,
        |a, c| Box::pin(run::agent(c, a)),
    )];
    if !env.skills.is_empty() {
        tools.push(Arc::new(SkillTool {
            spec: specs::skill(),
            skills: env.skills.clone(),
            wording: WORDING,
            param: "skill",
            render: crate::skills::invocation,
        }));
    }
    tools.extend([
        FnTool::plain(
            WORDING,
            specs::list_directory(),
            run::describe_path,
            |a, c| Box::pin(run::list_directory(c, a)),
        ),
        FnTool::plain(WORDING, specs::read_file(), cc::describe_read, |a, c| {
            Box::pin(run::read_file(c, a))
        }),
        FnTool::plain(WORDING, specs::grep_search(), cc::describe_grep, |a, c| {
            Box::pin(run::grep_search(c, a))
        }),
        FnTool::plain(WORDING, specs::glob(), cc::describe_glob, |a, c| {
            Box::pin(run::glob(c, a))
        }),
        FnTool::plain(WORDING, specs::edit(), cc::describe_edit, |a, c| {
            Box::pin(run::edit(c, a))
        }),
        FnTool::plain(WORDING, specs::write_file(), cc::describe_write, |a, c| {
            Box::pin(run::write_file(c, a))
        }),
        FnTool::plain(
            WORDING,
            specs::run_shell_command(),
            cc::describe_bash,
            |a, c| Box::pin(run::shell(c, a)),
        ),
        FnTool::plain(WORDING, specs::todo_write(), run::describe_todos, |a, _| {
            Box::pin(async move { run::todo_write(&a) })
        }),
        QuestionTool::tool(
            specs::ask_user_question(),
            |a| parse_claude_style(a, "multiSelect"),
            render_claude_style,
            WORDING,
        ),
        plan_tool(specs::enter_plan_mode(), PlanTool::Enter),
        plan_tool(specs::exit_plan_mode(), PlanTool::Exit),
    ]);
    ToolTable::new(tools).with_hidden(vec![
        FnTool::plain(
            WORDING,
            specs::legacy_replace(),
            cc::describe_edit,
            |a, c| Box::pin(run::edit(c, a)),
        ),
        FnTool::plain(
            WORDING,
            specs::legacy_search(),
            cc::describe_grep,
            |a, c| Box::pin(run::grep_search(c, a)),
        ),
    ])
}
