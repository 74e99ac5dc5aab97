//! The commands that talk to a connected server: `info`, the four lists,
//! `call`, `read` and `prompt` (`tasks` has its own module). Each prints
//! what the server sent (see the crate docs' "Output") and maps a failure to
//! its exit status through [`Failure`].

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Client, ClientError};
use mcp_proto::RawJson;
use mcp_proto::schema::{CallToolResult, ProgressParams, ResourceContents, ServerCapabilities};
use serde_json::value::RawValue;

use crate::args::{Command, Options, Search, Server};
use crate::connect::max_request_time;
use crate::failure::Failure;
use crate::progress::ProgressBar;
use crate::tool_list::ToolList;
use crate::{config, form, human, out, out_json, tasks};
use mcp_cli::raw_json::{Object, write_pretty, write_pretty_array};

pub(crate) async fn command(client: &Client, opts: &Options) -> Result<(), Failure> {
    let verbose = opts.verbose > 0;
    match &opts.command {
        Command::Info => info(client, opts.json),
        Command::Tools(None) => {
            list(client, &opts.server, opts.json, verbose, Listing::Tools).await
        }
        Command::Tools(Some(search)) => {
            search_tools(client, &opts.server, opts.json, verbose, search).await
        }
        Command::Resources => {
            list(client, &opts.server, opts.json, verbose, Listing::Resources).await
        }
        Command::Templates => {
            list(client, &opts.server, opts.json, verbose, Listing::Templates).await
        }
        Command::Prompts => list(client, &opts.server, opts.json, verbose, Listing::Prompts).await,
        Command::Call {
            tool,
            args,
            typed,
            task,
        } => {
            let tools = ToolList::new(client);
            let typed_args;
            let args = if typed.is_empty() {
                args.as_deref()
            } else {
                typed_args = typed_arguments(&tools, tool, typed).await?;
                Some(typed_args.as_str())
            };
            call(client, &tools, opts, tool, args, *task).await
        }
        Command::Tasks(action) => tasks::run(client, opts, action).await,
        Command::Read { uri } => read(client, opts, uri).await,
        Command::Prompt { name, args } => prompt(client, opts, name, args.as_deref()).await,
        Command::Diff { file, update } => {
            crate::cassette::diff::run(client, file, *update, opts.json).await
        }
        // Handled before a server is picked (or without a client).
        Command::Servers { .. }
        | Command::Bridge { .. }
        | Command::Replay { .. }
        | Command::DemoServer
        | Command::Completions(_)
        | Command::Trust { .. }
        | Command::Approve { .. } => Ok(()),
    }
}

fn info(client: &Client, json: bool) -> Result<(), Failure> {
    let Some(s) = client.server() else {
        return Err(Failure::fatal(
            "protocol error",
            "the handshake finished but the client has no server information",
        ));
    };
    // Only what the server said: `supportedVersions` of a 2026-07-28
    // `server/discover` result, as sent; `initialize` never says.
    let said = Object::parse(s.raw.get())
        .ok()
        .and_then(|o| o.get("supportedVersions").map(|v| v.get().to_owned()));
    if !json {
        let versions: Option<Vec<String>> =
            said.as_deref().and_then(|v| serde_json::from_str(v).ok());
        out(&human::info(&s, versions.as_deref()));
        return Ok(());
    }
    let mut doc = format!(
        "{{\"serverInfo\":{},\"protocolVersion\":{},\"capabilities\":{},\"instructions\":{}",
        enc(&s.implementation),
        enc(&s.protocol_version.as_str()),
        enc(&s.capabilities),
        enc(&s.instructions),
    );
    if let Some(versions) = said {
        doc.push_str(",\"supportedVersions\":");
        doc.push_str(&versions);
    }
    doc.push('}');
    out_json(|w| write_pretty(w, &doc));
    Ok(())
}

