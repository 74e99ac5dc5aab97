//! Each format from a realistic file, as users write them.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use mcp_config::{ConfigFile, Format, Resolver, TransportConfig};

#[test]
fn claude_code_project_file() {
    let file = ConfigFile::load(fixture("project/.mcp.json")).unwrap();
    assert_eq!(file.format(), Format::ClaudeCode);
    let resolver = Resolver::new().env_vars([
        ("GITHUB_TOKEN", "ghp_secret"),
        ("SENTRY_AUTH_TOKEN", "sntrys_secret"),
        ("TEAM", ""),
    ]);
    let servers = file.resolve(&resolver).unwrap();
    assert_eq!(
        servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        [
            "github",
            "internal-api",
            "postgres",
            "sentry",
            "shell-tricks"
        ]
    );

    let github = stdio(find(&servers, "github"));
    assert_eq!(github.command.expose(), "npx");
    assert_eq!(args(github), ["-y", "@modelcontextprotocol/server-github"]);
    let token = get(&github.env, "GITHUB_PERSONAL_ACCESS_TOKEN");
    assert_eq!(token.expose(), "ghp_secret");
    assert!(token.is_secret());

    let sentry = http(find(&servers, "sentry"));
    assert_eq!(sentry.url.expose(), "https://mcp.sentry.dev/mcp");
    assert_eq!(
        get(&sentry.headers, "Authorization").expose(),
        "Bearer sntrys_secret"
    );

    // `${VAR:-default}`: unset, and set but empty, both take the default.
    let api = sse(find(&servers, "internal-api"));
    assert_eq!(api.url.expose(), "https://api.example.com/sse");
    assert!(!api.url.is_secret(), "only a default was expanded");
    assert_eq!(get(&api.headers, "X-Team").expose(), "platform");

    let pg = stdio(find(&servers, "postgres"));
    assert_eq!(args(pg).last().copied(), Some("mcp/postgres:latest"));
    assert_eq!(
        get(&pg.env, "DATABASE_URL").expose(),
        "postgresql://postgres@localhost:5432/app"
    );

    // `$HOME`, `${HOME%/}` and `${1}` are not Claude Code variables: kept.
    let sh = stdio(find(&servers, "shell-tricks"));
    assert_eq!(args(sh), ["-c", "echo $HOME ${HOME%/} ${1}"]);
    assert!(servers.iter().all(|s| !s.disabled));
    assert_eq!(
        find(&servers, "github").source.path,
        fixture("project/.mcp.json")
    );
}

#[test]
fn claude_desktop_file() {
    let file = ConfigFile::load(fixture("claude_desktop_config.json")).unwrap();
    assert_eq!(file.format(), Format::ClaudeCode);
    let servers = file
        .resolve(&Resolver::new().env_vars::<_, String, String>([]))
        .unwrap();
    let fs = stdio(find(&servers, "filesystem"));
    assert_eq!(
        args(fs)[2..],
        ["/Users/alice/Desktop", "/Users/alice/Downloads"]
    );
    assert_eq!(
        get(&stdio(find(&servers, "brave-search")).env, "BRAVE_API_KEY").expose(),
        "BSAxxxxxxxxxxxxxxxxxxxxxxxx"
    );
    assert!(find(&servers, "weather").disabled);
    assert!(!find(&servers, "filesystem").disabled);
}

#[test]
fn vscode_file_with_comments_inputs_and_env_file() {
    let path = fixture("project/.vscode/mcp.json");
    let file = ConfigFile::load(&path).unwrap();
    assert_eq!(file.format(), Format::VsCode);
    assert_eq!(file.inputs().len(), 2);
    assert!(file.inputs()[0].password);
    assert_eq!(file.inputs()[1].default.as_deref(), Some("sonar-pro"));

    let answers = Answers::default();
    let ws = fixture("project");
    let resolver = Resolver::new()
        .env_vars([("PERPLEXITY_API_KEY", "pplx-secret")])
        .workspace_folder(&ws)
        .inputs(answers.provider());
    let servers = file.resolve(&resolver).unwrap();

    let github = http(find(&servers, "github"));
    assert_eq!(github.url.expose(), "https://api.githubcopilot.com/mcp/");
    assert_eq!(
        get(&github.headers, "Authorization").expose(),
        "Bearer answer-github_mcp_pat"
    );

    let pplx = stdio(find(&servers, "perplexity"));
    assert_eq!(args(pplx)[3], "answer-perplexity-model");
    assert!(!pplx.args[3].is_secret(), "not a password input");
    assert_eq!(get(&pplx.env, "PERPLEXITY_API_KEY").expose(), "pplx-secret");
    assert_eq!(
        get(&pplx.env, "GITHUB_TOKEN").expose(),
        "answer-github_mcp_pat"
    );
    assert_eq!(pplx.env_file.as_deref(), Some(ws.join(".env").as_path()));

    // Each input asked once, though github_mcp_pat is used twice.
    let mut ids = answers.ids();
    ids.sort();
    assert_eq!(ids, ["github_mcp_pat", "perplexity-model"]);
    let asked = answers.asked.lock().unwrap();
    let pat = asked.iter().find(|s| s.id == "github_mcp_pat").unwrap();
    assert!(pat.password);
    assert_eq!(
        pat.description.as_deref(),
        Some("GitHub Personal Access Token")
    );
    drop(asked);

    let memory = stdio(find(&servers, "memory"));
    assert_eq!(memory.command.expose(), "npx");
    assert_eq!(
        args(memory)[2],
        format!("{}{}memory.json", ws.display(), std::path::MAIN_SEPARATOR)
    );
    sse(find(&servers, "legacy-sse"));
}

