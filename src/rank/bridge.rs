//! The Japanese → English bridge: Japanese terms of a request that the seed
//! glossary does not cover are mapped to the repository's own English words
//! (the `vocab` table: identifier words of paths and definition names, each
//! embedded once per index with multilingual-e5-small).
//!
//! Two signals, because each alone fails where the other works
//! (`bench/README.md` § Japanese bridge):
//! - **e5 cosine** between the term and each word (`query:` form on both
//!   sides, as for symmetric tasks). It carries meaning across scripts
//!   (プロセス → process 0.956, 接続 → connection 0.928) but confuses words
//!   that share sub-word pieces (フェイク → `feff` 0.898, `fake` absent from
//!   the top 5; トランザクション → `truncation`).
//! - **reading**: a katakana loanword is transliterated (Hepburn) and its
//!   consonant skeleton compared with the word's, with the substitutions
//!   Japanese loanwords make (l/r, v/b, th/s, silent e, final -er → ā):
//!   トランザクション `trnzkSn` vs transaction `trnskSn` → 0.96. Alone it
//!   ties unrelated words with the same consonants (スコープ: scope, skip,
//!   escape), which the cosine separates.
//!
//! A katakana term takes the word with the best mean of both; a kanji term
//! the nearest word by cosine when it clears [`KANJI_MIN_COSINE`].

use std::collections::{HashMap, HashSet};

use super::plan::{Script, Translation, TranslationSource, glossary, script, stem};

/// Chars a compound's piece needs to be read as a word (a glossary term may
/// be shorter: キー): two-kana pieces read like too many words (ネイ: neon).
const MIN_PIECE_CHARS: usize = 3;

/// The glossary's English words for exactly `term`.
fn glossary_words(term: &str) -> Option<&'static [String]> {
    glossary()
        .iter()
        .find(|(t, _)| t == term)
        .map(|(_, en)| en.as_slice())
}

/// Whether a compound's piece can be read: a glossary term, or a piece of
/// [`MIN_PIECE_CHARS`] or more for the reading match.
fn readable_piece(piece: &str) -> bool {
    piece.chars().count() >= MIN_PIECE_CHARS || glossary_words(piece).is_some()
}

/// Two-piece splits of a katakana term, for reading it as a compound: the
/// second piece not opening with a char no word opens with (ー, ッ, ン,
/// small kana), each piece readable ([`readable_piece`]). Terms under four
/// chars have none.
pub fn compound_splits(term: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = term.chars().collect();
    if chars.len() < 4 || !chars.iter().all(|c| script(*c) == Script::Katakana) {
        return Vec::new();
    }
    (2..=chars.len() - 2)
        .filter(|&i| !"ーッンァィゥェォャュョヮヵヶ".contains(chars[i]))
        .map(|i| -> (String, String) { (chars[..i].iter().collect(), chars[i..].iter().collect()) })
        .filter(|(a, b)| readable_piece(a) && readable_piece(b))
        .collect()
}

