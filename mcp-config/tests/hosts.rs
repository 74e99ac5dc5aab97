//! Every host's own file, written as its documentation shows it, read from
//! a temporary home folder: each server with its host, file and transport;
//! unknown keys reported; entries no other program can start set apart.
#![cfg(all(feature = "toml", feature = "yaml"))]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{args, get, http, sse, stdio};
use mcp_config::{
    ConfigError, Host, HostFiles, Places, Platform, Resolver, Scope, ServerConfig, load_hosts,
    resolve_all,
};

/// A home folder with one file per host, as each host's docs show it
/// (the examples of the pages cited in `src/hosts/places.rs` and
/// `src/formats/`), and a project folder Claude Code keeps servers for.
struct Home {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let root = std::env::temp_dir().join(format!("mcp-hosts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let project = root.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let h = Home {
            root,
            home,
            project,
        };
        h.write(
            ".claude.json",
            &format!(
                r#"{{"numStartups": 12, "autoUpdates": true,
  "mcpServers": {{"context7": {{"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {{}}}}}},
  "projects": {{
    {project:?}: {{"allowedTools": [], "history": [],
      "mcpServers": {{"chrome-devtools": {{"type": "stdio", "command": "npx", "args": ["chrome-devtools-mcp@latest"], "env": {{}}}}}}}},
    "/somewhere/else": {{"mcpServers": {{"elsewhere": {{"command": "other"}}}}}}
  }}}}"#,
                project = h.project.to_str().unwrap()
            ),
        );
        h.write(
            ".config/Claude/claude_desktop_config.json",
            r#"{"mcpServers": {"filesystem": {"command": "npx",
              "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop"]}}}"#,
        );
        h.write(
            ".codex/config.toml",
            r#"model = "gpt-5.1"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "4000"]
env = { "API_KEY" = "value" }
env_vars = ["API_KEY2"]
startup_timeout_sec = 20
enabled_tools = ["search", "summarize"]

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Trace" = "TRACE_ID_UNSET" }
tool_timeout_sec = 30
"#,
        );
        h.write(
            ".cursor/mcp.json",
            r#"{
  // Cursor's global servers
  "mcpServers": {
    "server-name": {"command": "npx", "args": ["-y", "mcp-server"], "env": {"API_KEY": "value"}},
    "remote": {"url": "http://localhost:3000/mcp", "headers": {"API_KEY": "value"}},
  }
}"#,
        );
        h.write(
            ".gemini/settings.json",
            r#"{
  "theme": "Dracula",
  "mcpServers": {
    "pythonTools": {
      "command": "python",
      "args": ["-m", "my_mcp_server", "--port", "8080"],
      "cwd": "./mcp-servers/python",
      "env": {"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "${EXTERNAL_API_KEY}"},
      "timeout": 15000,
      "trsut": true
    },
    "httpServer": {"httpUrl": "http://localhost:3000/mcp", "timeout": 5000},
    // an SSE server, excluded below
    "sseServer": {"url": "http://localhost:8080/sse"}
  },
  "mcp": {"excluded": ["sseServer"]}
}"#,
        );
        h.write(
            ".config/goose/config.yaml",
            r#"GOOSE_MODE: "smart_approve"
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  filesystem:
    type: stdio
    name: filesystem
    enabled: true
    cmd: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
    env_keys: []
    envs: {}
    timeout: 300
  remote-tools:
    type: streamable_http
    name: remote-tools
    enabled: false
    uri: "https://example.com/mcp"
    headers: {}
    env_keys: []
    envs: {}
    timeout: 300
"#,
        );
        h.write(
            ".config/Code/User/mcp.json",
            r#"{
  // VS Code's user profile
  "servers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
  },
  "inputs": []
}"#,
        );
        h.write(
            ".codeium/windsurf/mcp_config.json",
            r#"{"mcpServers": {
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
             "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_PERSONAL_ACCESS_TOKEN>"}},
  "figma": {"serverUrl": "https://your-server-url/mcp",
            "headers": {"Authorization": "Bearer ${env:AUTH_TOKEN}"}, "disabled": false}
}}"#,
        );
        h.write(
            ".config/zed/settings.json",
            r#"// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "local-mcp-server": {"command": "some-command", "args": ["arg-1", "arg-2"], "env": {}},
    "old-style": {"source": "custom", "command": {"path": "old-server", "args": ["-v"], "env": {"A": "1"}}},
    "remote-mcp-server": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer <token>"}},
    "postgres-context-server": {"source": "extension", "settings": {"database_url": "postgresql://x"}},
  },
}"#,
        );
        h
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn places(&self) -> Places {
        Places::with_env(&self.home, Platform::Linux, |_| None).project(&self.project)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn resolver() -> Resolver {
    Resolver::new().env_vars([
        ("DB_CONNECTION_STRING", "postgres://db"),
        ("EXTERNAL_API_KEY", "k3y"),
        ("FIGMA_TOKEN", "f1gma"),
        ("AUTH_TOKEN", "w1nd"),
    ])
}

/// Every server of `found`, each file resolved on its own (names repeat
/// across hosts).
fn servers(found: &HostFiles) -> (Vec<ServerConfig>, Vec<ConfigError>) {
    let mut servers = Vec::new();
    let mut errors = Vec::new();
    for f in &found.files {
        let list = resolve_all(std::slice::from_ref(&f.file), &resolver());
        servers.extend(list.servers);
        errors.extend(list.errors);
    }
    (servers, errors)
}

#[test]
fn every_hosts_file_is_read_with_its_source() {
    let home = Home::new("all");
    let found = load_hosts(Host::ALL, &home.places());
    assert!(found.errors.is_empty(), "{:?}", found.errors);
    assert!(found.absent.is_empty(), "{:?}", found.absent);
    let hosts: Vec<Host> = found.files.iter().map(|f| f.host).collect();
    assert_eq!(
        hosts,
        [
            Host::ClaudeCode,
            Host::ClaudeCode,
            Host::ClaudeDesktop,
            Host::Codex,
            Host::Cursor,
            Host::Gemini,
            Host::Goose,
            Host::VsCode,
            Host::Windsurf,
            Host::Zed
        ]
    );
    let (servers, errors) = servers(&found);
    let sourced = |name: &str, host: Host, rel: &str| {
        let s = servers
            .iter()
            .find(|s| s.name == name && s.source.host == Some(host))
            .unwrap_or_else(|| panic!("no {name} from {host}"));
        assert_eq!(s.source.path, home.home.join(rel), "{name}");
        s
    };

    // Claude Code: the project's servers (local scope) and the user's.
    let local = sourced("chrome-devtools", Host::ClaudeCode, ".claude.json");
    assert_eq!(
        local.source.section.as_deref(),
        Some(format!("projects[{:?}]", home.project.to_str().unwrap()).as_str())
    );
    assert_eq!(found.files[0].scope, Scope::Project);
    assert_eq!(found.files[1].scope, Scope::User);
    assert!(local.source.to_string().starts_with("claude-code "));
    let user = sourced("context7", Host::ClaudeCode, ".claude.json");
    assert_eq!(user.source.section, None);
    assert!(!servers.iter().any(|s| s.name == "elsewhere"));

    let desktop = sourced(
        "filesystem",
        Host::ClaudeDesktop,
        ".config/Claude/claude_desktop_config.json",
    );
    assert_eq!(stdio(desktop).command.expose(), "npx");

    // Codex: a stdio and a Streamable HTTP server, the bearer token from
    // the variable named, an optional header left out when unset.
    let docs = sourced("docs", Host::Codex, ".codex/config.toml");
    assert_eq!(args(stdio(docs)), ["--port", "4000"]);
    assert_eq!(get(&stdio(docs).env, "API_KEY").expose(), "value");
    assert_eq!(
        docs.include_tools.as_deref(),
        Some(&["search".to_owned(), "summarize".to_owned()][..])
    );
    let figma = http(sourced("figma", Host::Codex, ".codex/config.toml"));
    assert_eq!(figma.url.expose(), "https://mcp.figma.com/mcp");
    assert_eq!(
        get(&figma.headers, "Authorization").expose(),
        "Bearer f1gma"
    );
    assert_eq!(get(&figma.headers, "X-Figma-Region").expose(), "us-east-1");
    assert!(!figma.headers.iter().any(|(k, _)| k == "X-Trace"));

    let remote = http(sourced("remote", Host::Cursor, ".cursor/mcp.json"));
    assert_eq!(remote.url.expose(), "http://localhost:3000/mcp");

    // Gemini CLI: `$VAR` and `${VAR}`, httpUrl, url (SSE), mcp.excluded.
    let python = sourced("pythonTools", Host::Gemini, ".gemini/settings.json");
    let py = stdio(python);
    assert_eq!(get(&py.env, "DATABASE_URL").expose(), "postgres://db");
    assert_eq!(get(&py.env, "API_KEY").expose(), "k3y");
    assert_eq!(py.cwd.as_deref(), Some(Path::new("./mcp-servers/python")));
    assert!(!python.disabled);
    http(sourced("httpServer", Host::Gemini, ".gemini/settings.json"));
    let sse_server = sourced("sseServer", Host::Gemini, ".gemini/settings.json");
    sse(sse_server);
    assert!(sse_server.disabled);

    // Goose: stdio and streamable_http; `enabled: false` is disabled; the
    // built-in is not a server anyone else can start.
    let fs = stdio(sourced(
        "filesystem",
        Host::Goose,
        ".config/goose/config.yaml",
    ));
    assert_eq!(fs.command.expose(), "npx");
    let goose_remote = sourced("remote-tools", Host::Goose, ".config/goose/config.yaml");
    assert!(goose_remote.disabled);
    assert_eq!(http(goose_remote).url.expose(), "https://example.com/mcp");
    assert!(errors.iter().any(|e| matches!(e,
        ConfigError::Unsupported { server, .. } if server == "developer")));

    http(sourced(
        "github",
        Host::VsCode,
        ".config/Code/User/mcp.json",
    ));

    // Windsurf: serverUrl and `${env:...}`.
    let wf = http(sourced(
        "figma",
        Host::Windsurf,
        ".codeium/windsurf/mcp_config.json",
    ));
    assert_eq!(get(&wf.headers, "Authorization").expose(), "Bearer w1nd");
    stdio(sourced(
        "github",
        Host::Windsurf,
        ".codeium/windsurf/mcp_config.json",
    ));

    // Zed: both command forms, a remote server; an extension's is set apart.
    let zed = ".config/zed/settings.json";
    assert_eq!(
        args(stdio(sourced("local-mcp-server", Host::Zed, zed))),
        ["arg-1", "arg-2"]
    );
    let old = stdio(sourced("old-style", Host::Zed, zed));
    assert_eq!(old.command.expose(), "old-server");
    assert_eq!(get(&old.env, "A").expose(), "1");
    http(sourced("remote-mcp-server", Host::Zed, zed));
    assert!(errors.iter().any(|e| matches!(e,
        ConfigError::Unsupported { server, .. } if server == "postgres-context-server")));
    assert_eq!(errors.len(), 2, "{errors:?}");
}

#[test]
fn unknown_keys_are_reported_not_dropped() {
    let home = Home::new("keys");
    let found = load_hosts(Host::ALL, &home.places());
    let unknown: Vec<String> = found
        .files
        .iter()
        .flat_map(|f| f.file.unknown_keys())
        .map(ToString::to_string)
        .collect();
    let gemini = home.home.join(".gemini/settings.json");
    assert_eq!(
        unknown,
        [format!(
            "{}: server \"pythonTools\": unknown key \"trsut\" (ignored)",
            gemini.display()
        )]
    );
    // Documented keys this crate does not act on (timeouts, `env_vars`,
    // Goose's `bundled`) are known, and a Goose built-in's keys are Goose's.
    home.write(
        ".codex/config.toml",
        "[mcp_servers.x]\ncomand = \"typo\"\ncommand = \"x\"\n",
    );
    let found = load_hosts(&[Host::Codex], &home.places());
    let keys: Vec<&str> = found.files[0]
        .file
        .unknown_keys()
        .iter()
        .map(|k| k.key.as_str())
        .collect();
    assert_eq!(keys, ["comand"]);
}

#[test]
fn a_claude_code_project_section_is_trusted_on_its_own() {
    let home = Home::new("trust");
    let found = load_hosts(&[Host::ClaudeCode], &home.places());
    let [project, user] = &found.files[..] else {
        panic!("{:?}", found.files)
    };
    let store = mcp_config::TrustStore::new(home.root.join("trust.json"));
    assert!(!store.is_trusted(&project.file).unwrap());
    store.trust(&project.file).unwrap();
    assert!(store.is_trusted(&project.file).unwrap());
    // The user's part is another decision (and needs none: Scope::User).
    assert!(!store.is_trusted(&user.file).unwrap());
    assert!(project.file.summary().to_string().contains("projects["));
    // Claude Code rewrites the rest of the file all the time: only the
    // project's servers count.
    let text = std::fs::read_to_string(home.home.join(".claude.json")).unwrap();
    home.write(
        ".claude.json",
        &text.replace("\"numStartups\": 12", "\"numStartups\": 13"),
    );
    let again = load_hosts(&[Host::ClaudeCode], &home.places());
    assert!(store.is_trusted(&again.files[0].file).unwrap());
    home.write(
        ".claude.json",
        &text.replace("chrome-devtools-mcp@latest", "evil"),
    );
    let changed = load_hosts(&[Host::ClaudeCode], &home.places());
    assert!(!store.is_trusted(&changed.files[0].file).unwrap());
    assert!(store.revoke(&home.home.join(".claude.json")).unwrap());
}

#[test]
fn broken_files_are_errors_and_missing_ones_absent() {
    let home = Home::new("broken");
    home.write(".codex/config.toml", "[mcp_servers.x\ncommand = 1");
    home.write(".config/goose/config.yaml", "extensions: &a [*a]\n");
    std::fs::remove_file(home.home.join(".config/zed/settings.json")).unwrap();
    let found = load_hosts(&[Host::Codex, Host::Goose, Host::Zed], &home.places());
    assert!(found.files.is_empty());
    let messages: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("config.toml:1:"), "{}", messages[0]);
    assert!(messages[1].contains("aliases"), "{}", messages[1]);
    assert_eq!(found.absent.len(), 1);
    assert_eq!(found.absent[0].0, Host::Zed);
}

#[test]
fn codex_refuses_a_missing_bearer_variable() {
    let home = Home::new("bearer");
    let found = load_hosts(&[Host::Codex], &home.places());
    let list = resolve_all(
        &[found.files.into_iter().next().unwrap().file],
        &Resolver::new().env_vars::<[(&str, &str); 0], _, _>([]),
    );
    let e = list
        .errors
        .iter()
        .find(|e| e.server() == Some("figma"))
        .unwrap();
    assert!(e.to_string().contains("FIGMA_TOKEN"), "{e}");
}

#[test]
fn host_ids_round_trip() {
    for h in Host::ALL {
        assert_eq!(Host::from_id(h.id()), Some(*h));
        assert_eq!(h.to_string(), h.id());
    }
    assert_eq!(Host::from_id("Gemini-CLI"), Some(Host::Gemini));
    assert_eq!(Host::from_id("emacs"), None);
}
