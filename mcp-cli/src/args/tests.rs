use mcp_proto::ProtocolVersion;

use super::values::file_uri;
use super::*;

#[test]
fn roots_are_canonical_file_uris() {
    let dir = std::env::temp_dir().join("mcp args root é #%");
    std::fs::create_dir_all(&dir).unwrap();
    let o = p(&["--root", dir.join(".").to_str().unwrap()]).unwrap();
    let canonical = std::fs::canonicalize(&dir).unwrap();
    let [r] = o.roots.as_slice() else {
        panic!("{:?}", o.roots)
    };
    assert_eq!(r.uri, file_uri(&canonical));
    assert!(r.uri.starts_with("file:///"), "{}", r.uri);
    assert!(
        r.uri.ends_with("/mcp%20args%20root%20%C3%A9%20%23%25"),
        "{}",
        r.uri
    );
    assert_eq!(r.name.as_deref(), Some("mcp args root é #%"));
    assert!(matches!(
        p(&["--root", "/no/such/dir/anywhere"]),
        Err(Stop::Usage(_))
    ));
    assert!(p(&[]).unwrap().roots.is_empty());
}

#[test]
fn log_levels() {
    let level = |a: &str| p(&["--log-level", a]).map(|o| o.log_level);
    assert_eq!(level("debug").unwrap(), Some(LoggingLevel::Debug));
    assert_eq!(level("Warning").unwrap(), Some(LoggingLevel::Warning));
    assert!(matches!(level("loud"), Err(Stop::Usage(_))));
    assert_eq!(p(&[]).unwrap().log_level, None);
}

fn p(args: &[&str]) -> Result<Options, Stop> {
    parse(args.iter().map(|s| (*s).to_owned()))
}

#[test]
fn max_message_size_takes_bytes_or_binary_units() {
    let size = |a: &str| p(&["--max-message-size", a]).map(|o| o.max_message_size);
    assert_eq!(size("1000").unwrap(), Some(1000));
    assert_eq!(size("64MiB").unwrap(), Some(64 << 20));
    assert_eq!(size("512 kib").unwrap(), Some(512 << 10));
    assert_eq!(size("1GiB").unwrap(), Some(1 << 30));
    assert_eq!(p(&[]).unwrap().max_message_size, None);
    for bad in ["", "0", "64MB", "MiB", "-1", "1.5MiB", "99999999999GiB"] {
        assert!(matches!(size(bad), Err(Stop::Usage(_))), "{bad:?}");
    }
}

#[test]
fn clap_definition_is_consistent() {
    command().debug_assert();
}

#[test]
fn defaults() {
    let o = p(&[]).unwrap();
    assert_eq!(
        o.server,
        Server::Config {
            file: None,
            name: None,
            from: Vec::new(),
        }
    );
    assert_eq!(o.command, Command::Info);
    assert_eq!(o.timeout, DEFAULT_TIMEOUT);
    assert_eq!(o.protocol, VersionChoice::Auto);
    assert!(!o.json);
}

#[test]
fn options_anywhere_and_grouped() {
    let o = p(&[
        "call",
        "slow_sum",
        "--json",
        r#"{"a":1}"#,
        "-vv",
        "--timeout=2.5",
        "--protocol",
        "2025-11-25",
    ])
    .unwrap();
    assert_eq!(
        o.command,
        Command::Call {
            tool: "slow_sum".into(),
            args: Some(r#"{"a":1}"#.into()),
            typed: Vec::new(),
            task: false,
        }
    );
    assert!(o.json);
    assert_eq!(o.verbose, 2);
    assert_eq!(o.timeout, Duration::from_millis(2500));
    assert_eq!(
        o.protocol,
        VersionChoice::Pinned(ProtocolVersion::V2025_11_25)
    );
}

#[test]
fn servers_and_headers() {
    let o = p(&[
        "--http",
        "http://127.0.0.1:1/mcp",
        "-H",
        "Authorization: Bearer x",
        "-HX-A:b",
    ])
    .unwrap();
    assert_eq!(o.server, Server::Http("http://127.0.0.1:1/mcp".into()));
    assert_eq!(
        o.headers,
        [
            ("Authorization".into(), "Bearer x".into()),
            ("X-A".into(), "b".into())
        ]
    );
    assert_eq!(
        p(&["--http", "unix:///run/app/mcp.sock#/mcp"])
            .unwrap()
            .server,
        Server::Http("unix:///run/app/mcp.sock#/mcp".into())
    );
    assert_eq!(
        p(&["--stdio", "npx -y x"]).unwrap().server,
        Server::Stdio("npx -y x".into())
    );
    assert_eq!(
        p(&["completions", "zsh"]).unwrap().command,
        Command::Completions(Shell::Zsh)
    );
}

#[test]
fn usage_errors_are_one_line() {
    for bad in [
        &["--stdio", "a", "--http", "http://x"][..],
        &["--http", "ftp://x"],
        &["--http", "unix://relative/s.sock#/mcp"],
        &["--protocol", "2023-01-01"],
        &["--timeout", "0"],
        &["--timeout", "soon"],
        &["--stdio"],
        &["--stdio", "a", "--stdio", "b"],
        &["-H", "no colon", "--http", "http://x"],
        &["-H", "A: b"],
        &["call"],
        &["call", "a", "b", "c"],
        &["read"],
        &["frobnicate"],
        &["--frob"],
        &["-x"],
        &["--json=yes"],
        &["completions", "tcsh"],
        &["--config", "a.json", "--stdio", "x"],
        &["--server", "a", "--http", "http://x"],
        &["--from", "codex", "--config", "a.json"],
        &["--from", "emacs"],
        &["servers", "--start", "--no-start"],
    ] {
        match p(bad) {
            Err(Stop::Usage(line)) => {
                assert!(!line.contains('\n'), "{bad:?}: {line}");
                assert!(!line.is_empty());
            }
            other => panic!("{bad:?} should be a usage error, got {other:?}"),
        }
    }
}

#[test]
fn help_and_version_print() {
    for args in [&["--help"][..], &["-h"], &["call", "--help"], &["-V"]] {
        assert!(matches!(p(args), Err(Stop::Print(_))), "{args:?}");
    }
}
