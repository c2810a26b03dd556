//! The symbol cache: parsed files keyed by path, size and mtime, and the
//! walk over a path's source files.

use super::*;

/// Errors of symbol look-ups.
#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

#[derive(Clone)]
pub(super) struct Cached {
    pub(super) size: u64,
    pub(super) mtime: Option<SystemTime>,
    pub(super) symbols: Option<Arc<FileSymbols>>,
}

/// Parsed symbols per file, reused while a file's size and mtime are
/// unchanged. Shared by every tool call of a server.
#[derive(Default)]
pub struct SymbolCache {
    pub(super) files: Mutex<HashMap<PathBuf, Cached>>,
}

impl SymbolCache {
    /// Symbols of one file; `None` for files without a supported language,
    /// binary files and files over `max_file_size` bytes.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn get(
        &self,
        repo: &Repo,
        abs: &Path,
        max_file_size: u64,
    ) -> Result<Option<Arc<FileSymbols>>, SymbolError> {
        let read_err = |source| SymbolError::Read {
            path: repo.rel(abs),
            source,
        };
        let meta = std::fs::metadata(abs).map_err(read_err)?;
        let mtime = meta.modified().ok();
        if let Some(c) = self.lock().get(abs)
            && c.size == meta.len()
            && c.mtime == mtime
        {
            return Ok(c.symbols.clone());
        }
        let symbols = match Lang::from_path(abs) {
            Some(lang) if meta.len() <= max_file_size => {
                let bytes = repo::read_regular(abs).map_err(read_err)?;
                if repo::bytes_look_binary(&bytes) {
                    None
                } else {
                    let source = String::from_utf8_lossy(&bytes);
                    Some(Arc::new(extract(lang, &source, &repo.rel(abs))))
                }
            }
            _ => None,
        };
        self.lock().insert(
            abs.to_path_buf(),
            Cached {
                size: meta.len(),
                mtime,
                symbols: symbols.clone(),
            },
        );
        Ok(symbols)
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        // A panic while holding the lock leaves a usable map: recover it.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Symbols of every supported file under `start` (a file or directory),
    /// parsed on all cores, ordered by repo-relative path.
    ///
    /// # Errors
    /// An invalid exclude pattern.
    pub fn scan(
        &self,
        repo: &Repo,
        config: &Config,
        start: &Path,
        lang_filter: Option<&str>,
    ) -> Result<Vec<(String, Arc<FileSymbols>)>, SymbolError> {
        let files = source_files(repo, config, start, lang_filter)?;
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let per = files.len().div_ceil(threads).max(1);
        // Parsing is CPU-bound: scoped threads, one slice of files each.
        let mut out: Vec<(String, Arc<FileSymbols>)> = std::thread::scope(|s| {
            let handles: Vec<_> = files
                .chunks(per)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .filter_map(|p| {
                                // Unreadable files (deleted mid-scan) are skipped.
                                let syms = self.get(repo, p, config.max_file_size).ok()??;
                                Some((repo.rel(p), syms))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// Files under `start` with a supported language (and matching
/// `lang_filter`), walked with the repo's ignore rules.
///
/// # Errors
/// An invalid exclude pattern.
pub fn source_files(
    repo: &Repo,
    config: &Config,
    start: &Path,
    lang_filter: Option<&str>,
) -> Result<Vec<PathBuf>, SymbolError> {
    let mut files = Vec::new();
    for entry in repo.walker(start, config)?.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(lang) = Lang::from_path(entry.path()) else {
            continue;
        };
        if lang_filter.is_some_and(|f| !lang.matches_filter(f)) {
            continue;
        }
        files.push(entry.into_path());
    }
    Ok(files)
}
