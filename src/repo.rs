//! The repository root: path confinement, repo-relative names and the
//! gitignore-aware walker every tool and the indexer share.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;

use crate::config::{Config, STATE_DIR};

/// Ignore files honoured in addition to `.gitignore` and `.ignore`
/// (other agents' ignore files, and ours; README § Configuration).
pub const EXTRA_IGNORE_FILES: [&str; 3] = [".cursorignore", ".aiderignore", ".codeintelignore"];

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
}

/// A repository root (canonical, absolute).
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
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
        Ok(Repo { root })
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
        Ok(canonical)
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
        Ok(builder)
    }
}

/// True when the first 8 KiB of the file hold a NUL byte.
pub fn is_binary(path: &Path) -> std::io::Result<bool> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = [0u8; BINARY_SNIFF_BYTES];
    let mut filled = 0;
    while filled < buf.len() {
        let n = file.read(&mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(buf[..filled].contains(&0))
}

/// True when bytes hold a NUL in their first 8 KiB.
pub fn bytes_look_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        check_escape(&repo, "src/../../x");
        check_escape(&repo, "/etc/passwd");
        #[cfg(unix)]
        check_escape(&repo, "link/secret.txt");
        assert!(matches!(
            repo.resolve("nope.py"),
            Err(PathError::NotFound(_))
        ));
    }
}
