//! Query frames: quote verification (NFKC, whitespace folded), missing
//! slots, and risk from the frame (docs/sessions.md § Risk).

use unicode_normalization::UnicodeNormalization;

use super::model::{Intent, QueryFrame, Risk, Slot, SlotName, SlotRejection};

/// NFKC, then runs of white space folded to one space and trimmed: the form
/// in which quotes are compared with the request (full-width and half-width
/// characters, line breaks and double spaces do not matter).
pub fn normalize(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    nfkc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Keeps the slots whose quote occurs in the request (after [`normalize`]);
/// the others are rejected as hallucinated. Empty values are dropped.
pub fn verify_frame(query: &str, slots: &[(SlotName, Slot)]) -> (QueryFrame, Vec<SlotRejection>) {
    let q = normalize(query);
    let mut frame = QueryFrame::new();
    let mut rejected = Vec::new();
    for (name, slot) in slots {
        let quote = normalize(&slot.quote);
        if slot.value.trim().is_empty() {
            continue;
        }
        if quote.is_empty() || !q.contains(&quote) {
            rejected.push(SlotRejection {
                slot: *name,
                reason: format!(
                    "quote {:?} is not in the request; quote the user's own words verbatim or leave the slot empty",
                    slot.quote
                ),
            });
            continue;
        }
        frame.insert(*name, slot.clone());
    }
    (frame, rejected)
}

/// Slots the frame lacks, in [`SlotName::ALL`] order.
pub fn missing_slots(frame: &QueryFrame) -> Vec<SlotName> {
    SlotName::ALL
        .into_iter()
        .filter(|s| !frame.contains_key(s))
        .collect()
}

/// Risk of a request (docs/sessions.md § Risk): MODIFY without target_feature or
/// observed_issue, desired_action without observed_issue, three or more
/// missing slots, or a grey-zone relevance result → HIGH; two missing →
/// MEDIUM; IMPLEMENT is at least MEDIUM.
pub fn assess_risk(intent: Intent, frame: &QueryFrame, grey_zone: bool) -> Risk {
    let has = |s| frame.contains_key(&s);
    let missing = missing_slots(frame).len();
    let high = grey_zone
        || (intent == Intent::Modify
            && (!has(SlotName::TargetFeature) || !has(SlotName::ObservedIssue)))
        || (has(SlotName::DesiredAction) && !has(SlotName::ObservedIssue))
        || missing >= 3;
    if high {
        return Risk::High;
    }
    if missing == 2 || intent == Intent::Implement {
        Risk::Medium
    } else {
        Risk::Low
    }
}
