//! Every exit code of `maskbus`, defined once: commands return an [`Exit`], scripts and CI test
//! the number, and docs/commands.md lists them from [`Exit::ALL`] (generated, checked by a test).

use std::process::ExitCode;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Done, nothing to report.
    Ok = 0,
    /// The check found something: policy check's errors, the wire audit's open findings.
    Findings = 1,
    /// The command failed (a bad argument or config, a database that cannot be reached); the
    /// error is on stderr.
    Failed = 2,
    /// A sync ran, but some tables could not be synced (each named on stderr).
    Partial = 3,
    /// Verify found the target differs from the masked source.
    Drift = 4,
    /// `slot list`: a maskbus slot no producer is reading keeps WAL on production.
    AbandonedSlot = 5,
    /// `status`: the target is behind the source.
    Behind = 6,
    /// `status`: whether the target is behind cannot be told (the producer did not answer).
    Unknown = 7,
}

impl Exit {
    pub const ALL: [Exit; 8] = [
        Exit::Ok,
        Exit::Findings,
        Exit::Failed,
        Exit::Partial,
        Exit::Drift,
        Exit::AbandonedSlot,
        Exit::Behind,
        Exit::Unknown,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    /// [`Exit::Findings`] when `found`, else [`Exit::Ok`]: a check's verdict.
    pub fn findings_if(found: bool) -> ExitCode {
        if found { Exit::Findings } else { Exit::Ok }.into()
    }

    /// What the code means, for people.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Ok => "done",
            Exit::Findings => {
                "the check found something (policy check errors, open audit findings)"
            }
            Exit::Failed => "the command failed; the error is on stderr",
            Exit::Partial => "a sync ran, but some tables could not be synced (named on stderr)",
            Exit::Drift => "verify: the target differs from the masked source",
            Exit::AbandonedSlot => {
                "slot list: a maskbus slot no producer reads keeps WAL on production"
            }
            Exit::Behind => "status: the target is behind the source",
            Exit::Unknown => "status: unknown (the producer did not answer)",
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
