//! The tests that exercise a set of files, which a change to them usually
//! updates too: tests named after a file (`SongTest.php` for `Song.php` or
//! `SongController.php`, `SongList.spec.ts` for `SongList.vue`,
//! `test_views.py` for `views.py`), tests that refer to it (a class, an
//! import, a factory, a request to its route), and tests that changed with
//! it in the history.

use super::related::{cochange_partners, kind_weight};
use super::*;
use crate::classify;

/// Layer suffixes a test's name drops from the class it tests
/// (`SongTest.php` covers `SongController.php` and `SongService.php`): the
/// `artisan make:` kinds and common layering.
const LAYER_SUFFIXES: &[&str] = &[
    "controller",
    "service",
    "request",
    "resource",
    "repository",
    "policy",
    "observer",
    "job",
    "listener",
    "command",
    "component",
    "action",
];

/// A test named after the file counts as one strong edge; after the file
/// less its layer suffix, a little less. Chosen, not fitted: the change-set
/// sets (bench/README.md § Change sets) measure the `tests` line as a whole.
const SAME_NAME: f32 = 1.0;
const SAME_SUBJECT: f32 = 0.8;
/// A test named after an action and its subject (`DeleteArticleTest.php`
/// for `ArticleController::delete` shown in the reply): one strong edge, as
/// a test named after the file. The one-test-per-action layout of Laravel
/// feature tests (`tests/Feature/Api/Article/DeleteArticleTest.php`); an
/// agent trial's tests line missed it (bench/README.md § Honest agent
/// trial).
const SAME_ACTION: f32 = 1.0;
/// A test listed scores this much at least (a reference of a hub that many
/// tests use does not list every one of them).
const MIN_SCORE: f32 = 0.3;

/// A file name's stem, lower case: the part before the first dot
/// (`song.blade.php` → `song`, `SongList.spec.ts` → `songlist`).
fn stem(path: &str) -> String {
    crate::util::file_stem(path).to_ascii_lowercase()
}

/// The name of what a test file tests, lower case: its stem less a `test`
/// or `tests` suffix or a `test_` prefix (`SongTest.php` → `song`,
/// `test_views.py` → `views`, `SongList.spec.ts` → `songlist`); `None`
/// for a name too short to say anything.
pub(super) fn subject_key(test: &str) -> Option<String> {
    let s = stem(test);
    let s = s
        .strip_prefix("test_")
        .or_else(|| s.strip_suffix("_test"))
        .or_else(|| s.strip_suffix("tests"))
        .or_else(|| s.strip_suffix("test"))
        .unwrap_or(&s)
        .to_string();
    (s.len() >= 3).then_some(s)
}

/// `key` less a [`LAYER_SUFFIXES`] suffix, when it has one.
fn without_layer(key: &str) -> Option<&str> {
    LAYER_SUFFIXES
        .iter()
        .find_map(|sfx| key.strip_suffix(sfx))
        .filter(|k| k.len() >= 3)
}

/// Test files (by their path's class) under the names they test: their
/// [`subject_key`] and that key less a layer suffix.
pub(super) fn by_subject(files: &BTreeSet<String>) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for f in files {
        if !classify::is_test_path(f) {
            continue;
        }
        let Some(key) = subject_key(f) else { continue };
        if let Some(short) = without_layer(&key) {
            out.entry(short.to_string()).or_default().push(f.clone());
        }
        out.entry(key).or_default().push(f.clone());
    }
    out
}

/// The test keys of an action `method` of `file`: the method's name with
/// the file's subject (its stem less a layer suffix) after it, in the
/// singular and the plural (`delete` of `ArticleController.php` →
/// `deletearticle`, `deletearticles`); none for a file without a layer
/// suffix (a model's `delete` is not an action) or a name under 3 letters.
fn action_keys(file: &str, method: &str) -> Vec<String> {
    let key = stem(file);
    let Some(subject) = without_layer(&key) else {
        return Vec::new();
    };
    let m = method.to_ascii_lowercase();
    if m.len() < 3 || !m.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Vec::new();
    }
    vec![format!("{m}{subject}"), format!("{m}{subject}s")]
}

