//! What a search asks the store: [`Scope`] (the SQL filter of a path,
//! language and classes) and [`Bm25Query`] (weighted term groups over the
//! full-text indexed columns).

use super::*;

/// Which rows a search may return.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// Only this repo-relative file.
    pub file: Option<String>,
    /// Only files under this repo-relative directory (without trailing `/`).
    pub dir: Option<String>,
    /// Only chunks of this language.
    pub language: Option<String>,
    /// Only files of these classes (empty: all).
    pub classes: Vec<FileClass>,
}

impl Scope {
    /// True when the scope restricts nothing (every file of the index).
    pub fn is_everything(&self) -> bool {
        self.sql(false).is_none()
    }

    /// The Lance SQL predicate, `None` for everything. `language` applies to
    /// `forest` only (`for_files` false).
    pub(super) fn sql(&self, for_files: bool) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(f) = &self.file {
            parts.push(format!("file = {}", sql_str(f)));
        }
        if let Some(d) = self.dir.as_deref().filter(|d| !d.is_empty()) {
            parts.push(format!("starts_with(file, {})", sql_str(&format!("{d}/"))));
        }
        if let (Some(l), false) = (&self.language, for_files) {
            parts.push(format!("language = {}", sql_str(&l.to_lowercase())));
        }
        if !self.classes.is_empty() {
            let list: Vec<String> = self.classes.iter().map(|c| sql_str(c.name())).collect();
            parts.push(format!("class IN ({})", list.join(",")));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

/// A full-text query: groups of terms, each with a weight (a group's BM25
/// score is multiplied by it); a chunk or file matches when any term does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bm25Query {
    pub groups: Vec<(String, f32)>,
}

impl Bm25Query {
    /// True when no group has a term.
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|(t, _)| t.trim().is_empty())
    }

    /// The Lance query over `columns`, each (column, boost).
    pub(super) fn fts(&self, columns: &[(&str, f32)]) -> FtsQuery {
        let mut clauses = Vec::new();
        for (text, weight) in self.groups.iter().filter(|(t, _)| !t.trim().is_empty()) {
            for (col, boost) in columns {
                clauses.push((
                    Occur::Should,
                    MatchQuery::new(text.clone())
                        .with_column(Some((*col).to_string()))
                        .with_boost(weight * boost)
                        .into(),
                ));
            }
        }
        if clauses.len() == 1 {
            return clauses
                .pop()
                .map(|c| c.1)
                .unwrap_or_else(|| MatchQuery::new(String::new()).into());
        }
        BooleanQuery::new(clauses).into()
    }
}

/// Columns of `files` searched by [`Store::search_files`] with their boosts:
/// a word in the path or in a definition's name says more about a file than
/// the same word in its body. Fitted on the development sets together with
/// the fusion weights (`bench/fit.py`, docs/measurements.md § Retrieval benchmark).
pub const FILE_COLUMNS: [(&str, f32); 3] = [
    ("path_text", 2.0),
    ("symbols_text", 1.0),
    ("body_text", 1.0),
];

/// Full-text indexed columns: (table, column).
pub(super) const FTS_COLUMNS: [(&str, &str); 4] = [
    (FOREST, "search_text"),
    (FILES, "path_text"),
    (FILES, "symbols_text"),
    (FILES, "body_text"),
];

/// LanceDB analyzer for the full-text columns: our text is already split
/// into identifier words ([`crate::lexical`]); LanceDB lowercases, drops
/// English stop words and stems (Snowball) on both sides, and drops tokens
/// over [`crate::lexical::MAX_TOKEN_CHARS`].
pub(super) fn fts_params() -> FtsIndexBuilder {
    FtsIndexBuilder::default()
        .base_tokenizer("simple".to_string())
        .lower_case(true)
        .stem(true)
        .remove_stop_words(true)
        .ascii_folding(true)
        .with_position(false)
        .max_token_length(Some(crate::lexical::MAX_TOKEN_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_become_sql_predicates() {
        let all = Scope::default();
        assert_eq!(all.sql(false), None);
        let s = Scope {
            file: Some("app/it's.php".into()),
            dir: Some("app".into()),
            language: Some("PHP".into()),
            classes: vec![FileClass::Source, FileClass::Test],
        };
        assert_eq!(
            s.sql(false).unwrap(),
            "file = 'app/it''s.php' AND starts_with(file, 'app/') AND language = 'php' AND class IN ('source','test')"
        );
        // `files` has no language column.
        assert_eq!(
            s.sql(true).unwrap(),
            "file = 'app/it''s.php' AND starts_with(file, 'app/') AND class IN ('source','test')"
        );
        // The root directory filters nothing.
        let root = Scope {
            dir: Some(String::new()),
            ..Scope::default()
        };
        assert_eq!(root.sql(false), None);
    }

    #[test]
    fn bm25_queries_weight_every_group_on_every_column() {
        assert!(Bm25Query::default().is_empty());
        assert!(
            Bm25Query {
                groups: vec![(" ".into(), 1.0)]
            }
            .is_empty()
        );
        let one = Bm25Query {
            groups: vec![("order".into(), 0.5), ("  ".into(), 9.0)],
        };
        match one.fts(&[("search_text", 2.0)]) {
            FtsQuery::Match(m) => {
                assert_eq!(m.terms, "order");
                assert_eq!(m.column.as_deref(), Some("search_text"));
                assert!((m.boost - 1.0).abs() < 1e-6, "{}", m.boost);
            }
            other => panic!("one clause is a match query, got {other:?}"),
        }
        let two = Bm25Query {
            groups: vec![("order".into(), 1.0), ("total".into(), 0.5)],
        };
        match two.fts(&FILE_COLUMNS) {
            FtsQuery::Boolean(b) => assert_eq!(b.should.len(), 6),
            other => panic!("several clauses are a boolean query, got {other:?}"),
        }
    }
}
