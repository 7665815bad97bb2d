//! Conversation state: what `base_state.json` holds and what `full_state` frames carry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Extra;

/// Where a conversation's run loop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// Not running; waiting for a message or `run`.
    #[default]
    Idle,
    /// The loop is stepping.
    Running,
    /// Paused or interrupted by the user.
    Paused,
    /// An action waits for the user's approval.
    WaitingForConfirmation,
    /// The agent finished (finish tool or text reply).
    Finished,
    /// Stopped on an error.
    Error,
    /// The stuck detector stopped a loop that was going nowhere.
    Stuck,
    /// Being deleted.
    Deleting,
}

impl ExecutionStatus {
    /// Whether a blocking `run()` returns on this status.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Finished | Self::Error | Self::Stuck)
    }

    /// The wire name (`waiting_for_confirmation`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
            Self::Paused => "paused",
            Self::WaitingForConfirmation => "waiting_for_confirmation",
            Self::Finished => "finished",
            Self::Error => "error",
            Self::Stuck => "stuck",
            Self::Deleting => "deleting",
        }
    }
}

/// Risk of an action, ordered from none known to high.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    ToSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum SecurityRisk {
    /// Not assessed.
    #[default]
    Unknown,
    /// Read-only or trivially reversible.
    Low,
    /// Changes files or state in the workspace.
    Medium,
    /// Destructive, privileged, or reaching outside the workspace.
    High,
}

impl SecurityRisk {
    /// The wire name: `UNKNOWN`, `LOW`, `MEDIUM` or `HIGH`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "UNKNOWN",
            Self::Low => "LOW",
            Self::Medium => "MEDIUM",
            Self::High => "HIGH",
        }
    }

    /// Parses `LOW` / `medium` / ...; anything else is `Unknown`.
    pub fn parse(s: &str) -> Self {
        match s.to_ascii_uppercase().as_str() {
            "LOW" => Self::Low,
            "MEDIUM" => Self::Medium,
            "HIGH" => Self::High,
            _ => Self::Unknown,
        }
    }
}

/// When an action must wait for the user's approval.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind")]
pub enum ConfirmationPolicy {
    /// Every action (but `finish` and `think`) waits.
    AlwaysConfirm,
    /// Nothing waits (the default).
    #[default]
    NeverConfirm,
    /// Actions at or above `threshold` wait, and unassessed ones if `confirm_unknown`.
    ConfirmRisky {
        /// Lowest risk that waits.
        #[serde(default = "high")]
        threshold: SecurityRisk,
        /// Whether `UNKNOWN` risk waits.
        #[serde(default = "yes")]
        confirm_unknown: bool,
    },
}

fn high() -> SecurityRisk {
    SecurityRisk::High
}
fn yes() -> bool {
    true
}

impl ConfirmationPolicy {
    /// Whether an action of this risk must wait for approval.
    pub fn should_confirm(&self, risk: SecurityRisk) -> bool {
        match self {
            Self::AlwaysConfirm => true,
            Self::NeverConfirm => false,
            Self::ConfirmRisky {
                threshold,
                confirm_unknown,
            } => {
                if risk == SecurityRisk::Unknown {
                    *confirm_unknown
                } else {
                    risk >= *threshold
                }
            }
        }
    }
}

/// Token counts of one LLM call, or accumulated.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct TokenUsage {
    /// Model name.
    #[serde(default)]
    pub model: String,
    /// Prompt (input) tokens.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// The model's context window, 0 when unknown.
    #[serde(default)]
    pub context_window: u64,
    /// Prompt + completion tokens of the latest call.
    #[serde(default)]
    pub per_turn_token: u64,
    /// Provider response id of the latest call.
    #[serde(default)]
    pub response_id: String,
}

impl TokenUsage {
    /// Adds `other` to these totals; `per_turn_token` and `response_id` take the latest.
    pub fn add(&mut self, other: &TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.context_window = self.context_window.max(other.context_window);
        self.per_turn_token = other.prompt_tokens + other.completion_tokens;
        self.response_id.clone_from(&other.response_id);
    }
}

/// Latency of one LLM call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseLatency {
    /// Model.
    pub model: String,
    /// Seconds.
    pub latency: f64,
    /// Provider response id.
    pub response_id: String,
}

