//! Co-change history (evolutionary coupling: Zimmermann, Weißgerber, Diehl
//! and Zeller, "Mining Version Histories to Guide Software Changes", ICSE
//! 2004): files that changed together in the repository's own commits, with
//! support (how many commits changed both) and confidence (P(b changes | a
//! changes)). Commits count with a weight that halves every
//! [`HALF_LIFE_DAYS`], so recent habits count more; commits that touch more
//! than [`MAX_FILES_PER_COMMIT`] files (bulk renames, formatting, vendoring)
//! are left out, as the paper does for large transactions, and a commit's
//! pairs count less the more files it changed ([`FULL_PARTNERS`]). Mined with
//! libgit2 from the newest commit back, incrementally from the last commit
//! mined; off (no history) when the repository has no `.git`. Sessions add
//! their outcomes (the files a successful change wrote) as transactions of
//! their own.
//!
//! Stored in `.code-intel/cochange.json`, written atomically.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Commits touching more files than this are not coupling evidence.
pub const MAX_FILES_PER_COMMIT: usize = 30;
/// Newest non-merge commits read on a first mining (later ones only read
/// what is new).
pub const MAX_COMMITS: usize = 10_000;
/// A commit's weight halves every this many days before the newest one.
pub const HALF_LIFE_DAYS: f64 = 365.0;
/// A commit counts whole for its pairs while each of its files has at
/// most this many partners (commits of up to 5 files); a broader one
/// counts `FULL_PARTNERS / (files − 1)` for each pair (a 25-file commit
/// 1/6), so a small repository's sweeping commits (a PHP upgrade touching
/// 20 of 170 files, each under [`MAX_FILES_PER_COMMIT`]) do not make
/// every file they touched a "100 %" partner of every other. Chosen on the
/// development parts of the change-set ticket sets (bench/README.md §
/// Change sets, co-change shares; 1, 2, 4 and 9 tried against no share).
pub const FULL_PARTNERS: usize = 4;
/// A partner needs this many commits shared with the file.
pub const MIN_SUPPORT: u32 = 2;
/// Version of the file layout. 2: each file's last change ([`CoChange::recency`]);
/// 3: pair weights shared out by [`pair_share`] (older files are mined again).
const VERSION: u32 = 3;
/// Share of the history's files changed more recently than a file's last
/// change at which its [`CoChange::recency`] falls to 1/e (30 files of
/// BookStack's 3,000). 1 %, chosen on the development parts of the ticket
/// sets (bench/README.md § Change sets; a fixed 25 or 50 files and 0.5 %,
/// 1.5 % and 3 % tried).
pub const RECENCY_SHARE: f32 = 0.01;
/// Reference time of the weights (2000-01-01): weights are
/// 2^((t − t0) / half-life), so confidence, a ratio, does not depend on
/// it and new commits add to old sums without rescaling them.
const T0: i64 = 946_684_800;

/// The statistics, as stored.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CoChange {
    version: u32,
    /// The newest commit mined (hex).
    pub head: Option<String>,
    /// Commits counted.
    pub commits: usize,
    files: Vec<String>,
    /// Per file: the decayed weight of the commits that changed it.
    weight: Vec<f64>,
    /// (file a, file b, decayed weight of commits that changed both, each
    /// times its [`pair_share`], commits that changed both); a < b.
    pairs: Vec<(u32, u32, f64, u32)>,
    /// Per file: Unix time of the newest transaction that changed it.
    #[serde(default)]
    last: Vec<i64>,
    /// Every file's `last`, newest first.
    #[serde(skip)]
    newest: Vec<i64>,
    #[serde(skip)]
    index: HashMap<String, u32>,
    #[serde(skip)]
    adjacency: HashMap<u32, Vec<(u32, f64, u32)>>,
}

