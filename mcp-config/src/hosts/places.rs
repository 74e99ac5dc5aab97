//! Where each host keeps its configuration, per platform, as each host
//! documents it.

use std::path::{Path, PathBuf};

use super::Host;

/// The operating system whose conventions the paths follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Platform {
    /// Linux and the other Unix systems: `$XDG_CONFIG_HOME`, else `~/.config`.
    Linux,
    /// macOS: `~/Library/Application Support` for desktop applications.
    MacOs,
    /// Windows: `%APPDATA%` (the roaming application data folder).
    Windows,
}

impl Platform {
    /// The platform this program was built for.
    pub fn current() -> Self {
        if cfg!(windows) {
            Platform::Windows
        } else if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }
}

/// The folders the hosts' paths are made of: the user's home, the
/// platform, and the environment variables that move them
/// (`XDG_CONFIG_HOME`, `APPDATA`, `CODEX_HOME`, `CLAUDE_CONFIG_DIR`), and
/// the project folder (Claude Code keeps servers per project).
///
/// ```
/// use std::path::Path;
/// use mcp_config::{Host, Places, Platform};
///
/// let places = Places::with_env("/home/ann", Platform::Linux, |_| None);
/// assert_eq!(places.config_path(Host::Codex), Path::new("/home/ann/.codex/config.toml"));
/// assert_eq!(places.config_path(Host::VsCode), Path::new("/home/ann/.config/Code/User/mcp.json"));
/// let mac = Places::with_env("/Users/ann", Platform::MacOs, |_| None);
/// assert_eq!(
///     mac.config_path(Host::ClaudeDesktop),
///     Path::new("/Users/ann/Library/Application Support/Claude/claude_desktop_config.json")
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    home: PathBuf,
    platform: Platform,
    /// `$XDG_CONFIG_HOME` or `~/.config` (Linux, and Zed and Goose on macOS).
    xdg_config: PathBuf,
    /// `%APPDATA%` (Windows), else `~/AppData/Roaming`.
    app_data: PathBuf,
    codex_home: Option<PathBuf>,
    claude_config_dir: Option<PathBuf>,
    project: Option<PathBuf>,
}

