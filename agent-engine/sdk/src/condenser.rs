//! [`LlmSummarizingCondenser`]: keeps the history the LLM sees within bounds, as upstream's
//! `LLMSummarizingCondenser` does. When the view (the events the LLM sees after earlier
//! condensations, the current summary counted as one) grows past `max_size`, it keeps the first
//! `keep_first` events and the most recent ones up to half of `max_size`, asks the LLM (no
//! tools) to summarise the middle together with the previous summary, and returns a
//! [`Condensation`] that forgets the middle and puts the summary at `keep_first`. The event log
//! keeps everything; `llm_view` applies the condensation.
//!
//! The same call serves an explicit `CondensationRequest` and a context-window overflow: then
//! the view is halved whatever its size. Cuts never separate a tool call from its result: the
//! head grows and the forgotten range extends forward until both sides are whole, which is
//! what upstream's traces show.

mod view;

use std::sync::Arc;

use tandem_llm::{Llm, LlmRequest};
use tandem_protocol::{Condensation, Event, EventBase, Extra, Message, Source};
use tokio_util::sync::CancellationToken;

use crate::{Result, SdkError};

pub use view::{ViewItem, has_unhandled_request, is_llm_visible, valid_cuts, view_items};

/// Upstream's default `max_size` for the agent server's condenser.
pub const DEFAULT_MAX_SIZE: usize = 80;
/// Upstream's default `keep_first`.
pub const DEFAULT_KEEP_FIRST: usize = 4;
/// Longest text of one event put in the summarising prompt, characters.
const MAX_EVENT_CHARS: usize = 10_000;

/// Which events a condensation forgets, decided before any LLM call.
#[derive(Debug, Clone, PartialEq)]
pub struct CondensationPlan {
    /// Ids of the forgotten view items, in view order (the previous summary's as
    /// `<condensation id>-summary`).
    pub forgotten_event_ids: Vec<String>,
    /// Where the new summary goes (the size of the kept head).
    pub summary_offset: usize,
    /// The previous summary, when it is among the forgotten.
    pub previous_summary: Option<String>,
    /// The forgotten events rendered for the summarising prompt.
    pub forgotten_text: Vec<String>,
}

/// Summarises the forgotten middle of a long history with an LLM.
#[derive(Clone)]
pub struct LlmSummarizingCondenser {
    /// The summarising LLM (its `usage_id` is normally `condenser`).
    pub llm: Arc<dyn Llm>,
    /// Largest view before condensing.
    pub max_size: usize,
    /// Events always kept at the start (system prompt, first message, ...).
    pub keep_first: usize,
}

impl std::fmt::Debug for LlmSummarizingCondenser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSummarizingCondenser")
            .field("llm", &self.llm.config().model)
            .field("max_size", &self.max_size)
            .field("keep_first", &self.keep_first)
            .finish()
    }
}

impl LlmSummarizingCondenser {
    /// A condenser with upstream's defaults (`max_size` 80, `keep_first` 4).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self {
            llm,
            max_size: DEFAULT_MAX_SIZE,
            keep_first: DEFAULT_KEEP_FIRST,
        }
    }

    /// Reads `max_size` and `keep_first` from an upstream condenser spec
    /// (`AgentSpec.condenser`: `{"kind": "LLMSummarizingCondenser", "max_size": 80, ...}`),
    /// keeping the defaults for missing or unusable values.
    pub fn with_spec(mut self, spec: &serde_json::Value) -> Self {
        let read = |key: &str| {
            spec.get(key)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| usize::try_from(v).ok())
        };
        if let Some(max_size) = read("max_size").filter(|m| *m > 0) {
            self.max_size = max_size;
        }
        if let Some(keep_first) = read("keep_first") {
            self.keep_first = keep_first;
        }
        self
    }

    /// Whether the history should be condensed before the next LLM call: the view is larger
    /// than `max_size`, or a `CondensationRequest` came after the latest condensation.
    pub fn should_condense(&self, events: &[Event]) -> bool {
        view_items(events).len() > self.max_size || has_unhandled_request(events)
    }

    /// What a condensation of `events` would forget now. The view is brought to half of
    /// `max_size` when it is over `max_size`, else (explicit request, context overflow) to half
    /// its size. `None` when nothing can be forgotten.
    pub fn plan(&self, events: &[Event]) -> Option<CondensationPlan> {
        let items = view_items(events);
        let len = items.len();
        let cuts = valid_cuts(&items);
        let target = if len > self.max_size {
            self.max_size / 2
        } else {
            len / 2
        };
        let is_valid = |i: usize| cuts.get(i).copied().unwrap_or(true);

        let mut start = self.keep_first.min(len);
        while !is_valid(start) {
            start += 1;
        }
        let tail = target.saturating_sub(start + 1);
        let mut end = len.saturating_sub(tail).max(start);
        while !is_valid(end) {
            end += 1;
        }
        if end <= start {
            return None;
        }
        let forgotten = &items[start..end];
        let mut previous_summary = None;
        let mut forgotten_text = Vec::new();
        for item in forgotten {
            match item {
                ViewItem::Summary { text, .. } => previous_summary = Some((*text).to_owned()),
                ViewItem::Event(event) => forgotten_text.push(render_event(event)),
            }
        }
        Some(CondensationPlan {
            forgotten_event_ids: forgotten.iter().map(ViewItem::id).collect(),
            summary_offset: start,
            previous_summary,
            forgotten_text,
        })
    }

    /// Condenses `events`: plans what to forget, asks the LLM for the summary (no tools), and
    /// returns the [`Condensation`] to append. Fails with [`SdkError::InvalidState`] when
    /// nothing can be forgotten and [`SdkError::Llm`] when the summary call fails.
    pub async fn condense(
        &self,
        events: &[Event],
        cancel: CancellationToken,
    ) -> Result<Condensation> {
        let Some(plan) = self.plan(events) else {
            return Err(SdkError::InvalidState(
                "the history is too short to condense".into(),
            ));
        };
        let request = LlmRequest {
            messages: vec![Message::user(summary_prompt(&plan))],
            ..LlmRequest::default()
        };
        let response = self.llm.completion(request, cancel).await?;
        let summary = response.message.text().trim().to_owned();
        let summary = if summary.is_empty() {
            plan.previous_summary
                .clone()
                .unwrap_or_else(|| "(no summary)".to_owned())
        } else {
            summary
        };
        let parent = events
            .iter()
            .rev()
            .find(|e| !e.is_transient())
            .map(|e| e.id().to_owned());
        Ok(Condensation {
            base: EventBase::new(Source::Environment, parent),
            forgotten_event_ids: plan.forgotten_event_ids,
            summary: Some(summary),
            summary_offset: i64::try_from(plan.summary_offset).ok(),
            llm_response_id: response.id,
            extra: Extra::new(),
        })
    }
}

