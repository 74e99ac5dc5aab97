//! Tool search measured on real catalogs: the `tools/list` of real MCP
//! servers from npm and PyPI (`tests/search/catalog.json`, captured by
//! `cargo xtask search-catalog`) and queries written as people ask for a
//! tool (`tests/search/queries.txt`), each with the tools that answer it.
//! The queries are split: `dev` (the ranking was tuned on it) and `test`
//! (held out: read only to report); `queries-final.txt`,
//! `queries-fresh.txt`, `queries-fresh2.txt` and `queries-fresh3.txt` are
//! more held-out sets, each written before a round of ranking work and read
//! once at its end (`SEARCH_EVAL_SKIP=queries-fresh3.txt` while tuning). Prints recall@5 and MRR@10 per split
//! for the index and for plain BM25 over name and description, and fails
//! below the floors. `cargo xtask search-eval` runs it with the report
//! shown.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::collections::HashMap;

use mcp_proto::schema::Tool;
use mcp_tools::search::{Ranking, ToolIndex};
use serde::Deserialize;

#[derive(Deserialize)]
struct Catalog {
    servers: Vec<CatalogServer>,
}

#[derive(Deserialize)]
struct CatalogServer {
    server: String,
    #[serde(default)]
    instructions: Option<String>,
    tools: Vec<Tool>,
}

struct Query {
    split: String,
    text: String,
    relevant: Vec<String>,
}

fn load() -> (Catalog, Vec<Query>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/search");
    let catalog: Catalog =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/catalog.json")).unwrap())
            .unwrap();
    let mut queries = Vec::new();
    // `SEARCH_EVAL_NO_FINAL`: leave the held-out sets written for a final
    // reading unread (while tuning: each is read once, to report);
    // `SEARCH_EVAL_SKIP=FILE,...`: leave those unread.
    let files: &[&str] = if std::env::var_os("SEARCH_EVAL_NO_FINAL").is_some() {
        &["queries.txt"]
    } else {
        &[
            "queries.txt",
            "queries-final.txt",
            "queries-fresh.txt",
            "queries-fresh2.txt",
            "queries-fresh3.txt",
        ]
    };
    let skip = std::env::var("SEARCH_EVAL_SKIP").unwrap_or_default();
    for file in files {
        if !skip.split(',').any(|s| s.trim() == *file) {
            read_queries(&format!("{dir}/{file}"), &mut queries);
        }
    }
    (catalog, queries)
}

/// Appends the queries of `path` (`[split]` lines, then `QUERY => server/tool, ...`).
fn read_queries(path: &str, queries: &mut Vec<Query>) {
    let mut split = String::new();
    for (n, line) in std::fs::read_to_string(path).unwrap().lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            split = s.to_owned();
            continue;
        }
        let (text, relevant) = line
            .split_once("=>")
            .unwrap_or_else(|| panic!("{path}:{}: no `=>`", n + 1));
        queries.push(Query {
            split: split.clone(),
            text: text.trim().to_owned(),
            relevant: relevant.split(',').map(|r| r.trim().to_owned()).collect(),
        });
    }
}

/// `server/tool` of each tool, in catalog order.
fn names(catalog: &Catalog) -> Vec<String> {
    catalog
        .servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(move |t| format!("{}/{}", s.server, t.name))
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Score {
    recall5: f64,
    mrr10: f64,
    n: usize,
}

impl Score {
    fn add(&mut self, ranked: &[usize], relevant: &[usize]) {
        let top5 = ranked
            .iter()
            .take(5)
            .filter(|r| relevant.contains(r))
            .count();
        self.recall5 += top5 as f64 / relevant.len().min(5) as f64;
        if let Some(rank) = ranked.iter().take(10).position(|r| relevant.contains(r)) {
            self.mrr10 += 1.0 / (rank + 1) as f64;
        }
        self.n += 1;
    }
    fn recall(&self) -> f64 {
        self.recall5 / self.n.max(1) as f64
    }
    fn mrr(&self) -> f64 {
        self.mrr10 / self.n.max(1) as f64
    }
}

/// Plain BM25 (k1 1.2, b 0.75) over the name and description, split at
/// anything not alphanumeric, lowercased: the baseline.
struct PlainBm25 {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    df: HashMap<String, f64>,
}

fn plain_tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl PlainBm25 {
    fn new(catalog: &Catalog) -> Self {
        let mut docs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for t in catalog.servers.iter().flat_map(|s| &s.tools) {
            let text = format!("{} {}", t.name, t.description.as_deref().unwrap_or(""));
            let mut tf: HashMap<String, f64> = HashMap::new();
            let toks = plain_tokens(&text);
            lens.push(toks.len() as f64);
            for w in toks {
                *tf.entry(w).or_default() += 1.0;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1.0;
            }
            docs.push(tf);
        }
        PlainBm25 { docs, lens, df }
    }

    fn search(&self, q: &str, limit: usize) -> Vec<usize> {
        let n = self.docs.len() as f64;
        let avg = self.lens.iter().sum::<f64>() / n;
        let mut terms = plain_tokens(q);
        terms.dedup();
        let mut scored: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(d, tf)| {
                let s = terms
                    .iter()
                    .map(|t| {
                        let f = tf.get(t).copied().unwrap_or(0.0);
                        let df = self.df.get(t).copied().unwrap_or(0.0);
                        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                        idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lens[d] / avg))
                    })
                    .sum();
                (s, d)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, d)| d).collect()
    }
}

