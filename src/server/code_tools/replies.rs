//! The replies of the code tools: each builds its value and text within
//! `max_tokens` and says what it showed ([`Shown`]).

use super::*;

/// The definitions of `files` that `keep` selects, capped at `max`; parse
/// errors are reported for the files that contributed a result.
pub(super) fn select_symbols(
    files: &[(String, Arc<FileSymbols>)],
    max: usize,
    keep: impl Fn(&str, &Definition) -> bool,
) -> SymbolList {
    let mut all = Vec::new();
    let mut broken = Vec::new();
    for (file, syms) in files {
        let before = all.len();
        all.extend(
            syms.definitions
                .iter()
                .filter(|d| keep(file, d))
                .map(|d| SymbolInfo::new(file, d)),
        );
        if syms.has_errors && all.len() > before {
            broken.push(file.clone());
        }
    }
    let total = all.len();
    all.truncate(max);
    SymbolList {
        truncated: total > all.len(),
        symbols: all,
        total,
        files_scanned: files.len(),
        files_with_parse_errors: broken,
        other_kinds: Default::default(),
    }
}

/// The text of a symbol list within `max_tokens`; the list keeps only the
/// symbols the text shows.
pub(super) fn list_text(list: &mut SymbolList, max_tokens: usize) -> String {
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{} symbol(s)\n", list.total));
    if !list.other_kinds.is_empty() {
        let kinds: Vec<String> = list
            .other_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        // Methods with no container of any kind: an anonymous class.
        let anonymous = list.other_kinds.contains_key("method")
            && !crate::search::symbols::CONTAINER_KINDS
                .iter()
                .any(|k| list.other_kinds.contains_key(*k));
        b.force(&format!(
            "none of that kind; the same files define: {}{}\n",
            kinds.join(", "),
            if anonymous {
                " (an anonymous class, `new class …`, has no name and is not listed as a class; its methods are)"
            } else {
                ""
            }
        ));
    }
    let shown = b.push_each(&list.symbols, |d| {
        format!(
            "{}:{}-{} {} {}  {}\n",
            d.file,
            d.line,
            d.end_line,
            d.kind,
            d.fqcn.as_deref().unwrap_or(&d.name),
            d.signature
        )
    });
    list.symbols.truncate(shown);
    list.truncated |= b.truncated || list.total > shown;
    let total = list.total;
    b.finish(&format!(
        "… showing {shown} of {total}: narrow with path/kind/name, or raise max_tokens"
    ))
}

pub(super) fn structure(defs: &[Definition], parent: Option<usize>) -> Vec<StructureNode> {
    defs.iter()
        .enumerate()
        .filter(|(_, d)| d.parent == parent)
        .map(|(i, d)| StructureNode {
            name: d.name.clone(),
            kind: d.kind.clone(),
            line: d.line,
            end_line: d.end_line,
            signature: d.signature.clone(),
            children: structure(defs, Some(i)),
        })
        .collect()
}

pub(super) fn render_tree(out: &mut String, nodes: &[StructureNode], depth: usize) {
    for n in nodes {
        let _ = writeln!(
            out,
            "{}{} {} [{}-{}]",
            "  ".repeat(depth),
            n.kind,
            n.name,
            n.line,
            n.end_line
        );
        render_tree(out, &n.children, depth + 1);
    }
}

impl Shared {
    pub(super) fn scan(
        &self,
        path: Option<&str>,
        language: Option<&str>,
    ) -> Result<Vec<(String, Arc<FileSymbols>)>, SymbolError> {
        let start = self.repo.resolve(path.unwrap_or(""))?;
        self.symbols
            .scan(&self.repo, &self.config, &start, language)
    }
}

/// What a symbol list showed: the files of its symbols, and its total.
pub(super) fn symbols_shown(list: &SymbolList) -> Shown {
    let mut shown = Shown {
        total: Some(list.total),
        ..Shown::default()
    };
    for d in &list.symbols {
        shown.name(&d.file);
    }
    shown
}