/// JSON text of a value the client decoded (`serverInfo`, capabilities) for `info --json`.
fn enc<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The four paginated lists.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listing {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl Listing {
    pub(crate) fn method(self) -> &'static str {
        match self {
            Listing::Tools => "tools/list",
            Listing::Resources => "resources/list",
            Listing::Templates => "resources/templates/list",
            Listing::Prompts => "prompts/list",
        }
    }

    /// The result's array member.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Resources => "resources",
            Listing::Templates => "resourceTemplates",
            Listing::Prompts => "prompts",
        }
    }

    /// The capability a server advertises when it serves this list.
    fn capability(self) -> &'static str {
        match self {
            Listing::Tools => "tools",
            Listing::Resources | Listing::Templates => "resources",
            Listing::Prompts => "prompts",
        }
    }

    pub(crate) fn offered(self, caps: &ServerCapabilities) -> bool {
        match self {
            Listing::Tools => caps.tools.is_some(),
            Listing::Resources | Listing::Templates => caps.resources.is_some(),
            Listing::Prompts => caps.prompts.is_some(),
        }
    }

    fn human(self, items: &[Box<RawValue>], verbose: bool) -> String {
        match self {
            Listing::Tools => human::tools(items, verbose, ""),
            Listing::Resources => human::resources(items, verbose),
            Listing::Templates => human::templates(items, verbose),
            Listing::Prompts => human::prompts(items, verbose),
        }
    }
}

/// Every item of the list, each page's array concatenated, following
/// `nextCursor` (with [`PageCursors`](mcp_client::PageCursors): the client's
/// [`max_list_pages`](Client::max_list_pages), no repeated cursor, none
/// over [`MAX_CURSOR_LEN`](mcp_client::MAX_CURSOR_LEN)). Only the items are
/// kept (copies of their text): each page is dropped once they are taken.
pub(crate) async fn list_items(
    client: &Client,
    what: Listing,
) -> Result<Vec<Box<RawValue>>, Failure> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cursor {
        next_cursor: Option<String>,
    }
    let method = what.method();
    let key = what.key();
    let failed = |e: ClientError| Failure::from_client(method, &e);
    let mut items = Vec::new();
    let mut cursors = mcp_client::PageCursors::new(method, client.max_list_pages());
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => RawJson::from_value(&serde_json::json!({ "cursor": c })).ok(),
            None => None,
        };
        let page = client
            .request_raw(method.to_owned(), params)
            .await
            .map_err(failed)?;
        let next: Cursor = page.decode().map_err(|e| {
            failed(ClientError::Decode {
                method: method.to_owned(),
                source: e.into(),
            })
        })?;
        let obj = Object::parse(page.get()).map_err(|e| {
            Failure::fatal(
                "protocol error",
                format!("{method} result is not an object: {e}"),
            )
        })?;
        if obj.get(key).is_some() {
            items.extend(obj.array(key).ok_or_else(|| {
                Failure::fatal(
                    "protocol error",
                    format!("{method} result's `{key}` is not an array"),
                )
            })?);
        }
        drop(obj);
        drop(page);
        match cursors.next(next.next_cursor).map_err(failed)? {
            Some(c) => cursor = Some(c),
            None => return Ok(items),
        }
    }
}

/// Prints the list (see [`list_items`]). A server that
/// did not advertise the capability is not asked: the list is empty, and
/// the human output says why.
///
/// Tools of a configured server: those its `includeTools`/`excludeTools`
/// let the host offer.
async fn list(
    client: &Client,
    server: &Server,
    json: bool,
    verbose: bool,
    what: Listing,
) -> Result<(), Failure> {
    if let Some(s) = client.server()
        && !what.offered(&s.capabilities)
    {
        if json {
            out("[]\n");
        } else {
            let cap = what.capability();
            out(&format!(
                "(none: the server does not offer {cap}; it did not advertise the `{cap}` capability)\n"
            ));
        }
        return Ok(());
    }
    let mut items = list_items(client, what).await?;
    if let (Listing::Tools, Server::Configured(cfg)) = (what, server) {
        items = crate::policy::hold_back(cfg, config::offered_tools(cfg, items))?;
    }
    if json {
        out_json(|w| write_pretty_array(w, items.iter().map(|b| &**b)));
    } else {
        out(&what.human(&items, verbose));
    }
    Ok(())
}

