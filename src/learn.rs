//! Persistent session state and the learning loop's files under
//! `.code-intel/`: `sessions/<id>.json`, `logs/decisions.jsonl`,
//! `logs/outcomes.jsonl`, `agreements/<id>.md`, `learned_pairs.json`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::index::now_secs;
use crate::session::{
    Assessment, HypothesisState, Intent, Phase, QueryFrame, Requirements, Risk, Understanding,
};

/// Learned (term, symbol) pairs expire after this many seconds (30 days,
/// issue 3).
pub const LEARNED_PAIR_TTL_SECS: u64 = 30 * 24 * 3600;

/// Errors of the session files.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error("unknown session `{0}`: start one with start_session")]
    UnknownSession(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// One recorded tool call of a session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub tool: String,
    pub params: serde_json::Value,
    /// First line of the tool's text result.
    pub summary: String,
    /// Repo-relative files the result named.
    pub files: Vec<String>,
    /// Unix seconds.
    pub at: u64,
    /// The phase the call was made in.
    pub phase: Phase,
}

/// A forest hit submitted in SEMANTIC.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hypothesis {
    pub symbol: String,
    pub file: String,
    /// The slot or requirement the hypothesis fills.
    pub slot_source: String,
    pub reason: String,
    pub state: HypothesisState,
    /// Code evidence given at verification.
    pub evidence: Option<String>,
}

/// A relevance check result kept in the session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelevanceCheck {
    pub nl_term: String,
    pub symbol: String,
    pub score: f32,
    pub tier: String,
}

/// Everything the server knows about one session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub intent: Intent,
    pub query: String,
    pub phase: Phase,
    pub frame: QueryFrame,
    pub frame_set: bool,
    pub risk: Risk,
    /// A grey-zone relevance result forced risk HIGH.
    pub grey_zone: bool,
    pub requirements: Requirements,
    pub evidence: Vec<Evidence>,
    pub tools_used: BTreeSet<String>,
    pub files_seen: BTreeSet<String>,
    /// Files the agent may write (seen, analysed or added).
    pub explored: BTreeSet<String>,
    pub understanding: Option<Understanding>,
    pub last_assessment: Option<Assessment>,
    pub hypotheses: Vec<Hypothesis>,
    pub relevance: Vec<RelevanceCheck>,
    /// Writes checked and allowed.
    pub writes_allowed: Vec<String>,
    pub refusals: Vec<String>,
    pub outcome: Option<String>,
    pub created_at: u64,
    pub updated_at: u64,
}

impl Session {
    /// A session in its first phase (READY at once for QUESTION).
    pub fn new(intent: Intent, query: &str) -> Session {
        let now = now_secs();
        let seed = format!("{query}{now}{:?}", std::time::SystemTime::now());
        let id = crate::chunk::hex(&Sha256::digest(seed.as_bytes()))[..12].to_string();
        let risk = crate::session::assess_risk(intent, &QueryFrame::new(), false);
        Session {
            id,
            intent,
            query: query.to_string(),
            phase: if intent == Intent::Question {
                Phase::Ready
            } else {
                Phase::Exploration
            },
            frame: QueryFrame::new(),
            frame_set: false,
            risk,
            grey_zone: false,
            requirements: crate::session::requirements(intent, risk),
            evidence: Vec::new(),
            tools_used: BTreeSet::new(),
            files_seen: BTreeSet::new(),
            explored: BTreeSet::new(),
            understanding: None,
            last_assessment: None,
            hypotheses: Vec::new(),
            relevance: Vec::new(),
            writes_allowed: Vec::new(),
            refusals: Vec::new(),
            outcome: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Recomputes risk and requirements from the frame and grey-zone flag.
    pub fn rescore(&mut self) {
        self.risk = crate::session::assess_risk(self.intent, &self.frame, self.grey_zone);
        self.requirements = crate::session::requirements(self.intent, self.risk);
    }
}

/// Sessions in memory, written through to `.code-intel/sessions/`; a session
/// unknown in memory is loaded from its file, so sessions survive restarts
/// and are visible to every server process on the repository.
pub struct SessionStore {
    dir: PathBuf,
    state_dir: PathBuf,
    cache: Mutex<HashMap<String, Session>>,
}

impl SessionStore {
    /// Store for the repository state directory `.code-intel/`.
    pub fn new(state_dir: &Path) -> SessionStore {
        SessionStore {
            dir: state_dir.join("sessions"),
            state_dir: state_dir.to_path_buf(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// A copy of the session.
    ///
    /// # Errors
    /// [`LearnError::UnknownSession`].
    pub fn get(&self, id: &str) -> Result<Session, LearnError> {
        if let Some(s) = self.lock().get(id) {
            return Ok(s.clone());
        }
        let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric());
        let loaded = valid
            .then(|| std::fs::read_to_string(self.dir.join(format!("{id}.json"))).ok())
            .flatten()
            .and_then(|t| serde_json::from_str::<Session>(&t).ok())
            .ok_or_else(|| LearnError::UnknownSession(id.to_string()))?;
        self.lock().insert(id.to_string(), loaded.clone());
        Ok(loaded)
    }

    /// Saves (atomically) and caches the session.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn put(&self, mut s: Session) -> Result<Session, LearnError> {
        s.updated_at = now_secs();
        let path = self.dir.join(format!("{}.json", s.id));
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&s).map_err(|e| err(std::io::Error::other(e)))?,
        )
        .map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)?;
        self.lock().insert(s.id.clone(), s.clone());
        Ok(s)
    }