/// The tests that exercise `files` (repo-relative, each with a weight:
/// how sure the caller is the change touches it), best first, at most
/// `limit`: named after one of them (a `convention` tie at line 0), after
/// one of the `actions` (file, method name: the methods a reply showed of
/// a listed file; [`action_keys`]), refer
/// to one of them (the edge, at the test's line), or changed with one of
/// them (co-change confidence); each reason times the file's weight. A
/// name many tests share (`index`), a file many tests refer to (the `User`
/// model) and a test that refers to many files (a page test mounting
/// every component) count less. Only files of the test class, and only
/// those in the working tree.
pub fn tests_for(
    graph: &Graph,
    history: Option<&cochange::CoChange>,
    files: &[(String, f32)],
    actions: &[(String, String)],
    limit: usize,
) -> Vec<Related> {
    let mut acc: BTreeMap<String, Related> = BTreeMap::new();
    let is_test = classify::is_test_path;
    let listed: Vec<&String> = files.iter().map(|(f, _)| f).collect();
    for (file, weight) in files.iter().filter(|(f, _)| !is_test(f)) {
        let key = stem(file);
        let mut keys: Vec<(String, f32)> = vec![(key.clone(), SAME_NAME)];
        keys.extend(without_layer(&key).map(|k| (k.to_string(), SAME_SUBJECT)));
        for (_, method) in actions.iter().filter(|(f, _)| f == file) {
            keys.extend(
                action_keys(file, method)
                    .into_iter()
                    .map(|k| (k, SAME_ACTION)),
            );
        }
        let mut named: Vec<(&String, f32)> = Vec::new();
        for (k, w) in &keys {
            let Some(tests) = graph.tests_by_subject.get(k) else {
                continue;
            };
            let share = weight * w / tests.len() as f32;
            named.extend(tests.iter().map(|t| (t, share)));
        }
        for (t, w) in named {
            let r = acc.entry(t.clone()).or_insert_with(|| Related::new(t));
            if !r.edges.iter().any(|e| e.kind == EdgeKind::Convention) {
                r.score += w;
                r.edge_score += w;
                r.edges.push(Tie {
                    kind: EdgeKind::Convention,
                    direction: Direction::In,
                    sibling_of: None,
                    site: Site {
                        file: t.clone(),
                        line: 0,
                    },
                });
            }
        }
        let referring: Vec<&Edge> = graph
            .inn(file)
            .iter()
            .filter(|e| is_test(&e.from))
            .collect();
        let fan = referring.len() as f32;
        for e in referring {
            let reach = graph.out(&e.from).len() as f32;
            let w = weight * kind_weight(e.kind)
                / (1.0 + (fan / 10.0).ln_1p())
                / (1.0 + (reach / 10.0).ln_1p());
            let r = acc
                .entry(e.from.clone())
                .or_insert_with(|| Related::new(&e.from));
            r.score += w;
            r.edge_score += w;
            r.edges.push(Tie::of(e, Direction::In));
        }
        if let Some(h) = history {
            for (partner, conf, commits) in cochange_partners(graph, h, file) {
                if !is_test(&partner) {
                    continue;
                }
                acc.entry(partner.clone())
                    .or_insert_with(|| Related::new(&partner))
                    .add_cochange(*weight, conf, commits);
            }
        }
    }
    let mut out: Vec<Related> = acc
        .into_values()
        .filter(|r| r.score >= MIN_SCORE && !listed.contains(&&r.file))
        .collect();
    for r in &mut out {
        r.edges.sort();
        r.edges.dedup();
        r.edges.truncate(4);
    }
    best_first(&mut out, limit);
    out
}
