//! `maskbus status`: where a consumer's target stands, read without writing anything.
//!
//! From the target: each synced table's rows, its watermark, whether a pass is under way and
//! when it last moved; the change stream's position; the subset it holds. From the bus: the
//! pending, leased and dead messages of the two mailboxes. From the producer, when it answers
//! (asked on a mailbox of status's own, so a running follower never takes its replies): in
//! watermark mode whether each table has rows written after its watermark (a page of one row
//! since it) and how many transaction ids the source has handed out since; in stream mode
//! whether changes wait after the applied position. In watermark mode a table is caught up only
//! when its deletes are too: its last delete check (`maskbus.delete_checks`, written by each
//! pass and by verify) reached its watermark and did not fail. The verdict ([`StatusReport::verdict`]) is
//! pure and decides the exit code.

use super::bookkeeping;
use super::client::Asker;
use super::ConsumerError;
use maskbus_config::{ConsumerConfig, SyncMode};
use maskbus_mailbox::{Mailbox, MailboxStats, Settings};
use maskbus_pg::{Database, TableRef};
use maskbus_protocol::{ChangeOp, Position, ReceivedReply, Request, Snapshot, VERSION};
use std::time::Duration;

/// One synced table.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TableStatus {
    pub entity: String,
    pub rows: i64,
    /// The source snapshot every row of which is in (`xmin:xmax:xip`), if any pass finished.
    pub watermark: Option<String>,
    pub pass_running: bool,
    /// When the watermark last moved (UTC, ISO 8601).
    pub last_moved: Option<String>,
    /// Rows written on the source after the watermark: `None` when the producer did not say.
    pub behind: Option<bool>,
    /// The watermark up to which the rows deleted on the source were last followed (a pass's
    /// delete check, or a verify that found the table equal or repaired it), if ever.
    pub deletes_followed_until: Option<String>,
    /// Why the last check of its deletes failed, if it did.
    pub delete_check_failed: Option<String>,
}

/// Where the change stream stands.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StreamStatus {
    pub applied: String,
    pub transactions_applied: i64,
    pub rows_applied: i64,
    pub last_moved: String,
}

/// Everything `maskbus status` shows.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StatusReport {
    /// The target holds maskbus's bookkeeping (a first sync has started).
    pub is_target: bool,
    pub mode: &'static str,
    pub subset: Option<String>,
    pub tables: Vec<TableStatus>,
    pub stream: Option<StreamStatus>,
    pub mailboxes: Vec<MailboxCounts>,
    pub producer_answered: bool,
    /// Transaction ids the source handed out since the oldest watermark (an upper bound on the
    /// transactions behind: some wrote nothing synced, or rolled back).
    pub xids_since_watermark: Option<u64>,
    /// Changes wait after the applied position (stream mode).
    pub stream_behind: Option<bool>,
    /// How far the wire audit is, when the bus says.
    pub audit: Option<AuditState>,
    /// Tables that fail closed because their schema does not follow the source (a column
    /// without a rule, say), each with the reason.
    pub closed: Vec<ClosedTable>,
    /// Served objects the consumer did not create though their tables sync (an extension off
    /// its list, a default, a constraint or an index whose text it refused), each with the
    /// reason: said, not a failure.
    pub not_created: Vec<ClosedTable>,
}

/// A table whose sync stopped because its schema does not follow the source.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClosedTable {
    pub entity: String,
    pub reason: String,
}

/// The wire audit as `status` shows it: numbers only.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct AuditState {
    pub scanned_through: i64,
    pub oldest_unaudited_secs: Option<f64>,
    pub open_findings: i64,
    /// A message has waited longer than `audit_max_age` for the audit.
    pub stale: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MailboxCounts {
    pub mailbox: String,
    pub pending: i64,
    pub leased: i64,
    pub dead: i64,
}

/// What the status says, for people and for the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    CaughtUp,
    /// Behind, with why.
    Behind(Vec<String>),
    /// The producer did not answer, so whether the source moved is not known.
    Unknown(String),
}

