//! Platform parts: putting the server in its own process group and
//! signalling that group.
//!
//! POSIX uses process groups and `killpg(2)`. Elsewhere the direct child is
//! killed through Tokio; a Windows implementation should put the child in a
//! Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` here, behind the
//! same [`Group`] interface.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::Group;

#[cfg(not(unix))]
mod other;
#[cfg(not(unix))]
pub(crate) use other::Group;
