//! Paths a request names: a traceback's frames
//! (`File "…/site-packages/sympy/core/numbers.py", line 10`), "in
//! `app/Models/User.php`". The `named` fusion feature (docs/ranking.md)
//! is 1 for a file whose repo-relative path one of them ends with.

/// Path-like words of `query`: at least one `/` (or `\`) and a file
/// extension (`app/Models/User.php`, `C:\src\app.py`, `"…/numbers.py",`),
/// with `\` turned into `/` and surrounding quotes and punctuation dropped.
pub fn named_paths(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in query.split(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | ')' | '<' | '>' | ',' | ';')
    }) {
        let w = word.replace('\\', "/");
        let w = w.trim_end_matches([':', '.']);
        let Some((dir, name)) = w.rsplit_once('/') else {
            continue;
        };
        let is_path = !dir.is_empty()
            && name.rsplit_once('.').is_some_and(|(stem, e)| {
                !stem.is_empty()
                    && (1..=5).contains(&e.len())
                    && e.chars().all(|c| c.is_ascii_alphanumeric())
            })
            && !w.contains("://");
        if is_path && !out.iter().any(|p| p == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// Whether one of `paths` ([`named_paths`]) is `file` (repo-relative) or
/// ends with `/file`.
pub fn names_file(paths: &[String], file: &str) -> bool {
    paths.iter().any(|p| {
        p == file
            || (p.len() > file.len()
                && p.ends_with(file)
                && p[..p.len() - file.len()].ends_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use crate::rank::plan::plan;

    /// Paths a request names, a traceback's included, match the
    /// repo-relative file they end with, at a `/`; a URL, a bare file name
    /// or a version number is not a path.
    #[test]
    fn a_request_names_files_by_their_paths() {
        let p = plan(
            "Traceback:\n  File \"/home/u/lib/python3.9/site-packages/sympy/core/numbers.py\", line 10, in f\n\
             see app\\Models\\User.php, `resources/views/feed.blade.php`. Docs: https://x.org/a/b.html, v1.2 and setup.py",
        );
        assert_eq!(
            p.named_paths,
            [
                "/home/u/lib/python3.9/site-packages/sympy/core/numbers.py",
                "app/Models/User.php",
                "resources/views/feed.blade.php",
            ]
        );
        assert!(p.names_file("sympy/core/numbers.py"));
        assert!(p.names_file("core/numbers.py"));
        assert!(!p.names_file("ore/numbers.py"));
        assert!(!p.names_file("sympy/core/power.py"));
        assert!(p.names_file("app/Models/User.php"));
        assert!(!p.names_file("setup.py"));
        assert!(plan("make the feed faster").named_paths.is_empty());
    }
}
