//! Where frameworks put new code: whether a new file's path follows a
//! convention of the repository (PSR-4 roots of `composer.json`, Laravel's
//! application directories, test directories), so the write gate can allow
//! it in a directory that does not exist yet (docs/sessions.md § Gate).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::classify::classify_path;
use crate::repo::Repo;
use crate::session::WriteTarget;
use crate::util::FileStamp;

/// Directories Laravel's generators (`php artisan make:*`) and its skeleton
/// create code in (laravel/laravel and the `make:` commands of
/// laravel/framework's `src/Illuminate/Foundation/Console`).
const LARAVEL_DIRS: &[&str] = &[
    "app/Actions",
    "app/Broadcasting",
    "app/Casts",
    "app/Console/Commands",
    "app/Enums",
    "app/Events",
    "app/Exceptions",
    "app/Filament",
    "app/Http/Controllers",
    "app/Http/Middleware",
    "app/Http/Requests",
    "app/Http/Resources",
    "app/Jobs",
    "app/Listeners",
    "app/Livewire",
    "app/Mail",
    "app/Models",
    "app/Notifications",
    "app/Observers",
    "app/Policies",
    "app/Providers",
    "app/Rules",
    "app/Scopes",
    "app/Services",
    "app/View/Components",
    "database/factories",
    "database/migrations",
    "database/seeders",
    "resources/views",
    "routes",
    "tests/Feature",
    "tests/Unit",
];

/// The write gate's view of `rel` (repo-relative, resolved with
/// [`Repo::resolve_for_write`]).
pub fn write_target(repo: &Repo, rel: &str, exists: bool, allow_new: bool) -> WriteTarget {
    let existing_dir = nearest_existing_dir(repo.root(), rel);
    WriteTarget {
        file: rel.to_string(),
        exists,
        allow_new,
        class: classify_path(rel).class,
        convention: if exists {
            None
        } else {
            convention(repo.root(), rel)
        },
        existing_dir,
    }
}

/// The nearest ancestor directory of `rel` that exists ("" = the root).
fn nearest_existing_dir(root: &Path, rel: &str) -> String {
    let mut dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    while !dir.is_empty() && !root.join(dir).is_dir() {
        dir = dir.rsplit_once('/').map_or("", |(d, _)| d);
    }
    dir.to_string()
}

/// The convention a new file's path follows, named for replies.
pub fn convention(root: &Path, rel: &str) -> Option<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name.ends_with(".php") {
        if let Some(c) = psr4(root, rel) {
            return Some(c);
        }
        let laravel = root.join("artisan").is_file();
        if laravel
            && let Some(d) = LARAVEL_DIRS
                .iter()
                .find(|d| rel.starts_with(&format!("{d}/")))
        {
            return Some(format!("Laravel {d}/"));
        }
    }
    let first = rel.split('/').next().unwrap_or("");
    if matches!(first, "tests" | "test" | "spec" | "__tests__")
        && crate::classify::is_test_path(rel)
    {
        return Some(format!("test directory {first}/"));
    }
    None
}

/// `PSR-4 App\ → app/` when `rel` is a `.php` file under a PSR-4 root of
/// `composer.json` (`autoload` or `autoload-dev`) whose directory and file
/// names are class names (StudlyCase).
fn psr4(root: &Path, rel: &str) -> Option<String> {
    for (prefix, d) in psr4_roots(root).iter() {
        let Some(rest) = rel.strip_prefix(&format!("{d}/")) else {
            continue;
        };
        let rest = rest.strip_suffix(".php")?;
        if rest.split('/').all(is_class_name) {
            return Some(format!("PSR-4 {prefix} → {d}/"));
        }
    }
    None
}

/// PSR-4 roots of a repository's `composer.json`: (namespace prefix,
/// directory without a trailing `/`), `autoload` first, then
/// `autoload-dev`.
type Psr4Roots = Arc<Vec<(String, String)>>;

/// The PSR-4 roots of `root`'s `composer.json`, read again only when the
/// file changed (size and mtime): the write gate asks for every new file,
/// a server and the hook for many.
fn psr4_roots(root: &Path) -> Psr4Roots {
    /// composer.json → (its stamp when read, its roots).
    type Cache = HashMap<PathBuf, (Option<FileStamp>, Psr4Roots)>;
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let path = root.join("composer.json");
    let stamp = FileStamp::of(&path);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some((s, roots)) = cache.get(&path)
        && *s == stamp
    {
        return Arc::clone(roots);
    }
    let mut roots = Vec::new();
    if let Some(v) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    {
        for section in ["autoload", "autoload-dev"] {
            let Some(map) = v[section]["psr-4"].as_object() else {
                continue;
            };
            for (prefix, dirs) in map {
                let dirs: Vec<&str> = match dirs {
                    serde_json::Value::String(d) => vec![d.as_str()],
                    serde_json::Value::Array(a) => a.iter().filter_map(|d| d.as_str()).collect(),
                    _ => continue,
                };
                for d in dirs {
                    roots.push((prefix.clone(), d.trim_end_matches('/').to_string()));
                }
            }
        }
    }
    let roots = Arc::new(roots);
    cache.insert(path, (stamp, Arc::clone(&roots)));
    roots
}

fn is_class_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventions_of_a_laravel_app() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("artisan"), "#!/usr/bin/env php").unwrap();
        std::fs::write(
            root.join("composer.json"),
            r#"{"autoload": {"psr-4": {"App\\": "app/", "Database\\Factories\\": "database/factories/"}},
                "autoload-dev": {"psr-4": {"Tests\\": "tests/"}}}"#,
        )
        .unwrap();
        for (rel, expected) in [
            (
                "app/Observers/OrderObserver.php",
                Some("PSR-4 App\\ → app/"),
            ),
            (
                "app/Notifications/OrderShipped.php",
                Some("PSR-4 App\\ → app/"),
            ),
            (
                "tests/Feature/OrderTest.php",
                Some("PSR-4 Tests\\ → tests/"),
            ),
            (
                "database/migrations/2026_01_01_000000_add_x.php",
                Some("Laravel database/migrations/"),
            ),
            (
                "resources/views/orders/show.blade.php",
                Some("Laravel resources/views/"),
            ),
            ("app/observers/order_observer.php", None),
            ("lib/Thing.php", None),
            ("public/vendor/x.js", None),
        ] {
            assert_eq!(convention(root, rel).as_deref(), expected, "{rel}");
        }
    }
}
