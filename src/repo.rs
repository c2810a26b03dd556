//! The repository root: path confinement, repo-relative names and the
//! gitignore-aware walker every tool and the indexer share.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;

use crate::config::{Config, STATE_DIR};

/// Ignore files honoured in addition to `.gitignore` and `.ignore`
/// (other agents' ignore files, and ours; README § Configuration).
pub const EXTRA_IGNORE_FILES: [&str; 3] = [".cursorignore", ".aiderignore", ".codeintelignore"];

/// Files never returned by a tool nor embedded (gitignore-style globs on
/// the repo-relative path): environment files, private keys and
/// certificates, credential and token files of common tools, and `.git/`
/// internals. `sensitive_patterns` in the config adds more.
pub const SENSITIVE_PATTERNS: &[&str] = &[
    ".env",
    ".env.*",
    "!.env.example",
    "!.env.sample",
    "!.env.dist",
    "!.env.template",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    "auth.json",
    "credentials",
    "credentials.json",
    "*.credentials.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    ".git",
    ".git/**",
    // The server's own state (sessions, logs, the index): never a result.
    ".code-intel",
    ".code-intel/**",
];

/// Longest path argument accepted, in bytes (Linux's PATH_MAX is 4,096;
/// a repository path longer than this is not one a user means). The fuzz
/// corpus's 6,000-character path of 3,000 segments took over 60 s to
/// resolve before this bound (tests/e2e/test_reliability.py).
pub const MAX_PATH_BYTES: usize = 1024;

/// Most components a path argument may have (the deepest file of
/// laravel/framework, django/django and symfony/symfony is under 20 levels).
pub const MAX_PATH_DEPTH: usize = 64;

/// Bytes sniffed for a NUL to call a file binary (git and ripgrep use the
/// same heuristic; 8 KiB as in git's `buffer_is_binary`).
const BINARY_SNIFF_BYTES: usize = 8192;

/// Errors for a path argument.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "path `{0}` is outside the repository: give a path relative to the repo root, without `..`"
    )]
    Escape(String),
    #[error("path `{0}` does not exist in the repository")]
    NotFound(String),
    #[error("repository root {path} is not usable: {source}")]
    Root {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid exclude pattern `{pattern}`: {source}")]
    Pattern {
        pattern: String,
        source: ignore::Error,
    },
    #[error(
        "`{0}` is withheld: it matches the sensitive-file policy (secrets, keys, credentials, .git/, .code-intel/); code-intel never returns or embeds such files (sensitive_patterns in the config adds patterns)"
    )]
    Sensitive(String),
    #[error(
        "path of {bytes} bytes and {depth} components is too long: at most {max_bytes} bytes and {max_depth} components",
        max_bytes = MAX_PATH_BYTES,
        max_depth = MAX_PATH_DEPTH
    )]
    TooLong { bytes: usize, depth: usize },
}

/// The compiled sensitive-file policy: a path is sensitive when a pattern
/// matches it (or its file name) and no `!` pattern does.
#[derive(Debug, Clone)]
struct Sensitive {
    deny: GlobSet,
    allow: GlobSet,
}

impl Sensitive {
    fn new(extra: &[String]) -> Sensitive {
        let (mut deny, mut allow) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for p in SENSITIVE_PATTERNS
            .iter()
            .copied()
            .chain(extra.iter().map(String::as_str))
        {
            let (set, pat) = match p.strip_prefix('!') {
                Some(rest) => (&mut allow, rest),
                None => (&mut deny, p),
            };
            // A pattern without `/` matches the file name anywhere.
            let pat = if pat.contains('/') {
                pat.trim_start_matches('/').to_string()
            } else {
                format!("**/{pat}")
            };
            match Glob::new(&pat) {
                Ok(g) => {
                    set.add(g);
                }
                Err(e) => tracing::warn!("sensitive pattern `{p}` ignored: {e}"),
            }
        }
        Sensitive {
            deny: deny.build().unwrap_or_else(|_| GlobSet::empty()),
            allow: allow.build().unwrap_or_else(|_| GlobSet::empty()),
        }
    }

    /// `**/name` matches the name at any depth, the root included.
    fn matches(&self, rel: &str) -> bool {
        self.deny.is_match(rel) && !self.allow.is_match(rel)
    }
}

/// A repository root (canonical, absolute) and its sensitive-file policy.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    sensitive: Arc<Sensitive>,
}

