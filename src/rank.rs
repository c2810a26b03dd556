//! Hybrid ranking (SPEC §4) and the query router behind the `query` tool.
//!
//! `final = w_vector·vector + w_keyword·min(hits/10, 1) +
//! w_definition·[definition found] + w_reference·min(refs/20, 1) +
//! w_kind·[kind hinted]`, weights from config (`hybrid_weights`, SPEC
//! defaults 0.4/0.2/0.3/0.1; `kind` is ours, default 0.2).
//!
//! - `vector`: the chunk's cosine similarity to the query, min–max
//!   normalised over the candidates. multilingual-e5-small's cosines
//!   cluster in 0.75–0.93 (calibration run, `tests/calibration`), so a raw
//!   cosine × 0.4 spreads candidates by ~0.06 and any lexical signal would
//!   override it; normalised, it spreads them by the full weight.
//! - `hits`: occurrences of the query's keywords among the words of the
//!   chunk's kind, name, FQCN, framework facts and content (identifiers
//!   split, words stemmed), each keyword counted at most 3 times so that a
//!   word repeated ten times cannot saturate the signal alone.
//! - `definition found`: the chunk's symbol name (or its class, for a
//!   method) contains a query keyword (`ProductForm.configure` for
//!   "product form"); a `Schema::table` migration alters a table rather
//!   than defining it and does not count.
//! - `refs`: references to the chunk's symbol name over the repository
//!   (tags queries), capped at 20.
//! - `kind hinted`: the query's words point at this framework chunk kind
//!   ("stored" → `table_schema`, "form field" → `filament_form`).
//!
//! Candidates are the vector top-k plus the chunks of the files where
//! ripgrep (the `search_text` engine) finds the most distinct keywords.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::chunk::split_identifier;
use crate::config::Config;
use crate::repo::Repo;
use crate::search::symbols::SymbolCache;
use crate::search::text::{self, CaseMode, TextQuery};
use crate::store::{ForestHit, Store, StoreError, sql_str};

/// Files whose chunks join the vector candidates: those where ripgrep finds
/// the most distinct keywords (then the most matching lines).
pub const KEYWORD_FILES: usize = 20;
/// Vector candidates per requested result (at least 50).
pub const VECTOR_CANDIDATES_PER_RESULT: usize = 5;

/// Weights of the hybrid score (config key `hybrid_weights`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default)]
pub struct HybridWeights {
    pub vector: f64,
    pub keyword: f64,
    pub definition: f64,
    pub reference: f64,
    /// Framework kind hinted by the query (ours; not in the seeds).
    pub kind: f64,
}

impl Default for HybridWeights {
    /// SPEC §4 / seed v3.9 weights 0.4 / 0.2 / 0.3 / 0.1, plus `kind` 0.2.
    fn default() -> Self {
        HybridWeights {
            vector: 0.4,
            keyword: 0.2,
            definition: 0.3,
            reference: 0.1,
            kind: 0.2,
        }
    }
}

