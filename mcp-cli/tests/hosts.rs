//! `--from`: the servers every host keeps for the user (issue 46, item 1).
//! A temporary HOME holds each host's file as its docs show it, every
//! server a command that would leave a marker file if it ever ran:
//! `mcp servers --from all` lists them all with their source and starts
//! none; `tools --from HOST` starts that host's servers only; Claude
//! Code's servers kept for one project wait for the user's trust. Real
//! peer: server-everything.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;

/// A home folder and a project folder under one temporary root.
struct Setup {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let root = temp_path(name);
        let (home, project) = (root.join("home"), root.join("project"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Setup {
            root,
            home,
            project,
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `sh -c 'touch <root>/marker-<tag>'` as a JSON command and args.
    fn marker(&self, tag: &str) -> (String, String) {
        let file = self.root.join(format!("marker-{tag}"));
        ("sh".into(), format!("touch {}", file.display()))
    }

    /// The markers left so far: the servers that ran.
    fn markers(&self) -> Vec<String> {
        let mut found: Vec<String> = std::fs::read_dir(&self.root)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_prefix("marker-").map(str::to_owned)
            })
            .collect();
        found.sort();
        found
    }

    /// Every host's file (and a project `.mcp.json`), one marker server each,
    /// two for Claude Code (its user scope and this project's).
    fn every_host(&self) {
        let json_entry = |tag: &str| {
            let (cmd, script) = self.marker(tag);
            format!(r#"{{"command": "{cmd}", "args": ["-c", "{script}"]}}"#)
        };
        std::fs::write(
            self.project.join(".mcp.json"),
            format!(
                r#"{{"mcpServers": {{"project-server": {}}}}}"#,
                json_entry("project")
            ),
        )
        .unwrap();
        self.write(
            ".claude.json",
            &format!(
                r#"{{"numStartups": 1, "mcpServers": {{"cc-user": {}}},
                  "projects": {{{:?}: {{"mcpServers": {{"cc-local": {}}}}}}}}}"#,
                json_entry("cc-user"),
                self.project.to_str().unwrap(),
                json_entry("cc-local")
            ),
        );
        self.write(
            ".config/Claude/claude_desktop_config.json",
            &format!(
                r#"{{"mcpServers": {{"desktop": {}}}}}"#,
                json_entry("desktop")
            ),
        );
        let (cmd, script) = self.marker("codex");
        self.write(
            ".codex/config.toml",
            &format!(
                "[mcp_servers.codex-server]\ncommand = \"{cmd}\"\nargs = [\"-c\", \"{script}\"]\ncomand = \"typo\"\n"
            ),
        );
        self.write(
            ".cursor/mcp.json",
            &format!(
                r#"{{"mcpServers": {{"cursor-server": {}}}}}"#,
                json_entry("cursor")
            ),
        );
        self.write(
            ".gemini/settings.json",
            &format!(
                "// Gemini\n{{\"mcpServers\": {{\"gemini-server\": {}}}}}",
                json_entry("gemini")
            ),
        );
        let (cmd, script) = self.marker("goose");
        self.write(
            ".config/goose/config.yaml",
            &format!(
                "extensions:\n  developer:\n    type: builtin\n    name: developer\n    enabled: true\n  goose-server:\n    type: stdio\n    name: goose-server\n    enabled: true\n    cmd: {cmd}\n    args: [\"-c\", \"{script}\"]\n    envs: {{}}\n"
            ),
        );
        self.write(
            ".config/Code/User/mcp.json",
            &format!(
                r#"{{"servers": {{"vscode-server": {{"type": "stdio", "command": "{}", "args": ["-c", "{}"]}}}}}}"#,
                self.marker("vscode").0,
                self.marker("vscode").1
            ),
        );
        self.write(
            ".codeium/windsurf/mcp_config.json",
            &format!(
                r#"{{"mcpServers": {{"windsurf-server": {}}}}}"#,
                json_entry("windsurf")
            ),
        );
        self.write(
            ".config/zed/settings.json",
            &format!(
                r#"{{"context_servers": {{"zed-server": {}}}}}"#,
                json_entry("zed")
            ),
        );
    }

    /// `mcp ARGS` in the project folder, HOME and every variable that moves
    /// a host's file pointed into the temporary home.
    fn mcp(&self, args: &[&str]) -> Run {
        let home = self.home.to_str().unwrap().to_owned();
        let config = self.home.join(".config");
        let codex = self.home.join(".codex");
        let trust = self.root.join("trust.json");
        mcp_in(
            &self.project,
            args,
            &[
                ("HOME", &home),
                ("XDG_CONFIG_HOME", config.to_str().unwrap()),
                ("CODEX_HOME", codex.to_str().unwrap()),
                ("CLAUDE_CONFIG_DIR", &home),
                ("MCP_TRUST_FILE", trust.to_str().unwrap()),
            ],
        )
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn entry<'v>(list: &'v Value, name: &str) -> &'v Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list:#}"))
}