/// The pieces of `terms`' compound splits that are read by their e5 vector
/// (the glossary terms among them need none), each once and none of
/// `terms`: what [`Vocabulary::translate`]'s `pieces` needs embedded.
pub fn compound_pieces(terms: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (a, b) in terms.iter().flat_map(|t| compound_splits(t)) {
        for p in [a, b] {
            if glossary_words(&p).is_none() && !out.contains(&p) && !terms.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Cosine a kanji term's nearest word must reach. e5 scores unrelated word
/// pairs up to ~0.89 (calibration run, `tests/calibration`), related
/// kanji→English pairs 0.90–0.94 (検証 → verify 0.908, 接続 → connect 0.927).
pub const KANJI_MIN_COSINE: f32 = 0.905;
/// Reading similarity (0–1, consonant skeletons) a katakana candidate needs.
pub const MIN_READING: f32 = 0.75;
/// Mean of reading and scaled cosine a katakana candidate needs.
pub const MIN_KATAKANA_SCORE: f32 = 0.7;
/// A reading this close on a skeleton of [`DISTINCT_SKELETON`] symbols or
/// more is taken whatever the mean, once the cosine clears the unrelated
/// floor (`COSINE_RANGE.0`): ショートカット `Stkt` reads as shortcut exactly,
/// but e5 puts the two at 0.839 only (the mean 0.63); such a word scores
/// its reading, not the mean (the full-text weight follows the score:
/// BookStack's Japanese MRR 0.577 → 0.587, bench/README.md). Short
/// skeletons keep the mean: ロール `rr` reads like role, roller, rule, error
/// alike.
pub const EXACT_READING: f32 = 0.95;
/// Skeleton symbols a reading needs to count as specific (see [`EXACT_READING`]).
pub const DISTINCT_SKELETON: usize = 4;
/// Cosines are scaled to 0–1 over this range for the katakana mean: e5's
/// unrelated word pairs start around 0.80, close translations reach 0.95.
const COSINE_RANGE: (f32, f32) = (0.80, 0.95);
/// Weight of a bridged word in the full-text query, times its score: below
/// the glossary's 1.0 because the bridge can be wrong.
const BRIDGE_WEIGHT: f32 = 0.8;

/// One vocabulary word in memory.
struct Word {
    word: String,
    skeleton: Vec<u8>,
    vector: Vec<f32>,
}

/// The repository vocabulary, loaded from `vocab` (a few thousand words:
/// laravel/framework has ~5,000; 384 floats each).
#[derive(Default)]
pub struct Vocabulary {
    words: Vec<Word>,
    /// The words' stems ([`stem`]), for [`Vocabulary::knows`].
    stems: HashSet<String>,
}

impl Vocabulary {
    /// Builds the in-memory vocabulary from (word, vector) rows.
    pub fn new(rows: Vec<(String, Vec<f32>)>) -> Vocabulary {
        Vocabulary {
            stems: rows.iter().map(|(w, _)| stem(w)).collect(),
            words: rows
                .into_iter()
                .map(|(word, vector)| Word {
                    skeleton: english_skeleton(&word),
                    word,
                    vector,
                })
                .collect(),
        }
    }

    /// True when no word is held.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Whether a word of the vocabulary has `word`'s stem (`searching`
    /// for `search`).
    pub fn knows(&self, word: &str) -> bool {
        self.stems.contains(&stem(word))
    }

    /// Translates `terms` (Japanese runs the glossary did not cover, and
    /// the compounds it took a word from inside), given each term's e5
    /// query vector in the same order. A katakana term no word reads as
    /// is tried as a compound of two ([`compound_splits`]): each piece
    /// a glossary term or read as a word, whose vectors `pieces` holds
    /// (バックアップコード → backup + code, コードブロック → code + block).
    pub fn translate(
        &self,
        terms: &[String],
        vectors: &[Vec<f32>],
        pieces: &HashMap<String, Vec<f32>>,
    ) -> Vec<Translation> {
        let mut out = Vec::new();
        for (term, v) in terms.iter().zip(vectors) {
            let katakana = term.chars().all(|c| script(c) == Script::Katakana);
            let found = if katakana {
                self.by_reading(term, v)
                    .map(|(words, _)| words)
                    .or_else(|| self.compound(term, pieces))
                    .map(|words| (words, TranslationSource::Reading))
            } else {
                self.by_meaning(v)
            };
            if let Some((words, via)) = found {
                out.push(Translation {
                    term: term.clone(),
                    words,
                    via,
                });
            }
        }
        out
    }

    /// The best two-piece reading of a katakana compound: both pieces known
    /// (a glossary term scores 1, a reading its score), the split whose
    /// weaker piece scores best.
    fn compound(
        &self,
        term: &str,
        pieces: &HashMap<String, Vec<f32>>,
    ) -> Option<Vec<(String, f32)>> {
        let piece = |p: &str| -> Option<(Vec<(String, f32)>, f32)> {
            if let Some(en) = glossary_words(p) {
                return Some((
                    en.iter()
                        .take(1)
                        .map(|w| (w.clone(), BRIDGE_WEIGHT))
                        .collect(),
                    1.0,
                ));
            }
            let (words, _) = self.by_reading(p, pieces.get(p)?)?;
            let score = words.first()?.1 / BRIDGE_WEIGHT;
            Some((words, score))
        };
        compound_splits(term)
            .into_iter()
            .filter_map(|(a, b)| {
                let (wa, sa) = piece(&a)?;
                let (wb, sb) = piece(&b)?;
                Some((wa.into_iter().chain(wb).collect::<Vec<_>>(), sa.min(sb)))
            })
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(words, _)| words)
    }

    fn cosines(&self, v: &[f32]) -> Vec<f32> {
        self.words.iter().map(|w| dot(&w.vector, v)).collect()
    }

    /// Katakana: the best mean of reading similarity and scaled cosine.
    fn by_reading(&self, term: &str, v: &[f32]) -> Option<(Vec<(String, f32)>, TranslationSource)> {
        let reading = katakana_skeleton(term);
        if reading.is_empty() {
            return None;
        }
        let cos = self.cosines(v);
        let mut best: Vec<(usize, f32)> = self
            .words
            .iter()
            .enumerate()
            .filter_map(|(i, w)| {
                let r = skeleton_similarity(&reading, &w.skeleton);
                (r >= MIN_READING).then(|| {
                    let c = ((cos[i] - COSINE_RANGE.0) / (COSINE_RANGE.1 - COSINE_RANGE.0))
                        .clamp(0.0, 1.0);
                    let exact = r >= EXACT_READING && reading.len() >= DISTINCT_SKELETON && c > 0.0;
                    let mean = (r + c) / 2.0;
                    (i, if exact { mean.max(r) } else { mean }, exact)
                })
            })
            .filter(|(_, s, exact)| *s >= MIN_KATAKANA_SCORE || *exact)
            .map(|(i, s, _)| (i, s))
            .collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (top, score) = *best.first()?;
        // Inflections of the same word (`scope`, `scopes`, `scoped`) count
        // as one; the stemmed full-text index treats them alike anyway.
        let words = vec![(self.words[top].word.clone(), BRIDGE_WEIGHT * score)];
        Some((words, TranslationSource::Reading))
    }

    /// Kanji (and mixed) terms: the nearest word by cosine, if close enough.
    fn by_meaning(&self, v: &[f32]) -> Option<(Vec<(String, f32)>, TranslationSource)> {
        let cos = self.cosines(v);
        let (i, c) = cos
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        (c >= KANJI_MIN_COSINE).then(|| {
            let scaled = ((c - COSINE_RANGE.0) / (COSINE_RANGE.1 - COSINE_RANGE.0)).clamp(0.0, 1.0);
            (
                vec![(self.words[i].word.clone(), BRIDGE_WEIGHT * scaled)],
                TranslationSource::Embedding,
            )
        })
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Hepburn romanisation of katakana (digraphs first; ー and ・ dropped, ッ
/// doubles the next consonant, which the skeleton then merges).
pub fn romanize(katakana: &str) -> String {
    const DIGRAPHS: &[(&str, &str)] = &[
        ("キャ", "kya"),
        ("キュ", "kyu"),
        ("キョ", "kyo"),
        ("シャ", "sha"),
        ("シュ", "shu"),
        ("ショ", "sho"),
        ("シェ", "she"),
        ("チャ", "cha"),
        ("チュ", "chu"),
        ("チョ", "cho"),
        ("チェ", "che"),
        ("ニャ", "nya"),
        ("ニュ", "nyu"),
        ("ニョ", "nyo"),
        ("ヒャ", "hya"),
        ("ヒュ", "hyu"),
        ("ヒョ", "hyo"),
        ("ミャ", "mya"),
        ("ミュ", "myu"),
        ("ミョ", "myo"),
        ("リャ", "rya"),
        ("リュ", "ryu"),
        ("リョ", "ryo"),
        ("ギャ", "gya"),
        ("ギュ", "gyu"),
        ("ギョ", "gyo"),
        ("ジャ", "ja"),
        ("ジュ", "ju"),
        ("ジョ", "jo"),
        ("ジェ", "je"),
        ("ビャ", "bya"),
        ("ビュ", "byu"),
        ("ビョ", "byo"),
        ("ピャ", "pya"),
        ("ピュ", "pyu"),
        ("ピョ", "pyo"),
        ("ティ", "ti"),
        ("ディ", "di"),
        ("トゥ", "tu"),
        ("ドゥ", "du"),
        ("デュ", "dyu"),
        ("テュ", "tyu"),
        ("ファ", "fa"),
        ("フィ", "fi"),
        ("フェ", "fe"),
        ("フォ", "fo"),
        ("フュ", "fyu"),
        ("ウィ", "wi"),
        ("ウェ", "we"),
        ("ウォ", "wo"),
        ("ヴァ", "va"),
        ("ヴィ", "vi"),
        ("ヴェ", "ve"),
        ("ヴォ", "vo"),
        ("ツァ", "tsa"),
        ("ツェ", "tse"),
        ("ツォ", "tso"),
        ("クァ", "kwa"),
        ("クィ", "kwi"),
        ("クェ", "kwe"),
        ("クォ", "kwo"),
        ("グァ", "gwa"),
        ("イェ", "ye"),
    ];
    const MONO: &str = "ア a イ i ウ u エ e オ o カ ka キ ki ク ku ケ ke コ ko サ sa シ shi ス su セ se ソ so \
        タ ta チ chi ツ tsu テ te ト to ナ na ニ ni ヌ nu ネ ne ノ no ハ ha ヒ hi フ fu ヘ he ホ ho \
        マ ma ミ mi ム mu メ me モ mo ヤ ya ユ yu ヨ yo ラ ra リ ri ル ru レ re ロ ro ワ wa ヲ wo ン n \
        ガ ga ギ gi グ gu ゲ ge ゴ go ザ za ジ ji ズ zu ゼ ze ゾ zo ダ da ヂ ji ヅ zu デ de ド do \
        バ ba ビ bi ブ bu ベ be ボ bo パ pa ピ pi プ pu ペ pe ポ po ヴ vu ァ a ィ i ゥ u ェ e ォ o \
        ャ ya ュ yu ョ yo";
    let mono: Vec<(&str, &str)> = MONO
        .split_whitespace()
        .collect::<Vec<_>>()
        .chunks(2)
        .filter_map(|p| Some((*p.first()?, *p.get(1)?)))
        .collect();
    let chars: Vec<char> = katakana.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 1 < chars.len() {
            let two: String = chars[i..i + 2].iter().collect();
            if let Some((_, r)) = DIGRAPHS.iter().find(|(k, _)| *k == two) {
                out.push_str(r);
                i += 2;
                continue;
            }
        }
        let one = chars[i].to_string();
        if let Some((_, r)) = mono.iter().find(|(k, _)| *k == one) {
            out.push_str(r);
        }
        i += 1;
    }
    out
}

/// Consonant skeleton symbols: plain ASCII consonants plus `S` (sh), `C`
/// (ch), `T` (ts), `J` (j, soft g), `F` (f).
///
/// A doubled consonant counts once (`tt` in "letter", ッ's `tt` in カット),
/// the same consonant twice across a vowel twice (ロール `rr`, as in "roller";
/// merging those read ロール as `r` and tied it with every word of one r).
fn consonants(s: &str) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    let mut prev: Option<u8> = None;
    for b in s.bytes() {
        if b"aeiouy".contains(&b) {
            prev = None;
            continue;
        }
        if prev != Some(b) {
            out.push(b);
        }
        prev = Some(b);
    }
    out
}

/// The skeleton of a katakana term's reading. ン before a labial (p, b, m)
/// is read `m`, as traditional Hepburn writes it (インポート `import`,
/// コンピュータ `computer`).
pub fn katakana_skeleton(term: &str) -> Vec<u8> {
    let r = romanize(term)
        .replace("np", "mp")
        .replace("nb", "mb")
        .replace("nm", "mm")
        .replace("shi", "S")
        .replace("sh", "S")
        .replace("chi", "C")
        .replace("ch", "C")
        .replace("tsu", "T")
        .replace("ts", "T")
        .replace('j', "J")
        .replace('f', "F");
    consonants(&r)
}

/// The skeleton of an English word as a Japanese reading would sound:
/// `-tion`/`-sion` → S n, `ph` → F, `qu` → k w, `x` → k s, `th` → s, soft
/// `c` → s, hard `c` → k, final `-er`/`-or`/`-ar`/`-re` → vowel, silent
/// final `e`, and an `r` between a vowel and a consonant dropped, as
/// loanwords drop it (import → インポート, shortcut → ショートカット, format →
/// フォーマット).
pub fn english_skeleton(word: &str) -> Vec<u8> {
    let mut w = word.to_ascii_lowercase();
    for (from, to) in [
        ("ssion", "Sn"),
        ("tion", "Sn"),
        ("sion", "Sn"),
        ("ture", "Ca"),
        ("ph", "F"),
        ("ck", "k"),
        ("qu", "kw"),
        ("x", "ks"),
        ("wh", "w"),
        ("th", "s"),
        ("sh", "S"),
        ("ch", "C"),
    ] {
        w = w.replace(from, to);
    }
    let bytes: Vec<u8> = w.bytes().collect();
    let mut soft = String::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        match b {
            b'c' if matches!(next, Some(b'e' | b'i' | b'y')) => soft.push('s'),
            b'c' => soft.push('k'),
            b'j' => soft.push('J'),
            b'f' => soft.push('F'),
            _ => soft.push(b as char),
        }
    }
    let mut w = soft;
    for suffix in ["er", "or", "ar", "re"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            w.truncate(w.len() - suffix.len());
            w.push('a');
            break;
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    let bytes = w.as_bytes();
    let vowel = |b: Option<&u8>| b.is_some_and(|b| b"aeiou".contains(b));
    let w: Vec<u8> = (0..bytes.len())
        .filter(|&i| {
            let next = bytes.get(i + 1);
            !(bytes[i] == b'r'
                && i > 0
                && vowel(bytes.get(i - 1))
                && next.is_some_and(|b| b.is_ascii_alphabetic() && !b"aeiouy".contains(b)))
        })
        .map(|i| bytes[i])
        .collect();
    consonants(&String::from_utf8_lossy(&w))
}

/// Cost of substituting one skeleton symbol for another: 0 for equal,
/// 0.3 for pairs Japanese merges (l/r, b/v, s/z, f/h, d/t), 0.5 for close
/// sounds (sh/s, ch/sh, j/z, j/g, k/g, ts/t, ts/s), else 1.
fn substitution(a: u8, b: u8) -> f32 {
    if a == b {
        return 0.0;
    }
    let pair = |x: u8, y: u8| (a == x && b == y) || (a == y && b == x);
    if pair(b'l', b'r')
        || pair(b'b', b'v')
        || pair(b's', b'z')
        || pair(b'F', b'h')
        || pair(b'd', b't')
    {
        0.3
    } else if pair(b'S', b's')
        || pair(b'C', b'S')
        || pair(b'J', b'z')
        || pair(b'J', b'g')
        || pair(b'k', b'g')
        || pair(b'T', b't')
        || pair(b'T', b's')
    {
        0.5
    } else {
        1.0
    }
}

/// 1 − weighted edit distance / longer length, in 0–1.
pub fn skeleton_similarity(a: &[u8], b: &[u8]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut prev: Vec<f32> = (0..=b.len()).map(|j| j as f32).collect();
    let mut cur = vec![0.0f32; b.len() + 1];
    for (i, &x) in a.iter().enumerate() {
        cur[0] = (i + 1) as f32;
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j + 1] + 1.0)
                .min(cur[j] + 1.0)
                .min(prev[j] + substitution(x, y));
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    1.0 - prev[b.len()] / a.len().max(b.len()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(k: &str, w: &str) -> f32 {
        skeleton_similarity(&katakana_skeleton(k), &english_skeleton(w))
    }

    #[test]
    fn loanword_readings_match_their_words() {
        assert_eq!(romanize("トランザクション"), "toranzakushon");
        assert_eq!(romanize("フェイク"), "feiku");
        for (k, w) in [
            ("トランザクション", "transaction"),
            ("バリデーション", "validation"),
            ("フェイク", "fake"),
            ("ソケット", "socket"),
            ("タイムアウト", "timeout"),
            ("コンテキスト", "context"),
            ("プレフィックス", "prefix"),
            ("ディスカバリー", "discovery"),
            ("アトリビュート", "attribute"),
            ("デバウンス", "debounce"),
        ] {
            assert!(reading(k, w) >= 0.85, "{k} / {w}: {}", reading(k, w));
        }
        // Loanword rules: ン before a labial, r before a consonant.
        for (k, w) in [
            ("インポート", "import"),
            ("ショートカット", "shortcut"),
            ("フォーマット", "format"),
            ("コンピュータ", "computer"),
            ("ソート", "sort"),
        ] {
            assert!(reading(k, w) >= 0.85, "{k} / {w}: {}", reading(k, w));
        }
        assert!(reading("インポート", "import") > reading("インポート", "input"));
        for (k, w) in [
            ("トランザクション", "truncate"),
            ("フェイク", "queue"),
            ("ソケット", "cookie"),
        ] {
            assert!(reading(k, w) < MIN_READING, "{k} / {w}: {}", reading(k, w));
        }
    }

    #[test]
    fn a_consonant_repeated_across_a_vowel_is_read_twice() {
        assert_eq!(katakana_skeleton("ロール"), b"rr");
        assert_eq!(katakana_skeleton("カット"), b"kt");
        assert!(reading("ロール", "role") >= MIN_READING);
        for w in ["are", "error", "uri"] {
            assert!(
                reading("ロール", w) < MIN_READING,
                "ロール / {w}: {}",
                reading("ロール", w)
            );
        }
    }

    #[test]
    fn an_exact_long_reading_needs_only_a_related_cosine() {
        // e5 puts ショートカット and shortcut at 0.839 (BookStack's
        // vocabulary): the mean with a perfect reading is 0.63, under
        // MIN_KATAKANA_SCORE; a four-consonant exact reading is taken.
        let at = |c: f32| -> Vec<f32> { vec![c, 0.0, 0.0, (1.0 - c * c).sqrt()] };
        let vocab = Vocabulary::new(vec![("shortcut".into(), unit(0))]);
        let none = HashMap::new();
        let t = vocab.translate(&["ショートカット".into()], &[at(0.839)], &none);
        assert_eq!(t[0].words[0].0, "shortcut");
        // It weighs as its reading (1.0), not as the mean that did not
        // decide it.
        assert!(
            (t[0].words[0].1 - BRIDGE_WEIGHT).abs() < 1e-3,
            "{:?}",
            t[0].words
        );
        // Below the unrelated floor it is not.
        assert!(
            vocab
                .translate(&["ショートカット".into()], &[at(0.79)], &none)
                .is_empty()
        );
        // A short skeleton still needs the mean (ロール `rr`).
        let vocab = Vocabulary::new(vec![("roller".into(), unit(0))]);
        assert!(
            vocab
                .translate(&["ロール".into()], &[at(0.839)], &none)
                .is_empty()
        );
    }

    /// A unit vector along axis `i` of four: one word per axis.
    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.0f32; 4];
        v[i] = 1.0;
        v
    }

    #[test]
    fn cosine_breaks_reading_ties() {
        // スコープ reads like scope, skip and escape alike; the vector decides.
        let vocab = Vocabulary::new(vec![
            ("escape".into(), unit(0)),
            ("scope".into(), unit(1)),
            ("skip".into(), unit(2)),
        ]);
        let mut q = unit(1);
        q[0] = 0.3;
        let none = HashMap::new();
        let t = vocab.translate(&["スコープ".into()], &[q], &none);
        assert_eq!(t[0].words[0].0, "scope");
        assert_eq!(t[0].via, TranslationSource::Reading);
        // A kanji term far from every word stays untranslated.
        assert!(
            vocab
                .translate(&["設計".into()], &[unit(3)], &none)
                .is_empty()
        );
    }

    #[test]
    fn a_katakana_compound_is_read_as_two_words() {
        assert!(compound_splits("コード").is_empty());
        // Two-kana pieces are not read (ネイ would read as neon), glossary
        // pieces need no vector (キュー).
        assert!(compound_pieces(&["ネイティブ".into()]).is_empty());
        let pieces = compound_pieces(&["マネージドキュー".into()]);
        assert!(
            pieces.contains(&"マネージド".to_string()) && !pieces.contains(&"キュー".to_string()),
            "{pieces:?}"
        );
        let splits = compound_splits("バックアップコード");
        assert!(splits.contains(&("バックアップ".into(), "コード".into())));
        assert!(
            !splits
                .iter()
                .any(|(_, b)| b.starts_with('ッ') || b.starts_with('ー')),
            "{splits:?}"
        );
        // Vectors: each word on its own axis; a piece's vector points at
        // its word, the whole run's at none of them.
        let vocab = Vocabulary::new(vec![
            ("backup".into(), unit(0)),
            ("code".into(), unit(1)),
            ("block".into(), unit(2)),
        ]);
        let pieces: HashMap<String, Vec<f32>> = [
            ("バックアップ".to_string(), unit(0)),
            ("コード".to_string(), unit(1)),
            ("ブロック".to_string(), unit(2)),
            ("コードブ".to_string(), unit(3)),
            ("ロック".to_string(), unit(3)),
        ]
        .into_iter()
        .collect();
        let t = vocab.translate(
            &["バックアップコード".into(), "コードブロック".into()],
            &[unit(3), unit(3)],
            &pieces,
        );
        let words =
            |i: usize| -> Vec<&str> { t[i].words.iter().map(|(w, _)| w.as_str()).collect() };
        assert_eq!(words(0), ["backup", "code"]);
        assert_eq!(words(1), ["code", "block"]);
        // A piece the glossary knows counts as known (キュー → queue).
        let vocab = Vocabulary::new(vec![("managed".into(), unit(0))]);
        let pieces: HashMap<String, Vec<f32>> =
            [("マネージド".to_string(), unit(0))].into_iter().collect();
        let t = vocab.translate(&["マネージドキュー".into()], &[unit(3)], &pieces);
        let words: Vec<&str> = t[0].words.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(words, ["managed", "queue"]);
    }
}