/// `tools --search`: the server's tools (as `tools` lists them) that best
/// match the query, best first, printed as `tools` prints them.
async fn search_tools(
    client: &Client,
    server: &Server,
    json: bool,
    verbose: bool,
    search: &Search,
) -> Result<(), Failure> {
    let info = client.server();
    let mut items = match &info {
        Some(s) if !Listing::Tools.offered(&s.capabilities) => Vec::new(),
        _ => list_items(client, Listing::Tools).await?,
    };
    let name = match server {
        Server::Configured(cfg) => cfg.name.clone(),
        _ => info
            .as_ref()
            .map(|s| s.implementation.name.clone())
            .unwrap_or_default(),
    };
    if let Server::Configured(cfg) = server {
        items = config::offered_tools(cfg, items);
    }
    let listed = [crate::search::Listed {
        server: &name,
        instructions: info.as_ref().and_then(|s| s.instructions.as_deref()),
        tools: &items,
    }];
    let ranked: Vec<Box<RawValue>> = crate::search::rank(&listed, &search.query, search.limit)
        .into_iter()
        .filter_map(|(_, t)| items.get(t).cloned())
        .collect();
    if json {
        out_json(|w| write_pretty_array(w, ranked.iter().map(|b| &**b)));
    } else {
        out(&human::tools(&ranked, verbose, ""));
    }
    Ok(())
}

/// Parses JSON_ARGS: must be a JSON object. Returns its text, unchanged.
fn json_args(args: Option<&str>, what: &str) -> Result<Option<Box<RawValue>>, Failure> {
    let Some(text) = args else {
        return Ok(None);
    };
    let raw: Box<RawValue> = serde_json::from_str(text)
        .map_err(|e| Failure::Usage(format!("JSON_ARGS for {what} is not valid JSON: {e}")))?;
    if !raw.get().trim_start().starts_with('{') {
        return Err(Failure::Usage(format!(
            "JSON_ARGS for {what} must be a JSON object, like '{{\"a\": 1}}'"
        )));
    }
    Ok(Some(raw))
}

/// `{"<key>": <name>, "arguments": <args>}` with the arguments' text as typed.
fn named_params(key: &str, name: &str, args: Option<&RawValue>) -> Result<RawJson, Failure> {
    let name = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".into());
    let text = match args {
        Some(a) => format!("{{\"{key}\":{name},\"arguments\":{}}}", a.get()),
        None => format!("{{\"{key}\":{name}}}"),
    };
    RawJson::from_string(text).map_err(|e| Failure::Usage(format!("bad arguments: {e}")))
}

fn result_object(method: &str, raw: &RawJson) -> Result<Object, Failure> {
    Object::parse(raw.get()).map_err(|e| {
        Failure::fatal(
            "protocol error",
            format!("the {method} result is not an object: {e}"),
        )
    })
}

/// Waits for `answer` as the client's request timeout would (`timeout`
/// since the last progress, `max` in all), except that the time a form is
/// on the terminal does not count: while the person answers, the deadline
/// waits, and it starts again when the answer is sent. `None`: timed out
/// (dropping `answer` sends the server `notifications/cancelled`).
async fn server_time<T>(
    answer: impl std::future::Future<Output = T>,
    timeout: Duration,
    max: Duration,
    progressed: &tokio::sync::Notify,
) -> Option<T> {
    use tokio::time::Instant;
    tokio::pin!(answer);
    let start = Instant::now();
    let mut last = start;
    loop {
        let (answered, spent) = form::user_time();
        if let Some(t) = answered.map(Instant::from_std)
            && t > last
        {
            last = t;
        }
        // While a question is on the terminal no deadline runs (looked at
        // again after `timeout`); the cap counts only the server's time.
        let deadline = if form::asking() {
            Instant::now() + timeout
        } else {
            (last + timeout).min(start + max + spent)
        };
        tokio::select! {
            r = &mut answer => return Some(r),
            () = progressed.notified() => last = Instant::now(),
            () = tokio::time::sleep_until(deadline) => {
                if form::asking() {
                    last = Instant::now();
                    continue;
                }
                // A form closed since: the loop starts the deadline again.
                if form::user_time().0.map(Instant::from_std).is_some_and(|t| t > last) {
                    continue;
                }
                return None;
            }
        }
    }
}

