//! The general Japanese → English dictionary: JMdict (the Electronic
//! Dictionary Research and Development Group; CC BY-SA 3.0, README §
//! License), built into a TSV at install by `scripts/dictionary.py`
//! (`term<TAB>english words, best first`).
//!
//! The planner reads a request with the seed glossary first
//! (`assets/glossary/ja-en.tsv`: it wins where both have a term, its lines
//! holding the software senses a general dictionary gives in their everyday
//! sense: 権限 → permission, not power; 検証 → validate, not inspection);
//! the dictionary reads the rest, and what neither has goes to the bridge
//! (reading and e5 cosine against the repository's words). A dictionary
//! term lists every sense's words (表示 → display, indication, expression,
//! …); the ranker keeps those the repository's vocabulary uses
//! ([`QueryPlan::keep_dictionary_words`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

use super::plan::{
    QueryPlan, Script, Translation, TranslationSource, script, stem, uncovered_runs,
};

/// Japanese term → English words, best first.
#[derive(Default)]
pub struct Dictionary {
    terms: HashMap<String, Vec<String>>,
    /// Chars of the longest term (the longest-match window).
    longest: usize,
}

/// The machine's dictionary ([`crate::config::dictionary_path`]), read
/// once; empty when the file is missing or unreadable (the planner then has
/// the glossary and the bridge only; `code-intel status` says which).
pub fn dictionary() -> &'static Dictionary {
    static DICTIONARY: OnceLock<Dictionary> = OnceLock::new();
    DICTIONARY.get_or_init(|| {
        let path = crate::config::dictionary_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Dictionary::parse(&text),
            Err(e) => {
                tracing::debug!("no dictionary at {}: {e}", path.display());
                Dictionary::default()
            }
        }
    })
}

impl Dictionary {
    /// Reads `term<TAB>words` lines (`#` comments); lines without words are
    /// skipped.
    pub fn parse(text: &str) -> Dictionary {
        let mut d = Dictionary::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((term, words)) = line.split_once('\t') else {
                continue;
            };
            let words: Vec<String> = words.split_whitespace().map(String::from).collect();
            let term = term.trim();
            if words.is_empty() || term.is_empty() {
                continue;
            }
            d.longest = d.longest.max(term.chars().count());
            d.terms.insert(term.to_string(), words);
        }
        d
    }

    /// Terms held.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when no term is held.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The words of exactly `term`.
    pub fn get(&self, term: &str) -> Option<&[String]> {
        self.terms.get(term).map(Vec::as_slice)
    }

    /// The dictionary's terms in `text` outside `covered` (byte spans the
    /// glossary took), left to right, the longest at each position: byte
    /// span and words. Terms mix scripts (並び替え, 取り消し); a katakana
    /// term counts only as a whole katakana run (not ポート inside
    /// エクスポート, a fragment).
    pub fn find(&self, text: &str, covered: &[(usize, usize)]) -> Vec<((usize, usize), &[String])> {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let at = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
        let taken = super::plan::covered_bytes(text, covered);
        let free = |i: usize| !taken[chars[i].0];
        let katakana = |i: usize| {
            chars
                .get(i)
                .is_some_and(|(_, c)| script(*c) == Script::Katakana)
        };
        // An all-katakana span with no katakana on either side.
        let whole_run = |a: usize, b: usize| !(katakana(b) || a > 0 && katakana(a - 1));
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let found = (2..=self.longest.min(chars.len() - i)).rev().find_map(|n| {
                if !(i..i + n).all(free) {
                    return None;
                }
                let words = self.get(&text[at(i)..at(i + n)])?;
                ((i..i + n).any(|k| !katakana(k)) || whole_run(i, i + n)).then_some((n, words))
            });
            match found {
                Some((n, words)) => {
                    out.push(((at(i), at(i + n)), words));
                    i += n;
                }
                None => i += 1,
            }
        }
        out
    }
}

