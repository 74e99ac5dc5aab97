//! The HTTP phases: one in-process chaos server (`tests/support/chaos_http.rs`)
//! for the whole phase, crashed and restarted every 1.5-4 s; a new client
//! (a new transport) per connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_proto::Era;
use mcp_transport_http::{DEFAULT_MAX_RESUME_ATTEMPTS, DEFAULT_REISSUE_METHODS, HttpTransport};

use crate::chaos_http::{ChaosHttp, Mode};
use crate::tally::{SLACK, Tally};
use crate::{EPOCH, LIMIT, Pick, TIMEOUT, count_era, hammer};

pub struct Phase {
    pick: Pick,
    server: Arc<ChaosHttp>,
    crasher: tokio::task::JoinHandle<()>,
    crashes: Arc<AtomicU64>,
    max_posts: u32,
    max_resumes: u32,
    resumes: u64,
    actions: std::collections::BTreeMap<&'static str, u64>,
}

impl Phase {
    pub async fn start(pick: Pick) -> Phase {
        let seed = match pick {
            Pick::Legacy => 1,
            Pick::Modern => 2,
        };
        let server = ChaosHttp::start(Mode::Chaos {
            seed,
            big: 2 * LIMIT,
        })
        .await;
        let crashes = Arc::new(AtomicU64::new(0));
        let (s, c) = (server.clone(), crashes.clone());
        let crasher = tokio::spawn(async move {
            let mut r = seed;
            loop {
                r = r
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let wait = 1500 + (r >> 33) % 2500;
                tokio::time::sleep(Duration::from_millis(wait)).await;
                s.crash(Duration::from_millis((r >> 20) % 300)).await;
                c.fetch_add(1, Ordering::Relaxed);
            }
        });
        Phase {
            pick,
            server,
            crasher,
            crashes,
            max_posts: 0,
            max_resumes: 0,
            resumes: 0,
            actions: Default::default(),
        }
    }

    /// The POSTs one `tools/call` may cost in a connection of `era`.
    fn post_budget(era: Era) -> u32 {
        match era {
            // One, and one re-sent after a session expiry (the client's
            // `resend_on_session_expiry`).
            Era::Legacy => 2,
            _ => 1 + u32::from(DEFAULT_REISSUE_METHODS.contains(&"tools/call")),
        }
    }

    pub async fn epoch(&mut self, n: usize, tally: &mut Tally) {
        let transport = HttpTransport::builder(&self.server.url)
            .max_body_size(LIMIT)
            .max_sse_event_size(LIMIT)
            .build()
            .unwrap();
        let connect = Client::builder("soak", "0.1.0")
            .protocol(self.pick.choice())
            .request_timeout(TIMEOUT)
            .probe_timeout(TIMEOUT)
            .handshake_timeout(TIMEOUT)
            .resend_on_session_expiry(true)
            .connect(transport);
        let mut era = Era::Legacy;
        let started = Instant::now();
        let connected = tokio::time::timeout(3 * TIMEOUT + SLACK, connect).await;
        tally.worst_connect = tally.worst_connect.max(started.elapsed());
        match connected {
            Err(_) => tally
                .violations
                .push(format!("epoch {n}: connect did not end in time")),
            Ok(Err(e)) => {
                if std::env::var_os("MCP_SOAK_DEBUG").is_some() {
                    eprintln!("epoch {n}: connect failed: {e}");
                }
                tally.count("connect failed (typed error)");
                // The server may be down (a crash): no busy loop.
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Ok(Ok(client)) => {
                count_era(&client, tally);
                era = client.era().unwrap_or(Era::Legacy);
                let mine = hammer(Arc::new(client), n, Instant::now() + EPOCH).await;
                tally.merge(mine);
            }
        }
        // No connection outlives its client (a held answer ends within 3 s).
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.server.open_connections() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let open = self.server.open_connections();
        if open > 0 {
            tally.violations.push(format!(
                "epoch {n}: {open} TCP connections outlived their client"
            ));
        }
        self.check_budgets(n, era, tally);
    }

    fn check_budgets(&mut self, n: usize, era: Era, tally: &mut Tally) {
        let counts = self.server.take_counts();
        let budget = Self::post_budget(era);
        for (call, posts) in &counts.posts {
            self.max_posts = self.max_posts.max(*posts);
            if *posts > budget {
                tally.violations.push(format!(
                    "epoch {n}: call {call} was POSTed {posts} times (budget {budget})"
                ));
            }
        }
        for (stream, gets) in &counts.resumes {
            self.resumes += u64::from(*gets);
            self.max_resumes = self.max_resumes.max(*gets);
            if *gets > DEFAULT_MAX_RESUME_ATTEMPTS {
                tally.violations.push(format!(
                    "epoch {n}: stream {stream} was resumed {gets} times (budget {DEFAULT_MAX_RESUME_ATTEMPTS})"
                ));
            }
        }
        for (k, v) in counts.actions {
            *self.actions.entry(k).or_default() += v;
        }
    }

    /// Stops the crashes; the server's numbers, as report lines.
    pub fn finish(self) -> Vec<String> {
        self.crasher.abort();
        let actions: Vec<String> = self
            .actions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        vec![
            format!(
                "server: {} crashes; most POSTs for one call {} (budget: legacy {}, 2026-07-28 {}); {} resumption GETs, most for one stream {} (budget {DEFAULT_MAX_RESUME_ATTEMPTS})",
                self.crashes.load(Ordering::Relaxed),
                self.max_posts,
                Self::post_budget(Era::Legacy),
                Self::post_budget(Era::Modern),
                self.resumes,
                self.max_resumes,
            ),
            format!("chaos: {}", actions.join(", ")),
        ]
    }
}