impl StatusReport {
    pub fn verdict(&self) -> Verdict {
        let mut why = Vec::new();
        if !self.is_target {
            return Verdict::Behind(vec!["nothing synced yet".into()]);
        }
        if self.mode == "stream" {
            if self.stream.is_none() {
                why.push("the change stream has not started".into());
            }
            if self.stream_behind == Some(true) {
                why.push("changes wait on the source".into());
            }
        } else {
            for t in &self.tables {
                if t.watermark.is_none() {
                    why.push(format!("{} never finished a pass", t.entity));
                } else if t.pass_running {
                    why.push(format!("{} has a pass under way", t.entity));
                } else if t.behind == Some(true) {
                    why.push(format!("{} has rows written after its watermark", t.entity));
                } else if let Some(reason) = &t.delete_check_failed {
                    why.push(format!(
                        "{}: following its deletes failed: {reason}",
                        t.entity
                    ));
                } else if t.deletes_followed_until != t.watermark {
                    why.push(format!(
                        "{}: rows deleted on the source are not followed since its last pass (follow_deletes is off, or the check did not finish; `maskbus verify --repair` follows them)",
                        t.entity
                    ));
                }
            }
        }
        for c in &self.closed {
            why.push(format!("{} fails: {}", c.entity, c.reason));
        }
        for m in &self.mailboxes {
            if m.dead > 0 {
                why.push(format!("{} has {} dead letters", m.mailbox, m.dead));
            }
        }
        if !why.is_empty() {
            return Verdict::Behind(why);
        }
        if !self.producer_answered {
            return Verdict::Unknown(
                "the producer did not answer, so whether the source moved is not known".into(),
            );
        }
        Verdict::CaughtUp
    }
}