/// Japanese development and business terms → English keywords, so that a
/// Japanese request can match English identifiers lexically. Longest terms
/// are matched first; a term inside a longer matched term is skipped.
const GLOSSARY: &[(&str, &[&str])] = &[
    ("データベース", &["database", "table"]),
    ("トランザクション", &["transaction"]),
    ("パスワード", &["password"]),
    ("リレーション", &["relation"]),
    ("フィールド", &["field"]),
    ("メッセージ", &["message"]),
    ("アップロード", &["upload"]),
    ("ステータス", &["status"]),
    ("カテゴリー", &["category"]),
    ("キャンセル", &["cancel"]),
    ("ルーティング", &["route"]),
    ("フィルター", &["filter"]),
    ("パッケージ", &["package"]),
    ("ログアウト", &["logout"]),
    ("キャッシュ", &["cache"]),
    ("セッション", &["session"]),
    ("ユーザー", &["user"]),
    ("カテゴリ", &["category"]),
    ("テーブル", &["table"]),
    ("ブランド", &["brand"]),
    ("イベント", &["event"]),
    ("ログイン", &["login", "authenticate"]),
    ("フォーム", &["form"]),
    ("フォント", &["font"]),
    ("リセット", &["reset"]),
    ("ユーザ", &["user"]),
    ("カラム", &["column"]),
    ("ボタン", &["button", "action"]),
    ("ページ", &["page"]),
    ("メール", &["mail", "email"]),
    ("テーマ", &["theme"]),
    ("エラー", &["error", "exception"]),
    ("ルート", &["route"]),
    ("キュー", &["queue"]),
    ("ジョブ", &["job"]),
    ("テスト", &["test"]),
    ("ファイル", &["file"]),
    ("データ", &["data"]),
    ("画像", &["image"]),
    ("商品", &["product"]),
    ("製品", &["product"]),
    ("注文", &["order"]),
    ("受注", &["order"]),
    ("顧客", &["customer"]),
    ("会員", &["member", "user"]),
    ("在庫", &["stock", "inventory"]),
    ("価格", &["price"]),
    ("値段", &["price"]),
    ("金額", &["amount", "price"]),
    ("入力", &["input"]),
    ("項目", &["field"]),
    ("追加", &["add"]),
    ("削除", &["delete"]),
    ("更新", &["update"]),
    ("編集", &["edit"]),
    ("作成", &["create"]),
    ("登録", &["register", "create"]),
    ("保存", &["store", "save"]),
    ("確認", &["confirm"]),
    ("通知", &["notification"]),
    ("認証", &["auth", "authenticate"]),
    ("検索", &["search"]),
    ("一覧", &["list", "index", "table"]),
    ("支払", &["payment"]),
    ("決済", &["payment"]),
    ("請求", &["invoice"]),
    ("配送", &["shipping"]),
    ("住所", &["address"]),
    ("翻訳", &["translation", "translatable"]),
    ("言語", &["locale", "language"]),
    ("画面", &["page", "view"]),
    ("設定", &["config", "setting"]),
    ("権限", &["permission", "policy"]),
    ("状態", &["status", "state"]),
    ("日付", &["date"]),
    ("例外", &["exception"]),
    ("関連", &["relation"]),
    ("依存", &["dependency"]),
    ("開始", &["begin", "start"]),
    ("送信", &["send"]),
    ("表示", &["show", "view"]),
    ("並び替え", &["sort"]),
    ("絞り込み", &["filter"]),
    ("処理", &["handle", "process"]),
    ("不具合", &["bug"]),
    ("再試行", &["retry"]),
    ("リトライ", &["retry"]),
    ("失敗", &["fail", "failed"]),
    ("有効期限", &["expire", "expiration"]),
    ("暗号化", &["encrypt"]),
    ("復号", &["decrypt"]),
    ("接続", &["connection", "connect"]),
    ("取得", &["fetch", "find"]),
    ("非同期", &["async", "queue"]),
    ("ログ", &["log"]),
    ("色", &["color"]),
    ("列", &["column"]),
];

/// English stopwords left out of keywords (function words and the verbs
/// every request has).
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "from", "with", "that", "this", "what", "where", "when", "which", "who",
    "how", "why", "are", "was", "were", "is", "be", "been", "does", "do", "did", "can", "could",
    "should", "would", "will", "into", "onto", "our", "your", "my", "its", "it", "to", "of", "in",
    "on", "at", "by", "an", "a", "or", "not", "all", "any", "some", "there", "here", "want",
    "need", "please", "make", "let", "get", "set", "use", "using", "used", "about", "code",
];

/// Framework chunk kinds hinted by keyword stems (see [`stem`]).
const KIND_HINTS: &[(&str, &[&str])] = &[
    ("form", &["filament_form"]),
    ("field", &["filament_form", "table_schema"]),
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

/// What the router sees in a request (seed v3.6 Router: "traffic control,
/// not judgement"): no model is involved, only words.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryPlan {
    /// Code identifiers in the request (`ProductResource`, `save_order`,
    /// `App\Models\Order`, `` `foo` ``).
    pub identifiers: Vec<String>,
    /// Lowercase keywords: English words, identifier parts and glossary
    /// translations of Japanese terms.
    pub keywords: Vec<String>,
    /// Japanese terms found and their English keywords.
    pub translated: Vec<(String, Vec<String>)>,
    /// Framework chunk kinds the words point at.
    pub kind_hints: Vec<String>,
    /// Slots with the words that suggest them (heuristic; the session's
    /// query frame is what the gate trusts): target_feature,
    /// desired_action, observed_issue, trigger_condition.
    pub slots: HashMap<String, Vec<String>>,
    /// Tools to call next, in order.
    pub recommended_tools: Vec<String>,
    pub reasoning: String,
}

