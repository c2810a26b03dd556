//! `search_text`: regex or literal matches grouped by file, built and
//! vendored files' matches counted apart; matches with context count as
//! read ([`Shown`]).

use super::*;

/// Built or vendored files a `search_text` reply names when it sets their
/// matches aside.
const SET_ASIDE_NAMED: usize = 5;

impl CodeIntel {
    /// `search_text`'s reply: the matches that fit `max_tokens`; with at
    /// least [`READ_CONTEXT_LINES`] of context, each shown match's lines
    /// count as read.
    pub(in crate::server) async fn search_text_reply(
        &self,
        p: SearchTextParams,
    ) -> Result<Reply<text::TextResult>, ToolError> {
        if !(1..=2000).contains(&p.max_results) {
            return Err(ToolError::invalid(format!(
                "max_results is {}: give 1-2000",
                p.max_results
            )));
        }
        if p.context_lines > 20 {
            return Err(ToolError::invalid(format!(
                "context_lines is {}: give 0-20",
                p.context_lines
            )));
        }
        let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
        let shared = Arc::clone(&self.shared);
        let path = p.path.unwrap_or_default();
        let scope = match path.trim().trim_start_matches("./").trim_end_matches('/') {
            "." => String::new(),
            s => s.to_string(),
        };
        // A search not aimed at built or vendored files (by its path, or a
        // glob that picks files) counts their matches apart.
        let aimed = (!scope.is_empty()
            && (text::set_aside(&scope) || text::set_aside(&format!("{scope}/x.js"))))
            || p.glob.as_deref().is_some_and(|g| !g.starts_with('!'));
        let q = TextSearch {
            pattern: p.pattern,
            literal: p.literal,
            case: p.case,
            word: p.word,
            path,
            glob: p.glob,
            file_type: p.file_type,
            context_lines: p.context_lines,
            max_results: p.max_results,
            set_aside_built: !aimed,
            // Hidden files are searched (`.env.example`, `.github/`): a
            // change to a setting touches them, and a trial agent's
            // whole-repository search missed `.env.example`
            // (bench/README.md § Honest agent trial).
            hidden: true,
        };
        let mut r = blocking(move || text::search(&shared.repo, &shared.config, &q)).await??;
        let mut b = Budget::new(max_tokens);
        // An empty answer says what was searched (bench/README.md § Honest
        // agent trial): over the whole repository, which files it does not
        // read (agents could not tell a setting absent from one in an
        // unsearched `.env`); over a path, that path ("0 match(es) in 0
        // file(s)" read as if the file named was not searched).
        let unread = match (r.total, scope.as_str()) {
            (0, "") => " (gitignored and secret files such as .env are not searched)".to_string(),
            (0, path) => format!(" (searched `{path}`)"),
            _ => String::new(),
        };
        b.force(&format!(
            "{} match(es) in {} file(s){unread}\n",
            r.total, r.files_with_matches
        ));
        // Grouped under each file's path, as `rg --heading` prints: the
        // path once, then `line:column: text` for a match and `line- text`
        // for context, a context line shared by two matches once, and `--`
        // between groups that are not adjacent. In the LinkAce trial
        // (bench/README.md § Honest agent trial) the path on every line
        // was up to half of a reply with context.
        let mut last: Option<(&str, usize)> = None;
        let shown = b.push_each(&r.matches, |m| {
            let mut item = String::new();
            let line = m.line as usize;
            let first = line - m.context_before.len();
            let printed = match last {
                Some((f, end)) if f == m.file => {
                    if p.context_lines > 0 && first > end + 1 {
                        item.push_str("--\n");
                    }
                    end
                }
                _ => {
                    let _ = writeln!(item, "{}", m.file);
                    0
                }
            };
            for (i, l) in m.context_before.iter().enumerate() {
                if first + i > printed {
                    let _ = writeln!(item, "{}- {l}", first + i);
                }
            }
            let _ = writeln!(item, "{}:{}: {}", m.line, m.column, m.content);
            for (i, l) in m.context_after.iter().enumerate() {
                let _ = writeln!(item, "{}- {l}", line + 1 + i);
            }
            last = Some((&m.file, line + m.context_after.len()));
            item
        });
        r.matches.truncate(shown);
        r.truncated |= b.truncated || r.total > shown;
        if !r.set_aside.is_empty() {
            let n: usize = r.set_aside.iter().map(|f| f.matches).sum();
            let files: Vec<String> = r
                .set_aside
                .iter()
                .take(SET_ASIDE_NAMED)
                .map(|f| format!("{} ({})", f.file, f.matches))
                .collect();
            let more = r.set_aside.len().saturating_sub(SET_ASIDE_NAMED);
            b.force(&format!(
                "+ {n} match(es) in {} built or vendored file(s), not shown: {}{} (a search with `path` in them shows their lines)\n",
                r.set_aside.len(),
                files.join(", "),
                if more > 0 { format!(", {more} more") } else { String::new() }
            ));
        }
        let text = b.finish(&format!(
            "… showing {shown} of {}: narrow with path/glob, or raise max_tokens",
            r.total
        ));
        // Matches with context show the code around them: those lines count as read.
        let mut seen = Shown {
            total: Some(r.total),
            ..Shown::default()
        };
        for m in &r.matches {
            let line = m.line as usize;
            if p.context_lines >= READ_CONTEXT_LINES {
                let start = line - m.context_before.len();
                seen.read(&m.file, start, line + m.context_after.len());
            } else {
                seen.name(&m.file);
            }
        }
        Ok(Reply::new(r, text).with_shown(seen))
    }
}
