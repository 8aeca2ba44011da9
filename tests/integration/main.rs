//! End-to-end tests of maskbus against a real Postgres (the cluster named by DATABASE_URL, which
//! scripts/test starts). Every test creates its own databases and drops them when it ends, so the
//! tests run in parallel and leave nothing behind.

mod support;

mod architecture;
mod audit;
mod audit_independence;
mod bulk;
mod changes;
mod constraints_check;
mod cursors;
mod deletes;
mod depth;
mod dev_db;
mod docs;
mod edges;
mod egress;
mod foundation;
mod keyless;
mod mailbox;
mod masked_keys;
mod masking;
mod mcp;
mod migrations;
mod newcomer;
mod operations;
mod ownership;
mod policy_recall;
mod ranges;
mod readme;
mod roles;
mod rule_fit;
mod scale;
mod schema;
mod side_doors;
mod stream;
mod stream_follow;
mod subset;
mod subset_oracle;
mod sync;
mod triage_keys;
mod trust;
mod zoo;
