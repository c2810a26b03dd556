//! Small leaf helpers every layer may use: the clock, hex digests,
//! number formatting, identifier words and lock files. Nothing here depends on another module of the crate.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Unix seconds now (0 if the clock is before 1970).
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What identifies one version of a file without reading it: length,
/// modification time and (on Unix) inode. An atomic rename gives a new
/// inode, so a file replaced within the mtime's resolution still differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

impl FileStamp {
    /// The stamp of `path` now, `None` when it cannot be read.
    pub fn of(path: &std::path::Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(FileStamp {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
        })
    }
}

/// Serialises a score with four decimals (`0.8523`, not
/// `0.8523110151290894`): replies carry many scores, and the digits past
/// the fourth change no ranking and cost an agent's context.
pub fn round4<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((f64::from(*x) * 10_000.0).round() / 10_000.0)
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// SHA-256 of bytes as lowercase hex (64 chars).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A repo-relative path's file name up to its first dot, case kept:
/// `app/Http/Requests/FeedRequest.php` → `FeedRequest`,
/// `resources/views/song.blade.php` → `song`.
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

/// `1234567` → `1,234,567`.
pub fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Splits an identifier into lowercase words: `getUserByID` → `get user by
/// id`, `load_config` → `load config`, `App\Http\LoginController` → `app
/// http login controller`.
pub fn split_identifier(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words.join(" ")
}

/// An exclusive OS lock on `path` (created, with its directory, if
/// missing), held until the returned file is dropped — also released when
/// the process dies. Blocks while another process holds it. When the file
/// was removed while this process waited (the embedding service's tidying
/// removes old start locks), the lock is taken again on the file now at
/// `path`, so two processes never hold locks on different files of one path.
///
/// # Errors
/// The directory or file cannot be created, or locking fails.
pub fn lock_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    loop {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        f.lock()?;
        if still_at(&f, path)? {
            return Ok(f);
        }
    }
}

/// Whether the open file `f` is still the file at `path` (not removed or
/// replaced since it was opened). Windows does not remove open files.
#[cfg(unix)]
fn still_at(f: &std::fs::File, path: &std::path::Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = f.metadata()?;
    match std::fs::metadata(path) {
        Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn still_at(_f: &std::fs::File, _path: &std::path::Path) -> std::io::Result<bool> {
    Ok(true)
}

/// `OrderItem` → `order_items`, `Category` → `categories`: Laravel's
/// default table of a model, for simple English nouns (`$table` wins when
/// set).
pub fn plural_snake(class: &str) -> String {
    let mut s = String::new();
    for (i, ch) in class.chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            s.push('_');
        }
        s.extend(ch.to_lowercase());
    }
    if let Some(stem) = s.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if s.ends_with('s') || s.ends_with('x') || s.ends_with("ch") || s.ends_with("sh") {
        return format!("{s}es");
    }
    format!("{s}s")
}

/// `comment` → `Comment`: the first char upper-cased, the rest as written.
pub fn upper_first(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// `order-filter`, `user_table` → `OrderFilter`, `UserTable` (Laravel's
/// `Str::studly`: each `-` / `_` separated word by [`upper_first`]).
pub fn studly(name: &str) -> String {
    name.split(['-', '_']).map(upper_first).collect()
}

/// `IconLayers`, `koelFocus` → `icon-layers`, `koel-focus`: how a Vue
/// template writes a registered name (Vue's `hyphenate` and Laravel's `Str::kebab`: every capital
/// after the first, so `HTTPLink` → `h-t-t-p-link`, unlike
/// [`split_identifier`]'s word split).
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A Blade view's path as Laravel names the view:
/// `resources/views/models/links/partials/single-simple.blade.php` →
/// `models.links.partials.single-simple`; `None` for any other path.
pub fn blade_view_name(path: &str) -> Option<String> {
    let rest = path
        .trim()
        .trim_start_matches("./")
        .strip_prefix("resources/views/")?
        .strip_suffix(".blade.php")?;
    (!rest.is_empty()).then(|| rest.replace('/', "."))
}

/// The file of a Blade view named as Laravel names it
/// (`models.links.partials.single-simple` →
/// `resources/views/models/links/partials/single-simple.blade.php`), or
/// given by that path; `None` for a name that cannot be a view's (empty
/// segments, a namespace `::`, a class or member name). A segment may hold
/// non-ASCII characters: Livewire 4's single-file components are
/// `⚡search.blade.php`, the view `livewire.⚡search`.
pub fn blade_view_path(name: &str) -> Option<String> {
    let name = name.trim();
    if blade_view_name(name).is_some() {
        return Some(name.trim_start_matches("./").to_string());
    }
    let valid = !name.is_empty()
        && name.split('.').all(|seg| {
            !seg.is_empty()
                && seg.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || c == '-'
                        || c == '_'
                        || !c.is_ascii() && !c.is_whitespace()
                })
        });
    valid.then(|| format!("resources/views/{}.blade.php", name.replace('.', "/")))
}

