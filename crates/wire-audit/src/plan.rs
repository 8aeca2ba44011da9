//! What the wire audit looks for, decided before the scan: the detectors always; with a source,
//! the exact matcher of production's real values (the columns the policy masks, and those the
//! audit's own judgement holds personal though the policy keeps them), run on every cell, kept
//! or masked (the audit does not take the policy's word for a kept column); less the columns
//! an auditor has reviewed, which are neither read nor looked for. The CLI only gathers the
//! inputs and prints.

use crate::{kept_columns, load_source_values, masked_columns};
use maskbus_audit::{Context, ExactMatcher};
use maskbus_config::{AgentConfig, ConfigError};
use maskbus_mask::{Policy, PolicyError};
use maskbus_pg::{Database, PgError};
use maskbus_policy::PolicyLoadError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// (entity, column) pairs, each `schema.table` and a lower-case column.
type Columns = HashSet<(String, String)>;

/// What the auditor asked for (flags, environment, or the producer's config).
#[derive(Clone, Debug, Default)]
pub struct AuditInputs {
    /// The production database, whose real values are looked for as keyed hashes.
    pub source: Option<String>,
    /// The policy that says which source columns are sensitive.
    pub policy: Option<PathBuf>,
    /// The producer's config: the source, the policy and the pseudonym key, where the two
    /// above are not given.
    pub config: Option<PathBuf>,
    /// The auditor's reviewed-columns file.
    pub reviewed: Option<PathBuf>,
    /// Draw real values from the policy's masked columns only, without the audit's judgement.
    pub policy_only: bool,
}

/// Why the audit could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("--config {0} is a consumer's: the audit takes the source and policy from the producer's config")]
    ConsumerConfig(String),
    #[error("--source needs --policy (or --config with the producer's config): the policy says which source columns are sensitive")]
    NoPolicy,
    #[error(transparent)]
    Policy(#[from] PolicyLoadError),
    #[error(transparent)]
    Judgement(#[from] PolicyError),
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error("{file}: {reason}")]
    Reviewed { file: String, reason: String },
}

/// The bus a maskbus config names (`bus_url`, the producer's or the consumer's): what
/// `wire-audit --config` connects to when no `--bus` is given.
pub fn bus_url_of(config: &Path) -> Result<String, PlanError> {
    Ok(match maskbus_config::load(config)? {
        AgentConfig::Producer(producer) => producer.bus_url.0,
        AgentConfig::Consumer(consumer) => consumer.bus_url.0,
    })
}

/// The exact matcher, and the kept columns it searches for distinctive values only (every
/// other cell for every value).
struct Exact {
    matcher: ExactMatcher,
    kept: Columns,
}

/// What one audit run looks for.
pub struct AuditPlan {
    reviewed: Columns,
    exact: Option<Exact>,
    notes: Vec<String>,
}