impl CodeIntel {
    /// `find_definitions`'s reply: names and locations (nothing read).
    pub(in crate::server) async fn find_definitions_reply(
        &self,
        p: FindDefinitionsParams,
    ) -> Result<Reply<SymbolList>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1000).map_err(ToolError::invalid)?;
        if p.symbol.trim().is_empty() {
            return Err(ToolError::invalid(
                "symbol is empty: give a name such as `authenticate` or `AuthService::authenticate`",
            ));
        }
        let shared = Arc::clone(&self.shared);
        let symbol = p.symbol.clone();
        let mut list = blocking(move || -> Result<SymbolList, SymbolError> {
            let files = shared.scan(p.path.as_deref(), p.language.as_deref())?;
            let (qualifier, name) = if p.exact_match {
                split_qualified(&p.symbol)
            } else {
                (None, p.symbol.clone())
            };
            let needle = name.to_lowercase();
            Ok(select_symbols(&files, p.max_results, |file, d| {
                let name_ok = if p.exact_match {
                    d.name == name
                } else {
                    d.name.to_lowercase().contains(&needle)
                };
                name_ok
                    && p.kind.as_deref().is_none_or(|k| d.kind == k)
                    && qualifier
                        .as_deref()
                        .is_none_or(|q| qualifier_matches_in(q, file, d))
            }))
        })
        .await??;
        let text = if list.total == 0 {
            format!(
                "no definition of `{symbol}` in {} file(s); try exact_match=false, or search_text for the name",
                list.files_scanned
            )
        } else {
            list_text(&mut list, max_tokens)
        };
        let shown = symbols_shown(&list);
        Ok(Reply::new(list, text).with_shown(shown))
    }

    /// `find_references`'s reply: uses with their enclosing definitions
    /// (names and locations; the total is the session's reference check).
    pub(in crate::server) async fn find_references_reply(
        &self,
        p: FindReferencesParams,
    ) -> Result<Reply<references::ReferenceList>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
        let namespace = references::namespace(&p.symbol);
        // A file by its path, or a Blade view by its name
        // (`models.links.partials.single-simple`): the lines that use it as
        // the code graph resolves them (render, include, embed, `config()`,
        // import). A bare word stays a symbol (`index` is more often a
        // method than a view).
        let is_file = |f: &str| self.shared.repo.resolve(f).is_ok_and(|f| f.is_file());
        let view = p
            .symbol
            .contains(['.', '-'])
            .then(|| crate::util::blade_view_file(&p.symbol, is_file))
            .flatten()
            .or_else(|| {
                p.symbol
                    .contains('/')
                    .then(|| p.symbol.trim().trim_start_matches("./").to_string())
                    .filter(|f| is_file(f))
            });
        let (name, class) = match &view {
            Some(v) => (crate::util::file_stem(v).to_string(), None),
            None => references::target(&p.symbol).ok_or_else(|| {
                ToolError::invalid(format!(
                    "`{}` is not an identifier: give a symbol name such as `authenticate`",
                    p.symbol
                ))
            })?,
        };
        let shared = Arc::clone(&self.shared);
        let scope = references::Within {
            path: p.path.clone().unwrap_or_default(),
            language: p.language.clone(),
        };
        let symbol = p.symbol.clone();
        let searched = name.clone();
        // For a member, its class's name is a search that counts too (a
        // method's class checked stands for the method,
        // `session::requirements::assess`), and tells more than a common
        // method name (`handle`) does.
        let or_class = class
            .as_deref()
            .map(|c| format!(", or for the class `{c}`,"))
            .unwrap_or_default();
        let class_name = class.clone().unwrap_or_default();
        let mut list = blocking(move || {
            if let Some(v) = view {
                let graph = shared.graph.get(&shared.repo);
                let mut list = references::ReferenceList::default();
                let uses = crate::index::file_uses(&graph, &v);
                references::add_uses(&shared.repo, &mut list, &uses, &scope, p.max_results);
                return Ok(list);
            }
            // A class by its qualified name: the uses PHP resolves to it.
            let qualified = symbol.trim().trim_start_matches('\\');
            let owner = match class.as_deref() {
                Some(c) => references::Owner::Member {
                    class: c,
                    namespace: namespace.as_deref(),
                },
                None if qualified.contains('\\')
                    && !qualified.contains("::")
                    && name.starts_with(|c: char| c.is_uppercase()) =>
                {
                    references::Owner::Class(qualified)
                }
                None => references::Owner::Any,
            };
            let mut list = references::find(
                &shared.repo,
                &shared.config,
                &shared.symbols,
                &name,
                owner,
                &scope,
                p.max_results,
            )?;
            // A controller action's requests (a script's `http.post(…)`, a
            // view's `url(…)`) call it across the HTTP boundary.
            if let Some(class) = &class
                && scope.language.is_none()
            {
                let graph = shared.graph.get(&shared.repo);
                let requests: Vec<(String, u64, &str)> =
                    crate::index::action_requests(&graph, class, namespace.as_deref(), &name)
                        .into_iter()
                        .map(|(f, l)| (f, l, "request"))
                        .collect();
                references::add_uses(&shared.repo, &mut list, &requests, &scope, p.max_results);
            }
            // A component class is used by the views that embed it by its
            // tag (`<livewire:feed />`, `<x-user-card />`), a command class
            // by the code that runs it by name (`artisan('links:check')`),
            // which the name search cannot see.
            if class.is_none()
                && scope.language.is_none()
                && name.starts_with(|c: char| c.is_uppercase())
            {
                let graph = shared.graph.get(&shared.repo);
                // The argument names the class, qualified or not.
                let uses = crate::index::uses_by_name(&graph, symbol.trim());
                references::add_uses(&shared.repo, &mut list, &uses, &scope, p.max_results);
            }
            // No caller of a member: say which of its class's parents are
            // outside the repository (they call what it overrides).
            if list.total == 0
                && class.is_some()
                && let (Some(qualifier), _) = crate::search::symbols::split_qualified(&symbol)
            {
                let graph = shared.graph.get(&shared.repo);
                list.outside_parents =
                    crate::index::outside_parents(&shared.repo, &graph, &qualifier);
            }
            Ok::<_, crate::search::text::TextSearchError>(list)
        })
        .await??;
        let mut b = Budget::new(max_tokens);
        // A short class name several namespaces share: the uses of each,
        // and how to keep one (an agent in the LinkAce trial took them for
        // a resolution that ignored the class; bench/README.md § Honest
        // agent trial).
        if let Some(first) = list.classes.first() {
            let mut tail: Vec<&str> = first.rsplitn(3, '\\').take(2).collect();
            tail.reverse();
            b.force(&format!(
                "`{}`: {} classes have that name ({}); the uses of each are listed: qualify it (`{}::{searched}`) to keep one\n",
                p.symbol.trim(),
                list.classes.len(),
                list.classes.join(", "),
                tail.join("\\"),
            ));
        }
        // None resolved but some bare-name matches did not: "no uses" would
        // be a guess, so it is not recorded as the session's reference check,
        // and the lines are shown to look at.
        let uncertain = list.total == 0 && !list.uncertain.is_empty();
        if uncertain {
            b.force(&format!(
                "0 reference(s) resolved to the class, but {} bare-name match(es) did not resolve either: uncertain (not counted as a reference check). Look at them; a search_text for `{searched}`{or_class} shows uses and counts:\n",
                list.unresolved
            ));
            for r in &list.uncertain {
                b.force(&format!("{}:{}: {}\n", r.file, r.line, r.content));
            }
        }
        if !list.outside_parents.is_empty() {
            b.force(&format!(
                "`{}` extends, implements or uses {} from outside the repository: a method it overrides is called from there, which is not searched\n",
                class_name,
                list.outside_parents
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        b.force(&format!(
            "{} reference(s){}\n",
            list.total,
            if uncertain {
                String::new()
            } else if list.unresolved > 0 {
                format!(
                    " resolved to the class; {} bare-name match(es) that do not resolve to it left out",
                    list.unresolved
                )
            } else {
                String::new()
            }
        ));
        let shown = b.push_each(&list.references, |r| {
            let within = r
                .enclosing
                .as_ref()
                .map(|e| format!(" (in {} {})", e.kind, e.name))
                .unwrap_or_default();
            format!(
                "{}:{}:{} [{}]{within}: {}\n",
                r.file,
                r.line,
                r.column,
                r.kind,
                r.content.trim()
            )
        });
        list.references.truncate(shown);
        list.truncated |= b.truncated || list.total > shown;
        let text = b.finish(&format!(
            "… showing {shown} of {}: narrow with path, or raise max_tokens",
            list.total
        ));
        let mut seen = Shown {
            total: (!uncertain).then_some(list.total),
            uses: (!uncertain).then_some(list.parsed),
            ..Shown::default()
        };
        for r in list.references.iter().chain(&list.uncertain) {
            seen.name(&r.file);
        }
        Ok(Reply::new(list, text).with_shown(seen))
    }

    /// `get_symbols`'s reply: names and locations (nothing read).
    pub(in crate::server) async fn get_symbols_reply(
        &self,
        p: GetSymbolsParams,
    ) -> Result<Reply<SymbolList>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
        let shared = Arc::clone(&self.shared);
        let mut list = blocking(move || -> Result<SymbolList, SymbolError> {
            let files = shared.scan(p.path.as_deref(), p.language.as_deref())?;
            let needle = p.name.as_deref().map(str::to_lowercase);
            let named = |d: &Definition| {
                needle
                    .as_deref()
                    .is_none_or(|n| d.name.to_lowercase().contains(n))
            };
            let mut list = select_symbols(&files, p.max_results, |_, d| {
                p.kind.as_deref().is_none_or(|k| d.kind == k) && named(d)
            });
            // An empty answer to a kind filter says what is there instead:
            // "0 symbol(s)" of kind class over migrations whose classes are
            // anonymous (`return new class extends Migration`) read as
            // "nothing there" to an agent in a trial (bench/README.md §
            // Honest agent trial).
            if list.total == 0 && p.kind.is_some() {
                for (_, syms) in &files {
                    for d in syms.definitions.iter().filter(|d| named(d)) {
                        *list.other_kinds.entry(d.kind.clone()).or_default() += 1;
                    }
                }
            }
            Ok(list)
        })
        .await??;
        let text = list_text(&mut list, max_tokens);
        let shown = symbols_shown(&list);
        Ok(Reply::new(list, text).with_shown(shown))
    }

    /// `analyze_structure`'s reply: symbol trees (nothing read).
    pub(in crate::server) async fn analyze_structure_reply(
        &self,
        p: AnalyzeStructureParams,
    ) -> Result<Reply<StructureResult>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
        let shared = Arc::clone(&self.shared);
        let path = p.path.clone();
        let mut r = blocking(move || -> Result<StructureResult, SymbolError> {
            let files = shared.scan(Some(&p.path), None)?;
            let truncated = files.len() > p.max_files;
            let files = files
                .into_iter()
                .take(p.max_files)
                .map(|(file, s)| FileStructure {
                    file,
                    language: s.lang.name().to_string(),
                    lines: s.line_count,
                    has_parse_errors: s.has_errors,
                    symbols: structure(&s.definitions, None),
                })
                .collect();
            Ok(StructureResult { files, truncated })
        })
        .await??;
        if r.files.is_empty() {
            return Err(ToolError::invalid(format!(
                "no file with a supported language ({}) at `{path}`",
                crate::lang::Lang::names().join(", ")
            )));
        }
        let mut b = Budget::new(max_tokens);
        let mut shown = b.push_each(&r.files, |f| {
            let mut item = format!(
                "{} ({}, {} lines{})\n",
                f.file,
                f.language,
                f.lines,
                if f.has_parse_errors {
                    ", parse errors"
                } else {
                    ""
                }
            );
            render_tree(&mut item, &f.symbols, 1);
            item
        });
        if shown == 0 {
            // One file larger than the budget: its tree without members.
            let f = &mut r.files[0];
            for n in &mut f.symbols {
                n.children.clear();
            }
            let mut item = format!(
                "{} ({}, {} lines; members left out)\n",
                f.file, f.language, f.lines
            );
            render_tree(&mut item, &f.symbols, 1);
            b.force(&item);
            shown = 1;
        }
        r.truncated |= shown < r.files.len() || b.truncated;
        r.files.truncate(shown);
        let text = b.finish(
            "… cut to fit max_tokens: give a file or a smaller directory, or raise max_tokens",
        );
        let mut seen = Shown::default();
        for f in &r.files {
            seen.name(&f.file);
        }
        Ok(Reply::new(r, text).with_shown(seen))
    }

    /// `get_function_at_line`'s reply: the enclosing definition's source
    /// within `max_tokens` (the lines shown count as read).
    pub(in crate::server) async fn function_at_line_reply(
        &self,
        p: FunctionAtLineParams,
    ) -> Result<Reply<FunctionAtLine>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 2000).map_err(ToolError::invalid)?;
        let shared = Arc::clone(&self.shared);
        let mut f = blocking(move || function_at_line(&shared, &p.file, p.line)).await??;
        let mut b = Budget::new(max_tokens);
        b.force(&format!(
            "{}:{}-{} {} {}\n",
            f.file,
            f.line,
            f.end_line,
            f.kind,
            f.fqcn.as_deref().unwrap_or(&f.name),
        ));
        let lines: Vec<&str> = f.source.lines().collect();
        let shown = b.push_each(&lines, |l| format!("{l}\n"));
        let kept: String = lines[..shown].iter().map(|l| format!("{l}\n")).collect();
        let last = f.line + shown.saturating_sub(1);
        let cut = b.truncated;
        let text = b.finish(&format!(
            "… cut at line {last}: read_file {} start_line={} for the rest",
            f.file,
            last + 1
        ));
        if cut {
            f.source = kept;
        }
        let mut seen = Shown::default();
        if cut {
            seen.read(&f.file, f.line, last);
        } else {
            seen.read_unit(&f.file, f.line, last);
        }
        Ok(Reply::new(f, text).with_shown(seen))
    }
}