#[test]
fn servers_from_all_lists_every_host_and_starts_nothing() {
    let s = Setup::new("from-all");
    s.every_host();
    let r = s.mcp(&["servers", "--from", "all", "--json"]);
    assert_code(&r, 0);
    let list = r.json();
    let home = |rel: &str| s.home.join(rel).display().to_string();
    for (name, host, file) in [
        ("cc-local", Some("claude-code"), home(".claude.json")),
        ("cc-user", Some("claude-code"), home(".claude.json")),
        (
            "desktop",
            Some("claude-desktop"),
            home(".config/Claude/claude_desktop_config.json"),
        ),
        ("codex-server", Some("codex"), home(".codex/config.toml")),
        ("cursor-server", Some("cursor"), home(".cursor/mcp.json")),
        (
            "gemini-server",
            Some("gemini"),
            home(".gemini/settings.json"),
        ),
        (
            "goose-server",
            Some("goose"),
            home(".config/goose/config.yaml"),
        ),
        (
            "vscode-server",
            Some("vscode"),
            home(".config/Code/User/mcp.json"),
        ),
        (
            "windsurf-server",
            Some("windsurf"),
            home(".codeium/windsurf/mcp_config.json"),
        ),
        ("zed-server", Some("zed"), home(".config/zed/settings.json")),
        (
            "project-server",
            None,
            s.project.join(".mcp.json").display().to_string(),
        ),
    ] {
        let e = entry(&list, name);
        assert_eq!(e["host"].as_str(), host, "{name}");
        assert_eq!(e["source"], file.as_str(), "{name}");
        assert_eq!(e["transport"], "stdio", "{name}");
        assert_eq!(e["command"], "sh", "{name}");
        assert!(e["error"].is_null(), "{name}: {e}");
    }
    let local = entry(&list, "cc-local");
    assert_eq!(local["project"], true);
    assert!(local["section"].as_str().unwrap().starts_with("projects["));
    assert_eq!(entry(&list, "cc-user")["project"], false);
    // Goose's built-in is listed, with why it cannot start here.
    let builtin = entry(&list, "developer");
    assert!(builtin["transport"].is_null());
    assert!(builtin["error"].as_str().unwrap().contains("inside Goose"));
    // The unknown key of the Codex entry gets its warning line.
    assert!(
        r.stderr.contains(&format!(
            "mcp: warning: {}: server \"codex-server\": unknown key \"comand\" (ignored)",
            home(".codex/config.toml")
        )),
        "{}",
        r.stderr
    );
    // The human listing names each source the short way.
    let human = s.mcp(&["servers", "--from", "all"]);
    assert_code(&human, 0);
    assert!(
        human.stdout.contains("codex ~/.codex/config.toml"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("cannot start: a Goose builtin"),
        "{}",
        human.stdout
    );
    // Nothing ran: no server left its marker.
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(s.markers(), Vec::<String>::new());
}

#[test]
fn without_from_nothing_of_the_hosts_is_read() {
    let s = Setup::new("no-from");
    s.every_host();
    std::fs::remove_file(s.project.join(".mcp.json")).unwrap();
    // No project file: no server to list, and no host's file is read.
    let r = s.mcp(&["servers"]);
    assert_one_line_error(&r, 2, "mcp: no configured servers");
    let r = s.mcp(&["tools", "--from", "codex,emacs"]);
    assert_one_line_error(&r, 2, "mcp: ");
    assert!(
        r.stderr.contains("unknown source \"emacs\""),
        "{}",
        r.stderr
    );
    assert_eq!(s.markers(), Vec::<String>::new());
}

#[test]
fn tools_from_one_host_starts_its_servers_only() {
    let Some(everything) = test_support::everything() else {
        return;
    };
    let s = Setup::new("from-codex");
    s.every_host();
    let (node, args) = everything.arg("stdio").to_strings();
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    s.write(
        ".codex/config.toml",
        &format!(
            "[mcp_servers.everything]\ncommand = {node:?}\nargs = [{}]\nenabled_tools = [\"echo\"]\n",
            args.join(", ")
        ),
    );
    let r = s.mcp(&["tools", "--from", "codex", "--json"]);
    assert_code(&r, 0);
    let list = r.json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // `enabled_tools` is honoured.
    assert_eq!(names, ["everything/echo"]);
    let r = s.mcp(&[
        "call",
        "--from",
        "codex",
        "everything/echo",
        r#"{"message": "hi"}"#,
    ]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("hi"), "{}", r.stdout);
    assert_eq!(s.markers(), Vec::<String>::new());
    // A host asked for does start its servers.
    let r = s.mcp(&["servers", "--from", "zed", "--start"]);
    assert_code(&r, 3);
    assert_eq!(s.markers(), ["zed"]);
}

#[test]
fn claude_code_servers_of_a_project_wait_for_trust() {
    let s = Setup::new("cc-trust");
    s.every_host();
    let r = s.mcp(&["tools", "--from", "claude-code"]);
    assert_code(&r, 2);
    let last = r.stderr.lines().last().unwrap();
    assert!(
        last.contains("projects[") && last.contains("`mcp trust` run in this directory"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("cc-local: runs sh -c"), "{}", r.stderr);
    assert_eq!(s.markers(), Vec::<String>::new());
    // `mcp trust` here trusts this project's part of ~/.claude.json (and
    // the project's .mcp.json).
    let r = s.mcp(&["trust"]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("projects["), "{}", r.stdout);
    let r = s.mcp(&["servers", "--from", "claude-code", "--start"]);
    assert_eq!(s.markers(), ["cc-local", "cc-user"], "{}", r.stderr);
    let r = s.mcp(&["trust", "--revoke"]);
    assert_code(&r, 0);
    assert!(r.stdout.contains("forgot"), "{}", r.stdout);
    let r = s.mcp(&["servers", "--from", "claude-code", "--start"]);
    assert_code(&r, 2);
}

#[test]
fn host_files_show_their_path_once_missing() {
    let s = Setup::new("absent");
    let r = s.mcp(&["servers", "--from", "codex,zed"]);
    assert_code(&r, 0);
    assert!(
        r.stdout.contains(
            "no file for codex (~/.codex/config.toml), zed (~/.config/zed/settings.json)"
        ),
        "{}",
        r.stdout
    );
    let r = s.mcp(&["tools", "--from", "codex"]);
    assert_one_line_error(
        &r,
        2,
        "mcp: no configured servers in the sources --from names",
    );
}