/// Cost, tokens and latency of one LLM (one `usage_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Metrics {
    /// Model name.
    #[serde(default)]
    pub model_name: String,
    /// Total cost in USD.
    #[serde(default)]
    pub accumulated_cost: f64,
    /// Budget after which the run stops. Left out when unset, as upstream's `base_state.json`
    /// does (its REST and `stats` frames write `null`; readers accept both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget_per_task: Option<f64>,
    /// Token totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulated_token_usage: Option<TokenUsage>,
    /// Latency of each call (upstream writes the list even when empty).
    #[serde(default)]
    pub response_latencies: Vec<ResponseLatency>,
    /// Fields this version does not use (`costs`, `token_usages`, ...), kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl Metrics {
    /// Empty metrics for a model.
    pub fn new(model_name: impl Into<String>) -> Self {
        let model_name = model_name.into();
        Self {
            accumulated_token_usage: Some(TokenUsage {
                model: model_name.clone(),
                ..TokenUsage::default()
            }),
            model_name,
            accumulated_cost: 0.0,
            max_budget_per_task: None,
            response_latencies: Vec::new(),
            extra: Extra::new(),
        }
    }
}

/// Metrics per LLM usage id (`agent`, `condenser`, `title`, ...).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct ConversationStats {
    /// Metrics by usage id.
    #[serde(default)]
    pub usage_to_metrics: BTreeMap<String, Metrics>,
}

impl ConversationStats {
    /// Total cost over all usage ids.
    pub fn total_cost(&self) -> f64 {
        self.usage_to_metrics
            .values()
            .map(|m| m.accumulated_cost)
            .sum()
    }

    /// Total prompt + completion tokens over all usage ids.
    pub fn total_tokens(&self) -> u64 {
        self.usage_to_metrics
            .values()
            .filter_map(|m| m.accumulated_token_usage.as_ref())
            .map(|u| u.prompt_tokens + u.completion_tokens)
            .sum()
    }
}

/// (Tandem.) What a conversation may spend before its run pauses: a cost in US dollars and a
/// number of tokens (prompt and completion, every LLM of the conversation). Unset: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct Budget {
    /// US dollars; more than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// Tokens; more than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

/// A limit of a [`Budget`] that is not a positive number: the field and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct BudgetError {
    /// `max_cost` or `max_tokens`.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl Budget {
    /// The state key a conversation's budget is recorded under.
    pub const KEY: &'static str = "budget";
    /// The state key saying the run paused on its budget (`null` once raised).
    pub const REACHED_KEY: &'static str = "budget_reached";

    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_cost.is_some() || self.max_tokens.is_some()
    }

    /// Checks each limit is a positive number.
    pub fn validate(&self) -> Result<(), BudgetError> {
        if let Some(c) = self.max_cost
            && !(c.is_finite() && c > 0.0)
        {
            return Err(BudgetError {
                field: "max_cost",
                reason: format!("must be a positive number of US dollars, not {c}"),
            });
        }
        if self.max_tokens == Some(0) {
            return Err(BudgetError {
                field: "max_tokens",
                reason: "must be a positive number of tokens, not 0".into(),
            });
        }
        Ok(())
    }

    /// The limit `stats` has reached, if one: `(field, spent, limit)`.
    pub fn reached(&self, stats: &ConversationStats) -> Option<(&'static str, f64, f64)> {
        if let Some(max) = self.max_cost {
            let spent = stats.total_cost();
            if spent >= max {
                return Some(("max_cost", spent, max));
            }
        }
        if let Some(max) = self.max_tokens {
            let spent = stats.total_tokens();
            if spent >= max {
                return Some(("max_tokens", spent as f64, max as f64));
            }
        }
        None
    }
}

