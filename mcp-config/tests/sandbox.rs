//! VS Code's `sandboxEnabled` and `sandbox` keys: read, expanded, shown in
//! the trust summary, and turned into a confined command (or a refusal).

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use mcp_config::{
    BuildError, ConfigError, ConfigFile, Launch, Prepared, Resolver, TransportConfig,
};

const VSCODE: &str = r#"{
    // VS Code's documented example, plus denyWrite and deniedDomains
    "servers": {
        "boxed": {
            "type": "stdio", "command": "npx", "args": ["-y", "@example/mcp-server"],
            "sandboxEnabled": true,
            "sandbox": {
                "filesystem": {
                    "allowWrite": ["${workspaceFolder}", "out"],
                    "denyRead": ["${userHome}/.ssh"],
                    "denyWrite": ["${workspaceFolder}/.git"]
                },
                "network": {
                    "allowedDomains": ["api.example.com", "*.cdn.example.com"],
                    "deniedDomains": ["evil.cdn.example.com"]
                }
            }
        },
        "off": {"command": "npx", "sandboxEnabled": false, "sandbox": {"filesystem": {"allowWrite": ["/"]}}},
        "plain": {"command": "npx"},
        "nothing-allowed": {"command": "npx", "sandboxEnabled": true}
    }
}"#;

fn resolver() -> Resolver {
    Resolver::new()
        .workspace_folder("/ws")
        .home("/home/me")
        .env_vars([("X", "1")])
}

fn stdio(name: &str) -> mcp_config::StdioConfig {
    let file = ConfigFile::parse(".vscode/mcp.json", VSCODE, None).unwrap();
    let server = file.resolve_server(name, &resolver()).unwrap().unwrap();
    match server.transport {
        TransportConfig::Stdio(s) => s,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_keys_are_read_and_paths_expanded() {
    let sb = stdio("boxed").sandbox.unwrap();
    assert_eq!(
        sb.allow_write,
        [PathBuf::from("/ws"), PathBuf::from("/ws/out")]
    );
    assert_eq!(sb.deny_read, [PathBuf::from("/home/me/.ssh")]);
    assert_eq!(sb.deny_write, [PathBuf::from("/ws/.git")]);
    assert_eq!(sb.allowed_domains, ["api.example.com", "*.cdn.example.com"]);
    assert_eq!(sb.denied_domains, ["evil.cdn.example.com"]);
    // `sandbox` without `sandboxEnabled: true` is ignored, as VS Code does.
    assert_eq!(stdio("off").sandbox, None);
    assert_eq!(stdio("plain").sandbox, None);
    // Enabled with no rules: nothing writable, no network.
    assert_eq!(
        stdio("nothing-allowed").sandbox,
        Some(mcp_config::SandboxConfig::default())
    );
}

#[test]
fn every_format_honours_the_keys() {
    // Only VS Code documents them; elsewhere a file that asks for a sandbox
    // still gets one (or does not start), never silently none.
    let file = ConfigFile::parse(
        ".mcp.json",
        r#"{"mcpServers": {"s": {"command": "npx", "sandboxEnabled": true,
            "sandbox": {"network": {"allowedDomains": ["a.example.com"]}}}}}"#,
        None,
    )
    .unwrap();
    let s = file.resolve(&Resolver::new()).unwrap().remove(0);
    let TransportConfig::Stdio(s) = s.transport else {
        panic!()
    };
    assert_eq!(s.sandbox.unwrap().allowed_domains, ["a.example.com"]);
}

#[test]
fn malformed_keys_are_errors_of_that_server() {
    for (json, field) in [
        (
            r#"{"command": "x", "sandboxEnabled": "yes"}"#,
            "sandboxEnabled",
        ),
        (
            r#"{"command": "x", "sandboxEnabled": true, "sandbox": []}"#,
            "sandbox",
        ),
        (
            r#"{"command": "x", "sandboxEnabled": true, "sandbox": {"filesystem": {"allowWrite": "/ws"}}}"#,
            "sandbox.filesystem.allowWrite",
        ),
        (
            r#"{"command": "x", "sandboxEnabled": true, "sandbox": {"network": {"allowedDomains": [1]}}}"#,
            "sandbox.network.allowedDomains[0]",
        ),
    ] {
        let text = format!(r#"{{"servers": {{"s": {json}}}}}"#);
        let file = ConfigFile::parse(".vscode/mcp.json", &text, None).unwrap();
        match file.resolve(&Resolver::new()) {
            Err(ConfigError::Shape { field: f, .. }) => assert_eq!(f, field, "{json}"),
            other => panic!("{json}: {other:?}"),
        }
    }
}

#[test]
fn the_summary_says_what_the_sandbox_allows() {
    let file = ConfigFile::parse(".vscode/mcp.json", VSCODE, None).unwrap();
    let summary = file.summary();
    let boxed = summary.servers.iter().find(|s| s.name == "boxed").unwrap();
    let Launch::Stdio { sandbox, .. } = &boxed.launch else {
        panic!()
    };
    assert_eq!(
        sandbox.as_ref().unwrap().deny_read,
        [PathBuf::from("${userHome}/.ssh")]
    );
    let text = summary.to_string();
    for shown in [
        "sandboxed (reads everything but what is denied):",
        r#"writes: "${workspaceFolder}" out"#,
        r#"no reads of: "${userHome}/.ssh""#,
        "network: api.example.com \"*.cdn.example.com\"",
        "never: evil.cdn.example.com",
        "plain: runs npx\n    not sandboxed",
    ] {
        assert!(text.contains(shown), "{shown:?} missing from\n{text}");
    }
}

#[test]
fn a_sandboxed_entry_prepares_a_confined_command() {
    let file = ConfigFile::parse(".vscode/mcp.json", VSCODE, None).unwrap();
    let server = file.resolve_server("boxed", &resolver()).unwrap().unwrap();
    let Ok(Prepared::Stdio(cmd)) = server.prepare() else {
        panic!()
    };
    let sb = cmd.get_sandbox().unwrap();
    assert!(sb.allows_host("x.cdn.example.com") && !sb.allows_host("evil.cdn.example.com"));
    assert_eq!(sb.denied_reads(), [PathBuf::from("/home/me/.ssh")]);
    let plain = file.resolve_server("plain", &resolver()).unwrap().unwrap();
    let Ok(Prepared::Stdio(cmd)) = plain.prepare() else {
        panic!()
    };
    assert!(cmd.get_sandbox().is_none());
}

#[test]
fn a_bad_domain_pattern_starts_nothing() {
    let file = ConfigFile::parse(
        ".vscode/mcp.json",
        r#"{"servers": {"s": {"command": "x", "sandboxEnabled": true,
            "sandbox": {"network": {"allowedDomains": ["*.com"]}}}}}"#,
        None,
    )
    .unwrap();
    let server = file.resolve(&Resolver::new()).unwrap().remove(0);
    match server.prepare() {
        Err(e @ BuildError::Sandbox { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("allowedDomains") && text.contains("too broad"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}