impl Repo {
    /// Opens `root`, which must be an existing directory.
    ///
    /// # Errors
    /// [`PathError::Root`] when the directory cannot be canonicalised.
    pub fn open(root: &Path) -> Result<Repo, PathError> {
        let root = root.canonicalize().map_err(|source| PathError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Repo {
            root,
            sensitive: Arc::new(Sensitive::new(&[])),
        })
    }

    /// The same repository with `sensitive_patterns` added to the built-in
    /// policy ([`SENSITIVE_PATTERNS`]).
    pub fn with_sensitive_patterns(mut self, extra: &[String]) -> Repo {
        self.sensitive = Arc::new(Sensitive::new(extra));
        self
    }

    /// True when the repo-relative path is withheld by the sensitive-file
    /// policy.
    pub fn is_sensitive(&self, rel: &str) -> bool {
        self.sensitive.matches(rel)
    }

    /// The canonical absolute root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/.code-intel`.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// Resolves a user-supplied path (repo-relative, or absolute inside the
    /// repo; `""` and `"."` mean the root) to an existing absolute path.
    ///
    /// # Errors
    /// [`PathError::Escape`] for `..` components, absolute paths elsewhere
    /// and symlinks that lead outside the root; [`PathError::NotFound`] when
    /// nothing exists there.
    pub fn resolve(&self, arg: &str) -> Result<PathBuf, PathError> {
        let arg_path = Path::new(arg);
        let depth = arg_path.components().count();
        if arg.len() > MAX_PATH_BYTES || depth > MAX_PATH_DEPTH {
            return Err(PathError::TooLong {
                bytes: arg.len(),
                depth,
            });
        }
        if arg_path
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(PathError::Escape(arg.to_string()));
        }
        let joined = if arg_path.is_absolute() {
            arg_path.to_path_buf()
        } else {
            self.root.join(arg_path)
        };
        if arg_path.is_absolute() && !joined.starts_with(&self.root) {
            // The root may be reached through a symlinked prefix: compare canonically.
            match joined.canonicalize() {
                Ok(c) if c.starts_with(&self.root) => {}
                _ => return Err(PathError::Escape(arg.to_string())),
            }
        }
        let canonical = joined
            .canonicalize()
            .map_err(|_| PathError::NotFound(arg.to_string()))?;
        if !canonical.starts_with(&self.root) {
            return Err(PathError::Escape(arg.to_string()));
        }
        let rel = self.rel(&canonical);
        if !rel.is_empty() && self.is_sensitive(&rel) {
            return Err(PathError::Sensitive(rel));
        }
        Ok(canonical)
    }

    /// Resolves a file about to be written, which may not exist yet, perhaps
    /// in directories that do not exist yet (`app/Observers/X.php` before
    /// `app/Observers/`): the file itself when it exists, else its nearest
    /// existing ancestor (canonical, inside the root) with the missing
    /// components appended. Returns the repo-relative path and whether the
    /// file exists.
    ///
    /// # Errors
    /// As [`Repo::resolve`]: `..` or an ancestor outside the root
    /// ([`PathError::Escape`]), a withheld file ([`PathError::Sensitive`]).
    pub fn resolve_for_write(&self, arg: &str) -> Result<(String, bool), PathError> {
        // An entry that exists but does not resolve (a dangling symlink)
        // would be written through: a write target must be absent or
        // resolve inside the root.
        let present = |p: &Path| self.root.join(p).symlink_metadata().is_ok();
        // Bounded first: the walk below resolves every ancestor.
        match self.resolve(arg) {
            Ok(abs) => return Ok((self.rel(&abs), abs.is_file())),
            Err(PathError::NotFound(_)) if !present(Path::new(arg)) => {}
            Err(PathError::NotFound(_)) => return Err(PathError::Escape(arg.to_string())),
            Err(e) => return Err(e),
        }
        let path = Path::new(arg);
        let mut missing = Vec::new();
        for dir in path.ancestors().skip(1) {
            if let Some(name) = path
                .ancestors()
                .find(|a| a.parent() == Some(dir))
                .and_then(Path::file_name)
            {
                missing.push(name.to_string_lossy().into_owned());
            }
            let text = dir.to_string_lossy();
            // The nearest ancestor that exists decides: one that escapes the
            // root (a symlink to elsewhere) or is withheld is the answer,
            // not a shorter ancestor inside the root.
            let base = match self.resolve(&text) {
                Err(PathError::NotFound(_)) if !present(dir) => continue,
                Err(PathError::NotFound(_)) => return Err(PathError::Escape(arg.to_string())),
                resolved => resolved?,
            };
            let mut rel = self.rel(&base);
            for part in missing.iter().rev() {
                if !rel.is_empty() {
                    rel.push('/');
                }
                rel.push_str(part);
            }
            if self.is_sensitive(&rel) {
                return Err(PathError::Sensitive(rel));
            }
            return Ok((rel, false));
        }
        Err(PathError::Escape(arg.to_string()))
    }

    /// Repo-relative name with `/` separators (`""` for the root itself).
    pub fn rel(&self, abs: &Path) -> String {
        let rel = abs.strip_prefix(&self.root).unwrap_or(abs);
        let mut out = String::new();
        for (i, c) in rel.components().enumerate() {
            if i > 0 {
                out.push('/');
            }
            out.push_str(&c.as_os_str().to_string_lossy());
        }
        out
    }

    /// A walker over `start` honouring `.gitignore`, `.ignore`,
    /// [`EXTRA_IGNORE_FILES`] and `exclude_patterns`, skipping hidden files
    /// and `.code-intel/` (ripgrep's defaults otherwise). Symlinks are not
    /// followed, so a link cannot lead the walk outside the repo.
    ///
    /// # Errors
    /// [`PathError::Pattern`] for an invalid exclude pattern.
    pub fn walker(&self, start: &Path, config: &Config) -> Result<WalkBuilder, PathError> {
        let mut builder = WalkBuilder::new(start);
        // .gitignore applies even where there is no .git (a copied project).
        builder.follow_links(false).require_git(false);
        for name in EXTRA_IGNORE_FILES {
            builder.add_custom_ignore_filename(name);
        }
        let mut overrides = OverrideBuilder::new(&self.root);
        for pattern in config
            .exclude_patterns
            .iter()
            .map(String::as_str)
            .chain(std::iter::once("/.code-intel/"))
        {
            overrides
                .add(&format!("!{pattern}"))
                .map_err(|source| PathError::Pattern {
                    pattern: pattern.to_string(),
                    source,
                })?;
        }
        let overrides = overrides.build().map_err(|source| PathError::Pattern {
            pattern: config.exclude_patterns.join(", "),
            source,
        })?;
        builder.overrides(overrides);
        // Sensitive files are never walked: not searched, parsed or embedded.
        let sensitive = Arc::clone(&self.sensitive);
        let root = self.root.clone();
        builder.filter_entry(move |e| {
            let rel = e.path().strip_prefix(&root).unwrap_or(e.path());
            let rel = rel.to_string_lossy().replace('\\', "/");
            rel.is_empty() || !sensitive.matches(&rel)
        });
        Ok(builder)
    }
}

