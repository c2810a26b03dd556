//! Migrations: `Schema::create` / `Schema::table` calls as `table_schema`
//! chunks with their columns, indexes and foreign keys.

use super::*;

/// Blueprint calls that define indexes rather than columns.
pub(super) const INDEX_METHODS: &[&str] =
    &["index", "unique", "primary", "fullText", "spatialIndex"];

/// Blueprint shorthands that add columns with fixed names.
pub(super) const FIXED_COLUMNS: &[(&str, &[&str])] = &[
    ("id", &["id"]),
    ("timestamps", &["created_at", "updated_at"]),
    ("timestampsTz", &["created_at", "updated_at"]),
    ("softDeletes", &["deleted_at"]),
    ("softDeletesTz", &["deleted_at"]),
    ("rememberToken", &["remember_token"]),
];

/// `Schema::create('orders', function (Blueprint $table) { … })` (or
/// `Schema::table`) → one `table_schema` chunk with its columns (name,
/// type, modifiers), indexes and foreign keys.
pub(super) fn table_schema(call: Node, src: &str, file: &str) -> Option<Chunk> {
    let scope = text(call.child_by_field_name("scope")?, src);
    let op = text(call.child_by_field_name("name")?, src);
    if scope.rsplit('\\').next() != Some("Schema") || !matches!(op, "create" | "table") {
        return None;
    }
    let args = arguments(call);
    let table = string_value(*args.first()?, src)?;
    let closure = args.get(1)?.named_child(0)?;
    let body = closure.child_by_field_name("body")?;
    let mut bp = Blueprint::default();
    for stmt in named_children(body) {
        if let Some(expr) = stmt.named_child(0) {
            bp.statement(expr, src);
        }
    }
    let Blueprint {
        columns,
        indexes,
        foreign,
    } = bp;
    let related: Vec<String> = std::iter::once(format!("table:{table}"))
        .chain(
            foreign
                .iter()
                .filter_map(|f| f.on.as_ref().map(|t| format!("table:{t}"))),
        )
        .collect();
    let stmt = call
        .parent()
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(call);
    let (start, end) = (stmt.start_position().row + 1, stmt.end_position().row + 1);
    let content = src
        .lines()
        .skip(start - 1)
        .take(end + 1 - start)
        .collect::<Vec<_>>()
        .join("\n");
    let mut meta = Facts::from_iter([
        Fact::Framework(Framework::Laravel),
        Fact::Table(table.clone()),
        Fact::Operation(if op == "create" {
            TableOperation::Create
        } else {
            TableOperation::Table
        }),
        Fact::Columns(Columns::Table(columns)),
    ]);
    if !indexes.is_empty() {
        meta.set(Fact::Indexes(indexes));
    }
    if !foreign.is_empty() {
        meta.set(Fact::ForeignKeys(foreign));
    }
    Some(Chunk {
        file: file.to_string(),
        language: "php".into(),
        kind: "table_schema".into(),
        name: table.clone(),
        scope: None,
        fqcn: None,
        signature: format!("Schema::{op}('{table}')"),
        doc: Some(format!(
            "Database table {table} ({}) migration",
            if op == "create" { "created" } else { "altered" }
        )),
        start_line: start,
        end_line: end,
        content,
        meta,
        related,
    })
}

/// What a foreign key's modifiers say deleting the referenced row does:
/// `onDelete('cascade')` → `cascade`, and the shorthands of Laravel's
/// `ForeignKeyDefinition` (`cascadeOnDelete`, `nullOnDelete`,
/// `restrictOnDelete`, `noActionOnDelete`).
fn on_delete(modifiers: &[(String, Vec<Node>)], src: &str) -> Option<String> {
    modifiers
        .iter()
        .find_map(|(name, args)| match name.as_str() {
            "onDelete" => args.first().and_then(|a| string_value(*a, src)),
            "cascadeOnDelete" => Some("cascade".into()),
            "nullOnDelete" => Some("set null".into()),
            "restrictOnDelete" => Some("restrict".into()),
            "noActionOnDelete" => Some("no action".into()),
            _ => None,
        })
}

