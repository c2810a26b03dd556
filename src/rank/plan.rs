//! The router plan of a request ("traffic control, not judgement": it
//! routes, the session decides): identifiers, keywords, Japanese terms found by the seed
//! glossary, framework chunk kinds hinted, heuristic slots and the tools to
//! call next. Words only, no model.

use std::collections::BTreeMap;

use serde::Serialize;

use unicode_normalization::UnicodeNormalization;

use crate::session::SlotName;
use crate::util::split_identifier;

use super::words::keywords_of;
pub use super::words::stem;

/// The seed glossary (`assets/glossary/ja-en.tsv`): Japanese term → English
/// words, longest terms first (a term inside a longer matched one is
/// skipped). With `CODE_INTEL_GLOSSARY=general` (read once) only the lines
/// whose source column says `general` are loaded: the benchmark's figures
/// without the lines a Japanese set may have asked for (bench/glossary.py,
/// bench/report.py). They stay in by default, dictionary or not: they hold
/// software senses the general dictionary lacks (ログイン → authenticate,
/// 検証 → validate; bench/README.md § Japanese bridge).
pub fn glossary() -> &'static [(String, Vec<String>)] {
    static GLOSSARY: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    GLOSSARY.get_or_init(|| {
        let general_only = std::env::var("CODE_INTEL_GLOSSARY").is_ok_and(|v| v == "general");
        parse_glossary(
            include_str!("../../assets/glossary/ja-en.tsv"),
            general_only,
        )
    })
}

/// The entries of a glossary file (`japanese<TAB>english words<TAB>source`,
/// `#` comments), longest terms first; `general_only` keeps the lines whose
/// source is `general`.
fn parse_glossary(text: &str, general_only: bool) -> Vec<(String, Vec<String>)> {
    let mut g: Vec<(String, Vec<String>)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            let (ja, en, source) = (cols.next()?, cols.next()?, cols.next().unwrap_or(""));
            if general_only && source.trim() != "general" {
                return None;
            }
            let words: Vec<String> = en.split_whitespace().map(String::from).collect();
            (!words.is_empty()).then(|| (ja.trim().to_string(), words))
        })
        .collect();
    g.sort_by_key(|(ja, _)| std::cmp::Reverse(ja.chars().count()));
    g
}

/// Framework chunk kinds hinted by keyword stems (see [`stem`]); `field` is a form's, not a column (bench/README.md § Honest agent trial: "an empty search field" hinted migrations).
const KIND_HINTS: &[(&str, &[&str])] = &[
    ("form", &["filament_form"]),
    ("field", &["filament_form"]),
    ("input", &["filament_form"]),
    ("stor", &["table_schema"]),
    ("sav", &["table_schema"]),
    ("persist", &["table_schema"]),
    ("databas", &["table_schema"]),
    ("migration", &["table_schema"]),
    ("schema", &["table_schema"]),
    ("column", &["table_schema", "filament_table"]),
    ("action", &["filament_action"]),
    ("button", &["filament_action"]),
    ("confirm", &["filament_action"]),
    ("confirmation", &["filament_action"]),
    ("modal", &["filament_action"]),
    ("relation", &["eloquent_relation"]),
    ("relationship", &["eloquent_relation"]),
    ("color", &["tailwind_theme"]),
    ("colour", &["tailwind_theme"]),
    ("theme", &["tailwind_theme"]),
    ("font", &["tailwind_theme"]),
    ("breakpoint", &["tailwind_theme"]),
    ("plugin", &["tailwind_plugins"]),
    ("package", &["composer_require", "composer_require_dev"]),
    ("dependency", &["composer_require", "composer_require_dev"]),
    ("autoload", &["composer_autoload"]),
    ("navigation", &["filament_resource"]),
    ("menu", &["filament_resource"]),
];