/// LLM configuration, with upstream's field names. Fields this version does not use are kept in
/// `extra`. `api_key` is never persisted by the engine.
#[derive(Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LlmConfig {
    /// `provider/model`, e.g. `openai/gpt-5`.
    pub model: String,
    /// API key (never written to disk; masked in `Debug`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Base URL of the provider API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Attempts after the first on retryable failures.
    #[serde(default = "default_num_retries")]
    pub num_retries: u32,
    /// Backoff multiplier.
    #[serde(default = "default_retry_multiplier")]
    pub retry_multiplier: f64,
    /// Shortest wait between attempts, seconds (an integer on the wire when whole, as upstream).
    #[serde(default = "default_retry_min_wait", with = "whole_number")]
    pub retry_min_wait: f64,
    /// Longest wait between attempts, seconds (an integer on the wire when whole, as upstream).
    #[serde(default = "default_retry_max_wait", with = "whole_number")]
    pub retry_max_wait: f64,
    /// Request timeout, seconds (an integer on the wire when whole, as upstream).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "whole_number::option"
    )]
    pub timeout: Option<f64>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Output token cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Longest message text sent, characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_message_chars: Option<u64>,
    /// Stream replies.
    #[serde(default)]
    pub stream: bool,
    /// Whether the model supports native tool calls (`None` = decide from the model table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_tool_calling: Option<bool>,
    /// `low` / `medium` / `high` for reasoning models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Price per input token, USD (overrides the table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cost_per_token: Option<f64>,
    /// Price per output token, USD (overrides the table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_cost_per_token: Option<f64>,
    /// Extra HTTP headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_headers: Option<BTreeMap<String, String>>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Which metrics bucket this LLM's calls count in.
    #[serde(default = "default_usage_id")]
    pub usage_id: String,
    /// Fields this version does not use, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Seconds that upstream types as `int` but Tandem keeps as `f64`: written as an integer when
/// the value is whole (`8`, not `8.0`), so upstream's files round-trip byte for byte.
mod whole_number {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Largest magnitude an `f64` holds every integer up to (2^53).
    const EXACT: f64 = 9_007_199_254_740_992.0;

    pub(super) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.fract() == 0.0 && v.abs() <= EXACT {
            #[allow(clippy::cast_possible_truncation)]
            s.serialize_i64(*v as i64)
        } else {
            s.serialize_f64(*v)
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        f64::deserialize(d)
    }

    /// The same for `Option<f64>`.
    pub(super) mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        pub(in super::super) fn serialize<S: Serializer>(
            v: &Option<f64>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }

        pub(in super::super) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<f64>, D::Error> {
            Option::<f64>::deserialize(d)
        }
    }
}

fn default_num_retries() -> u32 {
    5
}
fn default_retry_multiplier() -> f64 {
    8.0
}
fn default_retry_min_wait() -> f64 {
    8.0
}
fn default_retry_max_wait() -> f64 {
    64.0
}
fn default_usage_id() -> String {
    "agent".to_owned()
}

impl LlmConfig {
    /// A config for `model` with upstream's defaults.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            api_key: None,
            base_url: None,
            num_retries: default_num_retries(),
            retry_multiplier: default_retry_multiplier(),
            retry_min_wait: default_retry_min_wait(),
            retry_max_wait: default_retry_max_wait(),
            timeout: Some(300.0),
            temperature: None,
            top_p: None,
            max_output_tokens: None,
            max_message_chars: None,
            stream: false,
            native_tool_calling: None,
            reasoning_effort: None,
            input_cost_per_token: None,
            output_cost_per_token: None,
            extra_headers: None,
            seed: None,
            usage_id: default_usage_id(),
            extra: Extra::new(),
        }
    }

    /// The same config without its key, for persisting or echoing.
    pub fn without_key(&self) -> Self {
        Self {
            api_key: None,
            ..self.clone()
        }
    }
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "**********"))
            .field("base_url", &self.base_url)
            .field("usage_id", &self.usage_id)
            .finish_non_exhaustive()
    }
}

/// A tool the agent is given, by name, with parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ToolSpec {
    /// Tool name (`terminal`, `file_editor`, ...).
    pub name: String,
    /// Tool parameters.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: Extra,
}

/// The agent: its LLM, tools and prompt settings (upstream `Agent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AgentSpec {
    /// The agent's LLM.
    pub llm: LlmConfig,
    /// Tools beyond the built-ins.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// Built-in tools (`FinishTool`, `ThinkTool`).
    #[serde(default = "default_builtin_tools")]
    pub include_default_tools: Vec<String>,
    /// Skills, prompt suffixes (upstream `AgentContext`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_context: Option<serde_json::Value>,
    /// Template variables of the system prompt.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub system_prompt_kwargs: Extra,
    /// The condenser, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condenser: Option<serde_json::Value>,
    /// MCP servers whose tools the agent gets, in upstream's `{"mcpServers": {name: {...}}}`
    /// form (stdio `command`/`args`/`env`, or remote `url`/`headers`/`transport`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub mcp_config: Option<serde_json::Value>,
    /// Only tools whose name matches this regular expression are kept (applied after the MCP
    /// tools are added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_tools_regex: Option<String>,
    /// `Agent`.
    #[serde(default = "default_agent_kind")]
    pub kind: String,
    /// Fields this version does not use, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn default_builtin_tools() -> Vec<String> {
    vec!["FinishTool".to_owned(), "ThinkTool".to_owned()]
}
fn default_agent_kind() -> String {
    "Agent".to_owned()
}

