//! Each option's value read from its text: headers, protocol revisions,
//! durations, sizes, log levels, and root directories as `file://` URIs.
//! Each returns a one-line error clap prints after the option's name.

use std::time::Duration;

use mcp_client::VersionChoice;
use mcp_proto::ProtocolVersion;
use mcp_proto::schema::{LoggingLevel, Root};

use super::{Stop, usage};

/// Longest accepted `--timeout` (one day), so `10 ×` it stays far from overflow.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

pub(super) fn parse_header(s: &str) -> Result<(String, String), String> {
    let Some((name, value)) = s.split_once(':') else {
        return Err(format!("needs \"Name: value\", got {s:?}"));
    };
    let name = name.trim();
    let valid_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid_name {
        return Err(format!("invalid header name {name:?}"));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("invalid header value for {name}"));
    }
    Ok((name.to_owned(), value.to_owned()))
}

pub(super) fn parse_protocol(s: &str) -> Result<VersionChoice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(VersionChoice::Auto);
    }
    ProtocolVersion::parse(s)
        .map(VersionChoice::Pinned)
        .ok_or_else(|| {
            let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
            format!(
                "unknown protocol revision (known: {}, or auto)",
                known.join(", ")
            )
        })
}

pub(super) fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| "needs a number of seconds".to_owned())?;
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(format!(
            "must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--max-message-size`: bytes, or a number with a binary unit (`B`,
/// `KiB`, `MiB`, `GiB`; case and a space before the unit do not matter).
pub(super) fn parse_size(s: &str) -> Result<usize, String> {
    let bad = || format!("needs a size in bytes or like 64MiB, got {s:?}");
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    let bytes = n
        .checked_mul(scale)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(bad)?;
    if bytes == 0 {
        return Err("must be more than 0 bytes".into());
    }
    Ok(bytes)
}

pub(super) fn parse_log_level(s: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::from(s.to_ascii_lowercase())).map_err(|_| {
        "needs one of debug, info, notice, warning, error, critical, alert, emergency".to_owned()
    })
}

/// `--root DIR`: the canonical path (symlinks resolved, so the server sees
/// where the files are) as a `file://` URI, named after its last component.
pub(super) fn root(dir: &std::path::Path) -> Result<Root, Stop> {
    let path =
        std::fs::canonicalize(dir).map_err(|e| usage(format!("--root {}: {e}", dir.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Root::new(file_uri(&path)).with_name(name))
}

/// `file://` and the absolute path, percent-encoded (RFC 8089, RFC 3986
/// path characters: unreserved, sub-delims, `:`, `@` and `/` stay).
pub(super) fn file_uri(path: &std::path::Path) -> String {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    // Windows: `C:\a b` -> `file:///C:/a%20b`.
    #[cfg(not(unix))]
    let bytes = {
        let s = path.to_string_lossy().replace('\\', "/");
        let s = s.trim_start_matches("//?/").to_owned();
        if s.starts_with('/') {
            s
        } else {
            format!("/{s}")
        }
        .into_bytes()
    };
    let mut uri = String::from("file://");
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}
