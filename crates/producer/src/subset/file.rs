//! The subsets file: named subsets and virtual foreign keys, read and checked for shape (the
//! schema is checked against the live source in `run.rs`).

use maskbus_pg::{ForeignKey, TableRef};
use maskbus_protocol::is_plain_name as plain;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What becomes of the policy's tables that the closure never reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outside {
    /// Left empty in the target.
    #[default]
    Empty,
    /// Copied whole (lookup tables nothing in the subset references, say).
    Whole,
}

/// One named subset.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubsetDef {
    /// Root table → SQL boolean expression over its columns.
    #[serde(default, rename = "where")]
    pub condition: BTreeMap<String, String>,
    /// Root table → fraction of its rows (0 to 1), chosen by a keyed hash of the key.
    #[serde(default)]
    pub fraction: BTreeMap<String, f64>,
    /// The key of the fraction's hash: the same seed picks the same rows every run.
    #[serde(default)]
    pub seed: Option<String>,
    /// The foreign keys (constraint names, or virtual foreign key names) followed from parent
    /// to child; without it, every foreign key below a root.
    #[serde(default)]
    pub follow_down: Option<Vec<String>>,
    #[serde(default)]
    pub outside: Outside,
}

/// A foreign key the schema lacks, declared for the closure.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VirtualForeignKey {
    pub name: String,
    pub table: String,
    pub columns: Vec<String>,
    pub parent: String,
    pub parent_columns: Vec<String>,
}

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubsetFile {
    #[serde(default)]
    pub subsets: BTreeMap<String, SubsetDef>,
    #[serde(default)]
    pub virtual_foreign_keys: Vec<VirtualForeignKey>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SubsetFileError {
    #[error("cannot read subsets file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("subsets file {path}: {reason}")]
    Invalid { path: String, reason: String },
}

impl SubsetFile {
    pub fn load(path: &std::path::Path) -> Result<Self, SubsetFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| SubsetFileError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    pub fn parse(origin: &str, text: &str) -> Result<Self, SubsetFileError> {
        let invalid = |reason: String| SubsetFileError::Invalid {
            path: origin.to_string(),
            reason,
        };
        let file: SubsetFile = toml::from_str(text)
            .map_err(|e| invalid(maskbus_model::locate_in_text(text, e.span(), e.message())))?;
        for (name, def) in &file.subsets {
            if !plain(name) {
                return Err(invalid(format!(
                    "subset name {:?}: use letters, digits, _ and - (at most 63)",
                    maskbus_pg::excerpt(name, 64)
                )));
            }
            if def.condition.is_empty() && def.fraction.is_empty() {
                return Err(invalid(format!(
                    "subset {name} has no root: give `where = {{ table = \"condition\" }}` or `fraction = {{ table = 0.01 }}`"
                )));
            }
            if let Some(table) = def.condition.keys().find(|t| def.fraction.contains_key(*t)) {
                return Err(invalid(format!(
                    "subset {name}: {table} has both a condition and a fraction; give one"
                )));
            }
            if let Some((table, f)) = def.fraction.iter().find(|(_, f)| !(0.0..=1.0).contains(*f)) {
                return Err(invalid(format!(
                    "subset {name}: the fraction of {table} is {f}; give a number from 0 to 1"
                )));
            }
            if let Some(condition) = def.condition.values().find(|c| c.contains(';')) {
                return Err(invalid(format!(
                    "subset {name}: a condition is one SQL expression, without `;`: {:?}",
                    maskbus_pg::excerpt(condition, 60)
                )));
            }
            if def.seed.as_deref().is_some_and(|s| !plain(s)) {
                return Err(invalid(format!(
                    "subset {name}: seed: use letters, digits, _ and - (at most 63)"
                )));
            }
        }
        for fk in &file.virtual_foreign_keys {
            if !plain(&fk.name)
                || fk.columns.is_empty()
                || fk.columns.len() != fk.parent_columns.len()
            {
                return Err(invalid(format!(
                    "virtual foreign key {:?}: a plain name, and as many columns as parent_columns (at least one)",
                    maskbus_pg::excerpt(&fk.name, 64)
                )));
            }
        }
        Ok(file)
    }

    /// The subsets' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.subsets.keys().cloned().collect()
    }

    /// The virtual foreign keys in the catalog's model.
    pub fn foreign_keys(&self) -> Vec<ForeignKey> {
        self.virtual_foreign_keys
            .iter()
            .map(|fk| ForeignKey {
                name: fk.name.clone(),
                table: TableRef::parse(&maskbus_mask::qualify(&fk.table)),
                columns: fk.columns.clone(),
                parent: TableRef::parse(&maskbus_mask::qualify(&fk.parent)),
                parent_columns: fk.parent_columns.clone(),
                nullable: true,
                deferrable: false,
            })
            .collect()
    }
}