/// Weight in the full-text query of a dictionary term's main word (below
/// the glossary's main sense, 1.0: a general dictionary's word may be
/// another sense than the request's), of its other word (other senses as
/// often as synonyms: 画面 → screen, image), and the words a term keeps
/// ([`QueryPlan::keep_dictionary_words`]). Chosen on the development parts
/// of the Japanese tickets against three words at 0.8 and two at 0.6 / 0.3
/// (bench/README.md § Japanese bridge).
const DICTIONARY_WEIGHT: f32 = 0.8;
const DICTIONARY_WEIGHT_OTHER: f32 = 0.4;
const DICTIONARY_WORDS: usize = 2;

impl QueryPlan {
    /// Reads the dictionary's terms in what the glossary left of the
    /// request ([`Dictionary::find`] outside [`QueryPlan::covered`]), each
    /// with all its words at [`DICTIONARY_WEIGHT`]; the runs neither covers
    /// become [`QueryPlan::untranslated`], for the bridge. Call
    /// [`QueryPlan::keep_dictionary_words`] next.
    pub fn read_dictionary(&mut self, query: &str, dictionary: &Dictionary) {
        let query: String = query.nfkc().collect();
        if dictionary.is_empty() || !super::plan::is_japanese(&query) {
            return;
        }
        for (span, words) in dictionary.find(&query, &self.covered) {
            let term = &query[span.0..span.1];
            self.covered.push(span);
            if !self.translated.iter().any(|t| t.term == term) {
                self.translated.push(Translation {
                    term: term.to_string(),
                    words: words
                        .iter()
                        .map(|w| (w.clone(), DICTIONARY_WEIGHT))
                        .collect(),
                    via: TranslationSource::Dictionary,
                });
            }
        }
        self.untranslated = uncovered_runs(&query, &self.covered)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        self.finish(&query);
    }

