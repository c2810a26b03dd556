//! Persistence of sessions and the learning loop's files under
//! `.code-intel/`: `sessions/<id>.json`, `logs/decisions.jsonl`,
//! `logs/outcomes.jsonl`, `agreements/<id>.md`, `learned_pairs.json`. The
//! session itself (its data and transitions) is `crate::session`'s.
//!
//! Several server processes (Claude Code and Cursor on one repository) and
//! concurrent tool calls share these files, so every session change is one
//! read-modify-write under an OS file lock (`sessions/<id>.lock`), written
//! through a temporary file of its own and renamed into place; log records
//! are appended whole under a lock of the log file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::session::Session;
use crate::util::{FileStamp, now_secs};

mod log;

/// What an ungated `query` (the workflow's orientation, before a session)
/// showed: the files it named and the lines of code it returned. A session
/// started on the same request counts those lines as read, as if the query
/// had carried its session_id (docs/sessions.md § Orientation).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Orientation {
    /// Unix seconds.
    pub at: u64,
    /// The request as the query was asked.
    pub query: String,
    /// Repo-relative files the reply named.
    pub files: Vec<String>,
    /// The files it read by the gate's rule (a unit of code returned:
    /// `server::wire::Shown::read_files`).
    pub read: Vec<String>,
    /// The lines of code it returned (1-based, inclusive).
    pub read_lines: Vec<crate::session::LineSpan>,
}

/// How long an orientation counts for a session started after it: an hour
/// (a request's exploration, not a day's).
pub const ORIENTATION_SECS: u64 = 3600;

pub use log::*;

/// Learned (term, symbol) pairs expire after this many seconds (30 days).
pub const LEARNED_PAIR_TTL_SECS: u64 = 30 * 24 * 3600;

