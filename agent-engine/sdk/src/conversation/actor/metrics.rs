//! Cost and token accounting of LLM calls, and the budget they are held to.

use tandem_llm::LlmResponse;
use tandem_protocol::{Event, Metrics, ResponseLatency};

use super::{Actor, shared_view};

impl Actor {
    /// `(spent, budget)` when the agent's LLM has spent more than its budget.
    pub(super) fn over_budget(&self) -> Option<(f64, f64)> {
        let usage_id = &self.llm.config().usage_id;
        shared_view(&self.shared, |v| {
            let m = v.state.stats.usage_to_metrics.get(usage_id)?;
            let budget = m.max_budget_per_task?;
            (m.accumulated_cost > budget).then_some((m.accumulated_cost, budget))
        })
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
