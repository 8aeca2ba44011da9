//! How a producer starts from its config: the policy (with its key), checked against the source
//! before anything is served; the subsets; the read-only source; the change feed; the bus.

use crate::changes::{self, ChangeFeed, SlotError};
use crate::serve::Producer;
use crate::source::Source;
use crate::subset::{self, SubsetFile, SubsetFileError};
use maskbus_config::ProducerConfig;
use maskbus_mailbox::{Mailbox, MailboxError, Settings};
use maskbus_mask::fit::Verdict;
use maskbus_pg::{Database, PgError, Retry};
use maskbus_policy::PolicyLoadError;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The producer's connections to the source: requests are answered side by side (the page
/// streams of a table read in ranges, several consumers), each with its next answer prepared.
const SOURCE_CONNECTIONS: usize = 8;

/// The largest request body the producer reads; a bigger one is dead-lettered unparsed. It
/// holds a key cursor of `protocol::MAX_KEY_VALUE_BYTES` even if every byte is escaped.
pub const MAX_REQUEST_BYTES: usize = 8 << 20;

/// Why a producer could not start (the CLI adds which config).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Policy(#[from] PolicyLoadError),
    #[error("policy {policy} uses keyed pseudonyms, but no pseudonym key is configured; set pseudonym_key in the producer config or MASKBUS_PSEUDONYM_KEY (`maskbus key new` makes one)")]
    NoKey { policy: String },
    #[error("policy {policy} does not fit the source ({count} errors; `maskbus policy check` shows them all): {first}")]
    Unfit {
        policy: String,
        count: usize,
        first: String,
    },
    #[error("the reviewed-columns file {file}: {reason}")]
    Reviewed { file: String, reason: String },
    #[error(transparent)]
    Subsets(#[from] SubsetFileError),
    #[error("the subsets file does not fit the source ({count} problems; `maskbus subset plan` shows them): {first}")]
    UnfitSubsets { count: usize, first: String },
    #[error("config: {0}")]
    Slot(SlotError),
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
}

/// The first three of `items`, joined, for an error that counts them all.
fn first_three(items: &[String]) -> String {
    items.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
}

/// The egress guard every masker of the producer runs ([`maskbus_mask::egress`]): the audit's
/// detectors, the reviewed columns, and the real values of the masked columns as keyed hashes,
/// loaded before anything is served.
async fn guard(
    config: &ProducerConfig,
    source: &Database,
    policy: &maskbus_mask::Policy,
) -> Result<maskbus_mask::egress::Guard, StartError> {
    let mut guard = maskbus_mask::egress::Guard::default();
    if let Some(path) = &config.reviewed_columns {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| StartError::Reviewed {
            file: file.clone(),
            reason: format!("cannot read it: {e}"),
        })?;
        let reviewed =
            maskbus_mask::egress::Reviewed::parse(&text).map_err(|e| StartError::Reviewed {
                file,
                reason: e.to_string(),
            })?;
        guard = guard.with_reviewed(reviewed);
    }
    if config.guard_values > 0 {
        let started = std::time::Instant::now();
        let (matcher, stats) = maskbus_policy::real_values::load(
            source,
            policy,
            maskbus_policy::real_values::Columns::Masked,
            guard.reviewed().columns(),
            config.guard_values as usize,
            maskbus_policy::real_values::random_key(),
        )
        .await?;
        if stats.over_cap > 0 {
            tracing::warn!(held = stats.loaded, tables_not_whole = stats.over_cap, "the egress guard holds guard_values real values and stopped loading there: the values of the tables past it are not matched (raise guard_values; the detectors still read every value)");
        }
        tracing::info!(
            columns = stats.columns,
            values = stats.loaded,
            seconds = started.elapsed().as_secs_f64(),
            "the egress guard matches what leaves against the masked columns' real values"
        );
        guard = guard.with_exact(Arc::new(matcher));
    }
    Ok(guard)
}

