//! Cost and token accounting of LLM calls, and the budget they are held to.

use tandem_llm::LlmResponse;
use tandem_protocol::{Budget, ConversationState, Event, Metrics, ResponseLatency};

use super::{Actor, shared_view};

/// The budget `state` records: its own limits, and upstream's `max_budget_per_task` of the
/// agent's LLM as the cost limit when it has none.
pub fn budget_of(state: &ConversationState) -> Budget {
    let mut budget: Budget = state
        .extra
        .get(Budget::KEY)
        .and_then(|b| serde_json::from_value(b.clone()).ok())
        .unwrap_or_default();
    if budget.max_cost.is_none() {
        budget.max_cost = state
            .stats
            .usage_to_metrics
            .get(&state.agent.llm.usage_id)
            .and_then(|m| m.max_budget_per_task);
    }
    budget
}

impl Actor {
    /// What was spent and which limit it reached, as the `budget_reached` value, when the
    /// conversation reached its budget.
    pub(super) fn budget_reached(&self) -> Option<serde_json::Value> {
        shared_view(&self.shared, |v| {
            let budget = budget_of(&v.state);
            let (limit, _, _) = budget.reached(&v.state.stats)?;
            Some(serde_json::json!({
                "limit": limit,
                "spent_cost": v.state.stats.total_cost(),
                "spent_tokens": v.state.stats.total_tokens(),
                "max_cost": budget.max_cost,
                "max_tokens": budget.max_tokens,
            }))
        })
    }

    /// Why a run cannot start on this budget, if it cannot.
    pub(super) fn budget_refusal(&self) -> Option<String> {
        let reached = self.budget_reached()?;
        Some(match reached["limit"].as_str() {
            Some("max_tokens") => format!(
                "this conversation reached its budget: {} tokens of {}; raise max_tokens to continue",
                reached["spent_tokens"], reached["max_tokens"]
            ),
            _ => format!(
                "this conversation reached its budget: ${:.4} of ${:.4}; raise max_cost to continue",
                reached["spent_cost"].as_f64().unwrap_or(0.0),
                reached["max_cost"].as_f64().unwrap_or(0.0)
            ),
        })
    }

    /// Records the new budget; a pause on the old one is over when the new one is not reached.
    pub(super) fn set_budget(&mut self, budget: Budget) -> crate::Result<()> {
        budget
            .validate()
            .map_err(|e| crate::SdkError::Config(e.to_string()))?;
        let leaf = self.leaf();
        self.emit(Event::state_update(
            Budget::KEY,
            serde_json::to_value(budget).unwrap_or_default(),
            leaf,
        ));
        let paused_on_it = shared_view(&self.shared, |v| {
            v.state.extra.contains_key(Budget::REACHED_KEY)
        });
        if paused_on_it && self.budget_reached().is_none() {
            let leaf = self.leaf();
            self.emit(Event::state_update(
                Budget::REACHED_KEY,
                serde_json::Value::Null,
                leaf,
            ));
        }
        self.save_state();
        Ok(())
    }

    pub(super) fn record_metrics(&mut self, usage_id: &str, model: &str, response: &LlmResponse) {
        let usage_id = usage_id.to_owned();
        let model = model.to_owned();
        let stats_value = {
            let mut view = self.write_view();
            let metrics = view
                .state
                .stats
                .usage_to_metrics
                .entry(usage_id.clone())
                .or_insert_with(|| Metrics::new(&model));
            metrics.accumulated_cost += response.cost;
            let mut usage = response.usage.clone();
            if usage.model.is_empty() {
                // A router names the model that served the call; keep that when given.
                usage.model.clone_from(&model);
            }
            usage.response_id.clone_from(&response.id);
            metrics
                .accumulated_token_usage
                .get_or_insert_with(Default::default)
                .add(&usage);
            let latency = ResponseLatency {
                model: model.clone(),
                latency: response.latency.as_secs_f64(),
                response_id: response.id.clone(),
            };
            metrics.response_latencies.push(latency.clone());
            // The event carries the totals and this call's latency, not the whole history.
            let mut stats = view.state.stats.clone();
            for (k, m) in stats.usage_to_metrics.iter_mut() {
                m.response_latencies = if *k == usage_id {
                    vec![latency.clone()]
                } else {
                    Vec::new()
                };
            }
            serde_json::to_value(&stats).unwrap_or_default()
        };
        let leaf = self.leaf();
        self.emit(Event::state_update("stats", stats_value, leaf));
    }
}
