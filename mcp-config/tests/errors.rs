//! Broken files and entries: each error names the file, the server and the
//! field, and never a value.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use mcp_config::{
    BuildError, ConfigError, ConfigFile, Format, InputError, InputMissing, InputSpec, Resolver,
    TransportConfig,
};

#[test]
fn bad_json_has_line_and_column() {
    let path = fixture("broken/missing-comma.mcp.json");
    let err = ConfigFile::load(&path).unwrap_err();
    let ConfigError::Syntax {
        line, column, hint, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((*line, *column), (5, 7), "{err}");
    assert_eq!(*hint, "");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}:5:7: expected", path.display())),
        "{text}"
    );
}

#[test]
fn comments_in_a_strict_format_say_so() {
    let err = ConfigFile::load(fixture("broken/project/.mcp.json")).unwrap_err();
    let ConfigError::Syntax { line, hint, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 3);
    assert!(hint.contains("no comments"), "{err}");
}

#[test]
fn jsonc_errors_keep_the_users_position() {
    let text = "{\n  /* a\n     block */ \"servers\": {\n    // x\n    \"a\": {\"command\": \"x\",},\n    \"b\": {\"command\" \"y\"}\n  }\n}";
    let err = ConfigFile::parse(".vscode/mcp.json", text, None).unwrap_err();
    let ConfigError::Syntax { line, column, .. } = err else {
        panic!("{err:?}");
    };
    assert_eq!((line, column), (6, 21), "the `\"` after `\"command\"`");
}

#[test]
fn one_broken_server_does_not_hide_the_others() {
    let path = fixture("broken/four-servers.mcp.json");
    let file = ConfigFile::load(&path).unwrap();
    let results = file.resolve_each(&Resolver::new().env_vars::<_, String, String>([]));
    let by_name: Vec<(&str, &Result<_, _>)> = file.server_names().zip(results.iter()).collect();
    let result = |name: &str| by_name.iter().find(|(n, _)| *n == name).unwrap().1;

    assert!(result("ok").is_ok());
    match result("websocket") {
        Err(ConfigError::UnknownType {
            server,
            value,
            path: p,
            ..
        }) => {
            assert_eq!((server.as_str(), value.as_str()), ("websocket", "ws"));
            assert_eq!(p, &path);
        }
        other => panic!("{other:?}"),
    }
    match result("no-command") {
        Err(ConfigError::MissingField { field, server, .. }) => {
            assert_eq!((*field, server.as_str()), ("command", "no-command"));
        }
        other => panic!("{other:?}"),
    }
    match result("remote-without-type") {
        Err(
            e @ ConfigError::MissingField {
                field: "command", ..
            },
        ) => {
            assert!(e.to_string().contains("add \"type\": \"http\""), "{e}");
        }
        other => panic!("{other:?}"),
    }
    match result("needs-token") {
        Err(
            e @ ConfigError::MissingVariable {
                field, variable, ..
            },
        ) => {
            assert_eq!(field, "headers.Authorization");
            assert!(variable.contains("NOT_SET_ANYWHERE"));
            let text = e.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
            assert!(text.contains("\"needs-token\""), "{text}");
            assert!(text.contains("headers.Authorization"), "{text}");
            assert_eq!(e.server(), Some("needs-token"));
            assert_eq!(e.path(), path);
        }
        other => panic!("{other:?}"),
    }
    match result("bad-args") {
        Err(ConfigError::Shape { field, .. }) => assert_eq!(field, "args"),
        other => panic!("{other:?}"),
    }
    // `resolve` stops at the first error.
    assert!(file.resolve(&Resolver::new()).is_err());
}

