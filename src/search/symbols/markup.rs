//! Vue single-file components (their `<script>` blocks parsed as TS/JS)
//! and Blade directives, components and Livewire tags.

use super::*;

/// Adds the definitions and references of a Vue component's `<script>`
/// blocks, parsed as TypeScript (`lang="ts"` / `"tsx"`) or JavaScript, with
/// lines and bytes shifted to the component file.
pub(super) fn vue_scripts(
    root: Node,
    source: &str,
    rel_path: &str,
    defs: &mut Vec<Definition>,
    refs: &mut Vec<TagReference>,
) {
    let mut cursor = root.walk();
    for block in root.named_children(&mut cursor) {
        if block.kind() != "script_element" {
            continue;
        }
        let start_tag = text(block, source).split('>').next().unwrap_or("");
        let sub_lang = if start_tag.contains("lang=\"tsx\"") {
            Lang::Tsx
        } else if start_tag.contains("lang=\"ts\"") {
            Lang::TypeScript
        } else {
            Lang::JavaScript
        };
        let mut inner = block.walk();
        let Some(raw) = block
            .named_children(&mut inner)
            .find(|c| c.kind() == "raw_text")
        else {
            continue;
        };
        let (row, byte) = (raw.start_position().row, raw.start_byte());
        let sub = extract(sub_lang, text(raw, source), rel_path);
        defs.extend(sub.definitions.into_iter().map(|mut d| {
            d.line += row;
            d.end_line += row;
            d.name_line += row;
            d.start_byte += byte;
            d.end_byte += byte;
            d.fqcn = None;
            d
        }));
        refs.extend(sub.references.into_iter().map(|mut r| {
            r.line += row;
            r
        }));
    }
}

/// Blade directives the HTML grammar sees as text: `@section('x')` …
/// `@endsection` / `@show` / `@stop`, `@push`, `@slot`, `@component` blocks
/// (kind `section`, named by their first argument) and references to
/// Livewire components (`@livewire('x')`, kind `livewire`), views
/// (`@include`, `@extends`, `@each`, kind `view`), named routes
/// (`route('x')`, kind `route`) and components (`<x-forms.input>`,
/// `<livewire:counter>`, kind `component`, named by the tag). One-line `@section('title', 'Text')` has
/// no block.
pub(super) fn blade_directives(
    source: &str,
    defs: &mut Vec<Definition>,
    refs: &mut Vec<TagReference>,
) {
    pub(super) static DIRECTIVE: OnceLock<regex::Regex> = OnceLock::new();
    let re = DIRECTIVE.get_or_init(|| {
        regex::Regex::new(
            r#"@(section|push|slot|component|livewire|include|includeIf|includeWhen|extends|each|endsection|show|stop|endpush|endslot|endcomponent)\b(?:\(\s*['"]([^'"]+)['"]\s*(,)?)?|\broute\(\s*['"]([^'"]+)['"]|<(x-[\w.:-]+|livewire:[\w.-]+)"#,
        )
        .expect("static regex")
    });
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |byte: usize| line_starts.partition_point(|&s| s <= byte);
    // Open blocks: (directive, name, start byte).
    let mut open: Vec<(String, String, usize)> = Vec::new();
    for m in re.captures_iter(source) {
        let whole = m.get(0).expect("match");
        let line = line_of(whole.start());
        let column = char_column(source, whole.start());
        if let Some(route) = m.get(4) {
            refs.push(TagReference {
                name: route.as_str().to_string(),
                kind: "route".into(),
                line,
                column,
            });
            continue;
        }
        if let Some(tag) = m.get(5) {
            refs.push(TagReference {
                name: tag.as_str().to_string(),
                kind: "component".into(),
                line,
                column,
            });
            continue;
        }
        let directive = &m[1];
        let arg = m.get(2).map(|a| a.as_str().to_string());
        match (directive, arg) {
            ("section" | "push" | "slot" | "component", Some(name)) if m.get(3).is_none() => {
                open.push((directive.to_string(), name, whole.start()));
            }
            ("livewire", Some(name)) => refs.push(TagReference {
                name,
                kind: "livewire".into(),
                line,
                column,
            }),
            ("include" | "includeIf" | "includeWhen" | "extends" | "each", Some(name)) => {
                refs.push(TagReference {
                    name,
                    kind: "view".into(),
                    line,
                    column,
                });
            }
            ("endsection" | "show" | "stop" | "endpush" | "endslot" | "endcomponent", _) => {
                let wanted = match directive {
                    "endpush" => "push",
                    "endslot" => "slot",
                    "endcomponent" => "component",
                    _ => "section",
                };
                if let Some(pos) = open.iter().rposition(|(d, _, _)| d == wanted) {
                    let (d, name, start) = open.remove(pos);
                    let end = whole.end();
                    let first_line = source[start..].lines().next().unwrap_or("");
                    defs.push(Definition {
                        name,
                        kind: "section".into(),
                        line: line_of(start),
                        end_line: line_of(end.saturating_sub(1)),
                        start_byte: start,
                        end_byte: end,
                        name_line: line_of(start),
                        scope: None,
                        signature: collapse_ws(first_line, MAX_SIGNATURE_CHARS),
                        doc: Some(format!("Blade @{d} block")),
                        fqcn: None,
                        parent: None,
                    });
                }
            }
            _ => {}
        }
    }
}
