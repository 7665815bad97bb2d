//! What the environment tells every Tandem host: the LLM it names, the session keys, a
//! provider's API key. Credential variables `tandem serve` took out of its environment at start
//! (so the agent's commands never inherit them) are read from where it holds them
//! ([`tandem_llm::held_env`]).

use tandem_protocol::LlmConfig;

/// The variable `name`, unless unset or blank; credential variables `tandem serve` took out of
/// its environment at start are read from where it holds them ([`tandem_llm::held_env`]).
pub fn var(name: &str) -> Option<String> {
    tandem_llm::held_env::var(name)
}

/// The LLM the environment names as a whole: `LLM_MODEL` with `LLM_BASE_URL` and
/// `LLM_API_KEY`, or none without `LLM_MODEL`.
pub fn llm_from_env() -> Option<LlmConfig> {
    let mut llm = LlmConfig::new(var("LLM_MODEL")?);
    llm.base_url = var("LLM_BASE_URL");
    llm.api_key = var("LLM_API_KEY");
    Some(llm)
}

/// Session keys named by the environment, without duplicates.
pub fn keys_from_env() -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let mut push = |k: &str| {
        let k = k.trim();
        if !k.is_empty() && !keys.iter().any(|x| x == k) {
            keys.push(k.to_owned());
        }
    };
    if let Some(k) = var("TANDEM_SESSION_KEY") {
        push(&k);
    }
    if let Some(list) = var("TANDEM_SESSION_KEYS") {
        list.split(',').for_each(&mut push);
    }
    for i in 0.. {
        match var(&format!("OH_SESSION_API_KEYS_{i}")) {
            Some(k) => push(&k),
            None => break,
        }
    }
    if let Some(k) = var("SESSION_API_KEY") {
        push(&k);
    }
    keys
}

/// The API key for `model` from the environment: `LLM_API_KEY`, else the provider's variable
/// (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`, ...). Used after a restart,
/// since keys posted with a conversation are never persisted.
pub fn env_key_for(model: &str) -> Option<String> {
    if let Some(k) = var("LLM_API_KEY") {
        return Some(k);
    }
    let provider = model
        .split('/')
        .next()
        .unwrap_or("")
        .to_ascii_uppercase()
        .replace('-', "_");
    if provider.is_empty() || provider.len() == model.len() {
        return var("OPENAI_API_KEY");
    }
    var(&format!("{provider}_API_KEY"))
}
