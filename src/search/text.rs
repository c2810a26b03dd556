//! Text search with ripgrep's libraries (grep-searcher, grep-regex, ignore):
//! regex or literal, path / glob / file-type filters, context lines.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{Glob, GlobMatcher};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;
use serde::Serialize;

use crate::config::Config;
use crate::lang::Lang;
use crate::repo::{PathError, Repo};

/// Longest line content returned, in chars (minified files have huge lines).
pub const MAX_LINE_CHARS: usize = 400;

/// Case handling, as ripgrep's `-s`, `-i` and `-S`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CaseMode {
    /// Case-sensitive (ripgrep's default).
    #[default]
    Sensitive,
    /// Case-insensitive.
    Insensitive,
    /// Insensitive unless the pattern has an uppercase letter.
    Smart,
}

/// What to search for and where.
#[derive(Debug, Clone, Default)]
pub struct TextSearch {
    pub pattern: String,
    /// Treat the pattern as a literal string, not a regex.
    pub literal: bool,
    pub case: CaseMode,
    /// Match whole words only.
    pub word: bool,
    /// Repo-relative file or directory; empty = whole repo.
    pub path: String,
    /// Glob on the repo-relative path (or on the file name when it has no
    /// `/`); a leading `!` excludes what it matches (`!composer.lock`), as
    /// ripgrep's `-g` does.
    pub glob: Option<String>,
    /// Language name (`python`, `php`, …) or ripgrep type (`rust`, `go`, …).
    pub file_type: Option<String>,
    /// Lines of context before and after each match.
    pub context_lines: usize,
    /// Matches returned at most; `total` still counts all.
    pub max_results: usize,
    /// Count the matches of built and vendored files ([`set_aside`]) apart
    /// instead of returning them.
    pub set_aside_built: bool,
    /// Search hidden files too (`.env.example`, `.github/`); sensitive and
    /// ignored files stay out either way.
    pub hidden: bool,
}

/// Whether a search leaves `rel`'s matches aside when asked to: a built or
/// vendored file (`public/vendor/livewire/livewire.js`, `app.min.js`, a
/// source map, SVG markup), whose minified lines were a trial agent's
/// whole-repository search's noise (bench/README.md § Honest agent trial).
/// Lock files are searched: agents look up a package's version there.
pub fn set_aside(rel: &str) -> bool {
    use crate::classify::FileClass;
    matches!(
        crate::classify::classify_path(rel).class,
        FileClass::Generated | FileClass::Vendored
    )
}

/// Matches a search counted and did not return ([`TextSearch::set_aside_built`]).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileCount {
    pub file: String,
    /// Matching lines in the file.
    pub matches: usize,
}

/// One matching line. `line` and `column` are 1-based; `column` counts chars.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TextMatch {
    pub file: String,
    pub line: u64,
    pub column: usize,
    pub content: String,
    pub context_before: Vec<String>,
    pub context_after: Vec<String>,
}

/// Result of a text search.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TextResult {
    pub matches: Vec<TextMatch>,
    /// Matching lines in all files (not capped by `max_results`).
    pub total: usize,
    /// Files with at least one match.
    pub files_with_matches: usize,
    /// True when `total` > number of returned matches.
    pub truncated: bool,
    /// Built and vendored files with matches, not in `matches`, `total`
    /// or `files_with_matches` ([`TextSearch::set_aside_built`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<FileCount>,
}

/// Errors of a text search; each tells the caller how to fix the call.
#[derive(Debug, thiserror::Error)]
pub enum TextSearchError {
    #[error("invalid regex `{pattern}`: {message} (set literal=true to search for the text as is)")]
    Regex { pattern: String, message: String },
    #[error(
        "regex `{pattern}` is too large: compiled it exceeds the size limit of {limit} MiB. Recovery: use a shorter repetition (`\\w{{50}}` rather than `\\w{{5000}}`), an ASCII class (`[A-Za-z0-9_]`), or literal=true",
        limit = REGEX_SIZE_LIMIT >> 20
    )]
    RegexTooLarge { pattern: String },
    #[error("invalid glob `{glob}`: {message}")]
    Glob { glob: String, message: String },
    #[error(
        "unknown file type `{0}`: use a language ({langs}) or a ripgrep type such as md, json, yaml",
        langs = crate::lang::Lang::names().join(", ")
    )]
    FileType(String),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("empty pattern: give a regex or a literal string")]
    EmptyPattern,
}

