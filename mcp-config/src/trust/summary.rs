//! [`Summary`]: what a configuration file would run, as shown to a person.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{ContentHash, injection_risk};
use crate::entry::RawTransport;
use crate::model::SandboxConfig;
use crate::parse::ConfigFile;

/// Programs that run a command line given as an argument.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "cmd",
    "powershell",
    "pwsh",
];
/// Programs that run another one with more rights.
const PRIVILEGED: &[&str] = &["sudo", "doas", "su", "pkexec", "runas", "gsudo"];

/// The program's name without directories or `.exe`, lowercased.
fn program_name(command: &str) -> String {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let base = base.to_ascii_lowercase();
    base.strip_suffix(".exe").unwrap_or(&base).to_owned()
}

/// Something in a server's entry to look at twice before trusting the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// `env` sets a loader or injection variable ([`injection_risk`]).
    InjectionVariable {
        /// The variable.
        name: String,
        /// What it does.
        effect: &'static str,
    },
    /// `envFile` names a file whose variables are set too; they are read
    /// when the server starts and are not part of this summary.
    EnvFile {
        /// The file as written.
        path: String,
    },
    /// The command is a shell or command interpreter (`sh -c ...`).
    Shell {
        /// The program.
        program: String,
    },
    /// The command runs a program with more rights (`sudo`, `doas`, ...).
    Privileged {
        /// The program.
        program: String,
    },
    /// The command is a relative path: a program from the project itself.
    ProjectProgram {
        /// The command as written.
        command: String,
    },
    /// A value holds characters that hide text from a person
    /// ([`hidden_chars`](crate::hidden_chars): zero-width, bidi, tag or
    /// control characters); the summary shows each escaped.
    HiddenText {
        /// Which value: `name`, `command`, `args[2]`, `env`, `url`, ...
        field: String,
        /// How many such characters it holds.
        count: usize,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::InjectionVariable { name, effect } => {
                write!(f, "env {} {effect}", Shown(name))
            }
            Warning::EnvFile { path } => write!(
                f,
                "envFile {}: its variables are set too, and are not shown here",
                Shown(path)
            ),
            Warning::Shell { program } => {
                write!(f, "{} runs a command line of its own", Shown(program))
            }
            Warning::Privileged { program } => {
                write!(f, "{} runs a program with more rights", Shown(program))
            }
            Warning::ProjectProgram { command } => {
                write!(f, "{} is a program of the project itself", Shown(command))
            }
            Warning::HiddenText { field, count } => write!(
                f,
                "{field} hides {count} character{} from view (shown escaped above)",
                if *count == 1 { "" } else { "s" }
            ),
        }
    }
}

/// How a server would be started, as written in the file (`${...}` not
/// expanded, so no secret is read to show it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Launch {
    /// A process.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments, all of them.
        args: Vec<String>,
        /// The names of the variables `env` sets (values are not shown).
        env_names: Vec<String>,
        /// `cwd`, if set.
        cwd: Option<String>,
        /// `envFile`, if set.
        env_file: Option<String>,
        /// `"sandboxEnabled": true`: what the sandbox allows, as written.
        sandbox: Option<SandboxConfig>,
    },
    /// An HTTP or SSE server.
    Remote {
        /// `true` for the 2024-11-05 HTTP+SSE transport.
        sse: bool,
        /// The URL.
        url: String,
        /// The names of the headers sent (values are not shown).
        header_names: Vec<String>,
    },
    /// An entry that cannot be started (its shape is wrong): it runs
    /// nothing.
    Invalid,
}

/// One server of a [`Summary`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSummary {
    /// Its name.
    pub name: String,
    /// What it would start.
    pub launch: Launch,
    /// `disabled: true`: a host does not start it (listed anyway: a later
    /// edit enabling it changes the file, and so its hash).
    pub disabled: bool,
    /// Its `toolPolicy` (which tools run without asking, ask, or never run).
    pub tool_policy: crate::ToolPolicyConfig,
    /// What to look at twice.
    pub warnings: Vec<Warning>,
}

/// What a configuration file would run: every server with its command,
/// arguments, environment variable names, `cwd`, `envFile`, URL and header
/// names, and the [`Warning`]s found. Its [`Display`](fmt::Display) is the
/// text to show a person before they trust the file: every value from the
/// file is shown exactly (quoted, with control and invisible characters
/// escaped, so a value cannot hide or rewrite what is shown).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// The file.
    pub path: PathBuf,
    /// The part of the file summarized, when not all of it
    /// ([`Source::section`](crate::Source::section)).
    pub section: Option<String>,
    /// The hash of the bytes summarized.
    pub hash: ContentHash,
    /// Its servers, sorted by name.
    pub servers: Vec<ServerSummary>,
}

