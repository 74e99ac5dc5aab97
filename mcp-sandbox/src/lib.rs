//! Run a stdio MCP server confined: it reads what it is allowed to read,
//! writes only where it is allowed to write, reaches only the hosts it is
//! allowed to reach, and cannot see, signal or trace the host. The rules
//! are VS Code's `sandbox` settings ([`Sandbox`]); Linux enforces them.
//!
//! A library has no `unsafe` here and cannot run code between `fork` and
//! `exec` in a threaded host, so confinement is done by a small **launcher**
//! program: the host spawns the launcher instead of the server, the
//! launcher confines itself and then starts the server, which inherits
//! every restriction. The launcher is any program that calls [`hook`] first
//! in its `main` (the host's own executable, so nothing needs installing),
//! or the `mcp-sandbox-launch` program of this crate; [`Launcher::find`]
//! says which is used.
//!
//! ```no_run
//! # #[cfg(feature = "host")]
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_sandbox::Sandbox;
//!
//! // First thing in main: this program can be its own launcher.
//! mcp_sandbox::hook();
//!
//! let sandbox = Sandbox::new()
//!     .allow_write("/home/me/project")
//!     .deny_read("/home/me/.ssh")
//!     .allow_domain("api.example.com")?;
//! // The stdio transport does this for `ServerCommand::sandbox(sandbox)`.
//! let confined = sandbox.prepare("npx".as_ref(), &["-y".into(), "some-server".into()])?;
//! let child = tokio::process::Command::new(&confined.program)
//!     .args(&confined.args)
//!     .stdin(std::process::Stdio::piped())
//!     .stdout(std::process::Stdio::piped())
//!     .spawn()?;
//! // ... keep `confined.running` (the proxy, the private folder) while it runs.
//! # drop((child, confined.running)); Ok(()) }
//! ```
//!
//! # What is enforced (Linux)
//!
//! | | how |
//! |---|---|
//! | reads everywhere but `denyRead` | Landlock allows reading `/`; each `denyRead` path is covered by a mount (an empty read-only folder; over a file, a `/dev/null` that cannot be opened) in the server's private mount namespace |
//! | writes only under `allowWrite`, its `TMPDIR`, `/dev/null`, `/dev/zero`, `/dev/full` | Landlock (ABI 3 or later, so `truncate` is covered too) |
//! | never under `denyWrite` | a read-only bind mount over each |
//! | no host process reachable: its `/proc/<pid>/environ`, signals, `ptrace` | a new pid namespace with its own `/proc`; Landlock's ptrace restriction and (ABI 6) its signal and abstract-socket scopes besides |
//! | no network | a new network namespace: only its own loopback |
//! | `allowedDomains` only, `deniedDomains` winning | the proxy ([`Sandbox::prepare`] starts it) on a Unix socket; the launcher bridges `127.0.0.1:PORT` inside the sandbox to it and sets `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` (and lowercase) for the server |
//! | no host Unix sockets (D-Bus, ssh-agent, Docker) | seccomp refuses new `AF_UNIX` and `AF_VSOCK` sockets (`socketpair` stays) |
//! | no escape through io_uring, the kernel keyring | seccomp refuses `io_uring_setup`, `keyctl`, `add_key`, `request_key` |
//! | no undoing it | Landlock forbids mounting and unmounting; `no_new_privs` is set |
//! | not handed the host's secrets | `mcp-transport-stdio` starts a sandboxed server's environment from its variable allowlist (`HOME`, `PATH`, `LANG`...) plus what its entry sets, not the host's whole environment |
//!
//! **Why a launcher of our own, not bubblewrap.** `bwrap` does the
//! namespace and mount part well, but it is a separate install a library
//! user may not have, it does not apply Landlock or a proxy, and a sandbox
//! that works only where an extra package is present fails closed for most
//! users. The launcher here is the host's own executable ([`hook`]) or a
//! small binary of this crate, and needs nothing but the kernel.
//!
//! **Why mounts for the denials.** Landlock only grants: "read everything
//! but X" would have to grant each sibling along X's path, and then a file
//! created later next to X (by the server, in a writable folder) could not
//! be read back, nor a new file created beside a `denyWrite` folder without
//! the right to create inside it too. A mount over X, in the server's own
//! mount namespace, is exact; Landlock keeps the server from undoing it.
//!
//! The server's private folder (its `TMPDIR` and the proxy's socket) is in
//! the host's temporary folder: a `denyRead` of that whole folder (`/tmp`)
//! hides it from the server too.
//!
//! Domain patterns have VS Code's meaning ([`DomainPattern`]): `*.example.com`
//! matches hosts under `example.com` but not `example.com` itself; no match
//! is a refusal.
//!
//! **Fail closed.** Where the sandbox cannot be had (another OS, no
//! Landlock ABI 3, user namespaces switched off, no launcher), a server
//! that asked for one does not start: [`Sandbox::prepare`] returns
//! [`Unavailable`], whose text says why and how to opt out; and if
//! something fails later inside the launcher (mounting `/proc`, a
//! restrictive AppArmor policy), the launcher prints why and exits with
//! [`LAUNCH_FAILED`] without starting the server. [`PRETEND_UNAVAILABLE_VAR`]
//! makes both act as if Landlock or user namespaces were missing, to test
//! that path.
//!
//! # Threat model
//!
//! The server is assumed hostile from its first instruction: it may be a
//! package that was replaced, or one a prompt injection steers. It is
//! **kept from**: reading `denyRead` paths; writing anywhere but where it
//! was allowed; reading the host's environment (API keys, tokens) or memory
//! through `/proc`; signalling or tracing any process outside the sandbox;
//! any network but the allowed hosts; the host's Unix sockets; leaving
//! anything running after it exits (its pid namespace dies with it).
//!
//! **Not covered:**
//!
//! - **What it says.** Its stdout is the MCP stream: tool results can carry
//!   whatever it read (within the rules) and instructions aimed at the
//!   model. Pinned tool definitions and per-tool policy are the defence
//!   there, not the sandbox.
//! - **Reads are broad by design** (VS Code's meaning): everything the user
//!   can read is readable unless denied (`~/.aws`, `~/.config`, browser
//!   profiles...). Deny what matters. A denied file also reachable by
//!   another path (a hard link, another mount of the same filesystem) is
//!   readable there; a `denyRead`/`denyWrite` path that does not exist when
//!   the server starts is not protected (there is nothing to mount over).
//! - **Resources.** No CPU, memory, disk, process-count or time limits
//!   (cgroups are the host's business); a server can exhaust the machine.
//! - **Covert channels** between sandboxed and other processes (timing,
//!   shared CPU caches, `/tmp` files written in an `allowWrite` folder and
//!   read by someone else) are not closed.
//! - **Through the proxy.** The allowed hosts get whatever the server sends
//!   them (exfiltration to an allowed host is allowed). DNS is done by the
//!   proxy for names already allowed, so it leaks nothing new; names are
//!   trusted as they resolve (a private address is reachable if an allowed
//!   name points there), loopback excepted. The proxy sees `CONNECT`
//!   destinations only, not what goes through the TLS tunnel.
//! - **The kernel.** A kernel bug reachable from a user namespace is an
//!   escape; user namespaces widen the kernel's attack surface.
//! - **Launchers' own needs.** `npx -y` and `uvx` download and cache
//!   packages: with no network and no write access to `~/.npm` or
//!   `~/.cache/uv` they fail; allow those (and the registry's domain) or
//!   run an installed server directly.
//! - Inside, the server runs as root of its own user namespace (mapped to
//!   the user outside): it owns what the user owns, nothing more.
//!
//! # macOS and Windows (not built)
//!
//! On macOS the same rules map onto a `sandbox-exec` profile (Seatbelt,
//! as VS Code and Anthropic's `sandbox-runtime` use): `(deny default)`,
//! `(allow file-read*)` with `(deny file-read* (subpath DENIED))`,
//! `(allow file-write* (subpath ALLOWED))` with denials after, `(allow
//! network-outbound (remote ip "localhost:PORT"))` for the proxy only,
//! `(allow process-fork process-exec)`, and `(deny process-info* signal)`
//! outside the sandbox's own processes; the launcher would run
//! `sandbox-exec -p PROFILE program`. On Windows there is no equivalent a
//! user can apply without administrator rights: an AppContainer (with a
//! capability-less token, file ACLs for the allowed folders, and no
//! `internetClient` capability but a loopback exemption for the proxy) or
//! a restricted token and job object would be the way. Both fail closed
//! here: [`Unavailable::Platform`].
//!
//! # Feature flags
//!
//! - `host`: [`Sandbox::prepare`] and the proxy (tokio). The launcher
//!   itself ([`hook`], [`launcher_main`]) needs no feature and no runtime.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod check;
mod domain;
#[cfg(feature = "host")]
mod host;
mod launcher;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
#[cfg(feature = "host")]
#[cfg_attr(docsrs, doc(cfg(feature = "host")))]
pub mod proxy;
mod spec;

pub use check::{MIN_LANDLOCK_ABI, OPT_OUT, PRETEND_UNAVAILABLE_VAR, Unavailable, check};
pub use domain::{DomainPattern, DomainPatternError};
#[cfg(feature = "host")]
pub use host::{Confined, Running};
pub use launcher::{LAUNCHER_NAME, LAUNCHER_VAR, Launcher, hook, launcher_main};
pub use policy::Sandbox;
pub use spec::{LAUNCH_FAILED, LAUNCH_MARKER};