/// Verbs that say what the user wants done (the `desired_action` slot).
const ACTION_WORDS: &[&str] = &[
    "add",
    "change",
    "fix",
    "remove",
    "delete",
    "rename",
    "update",
    "implement",
    "refactor",
    "create",
    "edit",
    "modify",
    "replace",
    "support",
];
/// Words of a problem report (the `observed_issue` slot).
const ISSUE_WORDS: &[&str] = &[
    "error",
    "bug",
    "fail",
    "fails",
    "failing",
    "broken",
    "crash",
    "exception",
    "wrong",
    "slow",
    "エラー",
    "不具合",
    "バグ",
    "されない",
    "できない",
    "動かない",
    "失敗",
    "遅い",
    "おかしい",
];
/// Words of a condition (the `trigger_condition` slot).
const TRIGGER_WORDS: &[&str] = &[
    "when", "after", "before", "if", "時", "とき", "際", "後", "前",
];

/// How a Japanese term was brought to English.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TranslationSource {
    /// The seed glossary (`assets/glossary/ja-en.tsv`).
    Glossary,
    /// The general dictionary (JMdict; `rank/dictionary.rs`).
    Dictionary,
    /// A katakana loanword whose reading matches a repository word.
    Reading,
    /// The nearest repository word by e5 cosine.
    Embedding,
}

/// A Japanese term of the request and the English words it stands for.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Translation {
    pub term: String,
    /// English words, best first, each with its weight in the full-text
    /// query (1.0 for the glossary's main sense).
    pub words: Vec<(String, f32)>,
    pub via: TranslationSource,
}

/// What the router sees in a request.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryPlan {
    /// Code identifiers in the request (`ProductResource`, `save_order`,
    /// `App\Models\Order`, `` `foo` ``).
    pub identifiers: Vec<String>,
    /// Lowercase keywords: English words, identifier parts and the English
    /// words of Japanese terms.
    pub keywords: Vec<String>,
    /// Japanese terms and their English words.
    pub translated: Vec<Translation>,
    /// Japanese terms no translation was found for.
    pub untranslated: Vec<String>,
    /// Katakana runs whose glossary word was taken from inside them
    /// ([`KatakanaMatch::Inside`]), with that glossary term: the bridge
    /// reads the whole run too, and its reading replaces the glossary
    /// word when it finds one (エクスポート → export, not ポート → port).
    #[serde(skip)]
    pub compounds: Vec<(String, String)>,
    /// Byte spans of the NFKC-normalised request that a glossary or
    /// dictionary term took ([`QueryPlan::read_dictionary`] reads the rest).
    #[serde(skip)]
    pub covered: Vec<(usize, usize)>,
    /// Framework chunk kinds the words point at.
    pub kind_hints: Vec<String>,
    /// Slots with the words that suggest them (heuristic; the session's
    /// query frame is what the gate trusts): target_feature,
    /// desired_action, observed_issue, trigger_condition.
    pub slots: BTreeMap<SlotName, Vec<String>>,
    /// Tools to call next, in order.
    pub recommended_tools: Vec<String>,
    pub reasoning: String,
    /// English words of the request itself (before translation), lowercase.
    #[serde(skip)]
    pub english: Vec<String>,
    /// File paths the request names (`sympy/core/numbers.py`, a traceback's
    /// `/home/u/site-packages/sympy/core/numbers.py`), `/`-separated, as
    /// written: [`QueryPlan::names_file`] matches them to repo-relative
    /// paths.
    #[serde(skip)]
    pub named_paths: Vec<String>,
    /// Adjacent keyword pairs of the request's phrases
    /// ([`super::named::phrase_pairs`]): [`QueryPlan::phrase_score`]
    /// matches them to a path's.
    #[serde(skip)]
    pub phrase_pairs: Vec<super::named::WordPair>,
    /// Requests the request names by URL ([`super::named::named_urls`]):
    /// the controllers of their routes are named files.
    #[serde(skip)]
    pub named_urls: Vec<String>,
}

/// Which script a run of Japanese text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    Katakana,
    Kanji,
    Hiragana,
    Other,
}

/// The script of one char (NFKC-normalised text: half-width katakana is
/// full-width by then).
pub fn script(c: char) -> Script {
    match c {
        // ・ (U+30FB, the katakana middle dot) separates words.
        '・' => Script::Other,
        '\u{30A0}'..='\u{30FF}' => Script::Katakana,
        '\u{3040}'..='\u{309F}' => Script::Hiragana,
        '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '々' | '〆' => Script::Kanji,
        _ => Script::Other,
    }
}

/// True when the text has kana or kanji.
pub fn is_japanese(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(
            script(c),
            Script::Katakana | Script::Hiragana | Script::Kanji
        )
    })
}