/// Sends a request the server may answer with questions for the user
/// (`tools/call`, `prompts/get`, `resources/read`), with progress drawn on
/// stderr when `progress`, and waits for its answer. Its deadline is kept
/// here rather than by the client, because the time a person spends
/// answering the server's questions is not the server's
/// ([`server_time`]). `what`: the tool, prompt or URI, for errors.
async fn ask(
    client: &Client,
    opts: &Options,
    method: &'static str,
    params: RawJson,
    what: &str,
    progress: bool,
) -> Result<RawJson, Failure> {
    let bar = Arc::new(ProgressBar::new());
    let progressed = Arc::new(tokio::sync::Notify::new());
    let mut request = client.request_raw(method, Some(params)).no_timeout();
    if progress {
        let (bar, progressed) = (bar.clone(), progressed.clone());
        request = request.on_progress(move |p: ProgressParams| {
            bar.draw(&p);
            progressed.notify_one();
        });
    }
    let raw = server_time(
        request.send(),
        opts.timeout,
        max_request_time(opts),
        &progressed,
    )
    .await;
    bar.finish();
    let Some(raw) = raw else {
        return Err(Failure::fatal(
            "timeout",
            format!(
                "{method} {what}: no response within {:.1} s; sent the server a cancellation \
                 (notifications/cancelled) and stopped it (a longer --timeout may help)",
                opts.timeout.as_secs_f64()
            ),
        ));
    };
    raw.map_err(|e| Failure::from_client(&format!("{method} {what}"), &e))
}

/// The `key=value` items of `mcp call` as the JSON object the tool's
/// `inputSchema` (asked with `tools/list`) describes; any mistake is a
/// usage error before the call is sent ([`crate::typed_args`]).
async fn typed_arguments(
    tools: &ToolList<'_>,
    tool: &str,
    typed: &[String],
) -> Result<String, Failure> {
    let tools = tools
        .all()
        .await
        .map_err(|e| Failure::from_client("tools/list", e))?;
    let Some(t) = tools.iter().find(|t| t.name == tool) else {
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        return Err(Failure::Usage(format!(
            "the server has no tool {:?}, so key=value arguments cannot be typed (tools: {})",
            mcp_cli::terminal::line(tool),
            mcp_cli::terminal::line(&names.join(", "))
        )));
    };
    let schema: serde_json::Value = serde_json::from_str(t.input_schema.get()).map_err(|e| {
        Failure::fatal(
            "protocol error",
            format!("tool {tool:?}: its inputSchema is not JSON: {e}"),
        )
    })?;
    let value = crate::typed_args::build(&schema, typed, &mut std::io::stdin().lock())
        .map_err(|e| Failure::Usage(format!("tool {tool:?}: {}", mcp_cli::terminal::line(&e))))?;
    Ok(value.to_string())
}

/// How long `mcp call` still waits for the tool's UI lookup once the call
/// is over: a listing slower than the call plus this is not waited for.
const UI_LOOKUP_GRACE: Duration = Duration::from_secs(1);

