//! The server's questions (`elicitation/create`) asked on the terminal.
//!
//! A form-mode request becomes a form on stderr, one field at a time, read
//! from stdin: its type says what is accepted (text with its length and
//! format, numbers and integers in their range, yes/no, one or several
//! choices by number, value or title), a default is shown in brackets and
//! taken by Enter, a required field must be answered, and a wrong answer is
//! explained and asked again. The answers are shown for review before they
//! are sent. Ctrl-D at any question declines the request, Ctrl-C cancels it
//! (the call goes on: the server decides what a decline or a cancel means).
//! A URL-mode request shows the URL (http and https only) and waits for the
//! user to say they are done there.
//!
//! Without a terminal on stdin nobody can answer: the request is declined
//! at once, with a line on stderr saying why.
//!
//! Every text of the request (message, titles, descriptions, choices, URL)
//! is the server's and goes through [`terminal::line`](fn@mcp_cli::terminal::line) first. Forms run one
//! at a time, on a blocking thread (the runtime keeps serving the
//! connection meanwhile); Ctrl-C reaches the form through
//! [`cancel_active`], which the command's signal loop calls.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_cli::terminal::{line, web_url};
use mcp_proto::schema::{ElicitFormParams, ElicitResult, ElicitUrlParams, JsonObject};

mod field;
use field::fields;

/// A form is on the terminal: progress bars and log lines wait.
static ASKING: AtomicBool = AtomicBool::new(false);

/// Wakes the active form's reader on Ctrl-C (the write end of its pipe).
static CANCEL: Mutex<Option<std::os::unix::net::UnixStream>> = Mutex::new(None);

/// One form at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// When the last form closed, and the time all forms were open: the
/// user's time, which `--timeout` does not count ([`user_time`]).
static USER_TIME: Mutex<(Option<Instant>, Duration)> = Mutex::new((None, Duration::ZERO));

/// When the last form on the terminal closed, and how long every form so
/// far was open. A call's deadline does not run while the person answers:
/// the server's time starts again when the answer is sent.
pub(crate) fn user_time() -> (Option<Instant>, Duration) {
    *USER_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Longest answer line kept (a terminal's canonical line is 4 KiB).
const MAX_ANSWER: usize = 64 * 1024;

/// Whether a form is being asked (stderr belongs to it).
pub(crate) fn asking() -> bool {
    ASKING.load(Ordering::Acquire)
}

/// Ctrl-C while a form is asked cancels that form (not `mcp`): returns
/// whether there was one.
pub(crate) fn cancel_active() -> bool {
    let guard = CANCEL.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref() {
        Some(mut wake) => {
            let _ = wake.write_all(b"c");
            true
        }
        None => false,
    }
}

/// Answers a form-mode request: on the terminal, or declined without one.
pub(crate) async fn ask_form(server: String, p: ElicitFormParams) -> ElicitResult {
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "mcp: declined {}'s request for input ({}): stdin is not a terminal, so nobody can \
             answer; run mcp on a terminal to answer it",
            line(&server),
            quote(&p.message)
        );
        return ElicitResult::decline();
    }
    on_terminal(move |tty| form(tty, &server, &p)).await
}

/// Answers a URL-mode request: shows the URL and waits for the user on the
/// terminal, or declines without one (or when the URL is not http/https).
pub(crate) async fn ask_url(server: String, p: ElicitUrlParams) -> ElicitResult {
    if !web_url(&p.url) {
        eprintln!(
            "mcp: declined {}'s request to open a URL that is not http(s): {}",
            line(&server),
            line(&p.url)
        );
        return ElicitResult::decline();
    }
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "mcp: declined {}'s request to open {} ({}): stdin is not a terminal, so nobody can \
             confirm; run mcp on a terminal to answer it",
            line(&server),
            line(&p.url),
            quote(&p.message)
        );
        return ElicitResult::decline();
    }
    on_terminal(move |tty| url(tty, &server, &p)).await
}

/// `"message"`, one line, made safe.
fn quote(message: &str) -> String {
    format!("\"{}\"", line(message))
}