struct FileHits {
    path: PathBuf,
    hits: Vec<(u64, usize, String)>,
}

struct CollectSink<'a> {
    matcher: &'a RegexMatcher,
    hits: Vec<(u64, usize, String)>,
}

impl Sink for CollectSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let bytes = mat.bytes();
        let start = self
            .matcher
            .find(bytes)
            .ok()
            .flatten()
            .map_or(0, |m| m.start());
        let col = String::from_utf8_lossy(&bytes[..start]).chars().count() + 1;
        let line = String::from_utf8_lossy(bytes);
        self.hits.push((
            mat.line_number().unwrap_or(0),
            col,
            truncate_line(line.trim_end_matches(['\n', '\r'])),
        ));
        Ok(true)
    }
}

fn truncate_line(line: &str) -> String {
    if line.chars().count() > MAX_LINE_CHARS {
        line.chars().take(MAX_LINE_CHARS).collect::<String>() + "…"
    } else {
        line.to_string()
    }
}

/// Bytes a compiled regex may take. A pattern past it is refused while it
/// compiles, in time proportional to the limit: `\w{5000}` (Unicode word
/// characters) under grep-regex's default of 100 MiB compiled for 16.6 s
/// before failing; measured in this crate's dev build (2-core machine,
/// 2026-11-27), refusing it took 16 ms at 1 MiB, 29 at 2, 58 at 4 and
/// 158 at 10. 4 MiB keeps the refusal under 100 ms and still compiles
/// `\w{50}` or `[a-z]{5000}` (2 ms); `\w{100}` needs more (an ASCII class,
/// `[A-Za-z0-9_]{100}`, is small).
pub const REGEX_SIZE_LIMIT: usize = 4 << 20;

/// Bytes of the lazy DFA's cache while searching (the `regex` crate's
/// default is 2 MiB, grep-regex's 1,000 MiB); a pattern whose DFA needs
/// more is searched without it, more slowly, never refused.
const REGEX_DFA_SIZE_LIMIT: usize = 10 << 20;

/// Builds the matcher ripgrep would build for these options, within
/// [`REGEX_SIZE_LIMIT`].
///
/// # Errors
/// [`TextSearchError::Regex`] with the regex engine's message;
/// [`TextSearchError::RegexTooLarge`] past the size limit.
pub fn build_matcher(q: &TextSearch) -> Result<RegexMatcher, TextSearchError> {
    if q.pattern.is_empty() {
        return Err(TextSearchError::EmptyPattern);
    }
    let built = RegexMatcherBuilder::new()
        .case_insensitive(q.case == CaseMode::Insensitive)
        .case_smart(q.case == CaseMode::Smart)
        .fixed_strings(q.literal)
        .word(q.word)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build(&q.pattern);
    built.map_err(|e| {
        let message = e.to_string();
        // grep-regex reports the limit only in its message ("exceeds size
        // limit"); its error kinds do not separate it.
        if message.contains("size limit") {
            TextSearchError::RegexTooLarge {
                pattern: q.pattern.chars().take(80).collect(),
            }
        } else {
            TextSearchError::Regex {
                pattern: q.pattern.clone(),
                message,
            }
        }
    })
}

enum TypeFilter {
    Lang(Lang),
    Ripgrep(ignore::types::Types),
}

impl TypeFilter {
    fn new(name: &str) -> Result<TypeFilter, TextSearchError> {
        if let Some(l) = Lang::all().iter().find(|l| l.matches_filter(name)) {
            return Ok(TypeFilter::Lang(*l));
        }
        let mut b = ignore::types::TypesBuilder::new();
        b.add_defaults();
        if !b.definitions().iter().any(|d| d.name() == name) {
            return Err(TextSearchError::FileType(name.to_string()));
        }
        b.select(name);
        b.build()
            .map(TypeFilter::Ripgrep)
            .map_err(|_| TextSearchError::FileType(name.to_string()))
    }

    fn accepts(&self, path: &Path) -> bool {
        match self {
            TypeFilter::Lang(l) => Lang::from_path(path).is_some_and(|p| p.name() == l.name()),
            TypeFilter::Ripgrep(t) => t.matched(path, false).is_whitelist(),
        }
    }
}