impl Summary {
    /// Whether any server has a [`Warning`].
    pub fn has_warnings(&self) -> bool {
        self.servers.iter().any(|s| !s.warnings.is_empty())
    }
}

impl ConfigFile {
    /// The SHA-256 of the text this file was parsed from.
    pub fn content_hash(&self) -> ContentHash {
        self.hash
    }

    /// What starting this file's servers would run, to show before the
    /// user trusts it. Built from the text the file was parsed from, so
    /// what is shown is what runs.
    pub fn summary(&self) -> Summary {
        let servers = self
            .entries()
            .map(|(name, raw)| {
                let Some(raw) = raw else {
                    return ServerSummary {
                        name: name.to_owned(),
                        launch: Launch::Invalid,
                        disabled: false,
                        tool_policy: crate::ToolPolicyConfig::default(),
                        warnings: Vec::new(),
                    };
                };
                let mut warnings = Vec::new();
                let launch = match &raw.transport {
                    RawTransport::Stdio {
                        command,
                        args,
                        env,
                        cwd,
                        env_file,
                        sandbox,
                    } => {
                        let program = program_name(command);
                        if SHELLS.contains(&program.as_str()) {
                            warnings.push(Warning::Shell {
                                program: command.clone(),
                            });
                        }
                        if PRIVILEGED.contains(&program.as_str()) {
                            warnings.push(Warning::Privileged {
                                program: command.clone(),
                            });
                        }
                        let relative = (command.contains('/') || command.contains('\\'))
                            && !Path::new(command).is_absolute()
                            && !command.starts_with("${");
                        if relative {
                            warnings.push(Warning::ProjectProgram {
                                command: command.clone(),
                            });
                        }
                        for (k, _) in env {
                            if let Some(effect) = injection_risk(k) {
                                warnings.push(Warning::InjectionVariable {
                                    name: k.clone(),
                                    effect,
                                });
                            }
                        }
                        if let Some(f) = env_file {
                            warnings.push(Warning::EnvFile { path: f.clone() });
                        }
                        Launch::Stdio {
                            command: command.clone(),
                            args: args.clone(),
                            env_names: env.iter().map(|(k, _)| k.clone()).collect(),
                            cwd: cwd.clone(),
                            env_file: env_file.clone(),
                            sandbox: sandbox.clone(),
                        }
                    }
                    RawTransport::Remote {
                        sse,
                        url,
                        headers,
                        env_headers,
                        ..
                    } => Launch::Remote {
                        sse: *sse,
                        url: url.clone(),
                        header_names: headers
                            .iter()
                            .map(|(k, _)| k.clone())
                            .chain(env_headers.iter().map(|h| h.name.clone()))
                            .collect(),
                    },
                };
                hidden_text(name, &launch, &mut warnings);
                ServerSummary {
                    name: name.to_owned(),
                    launch,
                    disabled: raw.disabled,
                    tool_policy: raw.tool_policy.clone(),
                    warnings,
                }
            })
            .collect();
        Summary {
            path: self.path().to_owned(),
            section: self.source().section.clone(),
            hash: self.hash,
            servers,
        }
    }
}

/// A [`Warning::HiddenText`] for each value of the entry that hides text.
fn hidden_text(name: &str, launch: &Launch, warnings: &mut Vec<Warning>) {
    let mut values: Vec<(String, &str)> = vec![("name".into(), name)];
    match launch {
        Launch::Stdio {
            command,
            args,
            env_names,
            cwd,
            env_file,
            sandbox,
        } => {
            values.push(("command".into(), command));
            values.extend(
                args.iter()
                    .enumerate()
                    .map(|(i, a)| (format!("args[{i}]"), a.as_str())),
            );
            values.extend(env_names.iter().map(|n| ("env".to_owned(), n.as_str())));
            values.extend(cwd.iter().map(|c| ("cwd".to_owned(), c.as_str())));
            values.extend(env_file.iter().map(|e| ("envFile".to_owned(), e.as_str())));
            if let Some(sb) = sandbox {
                let paths = [
                    ("sandbox.filesystem.allowWrite", &sb.allow_write),
                    ("sandbox.filesystem.denyRead", &sb.deny_read),
                    ("sandbox.filesystem.denyWrite", &sb.deny_write),
                ];
                for (field, list) in paths {
                    values.extend(
                        list.iter()
                            .filter_map(|p| Some((field.to_owned(), p.to_str()?))),
                    );
                }
                let domains = [
                    ("sandbox.network.allowedDomains", &sb.allowed_domains),
                    ("sandbox.network.deniedDomains", &sb.denied_domains),
                ];
                for (field, list) in domains {
                    values.extend(list.iter().map(|d| (field.to_owned(), d.as_str())));
                }
            }
        }
        Launch::Remote {
            url, header_names, ..
        } => {
            values.push(("url".into(), url));
            values.extend(
                header_names
                    .iter()
                    .map(|n| ("headers".to_owned(), n.as_str())),
            );
        }
        Launch::Invalid => {}
    }
    for (field, value) in values {
        let count = crate::hidden_chars(value).count();
        if count > 0 {
            warnings.push(Warning::HiddenText { field, count });
        }
    }
}