/// Asks a yes-or-no question on the terminal (stdin must be one): `lines`
/// first, then `prompt`. Only `y` or `yes` says yes; Enter, `n`, Ctrl-D
/// and Ctrl-C (which [`cancel_active`] turns into a no) say no.
pub(crate) async fn confirm(lines: String, prompt: String) -> bool {
    let ask = move |tty: &mut Tty| -> std::io::Result<bool> {
        eprint!("{lines}");
        loop {
            match tty.ask(&prompt)? {
                Typed::Eof | Typed::Cancelled => return Ok(false),
                Typed::Line(a) => match a.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => return Ok(true),
                    "" | "n" | "no" => return Ok(false),
                    _ => eprintln!("  y or n, please"),
                },
            }
        }
    };
    with_terminal(ask, |e| {
        eprintln!("mcp: cannot read the terminal: {e}");
        false
    })
    .await
    .unwrap_or(false)
}

/// Runs `ask` on a blocking thread with the terminal, one form at a time,
/// with Ctrl-C wired to cancel it.
async fn on_terminal(
    ask: impl FnOnce(&mut Tty) -> std::io::Result<ElicitResult> + Send + 'static,
) -> ElicitResult {
    with_terminal(ask, |e| {
        eprintln!("mcp: declined the server's request for input: cannot read the terminal: {e}");
        ElicitResult::decline()
    })
    .await
    .unwrap_or_else(ElicitResult::cancel)
}

/// Runs `ask` on a blocking thread with the terminal, one question at a
/// time, with Ctrl-C wired to cancel it; `failed` makes the answer when
/// the terminal cannot be read. `None` when the thread did not finish.
async fn with_terminal<T: Send + 'static>(
    ask: impl FnOnce(&mut Tty) -> std::io::Result<T> + Send + 'static,
    failed: impl Fn(std::io::Error) -> T + Send + 'static,
) -> Option<T> {
    let run = tokio::task::spawn_blocking(move || {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mut tty = match Tty::open() {
            Ok(t) => t,
            Err(e) => return failed(e),
        };
        crate::progress::clear_line();
        let opened = Instant::now();
        ASKING.store(true, Ordering::Release);
        let result = ask(&mut tty);
        {
            let mut spent = USER_TIME.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            *spent = (Some(now), spent.1 + now.saturating_duration_since(opened));
        }
        ASKING.store(false, Ordering::Release);
        tty.close();
        crate::progress::release_held();
        result.unwrap_or_else(failed)
    });
    run.await.ok()
}

/// What the person did at a question.
#[derive(Debug, PartialEq)]
enum Typed {
    Line(String),
    /// Ctrl-D: decline the whole request.
    Eof,
    /// Ctrl-C: cancel the whole request.
    Cancelled,
}

/// The terminal on stdin, read a line at a time without std's buffer (so
/// nothing typed ahead is held where `poll` cannot see it), woken by
/// Ctrl-C through a socket pair.
struct Tty {
    input: std::fs::File,
    wake: std::os::unix::net::UnixStream,
}

impl Tty {
    fn open() -> std::io::Result<Tty> {
        use std::os::fd::AsFd;
        let input = std::fs::File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
        let (tx, rx) = std::os::unix::net::UnixStream::pair()?;
        *CANCEL.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        Ok(Tty { input, wake: rx })
    }