fn index(catalog: &Catalog, ranking: Ranking) -> ToolIndex {
    let mut b = ToolIndex::builder();
    b.ranking(ranking);
    // `SEARCH_EVAL_VECTORS=FILE`: other word vectors (`xtask/embed/distill.py`'s output).
    if let Some(path) = std::env::var_os("SEARCH_EVAL_VECTORS") {
        let bytes = std::fs::read(path).unwrap().leak();
        b.word_vectors(bytes).expect("a word vector table");
    }
    let mut id = 0;
    for s in &catalog.servers {
        b.server(&s.server, s.instructions.as_deref());
        for t in &s.tools {
            b.tool(id, t);
            id += 1;
        }
    }
    b.build()
}

#[test]
fn search_quality_on_real_catalogs() {
    let (catalog, queries) = load();
    let names = names(&catalog);
    let position: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let index = index(&catalog, ranking());
    let plain = PlainBm25::new(&catalog);
    let mut ours: HashMap<&str, Score> = HashMap::new();
    let mut base: HashMap<&str, Score> = HashMap::new();
    let verbose = std::env::var_os("SEARCH_EVAL_MISSES").is_some();
    for q in &queries {
        let relevant: Vec<usize> = q
            .relevant
            .iter()
            .map(|r| {
                *position
                    .get(r.as_str())
                    .unwrap_or_else(|| panic!("{:?}: no tool {r} in the catalog", q.text))
            })
            .collect();
        let ranked: Vec<usize> = index.search(&q.text, 10).iter().map(|h| h.id).collect();
        ours.entry(&q.split).or_default().add(&ranked, &relevant);
        base.entry(&q.split)
            .or_default()
            .add(&plain.search(&q.text, 10), &relevant);
        // Misses of the dev split only: the test split is held out.
        if verbose && q.split == "dev" && !ranked.iter().take(5).any(|r| relevant.contains(r)) {
            let top: Vec<&str> = ranked.iter().take(5).map(|&r| names[r].as_str()).collect();
            println!(
                "miss [{}] {:?} wants {:?}, got {top:?}",
                q.split, q.text, q.relevant
            );
        }
    }
    println!(
        "catalog: {} servers, {} tools; {} queries",
        catalog.servers.len(),
        names.len(),
        queries.len()
    );
    println!("| split | queries | recall@5 | MRR@10 | plain BM25 recall@5 | plain BM25 MRR@10 |");
    println!("|---|---|---|---|---|---|");
    let mut splits: Vec<&&str> = ours.keys().collect();
    splits.sort();
    for split in splits {
        let (o, b) = (ours[*split], base[*split]);
        println!(
            "| {split} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            o.n,
            o.recall(),
            o.mrr(),
            b.recall(),
            b.mrr()
        );
    }
    for (split, s) in &ours {
        let (recall, mrr) = floors(split);
        assert!(
            s.recall() >= recall && s.mrr() >= mrr,
            "{split}: recall@5 {:.3}, MRR@10 {:.3}: below the floor ({recall}, {mrr})",
            s.recall(),
            s.mrr()
        );
    }
}

