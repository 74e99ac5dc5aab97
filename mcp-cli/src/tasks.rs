//! `mcp call` of a tool run as a task: its status messages as progress
//! lines on stderr, its result on stdout like any call's, and on Ctrl-C a
//! `tasks/cancel` for it ([`cancel_running`]) before exit 130. Both wire
//! forms: 2025-11-25 (the client asks: `--task`, or a tool whose
//! `taskSupport` is `required`) and the 2026-07-28 extension
//! `io.modelcontextprotocol/tasks` (the server decides, on any call to a
//! server that declares the extension: see [`modern`]).

use std::sync::Mutex;

use mcp_client::{Client, TaskCall, TaskEra, TaskOptions, TaskTicket};
use mcp_proto::Era;
use mcp_proto::schema::{CallToolResult, TASKS_EXTENSION, Task, TaskSupport};
use serde_json::value::RawValue;

use crate::args::Options;
use crate::connect::max_request_time;
use crate::failure::Failure;
use crate::progress::say;
use crate::tool_list::ToolList;
use mcp_cli::terminal::line;

/// `mcp tasks …`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub(crate) enum TasksAction {
    /// Every task the server keeps for this session, all pages (tasks/list;
    /// 2025-11-25 only: the 2026-07-28 extension has no list)
    List,
    /// One task's status (tasks/get)
    Get {
        /// The task's id
        #[arg(value_name = "ID")]
        id: String,
    },
    /// A finished task's result, as a tool call's (tasks/result, or in
    /// 2026-07-28 tasks/get polled until the task ends; waits for the
    /// task, up to --timeout × 10)
    Result {
        /// The task's id
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Cancel a task (tasks/cancel)
    Cancel {
        /// The task's id
        #[arg(value_name = "ID")]
        id: String,
    },
}

/// The task `mcp call` is waiting for, if any: Ctrl-C cancels it.
static RUNNING: Mutex<Option<String>> = Mutex::new(None);

/// How long a `tasks/cancel` after Ctrl-C may take.
const CANCEL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether calls go the task way because the server may answer any call
/// with a task: a 2026-07-28 server that declares the tasks extension
/// (the client declares it too, so such a server may; the task path then
/// follows a task and prints a synchronous answer as any call's).
pub(crate) fn modern(client: &Client) -> bool {
    client.era() == Some(Era::Modern)
        && client
            .server()
            .is_some_and(|s| s.capabilities.has_extension(TASKS_EXTENSION))
}

/// Whether `tool` must run as a task ([`Client::must_call_as_task`]): the
/// call's shared `tools/list` ([`ToolList`]) is asked only of a server that
/// takes tool calls as tasks. A listing that fails counts as "no": the call
/// then goes as a plain one, and the server says why if it refuses it.
pub(crate) async fn required(client: &Client, tools: &ToolList<'_>, tool: &str) -> bool {
    if !client.must_call_as_task(TaskSupport::Required) {
        return false;
    }
    match tools.find(tool).await {
        Ok(found) => found.is_some_and(|t| client.must_call_as_task(t.task_support())),
        Err(e) => {
            tracing::debug!(error = %e, "tools/list before a call failed");
            false
        }
    }
}

/// Calls `tool` as a task and waits for its result (deadline: the longest
/// a request may take, `--timeout` × 10).
pub(crate) async fn call(
    client: &Client,
    opts: &Options,
    tool: &str,
    args: Option<&RawValue>,
) -> Result<(), Failure> {
    let empty = RawValue::from_string("{}".into()).map_err(|e| Failure::Usage(e.to_string()))?;
    let args = args.unwrap_or(&empty);
    let options = TaskOptions::new()
        .deadline(max_request_time(opts))
        .on_status(|t| {
            let message = t.status_message.as_deref().map(line).unwrap_or_default();
            say(format!(
                "mcp: task {}: {}{}{}",
                line(&t.task_id),
                t.status,
                if message.is_empty() { "" } else { ": " },
                message
            ));
        });
    let what = format!("tools/call {tool}");
    let call = client
        .call_tool_as_task(tool, args, options)
        .await
        .map_err(|e| Failure::from_client(&what, &e))?;
    let result = match call {
        TaskCall::Started(handle) => {
            let id = handle.id().to_owned();
            let first = handle.task();
            let message = first
                .status_message
                .as_deref()
                .map(line)
                .unwrap_or_default();
            say(format!(
                "mcp: task {} started: {}{}{}",
                line(&id),
                first.status,
                if message.is_empty() { "" } else { ": " },
                message
            ));
            set_running(Some(id));
            let r = handle.result().await;
            set_running(None);
            r.map_err(|e| Failure::from_client(&what, &e))?
        }
        TaskCall::Done(result) => result,
        other => {
            return Err(Failure::fatal(
                "protocol error",
                format!("{what}: an answer this mcp does not know: {other:?}"),
            ));
        }
    };
    print(opts, &result)
}

