//! Visible texts a request quotes — a button label, a menu item, a heading,
//! a flash message: `the "Sign out" item`, 「Save draft」 — found in the
//! repository's source files, directly (a Blade or Vue template, a
//! Filament `->label(…)`) or through the source locale's translation file
//! (`lang/en/auth.php`'s `'logout' => 'Sign out'` → the files that say
//! `auth.logout`). Tickets name what the user sees; this is the `quoted`
//! feature of the fusion ([`super::fusion::Features`]).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use crate::classify::{self, FileClass};

/// Quoted texts of a request used, at most (a pasted log is not a ticket).
const MAX_PHRASES: usize = 5;
/// A quoted text of fewer chars says nothing (`"a"`); one of more is a
/// pasted passage, not a label.
const MIN_CHARS: usize = 2;
const MAX_CHARS: usize = 80;
/// Files read at most, and their size at most (bytes): a request costs one
/// read of the repository's source files (the OS keeps them cached).
const MAX_FILES: usize = 20_000;
const MAX_BYTES: u64 = 512 * 1024;
/// A text found in more files than this counts less, in proportion
/// ("Save" is in every form).
const SPECIFIC_FILES: f32 = 5.0;

/// The quoted texts of `query`, in order, without repeats: between `"…"`,
/// `“…”`, `「…」` or `『…』`, trimmed, [`MIN_CHARS`]–[`MAX_CHARS`] chars,
/// at most [`MAX_PHRASES`]. Backticks hold code, which the plan's
/// identifiers take; single quotes are apostrophes as often as quotes.
pub fn phrases(query: &str) -> Vec<String> {
    let pairs = [('"', '"'), ('“', '”'), ('「', '」'), ('『', '』')];
    let chars: Vec<char> = query.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let Some(&(_, close)) = pairs.iter().find(|(open, _)| *open == chars[i]) else {
            i += 1;
            continue;
        };
        let Some(len) = chars[i + 1..].iter().position(|c| *c == close) else {
            break;
        };
        let text: String = chars[i + 1..i + 1 + len].iter().collect();
        let text = text.trim().to_string();
        let n = text.chars().count();
        if (MIN_CHARS..=MAX_CHARS).contains(&n) && !out.contains(&text) {
            out.push(text);
        }
        i += len + 2;
    }
    out.truncate(MAX_PHRASES);
    out
}

/// Where a translation file's keys are used from: `lang/en/auth.php` →
/// `auth`, `resources/lang/en/settings/users.php` → `settings/users`
/// (Laravel's `__('auth.logout')`); `None` for any other file.
fn translation_group(file: &str) -> Option<String> {
    let at = file.find("lang/")?;
    if at > 0 && !file[..at].ends_with('/') {
        return None;
    }
    let rest = &file[at + "lang/".len()..];
    let (_locale, path) = rest.split_once('/')?;
    path.strip_suffix(".php").map(str::to_string)
}

