//! Progress notifications drawn on stderr, and the other lines that share
//! stderr with the bar and with a form on the terminal ([`say`]).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// A bar is drawn on the terminal's last line (no newline after it):
/// whoever writes a line to stderr clears it first ([`clear_line`]), and
/// the next notification draws it again.
static BAR_SHOWN: AtomicBool = AtomicBool::new(false);

/// Lines [`say`] holds while a form is on the terminal, shown when it
/// closes ([`release_held`]); beyond [`MAX_HELD`] only a count is kept.
static HELD: std::sync::Mutex<(Vec<String>, usize)> = std::sync::Mutex::new((Vec::new(), 0));

/// Most lines held while a form is on the terminal.
const MAX_HELD: usize = 256;

/// Writes one line to stderr (already made safe by the caller): at once,
/// clearing a progress bar first, or, while a form is on the terminal,
/// after it closes, so the person's questions are not broken up.
pub(crate) fn say(line: String) {
    if crate::form::asking() {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if held.0.len() < MAX_HELD {
            held.0.push(line);
        } else {
            held.1 += 1;
        }
        return;
    }
    clear_line();
    eprintln!("{line}");
}

/// Shows the lines held while a form was on the terminal.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn release_held() {
    let (lines, dropped) = std::mem::take(&mut *HELD.lock().unwrap_or_else(|e| e.into_inner()));
    for line in lines {
        eprintln!("{line}");
    }
    if dropped > 0 {
        eprintln!("mcp: ({dropped} more lines from the server while the form was open, not shown)");
    }
}

/// Clears a drawn progress bar, so a line written to stderr next (a log
/// message, a form) starts on a clean line.
pub(crate) fn clear_line() {
    if BAR_SHOWN.swap(false, Ordering::AcqRel) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

use mcp_proto::schema::ProgressParams;

use mcp_cli::terminal::line;

/// Progress drawn on stderr: a redrawn bar on a terminal, one plain line
/// per notification otherwise (logs, pipes, tests).
#[derive(Debug)]
pub(crate) struct ProgressBar {
    tty: bool,
    drawn: AtomicBool,
}

/// Width of the bar in cells.
const BAR_WIDTH: usize = 30;

impl ProgressBar {
    pub(crate) fn new() -> Self {
        ProgressBar {
            tty: std::io::stderr().is_terminal(),
            drawn: AtomicBool::new(false),
        }
    }

    pub(crate) fn draw(&self, p: &ProgressParams) {
        // A form is on the terminal: its questions own stderr.
        if crate::form::asking() {
            return;
        }
        let msg = p
            .message
            .as_deref()
            .map(|m| format!(" {}", line(m)))
            .unwrap_or_default();
        let count = match p.total {
            Some(t) => format!("{}/{}", fmt_num(p.progress), fmt_num(t)),
            None => fmt_num(p.progress),
        };
        let line = match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let frac = (p.progress / total).clamp(0.0, 1.0);
                // Truncation is intended: cells fully reached.
                let filled = ((frac * BAR_WIDTH as f64) as usize).min(BAR_WIDTH);
                format!(
                    "[{}{}] {count} ({:.0}%){msg}",
                    "#".repeat(filled),
                    "-".repeat(BAR_WIDTH - filled),
                    frac * 100.0
                )
            }
            None => format!("progress {count}{msg}"),
        };
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            BAR_SHOWN.store(true, Ordering::Release);
        } else {
            let _ = writeln!(err, "progress: {line}");
        }
        let _ = err.flush();
        self.drawn.store(true, Ordering::Relaxed);
    }

    /// Clears a terminal bar so the result starts on a clean line.
    pub(crate) fn finish(&self) {
        if self.tty && self.drawn.swap(false, Ordering::Relaxed) {
            clear_line();
        }
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.finish();
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}
