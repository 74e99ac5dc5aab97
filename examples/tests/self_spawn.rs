//! The `self_spawn` example runs offline: it spawns itself as the demo
//! server, lists its tools and calls two.

use std::process::{Command, Stdio};

#[test]
fn self_spawn_example_lists_and_calls_offline() {
    let out = Command::new(env!("CARGO_BIN_EXE_self_spawn"))
        .stdin(Stdio::null())
        .output()
        .expect("run self_spawn");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("over protocol 2026-07-28"), "{stdout}");
    assert!(stdout.contains("tool slow_sum: "), "{stdout}");
    assert!(stdout.contains("slow_sum(2, 3) = 5"), "{stdout}");
    assert!(stdout.contains("echo: hello"), "{stdout}");
}