/// Which bytes of `text` the `covered` spans take: one pass over the spans
/// rather than every span for every char (a 32 Ki-char request holds
/// thousands of matched terms).
pub(super) fn covered_bytes(text: &str, covered: &[(usize, usize)]) -> Vec<bool> {
    let mut taken = vec![false; text.len()];
    for &(a, b) in covered {
        for t in &mut taken[a.min(text.len())..b.min(text.len())] {
            *t = true;
        }
    }
    taken
}

/// Japanese segments of a request that the glossary does not cover, for the
/// bridge: maximal katakana runs and kanji runs of two or more chars
/// (a single kanji is mostly the stem of a verb whose ending is kana:
/// 使う, 渡す). Hiragana is particles and endings and is left out.
pub(super) fn uncovered_runs(text: &str, covered: &[(usize, usize)]) -> Vec<(String, Script)> {
    let mut out: Vec<(String, Script)> = Vec::new();
    let mut cur = String::new();
    let mut cur_script = Script::Other;
    let flush = |cur: &mut String, s: Script, out: &mut Vec<(String, Script)>| {
        let n = cur.chars().count();
        let keep = match s {
            Script::Katakana => n >= 2,
            Script::Kanji => n >= 2,
            _ => false,
        };
        if keep && !out.iter().any(|(t, _)| t == cur) {
            out.push((cur.clone(), s));
        }
        cur.clear();
    };
    let taken = covered_bytes(text, covered);
    for (at, c) in text.char_indices() {
        let inside = taken[at];
        let s = if inside { Script::Other } else { script(c) };
        if s != cur_script {
            flush(&mut cur, cur_script, &mut out);
            cur_script = s;
        }
        cur.push(c);
    }
    flush(&mut cur, cur_script, &mut out);
    out
}

/// Katakana pieces shorter than this are fragments of a word, not words
/// (スキーム holds キー with ス and ム left over).
const MIN_KATAKANA_WORD_CHARS: usize = 3;

/// Where a glossary match at `span` (bytes) sits in its katakana run.
#[derive(Debug, PartialEq)]
enum KatakanaMatch {
    /// On word boundaries: what is left of the run on each side is empty or
    /// ends (starts) with another glossary term, or the match is no
    /// katakana.
    Word,
    /// Inside a longer run whose rest on a side is no glossary term but a
    /// piece of [`MIN_KATAKANA_WORD_CHARS`] or more: キュー in マネージドキュー
    /// (a word), but also ロック in コードブロック and ポート in エクスポート
    /// (fragments). Taken, and the whole run (the value) is handed to the
    /// bridge too, which may read it as one word or two
    /// ([`QueryPlan::compounds`]).
    Inside(String),
    /// A fragment: キー in スキーム, ビュー in アトリビュート.
    Fragment,
}

fn katakana_match(text: &str, span: (usize, usize)) -> KatakanaMatch {
    let is_kata = |c: char| script(c) == Script::Katakana;
    if !text[span.0..span.1].chars().all(is_kata) {
        return KatakanaMatch::Word;
    }
    // The rest of the katakana run on each side of the match.
    let left_start = text[..span.0]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_kata(*c))
        .last()
        .map_or(span.0, |(i, _)| i);
    let right_len: usize = text[span.1..]
        .chars()
        .take_while(|c| is_kata(*c))
        .map(char::len_utf8)
        .sum();
    let (left, right) = (&text[left_start..span.0], &text[span.1..span.1 + right_len]);
    let glossary_left =
        left.is_empty() || glossary().iter().any(|(t, _)| left.ends_with(t.as_str()));
    let glossary_right = right.is_empty()
        || glossary()
            .iter()
            .any(|(t, _)| right.starts_with(t.as_str()));
    let is_word = |piece: &str| piece.chars().count() >= MIN_KATAKANA_WORD_CHARS;
    if glossary_left && glossary_right {
        KatakanaMatch::Word
    } else if (glossary_left || is_word(left)) && (glossary_right || is_word(right)) {
        KatakanaMatch::Inside(text[left_start..span.1 + right_len].to_string())
    } else {
        KatakanaMatch::Fragment
    }
}

