//! Upstream's `/api/profiles` routes over the host's profile store (`tandem_host::profiles`):
//! list, read, save, delete and activate named LLM configs. The gateway serves each as the
//! model `openhands_{name}`, and a conversation whose model names a profile runs on it.
//!
//! Profiles persist in `$TANDEM_HOME/profiles/{name}.json` across restarts. Their secrets
//! (`api_key` and the AWS keys) are encrypted at rest with ChaCha20-Poly1305 under the key
//! in `profiles/.secret_key` (0600, made on first use) or SHA-256 of `OH_SECRET_KEY` when
//! set, and no route ever answers them: `GET /api/profiles/{name}` masks them as upstream
//! does without `X-Expose-Secrets` (`api_key: null`, `api_key_set`), and that header is
//! ignored. Activation records the active profile (listed as `active_profile`); Tandem's
//! server keeps no agent settings to apply it to, so it answers `llm_applied: false`.

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tandem_protocol::{
    ActivateProfileResponse, ProfileDetailResponse, ProfileInfo, ProfileListResponse,
    ProfileMutationResponse, SaveProfileRequest,
};

use tandem_host::profiles::{SECRET_FIELDS, StoreError, canonical, valid_name};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::ApiJson;

fn name_of(raw: &str) -> Result<String, ApiError> {
    if valid_name(raw) {
        Ok(canonical(raw).to_owned())
    } else {
        Err(ApiError::field(
            &["path", "name"],
            "string_pattern_mismatch",
            "String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'",
            Value::from(raw),
        ))
    }
}

fn not_found(name: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"detail": format!("Profile '{name}' not found")})),
    )
        .into_response()
}

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Full => ApiError::Conflict(e.to_string()),
        other => ApiError::Internal(other.to_string()),
    }
}

/// Whether `llm` holds an API key.
fn key_set(llm: &tandem_protocol::LlmConfig) -> bool {
    llm.api_key.as_deref().is_some_and(|k| !k.trim().is_empty())
}

/// `GET /api/profiles`.
pub async fn list(State(state): State<AppState>) -> Json<ProfileListResponse> {
    let store = &state.config.profile_store;
    let profiles = store
        .all()
        .into_iter()
        .map(|(name, llm)| ProfileInfo {
            api_key_set: key_set(&llm),
            model: Some(llm.model),
            base_url: llm.base_url,
            name,
            provider_connection_id: None,
            provider_connection_broken: false,
        })
        .collect();
    Json(ProfileListResponse {
        profiles,
        active_profile: store.active(),
    })
}

/// `GET /api/profiles/{name}`: the config with its secrets masked.
pub async fn get_one(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Response, ApiError> {
    let name = name_of(&raw)?;
    let Some(llm) = state.config.profile_store.get(&name) else {
        return Ok(not_found(&name));
    };
    let api_key_set = key_set(&llm);
    let mut config = serde_json::to_value(&llm).map_err(|e| ApiError::Internal(e.to_string()))?;
    if let Some(obj) = config.as_object_mut() {
        for field in SECRET_FIELDS {
            if obj.get(field).is_some_and(|v| !v.is_null()) {
                obj.insert(field.to_owned(), Value::from("**********"));
            }
        }
        obj.insert("api_key".into(), Value::Null);
    }
    Ok(Json(ProfileDetailResponse {
        name,
        config,
        api_key_set,
    })
    .into_response())
}

/// `POST /api/profiles/{name}`: 201, replacing a profile of that name; 409 past 50.
pub async fn save(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(body): ApiJson<SaveProfileRequest>,
) -> Result<Response, ApiError> {
    let name = name_of(&raw)?;
    if body.llm.model.trim().is_empty() {
        return Err(ApiError::field(
            &["body", "llm", "model"],
            "value_error",
            "the model must not be empty",
            Value::from(""),
        ));
    }
    tandem_sdk::known_credentials().add(body.llm.api_key.iter());
    state
        .config
        .profile_store
        .save(&name, body.llm, body.include_secrets)
        .map_err(store_error)?;
    tracing::info!(
        "saved LLM profile `{name}` (include_secrets={})",
        body.include_secrets
    );
    let message = format!("Profile '{name}' saved");
    Ok((
        StatusCode::CREATED,
        Json(ProfileMutationResponse { name, message }),
    )
        .into_response())
}

/// `DELETE /api/profiles/{name}` (idempotent).
pub async fn delete(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<ProfileMutationResponse>, ApiError> {
    let name = name_of(&raw)?;
    state
        .config
        .profile_store
        .delete(&name)
        .map_err(store_error)?;
    let message = format!("Profile '{name}' deleted");
    Ok(Json(ProfileMutationResponse { name, message }))
}

/// `POST /api/profiles/{name}/activate`; 404 when there is no such profile.
pub async fn activate(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Response, ApiError> {
    let name = name_of(&raw)?;
    if !state
        .config
        .profile_store
        .activate(&name)
        .map_err(store_error)?
    {
        return Ok(not_found(&name));
    }
    let message = format!("Profile '{name}' activated");
    Ok(Json(ActivateProfileResponse {
        name,
        message,
        llm_applied: false,
    })
    .into_response())
}