/// Searches the repository. Files are searched in parallel; results are
/// ordered by path, then line.
///
/// # Errors
/// Invalid regex, glob, file type or path.
pub fn search(repo: &Repo, config: &Config, q: &TextSearch) -> Result<TextResult, TextSearchError> {
    let matcher = build_matcher(q)?;
    let start = repo.resolve(&q.path)?;
    // (matcher, whether it matches the whole path, whether it excludes)
    let glob: Option<(GlobMatcher, bool, bool)> = match &q.glob {
        Some(g) => {
            let (exclude, pattern) = match g.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, g.as_str()),
            };
            let compiled = Glob::new(pattern).map_err(|e| TextSearchError::Glob {
                glob: g.clone(),
                message: e.to_string(),
            })?;
            Some((compiled.compile_matcher(), pattern.contains('/'), exclude))
        }
        None => None,
    };
    let types = q.file_type.as_deref().map(TypeFilter::new).transpose()?;
    let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let walker = repo
        .walker(&start, config)?
        .hidden(!q.hidden)
        .build_parallel();
    // Searching is CPU and I/O bound; ignore's parallel walker runs it on
    // its own thread pool, one searcher per thread (as ripgrep does).
    walker.run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .build();
        let found = &found;
        let glob = &glob;
        let types = &types;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            if let Some((g, full, exclude)) = glob {
                let rel = repo.rel(path);
                let subject = if *full {
                    rel.as_str()
                } else {
                    rel.rsplit('/').next().unwrap_or("")
                };
                if g.is_match(subject) == *exclude {
                    return WalkState::Continue;
                }
            }
            if types.as_ref().is_some_and(|t| !t.accepts(path)) {
                return WalkState::Continue;
            }
            let mut sink = CollectSink {
                matcher: &matcher,
                hits: Vec::new(),
            };
            // Unreadable files are skipped, as ripgrep does (it warns).
            if searcher.search_path(&matcher, path, &mut sink).is_ok() && !sink.hits.is_empty() {
                found
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(FileHits {
                        path: path.to_path_buf(),
                        hits: sink.hits,
                    });
            }
            WalkState::Continue
        })
    });
    let mut files = found.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut kept_aside = Vec::new();
    if q.set_aside_built {
        files.retain(|f| {
            let rel = repo.rel(&f.path);
            if !set_aside(&rel) {
                return true;
            }
            kept_aside.push(FileCount {
                file: rel,
                matches: f.hits.len(),
            });
            false
        });
    }
    let mut r = with_context(repo, &files, q);
    r.set_aside = kept_aside;
    Ok(r)
}

/// The matches of `files` (in order, at most `q.max_results`), each with
/// up to `q.context_lines` lines of context; `total` counts every match.
/// As in ripgrep's output, a line is shown once per file: a match's context
/// before starts after what the previous match showed, and its context after
/// stops at the next match shown (which carries that line itself).
fn with_context(repo: &Repo, files: &[FileHits], q: &TextSearch) -> TextResult {
    let total: usize = files.iter().map(|f| f.hits.len()).sum();
    let files_with_matches = files.len();
    let mut matches = Vec::new();
    'outer: for f in files {
        let lines = if q.context_lines > 0 {
            read_lines(&f.path)
        } else {
            Vec::new()
        };
        // 0-based index of the first line this file has not shown yet.
        let mut shown_until = 0;
        for (i, (line, column, content)) in f.hits.iter().enumerate() {
            if matches.len() >= q.max_results {
                break 'outer;
            }
            let idx = (*line as usize).saturating_sub(1);
            let (before, after) = if lines.is_empty() || idx >= lines.len() {
                (Vec::new(), Vec::new())
            } else {
                let lo = idx.saturating_sub(q.context_lines).max(shown_until);
                let mut hi = (idx + 1 + q.context_lines).min(lines.len());
                if matches.len() + 1 < q.max_results
                    && let Some((next, _, _)) = f.hits.get(i + 1)
                {
                    hi = hi.min((*next as usize).saturating_sub(1)).max(idx + 1);
                }
                (
                    lines[lo.min(idx)..idx].to_vec(),
                    lines[idx + 1..hi].to_vec(),
                )
            };
            shown_until = idx + 1 + after.len();
            matches.push(TextMatch {
                file: repo.rel(&f.path),
                line: *line,
                column: *column,
                content: content.clone(),
                context_before: before,
                context_after: after,
            });
        }
    }
    TextResult {
        truncated: total > matches.len(),
        matches,
        total,
        files_with_matches,
        set_aside: Vec::new(),
    }
}

