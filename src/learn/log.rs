//! The learning loop's logs: typed records of `logs/decisions.jsonl` and
//! `logs/outcomes.jsonl` (one timestamp key, `at`), and the failure
//! correlations computed from outcomes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::session::{Intent, Phase, Risk, SessionOutcome, SlotName, Tool};
use crate::util::now_secs;

/// `logs/decisions.jsonl`: what the router or the session decided for a request.
pub const DECISIONS_LOG: &str = "decisions";
/// `logs/outcomes.jsonl`: how sessions ended.
pub const OUTCOMES_LOG: &str = "outcomes";

/// One record of [`DECISIONS_LOG`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// Unix seconds (`query` records of older releases wrote `timestamp`).
    #[serde(alias = "timestamp")]
    pub at: u64,
    #[serde(default)]
    pub session_id: Option<String>,
    /// The request.
    pub query: String,
    #[serde(flatten)]
    pub decision: Decision,
}

/// What was decided, by tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum Decision {
    /// `query`'s plan and its top files.
    Query {
        keywords: Vec<String>,
        translated: Vec<crate::rank::plan::Translation>,
        kind_hints: Vec<String>,
        /// Slots the plan found no words for.
        missing_slots: Vec<SlotName>,
        tools_planned: Vec<String>,
        /// The three best files.
        top: Vec<String>,
        /// Milliseconds the ranking took.
        ms: f64,
    },
    /// `start_session`: intent, risk and the map hint it found.
    StartSession {
        intent: Intent,
        risk: Risk,
        map_hint: Option<crate::store::MapHit>,
        /// The map could be searched (model and index available).
        map_checked: bool,
    },
}

impl DecisionRecord {
    /// The record of one `query` call.
    pub fn query(
        query: &str,
        session_id: Option<String>,
        r: &crate::rank::QueryAnswer,
    ) -> DecisionRecord {
        let plan = &r.plan;
        DecisionRecord {
            at: now_secs(),
            session_id,
            query: query.to_string(),
            decision: Decision::Query {
                keywords: plan.keywords.clone(),
                translated: plan.translated.clone(),
                kind_hints: plan.kind_hints.clone(),
                missing_slots: SlotName::ALL
                    .into_iter()
                    .filter(|s| !plan.slots.contains_key(s))
                    .collect(),
                tools_planned: plan.recommended_tools.clone(),
                top: r.files.iter().take(3).map(|f| f.file.clone()).collect(),
                ms: r.timings.total_ms,
            },
        }
    }
}

/// One record of [`OUTCOMES_LOG`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutcomeRecord {
    /// Unix seconds.
    #[serde(alias = "timestamp")]
    pub at: u64,
    pub session_id: String,
    pub outcome: SessionOutcome,
    pub intent: Intent,
    pub risk: Risk,
    /// The phase the session ended in.
    pub phase: Phase,
    pub tools_used: std::collections::BTreeSet<Tool>,
    /// Gate refusals during the session.
    pub refusals: usize,
    /// For failure/partial: where it went wrong (exploration, wrong_symbol, …).
    #[serde(default)]
    pub failure_point: Option<String>,
    #[serde(default)]
    pub analysis: String,
}

/// Success and failure counts of one group.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Tally {
    pub sessions: usize,
    pub failures: usize,
    /// failures / sessions.
    pub failure_rate: f32,
}

/// Failure correlations over `logs/outcomes.jsonl` (failure = outcome
/// `failure` or `partial`).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Insights {
    pub sessions: usize,
    pub successes: usize,
    pub failures: usize,
    pub by_risk: BTreeMap<String, Tally>,
    pub by_tool: BTreeMap<String, Tally>,
    pub by_failure_point: BTreeMap<String, usize>,
    /// Mean gate refusals per session, by outcome.
    pub mean_refusals: BTreeMap<String, f32>,
}

impl Insights {
    /// A few lines for people.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} sessions: {} succeeded, {} failed or partial\n",
            self.sessions, self.successes, self.failures
        );
        for (risk, t) in &self.by_risk {
            s.push_str(&format!(
                "risk {risk}: {}/{} failed ({:.0}%)\n",
                t.failures,
                t.sessions,
                t.failure_rate * 100.0
            ));
        }
        let mut tools: Vec<_> = self
            .by_tool
            .iter()
            .filter(|(_, t)| t.failures > 0)
            .collect();
        tools.sort_by(|a, b| b.1.failure_rate.total_cmp(&a.1.failure_rate));
        for (tool, t) in tools.iter().take(5) {
            s.push_str(&format!(
                "tool {tool}: used in {} sessions, {:.0}% failed\n",
                t.sessions,
                t.failure_rate * 100.0
            ));
        }
        for (point, n) in &self.by_failure_point {
            s.push_str(&format!("failure point {point}: {n}\n"));
        }
        s
    }
}

/// Computes [`Insights`] from outcome log records.
pub fn insights(records: &[OutcomeRecord]) -> Insights {
    let mut out = Insights::default();
    let mut refusals: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let bump = |t: &mut Tally, failed: bool| {
        t.sessions += 1;
        t.failures += usize::from(failed);
        t.failure_rate = t.failures as f32 / t.sessions as f32;
    };
    for r in records {
        let outcome = r.outcome.to_string();
        let failed = r.outcome != SessionOutcome::Success;
        out.sessions += 1;
        if failed {
            out.failures += 1;
        } else {
            out.successes += 1;
        }
        bump(out.by_risk.entry(r.risk.to_string()).or_default(), failed);
        for tool in &r.tools_used {
            bump(out.by_tool.entry(tool.to_string()).or_default(), failed);
        }
        if failed {
            let point = r.failure_point.as_deref().unwrap_or("unspecified");
            *out.by_failure_point.entry(point.to_string()).or_default() += 1;
        }
        let e = refusals.entry(outcome).or_default();
        e.0 += r.refusals;
        e.1 += 1;
    }
    out.mean_refusals = refusals
        .into_iter()
        .map(|(k, (sum, n))| (k, sum as f32 / n as f32))
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlates_failures() {
        // Records as older releases wrote them (`timestamp`) and as this one does (`at`).
        let recs: Vec<OutcomeRecord> = [
            r#"{"at": 1, "session_id": "a", "intent": "MODIFY", "phase": "READY", "outcome": "success", "risk": "LOW", "tools_used": ["find_definitions"], "refusals": 0}"#,
            r#"{"timestamp": 2, "session_id": "b", "intent": "MODIFY", "phase": "READY", "outcome": "failure", "risk": "HIGH", "tools_used": ["search_text"], "refusals": 3, "failure_point": "wrong_symbol"}"#,
            r#"{"at": 3, "session_id": "c", "intent": "IMPLEMENT", "phase": "EXPLORATION", "outcome": "partial", "risk": "HIGH", "tools_used": ["search_text", "find_definitions"], "refusals": 1}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let i = insights(&recs);
        assert_eq!((i.sessions, i.successes, i.failures), (3, 1, 2));
        assert_eq!(i.by_risk["HIGH"].failure_rate, 1.0);
        assert_eq!(i.by_tool["find_definitions"].failures, 1);
        assert_eq!(i.by_failure_point["wrong_symbol"], 1);
        assert_eq!(i.mean_refusals["failure"], 3.0);
        assert!(i.summary().contains("risk HIGH: 2/2 failed"));
    }
}
