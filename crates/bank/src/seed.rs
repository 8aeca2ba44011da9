//! Streams generated bank rows into the source database with COPY, in one transaction.
//!
//! One transaction means a crash or an error leaves the database as it was: never half a bank.
//! Rows go out in chunks as they are generated, so memory holds only the parents' summaries, not
//! the million transactions of the large profile.

use crate::generate::{self, AccountSummary, CustomerSummary};
use crate::Profile;
use bytes::Bytes;
use futures_util::SinkExt;
use maskbus_pg::bulk::{copy_row, Lifted};
use maskbus_pg::tokio_postgres::Transaction;
use maskbus_pg::{Database, PgError, TableRef};
use std::time::{Duration, Instant};

/// Flush a COPY chunk to the server once it holds this many bytes.
const CHUNK_BYTES: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub struct SeedOptions {
    pub profile: Profile,
    pub seed: u64,
    /// Add to existing data instead of refusing a non-empty database.
    pub append: bool,
    /// Empty the bank tables first (TRUNCATE ... RESTART IDENTITY).
    pub reset: bool,
}

/// Progress, reported to whoever drives the seeder (the CLI draws bars from these).
#[derive(Clone, Copy, Debug)]
pub enum SeedEvent {
    TableStarted { table: &'static str, rows: u64 },
    RowsWritten { table: &'static str, rows: u64 },
    TableFinished { table: &'static str, rows: u64 },
}

#[derive(Clone, Debug, Default)]
pub struct SeedReport {
    /// Rows written per table, parents first.
    pub rows: Vec<(&'static str, u64)>,
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error("the source database {database} has no bank schema (table customers is missing); run `maskbus bank init --source URL` first")]
    NoSchema { database: String },
    #[error("the source database {database} already holds {customers} customers; pass --reset to replace them or --append to add more")]
    NotEmpty { database: String, customers: i64 },
}

/// The first free id of each table, so an append run continues where the data ends.
#[derive(Clone, Copy, Debug)]
struct FirstIds {
    customers: i64,
    addresses: i64,
    accounts: i64,
    cards: i64,
    transactions: i64,
}

/// Fills the bank tables of `source`. `on_event` is called as rows are written.
pub async fn seed(
    source: &Database,
    options: &SeedOptions,
    on_event: &mut (dyn FnMut(SeedEvent) + Send),
) -> Result<SeedReport, SeedError> {
    let started = Instant::now();
    let mut client = source.connect().await?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| source.query_error("BEGIN", &e))?;
    let has_schema: bool = tx
        .query_one("SELECT to_regclass('public.customers') IS NOT NULL", &[])
        .await
        .map_err(|e| source.query_error("looking for the bank schema", &e))?
        .get(0);
    if !has_schema {
        return Err(SeedError::NoSchema {
            database: source.endpoint().to_string(),
        });
    }
    if options.reset {
        tx.batch_execute(
            "TRUNCATE customers, addresses, accounts, cards, transactions RESTART IDENTITY",
        )
        .await
        .map_err(|e| source.query_error("TRUNCATE of the bank tables", &e))?;
    }
    let existing: i64 = tx
        .query_one("SELECT count(*) FROM customers", &[])
        .await
        .map_err(|e| source.query_error("counting customers", &e))?
        .get(0);
    if existing > 0 && !options.append {
        return Err(SeedError::NotEmpty {
            database: source.endpoint().to_string(),
            customers: existing,
        });
    }
    let first = first_ids(&tx, source).await?;
    // Loading into empty tables: checking two foreign keys and updating three indexes per row
    // costs the server ten times what the load itself does. Lift them for the load and put the
    // same definitions back before COMMIT, which checks every key once, in bulk.
    let lifted = if existing == 0 {
        Some(lift_constraints(&tx, source).await?)
    } else {
        None
    };
    let seed = options.seed;
    let mut report = SeedReport::default();

    // Customers, keeping what their children need.
    let customer_count = options.profile.customers;
    let mut customers = Vec::with_capacity(customer_count as usize);
    let rows = copy_rows(&tx, source, "customers",
        "COPY customers (id, first_name, last_name, email, ssn, date_of_birth, phone, created_at) FROM STDIN",
        customer_count,
        generate::customers(seed, first.customers, customer_count).map(|c| {
            customers.push(CustomerSummary { id: c.id, created_at: c.created_at });
            let mut buf = Vec::with_capacity(160);
            copy_row(&mut buf, &[
                Some(&c.id.to_string()), Some(&c.first_name), Some(&c.last_name), Some(&c.email),
                Some(&c.ssn), Some(&c.date_of_birth.to_string()), c.phone.as_deref(),
                Some(&c.created_at.to_rfc3339()),
            ]);
            buf
        }),
        on_event,
    ).await?;
    report.rows.push(("customers", rows));

    let rows = copy_rows(
        &tx,
        source,
        "addresses",
        "COPY addresses (id, customer_id, street, city, state, zip) FROM STDIN",
        customers.len() as u64,
        generate::addresses(seed, first.addresses, &customers).map(|a| {
            let mut buf = Vec::with_capacity(96);
            copy_row(
                &mut buf,
                &[
                    Some(&a.id.to_string()),
                    Some(&a.customer_id.to_string()),
                    Some(&a.street),
                    Some(&a.city),
                    Some(&a.state),
                    Some(&a.zip),
                ],
            );
            buf
        }),
        on_event,
    )
    .await?;
    report.rows.push(("addresses", rows));

    // Accounts; card ids are allotted here so cards and transactions agree on them.
    let routing = generate::routing_numbers(seed);
    let mut accounts: Vec<AccountSummary> = Vec::with_capacity(customers.len() * 2);
    let mut card_rng = generate::stream(seed, "card_counts", first.cards);
    let mut next_card_id = first.cards;
    let rows = copy_rows(&tx, source, "accounts",
        "COPY accounts (id, customer_id, account_number, routing_number, account_type, balance, opened_at) FROM STDIN",
        customers.len() as u64 * 2,
        generate::accounts(seed, first.accounts, &customers, &routing).map(|a| {
            let card_count = generate::card_count(&mut card_rng, a.account_type);
            accounts.push(AccountSummary {
                id: a.id,
                account_type: a.account_type,
                opened_at: a.opened_at,
                first_card_id: next_card_id,
                card_count,
            });
            next_card_id += i64::from(card_count);
            let mut buf = Vec::with_capacity(96);
            copy_row(&mut buf, &[
                Some(&a.id.to_string()), Some(&a.customer_id.to_string()), Some(&a.account_number),
                Some(&a.routing_number), Some(a.account_type.as_str()),
                Some(&generate::cents_text(a.balance_cents)), Some(&a.opened_at.to_rfc3339()),
            ]);
            buf
        }),
        on_event,
    ).await?;
    report.rows.push(("accounts", rows));

    let card_total = (next_card_id - first.cards) as u64;
    let rows = copy_rows(
        &tx,
        source,
        "cards",
        "COPY cards (id, account_id, card_number, brand, expiry) FROM STDIN",
        card_total,
        generate::cards(seed, first.cards, &accounts).map(|c| {
            let mut buf = Vec::with_capacity(64);
            copy_row(
                &mut buf,
                &[
                    Some(&c.id.to_string()),
                    Some(&c.account_id.to_string()),
                    Some(&c.card_number),
                    Some(c.brand),
                    Some(&c.expiry.to_string()),
                ],
            );
            buf
        }),
        on_event,
    )
    .await?;
    report.rows.push(("cards", rows));

    let transaction_count = options.profile.transactions();
    let rows = copy_rows(&tx, source, "transactions",
        "COPY transactions (id, account_id, card_id, amount, posted_at, merchant, description) FROM STDIN",
        transaction_count,
        generate::transactions(seed, first.transactions, transaction_count, &accounts).map(|t| {
            let card_id = t.card_id.map(|id| id.to_string());
            let mut buf = Vec::with_capacity(128);
            copy_row(&mut buf, &[
                Some(&t.id.to_string()), Some(&t.account_id.to_string()), card_id.as_deref(),
                Some(&generate::cents_text(t.amount_cents)), Some(&t.posted_at.to_rfc3339()),
                Some(&t.merchant), Some(&t.description),
            ]);
            buf
        }),
        on_event,
    ).await?;
    report.rows.push(("transactions", rows));

    if let Some(lifted) = lifted {
        restore_constraints(&tx, source, &lifted).await?;
    }

    // The seeder chose the ids itself; move each identity sequence past them so later inserts
    // (by the application, or by `seed --append`) do not collide.
    for table in crate::TABLES {
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
            ),
            &[],
        )
        .await
        .map_err(|e| source.query_error(format!("moving the id sequence of {table}"), &e))?;
    }
    tx.commit()
        .await
        .map_err(|e| source.query_error("COMMIT of the seeded rows", &e))?;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Takes the secondary indexes and foreign keys off the bank tables for the load.
async fn lift_constraints(tx: &Transaction<'_>, source: &Database) -> Result<Vec<Lifted>, PgError> {
    let tables: Vec<TableRef> = crate::TABLES
        .iter()
        .map(|t| TableRef::new("public", *t))
        .collect();
    let lifted = maskbus_pg::bulk::liftable(source, tx, &tables).await?;
    for object in &lifted {
        tx.batch_execute(&object.drop_sql()).await.map_err(|e| {
            source.query_error(
                format!(
                    "lifting {} {} for the load",
                    object.kind.as_str(),
                    object.name
                ),
                &e,
            )
        })?;
    }
    Ok(lifted)
}

/// Rebuilds what [`lift_constraints`] took off: indexes, then foreign keys, each checked once.
async fn restore_constraints(
    tx: &Transaction<'_>,
    source: &Database,
    lifted: &[Lifted],
) -> Result<(), PgError> {
    let mut lifted = lifted.to_vec();
    lifted.sort_by_key(Lifted::restore_order);
    for object in &lifted {
        tx.batch_execute(&object.restore_batch())
            .await
            .map_err(|e| {
                source.query_error(
                    format!("restoring {} {}", object.kind.as_str(), object.name),
                    &e,
                )
            })?;
    }
    Ok(())
}

async fn first_ids(tx: &Transaction<'_>, source: &Database) -> Result<FirstIds, PgError> {
    let row = tx
        .query_one(
            "SELECT (SELECT coalesce(max(id), 0) + 1 FROM customers),
                    (SELECT coalesce(max(id), 0) + 1 FROM addresses),
                    (SELECT coalesce(max(id), 0) + 1 FROM accounts),
                    (SELECT coalesce(max(id), 0) + 1 FROM cards),
                    (SELECT coalesce(max(id), 0) + 1 FROM transactions)",
            &[],
        )
        .await
        .map_err(|e| source.query_error("reading the largest ids", &e))?;
    Ok(FirstIds {
        customers: row.get(0),
        addresses: row.get(1),
        accounts: row.get(2),
        cards: row.get(3),
        transactions: row.get(4),
    })
}

/// Runs one `COPY ... FROM STDIN`, feeding it encoded rows in chunks. `expected` only sizes the
/// progress report; the count returned is what the server says it stored.
async fn copy_rows(
    tx: &Transaction<'_>,
    source: &Database,
    table: &'static str,
    statement: &str,
    expected: u64,
    rows: impl Iterator<Item = Vec<u8>>,
    on_event: &mut (dyn FnMut(SeedEvent) + Send),
) -> Result<u64, PgError> {
    on_event(SeedEvent::TableStarted {
        table,
        rows: expected,
    });
    let sink = tx
        .copy_in::<_, Bytes>(statement)
        .await
        .map_err(|e| source.query_error(format!("COPY into {table}"), &e))?;
    futures_util::pin_mut!(sink);
    let mut chunk = Vec::with_capacity(CHUNK_BYTES + 1024);
    let mut in_chunk = 0u64;
    for row in rows {
        chunk.extend_from_slice(&row);
        in_chunk += 1;
        if chunk.len() >= CHUNK_BYTES {
            sink.send(Bytes::from(std::mem::replace(
                &mut chunk,
                Vec::with_capacity(CHUNK_BYTES + 1024),
            )))
            .await
            .map_err(|e| source.query_error(format!("COPY into {table}"), &e))?;
            on_event(SeedEvent::RowsWritten {
                table,
                rows: in_chunk,
            });
            in_chunk = 0;
        }
    }
    if !chunk.is_empty() {
        sink.send(Bytes::from(chunk))
            .await
            .map_err(|e| source.query_error(format!("COPY into {table}"), &e))?;
        on_event(SeedEvent::RowsWritten {
            table,
            rows: in_chunk,
        });
    }
    let stored = sink
        .finish()
        .await
        .map_err(|e| source.query_error(format!("COPY into {table}"), &e))?;
    on_event(SeedEvent::TableFinished {
        table,
        rows: stored,
    });
    Ok(stored)
}