/// Errors of the session files.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error("unknown session `{0}`: start one with start_session")]
    UnknownSession(String),
    #[error(
        "session file {path} is unreadable ({message}); it was moved aside to {quarantined}; start a new session with start_session"
    )]
    Corrupt {
        path: String,
        message: String,
        quarantined: String,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Temporary files of this process get distinct names, so two writers
/// (threads or processes) never rename each other's file away.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: a temporary file of this writer
/// (`<path>.<pid>.<n>.tmp`) renamed over it.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = path.with_extension(format!("{}.{n}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Moves an unreadable file aside (`<name>.corrupt-<unix seconds>`), so the
/// next write does not overwrite what may still be recovered by hand.
pub fn quarantine(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{}", now_secs()));
    let aside = path.with_file_name(name);
    if let Err(e) = std::fs::rename(path, &aside) {
        tracing::warn!("cannot move {} aside: {e}", path.display());
    } else {
        tracing::warn!(
            "{} was unreadable; moved to {}",
            path.display(),
            aside.display()
        );
    }
    aside
}

/// Sessions in `.code-intel/sessions/`, changed only through
/// [`SessionStore::update`]. Every use checks the file's stamp, so every
/// server process sees every change; the file is read again only when its
/// stamp differs from the version this process last read or wrote (a gated
/// call reads a session at most once and writes it once).
pub struct SessionStore {
    dir: PathBuf,
    state_dir: PathBuf,
    /// Session id → (its file's stamp, the session as of that stamp).
    cache: std::sync::Mutex<std::collections::HashMap<String, (FileStamp, Session)>>,
    /// Session files read and written by this store (for tests and logs).
    reads: std::sync::atomic::AtomicUsize,
    writes: std::sync::atomic::AtomicUsize,
}

/// Sessions files read and written so far by one [`SessionStore`].
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionIo {
    pub reads: usize,
    pub writes: usize,
}

impl SessionStore {
    /// Store for the repository state directory `.code-intel/`.
    pub fn new(state_dir: &Path) -> SessionStore {
        SessionStore {
            dir: state_dir.join("sessions"),
            state_dir: state_dir.to_path_buf(),
            cache: std::sync::Mutex::default(),
            reads: std::sync::atomic::AtomicUsize::new(0),
            writes: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Session files read and written so far.
    #[cfg(test)]
    pub fn io(&self) -> SessionIo {
        SessionIo {
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
        }
    }

    fn cached(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (FileStamp, Session)>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn path(&self, id: &str) -> Result<PathBuf, LearnError> {
        // Ids are ours (12 hex chars); anything else cannot name a file here.
        if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(LearnError::UnknownSession(id.chars().take(64).collect()));
        }
        Ok(self.dir.join(format!("{id}.json")))
    }

    /// The session as stored now.
    ///
    /// # Errors
    /// [`LearnError::UnknownSession`]; [`LearnError::Corrupt`] when its file
    /// cannot be parsed (it is moved aside).
    pub fn get(&self, id: &str) -> Result<Session, LearnError> {
        let path = self.path(id)?;
        let stamp =
            FileStamp::of(&path).ok_or_else(|| LearnError::UnknownSession(id.to_string()))?;
        if let Some((s, session)) = self.cached().get(id)
            && *s == stamp
        {
            return Ok(session.clone());
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|_| LearnError::UnknownSession(id.to_string()))?;
        self.reads.fetch_add(1, Ordering::Relaxed);
        let session = Session::from_json(&text).map_err(|e| LearnError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
            quarantined: quarantine(&path).display().to_string(),
        })?;
        self.cached()
            .insert(id.to_string(), (stamp, session.clone()));
        Ok(session)
    }

    fn save(&self, s: &Session) -> Result<(), LearnError> {
        let path = self.path(&s.id)?;
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let bytes = serde_json::to_vec_pretty(s).map_err(|e| err(std::io::Error::other(e)))?;
        write_atomic(&path, &bytes).map_err(err)?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        // Under the session's lock (update) or for a new id (create): the
        // file is the version just written.
        match FileStamp::of(&path) {
            Some(stamp) => self.cached().insert(s.id.clone(), (stamp, s.clone())),
            None => self.cached().remove(&s.id),
        };
        Ok(())
    }

    /// Stores a new session.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn create(&self, mut s: Session) -> Result<Session, LearnError> {
        s.updated_at = now_secs();
        self.save(&s)?;
        Ok(s)
    }

    /// Applies `f` to the session as stored now and saves the result, under
    /// the session's lock: concurrent updates (threads or processes) are
    /// applied one after the other, none is lost.
    ///
    /// # Errors
    /// Unknown or corrupt session, or a write failure.
    pub fn update<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Session) -> T,
    ) -> Result<(T, Session), LearnError> {
        let path = self.path(id)?;
        let lock_path = path.with_extension("lock");
        let _lock = crate::util::lock_file(&lock_path).map_err(|source| LearnError::Write {
            path: lock_path.display().to_string(),
            source,
        })?;
        let mut s = self.get(id)?;
        let out = f(&mut s);
        s.updated_at = now_secs();
        self.save(&s)?;
        Ok((out, s))
    }

    /// The open sessions, newest first: those without an outcome updated
    /// within `max_age_secs`. Reads files only (no model, no index), so a
    /// hook can call it in milliseconds.
    ///
    /// # Errors
    /// A session file that cannot be parsed (the hook must not guess).
    pub fn open_sessions(&self, max_age_secs: u64) -> Result<Vec<Session>, LearnError> {
        let now = now_secs();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(Vec::new());
        };
        let mut newest: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        newest.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut open = Vec::new();
        for (_, p) in newest {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let s = Session::from_json(&text).map_err(|e| LearnError::Corrupt {
                path: p.display().to_string(),
                message: e.to_string(),
                quarantined: "(left in place)".into(),
            })?;
            if s.outcome.is_none() && now.saturating_sub(s.updated_at) <= max_age_secs {
                open.push(s);
            }
        }
        open.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        Ok(open)
    }

    /// Appends one JSON record to `logs/<name>.jsonl`: serialised first,
    /// written with one call under the log's lock, so records of concurrent
    /// writers never interleave.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn log<T: Serialize>(&self, name: &str, value: &T) -> Result<(), LearnError> {
        let dir = self.state_dir.join("logs");
        let path = dir.join(format!("{name}.jsonl"));
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(err)?;
        let mut line = serde_json::to_vec(value).map_err(|e| err(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        f.lock().map_err(err)?;
        f.write_all(&line).map_err(err)
    }

    /// Keeps what an ungated `query` showed for `o.query` (the latest per
    /// request, in `orientation/<hash of the request>.json`), for a session
    /// started next on the same request ([`SessionStore::orientation`]).
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn remember_orientation(&self, o: &Orientation) -> Result<(), LearnError> {
        let path = self.orientation_path(&o.query);
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let bytes = serde_json::to_vec(o).map_err(|e| err(std::io::Error::other(e)))?;
        write_atomic(&path, &bytes).map_err(err)
    }

    /// What the last ungated `query` for exactly `query` (trimmed) showed,
    /// if it ran at most [`ORIENTATION_SECS`] ago.
    pub fn orientation(&self, query: &str) -> Option<Orientation> {
        let text = std::fs::read_to_string(self.orientation_path(query)).ok()?;
        let o: Orientation = serde_json::from_str(&text).ok()?;
        (o.query.trim() == query.trim() && now_secs().saturating_sub(o.at) <= ORIENTATION_SECS)
            .then_some(o)
    }

    fn orientation_path(&self, query: &str) -> PathBuf {
        let hash = crate::util::sha256_hex(query.trim().as_bytes());
        self.state_dir
            .join("orientation")
            .join(format!("{}.json", &hash[..16]))
    }

    /// Every line of `logs/<name>.jsonl` that parses as a `T`.
    pub fn read_log<T: serde::de::DeserializeOwned>(&self, name: &str) -> Vec<T> {
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

    fn pairs_path(&self) -> PathBuf {
        self.state_dir.join("learned_pairs.json")
    }

    /// The stored pairs: each record that parses is kept; a file that is
    /// not a JSON list is moved aside (and counts as empty).
    fn read_pairs(&self) -> Vec<LearnedPair> {
        let path = self.pairs_path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Vec::new();
        };
        match serde_json::from_str::<Vec<serde_json::Value>>(&text) {
            Ok(records) => records
                .into_iter()
                .filter_map(|r| serde_json::from_value(r).ok())
                .collect(),
            Err(_) => {
                quarantine(&path);
                Vec::new()
            }
        }
    }

    /// Learned (term, symbol) pairs, expired ones dropped.
    pub fn learned_pairs(&self) -> Vec<LearnedPair> {
        let now = now_secs();
        self.read_pairs()
            .into_iter()
            .filter(|p| now.saturating_sub(p.learned_at) < LEARNED_PAIR_TTL_SECS)
            .collect()
    }

    /// Adds pairs (replacing same term+symbol) and keeps those `keep` accepts
    /// (e.g. whose symbol still exists), under a lock so that two writers
    /// both keep their pairs.
    ///
    /// # Errors
    /// [`LearnError::Write`].
    pub fn add_learned_pairs(
        &self,
        new: Vec<LearnedPair>,
        keep: impl Fn(&LearnedPair) -> bool,
    ) -> Result<usize, LearnError> {
        let path = self.pairs_path();
        let err = |source| LearnError::Write {
            path: path.display().to_string(),
            source,
        };
        let _lock = crate::util::lock_file(&path.with_extension("lock")).map_err(err)?;
        let now = now_secs();
        let mut all: BTreeMap<(String, String), LearnedPair> = self
            .read_pairs()
            .into_iter()
            .filter(|p| now.saturating_sub(p.learned_at) < LEARNED_PAIR_TTL_SECS)
            .map(|p| ((p.term.clone(), p.symbol.clone()), p))
            .collect();
        for p in new {
            all.insert((p.term.clone(), p.symbol.clone()), p);
        }
        let kept: Vec<LearnedPair> = all.into_values().filter(|p| keep(p)).collect();
        let bytes = serde_json::to_vec_pretty(&kept).map_err(|e| err(std::io::Error::other(e)))?;
        write_atomic(&path, &bytes).map_err(err)?;
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
    use crate::session::{Intent, Phase};

    #[test]
    fn sessions_survive_a_new_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let s = store
            .create(Session::new(Intent::Modify, "直して"))
            .unwrap();
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

    /// Sixteen threads updating one session at once: every change is kept.
    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(SessionStore::new(dir.path()));
        let s = store
            .create(Session::new(Intent::Modify, "直して"))
            .unwrap();
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let (store, id) = (std::sync::Arc::clone(&store), s.id.clone());
                std::thread::spawn(move || {
                    store
                        .update(&id, |s| s.files_seen.insert(format!("f{i}.py")))
                        .unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(store.get(&s.id).unwrap().files_seen.len(), 16);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sessions"))
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn corrupt_files_are_moved_aside_and_valid_records_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let s = store
            .create(Session::new(Intent::Modify, "直して"))
            .unwrap();
        let path = dir.path().join("sessions").join(format!("{}.json", s.id));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        let err = store.get(&s.id).unwrap_err().to_string();
        assert!(err.contains("moved aside"), "{err}");
        assert!(!path.exists());

        let good = |sym: &str| serde_json::json!({"term": "ログイン", "symbol": sym, "session_id": "x", "learned_at": now_secs()});
        let pairs = serde_json::json!([good("login"), {"term": 3}, good("logout")]);
        std::fs::write(dir.path().join("learned_pairs.json"), pairs.to_string()).unwrap();
        assert_eq!(store.learned_pairs().len(), 2);
        let kept = store
            .add_learned_pairs(
                vec![LearnedPair {
                    term: "支払い".into(),
                    symbol: "pay".into(),
                    session_id: "y".into(),
                    learned_at: now_secs(),
                }],
                |_| true,
            )
            .unwrap();
        assert_eq!(kept, 3);
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