/// The existing file (by `exists`) of a Blade view or component named as
/// templates name it: the view ([`blade_view_path`]), else the anonymous
/// component of that name, with or without its `x-` (`x-forms.input`,
/// `transactions.template.ddefault` →
/// `resources/views/components/transactions/template/ddefault.blade.php`,
/// or its `index.blade.php`). A trial agent's `find_references` on a
/// component's name matched only its last word (bench/README.md § Honest
/// agent trial).
pub fn blade_view_file(name: &str, exists: impl Fn(&str) -> bool) -> Option<String> {
    if let Some(v) = blade_view_path(name).filter(|v| exists(v)) {
        return Some(v);
    }
    let component = name.trim().strip_prefix("x-").unwrap_or(name.trim());
    let path = blade_view_path(component)?;
    let rest = path
        .strip_prefix("resources/views/")?
        .strip_suffix(".blade.php")?;
    anonymous_component_files(rest)
        .into_iter()
        .find(|c| exists(c))
}

/// The files an anonymous Blade component at `path` (`/`-separated under
/// `resources/views/components/`: `forms/input`) may be, in the order
/// Laravel tries them: `forms/input.blade.php`, `forms/input/index.blade.php`.
pub fn anonymous_component_files(path: &str) -> [String; 2] {
    [
        format!("resources/views/components/{path}.blade.php"),
        format!("resources/views/components/{path}/index.blade.php"),
    ]
}

/// Whether a symbol reads as a file's path rather than a bare name: it has
/// a directory, or an extension (`.env.example`, `composer.json`) and no
/// `::` (`Order` and `Order::total` do not).
pub fn names_a_file(symbol: &str) -> bool {
    symbol.contains('/') || symbol.contains('.') && !symbol.contains("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that waited for a lock whose file was removed meanwhile
    /// holds the lock of the file now at the path, not of the removed one.
    #[cfg(unix)]
    #[test]
    fn a_lock_whose_file_was_removed_is_taken_again() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = lock_file(&path).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || lock_file(&path).unwrap())
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::remove_file(&path).unwrap();
        drop(first);
        let held = waiter.join().unwrap();
        let at_path = std::fs::metadata(&path).unwrap();
        assert_eq!(held.metadata().unwrap().ino(), at_path.ino());
        // And it is held: another try fails while `held` lives.
        let other = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!(other.try_lock().is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(group(12), "12");
        assert_eq!(hex(&[0, 255, 16]), "00ff10");
        assert_eq!(sha256_hex(b"").len(), 64);
    }

    #[test]
    fn plurals() {
        for (c, t) in [
            ("User", "users"),
            ("Category", "categories"),
            ("Box", "boxes"),
            ("Day", "days"),
            ("OrderItem", "order_items"),
        ] {
            assert_eq!(plural_snake(c), t);
        }
    }

    #[test]
    fn blade_views_are_named_as_laravel_names_them() {
        let path = "resources/views/models/links/partials/single-simple.blade.php";
        assert_eq!(
            blade_view_name(path).as_deref(),
            Some("models.links.partials.single-simple")
        );
        assert_eq!(blade_view_name("app/Models/Link.php"), None);
        assert_eq!(
            blade_view_path("models.links.partials.single-simple").as_deref(),
            Some(path)
        );
        assert_eq!(blade_view_path(path).as_deref(), Some(path));
        assert_eq!(blade_view_path("Link::shortTitle"), None);
        assert_eq!(blade_view_path("mail::message"), None);
        assert_eq!(blade_view_path("a..b"), None);
        let files = [
            "resources/views/links/index.blade.php",
            "resources/views/components/forms/input.blade.php",
            "resources/views/components/card/index.blade.php",
        ];
        let exists = |f: &str| files.contains(&f);
        assert_eq!(
            blade_view_file("links.index", exists).as_deref(),
            Some(files[0])
        );
        assert_eq!(
            blade_view_file("forms.input", exists).as_deref(),
            Some(files[1])
        );
        assert_eq!(
            blade_view_file("x-forms.input", exists).as_deref(),
            Some(files[1])
        );
        assert_eq!(blade_view_file("card", exists).as_deref(), Some(files[2]));
        assert_eq!(blade_view_file("forms.select", exists), None);
    }
}
