//! `mcp trust --pending` and `mcp trust --approve SERVER[/TOOL]...`: the
//! tools held back because they are new or changed since their server's
//! tools were approved, shown as diffs and approved from the pin store
//! (no server is started: what is approved is what the last run saw).

use std::io::Write;

use mcp_cli::terminal::line;
use mcp_config::ToolChange;

use crate::failure::Failure;
use crate::policy::{pins, pins_path, store_failure};

/// The server's name in a pin key (`/path/.mcp.json#name`).
fn short(key: &str) -> &str {
    key.rsplit_once('#').map_or(key, |(_, name)| name)
}

/// Whether `asked` (`SERVER`, `SERVER/TOOL`, by name or by pin key) names
/// the change.
fn names(asked: &str, c: &ToolChange) -> bool {
    [short(&c.server), c.server.as_str()]
        .iter()
        .any(|s| asked == *s || asked == format!("{s}/{}", c.tool))
}

/// Shows (`approve` empty: `--pending`) or approves the held-back tools.
pub(crate) fn command(approve: &[String]) -> Result<(), Failure> {
    let store = pins().ok_or_else(|| {
        Failure::Usage(
            "nowhere to keep pinned tools: set HOME, XDG_CONFIG_HOME or MCP_PINS_FILE".into(),
        )
    })?;
    let pending = store.pending().map_err(|e| store_failure(&e))?;
    let mut out = std::io::stdout().lock();
    if approve.is_empty() {
        if pending.is_empty() {
            let _ = writeln!(out, "no tool is held back");
        }
        for c in &pending {
            let _ = write!(out, "{}", c.diff());
            let _ = writeln!(
                out,
                "  approve it with `mcp trust --approve {}/{}`\n",
                line(short(&c.server)),
                line(&c.tool)
            );
        }
        return Ok(());
    }
    let mut chosen: Vec<&ToolChange> = Vec::new();
    for asked in approve {
        let matched: Vec<&ToolChange> = pending.iter().filter(|c| names(asked, c)).collect();
        let mut servers: Vec<&str> = matched.iter().map(|c| c.server.as_str()).collect();
        servers.sort_unstable();
        servers.dedup();
        match servers.len() {
            0 => {
                return Err(Failure::Usage(format!(
                    "no held-back tool matches {}: `mcp trust --pending` lists them{}",
                    line(asked),
                    pins_path()
                        .map(|p| format!(" (from {})", line(&p.display().to_string())))
                        .unwrap_or_default()
                )));
            }
            1 => chosen.extend(matched),
            _ => {
                let keys: Vec<String> = servers.iter().map(|s| format!("'{}'", line(s))).collect();
                return Err(Failure::Usage(format!(
                    "{} names servers of several configuration files ({}): name one as shown",
                    line(asked),
                    keys.join(", ")
                )));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    chosen.retain(|c| seen.insert((&c.server, &c.tool)));
    for c in chosen {
        let _ = write!(out, "{}", c.diff());
        store.approve(c).map_err(|e| store_failure(&e))?;
        let _ = writeln!(
            out,
            "approved tool {} of {} as shown above\n",
            line(&c.tool),
            line(&c.server)
        );
    }
    Ok(())
}
