//! Authorization URLs: checked before anyone shows or opens one, and opened
//! without a shell.
//!
//! The authorization endpoint comes from the authorization server's
//! metadata, which a malicious MCP server can name: the URL the user is sent
//! to is attacker-controlled text. The MCP security best practices ("OAuth
//! Authorization URL Validation") ask for http(s) only, no dangerous
//! schemes, and no shell when opening it; a URL printed on a terminal must
//! also not carry control sequences.

use std::ffi::OsString;
use std::process::{Command, Stdio};

use http::Uri;

use crate::error::{AuthError, AuthErrorKind};
use crate::ssrf::{SsrfPolicy, is_loopback_host};
use crate::util::parse_url;

/// Longest authorization URL accepted: 8 KiB (browsers take more, but an
/// authorization request is a few hundred bytes).
pub const MAX_AUTHORIZATION_URL_LEN: usize = 8 * 1024;

/// Whether `b` may appear in a URL as RFC 3986 writes one: unreserved,
/// reserved (gen-delims and sub-delims) and `%`. Everything else (controls,
/// space, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`, non-ASCII) must be
/// percent-encoded in a real URL, so a URL carrying one is refused.
fn is_url_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b)
}

/// Checks an authorization URL before it is shown to the user or handed to
/// a browser: at most [`MAX_AUTHORIZATION_URL_LEN`] bytes of RFC 3986
/// characters only (so no terminal control sequence, no whitespace, nothing
/// outside ASCII), an absolute `https` URL (`http` only on loopback:
/// `localhost`, `127.0.0.0/8`, `[::1]`), a host, no userinfo
/// (`https://bank.example@evil.example/` is refused), no fragment.
/// `javascript:`, `data:`, `file:`, `vbscript:` and every other scheme are
/// refused: the check is an allowlist.
///
/// [`OAuthProvider`](crate::OAuthProvider) checks the URL before it calls
/// [`Interaction::authorize`](crate::Interaction::authorize), and
/// [`LoopbackRedirect`](crate::LoopbackRedirect) again before its `open`
/// callback; an [`Interaction`](crate::Interaction) of one's own receives
/// only checked URLs.
///
/// ```
/// use mcp_auth::check_authorization_url;
///
/// assert!(check_authorization_url("https://as.example/authorize?client_id=a").is_ok());
/// assert!(check_authorization_url("http://127.0.0.1:8080/authorize").is_ok());
/// assert!(check_authorization_url("javascript:alert(1)").is_err());
/// assert!(check_authorization_url("http://as.example/authorize").is_err());
/// assert!(check_authorization_url("https://as.example/\u{1b}]52;c;ZXZpbA==\u{7}").is_err());
/// ```
pub fn check_authorization_url(url: &str) -> Result<Uri, AuthError> {
    if url.len() > MAX_AUTHORIZATION_URL_LEN {
        return Err(AuthError::invalid_url(
            url,
            format_args!(
                "an authorization URL of {} bytes (limit {MAX_AUTHORIZATION_URL_LEN})",
                url.len()
            ),
        ));
    }
    if let Some(b) = url.bytes().find(|&b| !is_url_byte(b)) {
        return Err(AuthError::invalid_url(
            url,
            format_args!(
                "an authorization URL may hold only URL characters (RFC 3986), not {:?}",
                char::from(b)
            ),
        ));
    }
    let parsed = parse_url(url).ok_or_else(|| {
        AuthError::invalid_url(
            url,
            "an authorization URL must be an absolute http(s) URL with a host and no userinfo",
        )
    })?;
    if url.contains('#') {
        return Err(AuthError::invalid_url(
            url,
            "an authorization URL has no fragment",
        ));
    }
    let loopback = parsed
        .host()
        .is_some_and(|h| is_loopback_host(h, &SsrfPolicy::new()));
    if parsed.scheme_str() != Some("https") && !loopback {
        return Err(AuthError::invalid_url(
            url,
            "an authorization URL must use https (http is allowed only on loopback)",
        ));
    }
    Ok(parsed)
}