/// Builds the plan for one request.
pub fn plan(query: &str) -> QueryPlan {
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
    let mut translated: Vec<(String, Vec<String>)> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let mut glossary: Vec<&(&str, &[&str])> = GLOSSARY.iter().collect();
    glossary.sort_by_key(|(ja, _)| std::cmp::Reverse(ja.len()));
    for (ja, en) in glossary {
        for (at, _) in query.match_indices(ja) {
            let span = (at, at + ja.len());
            if covered.iter().any(|(a, b)| *a <= span.0 && span.1 <= *b) {
                continue;
            }
            covered.push(span);
            if !translated.iter().any(|(t, _)| t == ja) {
                translated.push((
                    (*ja).to_string(),
                    en.iter().map(|s| (*s).to_string()).collect(),
                ));
                words.extend(en.iter().map(|s| (*s).to_string()));
            }
        }
    }
    let mut seen = HashSet::new();
    let keywords: Vec<String> = words
        .into_iter()
        .map(|w| w.to_lowercase())
        .filter(|w| w.len() >= 3 && !STOPWORDS.contains(&w.as_str()))
        .filter(|w| seen.insert(stem(w)))
        .collect();
    let stems: Vec<String> = keywords.iter().map(|k| stem(k)).collect();
    let mut kind_hints: Vec<String> = Vec::new();
    for (s, kinds) in KIND_HINTS {
        if stems.iter().any(|k| k == s) {
            for k in *kinds {
                if !kind_hints.iter().any(|h| h == k) {
                    kind_hints.push((*k).to_string());
                }
            }
        }
    }
    let lower = query.to_lowercase();
    let mut slots: HashMap<String, Vec<String>> = HashMap::new();
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
    for (slot, v) in [
        ("target_feature", features),
        ("desired_action", actions),
        ("observed_issue", issues),
        ("trigger_condition", triggers),
    ] {
        if !v.is_empty() {
            slots.insert(slot.into(), v);
        }
    }
    let (recommended_tools, reasoning) = if identifiers.is_empty() {
        (
            vec!["search_text", "analyze_structure", "find_references"],
            "no identifier in the request: start from the ranked chunks below, then confirm with \
             search_text and read the files' structure",
        )
    } else {
        (
            vec!["find_definitions", "find_references", "search_text"],
            "the request names identifiers: look up their definitions and callers first",
        )
    };
    QueryPlan {
        identifiers,
        keywords,
        translated,
        kind_hints,
        slots,
        recommended_tools: recommended_tools.into_iter().map(String::from).collect(),
        reasoning: reasoning.into(),
    }
}

/// The parts of one chunk's hybrid score (all in 0..=1 before weighting).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct ScoreParts {
    /// Raw cosine similarity to the query.
    pub cosine: f32,
    /// Cosine min–max normalised over the candidates.
    pub vector: f32,
    /// Keyword occurrences (each keyword at most 3).
    pub keyword_hits: usize,
    /// Keywords that occur at all.
    pub matched_keywords: Vec<String>,
    pub definition: bool,
    /// References to the chunk's symbol name in the repository.
    pub references: usize,
    pub kind_hinted: bool,
    pub score: f32,
}

/// The words of a chunk that keywords are matched against, stemmed.
fn chunk_words(h: &ForestHit) -> Vec<String> {
    let meta = crate::framework::meta_summary(&h.meta, crate::framework::META_SUMMARY_CHARS);
    let text = format!(
        "{} {} {} {} {}",
        h.kind,
        h.fqcn.as_deref().unwrap_or(&h.name),
        h.signature,
        meta,
        h.content
    );
    split_identifier(&text)
        .split_whitespace()
        .map(stem)
        .collect()
}