impl AgentSpec {
    /// The default coding agent: terminal, file_editor, task_tracker, finish and think, with
    /// upstream's summarising condenser.
    pub fn default_for(llm: LlmConfig) -> Self {
        let condenser_llm = serde_json::to_value(LlmConfig {
            usage_id: "condenser".into(),
            ..llm.clone()
        })
        .unwrap_or_default();
        let tool = |name: &str| ToolSpec {
            name: name.to_owned(),
            params: Extra::new(),
        };
        let mut kwargs = Extra::new();
        kwargs.insert(
            "llm_security_analyzer".into(),
            serde_json::Value::Bool(true),
        );
        Self {
            llm,
            tools: vec![tool("terminal"), tool("file_editor"), tool("task_tracker")],
            include_default_tools: default_builtin_tools(),
            agent_context: None,
            system_prompt_kwargs: kwargs,
            // Upstream's default: summarise once the LLM's view passes 80 events, keeping
            // the first 4, with the agent's model (upstream servers require the `llm`).
            condenser: Some(serde_json::json!({
                "kind": "LLMSummarizingCondenser",
                "llm": condenser_llm,
                "max_size": 80,
                "keep_first": 4,
            })),
            mcp_config: None,
            filter_tools_regex: None,
            kind: default_agent_kind(),
            extra: Extra::new(),
        }
    }
}

impl AgentSpec {
    /// The same agent with every LLM key removed (the agent's, the condenser's and any other
    /// nested one), for keeping in memory, persisting or echoing.
    pub fn without_keys(&self) -> Self {
        let mut agent = self.clone();
        agent.llm.api_key = None;
        if let Some(c) = agent.condenser.as_mut() {
            strip_api_keys(c);
        }
        if let Some(c) = agent.agent_context.as_mut() {
            strip_api_keys(c);
        }
        agent.extra.values_mut().for_each(strip_api_keys);
        agent
    }
}

/// Removes every `api_key` field inside `value`.
fn strip_api_keys(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("api_key");
            map.values_mut().for_each(strip_api_keys);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_api_keys),
        _ => {}
    }
}

/// Where the agent works (upstream `LocalWorkspace` / `RemoteWorkspace`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkspaceSpec {
    /// Absolute working directory.
    pub working_dir: String,
    /// `LocalWorkspace`, `RemoteWorkspace`, ...
    #[serde(default = "default_workspace_kind")]
    pub kind: String,
    /// Fields this version does not use, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn default_workspace_kind() -> String {
    "LocalWorkspace".to_owned()
}

impl WorkspaceSpec {
    /// A local workspace at `dir`.
    pub fn local(dir: impl Into<String>) -> Self {
        Self {
            working_dir: dir.into(),
            kind: default_workspace_kind(),
            extra: Extra::new(),
        }
    }
}

/// The persisted state of a conversation (`base_state.json`); the event log holds the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationState {
    /// Conversation id (dashed UUID).
    pub id: String,
    /// The agent.
    pub agent: AgentSpec,
    /// The workspace.
    pub workspace: WorkspaceSpec,
    /// The conversation's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistence_dir: Option<String>,
    /// Steps after which a run stops.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
    /// Whether the stuck detector runs.
    #[serde(default = "yes")]
    pub stuck_detection: bool,
    /// Where the run loop stands.
    #[serde(default)]
    pub execution_status: ExecutionStatus,
    /// When actions wait for approval.
    #[serde(default)]
    pub confirmation_policy: ConfirmationPolicy,
    /// The security analyzer, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_analyzer: Option<serde_json::Value>,
    /// Skills activated so far.
    #[serde(default)]
    pub activated_knowledge_skills: Vec<String>,
    /// Last user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_user_message_id: Option<String>,
    /// Head of the active branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_event_id: Option<String>,
    /// Metrics by usage id.
    #[serde(default)]
    pub stats: ConversationStats,
    /// Secret names and (redacted) sources.
    #[serde(default)]
    pub secret_registry: serde_json::Value,
    /// Free-form tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Fields this version does not use, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

fn default_max_iterations() -> u32 {
    500
}
