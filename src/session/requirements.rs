//! What READY needs: requirements by intent and risk, the check of
//! submitted claims against the code, and which reasons open SEMANTIC
//! (docs/sessions.md § Requirements).

use std::collections::{BTreeMap, BTreeSet};

use super::model::{
    Assessment, Intent, Requirement, Requirements, Risk, SemanticReason, SlotName, Understanding,
};

/// Requirements by intent and risk (docs/sessions.md § Requirements):
/// LOW/MEDIUM 3 symbols, 1 entry point, 2 files, 1 pattern (MEDIUM
/// also target_feature evidence); HIGH 5/2/4/2 with target_feature and
/// observed_issue evidence; `find_definitions` and `find_references` used.
/// INVESTIGATE: 1 symbol, 1 file. QUESTION: nothing.
pub fn requirements(intent: Intent, risk: Risk) -> Requirements {
    let tools = vec![
        "find_definitions".to_string(),
        "find_references".to_string(),
    ];
    match (intent, risk) {
        (Intent::Question, _) => Requirements {
            symbols: 0,
            entry_points: 0,
            files: 0,
            patterns: 0,
            slot_evidence: vec![],
            tools: vec![],
        },
        (Intent::Investigate, _) => Requirements {
            symbols: 1,
            entry_points: 0,
            files: 1,
            patterns: 0,
            slot_evidence: vec![],
            tools: vec![],
        },
        (_, Risk::High) => Requirements {
            symbols: 5,
            entry_points: 2,
            files: 4,
            patterns: 2,
            slot_evidence: vec![SlotName::TargetFeature, SlotName::ObservedIssue],
            tools,
        },
        (_, Risk::Medium) => Requirements {
            symbols: 3,
            entry_points: 1,
            files: 2,
            patterns: 1,
            slot_evidence: vec![SlotName::TargetFeature],
            tools,
        },
        (_, Risk::Low) => Requirements {
            symbols: 3,
            entry_points: 1,
            files: 2,
            patterns: 1,
            slot_evidence: vec![],
            tools,
        },
    }
}

/// Whether `reason` explains what is missing (docs/sessions.md): symbols →
/// no_definition_found | architecture_unknown; entry points →
/// no_definition_found | no_reference_found; patterns →
/// no_similar_implementation | architecture_unknown; files →
/// context_fragmented | architecture_unknown.
pub fn reason_fits(missing: Requirement, reason: SemanticReason) -> bool {
    use SemanticReason::*;
    matches!(
        (missing, reason),
        (
            Requirement::Symbols,
            NoDefinitionFound | ArchitectureUnknown
        ) | (
            Requirement::EntryPoints,
            NoDefinitionFound | NoReferenceFound
        ) | (
            Requirement::Patterns,
            NoSimilarImplementation | ArchitectureUnknown
        ) | (Requirement::Files, ContextFragmented | ArchitectureUnknown)
    )
}

/// Tools that must have been tried before SEMANTIC may be entered.
pub const BEFORE_SEMANTIC: [&str; 3] = ["find_definitions", "find_references", "search_text"];

/// Facts about the repository and the session that claims are checked
/// against.
pub struct Facts<'a> {
    /// A definition with this name exists.
    pub symbol_exists: &'a dyn Fn(&str) -> bool,
    /// The repo-relative file exists.
    pub file_exists: &'a dyn Fn(&str) -> bool,
    /// Files the session's tool calls have shown.
    pub files_seen: &'a BTreeSet<String>,
    /// Tools the session has used.
    pub tools_used: &'a BTreeSet<String>,
}

/// Checks claims against the code and counts what is valid against the
/// requirements: symbols must exist, files must exist and have been seen,
/// entry points must be among the symbols, patterns need existing files, no
/// duplicates.
pub fn assess(req: &Requirements, u: &Understanding, facts: &Facts<'_>) -> Assessment {
    let mut rejected = Vec::new();
    let mut symbols = BTreeSet::new();
    for s in &u.symbols_identified {
        if !symbols.insert(s.as_str()) {
            rejected.push(format!("symbol `{s}` is listed twice"));
        } else if !(facts.symbol_exists)(s) {
            rejected.push(format!(
                "symbol `{s}` has no definition in the repository (check with find_definitions)"
            ));
            symbols.remove(s.as_str());
        }
    }
    let mut entry = BTreeSet::new();
    for e in &u.entry_points {
        if !symbols.contains(e.as_str()) {
            rejected.push(format!("entry point `{e}` is not among symbols_identified"));
        } else if !entry.insert(e.as_str()) {
            rejected.push(format!("entry point `{e}` is listed twice"));
        }
    }
    let mut files = BTreeSet::new();
    for f in &u.files_analyzed {
        if !(facts.file_exists)(f) {
            rejected.push(format!("file `{f}` does not exist"));
        } else if !facts.files_seen.contains(f) {
            rejected.push(format!("file `{f}` was not seen by any tool call of this session (read it with a code tool first)"));
        } else if !files.insert(f.as_str()) {
            rejected.push(format!("file `{f}` is listed twice"));
        }
    }
    let mut patterns = BTreeSet::new();
    for p in &u.existing_patterns {
        let valid_files = p.files.iter().filter(|f| (facts.file_exists)(f)).count();
        if valid_files == 0 {
            rejected.push(format!("pattern `{}` names no existing file", p.name));
        } else if !patterns.insert(p.name.as_str()) {
            rejected.push(format!("pattern `{}` is listed twice", p.name));
        }
    }
    let mut missing = BTreeMap::new();
    for (r, have, need) in [
        (Requirement::Symbols, symbols.len(), req.symbols),
        (Requirement::EntryPoints, entry.len(), req.entry_points),
        (Requirement::Files, files.len(), req.files),
        (Requirement::Patterns, patterns.len(), req.patterns),
    ] {
        if have < need {
            missing.insert(r, (have, need));
        }
    }
    let missing_slot_evidence: Vec<SlotName> = req
        .slot_evidence
        .iter()
        .filter(|s| u.slot_evidence.get(s).is_none_or(|e| e.trim().is_empty()))
        .copied()
        .collect();
    let missing_tools: Vec<String> = req
        .tools
        .iter()
        .filter(|t| !facts.tools_used.contains(*t))
        .cloned()
        .collect();
    let needed = req.symbols
        + req.entry_points
        + req.files
        + req.patterns
        + req.slot_evidence.len()
        + req.tools.len();
    let met = symbols.len().min(req.symbols)
        + entry.len().min(req.entry_points)
        + files.len().min(req.files)
        + patterns.len().min(req.patterns)
        + (req.slot_evidence.len() - missing_slot_evidence.len())
        + (req.tools.len() - missing_tools.len());
    Assessment {
        rejected_claims: rejected,
        missing,
        missing_slot_evidence,
        missing_tools,
        confidence: if needed == 0 {
            1.0
        } else {
            met as f32 / needed as f32
        },
    }
}
