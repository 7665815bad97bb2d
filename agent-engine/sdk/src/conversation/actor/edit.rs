//! Approving a pending action with arguments the person edited: the edited action runs once,
//! now, in place of the original, and its observation answers the original's tool call.

use serde_json::Value;
use tandem_protocol::{Content, Observation, SecurityRisk};

use super::Actor;
use crate::agent::{edit_action, edited_headline};
use crate::error::{Result, SdkError};

impl Actor {
    /// Validates `arguments` for the pending action `action_id` and runs the edited action.
    /// Nothing changes when they do not fit the tool. Only that action leaves the pending
    /// set: the others of its turn wait for their own decision once it has run (the run then
    /// stops at `waiting_for_confirmation` again), and the loop goes on to the model as after
    /// an approval when none is left.
    pub(super) fn approve_edited(
        &mut self,
        action_id: &str,
        arguments: &Value,
    ) -> Result<SecurityRisk> {
        let Some(index) = self.awaiting.iter().position(|a| a.base.id == action_id) else {
            return Err(SdkError::NotPending(action_id.to_owned()));
        };
        self.check_can_run()?;
        let edited = edit_action(
            &self.awaiting[index],
            arguments,
            &self.tools,
            &self.analyzer,
            &self.workspace,
        )?;
        self.awaiting.remove(index);
        tracing::info!(
            conversation = %self.shared.id,
            action = action_id,
            risk = edited.security_risk.as_str(),
            "running an action the person edited"
        );
        let risk = edited.security_risk;
        // The person approved exactly this, in this call: it runs whatever the policy says.
        self.edited
            .insert(edited.base.id.clone(), edited_headline(&edited));
        self.queue.push_back(edited);
        self.begin_run();
        Ok(risk)
    }
}

/// How the note in front of an edited action's observation begins; `]` and a new line end it.
const EDIT_NOTE: &str = "[The person edited this action before it ran; it ran as: ";

/// Puts the note saying what ran in front of an edited action's observation, so the model,
/// which asked for something else, reads what actually happened.
pub(super) fn note_edit(observation: &mut Observation, headline: &str) {
    let note = format!("{EDIT_NOTE}{headline}]");
    let Some(content) = observation.content_mut() else {
        return;
    };
    match content.first_mut() {
        Some(Content::Text(t)) => t.text = format!("{note}\n{}", t.text),
        _ => content.insert(0, Content::text(note)),
    }
}

/// An observation text that starts with the edit note, split into what ran (the edited
/// action's headline, which may span lines) and the output after the note.
pub fn split_edit_note(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(EDIT_NOTE)?;
    match rest.split_once("]\n") {
        Some(parts) => Some(parts),
        None => rest.strip_suffix(']').map(|headline| (headline, "")),
    }
}