    fn close(&self) {
        *CANCEL.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Shows `prompt` on stderr and reads one line.
    fn ask(&mut self, prompt: &str) -> std::io::Result<Typed> {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(prompt.as_bytes());
        let _ = err.flush();
        drop(err);
        let typed = self.read_line()?;
        match typed {
            Typed::Eof => eprintln!(),
            Typed::Cancelled => eprintln!(),
            Typed::Line(_) => {}
        }
        Ok(typed)
    }

    fn read_line(&mut self) -> std::io::Result<Typed> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::io::Read;
        use std::os::fd::AsFd;
        let mut line = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            let (input_ready, woken) = {
                let mut fds = [
                    PollFd::new(self.input.as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.wake.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    // Ctrl-C's signal interrupts the wait; its wake-up follows.
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => return Err(e.into()),
                }
                let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            };
            if woken {
                return Ok(Typed::Cancelled);
            }
            if !input_ready {
                continue;
            }
            let n = match self.input.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                if line.is_empty() {
                    return Ok(Typed::Eof);
                }
                break;
            }
            let got = chunk.get(..n).unwrap_or_default();
            if line.len() < MAX_ANSWER {
                line.extend_from_slice(got);
            }
            if got.contains(&b'\n') {
                break;
            }
        }
        let text = String::from_utf8_lossy(&line);
        Ok(Typed::Line(text.trim_end_matches(['\r', '\n']).to_owned()))
    }
}

/// The form, on the terminal.
fn form(tty: &mut Tty, server: &str, p: &ElicitFormParams) -> std::io::Result<ElicitResult> {
    let fields = fields(p);
    if let Some(f) = fields.iter().find(|f| f.required && !f.known()) {
        eprintln!(
            "mcp: declined {}'s request for input ({}): its required field {} has a type this \
             client cannot ask",
            line(server),
            quote(&p.message),
            line(&f.name)
        );
        return Ok(ElicitResult::decline());
    }
    eprintln!("mcp: {} asks: {}", line(server), line(&p.message));
    eprintln!(
        "mcp: Enter takes the [default]; an optional field left empty is left out; \
         Ctrl-D declines, Ctrl-C cancels"
    );
    let mut content = JsonObject::new();
    for f in &fields {
        if !f.known() {
            eprintln!(
                "  {} (left out: a type this client cannot ask)",
                f.heading()
            );
            continue;
        }
        eprintln!("{}", f.heading());
        if let Some(c) = f.choices() {
            eprintln!("    {c}");
        }
        loop {
            match tty.ask(&format!("  {}: ", f.prompt()))? {
                Typed::Eof => return Ok(declined()),
                Typed::Cancelled => return Ok(cancelled()),
                Typed::Line(typed) => match f.parse(&typed) {
                    Ok(Some(v)) => {
                        content.insert(f.name.clone(), v);
                        break;
                    }
                    Ok(None) => break,
                    Err(why) => eprintln!("  {why}"),
                },
            }
        }
    }
    eprintln!("mcp: the answers for {}:", line(server));
    for f in &fields {
        if let Some(v) = content.get(&f.name) {
            eprintln!("  {}: {}", line(&f.name), line(&f.show(v)));
        }
    }
    loop {
        match tty.ask("mcp: send them? [Y/n] ")? {
            Typed::Eof => return Ok(declined()),
            Typed::Cancelled => return Ok(cancelled()),
            Typed::Line(a) => match a.trim().to_ascii_lowercase().as_str() {
                "" | "y" | "yes" => return Ok(ElicitResult::accept(content)),
                "n" | "no" => return Ok(declined()),
                _ => eprintln!("  y or n, please"),
            },
        }
    }
}

fn declined() -> ElicitResult {
    eprintln!("mcp: declined");
    ElicitResult::decline()
}

fn cancelled() -> ElicitResult {
    eprintln!("mcp: cancelled");
    ElicitResult::cancel()
}

/// The URL, on the terminal.
fn url(tty: &mut Tty, server: &str, p: &ElicitUrlParams) -> std::io::Result<ElicitResult> {
    eprintln!(
        "mcp: {} asks you to open this URL in a browser: {}",
        line(server),
        line(&p.message)
    );
    eprintln!("  {}", line(&p.url));
    let typed =
        tty.ask("mcp: press Enter once you have opened it (Ctrl-D declines, Ctrl-C cancels): ")?;
    Ok(match typed {
        Typed::Eof => declined(),
        Typed::Cancelled => cancelled(),
        Typed::Line(_) => {
            eprintln!("mcp: waiting for the server to finish");
            ElicitResult::new(mcp_proto::schema::ElicitAction::Accept)
        }
    })
}