impl QueryPlan {
    /// Whether the request names `file` (repo-relative): one of its
    /// [`named_paths`](QueryPlan::named_paths) is `file` or ends with
    /// `/file`.
    pub fn names_file(&self, file: &str) -> bool {
        super::named::names_file(&self.named_paths, file)
    }

    /// The `phrase` feature of `file` (0, 0.5 or 1;
    /// [`super::named::phrase_score`]).
    pub fn phrase_score(&self, file: &str) -> f32 {
        super::named::phrase_score(&self.phrase_pairs, file)
    }
}

/// Builds the plan for one request. Japanese terms are translated by the
/// seed glossary here; [`QueryPlan::untranslated`] lists the rest for the
/// bridge, whose translations [`QueryPlan::add_translations`] folds in.
pub fn plan(query: &str) -> QueryPlan {
    let query: String = query.nfkc().collect();
    let mut identifiers = Vec::new();
    let mut words: Vec<String> = Vec::new();
    for raw in query.split(|c: char| !(c.is_ascii_alphanumeric() || "_\\:`$".contains(c))) {
        let token = raw.trim_matches(|c| c == '`' || c == ':' || c == '$');
        if token.is_empty() {
            continue;
        }
        let codeish = raw.contains('`')
            || token.contains('_')
            || token.contains('\\')
            || token.contains("::")
            || token.chars().skip(1).any(|c| c.is_ascii_uppercase())
                && token.chars().any(|c| c.is_ascii_lowercase());
        if codeish {
            identifiers.push(token.to_string());
        }
        for w in split_identifier(token).split_whitespace() {
            words.push(w.to_string());
        }
    }
    let english = keywords_of(words.iter().cloned());
    let mut translated: Vec<Translation> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let mut compounds: Vec<(String, String)> = Vec::new();
    if is_japanese(&query) {
        for (ja, en) in glossary() {
            for (at, _) in query.match_indices(ja.as_str()) {
                let span = (at, at + ja.len());
                if covered.iter().any(|(a, b)| *a < span.1 && span.0 < *b) {
                    continue;
                }
                match katakana_match(&query, span) {
                    KatakanaMatch::Fragment => continue,
                    KatakanaMatch::Inside(run) => {
                        if !compounds.iter().any(|(r, _)| r == &run) {
                            compounds.push((run, ja.clone()));
                        }
                    }
                    KatakanaMatch::Word => {}
                }
                covered.push(span);
                if !translated.iter().any(|t| &t.term == ja) {
                    translated.push(Translation {
                        term: ja.clone(),
                        words: en
                            .iter()
                            .enumerate()
                            .map(|(i, w)| (w.clone(), if i == 0 { 1.0 } else { 0.7 }))
                            .collect(),
                        via: TranslationSource::Glossary,
                    });
                }
            }
        }
    }
    let untranslated = uncovered_runs(&query, &covered)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let mut p = QueryPlan {
        identifiers,
        keywords: Vec::new(),
        translated,
        untranslated,
        compounds,
        covered,
        kind_hints: Vec::new(),
        slots: BTreeMap::new(),
        recommended_tools: Vec::new(),
        reasoning: String::new(),
        english,
        named_paths: super::named::named_paths(&query),
        phrase_pairs: Vec::new(),
        named_urls: super::named::named_urls(&query),
    };
    p.finish(&query);
    p
}

/// The words of `t` an English rendering uses: the main sense of a glossary
/// or cosine translation, every piece of a katakana compound (the bridge's
/// reading gives one word, or one per piece).
fn rendered_words(t: &Translation) -> Vec<&str> {
    let take = match t.via {
        TranslationSource::Reading => t.words.len(),
        TranslationSource::Glossary
        | TranslationSource::Dictionary
        | TranslationSource::Embedding => 1,
    };
    t.words.iter().take(take).map(|(w, _)| w.as_str()).collect()
}

impl QueryPlan {
    /// The request as English words, in its own order, for embedding a
    /// Japanese request as its English counterpart would be: each
    /// translated term gives its main word (a compound the bridge read in
    /// pieces, each piece's: セットアップスクリプト → setup script), the request's ASCII
    /// words stay, the rest (particles, untranslated terms, punctuation)
    /// goes. `バックアップコードの文言を調整` with backup code, wording and
    /// adjust translated → `backup code wording adjust`. `None` for a
    /// request without Japanese or with no term translated.
    pub fn english_rendering(&self, query: &str) -> Option<String> {
        let query: String = query.nfkc().collect();
        self.rendering(&query, false)
    }

