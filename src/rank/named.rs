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

/// Requests a request names by URL, as the code graph's request targets
/// (`METHOD path`, [`crate::graph::facts::request_target`]; `*` when no
/// method precedes the path): `GET /api/v1/projects/{project}`,
/// `https://example.com/1/sales/invoices?search=x` (`* sales/invoices`: a
/// number is a parameter, and leading parameters go). A path needs two
/// segments or a method (`/teams` alone is a word). The `named` feature
/// (docs/ranking.md) is 1 for the controller files of the routes that
/// serve them ([`crate::graph::Graph::url_files`]).
pub fn named_urls(query: &str) -> Vec<String> {
    static URL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = URL.get_or_init(|| {
        regex::Regex::new(
            r"(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?(?:https?://[A-Za-z0-9.:-]+)?(/[A-Za-z0-9_{}.:-]+(?:/[A-Za-z0-9_{}.:-]+)*)",
        )
        .expect("static regex")
    });
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(query) {
        let start = c.get(0).map_or(0, |m| m.start());
        // A path inside a word (`and/or`, `a/b`) is no URL.
        if query[..start]
            .chars()
            .last()
            .is_some_and(|ch| ch.is_alphanumeric())
        {
            continue;
        }
        let method = c.get(1).map_or("*", |m| m.as_str());
        let path = &c[2];
        if method == "*" && path.matches('/').count() < 2 {
            continue;
        }
        let path: Vec<String> = path
            .trim_end_matches(['.', ':'])
            .split('/')
            .map(|seg| {
                if seg.starts_with('{')
                    || (!seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()))
                {
                    "${x}".to_string()
                } else {
                    seg.to_string()
                }
            })
            .collect();
        if let Some(t) = crate::graph::facts::request_target(method, &path.join("/"))
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    out
}

/// Path words that say nothing of a feature: source roots, framework
/// directories and file extensions (`app/Http/Controllers/…/x.blade.php`).
const PATH_NOISE: &[&str] = &[
    "app",
    "src",
    "http",
    "controllers",
    "resources",
    "views",
    "view",
    "components",
    "php",
    "blade",
    "vue",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "py",
    "rb",
    "go",
    "rs",
    "scss",
    "css",
    "json",
    "index",
];

/// A pair of adjacent words, stemmed ([`super::words::stem`]) and in
/// alphabetical order (`list of songs` and `SongList` give the same pair).
pub type WordPair = (String, String);

fn pair(a: &str, b: &str) -> WordPair {
    let (a, b) = (super::words::stem(a), super::words::stem(b));
    if a <= b { (a, b) } else { (b, a) }
}