fn print(opts: &Options, result: &CallToolResult) -> Result<(), Failure> {
    if opts.json {
        let text = serde_json::to_string(result)
            .map_err(|e| Failure::fatal("protocol error", format!("the task's result: {e}")))?;
        crate::out_json(|w| mcp_cli::raw_json::write_pretty(w, &text));
    } else {
        crate::out(&crate::human::call(result));
    }
    if result.is_error() {
        Err(Failure::ToolError)
    } else {
        Ok(())
    }
}

fn set_running(id: Option<String>) {
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = id;
}

/// After Ctrl-C: cancels the task `mcp call` was waiting for, if any.
pub(crate) async fn cancel_running(client: &Client) {
    let Some(id) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return;
    };
    match client
        .cancel_task(id.as_str())
        .timeout(CANCEL_TIMEOUT)
        .await
    {
        Ok(_) => say(format!("mcp: task {} cancelled", line(&id))),
        Err(e) => say(format!(
            "mcp: could not cancel task {}: {}",
            line(&id),
            line(&e.to_string())
        )),
    }
}

/// `mcp tasks list | get ID | result ID | cancel ID`.
pub(crate) async fn run(
    client: &Client,
    opts: &Options,
    action: &TasksAction,
) -> Result<(), Failure> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |e: mcp_client::ClientError| Failure::from_client(&what, &e)
    };
    match action {
        TasksAction::List if client.era() == Some(Era::Modern) => Err(Failure::Usage(
            "the server speaks 2026-07-28, whose tasks extension has no tasks/list: \
             use `mcp tasks get ID` with the id `mcp call` printed"
                .into(),
        )),
        TasksAction::List => {
            let tasks = client
                .list_all::<Task>()
                .await
                .map_err(failed("tasks/list"))?;
            if opts.json {
                print_json(&tasks)?;
            } else {
                let lines: String = tasks.iter().map(|t| task_line(t) + "\n").collect();
                crate::out(&lines);
            }
            Ok(())
        }
        TasksAction::Get { id } => {
            let got = client
                .get_task(id.as_str())
                .await
                .map_err(failed("tasks/get"))?;
            if opts.json {
                print_json(&got)
            } else {
                crate::out(&(task_line(&got.task) + "\n"));
                Ok(())
            }
        }
        TasksAction::Result { id } => {
            // Followed as any task: polled until it ends, then its result
            // (tasks/result in 2025-11-25; inline in tasks/get in 2026-07-28).
            let era = TaskEra::of(client.era().unwrap_or(Era::Legacy));
            let what = match era {
                TaskEra::Extension => "tasks/get",
                _ => "tasks/result",
            };
            let ticket = TaskTicket::new("mcp", id.as_str(), era);
            let options = TaskOptions::new().deadline(max_request_time(opts));
            let handle = client
                .resume_task(&ticket, options)
                .await
                .map_err(failed(what))?;
            let result = handle.result().await.map_err(failed(what))?;
            print(opts, &result)
        }
        TasksAction::Cancel { id } => {
            let r = client
                .cancel_task(id.as_str())
                .await
                .map_err(failed("tasks/cancel"))?;
            if opts.json {
                print_json(&r)
            } else {
                let line = match r.task() {
                    Some(t) => task_line(&t),
                    None => format!("{} cancelled", line(id)),
                };
                crate::out(&(line + "\n"));
                Ok(())
            }
        }
    }
}

/// `ID  status  message`, server text made safe.
fn task_line(t: &Task) -> String {
    let mut s = format!("{}  {}", line(&t.task_id), t.status);
    if let Some(m) = &t.status_message {
        s.push_str("  ");
        s.push_str(&line(m));
    }
    s
}

fn print_json(v: &impl serde::Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string(v).map_err(|e| {
        Failure::fatal("protocol error", format!("could not print the answer: {e}"))
    })?;
    crate::out_json(|w| mcp_cli::raw_json::write_pretty(w, &text));
    Ok(())
}