    /// Applies `f` to the session and saves it.
    ///
    /// # Errors
    /// Unknown session or write failure.
    pub fn update<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Session) -> T,
    ) -> Result<(T, Session), LearnError> {
        let mut s = self.get(id)?;
        let out = f(&mut s);
        let s = self.put(s)?;
        Ok((out, s))
    }

    /// The active session: the most recently updated one without an
    /// outcome, updated within `max_age_secs`. Reads files only (no model,
    /// no index), so a hook can call it in milliseconds.
    pub fn active(&self, max_age_secs: u64) -> Option<Session> {
        let now = now_secs();
        let mut newest: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&self.dir)
            .ok()?
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        newest.sort_by_key(|e| std::cmp::Reverse(e.0));
        newest
            .into_iter()
            .filter_map(|(_, p)| {
                serde_json::from_str::<Session>(&std::fs::read_to_string(p).ok()?).ok()
            })
            .find(|s| s.outcome.is_none())
            .filter(|s| now.saturating_sub(s.updated_at) <= max_age_secs)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends one JSON line to `logs/<name>.jsonl`.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn log(&self, name: &str, value: &serde_json::Value) -> Result<(), LearnError> {
        let dir = self.state_dir.join("logs");
        let path = dir.join(format!("{name}.jsonl"));
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(err)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        writeln!(f, "{value}").map_err(err)
    }

    /// Every line of `logs/<name>.jsonl` that parses.
    pub fn read_log(&self, name: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.state_dir.join("logs").join(format!("{name}.jsonl")))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Writes `agreements/<session id>.md` and returns its repo-state path.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn write_agreement(
        &self,
        s: &Session,
        symbols: &[String],
        files: &[String],
    ) -> Result<PathBuf, LearnError> {
        let dir = self.state_dir.join("agreements");
        let path = dir.join(format!("{}.md", s.id));
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(err)?;
        let mut md = format!(
            "# Agreement {}\n\n- request: {}\n- intent: {:?}\n- risk: {:?}\n",
            s.id, s.query, s.intent, s.risk
        );
        for (name, slot) in &s.frame {
            md.push_str(&format!(
                "- {name:?}: {} (「{}」)\n",
                slot.value, slot.quote
            ));
        }
        md.push_str("\n## Symbols\n\n");
        for sym in symbols {
            md.push_str(&format!("- `{sym}`\n"));
        }
        md.push_str("\n## Files\n\n");
        for f in files {
            md.push_str(&format!("- {f}\n"));
        }
        md.push_str("\n## Evidence\n\n");
        for e in &s.evidence {
            md.push_str(&format!("- {} ({:?}): {}\n", e.tool, e.phase, e.summary));
        }
        std::fs::write(&path, md).map_err(err)?;
        Ok(path)
    }

    /// Learned (term, symbol) pairs, expired ones dropped.
    pub fn learned_pairs(&self) -> Vec<LearnedPair> {
        let now = now_secs();
        std::fs::read_to_string(self.state_dir.join("learned_pairs.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Vec<LearnedPair>>(&t).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| now.saturating_sub(p.learned_at) < LEARNED_PAIR_TTL_SECS)
            .collect()
    }

    /// Adds pairs (replacing same term+symbol) and keeps those `keep` accepts
    /// (e.g. whose symbol still exists).
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn add_learned_pairs(
        &self,
        new: Vec<LearnedPair>,
        keep: impl Fn(&LearnedPair) -> bool,
    ) -> Result<usize, LearnError> {
        let mut all: BTreeMap<(String, String), LearnedPair> = self
            .learned_pairs()
            .into_iter()
            .map(|p| ((p.term.clone(), p.symbol.clone()), p))
            .collect();
        for p in new {
            all.insert((p.term.clone(), p.symbol.clone()), p);
        }
        let kept: Vec<LearnedPair> = all.into_values().filter(|p| keep(p)).collect();
        let path = self.state_dir.join("learned_pairs.json");
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&self.state_dir).map_err(err)?;
        std::fs::write(
            &path,
            serde_json::to_vec_pretty(&kept).map_err(|e| err(std::io::Error::other(e)))?,
        )
        .map_err(err)?;
        Ok(kept.len())
    }
}