/// Scores and sorts `candidates` (best first). `references` maps a symbol
/// name to its reference count.
pub fn rank(
    plan: &QueryPlan,
    candidates: Vec<ForestHit>,
    references: &HashMap<String, usize>,
    weights: &HybridWeights,
) -> Vec<(ForestHit, ScoreParts)> {
    let stems: Vec<(String, String)> = plan.keywords.iter().map(|k| (stem(k), k.clone())).collect();
    let (lo, hi) = candidates.iter().fold((f32::MAX, f32::MIN), |(lo, hi), h| {
        (lo.min(h.score), hi.max(h.score))
    });
    let spread = (hi - lo).max(1e-6);
    let mut out: Vec<(ForestHit, ScoreParts)> = candidates
        .into_iter()
        .map(|h| {
            let words = chunk_words(&h);
            let mut hits = 0;
            let mut matched = Vec::new();
            for (s, k) in &stems {
                let n = words.iter().filter(|w| *w == s).count();
                if n > 0 {
                    matched.push(k.clone());
                }
                hits += n.min(3);
            }
            let own = match &h.scope {
                Some(scope) if matches!(h.kind.as_str(), "method") || h.kind.contains('_') => {
                    format!("{scope} {}", h.name)
                }
                _ => h.name.clone(),
            };
            let own_words: Vec<String> = split_identifier(&own)
                .split_whitespace()
                .map(stem)
                .collect();
            // An altering migration (`Schema::table`) changes a table that
            // its `Schema::create` chunk defines.
            let defines =
                !(h.kind == "table_schema" && h.meta.get("operation") != Some(&"create".into()));
            let definition = defines && own_words.iter().any(|w| stems.iter().any(|(s, _)| s == w));
            let refs = references.get(&h.name).copied().unwrap_or(0);
            let kind_hinted = plan.kind_hints.contains(&h.kind);
            let vector = (h.score - lo) / spread;
            let score = (weights.vector * f64::from(vector)
                + weights.keyword * (hits as f64 / 10.0).min(1.0)
                + weights.definition * f64::from(u8::from(definition))
                + weights.reference * (refs as f64 / 20.0).min(1.0)
                + weights.kind * f64::from(u8::from(kind_hinted))) as f32;
            let parts = ScoreParts {
                cosine: h.score,
                vector,
                keyword_hits: hits,
                matched_keywords: matched,
                definition,
                references: refs,
                kind_hinted,
                score,
            };
            (h, parts)
        })
        .collect();
    out.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
    out
}

/// The files where the plan's keywords occur most (ripgrep engine over the
/// repository, case-insensitive), best first, at most [`KEYWORD_FILES`].
/// A file needs two distinct keywords when the plan has two or more.
///
/// # Errors
/// Text search errors (an invalid exclude pattern).
pub fn keyword_files(
    repo: &Repo,
    config: &Config,
    plan: &QueryPlan,
) -> Result<Vec<String>, text::TextSearchError> {
    if plan.keywords.is_empty() {
        return Ok(Vec::new());
    }
    let stems: Vec<String> = plan.keywords.iter().map(|k| stem(k)).collect();
    let pattern = stems
        .iter()
        .map(|s| regex::escape(s))
        .collect::<Vec<_>>()
        .join("|");
    let q = TextQuery {
        pattern,
        case: CaseMode::Insensitive,
        max_results: 20_000,
        ..TextQuery::default()
    };
    let found = text::search(repo, config, &q)?;
    let mut per_file: HashMap<String, (HashSet<usize>, usize)> = HashMap::new();
    for m in &found.matches {
        let line = m.content.to_lowercase();
        let e = per_file.entry(m.file.clone()).or_default();
        e.1 += 1;
        for (i, s) in stems.iter().enumerate() {
            if line.contains(s.as_str()) {
                e.0.insert(i);
            }
        }
    }
    let need = if plan.keywords.len() >= 2 { 2 } else { 1 };
    let mut files: Vec<(String, usize, usize)> = per_file
        .into_iter()
        .map(|(f, (kw, n))| (f, kw.len(), n))
        .filter(|(_, kw, _)| *kw >= need)
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
    Ok(files.into_iter().take(KEYWORD_FILES).map(|f| f.0).collect())
}