/// The keys of `line` of a PHP translation file (lower case) whose text
/// holds `needle`: `'logout' => 'Sign out',` → `logout`, also several
/// pairs on one line (`return ['a' => 'x', 'b' => 'y'];`).
fn keys_holding(line: &str, needle: &str) -> Vec<String> {
    static PAIR: OnceLock<Regex> = OnceLock::new();
    let pair = PAIR.get_or_init(|| {
        Regex::new(r#"['"]([A-Za-z0-9_.\-]+)['"]\s*=>\s*(?:'([^']*)'|"([^"]*)")"#)
            .expect("a valid pattern")
    });
    pair.captures_iter(line)
        .filter(|c| {
            c.get(2)
                .or_else(|| c.get(3))
                .is_some_and(|t| t.as_str().contains(needle))
        })
        .map(|c| c[1].to_string())
        .collect()
}

/// Every source file of `files` (repo-relative; the classes a change is
/// made in: no tests, docs, vendored, generated or other locales) that
/// holds one of `phrases`, case-insensitive, or a translation key whose
/// source-locale text holds one, with its score: the phrases it holds,
/// each counting 1 when at most [`SPECIFIC_FILES`] files hold it and less
/// in proportion beyond, divided by the number of phrases (0–1). Files
/// that cannot be read are skipped.
pub fn quoted_files<'a>(
    root: &Path,
    files: impl Iterator<Item = &'a String>,
    phrases: &[String],
) -> HashMap<String, f32> {
    if phrases.is_empty() {
        return HashMap::new();
    }
    let needles: Vec<String> = phrases.iter().map(|p| p.to_lowercase()).collect();
    // Phrase index → files that hold it (directly or through a key).
    let mut holders: Vec<BTreeSet<String>> = vec![BTreeSet::new(); needles.len()];
    let mut texts: Vec<(String, String)> = Vec::new();
    // (`group.key`, phrase index) of translations that hold a phrase.
    let mut keys: Vec<(String, usize)> = Vec::new();
    for file in files
        .filter(|f| classify::classify_path(f).class == FileClass::Source)
        .take(MAX_FILES)
    {
        let path = root.join(file);
        if std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let lower = text.to_lowercase();
        let group = translation_group(file);
        for (i, n) in needles.iter().enumerate() {
            if !lower.contains(n.as_str()) {
                continue;
            }
            holders[i].insert(file.clone());
            if let Some(g) = &group {
                for line in lower.lines().filter(|l| l.contains(n.as_str())) {
                    for k in keys_holding(line, n) {
                        keys.push((format!("{g}.{k}"), i));
                    }
                }
            }
        }
        texts.push((file.clone(), lower));
    }
    if !keys.is_empty() {
        for (file, lower) in &texts {
            for (key, i) in &keys {
                if lower.contains(key.as_str()) {
                    holders[*i].insert(file.clone());
                }
            }
        }
    }
    let mut out: HashMap<String, f32> = HashMap::new();
    for set in &holders {
        let weight = (SPECIFIC_FILES / set.len().max(1) as f32).min(1.0);
        for f in set {
            *out.entry(f.clone()).or_default() += weight / needles.len() as f32;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_texts_are_read_from_every_kind_of_quote() {
        assert_eq!(
            phrases(
                r#"Turn the "Sign out" item into a form; rename 「保存」 and “Save draft”, not "x"."#
            ),
            vec!["Sign out", "保存", "Save draft"]
        );
        assert!(phrases("no quotes here, isn't it").is_empty());
        // An unclosed quote ends the scan instead of taking the rest.
        assert_eq!(phrases(r#"the "Edit" button and "the rest"#), vec!["Edit"]);
    }

    #[test]
    fn translation_keys_lead_to_the_files_that_use_them() {
        assert_eq!(
            translation_group("lang/en/auth.php").as_deref(),
            Some("auth")
        );
        assert_eq!(
            translation_group("resources/lang/en/settings/users.php").as_deref(),
            Some("settings/users")
        );
        assert_eq!(translation_group("app/Slang/en/x.php"), None);
        assert_eq!(
            keys_holding("    'logout' => 'sign out',", "sign out"),
            ["logout"]
        );
        assert_eq!(
            keys_holding(
                r#"return ['in' => "sign in", 'out' => 'sign out'];"#,
                "sign"
            ),
            ["in", "out"]
        );
        assert!(keys_holding("return [", "sign out").is_empty());

        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "lang/en/auth.php",
            "<?php\nreturn [\n    'logout' => 'Sign out',\n];\n",
        );
        write(
            "lang/fr/auth.php",
            "<?php\nreturn [\n    'logout' => 'Sign out (fr)',\n];\n",
        );
        write(
            "resources/views/menu.blade.php",
            "<a>{{ __('auth.logout') }}</a>\n",
        );
        write(
            "resources/views/other.blade.php",
            "<a>{{ __('auth.login') }}</a>\n",
        );
        write("app/Nav.php", "<?php // sign OUT of everything\n");
        let files: Vec<String> = [
            "lang/en/auth.php",
            "lang/fr/auth.php",
            "resources/views/menu.blade.php",
            "resources/views/other.blade.php",
            "app/Nav.php",
            "missing.php",
        ]
        .map(String::from)
        .to_vec();
        let got = quoted_files(dir.path(), files.iter(), &["Sign out".to_string()]);
        let mut found: Vec<&str> = got.keys().map(String::as_str).collect();
        found.sort_unstable();
        // The other locale is not a source file; the view reaches the text
        // through its key; the PHP comment holds it in another case.
        assert_eq!(
            found,
            vec![
                "app/Nav.php",
                "lang/en/auth.php",
                "resources/views/menu.blade.php"
            ]
        );
        assert!(got.values().all(|v| (*v - 1.0).abs() < 1e-6));
    }
}