#[test]
fn cursor_project_file() {
    let file = ConfigFile::load(fixture("project/.cursor/mcp.json")).unwrap();
    assert_eq!(file.format(), Format::Cursor);
    let resolver = Resolver::new()
        .env_vars([("NOTES_TOKEN", "n-secret"), ("FIGMA_TOKEN", "f-secret")])
        .workspace_folder("/work/acme")
        .home("/home/alice");
    let servers = file.resolve(&resolver).unwrap();
    // A bare `url` is Streamable HTTP (the transport falls back to SSE).
    assert_eq!(
        http(find(&servers, "linear")).url.expose(),
        "https://mcp.linear.app/sse"
    );
    let notes = stdio(find(&servers, "notes"));
    assert_eq!(notes.command.expose(), "/home/alice/.local/bin/notes-mcp");
    assert_eq!(args(notes), ["--root", "/work/acme", "--name", "acme"]);
    assert_eq!(get(&notes.env, "NOTES_TOKEN").expose(), "n-secret");
    let figma = http(find(&servers, "figma"));
    assert_eq!(get(&figma.headers, "X-Figma-Token").expose(), "f-secret");
}

#[test]
fn standard_mcp_json() {
    let file = ConfigFile::load(fixture("mcp.json")).unwrap();
    assert_eq!(file.format(), Format::Standard);
    let answers = Answers::default();
    let resolver = Resolver::new()
        .env_vars([
            ("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp"),
            ("MONITORING_TOKEN", "mon"),
            ("PG_USER", "app"),
        ])
        .inputs(answers.provider());
    let servers = file.resolve(&resolver).unwrap();

    let github = find(&servers, "github");
    assert_eq!(github.title.as_deref(), Some("GitHub"));
    assert!(github.description.as_deref().unwrap().starts_with("Create"));
    assert_eq!(
        get(&stdio(github).env, "GITHUB_PERSONAL_ACCESS_TOKEN").expose(),
        "ghp"
    );

    let mon = sse(find(&servers, "monitoring"));
    assert_eq!(get(&mon.headers, "Authorization").expose(), "Bearer mon");

    // `${env:ANALYTICS_API_KEY | value:dev-key}`: the env var is unset.
    let analytics = http(find(&servers, "analytics"));
    assert_eq!(get(&analytics.headers, "X-API-Key").expose(), "dev-key");

    let slack = http(find(&servers, "slack"));
    let oauth = slack.oauth.as_ref().unwrap();
    assert_eq!(
        oauth.client_id.as_deref(),
        Some("1601185624273.8899143856786")
    );
    assert_eq!(oauth.scopes, ["channels:read"]);
    assert_eq!(
        oauth.redirect_uri.as_deref(),
        Some("http://localhost:3118/callback")
    );

    let db = stdio(find(&servers, "db[readonly]"));
    assert_eq!(
        args(db),
        ["postgresql://app:answer-pg_password@db.internal/app"]
    );
    assert!(db.args[0].is_secret());
    // SEP-2633 inputs are not declared: asked as passwords.
    assert!(answers.asked.lock().unwrap()[0].password);
}

#[test]
fn format_from_shape_and_override() {
    let vscode_shaped = r#"{"servers": {"a": {"command": "x"}}}"#;
    let f = ConfigFile::parse("/somewhere/servers.json", vscode_shaped, None).unwrap();
    assert_eq!(f.format(), Format::VsCode);
    // VS Code's profile file is named mcp.json too: the key decides.
    let f = ConfigFile::parse("/profile/mcp.json", vscode_shaped, None).unwrap();
    assert_eq!(f.format(), Format::VsCode);
    let claude_shaped = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let f = ConfigFile::parse("/somewhere/my-servers.json", claude_shaped, None).unwrap();
    assert_eq!(f.format(), Format::ClaudeCode);

    // An explicit format wins over the name: comments are then allowed.
    let with_comment = "{ // mine\n \"mcpServers\": {\"a\": {\"url\": \"http://h/mcp\"}} }";
    assert!(ConfigFile::parse(".mcp.json", with_comment, None).is_err());
    let f = ConfigFile::parse(".mcp.json", with_comment, Some(Format::Cursor)).unwrap();
    let servers = f.resolve(&Resolver::new()).unwrap();
    assert!(matches!(servers[0].transport, TransportConfig::Http(_)));
    let f = ConfigFile::load_as(fixture("claude_desktop_config.json"), Format::Cursor).unwrap();
    assert_eq!(f.format(), Format::Cursor);
}