/// The floors of a split (recall@5, MRR@10): a ranking change must not
/// fall below them. They guard against breakage and are not the aim:
/// issue 41's targets are 0.90 and 0.80, not met yet (see the report
/// printed above). The final and fresh held-out sets are harder (written
/// from tasks, never tuned on) and have floors of their own.
fn floors(split: &str) -> (f64, f64) {
    match split {
        "final" => (0.70, 0.60),
        // Written by the third round before its ranking changes; floors set
        // after its one reading (0.839, 0.696), below it.
        "fresh" => (0.75, 0.62),
        // Written by the fourth round before its ranking changes, stricter
        // (no word of the tool's name but its product's); floors set after
        // its one reading (0.540, 0.414), below it.
        "fresh2" => (0.50, 0.38),
        // Written by the fifth round before its ranking work, as strict as
        // fresh2; floors set after its one reading (0.540, 0.430), below it.
        "fresh3" => (0.50, 0.40),
        _ => (0.75, 0.70),
    }
}

/// Recall@5 + MRR@10 of `ranking` on the dev split.
fn dev_objective(catalog: &Catalog, queries: &[(Vec<usize>, &str)], ranking: Ranking) -> f64 {
    let index = index(catalog, ranking);
    let mut score = Score::default();
    for (relevant, text) in queries {
        let ranked: Vec<usize> = index.search(text, 10).iter().map(|h| h.id).collect();
        score.add(&ranked, relevant);
    }
    score.recall() + score.mrr()
}

/// `SEARCH_EVAL_TUNE=1`: coordinate descent over the ranking's constants
/// on the dev split only; prints the best found (a tool for whoever
/// changes the ranking; the constants are then written into `Ranking`'s
/// default by hand).
#[test]
fn tune_on_dev() {
    if std::env::var_os("SEARCH_EVAL_TUNE").is_none() {
        return;
    }
    let (catalog, queries) = load();
    let names = names(&catalog);
    let position: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let dev: Vec<(Vec<usize>, &str)> = queries
        .iter()
        .filter(|q| q.split == "dev")
        .map(|q| {
            (
                q.relevant.iter().map(|r| position[r.as_str()]).collect(),
                q.text.as_str(),
            )
        })
        .collect();
    let mut best = ranking();
    let mut best_score = dev_objective(&catalog, &dev, best);
    println!("start {best_score:.4} {best:?}");
    // `SEARCH_EVAL_KNOBS=FIRST-LAST`: tune only those.
    let (first, last) = std::env::var("SEARCH_EVAL_KNOBS")
        .ok()
        .and_then(|k| {
            let (a, b) = k.split_once('-')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((0, KNOBS - 1));
    for round in 0..3 {
        for knob in first..=last {
            let current = get(&best, knob);
            for factor in [0.0, 0.25, 0.5, 0.75, 1.5, 2.0, 3.0] {
                let mut r = best;
                set(
                    &mut r,
                    knob,
                    current * factor + if current == 0.0 { factor * 0.3 } else { 0.0 },
                );
                let s = dev_objective(&catalog, &dev, r);
                if s > best_score + 1e-9 {
                    best_score = s;
                    best = r;
                    println!("round {round} knob {knob} -> {:.3}: {s:.4}", get(&r, knob));
                }
            }
        }
    }
    println!("best {best_score:.4} {best:?}");
}

/// The ranking evaluated: the default, with `SEARCH_EVAL_SET=KNOB=VALUE,...`
/// applied (to try a change before tuning it).
fn ranking() -> Ranking {
    let mut r = Ranking::default();
    for pair in std::env::var("SEARCH_EVAL_SET")
        .unwrap_or_default()
        .split(',')
    {
        if let Some((k, v)) = pair.split_once('=') {
            set(&mut r, k.trim().parse().unwrap(), v.trim().parse().unwrap());
        }
    }
    r
}

/// How many constants [`get`] and [`set`] reach.
const KNOBS: usize = 23;

fn get(r: &Ranking, knob: usize) -> f32 {
    match knob {
        0..5 => r.weight[knob],
        5..10 => r.norm[knob - 5],
        10 => r.k1,
        11 => r.server,
        12 => r.same,
        13 => r.related,
        14 => r.coverage,
        15 => r.name,
        16 => r.meaning,
        17 => r.meaning_floor,
        _ => r.meaning_fields[knob - 18],
    }
}

fn set(r: &mut Ranking, knob: usize, v: f32) {
    match knob {
        0..5 => r.weight[knob] = v,
        5..10 => r.norm[knob - 5] = v.min(1.0),
        10 => r.k1 = v,
        11 => r.server = v,
        12 => r.same = v.min(1.0),
        13 => r.related = v.min(1.0),
        14 => r.coverage = v,
        15 => r.name = v,
        16 => r.meaning = v.min(1.0),
        17 => r.meaning_floor = v.min(1.0),
        _ => r.meaning_fields[knob - 18] = v,
    }
}