/// A natural-language term that a successful session tied to a symbol.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LearnedPair {
    pub term: String,
    pub symbol: String,
    pub session_id: String,
    /// Unix seconds.
    pub learned_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_survive_a_new_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let s = store.put(Session::new(Intent::Modify, "直して")).unwrap();
        store
            .update(&s.id, |s| s.files_seen.insert("a.py".into()))
            .unwrap();
        let again = SessionStore::new(dir.path());
        let loaded = again.get(&s.id).unwrap();
        assert!(loaded.files_seen.contains("a.py"));
        assert_eq!(loaded.phase, Phase::Exploration);
        assert!(matches!(
            again.get("../etc"),
            Err(LearnError::UnknownSession(_))
        ));
    }

    #[test]
    fn learned_pairs_expire_and_are_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let pair = |sym: &str, at| LearnedPair {
            term: "ログイン".into(),
            symbol: sym.into(),
            session_id: "x".into(),
            learned_at: at,
        };
        store
            .add_learned_pairs(
                vec![
                    pair("login", now_secs()),
                    pair("old", 0),
                    pair("gone", now_secs()),
                ],
                |p| p.symbol != "gone",
            )
            .unwrap();
        let pairs = store.learned_pairs();
        assert_eq!(
            pairs.iter().map(|p| p.symbol.as_str()).collect::<Vec<_>>(),
            vec!["login"]
        );
    }
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
pub fn insights(records: &[serde_json::Value]) -> Insights {
    let mut out = Insights::default();
    let mut refusals: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let bump = |t: &mut Tally, failed: bool| {
        t.sessions += 1;
        t.failures += usize::from(failed);
        t.failure_rate = t.failures as f32 / t.sessions as f32;
    };
    for r in records {
        let outcome = r["outcome"].as_str().unwrap_or("unknown").to_string();
        let failed = outcome != "success";
        out.sessions += 1;
        if failed {
            out.failures += 1;
        } else {
            out.successes += 1;
        }
        bump(
            out.by_risk
                .entry(r["risk"].as_str().unwrap_or("?").to_string())
                .or_default(),
            failed,
        );
        for tool in r["tools_used"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
        {
            bump(out.by_tool.entry(tool.to_string()).or_default(), failed);
        }
        if failed {
            let point = r["failure_point"]
                .as_str()
                .unwrap_or("unspecified")
                .to_string();
            *out.by_failure_point.entry(point).or_default() += 1;
        }
        let e = refusals.entry(outcome).or_default();
        e.0 += r["refusals"].as_u64().unwrap_or(0) as usize;
        e.1 += 1;
    }
    out.mean_refusals = refusals
        .into_iter()
        .map(|(k, (sum, n))| (k, sum as f32 / n as f32))
        .collect();
    out
}

#[cfg(test)]
mod insight_tests {
    use super::*;

    #[test]
    fn correlates_failures() {
        let recs: Vec<serde_json::Value> = vec![
            serde_json::json!({"outcome": "success", "risk": "LOW", "tools_used": ["find_definitions"], "refusals": 0}),
            serde_json::json!({"outcome": "failure", "risk": "HIGH", "tools_used": ["search_text"], "refusals": 3, "failure_point": "wrong_symbol"}),
            serde_json::json!({"outcome": "partial", "risk": "HIGH", "tools_used": ["search_text", "find_definitions"], "refusals": 1}),
        ];
        let i = insights(&recs);
        assert_eq!((i.sessions, i.successes, i.failures), (3, 1, 2));
        assert_eq!(i.by_risk["HIGH"].failure_rate, 1.0);
        assert_eq!(i.by_tool["find_definitions"].failures, 1);
        assert_eq!(i.by_failure_point["wrong_symbol"], 1);
        assert_eq!(i.mean_refusals["failure"], 3.0);
        assert!(i.summary().contains("risk HIGH: 2/2 failed"));
    }
}
