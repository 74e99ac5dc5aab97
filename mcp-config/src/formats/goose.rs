//! Goose's `config.yaml`, `extensions`, as its "Configuration Files" guide
//! documents them: `type` `stdio` (`cmd`, `args`, `envs`, `env_keys`) or
//! `streamable_http` (`uri`, `headers`), older files' `sse` (`uri`),
//! `enabled`, `timeout`, `available_tools` (only these tools, when not
//! empty). `builtin` and `platform` extensions run inside Goose and are
//! not startable elsewhere.

use serde_json::{Map, Value};

use crate::entry::parse_tool_policy;

use crate::entry::{
    RawServer, RawTransport, ShapeProblem, opt_string, parse_sandbox, string_array, string_map,
};

pub(super) const KEYS: &[&str] = &[
    "type",
    "name",
    "display_name",
    "description",
    "enabled",
    "bundled",
    "timeout",
    "cmd",
    "args",
    "envs",
    "env_keys",
    "uri",
    "headers",
    "available_tools",
];

/// Whether the entry is an MCP server of its own (`stdio`,
/// `streamable_http`, `sse`).
pub(super) fn is_server(o: &Map<String, Value>) -> bool {
    matches!(
        o.get("type").and_then(Value::as_str),
        Some("stdio" | "streamable_http" | "sse")
    )
}

pub(super) fn parse(o: &Map<String, Value>) -> Result<RawServer, ShapeProblem> {
    let ty = opt_string(o, "type")?;
    let transport = match ty.as_deref() {
        Some("stdio") => {
            let Some(command) = opt_string(o, "cmd")?.filter(|c| !c.is_empty()) else {
                return Err(ShapeProblem::Missing {
                    field: "cmd",
                    hint: " (the program that starts the server)",
                });
            };
            RawTransport::Stdio {
                command,
                args: string_array(o, "args")?.unwrap_or_default(),
                // `env_keys` names secrets Goose keeps in its keyring; a
                // server started here gets them only from the environment.
                env: string_map(o, "envs")?,
                cwd: None,
                env_file: None,
                sandbox: parse_sandbox(o)?,
            }
        }
        Some(kind @ ("streamable_http" | "sse")) => {
            let Some(url) = opt_string(o, "uri")?.filter(|u| !u.is_empty()) else {
                return Err(ShapeProblem::Missing {
                    field: "uri",
                    hint: " (the server's endpoint)",
                });
            };
            RawTransport::Remote {
                sse: kind == "sse",
                url,
                headers: string_map(o, "headers")?,
                oauth: None,
                env_headers: Vec::new(),
            }
        }
        Some(kind @ ("builtin" | "platform" | "frontend" | "inline_python")) => {
            return Err(ShapeProblem::Unsupported {
                message: format!("a Goose {kind} extension runs inside Goose only"),
            });
        }
        Some(other) => {
            return Err(ShapeProblem::UnknownType {
                value: other.to_owned(),
                expected: "\"stdio\", \"streamable_http\" and \"sse\" (\"builtin\" and \"platform\" run inside Goose)",
            });
        }
        None => {
            return Err(ShapeProblem::Missing {
                field: "type",
                hint: " (\"stdio\" or \"streamable_http\")",
            });
        }
    };
    let mut server = RawServer::new(transport);
    server.tool_policy = parse_tool_policy(o)?;
    server.disabled = matches!(o.get("enabled"), Some(Value::Bool(false)));
    server.include_tools = string_array(o, "available_tools")?.filter(|t| !t.is_empty());
    server.description = opt_string(o, "description")?;
    Ok(server)
}
