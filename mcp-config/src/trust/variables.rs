//! Environment variables that make a server's process run other code.

/// Environment variables that make a program load or run code, or trust
/// other certificates or proxies, that it would not otherwise: a server's
/// `env` setting one turns an innocent-looking command (`npx some-server`)
/// into arbitrary code. Names compare case-insensitively (Windows'
/// environment does). Each with what it does.
///
/// Sources: glibc's list of variables removed for set-user-ID programs
/// (`UNSECURE_ENVVARS`, `sysdeps/generic/unsecvars.h`), sudo's
/// `initial_badenv_table` (`plugins/sudoers/env.c`), ld.so(8), dyld(1),
/// and the documentation of Node.js (`NODE_OPTIONS`), Python
/// (`PYTHON*`, command line and environment), Perl (perlrun), Ruby, the
/// JVM (`JAVA_TOOL_OPTIONS`), .NET (startup hooks, profilers), bash(1),
/// Git (git(1) environment variables), npm, pip and uv.
#[rustfmt::skip]
pub const INJECTION_VARIABLES: &[(&str, &str)] = &[
    // Dynamic loaders.
    ("LD_PRELOAD", "loads a library into every program started"),
    ("LD_LIBRARY_PATH", "loads libraries from other directories first"),
    ("LD_AUDIT", "loads an auditing library into every program started"),
    ("GCONV_PATH", "loads character-set modules (code) from a directory"),
    ("GETCONF_DIR", "changes where getconf finds its programs"),
    ("HOSTALIASES", "changes how host names resolve"),
    ("RES_OPTIONS", "changes how host names resolve"),
    ("LOCALDOMAIN", "changes how host names resolve"),
    ("NLSPATH", "loads message catalogs from another place"),
    ("LOCPATH", "loads locale data from another place"),
    ("GLIBC_TUNABLES", "changes the C library's behaviour (CVE-2023-4911)"),
    ("MALLOC_TRACE", "makes every program write a trace file"),
    ("LIBPATH", "loads libraries from other directories first (AIX)"),
    ("SHLIB_PATH", "loads libraries from other directories first (HP-UX)"),
    ("PATH", "chooses which program every command name runs"),
    ("PATHEXT", "chooses which files run as programs (Windows)"),
    ("COMSPEC", "chooses the command interpreter (Windows)"),
    // Shells.
    ("BASH_ENV", "makes every non-interactive bash run a file first"),
    ("ENV", "makes sh run a file first"),
    ("ZDOTDIR", "makes zsh read its start-up files from another place"),
    ("SHELLOPTS", "changes how bash runs scripts"),
    ("BASHOPTS", "changes how bash runs scripts"),
    ("PS4", "runs commands when bash traces"),
    ("PROMPT_COMMAND", "runs a command before every bash prompt"),
    ("IFS", "changes how the shell splits words"),
    ("CDPATH", "changes where the shell's cd goes"),
    ("GLOBIGNORE", "changes how the shell expands file names"),
    // Language runtimes.
    ("NODE_OPTIONS", "passes options to every Node.js, --require of any code among them"),
    ("NODE_PATH", "makes Node.js load modules from other directories"),
    ("NODE_EXTRA_CA_CERTS", "makes Node.js trust other certificate authorities"),
    ("NODE_TLS_REJECT_UNAUTHORIZED", "can turn off Node.js' certificate checks"),
    ("ELECTRON_RUN_AS_NODE", "makes an Electron application run any script"),
    ("PYTHONPATH", "makes Python import modules from other directories first"),
    ("PYTHONHOME", "makes Python use another standard library"),
    ("PYTHONSTARTUP", "makes an interactive Python run a file first"),
    ("PYTHONUSERBASE", "makes Python import from another user site directory"),
    ("PYTHONINSPECT", "leaves Python in an interactive prompt"),
    ("PYTHONWARNINGS", "can make Python import a module for a warning category"),
    ("PYTHONBREAKPOINT", "makes breakpoint() import and call any function"),
    ("PERL5OPT", "passes options to every Perl, -M of any module among them"),
    ("PERL5LIB", "makes Perl load modules from other directories first"),
    ("PERLLIB", "makes Perl load modules from other directories first"),
    ("PERL5DB", "makes Perl run a debugger of one's choice"),
    ("RUBYOPT", "passes options to every Ruby, -r of any library among them"),
    ("RUBYLIB", "makes Ruby load libraries from other directories first"),
    ("JAVA_TOOL_OPTIONS", "passes options to every JVM, -javaagent among them"),
    ("_JAVA_OPTIONS", "passes options to every JVM, -javaagent among them"),
    ("JDK_JAVA_OPTIONS", "passes options to the java launcher"),
    ("CLASSPATH", "makes Java load classes from other places first"),
    ("DOTNET_STARTUP_HOOKS", "makes .NET run an assembly at start"),
    ("CORECLR_ENABLE_PROFILING", "makes .NET load a profiler (code)"),
    ("CORECLR_PROFILER", "makes .NET load a profiler (code)"),
    ("CORECLR_PROFILER_PATH", "makes .NET load a profiler (code)"),
    ("COR_ENABLE_PROFILING", "makes .NET Framework load a profiler (code)"),
    ("COR_PROFILER", "makes .NET Framework load a profiler (code)"),
    ("COR_PROFILER_PATH", "makes .NET Framework load a profiler (code)"),
    ("LUA_INIT", "makes Lua run code at start"),
    ("LUA_PATH", "makes Lua load modules from other places first"),
    ("LUA_CPATH", "makes Lua load native modules from other places first"),
    ("PHPRC", "makes PHP read another php.ini (auto_prepend_file)"),
    ("PHP_INI_SCAN_DIR", "makes PHP read more .ini files (auto_prepend_file)"),
    ("GOFLAGS", "passes flags to every go command, -toolexec among them"),
    ("OPENSSL_CONF", "makes OpenSSL read another configuration (engines: code)"),
    ("OPENSSL_ENGINES", "makes OpenSSL load engines (code) from a directory"),
    // Package installers (npx, uvx, pipx download and run packages).
    ("NPM_CONFIG_REGISTRY", "makes npx download packages from another registry"),
    ("NPM_CONFIG_USERCONFIG", "makes npm read another configuration"),
    ("PIP_INDEX_URL", "makes pip download packages from another index"),
    ("PIP_EXTRA_INDEX_URL", "makes pip download packages from another index"),
    ("UV_INDEX_URL", "makes uv download packages from another index"),
    ("UV_DEFAULT_INDEX", "makes uv download packages from another index"),
    ("UV_EXTRA_INDEX_URL", "makes uv download packages from another index"),
    ("UV_INDEX", "makes uv download packages from another index"),
    ("GOPROXY", "makes go download modules from another proxy"),
    // Git (servers that run git).
    ("GIT_SSH", "makes git run another program for ssh"),
    ("GIT_SSH_COMMAND", "makes git run a command for ssh"),
    ("GIT_ASKPASS", "makes git run a program for passwords"),
    ("SSH_ASKPASS", "makes ssh run a program for passwords"),
    ("GIT_EXEC_PATH", "makes git run its commands from another directory"),
    ("GIT_PROXY_COMMAND", "makes git run a command to connect"),
    ("GIT_EXTERNAL_DIFF", "makes git run a program to diff"),
    ("GIT_CONFIG_GLOBAL", "makes git read another configuration (which can run commands)"),
    ("GIT_CONFIG_SYSTEM", "makes git read another configuration (which can run commands)"),
    ("GIT_CONFIG_PARAMETERS", "sets git configuration (which can run commands)"),
    ("GIT_CONFIG_COUNT", "sets git configuration (which can run commands)"),
    ("GIT_TEMPLATE_DIR", "makes git copy hooks (code) into new repositories"),
    // Traffic and certificates.
    ("SSL_CERT_FILE", "makes programs trust other certificate authorities"),
    ("SSL_CERT_DIR", "makes programs trust other certificate authorities"),
    ("REQUESTS_CA_BUNDLE", "makes Python requests trust other certificate authorities"),
    ("CURL_CA_BUNDLE", "makes curl trust other certificate authorities"),
    ("HTTP_PROXY", "sends the server's HTTP traffic through a proxy"),
    ("HTTPS_PROXY", "sends the server's HTTPS traffic through a proxy"),
    ("ALL_PROXY", "sends the server's traffic through a proxy"),
];