#[test]
fn tool_filters_and_enabled_flags() {
    let text = r#"{"mcpServers": {
        "a": {"command": "x", "includeTools": ["read_*", "list"], "excludeTools": ["delete"],
              "toolPolicy": {"allow": ["read_*"], "ask": ["write_*", "move"], "deny": []}},
        "b": {"command": "x", "enabled": false},
        "c": {"command": "x", "disabled": false, "cwd": "sub"}
    }}"#;
    let file = ConfigFile::parse("x/.mcp.json", text, None).unwrap();
    let servers = file
        .resolve(&Resolver::new().workspace_folder("/ws"))
        .unwrap();
    let a = find(&servers, "a");
    assert_eq!(
        a.include_tools.as_deref(),
        Some(&["read_*".to_owned(), "list".to_owned()][..])
    );
    assert_eq!(a.exclude_tools, ["delete"]);
    assert_eq!(a.tool_policy.allow, ["read_*"]);
    assert_eq!(a.tool_policy.ask, ["write_*", "move"]);
    assert!(a.tool_policy.deny.is_empty());
    assert!(find(&servers, "b").disabled);
    assert!(find(&servers, "b").tool_policy.is_empty());
    // Each mistake names the field.
    for (policy, field) in [
        (r#""read_*""#, "toolPolicy"),
        (r#"{"allow": "read_*"}"#, "toolPolicy.allow"),
        (r#"{"deny": [1]}"#, "toolPolicy.deny[0]"),
        (r#"{"always": []}"#, "toolPolicy.always"),
    ] {
        let text =
            format!(r#"{{"mcpServers": {{"a": {{"command": "x", "toolPolicy": {policy}}}}}}}"#);
        let e = ConfigFile::parse(".mcp.json", &text, None)
            .unwrap()
            .resolve(&Resolver::new())
            .unwrap_err();
        assert!(e.to_string().contains(field), "{policy}: {e}");
    }
    let c = find(&servers, "c");
    assert!(!c.disabled);
    assert_eq!(c.include_tools, None);
    assert_eq!(
        stdio(c).cwd.as_deref(),
        Some(std::path::Path::new("/ws/sub"))
    );
}

#[test]
fn secrets_never_reach_debug_or_display() {
    let answers = Answers::default();
    let resolver = Resolver::new()
        .env_vars([
            ("GITHUB_TOKEN", "ghp_leak1"),
            ("SENTRY_AUTH_TOKEN", "leak2"),
            ("PERPLEXITY_API_KEY", "leak3"),
            ("PG_USER", "leak4"),
            ("GITHUB_PERSONAL_ACCESS_TOKEN", "leak5"),
            ("MONITORING_TOKEN", "leak6"),
        ])
        .workspace_folder(fixture("project"))
        .inputs(answers.provider());
    let mut dump = String::new();
    for rel in [
        "project/.mcp.json",
        "project/.vscode/mcp.json",
        "mcp.json",
        "claude_desktop_config.json",
    ] {
        let file = ConfigFile::load(fixture(rel)).unwrap();
        dump += &format!("{file:?}");
        let servers = file.resolve(&resolver).unwrap();
        dump += &format!("{servers:?}");
        for s in &servers {
            if let TransportConfig::Stdio(c) = &s.transport {
                for (k, v) in &c.env {
                    dump += &format!("{k}={v} ");
                }
                for a in &c.args {
                    dump += &format!("{a} ");
                }
            }
            dump += &format!("{:?}", s.prepare().unwrap());
        }
    }
    for secret in [
        "ghp_leak1",
        "leak2",
        "leak3",
        "leak4",
        "leak5",
        "leak6",
        "answer-github_mcp_pat",
        "answer-pg_password",
        "BSAxxxx",
    ] {
        assert!(!dump.contains(secret), "{secret} leaked into {dump}");
    }
    // A status line shows the command, hiding what came from a variable.
    let file = ConfigFile::load(fixture("mcp.json")).unwrap();
    let db = file
        .resolve_server("db[readonly]", &resolver)
        .unwrap()
        .unwrap();
    assert_eq!(db.transport.to_string(), "stdio pg-mcp <redacted>");
    let mon = file
        .resolve_server("monitoring", &resolver)
        .unwrap()
        .unwrap();
    assert_eq!(
        mon.transport.to_string(),
        "sse https://mcp.monitoring.example.com/sse"
    );

    // What is not secret still shows, so the dump stays useful.
    assert!(dump.contains("server-github"), "{dump}");
    assert!(dump.contains("answer-perplexity-model"), "{dump}");
    assert!(dump.contains("<redacted>"));
}