impl Producer {
    /// Starts the producer's parts: the policy (with its key), the read-only source, the bus.
    pub async fn start(config: &ProducerConfig) -> Result<Producer, StartError> {
        let policy = maskbus_policy::load(
            &config.policy,
            config.pseudonym_key.as_ref().map(|k| k.0.as_str()),
        )?;
        if policy.needs_key() && !policy.has_key() {
            return Err(StartError::NoKey {
                policy: policy.name().to_string(),
            });
        }
        let source_target = Database::parse("source", &config.source_url.0)?;
        let bus = Database::parse("bus", &config.bus_url.0)?;
        // The same promise as `maskbus policy check`: a policy that does not fit the source is
        // refused before anything is served. A table that does not fit (a migration added a
        // column without a rule, say) is refused by name when asked for, and the others are
        // served: only a policy that fits no table at all is refused here.
        let lines = maskbus_policy::check(&source_target, &policy).await?;
        let mut errors = Vec::new();
        let mut reasons: HashMap<String, String> = HashMap::new();
        for line in &lines {
            if let Verdict::Error(e) = &line.verdict {
                errors.push(format!("{}.{}: {e}", line.entity, line.column));
                reasons
                    .entry(line.entity.clone())
                    .or_insert_with(|| format!("{}: {e}", line.column));
            }
        }
        let unfit: BTreeSet<&str> = reasons.keys().map(String::as_str).collect();
        if policy.entities().any(|(e, _)| !unfit.contains(e)) {
            for error in &errors {
                tracing::error!(%error, "this table does not fit the policy: it is refused by name, the others are served (`maskbus policy check` shows every error)");
            }
        } else if !errors.is_empty() {
            return Err(StartError::Unfit {
                policy: policy.name().to_string(),
                count: errors.len(),
                first: first_three(&errors),
            });
        }
        let guard = guard(config, &source_target, &policy).await?;
        let policy = policy.with_guard(guard);
        // Subsets, when defined: each planned and its conditions planned by the server, before
        // anything is served.
        let subsets = match &config.subsets {
            None => None,
            Some(path) => {
                let file = SubsetFile::load(path)?;
                let problems = subset::check(&source_target, &policy, &file).await?;
                if !problems.is_empty() {
                    return Err(StartError::UnfitSubsets {
                        count: problems.len(),
                        first: first_three(&problems),
                    });
                }
                Some(file)
            }
        };
        let mut source =
            Source::new(source_target, Arc::new(policy), SOURCE_CONNECTIONS)?.with_unfit(reasons);
        if let Some(file) = subsets {
            source = source.with_subsets(file);
        }
        let source = Arc::new(source);
        // Fail fast on a source that is wrong or down; wait for one that is restarting (it says
        // so: shutting down, or not accepting connections yet).
        let mut restarting = Retry::transient();
        loop {
            match source.ping().await {
                Err(PgError::Query {
                    sqlstate: Some(code),
                    ..
                }) if matches!(code.as_str(), "57P01" | "57P02" | "57P03")
                    && restarting.pause().await => {}
                result => break result?,
            }
        }
        let feed = match &config.slot {
            Some(name) => {
                let mut feed = ChangeFeed::new(name, Arc::clone(&source))
                    .map_err(StartError::Slot)?
                    .streaming(config.stream_while_written);
                if let Some(publication) = &config.publication {
                    feed = feed
                        .with_publication(publication)
                        .map_err(StartError::Slot)?;
                    tracing::info!(%publication, "the change stream reads a publication made by a DBA: the producer never creates, alters or drops it");
                }
                // The publication follows the policy's tables (a DBA's is only compared): what
                // it lacks is said now, and fails closed in stream mode.
                if let Err(refusal) = feed.follow_policy().await {
                    tracing::warn!(%refusal, "could not compare the stream's publication with the policy's tables");
                }
                Some(Arc::new(feed))
            }
            None => None,
        };
        // Slots hold WAL on production for as long as they exist: say so loudly at every start.
        match changes::slot_report(source.database(), config.slot.as_deref()).await {
            Ok(report) => changes::log_slot_report(&report),
            Err(e) => tracing::warn!(error = %e, "could not list the source's replication slots"),
        }
        // Requests are small: anything larger is refused by size before it is parsed.
        let settings = Settings {
            max_body_bytes: MAX_REQUEST_BYTES,
            ..Settings::default()
        };
        let mailbox = Mailbox::connect(bus, settings).await?;
        Ok(Producer::new(source, Arc::new(mailbox), config.mailbox.clone()).with_feed(feed))
    }
}
