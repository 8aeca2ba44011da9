//! Metrics and health for long-running agents.
//!
//! One registry per process ([`metrics`]), counted into by the agents: rows and pages moved per
//! table, replies and errors by code, how long the producer took to answer, change-stream rows,
//! passes, and the bus's depth per mailbox (read at each scrape). [`serve`] is the opt-in HTTP
//! listener (`metrics_addr` in an agent's config): `GET /metrics` in the Prometheus text format
//! and `GET /health`, which answers 503 with the reason when the agent cannot reach its
//! databases. It never carries a value of a row: labels are table names, mailbox names and
//! error codes.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::net::SocketAddr;
use std::sync::OnceLock;

type Labels = Vec<(&'static str, String)>;

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    rows: Family<Labels, Counter>,
    pages: Family<Labels, Counter>,
    replies: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    answer_seconds: Histogram,
    stream_rows: Counter,
    stream_transactions: Counter,
    passes: Counter,
    last_pass: Gauge<f64, std::sync::atomic::AtomicU64>,
    bus: Family<Labels, Gauge>,
    guarded: Family<Labels, Counter>,
    failing: Family<Labels, Gauge>,
    /// Tables the egress guard holds back now: table → column and detector of the last hit.
    held_back: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("maskbus");
        let rows = Family::default();
        let pages = Family::default();
        let replies = Family::default();
        let errors = Family::default();
        let answer_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 16));
        let stream_rows = Counter::default();
        let stream_transactions = Counter::default();
        let passes = Counter::default();
        let last_pass = Gauge::default();
        let bus = Family::default();
        let guarded = Family::default();
        let failing = Family::default();
        registry.register(
            "failing_tables",
            "Tables a consumer cannot sync or follow now (they fail closed, or wait for a parent), by role",
            failing.clone(),
        );
        registry.register(
            "guarded",
            "Rows the producer's egress guard refused to send, by table, column and detector",
            guarded.clone(),
        );
        registry.register(
            "rows",
            "Rows moved, by table and role (served by a producer, written by a consumer)",
            rows.clone(),
        );
        registry.register("pages", "Pages moved, by role", pages.clone());
        registry.register(
            "replies",
            "Replies a producer sent, by kind",
            replies.clone(),
        );
        registry.register(
            "errors",
            "Error replies a producer sent, by code",
            errors.clone(),
        );
        registry.register(
            "answer_seconds",
            "How long a producer took to answer a request",
            answer_seconds.clone(),
        );
        registry.register(
            "stream_rows",
            "Changed rows a consumer applied from the change stream",
            stream_rows.clone(),
        );
        registry.register(
            "stream_transactions",
            "Source transactions a consumer applied from the change stream",
            stream_transactions.clone(),
        );
        registry.register("passes", "Sync passes a consumer finished", passes.clone());
        registry.register(
            "last_pass_timestamp_seconds",
            "When a consumer last finished a pass (Unix time): now minus this is its lag",
            last_pass.clone(),
        );
        registry.register(
            "bus_messages",
            "Messages on the bus by mailbox and state (pending, leased, dead), read at each scrape",
            bus.clone(),
        );
        Self {
            registry,
            rows,
            pages,
            replies,
            errors,
            answer_seconds,
            stream_rows,
            stream_transactions,
            passes,
            last_pass,
            bus,
            guarded,
            failing,
            held_back: Default::default(),
        }
    }
}

/// The process's metrics, made at first use.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

impl Metrics {
    pub fn add_rows(&self, role: &'static str, table: &str, rows: u64) {
        self.rows
            .get_or_create(&vec![
                ("role", role.to_string()),
                ("table", table.to_string()),
            ])
            .inc_by(rows);
    }

    pub fn add_pages(&self, role: &'static str, pages: u64) {
        self.pages
            .get_or_create(&vec![("role", role.to_string())])
            .inc_by(pages);
    }

    /// A reply of `kind` sent; `error` its code when it was an error.
    pub fn reply(&self, kind: &'static str, error: Option<&str>) {
        self.replies
            .get_or_create(&vec![("kind", kind.to_string())])
            .inc();
        if let Some(code) = error {
            self.errors
                .get_or_create(&vec![("code", code.to_string())])
                .inc();
        }
    }

    pub fn answered_in(&self, seconds: f64) {
        self.answer_seconds.observe(seconds);
    }

    pub fn applied(&self, transactions: u64, rows: u64) {
        self.stream_transactions.inc_by(transactions);
        self.stream_rows.inc_by(rows);
    }

    /// `tables` tables fail now (a consumer following the stream counts them each round).
    pub fn failing(&self, role: &'static str, tables: usize) {
        self.failing
            .get_or_create(&vec![("role", role.to_string())])
            .set(tables as i64);
    }

