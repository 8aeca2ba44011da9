//! The auditor's reads of the bus: the horizon, every message up to it (streamed), the design's
//! SQL one-liner, and the watermark that lets purge delete what was scanned. The auditor role
//! alone may do these (`crates/mailbox/sql/0003_authenticated_mailboxes.sql`).

use maskbus_pg::{Database, PgError};
use tokio_postgres::Client;

/// The design's one-liner, over every table that holds messages.
pub const SQL_ONE_LINER: &str = "SELECT count(*) FROM (
        SELECT body FROM mq.messages UNION ALL SELECT body FROM mq.archive UNION ALL SELECT body FROM mq.dead_letters
    ) m WHERE body::text ~ '[0-9]{3}-[0-9]{2}-[0-9]{4}' OR body::text ~ '[0-9]{16}'";

/// One message as the audit reads it.
#[derive(Clone, Debug)]
pub struct AuditedMessage {
    pub id: i64,
    /// pending (includes leased and delayed), archived or dead
    pub table: &'static str,
    pub mailbox: String,
    pub body: String,
}

/// Messages handed from the reading task to the scanner at a time.
pub const BATCH: usize = 500;

/// The id below which every message ever sent is committed or rolled back.
pub async fn horizon(bus: &Database, client: &Client) -> Result<i64, PgError> {
    Ok(client
        .query_one("SELECT mq.audit_horizon()", &[])
        .await
        .map_err(|e| {
            bus.query_error(
                "taking the audit horizon (is this a maskbus bus, and this role its auditor? run `maskbus bus init` and `maskbus bus grant --auditor ROLE`)",
                &e,
            )
        })?
        .get(0))
}

/// How many messages there are up to `horizon`, in all three tables.
pub async fn count_through(bus: &Database, client: &Client, horizon: i64) -> Result<i64, PgError> {
    Ok(client
        .query_one(
            "SELECT (SELECT count(*) FROM mq.messages WHERE id <= $1) + (SELECT count(*) FROM mq.archive WHERE id <= $1)
                  + (SELECT count(*) FROM mq.dead_letters WHERE id <= $1)",
            &[&horizon],
        )
        .await
        .map_err(|e| bus.query_error("counting messages", &e))?
        .get(0))
}

/// The design's one-liner: messages whose text matches an SSN or a 16-digit run.
pub async fn sql_one_liner(bus: &Database, client: &Client) -> Result<i64, PgError> {
    Ok(client
        .query_one(SQL_ONE_LINER, &[])
        .await
        .map_err(|e| bus.query_error("running the SQL one-liner", &e))?
        .get(0))
}

/// Records that an audit has scanned every message with id up to `scanned_through`.
pub async fn record(bus: &Database, client: &Client, scanned_through: i64) -> Result<(), PgError> {
    client
        .execute("SELECT mq.record_audit($1)", &[&scanned_through])
        .await
        .map_err(|e| bus.query_error("recording the audit watermark", &e))?;
    Ok(())
}

/// Every message up to the horizon, from all three tables, in one streamed query on its own
/// connection: rows arrive as the server produces them and are handed on in batches, so memory
/// holds a batch or two whatever the size of the bus. Order does not matter to the audit.
pub async fn stream_through(
    bus: Database,
    horizon: i64,
    batches: tokio::sync::mpsc::Sender<Result<Vec<AuditedMessage>, PgError>>,
) {
    use futures_util::StreamExt;
    let client = match bus.connect().await {
        Ok(client) => client,
        Err(e) => {
            let _ = batches.send(Err(e)).await;
            return;
        }
    };
    let rows = client
        .query_raw(
            "SELECT id, 0, mailbox, body::text FROM mq.messages WHERE id <= $1
             UNION ALL SELECT id, 1, mailbox, body::text FROM mq.archive WHERE id <= $1
             UNION ALL SELECT id, 2, mailbox, body::text FROM mq.dead_letters WHERE id <= $1",
            [horizon],
        )
        .await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            let _ = batches
                .send(Err(bus.query_error("reading messages for the audit", &e)))
                .await;
            return;
        }
    };
    futures_util::pin_mut!(rows);
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(row) = rows.next().await {
        let message = row.and_then(|row| {
            Ok(AuditedMessage {
                id: row.try_get(0)?,
                table: match row.try_get::<_, i32>(1)? {
                    0 => "pending",
                    1 => "archived",
                    _ => "dead",
                },
                mailbox: row.try_get(2)?,
                body: row.try_get(3)?,
            })
        });
        match message {
            Ok(message) => batch.push(message),
            Err(e) => {
                let _ = batches
                    .send(Err(bus.query_error("reading messages for the audit", &e)))
                    .await;
                return;
            }
        }
        if batch.len() == BATCH
            && batches
                .send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH))))
                .await
                .is_err()
        {
            return;
        }
    }
    if !batch.is_empty() {
        let _ = batches.send(Ok(batch)).await;
    }
}

/// One finding as the bus records it: where, by which detector; never the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedFinding {
    pub id: i64,
    pub message_id: i64,
    pub detector: String,
    pub path: String,
    pub acked: bool,
}

/// A finding to record: message, mailbox, detector, path.
pub struct NewFinding<'a> {
    pub message_id: i64,
    pub mailbox: &'a str,
    pub detector: &'a str,
    pub path: &'a str,
}