    /// Narrows each dictionary term's words to the first
    /// [`DICTIONARY_WORDS`] of distinct stems that `known` accepts (the
    /// repository's vocabulary: 一覧 → list, table rather than look,
    /// glance); a term left with none goes to the bridge. With `known`
    /// `None` (no embedder, or an index without `vocab`) its first ones.
    pub fn keep_dictionary_words(&mut self, query: &str, known: Option<&dyn Fn(&str) -> bool>) {
        let mut unknown = Vec::new();
        for t in &mut self.translated {
            if t.via != TranslationSource::Dictionary {
                continue;
            }
            // One word a stem (display, displaying); the main one weighs
            // DICTIONARY_WEIGHT, the others DICTIONARY_WEIGHT_OTHER.
            let mut stems: Vec<String> = Vec::new();
            t.words.retain(|(w, _)| {
                let s = stem(w);
                let keep = !stems.contains(&s) && known.is_none_or(|k| k(w));
                if keep {
                    stems.push(s);
                }
                keep
            });
            t.words.truncate(DICTIONARY_WORDS);
            for (i, (_, weight)) in t.words.iter_mut().enumerate() {
                *weight = if i == 0 {
                    DICTIONARY_WEIGHT
                } else {
                    DICTIONARY_WEIGHT_OTHER
                };
            }
            if t.words.is_empty() {
                unknown.push(t.term.clone());
            }
        }
        self.translated
            .retain(|t| t.via != TranslationSource::Dictionary || !t.words.is_empty());
        for term in unknown {
            if term.chars().count() >= 2 && !self.untranslated.contains(&term) {
                self.untranslated.push(term);
            }
        }
        let query: String = query.nfkc().collect();
        self.finish(&query);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::plan::plan;

    const SAMPLE: &str = "# test\n検索\tlooking retrieval searching\n結果\tresult consequence\n\
        画面\tscreen image\nエクスポート\texport\nポート\tport\n並び替え\tsort\n検索結果画面表\t\n";

    fn terms<'a>(d: &Dictionary, text: &'a str, covered: &[(usize, usize)]) -> Vec<&'a str> {
        d.find(text, covered)
            .into_iter()
            .map(|((a, b), _)| &text[a..b])
            .collect()
    }

    #[test]
    fn the_longest_term_at_each_position_left_to_right() {
        let d = Dictionary::parse(SAMPLE);
        assert_eq!(d.len(), 6, "a line without words is skipped");
        assert_eq!(
            terms(&d, "検索結果画面を並び替えたい", &[]),
            ["検索", "結果", "画面", "並び替え"]
        );
        // What the glossary took is not read again.
        let covered = [("検索結果".len(), "検索結果画面".len())];
        assert_eq!(terms(&d, "検索結果画面", &covered), ["検索", "結果"]);
        assert_eq!(d.find("検索", &[])[0].1[0], "looking");
    }

    /// The dictionary `scripts/setup.sh` builds reads everyday words of
    /// tickets: required where the test assets are
    /// (`CODE_INTEL_REQUIRE_ASSETS`), as the model is.
    #[test]
    fn the_installed_dictionary_reads_everyday_words() {
        let path = crate::config::dictionary_path();
        let Ok(text) = std::fs::read_to_string(&path) else {
            assert!(
                std::env::var_os("CODE_INTEL_REQUIRE_ASSETS").is_none(),
                "no dictionary at {} although CODE_INTEL_REQUIRE_ASSETS is set: scripts/setup.sh builds it",
                path.display()
            );
            return eprintln!(
                "no dictionary at {}: run through scripts/test.sh",
                path.display()
            );
        };
        let d = Dictionary::parse(&text);
        assert!(d.len() > 30_000, "{} terms", d.len());
        for (ja, en) in [
            ("顧客", "customer"),
            ("削除", "deletion"),
            ("表示", "display"),
            ("並べ替え", "sort"),
            ("ボタン", "button"),
            ("プレイリスト", "playlist"),
        ] {
            let words = d.get(ja).unwrap_or_default();
            assert!(words.iter().any(|w| w == en), "{ja}: {words:?}");
        }
    }

    #[test]
    fn a_katakana_term_is_a_whole_run() {
        let d = Dictionary::parse(SAMPLE);
        assert_eq!(terms(&d, "CSVをエクスポートする", &[]), ["エクスポート"]);
        // Not ポート inside a longer run the dictionary lacks.
        assert!(terms(&d, "インポートする", &[]).is_empty());
        assert_eq!(terms(&d, "ポート番号", &[]), ["ポート"]);
    }

    /// A dictionary term keeps the first words of distinct stems the
    /// repository uses, the main one weighing more; one with none goes to
    /// the bridge; without a vocabulary the first ones stay.
    #[test]
    fn dictionary_terms_keep_the_words_the_repository_uses() {
        let term = |t: &str, words: &[&str]| Translation {
            term: t.to_string(),
            words: words.iter().map(|w| ((*w).to_string(), 1.0)).collect(),
            via: TranslationSource::Dictionary,
        };
        let fresh = || {
            let mut p = plan("画面を表示");
            p.translated = vec![
                term("表示", &["display", "displaying", "indication", "showing"]),
                term("画面", &["screen", "image"]),
                term("場合", &["case", "situation"]),
            ];
            p.untranslated.clear();
            p
        };
        let vocab = ["displayed", "show", "image", "screen"];
        let known = |w: &str| vocab.iter().any(|v| stem(v) == stem(w));
        let mut p = fresh();
        p.keep_dictionary_words("画面を表示", Some(&known));
        let words = |p: &QueryPlan, t: &str| -> Vec<(String, f32)> {
            p.translated
                .iter()
                .find(|x| x.term == t)
                .map(|x| x.words.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            words(&p, "表示"),
            [
                ("display".to_string(), DICTIONARY_WEIGHT),
                ("showing".to_string(), DICTIONARY_WEIGHT_OTHER)
            ]
        );
        assert_eq!(words(&p, "画面").len(), 2);
        assert!(words(&p, "場合").is_empty());
        assert_eq!(p.untranslated, ["場合"]);
        assert!(p.keywords.iter().any(|k| k == "display"));
        let mut p = fresh();
        p.keep_dictionary_words("画面を表示", None);
        assert_eq!(words(&p, "表示").len(), DICTIONARY_WORDS);
        assert_eq!(words(&p, "表示")[1].0, "indication", "one word a stem");
    }
}