/// Reads where `config`'s target stands; asks the producer, waiting up to `wait`.
pub async fn status(
    config: &ConsumerConfig,
    wait: Duration,
) -> Result<StatusReport, ConsumerError> {
    let target = Database::parse("target", &config.target_url.0)?;
    let mut report = StatusReport {
        mode: match config.mode {
            SyncMode::Watermark => "watermark",
            SyncMode::Stream => "stream",
        },
        subset: config.subset.clone(),
        ..StatusReport::default()
    };
    let client = target.connect().await?;
    let target = &target;
    let read = |what: &'static str| move |e: tokio_postgres::Error| target.query_error(what, &e);
    report.is_target = client
        .query_one(bookkeeping::IS_TARGET, &[])
        .await
        .map_err(read("looking for the maskbus target marker"))?
        .get(0);
    let bus = Database::parse("bus", &config.bus_url.0)?;
    let mailbox = Mailbox::connect(bus, Settings::default()).await?;
    // The consumer's mailboxes (replies to a verify killed midway wait in its own) and the
    // producer's.
    let mut ours = maskbus_config::consumer_mailboxes(&config.mailbox).to_vec();
    ours.push(config.producer_mailbox.clone());
    report.mailboxes = mailbox
        .stats()
        .await?
        .into_iter()
        .filter(|m: &MailboxStats| ours.contains(&m.mailbox))
        .map(|m| MailboxCounts {
            mailbox: m.mailbox,
            pending: m.pending,
            leased: m.leased,
            dead: m.dead,
        })
        .collect();
    report.audit = mailbox.audit_status().await.ok().map(|a| AuditState {
        stale: a.is_stale(config.audit_max_age),
        scanned_through: a.scanned_through,
        oldest_unaudited_secs: a.oldest_unaudited_secs,
        open_findings: a.open_findings,
    });
    if !report.is_target {
        return Ok(report);
    }
    // The subset the target was made with, which is what it holds whatever the config says.
    if let Some(row) = client
        .query_opt(bookkeeping::HELD_SUBSET_FOR_STATUS, &[])
        .await
        .ok()
        .flatten()
    {
        report.subset = row.get(0);
    }
    for row in client
        .query(bookkeeping::WATERMARKS_FOR_STATUS, &[])
        .await
        .map_err(read("reading maskbus.sync_state"))?
    {
        let entity: String = row.get(0);
        let count = client
            .query_one(
                &maskbus_pg::statements::count_rows(&TableRef::parse(&entity)),
                &[],
            )
            .await
            .map_err(read("counting a synced table's rows"))?;
        report.tables.push(TableStatus {
            rows: count.get(0),
            watermark: row.get(1),
            pass_running: row.get(2),
            last_moved: row.get(3),
            behind: None,
            deletes_followed_until: None,
            delete_check_failed: None,
            entity,
        });
    }
    for check in delete_checks(&client)
        .await
        .map_err(read("reading maskbus.delete_checks"))?
    {
        if let Some(table) = report.tables.iter_mut().find(|t| t.entity == check.0) {
            table.deletes_followed_until = check.1;
            table.delete_check_failed = check.2;
        }
    }
    let (_, not_created): (Vec<_>, Vec<_>) = left_out(&client)
        .await
        .map_err(read("reading maskbus.schema_state"))?
        .into_iter()
        .partition(|c| crate::schema::names_a_table(&c.entity));
    report.closed = closed_tables(&client)
        .await
        .map_err(read("reading maskbus.table_failures"))?;
    report.not_created = not_created;
    let stream = client
        .query_opt(bookkeeping::STREAM_FOR_STATUS, &[])
        .await
        .map_err(read("reading maskbus.stream_state"))?;
    let mut stream_position = None;
    if let Some(row) = &stream {
        let applied: String = row.get(0);
        stream_position = applied
            .parse()
            .ok()
            .map(|lsn| (Position(lsn), row.get::<_, Option<String>>(1)));
        report.stream = Some(StreamStatus {
            applied,
            transactions_applied: row.get(2),
            rows_applied: row.get(3),
            last_moved: row.get(4),
        });
    }
    // The producer, asked on a reply mailbox of status's own.
    let mut asking = config.clone();
    asking.mailbox = maskbus_config::status_mailbox(&config.mailbox);
    asking.request_timeout = (wait / 3).max(Duration::from_millis(200));
    let asker = Asker::new(mailbox, &asking).await?;
    match config.mode {
        SyncMode::Watermark => {
            let mut newest = None;
            for table in &mut report.tables {
                let Some(watermark) = &table.watermark else {
                    continue;
                };
                let request = Request::Page {
                    v: VERSION,
                    entity: table.entity.clone(),
                    since: Some(Snapshot(watermark.clone())),
                    until: None,
                    after: None,
                    after_tag: None,
                    through: None,
                    through_tag: None,
                    limit: 1,
                    pages: None,
                    subset: config.subset.clone(),
                };
                let Ok(replies) = asker.ask(&request).await else {
                    break;
                };
                if let Some(ReceivedReply::Page(page)) = replies.first() {
                    report.producer_answered = true;
                    table.behind = Some(!page.rows.is_empty());
                    newest = page.until.clone().or(newest);
                }
            }
            let oldest = report
                .tables
                .iter()
                .filter_map(|t| Some(Snapshot(t.watermark.clone()?).bounds()?.1))
                .min();
            if let (Some((_, now)), Some(oldest)) = (newest.and_then(|s| s.bounds()), oldest) {
                report.xids_since_watermark = Some(now.saturating_sub(oldest));
            }
        }
        SyncMode::Stream => {
            if let Some((after, join)) = stream_position {
                let request = Request::Changes {
                    v: VERSION,
                    after: Some(after),
                    join: join.map(Snapshot),
                    limit: 1,
                    wait_ms: None,
                    patience_ms: Some(crate::client::patience_ms(asking.request_timeout)),
                };
                if let Ok(replies) = asker.ask(&request).await {
                    let answered: Vec<_> = replies
                        .iter()
                        .filter_map(|r| match r {
                            ReceivedReply::Changes(c) => Some(c),
                            _ => None,
                        })
                        .collect();
                    if !answered.is_empty() {
                        report.producer_answered = true;
                        report.stream_behind =
                            Some(answered.iter().any(|c| c.op != ChangeOp::None));
                    }
                }
            }
        }
    }
    Ok(report)
}

/// The tables that fail closed (see `crate::schema`), and those the last pass could not sync
/// (a page the producer refused, its egress guard's refusal among them), from the target's
/// bookkeeping.
pub async fn closed_tables(
    client: &tokio_postgres::Client,
) -> Result<Vec<ClosedTable>, tokio_postgres::Error> {
    let mut all = left_out(client).await?;
    all.retain(|c| crate::schema::names_a_table(&c.entity));
    let failing = match client.query(bookkeeping::TABLE_FAILURES, &[]).await {
        Ok(rows) => rows,
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Vec::new(),
        Err(e) => return Err(e),
    };
    for row in failing {
        let entity: String = row.get(0);
        if !all.iter().any(|c| c.entity == entity) {
            all.push(ClosedTable {
                entity,
                reason: row.get(1),
            });
        }
    }
    Ok(all)
}