    /// A pass finished at `unix_seconds`.
    pub fn pass_done(&self, unix_seconds: f64) {
        self.passes.inc();
        self.last_pass.set(unix_seconds);
    }

    pub fn bus_depth(&self, mailbox: &str, pending: i64, leased: i64, dead: i64) {
        for (state, n) in [("pending", pending), ("leased", leased), ("dead", dead)] {
            self.bus
                .get_or_create(&vec![
                    ("mailbox", mailbox.to_string()),
                    ("state", state.into()),
                ])
                .set(n);
        }
    }

    /// The egress guard refused a row of `table`: what `column`'s rule left reads as `detector`.
    /// The table is held back (in `/health`) until a page of it masks clean.
    pub fn guarded(&self, table: &str, column: &str, detector: &str) {
        self.guarded
            .get_or_create(&vec![
                ("table", table.to_string()),
                ("column", column.to_string()),
                ("detector", detector.to_string()),
            ])
            .inc();
        if let Ok(mut held) = self.held_back.lock() {
            held.insert(
                table.to_string(),
                format!("column {column}, detector {detector}"),
            );
        }
    }

    /// A page of `table` masked clean: the guard no longer holds it back.
    pub fn served_clean(&self, table: &str) {
        if let Ok(mut held) = self.held_back.lock() {
            held.remove(table);
        }
    }

    /// The tables the egress guard holds back now, each with its column and detector.
    pub fn held_back(&self) -> Vec<(String, String)> {
        self.held_back
            .lock()
            .map(|h| h.iter().map(|(t, w)| (t.clone(), w.clone())).collect())
            .unwrap_or_default()
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

/// Why `/metrics` and `/health` cannot be served.
#[derive(Debug)]
pub struct ListenError {
    addr: SocketAddr,
    reason: String,
}

impl std::fmt::Display for ListenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot listen for metrics on {}: {}; set metrics_addr to a free address",
            self.addr, self.reason
        )
    }
}

impl std::error::Error for ListenError {}

/// Serves `GET /metrics` (after `refresh`, which reads what is read at scrape time) and
/// `GET /health` (`check`: `Err(reason)` answers 503) on `addr`, from a thread of its own, for
/// the life of the process. Fails when the address cannot be bound.
pub fn serve<E: std::fmt::Display>(
    addr: SocketAddr,
    refresh: impl Fn() + Send + 'static,
    check: impl Fn() -> Result<(), E> + Send + 'static,
) -> Result<SocketAddr, ListenError> {
    let server = tiny_http::Server::http(addr).map_err(|e| ListenError {
        addr,
        reason: e.to_string(),
    })?;
    let bound = server.server_addr().to_ip().ok_or_else(|| ListenError {
        addr,
        reason: "not an IP address".into(),
    })?;
    std::thread::Builder::new()
        .name("maskbus-metrics".into())
        .spawn(move || {
            for request in server.incoming_requests() {
                let path = request.url().split('?').next().unwrap_or("").to_string();
                let get = *request.method() == tiny_http::Method::Get;
                let (status, body, kind) = match (get, path.as_str()) {
                    (true, "/metrics") => {
                        refresh();
                        (
                            200,
                            metrics().render(),
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )
                    }
                    (true, "/health") => match check() {
                        Ok(()) => (200, "ok\n".to_string(), "text/plain; charset=utf-8"),
                        Err(reason) => (503, format!("{reason}\n"), "text/plain; charset=utf-8"),
                    },
                    (false, _) => (405, "GET only\n".into(), "text/plain; charset=utf-8"),
                    _ => (
                        404,
                        "/metrics or /health\n".into(),
                        "text/plain; charset=utf-8",
                    ),
                };
                let mut response = tiny_http::Response::from_string(body).with_status_code(status);
                if let Ok(header) = tiny_http::Header::from_bytes("Content-Type", kind) {
                    response = response.with_header(header);
                }
                if let Err(e) = request.respond(response) {
                    tracing::debug!(error = %e, "a metrics client went away");
                }
            }
        })
        .map_err(|e| ListenError {
            addr,
            reason: format!("cannot start its thread: {e}"),
        })?;
    tracing::info!(address = %bound, "serving /metrics and /health");
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_with_their_labels() {
        let m = Metrics::default();
        m.add_rows("consumer", "public.customers", 3);
        m.add_rows("consumer", "public.customers", 2);
        m.reply("error", Some("unknown_entity"));
        m.bus_depth("maskbus.producer", 4, 1, 0);
        let text = m.render();
        assert!(
            text.contains("maskbus_rows_total{role=\"consumer\",table=\"public.customers\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("maskbus_errors_total{code=\"unknown_entity\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("maskbus_bus_messages{mailbox=\"maskbus.producer\",state=\"pending\"} 4"),
            "{text}"
        );
    }
}