/// The summarising prompt: the previous summary and the forgotten events, with what the
/// summary must keep.
pub fn summary_prompt(plan: &CondensationPlan) -> String {
    let mut out = String::from(
        "You keep the working memory of a coding agent whose history has grown too long. Below \
         are the agent's earlier events (and the summary written the last time this happened). \
         Write a new summary that replaces all of them. The agent will see only your summary \
         and the most recent events, so keep everything it needs to carry on:\n\
         - the user's goal and every requirement or constraint they stated;\n\
         - what has been done: files created or changed (paths and the gist of the change), \
         commands run and what they showed;\n\
         - the current state: what works, what fails and why, tests passing or failing;\n\
         - open tasks and the next steps that were planned;\n\
         - facts learned about the code, the environment and the user's preferences.\n\
         Be concrete and brief. Write plain text, no preamble.\n\n",
    );
    out.push_str("<PREVIOUS SUMMARY>\n");
    out.push_str(plan.previous_summary.as_deref().unwrap_or("(none)"));
    out.push_str("\n</PREVIOUS SUMMARY>\n");
    for text in &plan.forgotten_text {
        out.push_str("\n<EVENT>\n");
        out.push_str(text);
        out.push_str("\n</EVENT>\n");
    }
    out.push_str("\nNow write the new summary.");
    out
}

/// One event as the summariser reads it.
fn render_event(event: &Event) -> String {
    let text = match event {
        Event::SystemPrompt(_) => "[system prompt]".to_owned(),
        Event::Message(m) => {
            let role = match m.base.source {
                Source::User => "user",
                Source::Agent => "agent",
                Source::Environment => "environment",
            };
            format!("[{role} message] {}", m.llm_message.text())
        }
        Event::Action(a) => {
            let thought: Vec<&str> = a.thought.iter().filter_map(|c| c.as_text()).collect();
            let mut text = format!("[agent called {}] {}", a.tool_name, a.tool_call.arguments);
            if !thought.is_empty() {
                text = format!("{}\n{text}", thought.join("\n"));
            }
            text
        }
        Event::Observation(o) => {
            let content: Vec<String> = o
                .observation
                .content()
                .iter()
                .filter_map(|c| c.as_text().map(str::to_owned))
                .collect();
            format!("[result of {}] {}", o.tool_name, content.join("\n"))
        }
        Event::AgentError(e) => format!("[error from {}] {}", e.tool_name, e.error),
        Event::UserReject(r) => format!("[user rejected {}] {}", r.tool_name, r.rejection_reason),
        other => format!("[{}]", other.id()),
    };
    truncate(text)
}

fn truncate(text: String) -> String {
    if text.chars().count() <= MAX_EVENT_CHARS {
        return text;
    }
    let mut out: String = text.chars().take(MAX_EVENT_CHARS).collect();
    out.push_str("\n[... truncated]");
    out
}
