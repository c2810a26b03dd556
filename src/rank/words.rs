//! English words of a request: stop words, the stemmer and keywords, shared
//! by the query plan ([`super::plan`]) and the path phrases
//! ([`super::named`]).

use std::collections::HashSet;

/// English stopwords out of keywords: the verbs every request has, and
/// NLTK's English list but its words of place, time and amount (`before`,
/// `more`, `only`: a ticket's behaviour; bench/README.md § Change sets).
#[rustfmt::skip]
pub(super) const STOPWORDS: &[&str] = &[
    "the", "and", "for", "from", "with", "that", "this", "what", "where", "when", "which", "who",
    "how", "why", "are", "was", "were", "is", "be", "been", "does", "do", "did", "can", "could",
    "should", "would", "will", "into", "onto", "our", "your", "my", "its", "it", "to", "of", "in",
    "on", "at", "by", "an", "a", "or", "not", "all", "any", "some", "there", "here", "want", "need",
    "please", "make", "let", "get", "set", "use", "using", "used", "about", "code", "you", "myself",
    "ours", "ourselves", "yours", "yourself", "yourselves", "him", "his", "himself", "she", "her",
    "hers", "herself", "itself", "they", "them", "their", "theirs", "themselves", "whom", "these",
    "those", "being", "have", "has", "had", "having", "doing", "but", "because", "until", "while",
    "through", "then", "than", "too", "very", "just", "own", "such",
];

/// A keyword: 3 chars or more and not a stop word (lowercase `w`).
pub(super) fn is_keyword(w: &str) -> bool {
    w.len() >= 3 && !STOPWORDS.contains(&w)
}

/// English stem for lexical matching: one of `ies`→`y`, `ing`, `ed`,
/// `es`, `s` is stripped from words longer than 4 chars, then a trailing
/// `e` (`stored`, `store`, `stores`, `storing` → `stor`).
pub fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    let mut s = w.as_str();
    let owned;
    if s.len() > 4 {
        if let Some(x) = s.strip_suffix("ies") {
            owned = format!("{x}y");
            s = owned.as_str();
        } else if let Some(x) = s
            .strip_suffix("ing")
            .or_else(|| s.strip_suffix("ed"))
            .or_else(|| s.strip_suffix("es"))
            .or_else(|| s.strip_suffix('s'))
        {
            s = x;
        }
    }
    s.strip_suffix('e')
        .filter(|x| x.len() >= 3)
        .unwrap_or(s)
        .to_string()
}

/// Lowercase keywords of `words`: stop words and words under 3 chars
/// dropped, one per stem.
pub(super) fn keywords_of(words: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    words
        .map(|w| w.to_lowercase())
        .filter(|w| is_keyword(w))
        .filter(|w| seen.insert(stem(w)))
        .collect()
}
