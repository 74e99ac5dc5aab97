//! Codex's `~/.codex/config.toml`, `[mcp_servers.NAME]` tables, as the
//! Codex repository's `docs/config.md` ("MCP integration") documents them:
//! a stdio server has `command`, `args`, `env`, `env_vars`, `cwd`; a
//! Streamable HTTP one has `url`, `bearer_token_env_var`, `http_headers`,
//! `env_http_headers`; either may have `enabled`, `enabled_tools`,
//! `disabled_tools` and timeouts. Codex expands nothing in these strings.

use serde_json::{Map, Value};

use crate::entry::parse_tool_policy;

use crate::entry::{
    EnvHeader, RawServer, RawTransport, ShapeProblem, opt_string, parse_sandbox, string_array,
    string_map,
};

pub(super) const KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "required",
    "oauth",
    "scopes",
];

pub(super) fn parse(o: &Map<String, Value>) -> Result<RawServer, ShapeProblem> {
    let transport = match (opt_string(o, "command")?, opt_string(o, "url")?) {
        (Some(_), Some(_)) => {
            return Err(ShapeProblem::shape(
                "url",
                "a server has either \"command\" (stdio) or \"url\" (Streamable HTTP), not both",
            ));
        }
        (Some(command), None) if !command.is_empty() => RawTransport::Stdio {
            command,
            args: string_array(o, "args")?.unwrap_or_default(),
            // `env_vars` names variables Codex passes on from its own
            // environment; a server started here inherits the whole
            // environment, so they reach it already.
            env: string_map(o, "env")?,
            cwd: opt_string(o, "cwd")?,
            env_file: None,
            sandbox: parse_sandbox(o)?,
        },
        (None, Some(url)) if !url.is_empty() => {
            let mut env_headers = Vec::new();
            if let Some(var) = opt_string(o, "bearer_token_env_var")? {
                env_headers.push(EnvHeader {
                    name: "Authorization".into(),
                    var,
                    prefix: "Bearer ",
                    optional: false,
                });
            }
            // "replaced with the environment variable ... if set and
            // non-empty" (Codex's provider docs): optional.
            for (name, var) in string_map(o, "env_http_headers")? {
                env_headers.push(EnvHeader {
                    name,
                    var: var.expose().to_owned(),
                    prefix: "",
                    optional: true,
                });
            }
            RawTransport::Remote {
                sse: false,
                url,
                headers: string_map(o, "http_headers")?,
                oauth: None,
                env_headers,
            }
        }
        _ => {
            return Err(ShapeProblem::Missing {
                field: "command",
                hint: " (set \"command\" for a stdio server, or \"url\" for a Streamable HTTP one)",
            });
        }
    };
    let mut server = RawServer::new(transport);
    server.tool_policy = parse_tool_policy(o)?;
    server.disabled = matches!(o.get("enabled"), Some(Value::Bool(false)));
    server.include_tools = string_array(o, "enabled_tools")?;
    server.exclude_tools = string_array(o, "disabled_tools")?.unwrap_or_default();
    Ok(server)
}