    /// [`QueryPlan::english_rendering`] of an NFKC-normalised `query`; with
    /// `phrases`, a `.` stands where a phrase breaks (an untranslated
    /// character other than the noun-joining `の`: a particle, a
    /// punctuation mark) and ASCII runs stay whole (`Settings > Categories`),
    /// for [`super::named::phrase_pairs`]: `請求書の編集画面を開く` → `invoice
    /// edit screen . open`.
    fn rendering(&self, query: &str, phrases: bool) -> Option<String> {
        if !is_japanese(query) || self.translated.is_empty() {
            return None;
        }
        let mut out: Vec<&str> = Vec::new();
        let mut ascii_from: Option<usize> = None;
        let mut i = 0;
        while i < query.len() {
            let rest = &query[i..];
            let term = self
                .translated
                .iter()
                .filter(|t| !t.term.is_empty() && rest.starts_with(t.term.as_str()))
                .map(|t| (t.term.len(), rendered_words(t)))
                .filter(|(_, words)| !words.is_empty())
                .max_by_key(|(len, _)| *len);
            let c = rest.chars().next().unwrap_or(' ');
            if term.is_none() && c.is_ascii() {
                ascii_from.get_or_insert(i);
                i += 1;
                continue;
            }
            if let Some(from) = ascii_from.take() {
                if phrases {
                    out.push(&query[from..i]);
                } else {
                    out.extend(query[from..i].split(|c: char| !c.is_ascii_alphanumeric()));
                }
            }
            match term {
                Some((len, words)) => {
                    out.extend(words);
                    i += len;
                }
                None => {
                    if phrases && c != 'の' && out.last() != Some(&".") {
                        out.push(".");
                    }
                    i += c.len_utf8();
                }
            }
        }
        if let Some(from) = ascii_from {
            if phrases {
                out.push(&query[from..]);
            } else {
                out.extend(query[from..].split(|c: char| !c.is_ascii_alphanumeric()));
            }
        }
        out.retain(|w| !w.is_empty());
        Some(out.join(" "))
    }

    /// Adds the bridge's translations of [`QueryPlan::untranslated`] terms
    /// and recomputes keywords, kind hints and slots.
    pub fn add_translations(&mut self, query: &str, found: Vec<Translation>) {
        let query: String = query.nfkc().collect();
        for t in found {
            self.untranslated.retain(|u| u != &t.term);
            // A compound read whole: the glossary word taken from inside it
            // goes (unless the request has it elsewhere), and so do the
            // rest's pieces left untranslated.
            if let Some((run, inner)) = self.compounds.iter().find(|(r, _)| r == &t.term) {
                if query.matches(inner.as_str()).count() <= query.matches(run.as_str()).count() {
                    self.translated.retain(|x| &x.term != inner);
                }
                self.untranslated.retain(|u| !run.contains(u.as_str()));
            }
            self.translated.push(t);
        }
        self.finish(&query);
    }

