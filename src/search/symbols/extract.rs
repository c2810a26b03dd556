//! Definitions and references of one file from its grammar's tags query:
//! names, kinds, lines, signatures, docblocks and scopes.

use super::*;

/// Longest signature kept, in chars.
pub(super) const MAX_SIGNATURE_CHARS: usize = 240;

/// Longest docblock kept, in chars.
pub(super) const MAX_DOC_CHARS: usize = 600;

/// Parses `source` and runs the tags query. Never fails: a broken file
/// yields what the error-tolerant parser recovered, with `has_errors` set.
pub fn extract(lang: Lang, source: &str, rel_path: &str) -> FileSymbols {
    let mut parser = Parser::new();
    let line_count = source.lines().count();
    if parser.set_language(&lang.grammar()).is_err() {
        return empty(lang, line_count);
    }
    let Some(tree) = parser.parse(source, None) else {
        return empty(lang, line_count);
    };
    let query = lang.tags_query();
    let names = query.capture_names();
    let bytes = source.as_bytes();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), bytes);

    // (start, end) -> (pattern index, definition) keeps one definition per node.
    let mut by_node: HashMap<(usize, usize), (usize, Definition)> = HashMap::new();
    let mut references = Vec::new();
    while let Some(m) = matches.next() {
        let mut name_node = None;
        let mut tag: Option<(&str, Node)> = None;
        for c in m.captures() {
            let cname = names[c.index as usize];
            if cname == "name" {
                name_node = Some(c.node);
            } else if cname.starts_with("definition.") || cname.starts_with("reference.") {
                tag = Some((cname, c.node));
            }
        }
        let Some((cname, node)) = tag else { continue };
        if let Some(kind) = cname.strip_prefix("reference.") {
            let Some(n) = name_node else { continue };
            let line = n.start_position().row + 1;
            references.push(TagReference {
                name: text(n, source).to_string(),
                kind: kind.to_string(),
                line,
                column: char_column(source, n.start_byte()),
            });
            continue;
        }
        let kind = cname.trim_start_matches("definition.");
        let name = match name_node {
            Some(n) => text(n, source).trim().to_string(),
            None => header(node, source),
        };
        if name.is_empty() {
            continue;
        }
        let def = Definition {
            name: collapse_ws(&name, MAX_SIGNATURE_CHARS),
            kind: kind.to_string(),
            line: node.start_position().row + 1,
            end_line: end_line(node),
            start_byte: node.start_byte(),
            end_byte: node.end_byte(),
            name_line: name_node.map_or(node.start_position().row, |n| n.start_position().row) + 1,
            scope: None,
            signature: signature(node, source),
            doc: doc_of(node, source, lang),
            fqcn: None,
            parent: None,
        };
        let key = (def.start_byte, def.end_byte);
        match by_node.get(&key) {
            Some((p, _)) if *p <= m.pattern_index => {}
            _ => {
                by_node.insert(key, (m.pattern_index, def));
            }
        }
    }
    let mut definitions: Vec<Definition> = by_node.into_values().map(|(_, d)| d).collect();
    match lang {
        Lang::Vue => vue_scripts(
            tree.root_node(),
            source,
            rel_path,
            &mut definitions,
            &mut references,
        ),
        Lang::Blade => blade_directives(source, &mut definitions, &mut references),
        _ => {}
    }
    definitions.sort_by(|a, b| {
        a.start_byte
            .cmp(&b.start_byte)
            .then(b.end_byte.cmp(&a.end_byte))
    });
    link_scopes(&mut definitions, lang, rel_path);
    references.sort_by_key(|r| (r.line, r.column));
    FileSymbols {
        lang,
        definitions,
        references,
        has_errors: tree.root_node().has_error(),
        line_count,
    }
}

pub(super) fn empty(lang: Lang, line_count: usize) -> FileSymbols {
    FileSymbols {
        lang,
        definitions: Vec::new(),
        references: Vec::new(),
        has_errors: true,
        line_count,
    }
}

/// Definition kinds that hold members: a function defined in one is a
/// `method`.
pub const CONTAINER_KINDS: &[&str] = &["class", "interface", "trait", "enum", "impl"];