/// Opens `path` for reading if it is a regular file (after symlinks).
///
/// # Errors
/// `InvalidInput` for FIFOs, sockets and devices, whose reads can block
/// forever or never end; the I/O error otherwise.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (FIFO, socket or device)",
        ));
    }
    std::fs::File::open(path)
}

/// Reads a regular file whole (see [`open_regular`]).
///
/// # Errors
/// As [`open_regular`], or the read's I/O error.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// True when bytes hold a NUL in their first 8 KiB.
pub fn bytes_look_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// Why a file's lines cannot be read (the `read_file` rule).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(
        "`{0}` is a directory: give a file (get_symbols or analyze_structure list a directory)"
    )]
    Directory(String),
    #[error("cannot read `{0}`: {1}")]
    Io(String, std::io::Error),
    #[error("`{0}` is binary")]
    Binary(String),
    #[error("start_line {start} is past the end of `{file}` ({total} lines)")]
    PastEnd {
        file: String,
        start: usize,
        total: usize,
    },
}

/// A text file's lines and the 1-based inclusive range asked for.
#[derive(Debug)]
pub struct TextLines {
    /// Repo-relative path.
    pub rel: String,
    pub lines: Vec<String>,
    /// 1-based first line (1 when not given).
    pub start: usize,
    /// 1-based last line, at most the file's length (its length when not
    /// given; `start - 1` for an empty file).
    pub end: usize,
}