/// Errors of mining and storing history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("git history of {path}: {message}")]
    Git { path: String, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

impl CoChange {
    /// The stored statistics of `state_dir` (`.code-intel`), or empty ones.
    pub fn load(state_dir: &Path) -> CoChange {
        let mut c: CoChange = std::fs::read(state_dir.join("cochange.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .filter(|c: &CoChange| c.version == VERSION)
            .unwrap_or_default();
        c.version = VERSION;
        c.reindex();
        c
    }

    /// Writes the statistics to `state_dir/cochange.json` (atomically).
    ///
    /// # Errors
    /// [`HistoryError::Write`].
    pub fn save(&self, state_dir: &Path) -> Result<(), HistoryError> {
        let path = state_dir.join("cochange.json");
        let err = |source| HistoryError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(state_dir).map_err(err)?;
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec(self).map_err(|e| err(std::io::Error::other(e)))?;
        std::fs::write(&tmp, bytes).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)
    }

    /// Loads, changes and saves the statistics of `state_dir` under a lock
    /// (`cochange.lock`), so a sync's mining and a session's outcome never
    /// lose each other's transactions; `f` says whether to save.
    ///
    /// # Errors
    /// What `f` returns; the lock or the write failing.
    pub fn update<T>(
        state_dir: &Path,
        f: impl FnOnce(&mut CoChange) -> Result<(T, bool), HistoryError>,
    ) -> Result<T, HistoryError> {
        let lock_path = state_dir.join("cochange.lock");
        let err = |source| HistoryError::Write {
            path: lock_path.display().to_string(),
            source,
        };
        let _lock = crate::util::lock_file(&lock_path).map_err(err)?;
        let mut c = CoChange::load(state_dir);
        let (out, changed) = f(&mut c)?;
        if changed {
            c.save(state_dir)?;
        }
        Ok(out)
    }

    fn reindex(&mut self) {
        self.index = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i as u32))
            .collect();
        self.last.resize(self.files.len(), 0);
        self.newest = self.last.iter().copied().filter(|&t| t > 0).collect();
        self.newest.sort_unstable_by(|a, b| b.cmp(a));
        self.adjacency.clear();
        for &(a, b, w, n) in &self.pairs {
            self.adjacency.entry(a).or_default().push((b, w, n));
            self.adjacency.entry(b).or_default().push((a, w, n));
        }
    }

    fn id(&mut self, file: &str) -> u32 {
        if let Some(&i) = self.index.get(file) {
            return i;
        }
        let i = self.files.len() as u32;
        self.files.push(file.to_string());
        self.weight.push(0.0);
        self.last.push(0);
        self.index.insert(file.to_string(), i);
        i
    }

    /// Counts one transaction (the files of a commit or of a session's
    /// outcome) at Unix time `at`; large ones are left out.
    pub fn add(&mut self, files: &[String], at: i64) {
        if files.len() == 1 {
            let i = self.id(&files[0]) as usize;
            self.weight[i] += decay(at);
            self.last[i] = self.last[i].max(at);
            self.commits += 1;
            return;
        }
        if files.is_empty() || files.len() > MAX_FILES_PER_COMMIT {
            return;
        }
        let w = decay(at);
        let mut ids: Vec<u32> = files.iter().map(|f| self.id(f)).collect();
        ids.sort_unstable();
        ids.dedup();
        for &i in &ids {
            self.weight[i as usize] += w;
            self.last[i as usize] = self.last[i as usize].max(at);
        }
        let w = w * pair_share(ids.len());
        let mut pairs: HashMap<(u32, u32), usize> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(k, p)| ((p.0, p.1), k))
            .collect();
        for (x, &a) in ids.iter().enumerate() {
            for &b in &ids[x + 1..] {
                match pairs.get(&(a, b)) {
                    Some(&k) => {
                        self.pairs[k].2 += w;
                        self.pairs[k].3 += 1;
                    }
                    None => {
                        pairs.insert((a, b), self.pairs.len());
                        self.pairs.push((a, b, w, 1));
                    }
                }
            }
        }
        self.commits += 1;
    }

    /// How recently `file` changed, 0-1: e^(−k / (n · [`RECENCY_SHARE`])),
    /// `k` the number of files whose last change is as new as its own or
    /// newer (1 for the file of a newest one-file commit), `n` the files
    /// the history holds (at least 100 counted); 0 for a file no
    /// transaction changed. Files worked on lately are the likeliest to
    /// change next (Kim, Zimmermann, Whitehead and Zeller, "Predicting
    /// Faults from Cached History", ICSE 2007). A history stored by an
    /// older layout is mined again at the next sync; until then every
    /// file's recency (and co-change) is 0.
    pub fn recency(&self, file: &str) -> f32 {
        let Some(&t) = self
            .index
            .get(file)
            .and_then(|&i| self.last.get(i as usize))
            .filter(|&&t| t > 0)
        else {
            return 0.0;
        };
        let k = self.newest.partition_point(|&x| x >= t);
        let scale = self.newest.len().max(100) as f32 * RECENCY_SHARE;
        (-(k as f32) / scale).exp()
    }

    /// Files that changed with `file`, best first: (file, confidence 0-1,
    /// commits that changed both), at least [`MIN_SUPPORT`] commits.
    pub fn partners(&self, file: &str, limit: usize) -> Vec<(String, f32, f32)> {
        let Some(&i) = self.index.get(file) else {
            return Vec::new();
        };
        let base = self.weight[i as usize].max(f64::MIN_POSITIVE);
        let mut out: Vec<(String, f32, f32)> = self
            .adjacency
            .get(&i)
            .into_iter()
            .flatten()
            .filter(|(_, _, n)| *n >= MIN_SUPPORT)
            .map(|&(j, w, n)| {
                (
                    self.files[j as usize].clone(),
                    (w / base).min(1.0) as f32,
                    n as f32,
                )
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(limit);
        out
    }
}

/// The share of a transaction of `n` files (n ≥ 2) that each of its pairs
/// counts as: 1 up to [`FULL_PARTNERS`] partners a file, then
/// `FULL_PARTNERS / (n − 1)`, so a broad commit says less about any one pair
/// than a focused one.
fn pair_share(n: usize) -> f64 {
    (FULL_PARTNERS as f64 / n.saturating_sub(1).max(1) as f64).min(1.0)
}

/// Weight of a transaction at Unix time `at`.
fn decay(at: i64) -> f64 {
    2f64.powf((at - T0) as f64 / (HALF_LIFE_DAYS * 86_400.0))
}

/// Mines the commits of the repository at `root` not yet in `c` (the
/// newest [`MAX_COMMITS`] on a first run), oldest last; returns how many
/// were read. A repository without `.git` has no history: `Ok(0)`.
///
/// # Errors
/// The repository's history cannot be read.
pub fn mine(root: &Path, c: &mut CoChange) -> Result<usize, HistoryError> {
    let err = |e: git2::Error| HistoryError::Git {
        path: root.display().to_string(),
        message: e.message().to_string(),
    };
    let repo = match git2::Repository::discover(root) {
        Ok(r) => r,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(0),
        Err(e) => return Err(err(e)),
    };
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        return Ok(0); // no commit yet
    };
    let head_id = head.id().to_string();
    if c.head.as_deref() == Some(head_id.as_str()) {
        return Ok(0);
    }
    // libgit2's object cache (256 MiB by default; its size can only be set
    // through an `unsafe` call) held most of what mining cost: measured
    // 2026-11-25, `code-intel index` with nothing to embed on laravel's
    // `src/` checkout, mining 10,000 commits: peak 352 MB and 17.7 s with
    // the cache, 212 MB and 55 s without (the same statistics, byte for
    // byte). Mining runs once per repository (later syncs read only new
    // commits), niced, in the background after the vectors: the memory
    // counts against a server's peak, while queries are answered during the
    // extra seconds (only co-change reasons arrive that much later).
    git2::opts::enable_caching(false);
    let mut walk = repo.revwalk().map_err(err)?;
    walk.set_sorting(git2::Sort::TIME).map_err(err)?;
    walk.push(head.id()).map_err(err)?;
    if let Some(prev) = c.head.as_deref().and_then(|h| git2::Oid::from_str(h).ok())
        && repo.find_commit(prev).is_ok()
    {
        walk.hide(prev).map_err(err)?;
    }
    // The repository's own directory inside the git work tree (a repo
    // indexed from a subdirectory of a larger checkout).
    let prefix = repo
        .workdir()
        .and_then(|w| {
            root.canonicalize()
                .ok()?
                .strip_prefix(w.canonicalize().ok()?)
                .ok()
                .map(Path::to_path_buf)
        })
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}/"));
    let mut opts = git2::DiffOptions::new();
    opts.skip_binary_check(true).ignore_submodules(true);
    let mut read = 0;
    for oid in walk {
        if read >= MAX_COMMITS {
            break;
        }
        let commit = repo.find_commit(oid.map_err(err)?).map_err(err)?;
        if commit.parent_count() > 1 {
            continue;
        }
        read += 1;
        let tree = commit.tree().map_err(err)?;
        let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
        let diff = repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut opts))
            .map_err(err)?;
        if diff.deltas().len() > MAX_FILES_PER_COMMIT {
            continue;
        }
        let files: Vec<String> = diff
            .deltas()
            .filter_map(|d| {
                d.new_file()
                    .path()
                    .or_else(|| d.old_file().path())
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            })
            .filter_map(|p| match &prefix {
                Some(pre) => p.strip_prefix(pre.as_str()).map(str::to_string),
                None => Some(p),
            })
            .collect();
        c.add(&files, commit.time().seconds());
    }
    c.head = Some(head_id);
    c.reindex();
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn confidence_support_and_large_transactions() {
        let mut c = CoChange::default();
        let day = 86_400;
        let t = T0 + 20 * 365 * day;
        c.add(&s(&["model.php", "migration.php"]), t);
        c.add(&s(&["model.php", "migration.php", "view.blade.php"]), t);
        c.add(&s(&["model.php", "view.blade.php"]), t - 3650 * day);
        c.add(&s(&["model.php"]), t);
        let bulk: Vec<String> = (0..=MAX_FILES_PER_COMMIT)
            .map(|i| format!("f{i}"))
            .collect();
        c.add(&bulk, t);
        c.reindex();
        assert_eq!(c.commits, 4);
        let p = c.partners("model.php", 10);
        assert_eq!(p[0].0, "migration.php");
        // 2 of the model's 4 commits (the old one counts 2^-10).
        assert!(
            (p[0].1 - 2.0 / (3.0 + 2f32.powi(-10))).abs() < 1e-3,
            "{p:?}"
        );
        assert_eq!(p[0].2, 2.0);
        // view: two commits, one of them ten years old.
        assert_eq!(p[1].0, "view.blade.php");
        assert!(p[1].1 < p[0].1 && p[1].1 > 0.3, "{p:?}");
        assert!(c.partners("f0", 10).is_empty());
        assert!(c.partners("nowhere", 10).is_empty());
    }

    #[test]
    fn broad_commits_count_less_for_each_pair() {
        let mut c = CoChange::default();
        // Two sweeping commits of 21 files (each under the bulk limit), and
        // two focused ones of a file with its partner.
        let sweep: Vec<String> = (0..21).map(|i| format!("f{i}.php")).collect();
        c.add(&sweep, T0);
        c.add(&sweep, T0);
        c.add(&s(&["a.php", "b.php", "c.php", "d.php", "e.php"]), T0);
        c.add(&s(&["a.php", "b.php", "c.php", "d.php", "e.php"]), T0);
        c.reindex();
        // 20 partners each: every pair counts FULL_PARTNERS / 20.
        let p = c.partners("f0.php", 30);
        assert_eq!(p.len(), 20);
        let share = FULL_PARTNERS as f32 / 20.0;
        assert!(
            p.iter().all(|x| (x.1 - share).abs() < 1e-6 && x.2 == 2.0),
            "{p:?}"
        );
        // Five files: four partners each, counted whole.
        let p = c.partners("a.php", 30);
        assert_eq!(p.len(), 4);
        assert!(p.iter().all(|x| (x.1 - 1.0).abs() < 1e-6), "{p:?}");
    }

    #[test]
    fn stored_statistics_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = CoChange::load(dir.path());
        c.add(&s(&["a", "b"]), T0);
        c.add(&s(&["a", "b"]), T0);
        c.head = Some("abc".into());
        c.save(dir.path()).unwrap();
        // An outcome adds a transaction under the lock.
        CoChange::update(dir.path(), |c| {
            c.add(&s(&["a", "c"]), T0);
            c.add(&s(&["a", "c"]), T0);
            Ok(((), true))
        })
        .unwrap();
        let back = CoChange::load(dir.path());
        assert_eq!(back.partners("a", 5).len(), 2);
        assert_eq!(back.head.as_deref(), Some("abc"));
        assert_eq!(back.partners("a", 5)[0].0, "b");
    }

    #[test]
    fn recency_falls_with_the_files_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let day = 86_400;
        let mut c = CoChange::load(dir.path());
        c.add(&s(&["old.php"]), T0);
        // 60 files changed later, one commit a day; `new.php` last.
        for i in 0..60 {
            c.add(&s(&[&format!("f{i}.php")]), T0 + (i + 1) * day);
        }
        c.add(&s(&["new.php", "old2.php"]), T0 + 100 * day);
        c.add(&s(&["old2.php", "x.php"]), T0 + 2 * day); // an older commit, read later
        c.save(dir.path()).unwrap();
        let c = CoChange::load(dir.path());
        let r = |f: &str| c.recency(f);
        // 64 files: the scale is that of 100, 1 file. The newest commit's
        // two files: k = 2.
        assert!((r("new.php") - (-2.0f32).exp()).abs() < 1e-6);
        assert_eq!(r("old2.php"), r("new.php"), "a file's newest change counts");
        assert!(r("f59.php") < r("new.php") && r("f0.php") < r("f59.php"));
        // 63 files changed since `old.php`'s only change, with it 64.
        assert!((r("old.php") - (-64.0f32).exp()).abs() < 1e-9);
        assert_eq!(r("nowhere.php"), 0.0);
    }

    #[test]
    fn no_git_no_history() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = CoChange::default();
        assert_eq!(mine(dir.path(), &mut c).unwrap(), 0);
        assert!(c.head.is_none());
    }
}
