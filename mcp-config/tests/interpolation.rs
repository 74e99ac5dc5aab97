//! Every `${...}` form each host documents, one by one.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::MAIN_SEPARATOR_STR as SEP;

use common::*;
use mcp_config::{ConfigError, Format, Resolver};

fn resolver() -> Resolver {
    Resolver::new()
        .env_vars([("A", "alpha"), ("B", "${A}"), ("EMPTY", "")])
        .workspace_folder("/ws/acme")
        .home("/home/alice")
        .inputs(Answers::default().provider())
}

fn ok(format: Format, text: &str) -> String {
    expand_arg(format, text, &resolver())
        .unwrap_or_else(|e| panic!("{format:?} {text:?}: {e}"))
        .expose()
        .to_owned()
}

#[test]
fn claude_code_forms() {
    let f = Format::ClaudeCode;
    assert_eq!(ok(f, "${A}"), "alpha");
    assert_eq!(ok(f, "x-${A}-${A}-y"), "x-alpha-alpha-y");
    assert_eq!(ok(f, "${A:-fallback}"), "alpha");
    assert_eq!(ok(f, "${UNSET:-fallback}"), "fallback");
    assert_eq!(ok(f, "${UNSET:-}"), "");
    assert_eq!(
        ok(f, "${EMPTY:-fallback}"),
        "fallback",
        "POSIX :- also covers empty"
    );
    assert_eq!(ok(f, "${EMPTY}"), "");
    assert_eq!(ok(f, "${UNSET:-http://h:8080/x}"), "http://h:8080/x");
    // Not expanded again: B's value is the text `${A}`.
    assert_eq!(ok(f, "${B}"), "${A}");
    // Not Claude Code variables: kept as written.
    assert_eq!(ok(f, "$A"), "$A");
    assert_eq!(ok(f, "${A%/}"), "${A%/}");
    assert_eq!(ok(f, "${env:A}"), "${env:A}");
    assert_eq!(ok(f, "${A"), "${A");
    assert_eq!(ok(f, "no vars"), "no vars");
}

#[test]
fn vscode_forms() {
    let f = Format::VsCode;
    assert_eq!(ok(f, "${env:A}"), "alpha");
    assert_eq!(ok(f, "${env:EMPTY}"), "");
    assert_eq!(ok(f, "${workspaceFolder}/src"), "/ws/acme/src");
    assert_eq!(ok(f, "${workspaceFolderBasename}"), "acme");
    assert_eq!(ok(f, "${userHome}"), "/home/alice");
    assert_eq!(ok(f, "a${pathSeparator}b${/}c"), format!("a{SEP}b{SEP}c"));
    assert_eq!(ok(f, "Bearer ${input:tok}"), "Bearer answer-tok");
    assert_eq!(ok(f, "${input:name}"), "answer-name");
    assert_eq!(ok(f, "$A"), "$A");
}

#[test]
fn cursor_forms() {
    let f = Format::Cursor;
    assert_eq!(ok(f, "${env:A}"), "alpha");
    assert_eq!(ok(f, "${userHome}/bin"), "/home/alice/bin");
    assert_eq!(ok(f, "${workspaceFolder}"), "/ws/acme");
    assert_eq!(ok(f, "${workspaceFolderBasename}"), "acme");
    assert_eq!(ok(f, "${/}"), SEP);
}

#[test]
fn standard_forms() {
    let f = Format::Standard;
    assert_eq!(ok(f, "${env:A}"), "alpha");
    assert_eq!(ok(f, "${value:Foo}"), "Foo");
    assert_eq!(ok(f, "${env:UNSET | value:Foo}"), "Foo");
    assert_eq!(ok(f, "${env:EMPTY|env:A}"), "alpha", "empty is not a value");
    assert_eq!(ok(f, "${ env:A | value:Foo }"), "alpha");
    assert_eq!(ok(f, "${input:pw}"), "answer-pw");
    assert_eq!(
        ok(f, "postgresql://${env:A}:${value:x}@host/db"),
        "postgresql://alpha:x@host/db"
    );
    // A scheme we do not have, with a fallback that works.
    assert_eq!(ok(f, "${op://vault/item/field | env:A}"), "alpha");
}

#[test]
fn what_is_secret() {
    let r = resolver();
    let secret = |f, t| expand_arg(f, t, &r).unwrap().is_secret();
    assert!(secret(Format::ClaudeCode, "${A}"));
    assert!(!secret(Format::ClaudeCode, "${UNSET:-d}"));
    assert!(secret(Format::VsCode, "${env:A}"));
    assert!(secret(Format::VsCode, "${input:tok}"), "password input");
    assert!(!secret(Format::VsCode, "${input:name}"), "plain input");
    assert!(!secret(Format::VsCode, "${workspaceFolder}"));
    assert!(!secret(Format::Standard, "${value:x}"));
    assert!(secret(Format::Standard, "${input:x}"));
}

#[test]
fn missing_values_are_errors_in_every_format() {
    let r = Resolver::new().env_vars([("A", "alpha")]);
    for (format, text) in [
        (Format::ClaudeCode, "${NOPE}"),
        (Format::VsCode, "${env:NOPE}"),
        (Format::Cursor, "${env:NOPE}"),
        (Format::Standard, "${env:NOPE}"),
        (Format::Standard, "${env:NOPE | env:ALSO_NOPE}"),
        (Format::VsCode, "${workspaceFolder}"),
        (Format::Cursor, "${workspaceFolderBasename}"),
    ] {
        match expand_arg(format, text, &r) {
            Err(ConfigError::MissingVariable {
                server,
                field,
                variable,
                ..
            }) => {
                assert_eq!(server, "s");
                assert_eq!(field, "args[0]");
                let named = text.trim_start_matches("${").trim_end_matches('}');
                let named = named.trim_start_matches("env:");
                assert!(
                    variable.contains(named.split(' ').next().unwrap()),
                    "{variable}"
                );
            }
            other => panic!("{format:?} {text}: {other:?}"),
        }
    }
}

#[test]
fn unsupported_forms_are_errors() {
    let r = resolver();
    for (format, text) in [
        (Format::VsCode, "${command:pickProcess}"),
        (Format::VsCode, "${config:editor.fontSize}"),
        (Format::VsCode, "${file}"),
        (Format::Cursor, "${input:tok}"),
        (Format::Standard, "${op://vault/item/field}"),
        (Format::Standard, "${A}"),
    ] {
        match expand_arg(format, text, &r) {
            Err(ConfigError::UnsupportedVariable { variable, .. }) => {
                assert!(text.contains(&variable), "{variable} vs {text}");
            }
            other => panic!("{format:?} {text}: {other:?}"),
        }
    }
}