    /// Keywords (English words, then translations), kind hints, slots and
    /// recommended tools from the words found so far.
    pub(super) fn finish(&mut self, query: &str) {
        let translated_words = self
            .translated
            .iter()
            .flat_map(|t| t.words.iter().map(|(w, _)| w.clone()));
        self.keywords = keywords_of(self.english.iter().cloned().chain(translated_words));
        self.phrase_pairs = super::named::phrase_pairs(query);
        if let Some(rendered) = self.rendering(query, true) {
            for p in super::named::phrase_pairs(&rendered) {
                if !self.phrase_pairs.contains(&p) {
                    self.phrase_pairs.push(p);
                }
            }
        }
        let stems: Vec<String> = self.keywords.iter().map(|k| stem(k)).collect();
        self.kind_hints.clear();
        for (s, kinds) in KIND_HINTS {
            if stems.iter().any(|k| k == s) {
                for k in *kinds {
                    if !self.kind_hints.iter().any(|h| h == k) {
                        self.kind_hints.push((*k).to_string());
                    }
                }
            }
        }
        let lower = query.to_lowercase();
        let keywords = &self.keywords;
        let actions: Vec<String> = keywords
            .iter()
            .filter(|k| ACTION_WORDS.contains(&k.as_str()))
            .cloned()
            .collect();
        let features: Vec<String> = keywords
            .iter()
            .filter(|k| !ACTION_WORDS.contains(&k.as_str()) && !ISSUE_WORDS.contains(&k.as_str()))
            .cloned()
            .collect();
        let issues: Vec<String> = ISSUE_WORDS
            .iter()
            .filter(|w| lower.contains(*w))
            .map(|w| (*w).to_string())
            .collect();
        let triggers: Vec<String> = TRIGGER_WORDS
            .iter()
            .filter(|w| {
                if w.is_ascii() {
                    lower.split_whitespace().any(|t| t == **w)
                } else {
                    lower.contains(*w)
                }
            })
            .map(|w| (*w).to_string())
            .collect();
        self.slots.clear();
        for (slot, v) in [
            (SlotName::TargetFeature, features),
            (SlotName::DesiredAction, actions),
            (SlotName::ObservedIssue, issues),
            (SlotName::TriggerCondition, triggers),
        ] {
            if !v.is_empty() {
                self.slots.insert(slot, v);
            }
        }
        let (tools, reasoning) = if self.identifiers.is_empty() {
            (
                ["search_text", "analyze_structure", "find_references"],
                "no identifier in the request: start from the ranked files below, then confirm \
                 with search_text and read their structure",
            )
        } else {
            (
                ["find_definitions", "find_references", "search_text"],
                "the request names identifiers: look up their definitions and callers first",
            )
        };
        self.recommended_tools = tools.into_iter().map(String::from).collect();
        self.reasoning = reasoning.into();
    }
}

/// Opposite words (compared by [`stem`]): a slot value that
/// says one where its quote says the other contradicts it, however close
/// the embeddings are. multilingual-e5-small scores "make the title
/// optional" for 「タイトルを必須項目にして」 0.855 and "export products to
/// CSV" for 「CSVから商品を取り込みたい」 0.919, above honest paraphrases
/// such as "track page views" for 「ページの閲覧数を計測したい」 (0.826):
/// no threshold separates them (docs/measurements.md § Calibration; the
/// word list is frozen: `tests/calibration/value_quote_fresh.tsv` was
/// written without it and reports it, [`super::value_check`]).
/// Japanese quotes are compared through the glossary's English words
/// (`assets/glossary/ja-en.tsv`: 非表示 → hide, 論理削除 → soft delete).
const OPPOSITES: &[(&[&str], &[&str])] = &[
    (&["add", "create", "insert"], &["remove", "delete", "drop"]),
    (
        &["show", "display", "visible"],
        &["hide", "hidden", "invisible"],
    ),
    (&["enable", "enabled"], &["disable", "disabled"]),
    (&["required", "mandatory"], &["optional"]),
    (&["import"], &["export"]),
    (
        &["limit", "restrict", "throttle", "cap"],
        &["unlimited", "unrestricted"],
    ),
    (&["soft"], &["hard", "force", "permanent"]),
    (
        &["increase", "raise", "more"],
        &["decrease", "reduce", "lower", "fewer"],
    ),
    (
        &["keep", "retain", "record"],
        &["delete", "remove", "discard", "purge"],
    ),
    (&["ascending"], &["descending"]),
    (&["include"], &["exclude"]),
    (&["lock"], &["unlock"]),
    (&["encrypt"], &["decrypt"]),
    (&["public"], &["private"]),
    (&["start"], &["stop"]),
];

