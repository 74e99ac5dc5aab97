//! Windsurf's `~/.codeium/windsurf/mcp_config.json`, as its Cascade MCP
//! page (docs.windsurf.com, "mcp_config.json") documents it: Claude
//! Desktop's `mcpServers` schema, a remote server's endpoint in
//! `serverUrl` (or `url`), `headers`, and `${env:VAR}` interpolation in
//! `command`, `args`, `env`, `serverUrl`, `url` and `headers`.

use serde_json::{Map, Value};

use crate::entry::parse_tool_policy;

use crate::entry::{
    RawServer, RawTransport, ShapeProblem, opt_string, parse_sandbox, string_array, string_map,
};

pub(super) const KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "serverUrl",
    "url",
    "headers",
    "disabledTools",
];

pub(super) fn parse(o: &Map<String, Value>) -> Result<RawServer, ShapeProblem> {
    let url = match opt_string(o, "serverUrl")? {
        Some(u) => Some(u),
        None => opt_string(o, "url")?,
    }
    .filter(|u| !u.is_empty());
    let command = opt_string(o, "command")?.filter(|c| !c.is_empty());
    let transport = match (command, url) {
        (Some(command), None) => RawTransport::Stdio {
            command,
            args: string_array(o, "args")?.unwrap_or_default(),
            env: string_map(o, "env")?,
            cwd: opt_string(o, "cwd")?,
            env_file: None,
            sandbox: parse_sandbox(o)?,
        },
        (None, Some(url)) => RawTransport::Remote {
            sse: false,
            url,
            headers: string_map(o, "headers")?,
            oauth: None,
            env_headers: Vec::new(),
        },
        (Some(_), Some(_)) => {
            return Err(ShapeProblem::shape(
                "serverUrl",
                "a server has either \"command\" or \"serverUrl\", not both",
            ));
        }
        (None, None) => {
            return Err(ShapeProblem::Missing {
                field: "command",
                hint: " (set \"command\" for a local server, or \"serverUrl\" for a remote one)",
            });
        }
    };
    let mut server = RawServer::new(transport);
    server.tool_policy = parse_tool_policy(o)?;
    server.disabled = matches!(o.get("disabled"), Some(Value::Bool(true)));
    server.exclude_tools = string_array(o, "disabledTools")?.unwrap_or_default();
    Ok(server)
}