/// `mcp call`, and on a terminal's reading (not `--json`) where the tool's
/// MCP Apps UI resource is, if it has one: looked up (`tools/list`) while
/// the call runs, and waited for at most [`UI_LOOKUP_GRACE`] after it.
async fn call(
    client: &Client,
    tools: &ToolList<'_>,
    opts: &Options,
    tool: &str,
    args: Option<&str>,
    task: bool,
) -> Result<(), Failure> {
    let lookup = ui_resource_of(tools, tool, !opts.json);
    tokio::pin!(lookup);
    let call = call_tool(client, tools, opts, tool, args, task);
    tokio::pin!(call);
    let mut ui = None;
    let outcome = tokio::select! {
        outcome = &mut call => outcome,
        found = &mut lookup => {
            ui = Some(found);
            call.await
        }
    };
    let ui = match ui {
        Some(found) => found,
        None => tokio::time::timeout(UI_LOOKUP_GRACE, lookup)
            .await
            .ok()
            .flatten(),
    };
    if let Some(uri) = ui {
        crate::progress::say(mcp_cli::terminal::line(&format!(
            "UI: {uri} (`mcp read {uri}` shows its HTML)"
        )));
    }
    outcome
}

/// The UI resource of `tool` (`_meta.ui.resourceUri` or the older
/// `_meta["ui/resourceUri"]`), when `wanted`; a listing that fails is no UI.
async fn ui_resource_of(tools: &ToolList<'_>, tool: &str, wanted: bool) -> Option<String> {
    if !wanted {
        return None;
    }
    tools
        .find(tool)
        .await
        .inspect_err(|e| tracing::debug!(error = %e, "tools/list for the tool's UI failed"))
        .ok()??
        .ui()?
        .resource_uri
}

async fn call_tool(
    client: &Client,
    tools: &ToolList<'_>,
    opts: &Options,
    tool: &str,
    args: Option<&str>,
    task: bool,
) -> Result<(), Failure> {
    let json = opts.json;
    let args = json_args(args, &format!("tool {tool:?}"))?;
    crate::policy::authorize_call(client, tools, opts, tool, args.as_deref()).await?;
    if task || tasks::modern(client) || tasks::required(client, tools, tool).await {
        return tasks::call(client, opts, tool, args.as_deref()).await;
    }
    let params = named_params("name", tool, args.as_deref())?;
    let raw = ask(client, opts, "tools/call", params, tool, true).await?;
    let result: CallToolResult = serde_json::from_str(raw.get()).map_err(|e| {
        Failure::fatal(
            "protocol error",
            format!("the tools/call result is malformed: {e}"),
        )
    })?;
    if json {
        out_json(|w| write_pretty(w, raw.get()));
    } else {
        out(&human::call(&result));
    }
    if result.is_error() {
        Err(Failure::ToolError)
    } else {
        Ok(())
    }
}

async fn read(client: &Client, opts: &Options, uri: &str) -> Result<(), Failure> {
    let uri_json = serde_json::to_string(uri).unwrap_or_else(|_| "\"\"".into());
    let params = RawJson::from_string(format!("{{\"uri\":{uri_json}}}"))
        .map_err(|e| Failure::Usage(format!("bad URI: {e}")))?;
    let raw = ask(client, opts, "resources/read", params, uri, false).await?;
    if opts.json {
        out_json(|w| write_pretty(w, raw.get()));
        return Ok(());
    }
    let obj = result_object("resources/read", &raw)?;
    let contents: Vec<ResourceContents> = obj
        .get("contents")
        .map(|c| serde_json::from_str(c.get()))
        .transpose()
        .map_err(|e| {
            Failure::fatal(
                "protocol error",
                format!("the resources/read result is malformed: {e}"),
            )
        })?
        .unwrap_or_default();
    out(&human::read(&contents));
    Ok(())
}

async fn prompt(
    client: &Client,
    opts: &Options,
    name: &str,
    args: Option<&str>,
) -> Result<(), Failure> {
    let args = json_args(args, &format!("prompt {name:?}"))?;
    let params = named_params("name", name, args.as_deref())?;
    let raw = ask(client, opts, "prompts/get", params, name, false).await?;
    if opts.json {
        out_json(|w| write_pretty(w, raw.get()));
    } else {
        out(&human::prompt(&result_object("prompts/get", &raw)?));
    }
    Ok(())
}
