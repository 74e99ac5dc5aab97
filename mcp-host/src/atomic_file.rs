//! Writing a whole file so that a crash leaves the old one or the new one,
//! never half of one: the bytes go to a temporary file beside it, are
//! synced, then renamed over it. Used by the stores kept in files
//! ([`FileStore`](crate::FileStore), [`FileTicketStore`](crate::FileTicketStore)).

use std::fs;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells temporary files of one process apart.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces `path`'s contents with `bytes` atomically, making its
/// directory if it is missing. A failure leaves no temporary file.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_owned();
    tmp_name.push(format!(
        ".tmp.{}.{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