/// What the statements of a migration's closure declare: columns (name,
/// type, modifiers), indexes (and drops/renames) and foreign keys.
#[derive(Default)]
pub(super) struct Blueprint {
    pub(super) columns: Vec<TableColumn>,
    pub(super) indexes: Vec<TableIndex>,
    pub(super) foreign: Vec<ForeignKey>,
}

impl Blueprint {
    /// One `$table->type('name')->mod()->mod()` statement.
    fn statement(&mut self, expr: Node, src: &str) {
        // Unwind the chain to its base call.
        let mut chain = Vec::new();
        let mut cur = expr;
        while cur.kind() == "member_call_expression" {
            chain.push(cur);
            match cur.child_by_field_name("object") {
                Some(o) => cur = o,
                None => break,
            }
        }
        let Some(&base) = chain.last() else { return };
        if !text(cur, src).starts_with('$') {
            return;
        }
        let Some(method) = base
            .child_by_field_name("name")
            .map(|n| text(n, src).to_string())
        else {
            return;
        };
        let base_args = arguments(base);
        let first = base_args
            .first()
            .map(|a| strings(*a, src))
            .unwrap_or_default();
        let modifiers: Vec<(String, Vec<Node>)> = chain[..chain.len() - 1]
            .iter()
            .rev()
            .filter_map(|m| {
                Some((
                    text(m.child_by_field_name("name")?, src).to_string(),
                    arguments(*m),
                ))
            })
            .collect();
        let modifier_names: Vec<String> = modifiers
            .iter()
            .map(|(n, a)| match a.first() {
                Some(arg) => format!("{n}({})", text(*arg, src)),
                None => n.clone(),
            })
            .collect();
        let modifier_arg = |name: &str| {
            modifiers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, a)| a.first().and_then(|x| string_value(*x, src)))
        };
        if INDEX_METHODS.contains(&method.as_str())
            || matches!(
                method.as_str(),
                "dropColumn" | "renameColumn" | "dropForeign" | "dropIndex"
            )
        {
            self.indexes.push(TableIndex {
                kind: method,
                columns: first,
            });
            return;
        }
        if method == "foreign" {
            let references = modifier_arg("references").flatten();
            let on = modifier_arg("on").flatten();
            self.foreign.push(ForeignKey {
                column: first.first().cloned(),
                references,
                on,
                on_delete: on_delete(&modifiers, src),
            });
            return;
        }
        let fixed: Vec<String> = match FIXED_COLUMNS.iter().find(|(m, _)| *m == method) {
            Some((_, fixed)) => fixed.iter().map(|c| (*c).to_string()).collect(),
            None if method.ends_with("morphs") || method.ends_with("Morphs") => first
                .first()
                .map(|n| vec![format!("{n}_id"), format!("{n}_type")])
                .unwrap_or_default(),
            None => Vec::new(),
        };
        if !fixed.is_empty() || method.ends_with("morphs") || method.ends_with("Morphs") {
            for c in fixed {
                self.columns.push(TableColumn {
                    name: c,
                    kind: method.clone(),
                    modifiers: modifier_names.clone(),
                });
            }
            return;
        }
        let name = match (method.as_str(), first.first()) {
            ("foreignIdFor", _) => base_args
                .first()
                .and_then(|a| class_constant(*a, src))
                .map(|c| format!("{}_id", snake(&c).trim_start_matches('_'))),
            (_, Some(n)) => Some(n.clone()),
            _ => None,
        };
        let Some(name) = name else { return };
        if let Some(on) = modifier_arg("constrained") {
            let on = on.unwrap_or_else(|| plural_snake(name.trim_end_matches("_id")));
            self.foreign.push(ForeignKey {
                column: Some(name.clone()),
                references: Some("id".into()),
                on: Some(on),
                on_delete: on_delete(&modifiers, src),
            });
        }
        self.columns.push(TableColumn {
            name,
            kind: method,
            modifiers: modifier_names,
        });
    }
}