/// Adjacent word pairs of a request's phrases: its ASCII words in order,
/// keywords only ([`super::words::is_keyword`]), a phrase
/// broken at sentence punctuation, quotes, brackets and any non-ASCII
/// character (a Japanese particle between two English labels), while `>`,
/// `&`, `-`, `/` and identifiers' word boundaries join (`Settings >
/// Categories`, `Profit & Loss`, `ProfitLoss`). The `phrase` fusion
/// feature (docs/ranking.md) matches them to a path's adjacent words.
pub fn phrase_pairs(query: &str) -> Vec<WordPair> {
    let mut out: Vec<WordPair> = Vec::new();
    for phrase in query.split(|c: char| {
        !(c.is_ascii_alphanumeric() || matches!(c, ' ' | '\t' | '>' | '&' | '-' | '/' | '_' | '\\'))
    }) {
        let words: Vec<String> = crate::util::split_identifier(phrase)
            .split_whitespace()
            .filter(|w| super::words::is_keyword(w))
            .map(str::to_string)
            .collect();
        for w in words.windows(2) {
            let p = pair(&w[0], &w[1]);
            if p.0 != p.1 && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Adjacent word pairs of a repo-relative path, across directory
/// boundaries (`Settings/Categories.php` → settings·categories), without
/// [`PATH_NOISE`] words, nor a migration's `create` and `table`.
pub fn path_pairs(file: &str) -> Vec<WordPair> {
    // A migration is named for its table (`create_shop_products_table`):
    // "the products table" of a ticket is a page's table, not the schema.
    let migration = file.split('/').any(|s| s == "migrations");
    let words: Vec<String> = crate::util::split_identifier(file)
        .split_whitespace()
        .filter(|w| !PATH_NOISE.contains(w))
        .filter(|w| !(migration && matches!(*w, "table" | "tables" | "create")))
        .map(str::to_string)
        .collect();
    words
        .windows(2)
        .map(|w| pair(&w[0], &w[1]))
        .filter(|p| p.0 != p.1)
        .collect()
}

/// The `phrase` feature: how many of `pairs` ([`phrase_pairs`]) the path
/// of `file` holds ([`path_pairs`]), two or more giving 1.
pub fn phrase_score(pairs: &[WordPair], file: &str) -> f32 {
    if pairs.is_empty() {
        return 0.0;
    }
    let mut own = path_pairs(file);
    own.sort();
    own.dedup();
    let n = own.iter().filter(|p| pairs.contains(p)).count();
    (n as f32 / 2.0).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::named_urls;
    use crate::rank::plan::plan;

    /// URLs a ticket names, with or without a method or host, become the
    /// code graph's request targets; a slash inside a word, a one-segment
    /// path without a method or a file is none.
    #[test]
    fn a_request_names_routes_by_url() {
        assert_eq!(
            named_urls(
                "Calling GET /api/v1/organizations/{organization}/projects/{project} works; \
                 after login I land on https://example.com/1/sales/invoices?search=x. \
                 POST /api/transactions fails, and /teams/{id} shows emails."
            ),
            [
                "GET api/v1/organizations/{}/projects/{}",
                "* sales/invoices",
                "POST api/transactions",
                "* teams/{}",
            ]
        );
        assert!(named_urls("and/or, the /settings page, see /img/logo.png").is_empty());
    }

    /// Menu paths, labels and camel-cased names of a request match a
    /// path's adjacent words in either order; a Japanese particle or a
    /// sentence break ends a phrase.
    #[test]
    fn a_request_names_paths_by_adjacent_words() {
        let p = plan(
            "Under Settings > Categories the Profit & Loss report fails. \
             Sales > Customers > Import breaks. The list of songs. Income や Expense",
        );
        let s = |f: &str| p.phrase_score(f);
        assert_eq!(s("app/Http/Controllers/Settings/Categories.php"), 0.5);
        assert_eq!(
            s("resources/views/settings/categories/index.blade.php"),
            0.5
        );
        assert_eq!(s("app/Reports/ProfitLoss.php"), 0.5);
        assert_eq!(s("app/Imports/Sales/Customers.php"), 0.5);
        assert_eq!(s("resources/js/SongList.vue"), 0.5);
        assert_eq!(s("app/Http/Controllers/Sales/Customers/Import.php"), 1.0);
        assert_eq!(s("app/Http/Controllers/Settings/Taxes.php"), 0.0);
        assert_eq!(
            s("app/Reports/IncomeExpense.php"),
            0.0,
            "や breaks the phrase"
        );
        assert_eq!(s("app/Reports/ReportFail.php"), 0.5, "stemmed: fails");
        assert_eq!(s("app/SalesFail.php"), 0.0, "a full stop breaks the phrase");
        assert_eq!(plan("Settings").phrase_score("settings/x.php"), 0.0);
        let m = "database/migrations/2021_12_13_164519_create_shop_products_table.php";
        assert_eq!(plan("The products table is crowded").phrase_score(m), 0.0);
        assert_eq!(plan("Shop products need a weight").phrase_score(m), 0.5);
        // Japanese: translated terms joined directly or by の form a
        // phrase; another particle breaks it.
        let edit = "resources/views/sales/invoices/edit.blade.php";
        assert_eq!(
            plan("Invoice の編集画面を開くと落ちる").phrase_score(edit),
            0.5
        );
        assert_eq!(plan("Invoice を編集すると落ちる").phrase_score(edit), 0.0);
    }

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