/// The program that opens a URL in the user's browser on this platform,
/// with the arguments before the URL: `open` (macOS), `rundll32
/// url.dll,FileProtocolHandler` (Windows), else `xdg-open`.
fn system_opener() -> (&'static str, &'static [&'static str]) {
    if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("rundll32.exe", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    }
}

/// Opens `url` in the user's browser, after [`check_authorization_url`]:
/// the platform's opener (`open`, `xdg-open`, `rundll32
/// url.dll,FileProtocolHandler`) is executed directly with the URL as one
/// argument, never through a shell (`sh -c`, `cmd /c start`), so nothing
/// in the URL is interpreted as a command. Returns once the opener is
/// started; it runs on its own and is reaped by a background thread.
///
/// For a [`LoopbackRedirect`](crate::LoopbackRedirect)'s `open` callback:
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_auth::AuthError> {
/// let ui = mcp_auth::LoopbackRedirect::bind(0, |url| {
///     if mcp_auth::open_browser(url).is_err() {
///         eprintln!("Open this URL to authorize: {url}");
///     }
/// })
/// .await?;
/// # let _ = ui; Ok(()) }
/// ```
pub fn open_browser(url: &str) -> Result<(), AuthError> {
    let (program, before) = system_opener();
    open_with(program, before, url)
}

/// Runs `program before.. url` directly (no shell), after
/// [`check_authorization_url`]. [`open_browser`] with the platform's
/// opener; a host with its own opener (a configured browser) uses this.
pub fn open_with(program: &str, before: &[&str], url: &str) -> Result<(), AuthError> {
    check_authorization_url(url)?;
    let mut args: Vec<OsString> = before.iter().map(OsString::from).collect();
    args.push(OsString::from(url));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            AuthError::new(
                AuthErrorKind::Interaction,
                format!("could not start {program} to open the authorization URL"),
            )
            .with_source(e)
        })?;
    // The opener usually exits at once (it hands the URL to the browser);
    // waiting on a thread keeps it from lingering as a zombie.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls_of_url_characters() {
        for ok in [
            "https://as.example/authorize?response_type=code&client_id=a%20b&state=x",
            "https://as.example:8443/oauth2/v1/authorize",
            "http://localhost:3000/authorize",
            "http://127.0.0.1/authorize",
            "http://[::1]:9/authorize",
            "https://as.example/a?x=$(not-a-command)&y='quoted'",
        ] {
            assert!(check_authorization_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(document.cookie)",
            "JavaScript://as.example/%0aalert(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "file:///etc/passwd",
            "vbscript:msgbox(1)",
            "ftp://as.example/authorize",
            "//as.example/authorize",
            "http://as.example/authorize",
            "http://10.0.0.1/authorize",
            "https://bank.example@evil.example/authorize",
            "https://as.example/authorize#frag",
            "https://as.example/\u{1b}]52;c;ZXZpbA==\u{7}",
            "https://as.example/\u{1b}[2K\rmcp: all good",
            "https://as.example/\u{9b}2J",
            "https://as.example/a\u{202e}gpj.exe",
            "https://as.example/a b",
            "https://as.example/a`id`",
            "https://as.example/a\"b",
            "https://as.example/a\0b",
            "https://as.example/a\nb",
            "",
        ] {
            let e = check_authorization_url(bad).unwrap_err();
            assert_eq!(e.kind(), AuthErrorKind::InvalidUrl, "{bad:?}");
            let shown = e.to_string();
            assert!(
                !shown.chars().any(|c| c.is_control()),
                "the message itself carries a control character: {shown:?}"
            );
        }
        let long = format!(
            "https://as.example/?{}",
            "a".repeat(MAX_AUTHORIZATION_URL_LEN)
        );
        assert!(check_authorization_url(&long).is_err());
    }

    /// The URL reaches the opener as one argument, untouched, and nothing in
    /// it runs: the opener here is a script that records its arguments.
    #[cfg(unix)]
    #[test]
    fn opens_without_a_shell() {
        let dir = std::env::temp_dir().join(format!("mcp-auth-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let record = dir.join("argv");
        let pwned = dir.join("pwned");
        let opener = dir.join("opener.sh");
        std::fs::write(
            &opener,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$#\" \"$@\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
                record.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
        let url = format!(
            "https://as.example/authorize?a=1&b=$(touch$IFS{0})&c=1;touch$IFS{0}&d='x'",
            pwned.display()
        );
        open_with(opener.to_str().unwrap(), &["--new-window"], &url).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !record.exists() && !pwned.exists() {
            assert!(std::time::Instant::now() < deadline, "the opener never ran");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!pwned.exists(), "a shell ran part of the URL");
        let argv = std::fs::read_to_string(&record).unwrap();
        assert_eq!(argv, format!("2\n--new-window\n{url}\n"));
        // A refused URL never reaches the opener.
        std::fs::remove_file(&record).unwrap();
        assert!(open_with(opener.to_str().unwrap(), &[], "javascript:alert(1)").is_err());
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!record.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
