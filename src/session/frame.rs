//! Query frames: quote verification (NFKC, whitespace folded) and missing
//! slots. Risk does not come from the frame (see `risk`).

use unicode_normalization::UnicodeNormalization;

use super::model::{QueryFrame, Slot, SlotName, SlotNote};

/// NFKC, then runs of white space folded to one space and trimmed: the form
/// in which quotes are compared with the request (full-width and half-width
/// characters, line breaks and double spaces do not matter).
pub fn normalize(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    nfkc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Keeps the slots whose quote occurs in the request (after [`normalize`]);
/// the others are rejected as hallucinated. Empty values are dropped.
pub fn verify_frame(query: &str, slots: &[(SlotName, Slot)]) -> (QueryFrame, Vec<SlotNote>) {
    let q = normalize(query);
    let mut frame = QueryFrame::new();
    let mut rejected = Vec::new();
    for (name, slot) in slots {
        let quote = normalize(&slot.quote);
        if slot.value.trim().is_empty() {
            continue;
        }
        if quote.is_empty() || !q.contains(&quote) {
            rejected.push(SlotNote {
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