impl Places {
    /// This process's: `HOME` (or `USERPROFILE`), the current platform and
    /// environment. `None` without a home folder.
    pub fn from_env() -> Option<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let home = var("HOME").or_else(|| var("USERPROFILE"))?;
        Some(Self::with_env(home, Platform::current(), var))
    }

    /// Places under `home` on `platform`, with `env` looking up the
    /// variables that move them (empty values count as unset).
    pub fn with_env(
        home: impl Into<PathBuf>,
        platform: Platform,
        env: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let home = home.into();
        let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Places {
            xdg_config: var("XDG_CONFIG_HOME")
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| home.join(".config")),
            app_data: var("APPDATA").unwrap_or_else(|| home.join("AppData").join("Roaming")),
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            project: None,
            home,
            platform,
        }
    }

    /// The project folder: Claude Code's servers for it (its local scope)
    /// are read too.
    #[must_use]
    pub fn project(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project = Some(dir.into());
        self
    }

    /// The project folder, if given.
    pub fn project_dir(&self) -> Option<&Path> {
        self.project.as_deref()
    }

    /// The user's home folder.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The file where `host` keeps the user's servers.
    pub fn config_path(&self, host: Host) -> PathBuf {
        let home = &self.home;
        let desktop_app_dir = |name: &str| match self.platform {
            Platform::MacOs => home.join("Library").join("Application Support").join(name),
            Platform::Windows => self.app_data.join(name),
            Platform::Linux => self.xdg_config.join(name),
        };
        match host {
            // Claude Code's settings page: `~/.claude.json` holds the user
            // and local scopes' servers; with CLAUDE_CONFIG_DIR set, the
            // file is in that folder.
            Host::ClaudeCode => match &self.claude_config_dir {
                Some(dir) => dir.join(".claude.json"),
                None => home.join(".claude.json"),
            },
            // modelcontextprotocol.io, "Connect to local MCP servers":
            // `~/Library/Application Support/Claude/` on macOS,
            // `%APPDATA%\Claude\` on Windows; Linux builds (unofficial)
            // use `~/.config/Claude/`.
            Host::ClaudeDesktop => desktop_app_dir("Claude").join("claude_desktop_config.json"),
            // Codex's docs/config.md: `$CODEX_HOME/config.toml`, the
            // folder defaulting to `~/.codex`.
            Host::Codex => self
                .codex_home
                .clone()
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
            // Cursor's MCP page: `~/.cursor/mcp.json`, global servers.
            Host::Cursor => home.join(".cursor").join("mcp.json"),
            // Gemini CLI's configuration page: `~/.gemini/settings.json`.
            Host::Gemini => home.join(".gemini").join("settings.json"),
            // Goose's "Configuration Files": `~/.config/goose/config.yaml`
            // on macOS and Linux, `%APPDATA%\Block\goose\config\config.yaml`
            // on Windows.
            Host::Goose => match self.platform {
                Platform::Windows => self
                    .app_data
                    .join("Block")
                    .join("goose")
                    .join("config")
                    .join("config.yaml"),
                _ => self.xdg_config.join("goose").join("config.yaml"),
            },
            // VS Code's "MCP configuration reference": the user profile's
            // `mcp.json`, in the `User` folder of VS Code's settings.
            Host::VsCode => desktop_app_dir("Code").join("User").join("mcp.json"),
            // Windsurf's Cascade MCP page: `~/.codeium/windsurf/mcp_config.json`.
            Host::Windsurf => home
                .join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
            // Zed's "Configuring Zed": `~/.config/zed/settings.json` on
            // macOS and Linux (`$XDG_CONFIG_HOME` honoured), `%APPDATA%\Zed`
            // on Windows.
            Host::Zed => match self.platform {
                Platform::Windows => self.app_data.join("Zed").join("settings.json"),
                _ => self.xdg_config.join("zed").join("settings.json"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_a_path_on_every_platform() {
        let env = |k: &str| match k {
            "APPDATA" => Some("/c/Users/ann/AppData/Roaming".to_owned()),
            _ => None,
        };
        for platform in [Platform::Linux, Platform::MacOs, Platform::Windows] {
            let places = Places::with_env("/home/ann", platform, env);
            for host in Host::ALL {
                let path = places.config_path(*host);
                assert!(path.file_name().is_some(), "{host:?} {platform:?}");
            }
        }
        let win = Places::with_env("/home/ann", Platform::Windows, env);
        assert!(
            win.config_path(Host::Goose)
                .ends_with("Roaming/Block/goose/config/config.yaml")
        );
    }

    #[test]
    fn variables_move_the_folders() {
        let env = |k: &str| match k {
            "XDG_CONFIG_HOME" => Some("/xdg".to_owned()),
            "CODEX_HOME" => Some("/codex".to_owned()),
            "CLAUDE_CONFIG_DIR" => Some("/claude".to_owned()),
            _ => None,
        };
        let p = Places::with_env("/home/ann", Platform::Linux, env);
        assert_eq!(
            p.config_path(Host::Zed),
            Path::new("/xdg/zed/settings.json")
        );
        assert_eq!(
            p.config_path(Host::Goose),
            Path::new("/xdg/goose/config.yaml")
        );
        assert_eq!(p.config_path(Host::Codex), Path::new("/codex/config.toml"));
        assert_eq!(
            p.config_path(Host::ClaudeCode),
            Path::new("/claude/.claude.json")
        );
        // A relative XDG_CONFIG_HOME is ignored, as the spec says.
        let p = Places::with_env("/h", Platform::Linux, |k| {
            (k == "XDG_CONFIG_HOME").then(|| "rel".to_owned())
        });
        assert_eq!(
            p.config_path(Host::Zed),
            Path::new("/h/.config/zed/settings.json")
        );
    }
}