impl Repo {
    /// Lines `start..=end` (1-based) of a regular text file in the repository.
    ///
    /// # Errors
    /// A path outside the repository, withheld or too long; a directory; an
    /// unreadable or non-regular file; a binary file (NUL in the first 8 KiB);
    /// a start line past the end.
    pub fn read_lines(
        &self,
        file: &str,
        start: Option<usize>,
        end: Option<usize>,
    ) -> Result<TextLines, ReadError> {
        let abs = self.resolve(file)?;
        if abs.is_dir() {
            return Err(ReadError::Directory(file.to_string()));
        }
        let bytes = read_regular(&abs).map_err(|e| ReadError::Io(file.to_string(), e))?;
        if bytes_look_binary(&bytes) {
            return Err(ReadError::Binary(file.to_string()));
        }
        let lines: Vec<String> = String::from_utf8_lossy(&bytes)
            .lines()
            .map(str::to_string)
            .collect();
        let (start, end) =
            line_range(lines.len(), start, end).map_err(|total| ReadError::PastEnd {
                file: file.to_string(),
                start: start.unwrap_or(1),
                total,
            })?;
        Ok(TextLines {
            rel: self.rel(&abs),
            lines,
            start,
            end,
        })
    }
}

/// The 1-based inclusive range of a `total`-line file that `start` and
/// `end` ask for: start at least 1, end at most `total`; `Err(total)` when
/// the start is past the end (an empty file reads from line 1).
fn line_range(
    total: usize,
    start: Option<usize>,
    end: Option<usize>,
) -> Result<(usize, usize), usize> {
    let start = start.unwrap_or(1).max(1);
    if start > total.max(1) {
        return Err(total);
    }
    let end = end.unwrap_or(total).min(total).max(start - 1);
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_clamped_to_the_file() {
        for (total, start, end, want) in [
            (10, None, None, Ok((1, 10))),
            (10, Some(0), None, Ok((1, 10))),
            (10, Some(3), Some(5), Ok((3, 5))),
            (10, Some(3), Some(99), Ok((3, 10))),
            (10, Some(5), Some(2), Ok((5, 4))),
            (10, Some(10), None, Ok((10, 10))),
            (10, Some(11), None, Err(10)),
            (0, None, None, Ok((1, 0))),
            (0, Some(2), None, Err(0)),
        ] {
            assert_eq!(
                line_range(total, start, end),
                want,
                "{total} {start:?} {end:?}"
            );
        }
    }

    /// A FIFO is refused at once instead of blocking the reader forever.
    #[test]
    fn fifos_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.php");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        std::fs::write(dir.path().join("a.php"), "<?php").unwrap();
        assert_eq!(read_regular(&dir.path().join("a.php")).unwrap(), b"<?php");
    }

    /// Path arguments are bounded before any file-system call, and the
    /// server's own state is withheld like `.git/`.
    #[test]
    fn long_paths_and_state_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".code-intel/sessions")).unwrap();
        std::fs::write(dir.path().join(".code-intel/sessions/a.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.path().join("app")).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let deep = format!("{}x.php", "a/".repeat(3000));
        let started = std::time::Instant::now();
        for arg in [deep.as_str(), &"b".repeat(MAX_PATH_BYTES + 1)] {
            assert!(
                matches!(repo.resolve(arg), Err(PathError::TooLong { .. })),
                "{}",
                arg.len()
            );
            assert!(matches!(
                repo.resolve_for_write(arg),
                Err(PathError::TooLong { .. })
            ));
        }
        assert!(started.elapsed().as_secs() < 5);
        let ok = format!("app/{}x.php", "a/".repeat(MAX_PATH_DEPTH - 3));
        assert_eq!(repo.resolve_for_write(&ok).unwrap(), (ok.clone(), false));
        for arg in [".code-intel", ".code-intel/sessions/a.json", ".git"] {
            std::fs::create_dir_all(dir.path().join(".git")).unwrap();
            assert!(
                matches!(repo.resolve(arg), Err(PathError::Sensitive(_))),
                "{arg}"
            );
        }
    }

    fn check_escape(repo: &Repo, arg: &str) {
        match repo.resolve(arg) {
            Err(PathError::Escape(_)) => {}
            other => panic!("{arg}: expected escape, got {other:?}"),
        }
    }

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.py"), "x = 1\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let repo = Repo::open(dir.path()).unwrap();

        assert_eq!(repo.rel(&repo.resolve("src/a.py").unwrap()), "src/a.py");
        assert_eq!(repo.rel(&repo.resolve("").unwrap()), "");
        let abs = repo.root().join("src/a.py");
        assert_eq!(
            repo.rel(&repo.resolve(abs.to_str().unwrap()).unwrap()),
            "src/a.py"
        );
        check_escape(&repo, "../x");
        for (path, withheld) in [
            (".env", true),
            ("config/.env.production", true),
            (".env.example", false),
            ("deploy/server.pem", true),
            (".git/config", true),
            ("app/auth/keys.py", false),
            ("auth.json", true),
        ] {
            assert_eq!(repo.is_sensitive(path), withheld, "{path}");
        }
        std::fs::write(dir.path().join(".env"), "APP_KEY=secret").unwrap();
        assert!(matches!(repo.resolve(".env"), Err(PathError::Sensitive(_))));
        let extra = repo.clone().with_sensitive_patterns(&["*.secret".into()]);
        assert!(extra.is_sensitive("a/b.secret") && !repo.is_sensitive("a/b.secret"));
        check_escape(&repo, "src/../../x");
        check_escape(&repo, "/etc/passwd");
        #[cfg(unix)]
        check_escape(&repo, "link/secret.txt");
        assert!(matches!(
            repo.resolve("nope.py"),
            Err(PathError::NotFound(_))
        ));
    }

    /// A write target under a symlink that leads outside the root, or at a
    /// dangling one, escapes: the nearest existing ancestor decides, not a
    /// shorter one inside the root (found by the property below).
    #[test]
    fn write_targets_through_symlinks_escape() {
        let (_, _, repo) = fixture();
        for arg in [
            "link/new.php",
            "link//etc",
            "link/a/b.php",
            "dangling",
            "dangling/x.php",
        ] {
            assert!(
                matches!(repo.resolve_for_write(arg), Err(PathError::Escape(_))),
                "{arg}: {:?}",
                repo.resolve_for_write(arg)
            );
        }
        assert_eq!(
            repo.resolve_for_write("app/Models/New.php").unwrap(),
            ("app/Models/New.php".to_string(), false)
        );
        assert_eq!(
            repo.resolve_for_write("app/Http/New/X.php").unwrap(),
            ("app/Http/New/X.php".to_string(), false)
        );
    }

    /// One repository for every generated case: files, a directory, a
    /// symlink that leads outside the root, and a withheld `.env`.
    fn fixture() -> &'static (tempfile::TempDir, tempfile::TempDir, Repo) {
        static FIXTURE: std::sync::OnceLock<(tempfile::TempDir, tempfile::TempDir, Repo)> =
            std::sync::OnceLock::new();
        FIXTURE.get_or_init(|| {
            let (root, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            std::fs::create_dir_all(root.path().join("app/Models")).unwrap();
            std::fs::write(root.path().join("app/Models/Order.php"), "<?php\n").unwrap();
            std::fs::write(root.path().join(".env"), "APP_KEY=x\n").unwrap();
            std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
            std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
            std::os::unix::fs::symlink(outside.path().join("gone"), root.path().join("dangling"))
                .unwrap();
            let repo = Repo::open(root.path()).unwrap();
            (root, outside, repo)
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]

        /// Whatever path an agent passes, a resolved path is inside the
        /// root and not withheld, and a write target's repo-relative path
        /// has no `..` and stays inside the root when joined to it.
        #[test]
        fn resolved_paths_stay_inside_the_root(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "app", "Models", "Order.php", "New.php", "..", ".", "", "link", "dangling", "secret.txt",
                ".env", "注文", "/", "//", "/etc", "~", "a b", "\\", "x".repeat(300).leak(),
            ]),
            0..8,
        )) {
            let (root, _, repo) = fixture();
            let arg = parts.join("/");
            let root = root.path().canonicalize().unwrap();
            if let Ok(p) = repo.resolve(&arg) {
                proptest::prop_assert!(p.starts_with(&root), "{arg} -> {}", p.display());
                proptest::prop_assert!(!repo.is_sensitive(&repo.rel(&p)), "{arg}");
            }
            if let Ok((rel, _)) = repo.resolve_for_write(&arg) {
                proptest::prop_assert!(!rel.split('/').any(|c| c == ".."), "{arg} -> {rel}");
                let joined = root.join(&rel);
                let existing = joined.ancestors().find(|a| a.exists()).unwrap().canonicalize().unwrap();
                proptest::prop_assert!(existing.starts_with(&root), "{arg} -> {rel}");
            }
        }
    }
}
