//! [`ConfigError`]: what went wrong, in which file, server and field.

use std::io;
use std::path::{Path, PathBuf};

use crate::resolve::InputMissing;

/// Why a file or one of its servers could not be read. Every variant names
/// the file; those about one server name it and the field (`command`,
/// `args[2]`, `env.API_KEY`, `headers.Authorization`, `url`, ...). No
/// variant carries a value read from the file or the environment, so
/// printing an error never leaks a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read (the OS error is the
    /// [`source`](std::error::Error::source)).
    #[error("{}: cannot read the file", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The file is not valid JSON (or JSONC, where the format allows it).
    #[error("{}:{line}:{column}: {message}{hint}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
        /// A hint (e.g. that this format does not allow comments), or empty.
        hint: &'static str,
    },
    /// The file's name does not say which format it is, and its content
    /// has neither `mcpServers` nor `servers`.
    #[error(
        "{}: not an MCP server list: expected a top-level \"mcpServers\" or \"servers\" object",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A value has the wrong JSON type, or a name is not allowed.
    #[error("{}: {message}", at(path, server.as_deref(), field))]
    Shape {
        /// The file.
        path: PathBuf,
        /// The server, unless the problem is outside any server.
        server: Option<String>,
        /// The offending key.
        field: String,
        /// What was expected.
        message: String,
    },
    /// `type` has a value this format does not define.
    #[error(
        "{}: unknown type {value:?} (this format allows {expected})",
        at(path, Some(server), "type")
    )]
    UnknownType {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The value found.
        value: String,
        /// The values allowed.
        expected: &'static str,
    },
    /// A required field is absent (`command` for stdio, `url` for http/sse,
    /// `type` in SEP-2633 files).
    #[error("{}: missing {field:?}{hint}", at(path, Some(server), field))]
    MissingField {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: &'static str,
        /// What to write instead, or empty.
        hint: &'static str,
    },
    /// The entry is one of the host's own that no other program can start
    /// (a Goose built-in extension, a server a Zed extension provides).
    #[error("{}: server {server:?}: {message}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// What it is.
        message: String,
    },
    /// `${VAR}` (or `${env:VAR}`, `${workspaceFolder}`, ...) names a value
    /// that is not set and has no default.
    #[error("{}: {variable} is not set{hint}", at(path, Some(server), field))]
    MissingVariable {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The variable, as written between `${` and `}`.
        variable: String,
        /// How to fix it.
        hint: &'static str,
    },
    /// `${...}` uses a form this format (or this crate) does not expand,
    /// such as VS Code's `${command:...}` or SEP-2633's `op://`.
    #[error(
        "{}: `${{{variable}}}` is not supported here ({supported})",
        at(path, Some(server), field)
    )]
    UnsupportedVariable {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The expression between `${` and `}`.
        variable: String,
        /// The forms this format expands.
        supported: &'static str,
    },
    /// `${input:ID}` names no entry of `inputs`.
    #[error(
        "{}: `${{input:{id}}}` names no input: add {{\"type\": \"promptString\", \"id\": \"{id}\"}} to \"inputs\"",
        at(path, Some(server), field)
    )]
    UnknownInput {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The input id.
        id: String,
    },
    /// An input was needed, but no [`InputProvider`](crate::InputProvider)
    /// was given or it did not answer (the user cancelled).
    #[error(
        "{}: input {id:?} was not given: {reason}",
        at(path, Some(server), field)
    )]
    Input {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The input id.
        id: String,
        /// Why.
        reason: InputMissing,
    },
    /// The `envFile` of a stdio server could not be read (the OS error is
    /// the [`source`](std::error::Error::source)) or has a bad line.
    #[error(
        "{}: envFile {}: {reason}",
        at(path, Some(server), "envFile"),
        env_file.display()
    )]
    EnvFile {
        /// The configuration file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The env file.
        env_file: PathBuf,
        /// Why (it cannot be read, or the bad line's number).
        reason: String,
        /// The OS error, when the file cannot be read.
        #[source]
        source: Option<io::Error>,
    },
}

fn at(path: &Path, server: Option<&str>, field: &str) -> String {
    match server {
        Some(s) => format!("{}: server {s:?}, field {field:?}", path.display()),
        None => format!("{}: {field:?}", path.display()),
    }
}

impl ConfigError {
    /// The configuration file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ConfigError::Io { path, .. }
            | ConfigError::Syntax { path, .. }
            | ConfigError::UnknownFormat { path }
            | ConfigError::Shape { path, .. }
            | ConfigError::UnknownType { path, .. }
            | ConfigError::MissingField { path, .. }
            | ConfigError::Unsupported { path, .. }
            | ConfigError::MissingVariable { path, .. }
            | ConfigError::UnsupportedVariable { path, .. }
            | ConfigError::UnknownInput { path, .. }
            | ConfigError::Input { path, .. }
            | ConfigError::EnvFile { path, .. } => path,
        }
    }

    /// The server the error is about, if it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            ConfigError::Io { .. }
            | ConfigError::Syntax { .. }
            | ConfigError::UnknownFormat { .. } => None,
            ConfigError::Shape { server, .. } => server.as_deref(),
            ConfigError::UnknownType { server, .. }
            | ConfigError::MissingField { server, .. }
            | ConfigError::Unsupported { server, .. }
            | ConfigError::MissingVariable { server, .. }
            | ConfigError::UnsupportedVariable { server, .. }
            | ConfigError::UnknownInput { server, .. }
            | ConfigError::Input { server, .. }
            | ConfigError::EnvFile { server, .. } => Some(server),
        }
    }
}