/// Prefixes of whole families of such variables, with what they do:
/// `LD_*` (the loaders of Linux, the BSDs and Solaris), `DYLD_*` (macOS),
/// `_RLD*`, `LDR_*` (other Unixes), `BASH_FUNC_*` (exported bash functions
/// replace commands), `npm_config_*`, `GIT_CONFIG_KEY_*`/`GIT_CONFIG_VALUE_*`.
#[rustfmt::skip]
pub const INJECTION_PREFIXES: &[(&str, &str)] = &[
    ("LD_", "changes how the dynamic loader loads libraries"),
    ("DYLD_", "changes how macOS' dynamic loader loads libraries (DYLD_INSERT_LIBRARIES)"),
    ("_RLD", "changes how the dynamic loader loads libraries"),
    ("LDR_", "changes how the dynamic loader loads libraries"),
    ("BASH_FUNC_", "defines a bash function that replaces a command"),
    ("NPM_CONFIG_", "changes npm's configuration (registry, scripts)"),
    ("GIT_CONFIG_KEY_", "sets git configuration (which can run commands)"),
    ("GIT_CONFIG_VALUE_", "sets git configuration (which can run commands)"),
];

/// What setting `name` in a server's environment does, when it is one of
/// [`INJECTION_VARIABLES`] or [`INJECTION_PREFIXES`] (case-insensitively).
///
/// ```
/// assert!(mcp_config::injection_risk("LD_PRELOAD").is_some());
/// assert!(mcp_config::injection_risk("node_options").is_some());
/// assert!(mcp_config::injection_risk("DYLD_INSERT_LIBRARIES").is_some());
/// assert!(mcp_config::injection_risk("GITHUB_TOKEN").is_none());
/// ```
pub fn injection_risk(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    INJECTION_VARIABLES
        .iter()
        .find(|(n, _)| *n == upper)
        .or_else(|| {
            INJECTION_PREFIXES
                .iter()
                .find(|(p, _)| upper.starts_with(p))
        })
        .map(|(_, what)| *what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injection_variables_are_flagged_whatever_their_case() {
        for name in [
            "LD_PRELOAD",
            "ld_preload",
            "LD_AUDIT",
            "LD_LIBRARY_PATH",
            "LD_ANYTHING_NEW",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "BASH_ENV",
            "BASH_FUNC_ls%%",
            "PERL5OPT",
            "RUBYOPT",
            "JAVA_TOOL_OPTIONS",
            "DOTNET_STARTUP_HOOKS",
            "npm_config_registry",
            "GIT_SSH_COMMAND",
            "PATH",
        ] {
            assert!(injection_risk(name).is_some(), "{name}");
        }
        for name in [
            "API_KEY",
            "GITHUB_TOKEN",
            "DEBUG",
            "NODE_ENV",
            "HOME",
            "LDAP_URL",
        ] {
            assert_eq!(injection_risk(name), None, "{name}");
        }
    }
}
