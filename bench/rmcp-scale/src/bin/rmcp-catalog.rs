//! `rmcp-catalog`: rmcp 3.11.0's side of `catalog-bench` (`cargo xtask
//! catalog` runs all three). Same flags and JSON line as `catalog-floor`:
//!
//! - `--bench list`: spawn `--server-cmd` (`TokioChildProcess`), `serve`
//!   (rmcp's `initialize` + `initialized`), `list_all_tools()`, keep them,
//!   exit with them held;
//! - `--bench cold --starts K`: K times spawn + `serve`, each kept.
//!
//! rmcp has no OpenAI/Anthropic export, so there is no `convert`.

use std::process::ExitCode;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

#[allow(dead_code)]
#[path = "../../../../examples/src/flags.rs"]
mod flags;

struct Args {
    bench: String,
    server_cmd: String,
    starts: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args { bench: "list".into(), server_cmd: String::new(), starts: 1 };
    flags::each_flag(std::env::args().skip(1), |flag, v| {
        match flag {
            "--bench" => a.bench = v.text(),
            "--server-cmd" => a.server_cmd = v.text(),
            "--starts" => a.starts = v.number()?,
            other => return Err(format!("unknown flag {other}")),
        }
        Ok(())
    })?;
    if a.server_cmd.is_empty() {
        return Err("--server-cmd is required".into());
    }
    Ok(a)
}

async fn connect(line: &str) -> Result<rmcp::service::RunningService<rmcp::service::RoleClient, ()>, String> {
    let mut words = line.split_whitespace();
    let program = words.next().ok_or("empty --server-cmd")?.to_owned();
    let args: Vec<String> = words.map(str::to_owned).collect();
    let transport = TokioChildProcess::new(tokio::process::Command::new(program).configure(|c| {
        c.args(&args);
    }))
    .map_err(|e| format!("spawn: {e}"))?;
    ().serve(transport).await.map_err(|e| format!("connect: {e}"))
}

async fn run(a: Args) -> Result<(), String> {
    match a.bench.as_str() {
        "list" => {
            let client = connect(&a.server_cmd).await?;
            let tools = client.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
            println!(r#"{{"client":"rmcp","bench":"list","tools":{}}}"#, tools.len());
            std::mem::forget(tools);
            std::mem::forget(client);
            std::process::exit(0);
        }
        "cold" => {
            let mut held = Vec::with_capacity(a.starts);
            for _ in 0..a.starts {
                held.push(connect(&a.server_cmd).await?);
            }
            println!(r#"{{"client":"rmcp","bench":"cold","starts":{}}}"#, a.starts);
            std::process::exit(0);
        }
        other => Err(format!("--bench: {other:?} is not list or cold")),
    }
}

fn main() -> ExitCode {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rmcp-catalog: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rmcp-catalog: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(a)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmcp-catalog: {e}");
            ExitCode::FAILURE
        }
    }
}