/// Records `findings` (each once: the same message, detector and path are one finding) and
/// returns every one with its id and whether an auditor acknowledged it.
pub async fn record_findings(
    bus: &Database,
    client: &Client,
    findings: &[NewFinding<'_>],
) -> Result<Vec<RecordedFinding>, PgError> {
    let mut recorded = Vec::with_capacity(findings.len());
    for chunk in findings.chunks(1000) {
        let ids: Vec<i64> = chunk.iter().map(|f| f.message_id).collect();
        let mailboxes: Vec<&str> = chunk.iter().map(|f| f.mailbox).collect();
        let detectors: Vec<&str> = chunk.iter().map(|f| f.detector).collect();
        let paths: Vec<&str> = chunk.iter().map(|f| f.path).collect();
        let rows = client
            .query(
                "SELECT id, message_id, detector, path, acked FROM mq.record_findings($1, $2, $3, $4)",
                &[&ids, &mailboxes, &detectors, &paths],
            )
            .await
            .map_err(|e| bus.query_error("recording the audit's findings", &e))?;
        recorded.extend(rows.iter().map(|r| RecordedFinding {
            id: r.get(0),
            message_id: r.get(1),
            detector: r.get(2),
            path: r.get(3),
            acked: r.get(4),
        }));
    }
    recorded.sort_by_key(|f| f.id);
    recorded.dedup_by_key(|f| f.id);
    Ok(recorded)
}

/// Acknowledges finding `id` with `reason`: false when there is no such open finding.
pub async fn ack_finding(
    bus: &Database,
    client: &Client,
    id: i64,
    reason: &str,
) -> Result<bool, PgError> {
    Ok(client
        .query_one("SELECT mq.ack_finding($1, $2)", &[&id, &reason])
        .await
        .map_err(|e| bus.query_error(format!("acknowledging finding {id}"), &e))?
        .get(0))
}

/// Acknowledges every open finding of `ids` with one `reason`, in one statement: the ids
/// acknowledged, in order (an id that is no open finding is left out).
pub async fn ack_findings(
    bus: &Database,
    client: &Client,
    ids: &[i64],
    reason: &str,
) -> Result<Vec<i64>, PgError> {
    let rows = client
        .query("SELECT mq.ack_findings($1, $2)", &[&ids, &reason])
        .await
        .map_err(|e| bus.query_error(format!("acknowledging {} findings", ids.len()), &e))?;
    let mut acked: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    acked.sort_unstable();
    Ok(acked)
}

/// The entity and the columns of each page reply among `message_ids` (pending, archived or
/// dead), read from the bodies by the server: what an acknowledgement by column resolves a
/// finding's `$.rows[R][C]` with. A message that is no page (or no JSON at all: the bus keeps
/// bodies as text), or is gone, is left out. One statement a message, so one body that does
/// not parse spoils nothing else.
pub async fn page_columns(
    bus: &Database,
    client: &Client,
    message_ids: &[i64],
) -> Result<Vec<(i64, String, Vec<String>)>, PgError> {
    let statement = client
        .prepare(
            "WITH j AS (SELECT body::json AS doc FROM mq.mail WHERE id = $1
                        UNION ALL SELECT body::json FROM mq.dead_letters WHERE id = $1)
             SELECT doc ->> 'entity', ARRAY(SELECT pg_catalog.json_array_elements_text(doc -> 'columns'))
               FROM j WHERE pg_catalog.json_typeof(doc) = 'object' AND pg_catalog.json_typeof(doc -> 'columns') = 'array'
                AND doc ->> 'entity' IS NOT NULL",
        )
        .await
        .map_err(|e| bus.query_error("reading the columns of the findings' pages", &e))?;
    let mut pages = Vec::new();
    for &id in message_ids {
        match client.query_opt(&statement, &[&id]).await {
            Ok(Some(row)) => pages.push((id, row.get(0), row.get(1))),
            Ok(None) => {}
            // Not JSON (data exception), or nested past the server's stack: no page.
            Err(e)
                if e.code()
                    .is_some_and(|c| c.code().starts_with("22") || c.code() == "54001") => {}
            Err(e) => return Err(bus.query_error("reading the columns of the findings' pages", &e)),
        }
    }
    Ok(pages)
}

/// One finding as the auditor lists it.
#[derive(Clone, Debug)]
pub struct ListedFinding {
    pub id: i64,
    pub message_id: i64,
    pub mailbox: String,
    pub detector: String,
    pub path: String,
    pub acked_by: Option<String>,
    pub ack_reason: Option<String>,
}

/// Every finding recorded, open ones first.
pub async fn list_findings(bus: &Database, client: &Client) -> Result<Vec<ListedFinding>, PgError> {
    let rows = client
        .query(
            "SELECT id, message_id, mailbox, detector, path, acked_by::text, ack_reason FROM mq.audit_findings_list()",
            &[],
        )
        .await
        .map_err(|e| bus.query_error("listing the audit's findings", &e))?;
    Ok(rows
        .iter()
        .map(|r| ListedFinding {
            id: r.get(0),
            message_id: r.get(1),
            mailbox: r.get(2),
            detector: r.get(3),
            path: r.get(4),
            acked_by: r.get(5),
            ack_reason: r.get(6),
        })
        .collect())
}