/// Each table's last delete check, from the target's bookkeeping: entity, the watermark it
/// followed the deletes up to, why it failed. None on a target made before the checks were
/// recorded.
async fn delete_checks(
    client: &tokio_postgres::Client,
) -> Result<Vec<(String, Option<String>, Option<String>)>, tokio_postgres::Error> {
    match client
        .query(bookkeeping::DELETE_CHECKS_FOR_STATUS, &[])
        .await
    {
        Ok(rows) => Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

/// Everything the target's bookkeeping says was left out: tables that fail closed, and the
/// objects not created (keyed `extension ...` or `dropped ...`).
async fn left_out(
    client: &tokio_postgres::Client,
) -> Result<Vec<ClosedTable>, tokio_postgres::Error> {
    let rows = client.query(bookkeeping::CLOSED_TABLES, &[]).await;
    let rows = match rows {
        Ok(rows) => rows,
        // A target migrated before schemas were followed has no such table.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(e),
    };
    Ok(rows
        .iter()
        .map(|r| ClosedTable {
            entity: r.get(0),
            reason: r.get(1),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caught_up() -> StatusReport {
        StatusReport {
            is_target: true,
            mode: "watermark",
            tables: vec![TableStatus {
                entity: "public.customers".into(),
                rows: 3,
                watermark: Some("10:12:".into()),
                behind: Some(false),
                deletes_followed_until: Some("10:12:".into()),
                ..TableStatus::default()
            }],
            producer_answered: true,
            ..StatusReport::default()
        }
    }

    #[test]
    fn caught_up_only_when_every_table_is_and_the_producer_says_so() {
        assert_eq!(caught_up().verdict(), Verdict::CaughtUp);
        let mut behind = caught_up();
        behind.tables[0].behind = Some(true);
        assert!(
            matches!(behind.verdict(), Verdict::Behind(why) if why[0].contains("after its watermark"))
        );
        let mut running = caught_up();
        running.tables[0].pass_running = true;
        assert!(matches!(running.verdict(), Verdict::Behind(_)));
        let mut silent = caught_up();
        silent.producer_answered = false;
        silent.tables[0].behind = None;
        assert!(matches!(silent.verdict(), Verdict::Unknown(_)));
        let mut dead = caught_up();
        dead.mailboxes.push(MailboxCounts {
            mailbox: "maskbus.consumer".into(),
            dead: 2,
            ..MailboxCounts::default()
        });
        assert!(
            matches!(dead.verdict(), Verdict::Behind(why) if why[0].contains("2 dead letters"))
        );
        assert!(matches!(
            StatusReport::default().verdict(),
            Verdict::Behind(_)
        ));
    }

    #[test]
    fn caught_up_only_when_deletes_are_followed_up_to_each_watermark() {
        let mut unchecked = caught_up();
        unchecked.tables[0].deletes_followed_until = Some("8:9:".into());
        assert!(
            matches!(unchecked.verdict(), Verdict::Behind(why) if why[0].contains("rows deleted on the source"))
        );
        let mut never = caught_up();
        never.tables[0].deletes_followed_until = None;
        assert!(matches!(never.verdict(), Verdict::Behind(_)));
        let mut failed = caught_up();
        failed.tables[0].delete_check_failed = Some("its comparison failed".into());
        assert!(
            matches!(failed.verdict(), Verdict::Behind(why) if why[0].contains("following its deletes failed"))
        );
        let mut stream = caught_up();
        stream.mode = "stream";
        stream.tables[0].deletes_followed_until = None;
        stream.stream = Some(StreamStatus {
            applied: "0/1".into(),
            transactions_applied: 0,
            rows_applied: 0,
            last_moved: String::new(),
        });
        stream.stream_behind = Some(false);
        assert_eq!(stream.verdict(), Verdict::CaughtUp);
    }
}
