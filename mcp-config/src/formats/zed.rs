//! Zed's `settings.json`, `context_servers`, as Zed's "Model Context
//! Protocol" page (zed.dev/docs/ai/mcp) documents them: a custom server's
//! `command` with `args` and `env` (older files: `"command": {"path",
//! "args", "env"}` and `"source": "custom"`), or a remote one's `url` and
//! `headers`; `enabled`. A server that a Zed extension provides has only
//! `settings` for that extension and is not startable outside Zed.

use serde_json::{Map, Value};

use crate::entry::parse_tool_policy;

use crate::entry::{
    RawServer, RawTransport, ShapeProblem, opt_string, parse_sandbox, string_array, string_map,
};

pub(super) const KEYS: &[&str] = &[
    "source", "enabled", "command", "args", "env", "url", "headers", "timeout", "settings",
];

/// Whether the entry is a server of its own (not an extension's).
pub(super) fn is_server(o: &Map<String, Value>) -> bool {
    ["command", "url"]
        .iter()
        .any(|k| o.get(*k).is_some_and(|v| !v.is_null()))
}

pub(super) fn parse(o: &Map<String, Value>) -> Result<RawServer, ShapeProblem> {
    let transport = match (o.get("command"), opt_string(o, "url")?) {
        (Some(Value::String(command)), None) if !command.is_empty() => RawTransport::Stdio {
            command: command.clone(),
            args: string_array(o, "args")?.unwrap_or_default(),
            env: string_map(o, "env")?,
            cwd: None,
            env_file: None,
            sandbox: parse_sandbox(o)?,
        },
        // The older nested form.
        (Some(Value::Object(c)), None) => {
            let Some(command) = opt_string(c, "path")?.filter(|p| !p.is_empty()) else {
                return Err(ShapeProblem::Missing {
                    field: "command",
                    hint: " (\"command\": {\"path\": ...} needs \"path\")",
                });
            };
            RawTransport::Stdio {
                command,
                args: string_array(c, "args")?.unwrap_or_default(),
                env: string_map(c, "env")?,
                cwd: None,
                env_file: None,
                sandbox: parse_sandbox(o)?,
            }
        }
        (None | Some(Value::Null), Some(url)) if !url.is_empty() => RawTransport::Remote {
            sse: false,
            url,
            headers: string_map(o, "headers")?,
            oauth: None,
            env_headers: Vec::new(),
        },
        (None | Some(Value::Null), None)
            if o.contains_key("settings")
                || opt_string(o, "source")?.as_deref() == Some("extension") =>
        {
            return Err(ShapeProblem::Unsupported {
                message: "a Zed extension provides this server: it runs inside Zed only".into(),
            });
        }
        (None | Some(Value::Null), None) => {
            return Err(ShapeProblem::Missing {
                field: "command",
                hint: " (set \"command\" for a local server, or \"url\" for a remote one)",
            });
        }
        _ => {
            return Err(ShapeProblem::shape(
                "command",
                "expected a string (or {\"path\", \"args\", \"env\"}), and no \"url\" beside it",
            ));
        }
    };
    let mut server = RawServer::new(transport);
    server.tool_policy = parse_tool_policy(o)?;
    server.disabled = matches!(o.get("enabled"), Some(Value::Bool(false)));
    Ok(server)
}