fn read_lines(path: &Path) -> Vec<String> {
    crate::repo::read_regular(path)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .map(truncate_line)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/a.py"),
            "def login():\n    return Login()\n# end\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("src/b.php"), "<?php\nfunction login() {}\n").unwrap();
        std::fs::write(dir.path().join("bin.dat"), b"login\0\x01\x02").unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        (dir, repo)
    }

    fn q(pattern: &str) -> TextSearch {
        TextSearch {
            pattern: pattern.into(),
            max_results: 100,
            ..Default::default()
        }
    }

    #[test]
    fn a_regex_past_the_size_limit_is_refused_at_once() {
        let (_d, repo) = setup();
        let started = std::time::Instant::now();
        let err = search(&repo, &Config::default(), &q("\\w{5000}")).unwrap_err();
        let took = started.elapsed();
        assert!(
            matches!(err, TextSearchError::RegexTooLarge { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("4 MiB"), "{err}");
        // About 60 ms in the dev build; 1 s tells a refusal at compile time
        // from the 16.6 s it took without the limit on a noisy machine.
        assert!(took < std::time::Duration::from_secs(1), "{took:?}");
        // Ordinary repetitions still compile and search.
        for ok in ["\\w{5}", "\\w{50}", "[A-Za-z0-9_]{100}", "[a-z]{5000}"] {
            assert!(search(&repo, &Config::default(), &q(ok)).is_ok(), "{ok}");
        }
    }

    #[test]
    fn finds_with_columns_and_context() {
        let (_d, repo) = setup();
        let mut query = q("Login");
        query.context_lines = 1;
        let r = search(&repo, &Config::default(), &query).unwrap();
        assert_eq!(r.total, 1);
        let m = &r.matches[0];
        assert_eq!((m.file.as_str(), m.line, m.column), ("src/a.py", 2, 12));
        assert_eq!(m.context_before, vec!["def login():"]);
        assert_eq!(m.context_after, vec!["# end"]);
    }

    #[test]
    fn context_shows_each_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=12)
            .map(|i| format!("l{i}{}\n", if [3, 4, 8].contains(&i) { " hit" } else { "" }))
            .collect();
        std::fs::write(dir.path().join("a.txt"), text).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let mut query = q("hit");
        query.context_lines = 3;
        let r = search(&repo, &Config::default(), &query).unwrap();
        let shown: Vec<(Vec<String>, u64, Vec<String>)> = r
            .matches
            .iter()
            .map(|m| (m.context_before.clone(), m.line, m.context_after.clone()))
            .collect();
        let v = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            shown,
            [
                (v(&["l1", "l2"]), 3, v(&[])),
                (v(&[]), 4, v(&["l5", "l6", "l7"])),
                (v(&[]), 8, v(&["l9", "l10", "l11"])),
            ]
        );
        // Cut at one match, the last one shown keeps its whole context.
        query.max_results = 1;
        let r = search(&repo, &Config::default(), &query).unwrap();
        assert_eq!(r.matches[0].context_after, v(&["l4 hit", "l5", "l6"]));
    }

    #[test]
    fn filters_case_type_glob_and_skips_binary() {
        let (_d, repo) = setup();
        let mut query = q("login");
        query.case = CaseMode::Insensitive;
        assert_eq!(search(&repo, &Config::default(), &query).unwrap().total, 3);
        query.file_type = Some("php".into());
        assert_eq!(search(&repo, &Config::default(), &query).unwrap().total, 1);
        query.file_type = None;
        query.glob = Some("*.py".into());
        assert_eq!(search(&repo, &Config::default(), &query).unwrap().total, 2);
        // `!` excludes, as ripgrep's -g: the rest of the 3.
        query.glob = Some("!*.py".into());
        assert_eq!(search(&repo, &Config::default(), &query).unwrap().total, 1);
        let mut capped = q("login");
        capped.max_results = 1;
        let r = search(&repo, &Config::default(), &capped).unwrap();
        assert!(r.truncated && r.matches.len() == 1 && r.total == 2);
    }

    #[test]
    fn invalid_regex_explains() {
        let (_d, repo) = setup();
        let err = search(&repo, &Config::default(), &q("fn("))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("invalid regex") && err.contains("literal=true"),
            "{err}"
        );
        let mut lit = q("login(");
        lit.literal = true;
        assert_eq!(search(&repo, &Config::default(), &lit).unwrap().total, 2);
    }
}
