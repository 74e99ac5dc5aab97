//! Gemini CLI's `settings.json` (`~/.gemini/settings.json`), `mcpServers`,
//! as its `docs/tools/mcp-server.md` documents them: `command` (stdio),
//! `url` (SSE) or `httpUrl` (Streamable HTTP), `headers`, `env`, `cwd`,
//! `timeout`, `trust`, `includeTools`, `excludeTools`, OAuth settings;
//! values may name environment variables as `$VAR` or `${VAR}`. The
//! top-level `mcp.allowed` and `mcp.excluded` lists (the CLI
//! configuration page) choose servers by name.

use serde_json::{Map, Value};

use crate::entry::parse_tool_policy;

use crate::entry::{
    RawServer, RawTransport, ShapeProblem, opt_string, parse_sandbox, string_array, string_map,
};

pub(super) const KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "httpUrl",
    "type",
    "headers",
    "timeout",
    "trust",
    "oauth",
    "authProviderType",
    "targetAudience",
    "targetServiceAccount",
    "extensionName",
];

pub(super) fn parse(o: &Map<String, Value>) -> Result<RawServer, ShapeProblem> {
    let command = opt_string(o, "command")?.filter(|c| !c.is_empty());
    let http_url = opt_string(o, "httpUrl")?.filter(|u| !u.is_empty());
    let url = opt_string(o, "url")?.filter(|u| !u.is_empty());
    let transport = match (command, http_url, url) {
        (Some(command), None, None) => RawTransport::Stdio {
            command,
            args: string_array(o, "args")?.unwrap_or_default(),
            env: string_map(o, "env")?,
            cwd: opt_string(o, "cwd")?,
            env_file: None,
            sandbox: parse_sandbox(o)?,
        },
        (None, Some(url), None) => remote(o, url, false)?,
        (None, None, Some(url)) => {
            // `url` is SSE unless a newer `"type": "http"` says otherwise.
            let sse = match opt_string(o, "type")?.as_deref() {
                None | Some("sse") => true,
                Some("http") => false,
                Some(other) => {
                    return Err(ShapeProblem::UnknownType {
                        value: other.to_owned(),
                        expected: "\"sse\" and \"http\" (with \"url\")",
                    });
                }
            };
            remote(o, url, sse)?
        }
        (None, None, None) => {
            return Err(ShapeProblem::Missing {
                field: "command",
                hint: " (set \"command\", \"httpUrl\" (Streamable HTTP) or \"url\" (SSE))",
            });
        }
        _ => {
            return Err(ShapeProblem::shape(
                "command",
                "a server has one of \"command\", \"httpUrl\" and \"url\"",
            ));
        }
    };
    let mut server = RawServer::new(transport);
    server.tool_policy = parse_tool_policy(o)?;
    server.include_tools = string_array(o, "includeTools")?;
    server.exclude_tools = string_array(o, "excludeTools")?.unwrap_or_default();
    server.description = opt_string(o, "description")?;
    Ok(server)
}

fn remote(o: &Map<String, Value>, url: String, sse: bool) -> Result<RawTransport, ShapeProblem> {
    Ok(RawTransport::Remote {
        sse,
        url,
        headers: string_map(o, "headers")?,
        oauth: None,
        env_headers: Vec::new(),
    })
}

/// `mcp.allowed`: only these servers; `mcp.excluded`: never these.
pub(super) fn apply_lists(root: &Map<String, Value>, name: &str, server: &mut RawServer) {
    let Some(Value::Object(mcp)) = root.get("mcp") else {
        return;
    };
    let names = |key: &str| match mcp.get(key) {
        Some(Value::Array(items)) => Some(items.iter().any(|i| i.as_str() == Some(name))),
        _ => None,
    };
    if names("allowed") == Some(false) || names("excluded") == Some(true) {
        server.disabled = true;
    }
}
