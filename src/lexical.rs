//! Text analysis for the full-text (BM25) index: the search text stored with
//! every chunk and file, and the terms a query is matched with. Both sides go
//! through [`terms`], so `getUserById`, `get_user_by_id` and "get user by id"
//! meet: every identifier is indexed whole (lowercased) and as its words
//! (camelCase, snake_case, `Ns\Class`, `a.b` split). LanceDB's analyzer then
//! lowercases, drops English stop words and stems (Snowball) on both sides.

use crate::chunk::Chunk;
use crate::util::split_identifier;

/// Longest token kept, in chars; LanceDB's index drops longer ones too
/// (`max_token_length` 40), and such tokens are hashes, base64 or minified
/// code, not words anyone searches for.
pub const MAX_TOKEN_CHARS: usize = 40;

/// Appends the search terms of `text` to `out`, space-separated: each run of
/// letters, digits and `_` lowercased, followed by its words when it splits
/// into more than one. Single characters are dropped, numbers are kept (error
/// codes, HTTP statuses); non-Latin text is kept as the runs LanceDB's
/// tokenizer will see.
pub fn terms_into(text: &str, out: &mut String) {
    for token in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let n = token.chars().count();
        if !(2..=MAX_TOKEN_CHARS).contains(&n) {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        let lower = token.to_lowercase();
        out.push_str(&lower);
        if token.is_ascii() {
            let words = split_identifier(token);
            if words != lower && words.contains(' ') {
                out.push(' ');
                out.push_str(&words);
            }
        }
    }
}

/// [`terms_into`] on a fresh string.
pub fn terms(text: &str) -> String {
    let mut s = String::new();
    terms_into(text, &mut s);
    s
}

/// Terms of a repo-relative path: its directories and the file name without
/// extension (`src/Illuminate/Queue/Worker.php` → `src illuminate queue
/// worker`).
pub fn path_terms(rel: &str) -> String {
    let without_ext = match rel.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') && !stem.ends_with('/') => stem,
        _ => rel,
    };
    // `.blade.php`, `.test.ts`: drop the inner extension too.
    let without_ext = without_ext.strip_suffix(".blade").unwrap_or(without_ext);
    terms(without_ext)
}

/// The search text of one chunk: path, kind, symbol name with scope and
/// FQCN, signature, docblock, framework facts and content.
pub fn chunk_text(c: &Chunk) -> String {
    let mut s = path_terms(&c.file);
    for part in [
        c.kind.as_str(),
        c.name.as_str(),
        c.scope.as_deref().unwrap_or(""),
        c.fqcn.as_deref().unwrap_or(""),
        c.signature.as_str(),
        c.doc.as_deref().unwrap_or(""),
    ] {
        terms_into(part, &mut s);
    }
    let facts = c.meta.summary(crate::chunk::META_SUMMARY_CHARS);
    terms_into(&facts, &mut s);
    for r in &c.related {
        terms_into(r, &mut s);
    }
    terms_into(&c.content, &mut s);
    s
}

/// The search texts of one file, for the file-level index: its path, the
/// names of its definitions (with scopes and FQCNs), and its whole content;
/// plus the words of its path and definition names (identifiers split, no
/// compounds) that make up the repository's vocabulary.
pub struct FileText {
    pub path: String,
    pub symbols: String,
    pub body: String,
    pub words: String,
}

/// [`FileText`] of a file from its chunks and source.
pub fn file_text(rel: &str, source: &str, chunks: &[Chunk]) -> FileText {
    let mut symbols = String::new();
    let mut words: Vec<String> = split_identifier(rel)
        .split_whitespace()
        .map(String::from)
        .collect();
    for c in chunks {
        if matches!(c.kind.as_str(), "module" | "window") {
            continue;
        }
        words.extend(
            split_identifier(&c.name)
                .split_whitespace()
                .map(String::from),
        );
        terms_into(&c.name, &mut symbols);
        if let Some(f) = &c.fqcn {
            terms_into(f, &mut symbols);
        }
    }
    words.retain(|w| is_vocabulary_word(w));
    words.sort();
    words.dedup();
    FileText {
        path: path_terms(rel),
        symbols,
        body: terms(source),
        words: words.join(" "),
    }
}

/// Words kept in the vocabulary: 3 to 24 ASCII letters (no numbers, no
/// compounds of one letter per part).
fn is_vocabulary_word(w: &str) -> bool {
    (3..=24).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase())
}

/// The repository's vocabulary: each word of `files` (one string of
/// [`FileText::words`] per file) with the number of files it occurs in.
pub fn vocabulary<'a>(
    files: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeMap<String, u32> {
    let mut out = std::collections::BTreeMap::new();
    for f in files {
        let mut seen = std::collections::HashSet::new();
        for w in f.split_whitespace() {
            if is_vocabulary_word(w) && seen.insert(w) {
                *out.entry(w.to_string()).or_insert(0) += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_indexed_whole_and_split() {
        assert_eq!(
            terms("$this->getUserById(42); load_config()"),
            "this getuserbyid get user by id 42 load_config load config"
        );
        assert_eq!(
            terms("App\\Http\\LoginController::store"),
            "app http logincontroller login controller store"
        );
        assert_eq!(terms("a x"), "");
        assert_eq!(terms("キューのジョブ queue"), "キューのジョブ queue");
    }

    #[test]
    fn paths_lose_their_extension() {
        assert_eq!(
            path_terms("src/Illuminate/Queue/Worker.php"),
            "src illuminate queue worker"
        );
        assert_eq!(
            path_terms("resources/views/orders/show.blade.php"),
            "resources views orders show"
        );
        assert_eq!(path_terms("Makefile"), "makefile");
    }
}