#[test]
fn unknown_types_per_format() {
    for (format, ty) in [
        (Format::ClaudeCode, "streamable-http"),
        (Format::VsCode, "streamable-http"),
        (Format::Cursor, "websocket"),
        (Format::Standard, "http"),
    ] {
        let key = format.servers_key();
        let text = format!(r#"{{"{key}": {{"s": {{"type": "{ty}", "url": "http://h/mcp"}}}}}}"#);
        let file = ConfigFile::parse("f.json", &text, Some(format)).unwrap();
        match file.resolve(&Resolver::new()) {
            Err(e @ ConfigError::UnknownType { .. }) => {
                let text = e.to_string();
                assert!(text.contains(&format!("unknown type \"{ty}\"")), "{text}");
                assert!(text.contains("field \"type\""), "{text}");
            }
            other => panic!("{format:?}: {other:?}"),
        }
    }
}

#[test]
fn missing_command_url_and_type() {
    let cases = [
        (Format::ClaudeCode, r#"{"type": "http"}"#, "url"),
        (Format::ClaudeCode, r#"{"type": "sse", "url": ""}"#, "url"),
        (Format::VsCode, r#"{"env": {}}"#, "command"),
        (Format::Cursor, r#"{"type": "stdio"}"#, "command"),
        (Format::Standard, r#"{"command": "x"}"#, "type"),
        (Format::Standard, r#"{"type": "streamable-http"}"#, "url"),
    ];
    for (format, server, missing) in cases {
        let text = format!(r#"{{"{}": {{"s": {server}}}}}"#, format.servers_key());
        let file = ConfigFile::parse("f.json", &text, Some(format)).unwrap();
        match file.resolve(&Resolver::new()) {
            Err(ConfigError::MissingField { field, .. }) => assert_eq!(field, missing),
            other => panic!("{format:?} {server}: {other:?}"),
        }
    }
}

#[test]
fn socket_urls_only_in_the_vscode_format() {
    // VS Code documents `unix:///path#/mcp` and `pipe:///pipe/NAME#/mcp`
    // for its `url`; the other formats document http(s) only.
    for format in [
        Format::ClaudeCode,
        Format::VsCode,
        Format::Cursor,
        Format::Standard,
    ] {
        for url in ["unix:///${env:HOME}/s.sock#/mcp", "PIPE:///pipe/x#/mcp"] {
            let ty = if format == Format::Standard {
                "streamable-http"
            } else {
                "http"
            };
            let url = match format {
                Format::ClaudeCode => url.replace("${env:HOME}", "${HOME}"),
                _ => url.to_owned(),
            };
            let text = format!(
                r#"{{"{}": {{"s": {{"type": "{ty}", "url": "{url}"}}}}}}"#,
                format.servers_key()
            );
            let file = ConfigFile::parse("f.json", &text, Some(format)).unwrap();
            let resolved = file.resolve(&Resolver::new().env_vars([("HOME", "/home/me")]));
            match (format, resolved) {
                (Format::VsCode, Ok(servers)) => {
                    let TransportConfig::Http(r) = &servers[0].transport else {
                        panic!("{:?}", servers[0])
                    };
                    assert!(r.url.expose().ends_with("#/mcp"), "{url}");
                }
                (_, Err(ConfigError::Shape { field, message, .. })) => {
                    assert_eq!(field, "url", "{format:?}");
                    assert!(message.contains(".vscode/mcp.json"), "{message}");
                }
                (f, other) => panic!("{f:?} {url}: {other:?}"),
            }
        }
    }
}

#[test]
fn inputs_unknown_refused_or_unanswered() {
    let text = r#"{"inputs": [{"type": "promptString", "id": "known", "password": true}],
                  "servers": {"s": {"command": "x", "args": ["${input:unknown}"]},
                              "t": {"command": "x", "env": {"K": "${input:known}"}}}}"#;
    let file = ConfigFile::parse(".vscode/mcp.json", text, None).unwrap();
    let answers = Answers::default();
    let results = file.resolve_each(&Resolver::new().inputs(answers.provider()));
    match &results[0] {
        Err(e @ ConfigError::UnknownInput { id, field, .. }) => {
            assert_eq!((id.as_str(), field.as_str()), ("unknown", "args[0]"));
            assert!(e.to_string().contains("\"inputs\""), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert!(results[1].is_ok());
    assert_eq!(answers.ids(), ["known"], "an unknown id is never asked");

    // No provider at all.
    match &file.resolve_each(&Resolver::new())[1] {
        Err(ConfigError::Input {
            id, field, reason, ..
        }) => {
            assert_eq!((id.as_str(), field.as_str()), ("known", "env.K"));
            assert_eq!(*reason, InputMissing::NoProvider);
        }
        other => panic!("{other:?}"),
    }
    // The user cancels.
    let cancel = |_: &InputSpec| -> Result<String, InputError> {
        Err(InputError::new("cancelled by the user"))
    };
    match &file.resolve_each(&Resolver::new().inputs(cancel))[1] {
        Err(e @ ConfigError::Input { reason, .. }) => {
            assert_eq!(
                *reason,
                InputMissing::Refused(InputError::new("cancelled by the user"))
            );
            assert!(e.to_string().contains("cancelled"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_inputs_list_fails_the_file() {
    let text =
        r#"{"inputs": [{"type": "pickString", "id": "x", "options": ["a"]}], "servers": {}}"#;
    match ConfigFile::parse(".vscode/mcp.json", text, None) {
        Err(ConfigError::Shape { field, message, .. }) => {
            assert_eq!(field, "inputs[0].type");
            assert!(message.contains("pickString"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn shapes_files_and_names() {
    let parse = |name: &str, text: &str| ConfigFile::parse(name, text, None);
    assert!(matches!(
        parse("x.json", r#"{"foo": 1}"#),
        Err(ConfigError::UnknownFormat { .. })
    ));
    assert!(matches!(
        parse(".mcp.json", "[]"),
        Err(ConfigError::Shape { .. })
    ));
    assert!(matches!(
        parse(".mcp.json", r#"{"mcpServers": []}"#),
        Err(ConfigError::Shape { field, .. }) if field == "mcpServers"
    ));
    // The other format's key is a mistake worth saying, not zero servers.
    match parse(
        ".vscode/mcp.json",
        r#"{"mcpServers": {"a": {"command": "x"}}}"#,
    ) {
        Err(e @ ConfigError::Shape { .. }) => {
            assert!(
                e.to_string()
                    .contains("reads \"servers\", not \"mcpServers\""),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(parse(".cursor/mcp.json", r#"{"servers": {}}"#).is_err());
    // No servers at all is an empty list, not an error.
    assert_eq!(parse(".mcp.json", "{}").unwrap().server_names().count(), 0);

    let one = |text: &str, format| {
        let f = ConfigFile::parse("f.json", text, Some(format)).unwrap();
        f.resolve(&Resolver::new()).unwrap_err()
    };
    let field_of = |e: ConfigError| match e {
        ConfigError::Shape { field, .. } => field,
        other => panic!("{other:?}"),
    };
    let claude = Format::ClaudeCode;
    assert_eq!(
        field_of(one(
            r#"{"mcpServers": {"s": {"command": "x", "env": {"PORT": 8080}}}}"#,
            claude
        )),
        "env.PORT"
    );
    assert_eq!(
        field_of(one(
            r#"{"mcpServers": {"s": {"command": "x", "args": ["a", 1]}}}"#,
            claude
        )),
        "args[1]"
    );
    assert_eq!(
        field_of(one(r#"{"mcpServers": {"s": {"command": 7}}}"#, claude)),
        "command"
    );
    assert_eq!(
        field_of(one(r#"{"mcpServers": {"s": "npx"}}"#, claude)),
        "(server)"
    );
    let std = Format::Standard;
    assert_eq!(
        field_of(one(
            r#"{"mcpServers": {"my server": {"type": "stdio", "command": "x"}}}"#,
            std
        )),
        "(name)"
    );
    assert_eq!(
        field_of(one(
            r#"{"mcpServers": {"s": {"type": "stdio", "command": "x", "url": "http://h"}}}"#,
            std
        )),
        "url"
    );
    assert_eq!(
        field_of(one(
            r#"{"mcpServers": {"s": {"type": "sse", "url": "http://h", "env": {}}}}"#,
            std
        )),
        "env"
    );
}

#[test]
fn unreadable_file() {
    let err = ConfigFile::load(fixture("does-not-exist.json")).unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("does-not-exist.json"));
    // The OS error once, from source() (mcp_proto::error).
    test_support::assert_causes_once(&err);
    let text = mcp_proto::error::chain(&err).to_string();
    assert!(
        text.ends_with("No such file or directory (os error 2)"),
        "{text}"
    );
}

#[test]
fn env_file_errors_name_the_file_and_server() {
    let dir = std::env::temp_dir().join(format!("mcp-config-envfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bad.env"),
        "OK=1\nthis line is not a pair SECRET\n",
    )
    .unwrap();
    let text = r#"{"servers": {
        "missing": {"command": "x", "envFile": "${workspaceFolder}/nope.env"},
        "bad": {"command": "x", "envFile": "bad.env"},
        "good": {"command": "x", "envFile": "GOOD_ENV_FILE", "env": {"QUOTED": "env wins"}}}}"#;
    let good = fixture("project/.env");
    let text = text.replace("GOOD_ENV_FILE", good.to_str().unwrap());
    let file = ConfigFile::parse(".vscode/mcp.json", &text, None).unwrap();
    let servers = file
        .resolve(&Resolver::new().workspace_folder(&dir))
        .unwrap();
    let err = |name| match find(&servers, name).prepare() {
        Err(BuildError::Config(e @ ConfigError::EnvFile { .. })) => e,
        other => panic!("{other:?}"),
    };
    let missing = err("missing");
    assert_eq!(missing.server(), Some("missing"));
    assert!(missing.to_string().contains("nope.env"), "{missing}");
    test_support::assert_causes_once(&missing);
    let bad = err("bad").to_string();
    assert!(bad.contains("line 2"), "{bad}");
    assert!(!bad.contains("SECRET"), "{bad}");

    // The env file, then `env` on top of it (last wins when spawned).
    let Ok(mcp_config::Prepared::Stdio(cmd)) = find(&servers, "good").prepare() else {
        panic!("stdio expected");
    };
    let envs: Vec<(String, String)> = cmd
        .get_envs()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.unwrap_or_default().to_string_lossy().into_owned(),
            )
        })
        .collect();
    let pairs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("LOG_LEVEL", "debug"),
            ("PERPLEXITY_API_KEY", "from-env-file"),
            ("QUOTED", "two words"),
            ("QUOTED", "env wins"),
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
