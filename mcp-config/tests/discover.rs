//! Finding a user's files and merging them by server name.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;

use common::*;
use mcp_config::{ConfigError, Format, Resolver, discover, load_all};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-config-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn finds_the_files_present_in_precedence_order() {
    let project = fixture("project");
    let home = fixture("home");
    assert_eq!(
        discover(&project, Some(&home)),
        [
            project.join(".mcp.json"),
            project.join(".vscode/mcp.json"),
            project.join(".cursor/mcp.json"),
            home.join(".cursor/mcp.json"),
        ]
    );
    assert_eq!(discover(&project, None).len(), 3);
    assert!(discover(&fixture("broken"), Some(&fixture("broken"))).is_empty());
    // Run from the home folder: ~/.cursor/mcp.json is the project's too.
    let home = fixture("home");
    assert_eq!(
        discover(&home, Some(&home)),
        [home.join(".cursor/mcp.json")]
    );
}

#[test]
fn merges_first_file_wins_and_reports_shadowed() {
    let project = fixture("project");
    let files = discover(&project, Some(&fixture("home")));
    let answers = Answers::default();
    let resolver = Resolver::new()
        .env_vars([
            ("GITHUB_TOKEN", "t"),
            ("SENTRY_AUTH_TOKEN", "t"),
            ("PERPLEXITY_API_KEY", "t"),
            ("NOTES_TOKEN", "t"),
            ("FIGMA_TOKEN", "t"),
        ])
        .workspace_folder(&project)
        .home("/home/alice")
        .inputs(answers.provider());
    let list = load_all(&files, &resolver);
    assert!(list.errors.is_empty(), "{:?}", list.errors);

    let names: Vec<&str> = list.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "context7",
            "figma",
            "github",
            "internal-api",
            "legacy-sse",
            "linear",
            "memory",
            "notes",
            "perplexity",
            "postgres",
            "sentry",
            "shell-tricks",
        ]
    );
    // `sentry` and `github` are in both .mcp.json and .vscode/mcp.json.
    let sentry = find(&list.servers, "sentry");
    assert_eq!(sentry.source.format, Format::ClaudeCode);
    assert!(
        !http(sentry).headers.is_empty(),
        "the .mcp.json entry, with its header"
    );
    let github = find(&list.servers, "github");
    assert_eq!(github.source.path, project.join(".mcp.json"));
    // The project's Cursor file beats the home one.
    let notes = find(&list.servers, "notes");
    assert_eq!(notes.source.path, project.join(".cursor/mcp.json"));
    assert_eq!(
        find(&list.servers, "context7").source.path,
        fixture("home/.cursor/mcp.json")
    );

    fn short(p: &std::path::Path) -> &str {
        let s = p.to_str().unwrap();
        &s[s.find("fixtures/").unwrap() + 9..]
    }
    let shadowed: Vec<(&str, &str, &str)> = list
        .shadowed
        .iter()
        .map(|s| (s.name.as_str(), short(&s.winner.path), short(&s.loser.path)))
        .collect();
    assert_eq!(
        shadowed,
        [
            ("github", "project/.mcp.json", "project/.vscode/mcp.json"),
            ("sentry", "project/.mcp.json", "project/.vscode/mcp.json"),
            ("notes", "project/.cursor/mcp.json", "home/.cursor/mcp.json"),
        ]
    );
    // The shadowed VS Code github entry's input was never asked.
    assert_eq!(answers.ids(), ["perplexity-model", "github_mcp_pat"]);
}

#[test]
fn a_broken_file_or_server_does_not_stop_the_rest() {
    let project = temp_dir("broken-project");
    let home = temp_dir("broken-home");
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"a": {"command": "${NOT_SET}"}, "b": {"command": "b"}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    std::fs::write(
        project.join(".vscode/mcp.json"),
        "{ \"servers\": { oops } }",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(
        home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"a": {"command": "a-from-home"}, "c": {"command": "c"}}}"#,
    )
    .unwrap();

    let files = discover(&project, Some(&home));
    assert_eq!(files.len(), 3);
    let list = load_all(&files, &Resolver::new().env_vars::<_, String, String>([]));
    let names: Vec<&str> = list.servers.iter().map(|s| s.name.as_str()).collect();
    // `a` is broken in the project file: it is reported, and the home
    // file's `a` is not used in its place.
    assert_eq!(names, ["b", "c"]);
    assert_eq!(list.shadowed.len(), 1);
    assert_eq!(list.shadowed[0].name, "a");
    assert_eq!(list.errors.len(), 2, "{:?}", list.errors);
    assert!(
        matches!(&list.errors[0], ConfigError::MissingVariable { server, .. } if server == "a")
    );
    assert!(matches!(
        &list.errors[1],
        ConfigError::Syntax { line: 1, .. }
    ));
    std::fs::remove_dir_all(&project).unwrap();
    std::fs::remove_dir_all(&home).unwrap();
}