/// The first definition starting below 1-based `line` when every line from
/// `line` to it is a comment, docblock, attribute or blank line: the
/// definition those lines document.
fn documented<'d>(
    definitions: &'d [crate::search::symbols::Definition],
    lines: &[&str],
    line: usize,
) -> Option<&'d crate::search::symbols::Definition> {
    let next = definitions
        .iter()
        .filter(|d| d.line > line)
        .min_by_key(|d| d.line)?;
    let between = lines.get(line - 1..next.line - 1)?;
    between
        .iter()
        .all(|l| {
            let t = l.trim_start();
            t.is_empty()
                || ["*", "/*", "//", "#", "@", "--"]
                    .iter()
                    .any(|p| t.starts_with(p))
        })
        .then_some(next)
}

/// The definition enclosing 1-based `line` of `file`, with its source. A
/// line of the comments, docblock or attributes right above a definition
/// inside a container gives that definition, not the whole container
/// (a docblock line once returned a 3k-char class).
///
/// # Errors
/// A path outside the repository, a directory, a file without a grammar,
/// a line outside the file or outside every definition.
pub(super) fn function_at_line(
    shared: &Shared,
    file: &str,
    line: usize,
) -> Result<FunctionAtLine, ToolError> {
    let abs = shared.repo.resolve(file)?;
    if abs.is_dir() {
        return Err(ToolError::invalid(format!(
            "`{file}` is a directory: give a file"
        )));
    }
    let syms = shared
        .symbols
        .get(&shared.repo, &abs, shared.config.max_file_size)?
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "`{file}` is not in a language code-intel parses ({}), is binary or larger than max_file_size",
                crate::lang::Lang::names().join(", ")
            ))
        })?;
    if line == 0 || line > syms.line_count.max(1) {
        return Err(ToolError::invalid(format!(
            "line {line} is outside `{file}` (1-{})",
            syms.line_count
        )));
    }
    let text = crate::repo::read_regular(&abs).map_err(ToolError::failed)?;
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let d = syms.enclosing(line).ok_or_else(|| {
        ToolError::invalid(format!(
            "no function, method or class encloses {file}:{line}; use analyze_structure to see the file's symbols"
        ))
    })?;
    let d = if d.is_callable() {
        d
    } else {
        documented(&syms.definitions, &lines, line).unwrap_or(d)
    };
    let source = text
        .lines()
        .skip(d.line - 1)
        .take(d.end_line + 1 - d.line)
        .collect::<Vec<_>>()
        .join("\n");
    Ok(FunctionAtLine {
        file: shared.repo.rel(&abs),
        name: d.name.clone(),
        kind: d.kind.clone(),
        line: d.line,
        end_line: d.end_line,
        scope: d.scope.clone(),
        signature: d.signature.clone(),
        fqcn: d.fqcn.clone(),
        source,
    })
}