impl AuditPlan {
    /// Reads the reviewed columns and, with a source, loads its real values.
    pub async fn prepare(inputs: &AuditInputs) -> Result<AuditPlan, PlanError> {
        let reviewed = match &inputs.reviewed {
            Some(path) => reviewed_columns(path)?,
            None => Columns::new(),
        };
        let (mut source_url, mut policy_path) = (inputs.source.clone(), inputs.policy.clone());
        let mut pseudonym_key = None;
        if let Some(path) = &inputs.config {
            match maskbus_config::load(path)? {
                AgentConfig::Producer(producer) => {
                    source_url = source_url.or(Some(producer.source_url.0));
                    policy_path = policy_path.or(Some(producer.policy));
                    pseudonym_key = producer.pseudonym_key.map(|k| k.0);
                }
                AgentConfig::Consumer(_) => {
                    return Err(PlanError::ConsumerConfig(path.display().to_string()))
                }
            }
        }
        let mut plan = AuditPlan {
            reviewed,
            exact: None,
            notes: Vec::new(),
        };
        let Some(url) = source_url else {
            return Ok(plan);
        };
        let source = Database::parse("source", &url)?;
        let policy_path = policy_path.ok_or(PlanError::NoPolicy)?;
        let policy = maskbus_policy::load(&policy_path, pseudonym_key.as_deref())?;
        // The audit's own judgement of which columns are personal: policy init's reading of the
        // source, independent of the producer's policy.
        let mut judged = if inputs.policy_only {
            Columns::new()
        } else {
            let proposal = maskbus_policy::init(&source, &policy.schemas()).await?;
            masked_columns(&Policy::from_toml("the audit's judgement", &proposal)?)
        };
        judged.retain(|pair| !plan.reviewed.contains(pair));
        let (matcher, stats) =
            load_source_values(&source, &policy, &judged, &plan.reviewed).await?;
        if !stats.kept_but_judged_personal.is_empty() {
            plan.notes.push(format!(
                "the audit's own judgement holds {} columns personal that the policy keeps, and looks for their real values too: {}",
                stats.kept_but_judged_personal.len(),
                stats.kept_but_judged_personal.join(", ")
            ));
        }
        if stats.fakes_verified == Some(false) {
            plan.notes.push(
                "warning: the policy's ssn and digits pseudonyms write fakes shaped like real values; \
                 only the pseudonym key tells them apart: audit with --config <the producer's config> to verify them"
                    .to_string(),
            );
        }
        plan.notes.push(format!(
            "exact match: {} real values from {} columns of {} held as keyed hashes, looked for in every cell, kept or masked; \
             left out {} unchanged by their rule, {} that a pseudonym could also produce, {}, \
             {} that are the name of a column or a table, {} reviewed columns",
            stats.loaded,
            stats.columns,
            source.endpoint(),
            stats.unchanged_by_rule,
            stats.possible_pseudonyms,
            too_short_words(stats.too_short),
            stats.names_of_columns,
            stats.reviewed_left_out
        ));
        plan.exact = Some(Exact {
            matcher,
            kept: kept_columns(&policy, &judged),
        });
        Ok(plan)
    }

    /// What the detectors are given.
    pub fn context(&self) -> Context<'_> {
        Context {
            exact: self.exact.as_ref().map(|e| &e.matcher),
            kept: self.exact.as_ref().map(|e| &e.kept),
            reviewed: (!self.reviewed.is_empty()).then_some(&self.reviewed),
        }
    }

    /// Whether production's real values are looked for.
    pub fn exact_match(&self) -> bool {
        self.exact.is_some()
    }

    /// What the auditor should know about the plan (never a value), a line each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// The auditor's reviewed columns: `[columns]` with `"schema.table.column" = "reason"` (a table
/// of schema public may be named without it). Every line needs a reason. The producer's egress
/// guard reads the same file the same way ([`maskbus_mask::egress::Reviewed`]).
/// The values the exact match leaves out as too common to match, in plain words: those with
/// fewer digits or letters than a match needs (a small number, a short word), dates, and
/// texts of many words.
fn too_short_words(n: usize) -> String {
    format!(
        "{n} values too common to match (fewer than {} digits or {} letters, a date, or more than {} words)",
        maskbus_audit::exact::MIN_DIGITS,
        maskbus_audit::exact::MIN_TEXT_CHARS,
        maskbus_audit::exact::MAX_WORDS
    )
}

pub fn reviewed_columns(path: &Path) -> Result<Columns, PlanError> {
    let problem = |reason: String| PlanError::Reviewed {
        file: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| problem(format!("cannot read the reviewed columns: {e}")))?;
    let reviewed =
        maskbus_mask::egress::Reviewed::parse(&text).map_err(|e| problem(e.to_string()))?;
    Ok(reviewed.columns().clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_left_out_as_too_common_are_said_in_plain_words() {
        assert_eq!(
            super::too_short_words(85),
            "85 values too common to match (fewer than 6 digits or 4 letters, a date, or more than 8 words)"
        );
    }
}