/// Vector top-k (k = max(50, 5 × limit)) plus every chunk of `files`, each
/// with its cosine to `query_vector`, deduplicated. `filter` is a Lance
/// SQL predicate applied to both.
///
/// # Errors
/// Lance errors.
pub async fn candidates(
    store: &Store,
    query_vector: &[f32],
    files: &[String],
    limit: usize,
    filter: Option<&str>,
) -> Result<Vec<ForestHit>, StoreError> {
    let k = (limit * VECTOR_CANDIDATES_PER_RESULT).max(50);
    let mut out = store.search_forest(query_vector, k, filter).await?;
    if !files.is_empty() {
        let list: Vec<String> = files.iter().map(|f| sql_str(f)).collect();
        let mut where_ = format!("file IN ({})", list.join(","));
        if let Some(f) = filter {
            where_ = format!("({where_}) AND ({f})");
        }
        let seen: HashSet<(String, u32, u32, String)> = out
            .iter()
            .map(|h| (h.file.clone(), h.start_line, h.end_line, h.name.clone()))
            .collect();
        for mut h in store.forest_where(&where_, 5_000).await? {
            if seen.contains(&(h.file.clone(), h.start_line, h.end_line, h.name.clone())) {
                continue;
            }
            h.score = crate::relevance::cosine(query_vector, &h.vector);
            out.push(h);
        }
    }
    Ok(out)
}

/// References (tags queries) to each of `names` over the repository.
///
/// # Errors
/// An invalid exclude pattern.
pub fn reference_counts(
    repo: &Repo,
    config: &Config,
    symbols: &SymbolCache,
    names: &HashSet<String>,
) -> Result<HashMap<String, usize>, crate::search::symbols::SymbolError> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, syms) in symbols.scan(repo, config, repo.root(), None)? {
        for r in &syms.references {
            if names.contains(&r.name) {
                *counts.entry(r.name.clone()).or_default() += 1;
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(p.slots["desired_action"], vec!["add".to_string()]);
        assert!(p.identifiers.is_empty());

        let p = plan("why does `save_order` fail in OrderService::place?");
        assert_eq!(p.identifiers, vec!["save_order", "OrderService::place"]);
        assert!(p.keywords.contains(&"order".to_string()));
        assert_eq!(p.recommended_tools[0], "find_definitions");
        assert!(p.slots.contains_key("observed_issue"));

        // データベース wins over データ inside it.
        let p = plan("データベースの設計");
        assert_eq!(p.translated.len(), 1);
    }

    fn hit(kind: &str, name: &str, scope: Option<&str>, content: &str, cosine: f32) -> ForestHit {
        ForestHit {
            file: format!("{name}.php"),
            start_line: 1,
            end_line: 2,
            language: "php".into(),
            kind: kind.into(),
            name: name.into(),
            scope: scope.map(String::from),
            fqcn: None,
            signature: String::new(),
            content: content.into(),
            meta: serde_json::Map::new(),
            related: Vec::new(),
            score: cosine,
            vector: Vec::new(),
        }
    }

    /// Ranking logic on fixed cosines (no model): lexical and kind signals
    /// lift the migration over a semantically closer controller method, and
    /// with no lexical signal the order is the vector order.
    #[test]
    fn hybrid_combines_signals() {
        let w = HybridWeights::default();
        let mut migration = hit(
            "table_schema",
            "orders",
            None,
            "Schema::create('orders', …)",
            0.84,
        );
        migration.meta.insert("operation".into(), "create".into());
        let candidates = vec![
            hit(
                "method",
                "show",
                Some("OrderController"),
                "return view('orders.show')",
                0.86,
            ),
            migration,
            hit("method", "render", Some("Widget"), "return 1;", 0.80),
        ];
        let ranked = rank(
            &plan("where are orders stored"),
            candidates.clone(),
            &HashMap::new(),
            &w,
        );
        assert_eq!(ranked[0].0.name, "orders");
        assert!(ranked[0].1.kind_hinted && ranked[0].1.definition);
        assert_eq!(ranked[2].0.name, "render");

        let ranked = rank(&plan("何か"), candidates, &HashMap::new(), &w);
        let order: Vec<&str> = ranked.iter().map(|(h, _)| h.name.as_str()).collect();
        assert_eq!(order, ["show", "orders", "render"]);
        assert!((ranked[0].1.vector - 1.0).abs() < 1e-6 && ranked[2].1.vector.abs() < 1e-6);
    }
}