/// Sets `parent`, `scope`, method kinds and `fqcn` from byte nesting.
pub(super) fn link_scopes(defs: &mut [Definition], lang: Lang, rel_path: &str) {
    let mut stack: Vec<usize> = Vec::new();
    let mut namespace: Option<String> = None;
    for i in 0..defs.len() {
        while let Some(&top) = stack.last() {
            if defs[top].end_byte >= defs[i].end_byte && defs[top].start_byte <= defs[i].start_byte
            {
                break;
            }
            stack.pop();
        }
        // A PHP `namespace X;` statement does not enclose what follows it,
        // but it names it.
        if lang == Lang::Php && defs[i].kind == "module" {
            namespace = Some(defs[i].name.clone());
        }
        let parent = stack.last().copied();
        defs[i].parent = parent;
        if let Some(p) = parent {
            let scope = match &defs[p].scope {
                Some(s) => format!("{s}.{}", defs[p].name),
                None => defs[p].name.clone(),
            };
            defs[i].scope = Some(scope);
            if defs[i].kind == "function" && CONTAINER_KINDS.contains(&defs[p].kind.as_str()) {
                defs[i].kind = "method".into();
            }
        }
        defs[i].fqcn = fqcn(lang, rel_path, namespace.as_deref(), &defs[i]);
        stack.push(i);
    }
}

/// The source text of a node ("" if its range is not on char boundaries).
pub(crate) fn text<'a>(node: Node, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

pub(super) fn end_line(node: Node) -> usize {
    let end = node.end_position();
    // A node ending at column 0 ends on the previous line (trailing newline).
    if end.column == 0 && end.row > node.start_position().row {
        end.row
    } else {
        end.row + 1
    }
}

/// 1-based column, in chars, of a byte offset.
pub fn char_column(source: &str, byte: usize) -> usize {
    let line_start = source[..byte].rfind('\n').map_or(0, |i| i + 1);
    source[line_start..byte].chars().count() + 1
}

pub(super) fn collapse_ws(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 4));
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > max_chars {
        out = out.chars().take(max_chars).collect::<String>() + "…";
    }
    out
}

/// Header of a node without a name capture (CSS `@media …`): its text up to
/// the first `{`.
pub(super) fn header(node: Node, source: &str) -> String {
    let t = text(node, source);
    collapse_ws(t.split('{').next().unwrap_or(t), MAX_SIGNATURE_CHARS)
}

/// The declaration without its body: text up to the `body` field (or the
/// first `{` / block child), whitespace collapsed.
pub(super) fn signature(node: Node, source: &str) -> String {
    let body_start = node
        .child_by_field_name("body")
        .or_else(|| {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).find(|c| {
                matches!(
                    c.kind(),
                    "block" | "declaration_list" | "statement_block" | "class_body"
                )
            })
        })
        .map(|b| b.start_byte());
    let t = match body_start {
        Some(b) if b > node.start_byte() => &source[node.start_byte()..b],
        _ => text(node, source).lines().next().unwrap_or(""),
    };
    let t = t.trim_end().trim_end_matches(['{', ':']).trim_end();
    collapse_ws(t, MAX_SIGNATURE_CHARS)
}

/// Comments directly above the definition (or above its decorator /
/// export wrapper), or a Python docstring.
pub(super) fn doc_of(node: Node, source: &str, lang: Lang) -> Option<String> {
    if lang == Lang::Python
        && let Some(body) = node.child_by_field_name("body")
        && let Some(first) = body.named_child(0)
        && first.kind() == "expression_statement"
        && let Some(s) = first.named_child(0)
        && s.kind() == "string"
    {
        return Some(clean_doc(text(s, source)));
    }
    let mut anchor = node;
    while let Some(p) = anchor.parent() {
        if matches!(
            p.kind(),
            "decorated_definition"
                | "type_declaration"
                | "export_statement"
                | "lexical_declaration"
                | "variable_declaration"
        ) && p.start_byte() <= anchor.start_byte()
        {
            anchor = p;
        } else {
            break;
        }
    }
    let mut parts = Vec::new();
    let mut next_row = anchor.start_position().row;
    let mut sib = anchor.prev_sibling();
    while let Some(s) = sib {
        if s.kind() == "attribute_item" {
            // Rust `#[derive(…)]` between the doc comment and the item.
            next_row = s.start_position().row;
            sib = s.prev_sibling();
            continue;
        }
        if !s.kind().contains("comment") || s.end_position().row + 1 < next_row {
            break;
        }
        parts.push(text(s, source));
        next_row = s.start_position().row;
        sib = s.prev_sibling();
    }
    if parts.is_empty() {
        return None;
    }
    parts.reverse();
    Some(clean_doc(&parts.join("\n")))
}

pub(super) fn clean_doc(raw: &str) -> String {
    let cleaned: Vec<&str> = raw
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches("/*")
                .trim_end_matches("*/")
                .trim_start_matches('/')
                .trim_start_matches('#')
                .trim_start_matches('*')
                .trim_matches('"')
                .trim_matches('\'')
                .trim()
        })
        .filter(|l| !l.is_empty())
        .collect();
    collapse_ws(&cleaned.join(" "), MAX_DOC_CHARS)
}
