//! The tool-search benchmark (`cargo xtask search-bench` runs it): a
//! catalog of 10,000 real tool definitions (the evaluation catalog's
//! tools, `mcp-tools/tests/search/catalog.json`, repeated as servers of
//! their own with renamed tools until there are 10,000), indexed and
//! searched with the evaluation's queries.
//!
//! - `search-bench time`: the time the crate's word vectors take to read
//!   (once per process, at the first build), median time of an index build
//!   and of a query, and the index's heap per tool.
//! - `search-bench build N`: N builds (for instruction counts: the
//!   difference between two N is the cost of the builds between).
//! - `search-bench query N`: one build, then N queries.
//! - `search-bench digest`: one build, then every query once: a digest of
//!   all their hits (ids and score bits) and the index's heap, which a
//!   change to the build's speed must leave as it is (it indexes the same
//!   terms with the same weights).

#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::time::Instant;

use mcp_proto::schema::Tool;
use mcp_tools::search::ToolIndex;
use serde::Deserialize;

const TOOLS: usize = 10_000;

#[derive(Deserialize)]
struct Catalog {
    servers: Vec<Server>,
}

#[derive(Deserialize, Clone)]
struct Server {
    server: String,
    #[serde(default)]
    instructions: Option<String>,
    tools: Vec<Tool>,
}

/// The catalog's servers repeated until they hold `TOOLS` tools, each copy
/// with its own server name and tool names.
fn catalog() -> Vec<Server> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp-tools/tests/search");
    let text = std::fs::read_to_string(format!("{dir}/catalog.json")).unwrap();
    let base: Catalog = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    let mut n = 0;
    'copies: for copy in 0.. {
        for s in &base.servers {
            let mut s = s.clone();
            s.server = format!("{}-{copy}", s.server);
            for t in &mut s.tools {
                t.name = format!("{}_{copy}", t.name);
            }
            let room = TOOLS - n;
            s.tools.truncate(room);
            n += s.tools.len();
            out.push(s);
            if n == TOOLS {
                break 'copies;
            }
        }
    }
    out
}

fn queries() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp-tools/tests/search");
    std::fs::read_to_string(format!("{dir}/queries.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once("=>").map(|(q, _)| q.trim().to_owned()))
        .collect()
}

fn build(servers: &[Server]) -> ToolIndex {
    let mut b = ToolIndex::builder();
    let mut id = 0;
    for s in servers {
        b.server(&s.server, s.instructions.as_deref());
        for t in &s.tools {
            b.tool(id, t);
            id += 1;
        }
    }
    b.build()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let servers = catalog();
    let queries = queries();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    match args.first().map(String::as_str) {
        Some("build") => {
            for _ in 0..n {
                std::hint::black_box(build(&servers));
            }
        }
        Some("query") => {
            let index = build(&servers);
            for q in queries.iter().cycle().take(n) {
                std::hint::black_box(index.search(q, 10));
            }
        }
        Some("digest") => {
            use std::hash::{Hash, Hasher};
            let index = build(&servers);
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for q in &queries {
                for hit in index.search(q, 50) {
                    (hit.id, hit.score.to_bits()).hash(&mut h);
                }
            }
            println!(
                "digest {:016x} over {} queries; index heap {} B",
                h.finish(),
                queries.len(),
                index.heap_bytes()
            );
        }
        _ => {
            // A one-tool index, twice: the first reads the crate's word
            // vectors (once per process), the second does not.
            let tiny = || {
                let t = Instant::now();
                let mut b = ToolIndex::builder();
                b.tool(0, &servers[0].tools[0]);
                std::hint::black_box(b.build());
                t.elapsed().as_secs_f64() * 1e3
            };
            let (first, second) = (tiny(), tiny());
            println!(
                "word vectors read in {:.1} ms (a one-tool index: first build {first:.1} ms, second {second:.2} ms)",
                first - second
            );
            let builds: Vec<f64> = (0..15)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(build(&servers));
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            let index = build(&servers);
            let searches: Vec<f64> = queries
                .iter()
                .cycle()
                .take(queries.len() * 5)
                .map(|q| {
                    let t = Instant::now();
                    std::hint::black_box(index.search(q, 10));
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            println!(
                "{} tools: build median {:.1} ms; query median {:.0} µs (max {:.0} µs, {} queries); index heap {} B per tool",
                index.len(),
                median(builds),
                median(searches.clone()),
                searches.iter().copied().fold(0.0, f64::max),
                searches.len(),
                index.heap_bytes() / index.len().max(1)
            );
        }
    }
}
