//! JavaScript, TypeScript and Vue: imports, Vue global registrations and
//! their uses, TypeScript type declarations.

use super::*;
use crate::util::kebab;

/// Vue's built-in directives (`v-if` …), never a global registration.
const VUE_DIRECTIVES: &[&str] = &[
    "if", "else", "else-if", "for", "show", "model", "bind", "on", "slot", "html", "text", "once",
    "pre", "cloak", "memo", "is",
];

/// Vue global registrations ([`RefKind::Registers`]) of a script, and the
/// custom directives and unimported component tags ([`RefKind::Global`]) of
/// a `.vue` file's template.
fn vue_globals(text: &str, lines: &Lines, vue: bool, f: &mut FileFacts) {
    // Most scripts register nothing: their imports need no second pass.
    if !vue && !text.contains(".directive(") && !text.contains(".component(") {
        return;
    }
    static NAMED: OnceLock<Regex> = OnceLock::new();
    static REGISTER: OnceLock<Regex> = OnceLock::new();
    static DIRECTIVE: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    // Identifier → import path: `import X from 'p'`, `import { a, b as c } from 'p'`.
    let mut imported: BTreeMap<String, String> = BTreeMap::new();
    for c in re(
        &NAMED,
        r#"\bimport\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s*['"]([^'"\n]+)['"]"#,
    )
    .captures_iter(text)
    {
        let path = c.get(3).expect("group 3").as_str();
        let names = c.get(2).map_or("", |m| m.as_str());
        let local = names
            .split(',')
            .filter_map(|n| n.split_whitespace().last())
            .chain(c.get(1).map(|m| m.as_str()));
        for n in local {
            imported.insert(n.to_string(), path.to_string());
        }
    }
    for c in re(
        &REGISTER,
        r#"\.(directive|component)\(\s*['"]([\w-]+)['"]\s*,\s*(\w+)"#,
    )
    .captures_iter(text)
    {
        let (what, name, ident) = (&c[1], &c[2], &c[3]);
        let Some(path) = imported.get(ident) else {
            continue;
        };
        let name = match what {
            "directive" => format!("v-{}", kebab(name)),
            _ => kebab(name),
        };
        f.refs.push(Ref {
            kind: RefKind::Registers,
            target: format!("{name} {path}"),
            line: lines.at(c.get(0).expect("match").start()),
        });
    }
    if !vue {
        return;
    }
    let Some(start) = text.find("<template") else {
        return;
    };
    let end = text.rfind("</template>").unwrap_or(text.len()).max(start);
    let template = &text[start..end];
    let local: Vec<String> = imported.keys().map(|k| kebab(k)).collect();
    for c in re(&DIRECTIVE, r"\sv-([a-z][a-z0-9-]*)").captures_iter(template) {
        let name = &c[1];
        if !VUE_DIRECTIVES.contains(&name) {
            f.refs.push(Ref {
                kind: RefKind::Global,
                target: format!("v-{name}"),
                line: lines.at(start + c.get(0).expect("match").start()),
            });
        }
    }
    for c in re(
        &TAG,
        r"<([A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*-[a-z0-9-]*)[\s/>]",
    )
    .captures_iter(template)
    {
        let name = kebab(&c[1]);
        if name != "template" && !local.contains(&name) {
            f.refs.push(Ref {
                kind: RefKind::Global,
                target: name,
                line: lines.at(start + c.get(0).expect("match").start()),
            });
        }
    }
}

/// The capitalised interfaces and type aliases `text` (TypeScript)
/// declares at the start of a line ([`FileFacts::ts_types`]).
pub(super) fn ts_types(text: &str) -> Vec<String> {
    static DECL: OnceLock<Regex> = OnceLock::new();
    re(
        &DECL,
        r"(?m)^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type)\s+([A-Z]\w*)",
    )
    .captures_iter(text)
    .map(|c| c[1].to_string())
    .collect()
}

pub(super) fn scripts(text: &str, vue: bool) -> FileFacts {
    let lines = Lines::new(text);
    let mut f = FileFacts::default();
    vue_globals(text, &lines, vue, &mut f);
    script_requests(text, &lines, &mut f);
    static IMPORT: OnceLock<Regex> = OnceLock::new();
    for c in re(
        &IMPORT,
        r#"(?:\bfrom\s+|\bimport\s+|\brequire\(\s*|\bimport\(\s*)['"]([^'"\n]+)['"]"#,
    )
    .captures_iter(text)
    {
        let m = c.get(1).expect("group 1");
        let target = m.as_str();
        if target.starts_with('.')
            || target.starts_with("@/")
            || target.starts_with('/')
            || target.starts_with("~/")
        {
            f.refs.push(Ref {
                kind: RefKind::Import,
                target: target.to_string(),
                line: lines.at(m.start()),
            });
        }
    }
    f
}