/// A value from the file as shown: bare when it is only letters, digits and
/// `-_./:@%+=,~`, else quoted with Rust's escapes (`"a b"`,
/// `"\u{1b}[2K"`, `"\u{202e}"`).
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bare = !self.0.is_empty()
            && self
                .0
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,~".contains(c));
        if bare {
            f.write_str(self.0)
        } else {
            write!(f, "{:?}", self.0)
        }
    }
}

/// `sandboxed: writes ...; no reads of ...; network: ...` lines.
fn write_sandbox(f: &mut fmt::Formatter<'_>, sb: &SandboxConfig) -> fmt::Result {
    let list =
        |f: &mut fmt::Formatter<'_>, label: &str, items: &mut dyn Iterator<Item = String>| {
            write!(f, "      {label}:")?;
            let mut any = false;
            for i in items {
                write!(f, " {}", Shown(&i))?;
                any = true;
            }
            if !any {
                write!(f, " none")?;
            }
            writeln!(f)
        };
    let paths = |p: &[std::path::PathBuf]| -> Vec<String> {
        p.iter().map(|p| p.display().to_string()).collect()
    };
    writeln!(f, "    sandboxed (reads everything but what is denied):")?;
    list(f, "writes", &mut paths(&sb.allow_write).into_iter())?;
    if !sb.deny_read.is_empty() {
        list(f, "no reads of", &mut paths(&sb.deny_read).into_iter())?;
    }
    if !sb.deny_write.is_empty() {
        list(f, "no writes to", &mut paths(&sb.deny_write).into_iter())?;
    }
    list(f, "network", &mut sb.allowed_domains.iter().cloned())?;
    if !sb.denied_domains.is_empty() {
        list(f, "never", &mut sb.denied_domains.iter().cloned())?;
    }
    Ok(())
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Shown(&self.path.display().to_string()))?;
        if let Some(section) = &self.section {
            write!(f, " {}", Shown(section))?;
        }
        writeln!(f, " ({}) would start:", self.hash)?;
        if self.servers.is_empty() {
            writeln!(f, "  (no servers)")?;
        }
        for s in &self.servers {
            let off = if s.disabled { " (disabled)" } else { "" };
            match &s.launch {
                Launch::Stdio {
                    command,
                    args,
                    env_names,
                    cwd,
                    env_file,
                    sandbox,
                } => {
                    write!(f, "  {}{off}: runs {}", Shown(&s.name), Shown(command))?;
                    for a in args {
                        write!(f, " {}", Shown(a))?;
                    }
                    writeln!(f)?;
                    if !env_names.is_empty() {
                        write!(f, "    env:")?;
                        for n in env_names {
                            write!(f, " {}", Shown(n))?;
                        }
                        writeln!(f)?;
                    }
                    if let Some(c) = cwd {
                        writeln!(f, "    cwd: {}", Shown(c))?;
                    }
                    if let Some(e) = env_file {
                        writeln!(f, "    envFile: {}", Shown(e))?;
                    }
                    match sandbox {
                        Some(sb) => write_sandbox(f, sb)?,
                        None => writeln!(f, "    not sandboxed (all of the user's rights)")?,
                    }
                }
                Launch::Remote {
                    sse,
                    url,
                    header_names,
                } => {
                    let kind = if *sse { "sse" } else { "http" };
                    writeln!(
                        f,
                        "  {}{off}: connects ({kind}) to {}",
                        Shown(&s.name),
                        Shown(url)
                    )?;
                    if !header_names.is_empty() {
                        write!(f, "    headers:")?;
                        for n in header_names {
                            write!(f, " {}", Shown(n))?;
                        }
                        writeln!(f)?;
                    }
                }
                Launch::Invalid => {
                    writeln!(f, "  {}: (invalid entry, starts nothing)", Shown(&s.name))?;
                }
            }
            let p = &s.tool_policy;
            for (list, globs) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
                if !globs.is_empty() {
                    write!(f, "    toolPolicy {list}:")?;
                    for g in globs {
                        write!(f, " {}", Shown(g))?;
                    }
                    writeln!(f)?;
                }
            }
            for w in &s.warnings {
                writeln!(f, "    warning: {w}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_shows_everything_that_would_run_and_no_value() {
        let f = ConfigFile::parse(
            ".mcp.json",
            r#"{"mcpServers": {
                "git": {"command": "npx", "args": ["-y", "git-server", "--repo", "a b"],
                        "env": {"GITHUB_TOKEN": "ghp_secret", "LD_PRELOAD": "./evil.so"}},
                "helper": {"command": "./scripts/run.sh", "cwd": "tools", "disabled": true,
                           "toolPolicy": {"allow": ["**"], "deny": ["rm *"]}},
                "wrapped": {"command": "/bin/sh", "args": ["-c", "curl x | sh"]},
                "root": {"command": "sudo", "args": ["server"]},
                "api": {"type": "http", "url": "https://api.example/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "bad": {"type": "carrier-pigeon"}
            }}"#,
            None,
        )
        .unwrap();
        let s = f.summary();
        assert_eq!(s.hash, f.content_hash());
        let names: Vec<&str> = s.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["api", "bad", "git", "helper", "root", "wrapped"]);
        let git = &s.servers[2];
        assert_eq!(
            git.launch,
            Launch::Stdio {
                command: "npx".into(),
                args: vec![
                    "-y".into(),
                    "git-server".into(),
                    "--repo".into(),
                    "a b".into()
                ],
                env_names: vec!["GITHUB_TOKEN".into(), "LD_PRELOAD".into()],
                cwd: None,
                env_file: None,
                sandbox: None,
            }
        );
        assert!(
            matches!(&git.warnings[..], [Warning::InjectionVariable { name, .. }] if name == "LD_PRELOAD")
        );
        assert!(matches!(
            &s.servers[3].warnings[..],
            [Warning::ProjectProgram { .. }]
        ));
        assert!(s.servers[3].disabled);
        assert!(matches!(
            &s.servers[4].warnings[..],
            [Warning::Privileged { .. }]
        ));
        assert!(matches!(
            &s.servers[5].warnings[..],
            [Warning::Shell { .. }]
        ));
        assert_eq!(s.servers[1].launch, Launch::Invalid);
        let text = s.to_string();
        for shown in [
            "git: runs npx -y git-server --repo \"a b\"",
            "env: GITHUB_TOKEN LD_PRELOAD",
            "warning: env LD_PRELOAD loads a library",
            "helper (disabled): runs ./scripts/run.sh",
            "cwd: tools",
            "toolPolicy allow: \"**\"",
            "toolPolicy deny: \"rm *\"",
            "wrapped: runs /bin/sh -c \"curl x | sh\"",
            "api: connects (http) to https://api.example/mcp",
            "headers: Authorization",
            &f.content_hash().to_string(),
        ] {
            assert!(text.contains(shown), "{shown:?} missing from\n{text}");
        }
        assert!(
            !text.contains("ghp_secret") && !text.contains("evil.so"),
            "{text}"
        );
        assert!(!text.contains("Bearer"), "{text}");
    }

    #[test]
    fn values_cannot_hide_or_rewrite_what_is_shown() {
        let f = ConfigFile::parse(
            ".mcp.json",
            "{\"mcpServers\": {\"x\\u001b[2K\": {\"command\": \"npx\", \"args\": [\"ok\\r\\u001b[2Kharmless\", \"\\u202eexe.txt\", \"\\u009b2J\"]}}}",
            None,
        )
        .unwrap();
        let text = f.summary().to_string();
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(!text.contains('\u{202e}'), "{text:?}");
        assert!(text.contains(r#""ok\r\u{1b}[2Kharmless""#), "{text}");
        // Each value that hides text is flagged, by field.
        for flag in [
            "warning: name hides 1 character",
            "warning: args[0] hides 2 characters",
            "warning: args[1] hides 1 character",
            "warning: args[2] hides 1 character",
        ] {
            assert!(text.contains(flag), "{flag:?} missing from\n{text}");
        }
        // Zero-width and tag characters too, which Rust's escaping alone
        // would show but not flag.
        let f = ConfigFile::parse(
            ".mcp.json",
            "{\"mcpServers\": {\"x\": {\"command\": \"np\\u200bx\", \"args\": [\"\\udb40\\udc41\"]}}}",
            None,
        )
        .unwrap();
        let s = f.summary();
        assert_eq!(
            s.servers[0].warnings,
            [
                Warning::HiddenText {
                    field: "command".into(),
                    count: 1
                },
                Warning::HiddenText {
                    field: "args[0]".into(),
                    count: 1
                }
            ]
        );
        let text = s.to_string();
        assert!(text.contains(r#""np\u{200b}x""#), "{text}");
    }
}
