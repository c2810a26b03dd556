//! Advice the session gives in its replies: the next step by phase, and
//! what to look for when a slot of the query frame is missing
//! (docs/sessions.md § Risk, § Steps). Pure functions of the session.

use super::model::{Intent, Phase, Requirement, Session, SlotName};

/// The slot extraction instructions `start_session` returns for IMPLEMENT
/// and MODIFY (seeds v3.10 step 1, as docs/sessions.md gives it).
pub const EXTRACTION_PROMPT: &str = "Extract from the user's request, for each slot, a short `value` (English is fine) and a `quote`: the exact words of the request that support it, copied verbatim (the server rejects quotes that are not in the request). Leave a slot out when the request does not say it. Slots: target_feature (feature or component), trigger_condition (when it happens), observed_issue (what goes wrong now), desired_action (what to do). Then call set_query_frame with {\"session_id\": ..., \"slots\": {\"target_feature\": {\"value\": ..., \"quote\": ...}, ...}}.";

/// What the agent should do next, in one line, by phase and intent (the
/// session steps of docs/sessions.md).
pub fn next_step(s: &Session) -> String {
    next_step_with_hook(s, None)
}

/// [`next_step`] where it is known whether code-intel's PreToolUse hook
/// checks this repository's writes (`hook`: `Some(true)` it does,
/// `Some(false)` it does not, `None` not known): READY then says how writes
/// are checked, the hook or `check_write_target`.
pub fn next_step_with_hook(s: &Session, hook: Option<bool>) -> String {
    match s.phase {
        Phase::Exploration
            if !s.frame_set && matches!(s.intent, Intent::Implement | Intent::Modify) =>
        {
            "extract the slots with the extraction_prompt and call set_query_frame".into()
        }
        Phase::Exploration => format!(
            "with session_id: find_definitions, read_file the files to change (`files` reads several at once), {}, then submit_understanding",
            if s.requirements.needs.contains(&Requirement::Patterns) {
                "read an existing implementation of the same kind"
            } else {
                "find_references on what changes (a search_text for its name counts too)"
            }
        ),
        Phase::Semantic => {
            "semantic_search with collection=forest (pass session_id), then submit_semantic".into()
        }
        Phase::Verification => {
            "confirm or reject each hypothesis with code tools, then submit_verification".into()
        }
        Phase::Ready if matches!(s.intent, Intent::Question | Intent::Investigate) => {
            "answer from what the tools returned (this session never writes); record_outcome when done".into()
        }
        Phase::Ready => ready_step(s, hook),
    }
}

/// READY's next step for a session that writes: the files to edit, and how
/// writes are checked (see [`next_step_with_hook`]).
fn ready_step(s: &Session, hook: Option<bool>) -> String {
    let files: Vec<String> = s
        .understanding
        .iter()
        .flat_map(|u| &u.files_to_edit)
        .chain(&s.scope_added)
        .map(|f| format!("`{f}`"))
        .collect();
    let how = match hook {
        Some(true) => {
            "code-intel's PreToolUse hook checks each write as it is made (no check_write_target needed)"
        }
        Some(false) => "call check_write_target before every edit (no write hook is installed)",
        None => {
            "where code-intel's PreToolUse hook is installed (`code-intel init --hooks`) each write is checked as it is made, elsewhere call check_write_target before every edit"
        }
    };
    format!(
        "edit {}; {how}; record_outcome when done",
        if files.is_empty() {
            "the files you read".to_string()
        } else {
            files.join(", ")
        }
    )
}

/// Hints and tools per missing slot (docs/sessions.md § Risk).
pub fn guidance(slot: SlotName) -> (&'static str, &'static [&'static str]) {
    let (hint, tools): (&str, &[&str]) = match slot {
        SlotName::TargetFeature => (
            "find which feature or component the request is about",
            &[
                "find_definitions",
                "get_symbols",
                "semantic_search (collection=map)",
            ],
        ),
        SlotName::TriggerCondition => (
            "find the input or event that leads to the behaviour",
            &["find_references", "search_text"],
        ),
        SlotName::ObservedIssue => (
            "find where the current behaviour comes from (messages, conditions)",
            &["search_text", "get_function_at_line"],
        ),
        SlotName::DesiredAction => (
            "find how similar changes are done in this codebase",
            &["analyze_structure", "find_references"],
        ),
    };
    (hint, tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_step_follows_phase_and_intent() {
        let mut s = Session::new(Intent::Modify, "fix the login");
        for (phase, intent, frame_set, wants) in [
            (Phase::Exploration, Intent::Modify, false, "set_query_frame"),
            (
                Phase::Exploration,
                Intent::Question,
                false,
                "submit_understanding",
            ),
            (
                Phase::Exploration,
                Intent::Modify,
                true,
                "find_references on what changes",
            ),
            (Phase::Semantic, Intent::Modify, true, "submit_semantic"),
            (
                Phase::Verification,
                Intent::Modify,
                true,
                "submit_verification",
            ),
            (Phase::Ready, Intent::Modify, true, "check_write_target"),
            (Phase::Ready, Intent::Investigate, true, "never writes"),
        ] {
            s.phase = phase;
            s.intent = intent;
            s.frame_set = frame_set;
            let step = next_step(&s);
            assert!(step.contains(wants), "{phase:?} {intent:?}: {step}");
        }
        s.phase = Phase::Exploration;
        s.requirements.needs = vec![Requirement::Patterns];
        assert!(next_step(&s).contains("existing implementation"));
    }

    #[test]
    fn ready_names_the_files_and_how_writes_are_checked() {
        let mut s = Session::new(Intent::Modify, "fix it");
        s.phase = Phase::Ready;
        s.scope_added
            .insert("app/Http/Requests/FeedRequest.php".into());
        let hook = ready_step(&s, Some(true));
        assert!(
            hook.contains("`app/Http/Requests/FeedRequest.php`")
                && hook.contains("hook checks each write")
        );
        assert!(!hook.contains("before every edit"), "{hook}");
        assert!(ready_step(&s, Some(false)).contains("check_write_target before every edit"));
        assert_eq!(next_step(&s), ready_step(&s, None));
    }

    #[test]
    fn every_slot_has_guidance_with_tools() {
        for slot in SlotName::ALL {
            let (hint, tools) = guidance(slot);
            assert!(!hint.is_empty() && !tools.is_empty(), "{slot:?}");
        }
    }
}