/// The words of `value` and of `quote` that contradict each other (the
/// value has one side of an [`OPPOSITES`] pair and not the other, the quote
/// the other side and not the first), if any.
pub fn contradiction(value: &str, quote: &str) -> Option<(String, String)> {
    let words = |text: &str| -> std::collections::BTreeSet<String> {
        plan(text).keywords.iter().map(|w| stem(w)).collect()
    };
    let (v, q) = (words(value), words(quote));
    let any = |set: &std::collections::BTreeSet<String>, side: &[&str]| {
        side.iter().map(|w| stem(w)).find(|w| set.contains(w))
    };
    for (a, b) in OPPOSITES {
        for (x, y) in [(a, b), (b, a)] {
            if let (Some(vx), None, Some(qy), None) =
                (any(&v, x), any(&v, y), any(&q, y), any(&q, x))
            {
                return Some((vx, qy));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped line has its three columns, and `general_only` keeps
    /// exactly the `general` lines (the knob of bench/glossary.py's figures).
    #[test]
    fn glossary_lines_carry_their_source() {
        let text = include_str!("../../assets/glossary/ja-en.tsv");
        let entries = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
        let general = entries
            .clone()
            .filter(|l| l.split('\t').nth(2) == Some("general"))
            .count();
        assert!(entries.clone().all(|l| l.split('\t').count() == 3));
        assert_eq!(parse_glossary(text, false).len(), entries.count());
        assert_eq!(parse_glossary(text, true).len(), general);
        assert!(general > 0 && general < parse_glossary(text, false).len());
        let two = "曲\tsong\tkoel-ja\n一覧\tlist index\tgeneral\n# note\n";
        assert_eq!(
            parse_glossary(two, true),
            vec![(
                "一覧".to_string(),
                vec!["list".to_string(), "index".to_string()]
            )]
        );
    }

    /// Pronouns and conjunctions are not keywords; words of place and
    /// amount that can carry a ticket's behaviour are.
    #[test]
    fn function_words_are_not_keywords() {
        let p =
            plan("A user can follow their own profile through the follow endpoint, then scroll up");
        for w in ["their", "own", "through", "then"] {
            assert!(!p.keywords.iter().any(|k| k == w), "{w}: {:?}", p.keywords);
        }
        for w in ["follow", "profile", "endpoint", "scroll"] {
            assert!(
                p.keywords.iter().any(|k| k.starts_with(w)),
                "{w}: {:?}",
                p.keywords
            );
        }
    }

    #[test]
    fn stems() {
        for (a, b) in [
            ("stored", "store"),
            ("stores", "storing"),
            ("orders", "order"),
            ("categories", "category"),
            ("fields", "field"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("form"), stem("format"));
    }

    #[test]
    fn plan_reads_japanese_and_identifiers() {
        let p = plan("商品のフォームに在庫数フィールドを追加");
        for k in ["product", "form", "stock", "field", "add"] {
            assert!(p.keywords.contains(&k.to_string()), "{k}: {:?}", p.keywords);
        }
        assert!(p.kind_hints.contains(&"filament_form".to_string()));
        assert_eq!(p.slots[&SlotName::DesiredAction], vec!["add".to_string()]);
        assert!(p.identifiers.is_empty());

        let p = plan("why does `save_order` fail in OrderService::place?");
        assert_eq!(p.identifiers, vec!["save_order", "OrderService::place"]);
        assert!(p.keywords.contains(&"order".to_string()));
        assert_eq!(p.recommended_tools[0], "find_definitions");
        assert!(p.slots.contains_key(&SlotName::ObservedIssue));

        // データベース wins over データ inside it; 設計 is left to the bridge.
        let p = plan("データベースの設計");
        assert_eq!(p.translated.len(), 1);
        assert_eq!(p.untranslated, vec!["設計".to_string()]);
        // Katakana compounds and kanji runs the glossary lacks go to the bridge.
        let p = plan("マネージドキューでワーカーの一時停止を無効にする");
        assert!(
            p.untranslated.contains(&"マネージド".to_string()),
            "{:?}",
            p.untranslated
        );
        assert!(
            p.keywords.contains(&"pause".to_string()) && p.keywords.contains(&"queue".to_string())
        );
        // The whole run goes to the bridge too; a reading of it replaces
        // the glossary word taken from inside (トランスポート is transport, not
        // ポート), and its leftover pieces are no longer untranslated.
        assert_eq!(
            p.compounds,
            vec![("マネージドキュー".to_string(), "キュー".to_string())]
        );
        let mut p = plan("PDFのトランスポート");
        assert!(p.keywords.contains(&"port".to_string()), "{:?}", p.keywords);
        p.add_translations(
            "PDFのトランスポート",
            vec![Translation {
                term: "トランスポート".into(),
                words: vec![("transport".into(), 0.8)],
                via: TranslationSource::Reading,
            }],
        );
        assert!(
            p.keywords.contains(&"transport".to_string())
                && !p.keywords.contains(&"port".to_string()),
            "{:?}",
            p.keywords
        );
        assert!(p.untranslated.is_empty(), "{:?}", p.untranslated);
        // ・ separates words, it is no part of one.
        let p = plan("完全一致・フィルター・タグ条件");
        assert!(
            p.translated.iter().all(|t| !t.term.contains('・'))
                && p.untranslated.iter().all(|t| !t.contains('・')),
            "{p:?}"
        );
        // A glossary word inside a longer katakana word is not that word.
        let p = plan("スキームとアトリビュート");
        let terms: Vec<&str> = p.translated.iter().map(|t| t.term.as_str()).collect();
        assert!(
            !terms.contains(&"キー") && !terms.contains(&"ビュー"),
            "{terms:?}"
        );
        assert!(
            p.untranslated.contains(&"スキーム".to_string()),
            "{:?}",
            p.untranslated
        );
        assert!(p.untranslated.contains(&"アトリビュート".to_string()));
    }

    #[test]
    fn web_application_terms_are_translated() {
        // Seen in an agent trial: 監査, リビジョン and 何件 were left
        // untranslated, お気に入り (hiragana and single kanji) vanished.
        for (request, term, word) in [
            ("監査ログに記録する", "監査ログ", "audit"),
            ("ページのリビジョンを保存する", "リビジョン", "revision"),
            ("お気に入りを追加する", "お気に入り", "favorite"),
            ("コメントが何件あるか表示", "何件", "count"),
            ("下書きを公開する", "下書き", "draft"),
        ] {
            let p = plan(request);
            assert!(
                p.keywords.contains(&word.to_string()),
                "{request}: {:?}",
                p.keywords
            );
            assert!(
                p.translated.iter().any(|t| t.term == term),
                "{request}: {:?}",
                p.translated
            );
            assert!(
                !p.untranslated.iter().any(|u| u.contains(term)),
                "{request}: {:?}",
                p.untranslated
            );
        }
    }

    #[test]
    fn a_japanese_request_is_rendered_in_english_words() {
        let p = plan("WYSIWYG: テーブルのコメントを修正");
        assert_eq!(
            p.english_rendering("WYSIWYG: テーブルのコメントを修正")
                .as_deref(),
            Some("WYSIWYG table comment fix")
        );
        // An untranslated term is left out, the longer term wins over the
        // one inside it (監査ログ over ログ).
        let q = "監査ログのウェールズを修正";
        assert_eq!(plan(q).english_rendering(q).as_deref(), Some("audit fix"));
        let q = "fix the audit log";
        assert_eq!(plan(q).english_rendering(q), None);
        // A compound the bridge read in pieces gives every piece.
        let q = "S3 セットアップスクリプトの修正";
        let mut p = plan(q);
        p.add_translations(
            q,
            vec![Translation {
                term: "セットアップスクリプト".into(),
                words: vec![("setup".into(), 0.8), ("script".into(), 0.8)],
                via: TranslationSource::Reading,
            }],
        );
        assert_eq!(
            p.english_rendering(q).as_deref(),
            Some("S3 setup script fix")
        );
    }

    #[test]
    fn opposite_words_contradict_and_paraphrases_do_not() {
        for (v, q) in [
            ("make the title optional", "タイトルを必須項目にして"),
            ("remove the discount column", "割引の列を追加して"),
            ("show the column on mobile", "スマホではその列を非表示に"),
            ("export products to CSV", "CSVから商品を取り込みたい"),
            ("hard delete customers", "顧客を論理削除にしたい"),
            ("hide the banner", "show the banner on the home page"),
        ] {
            assert!(contradiction(v, q).is_some(), "{v} / {q}");
        }
        for (v, q) in [
            ("make the title required", "タイトルを必須項目にして"),
            ("hide the column on mobile", "スマホではその列を非表示に"),
            ("soft delete customers", "顧客を論理削除にしたい"),
            ("add a search box", "検索ボックスを追加"),
            ("keep an audit log of changes", "変更の監査ログを残したい"),
            ("fix", "直して"),
        ] {
            assert_eq!(contradiction(v, q), None, "{v} / {q}");
        }
    }
}
