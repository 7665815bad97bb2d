//! Server-level secrets (upstream's `/api/settings/secrets`): set, list (names and
//! descriptions only), read one value as text, delete. Values stay in memory unless the server
//! was given a secrets file (written 0600).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_protocol::{CreateSecretRequest, DeletedResponse, SecretInfo, SecretList};

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::ApiJson;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    value: String,
    description: Option<String>,
}

/// The server's secrets.
#[derive(Debug, Default)]
pub struct SecretStore {
    file: Option<PathBuf>,
    secrets: Mutex<BTreeMap<String, Stored>>,
}

impl SecretStore {
    /// A store, loaded from `file` when given.
    pub fn new(file: Option<PathBuf>) -> Self {
        let secrets = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Self {
            file,
            secrets: Mutex::new(secrets),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Stored>> {
        self.secrets.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn persist(&self, secrets: &BTreeMap<String, Stored>) -> Result<()> {
        if let Some(f) = &self.file {
            let bytes =
                serde_json::to_vec(secrets).map_err(|e| ApiError::Internal(e.to_string()))?;
            tandem_sdk::atomic_write(f, &bytes)?;
        }
        Ok(())
    }
}

fn valid_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(ApiError::field(
            &["body", "name"],
            "value_error",
            "secret names use letters, digits, `_`, `-` and `.`",
            Value::from(name),
        ))
    }
}

/// `PUT /api/settings/secrets`.
pub async fn put(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<CreateSecretRequest>,
) -> Result<Json<SecretInfo>> {
    valid_name(&req.name)?;
    let mut all = state.secrets.lock();
    all.insert(
        req.name.clone(),
        Stored {
            value: req.value,
            description: req.description.clone(),
        },
    );
    state.secrets.persist(&all)?;
    Ok(Json(SecretInfo {
        name: req.name,
        description: req.description,
    }))
}

/// `GET /api/settings/secrets`.
pub async fn list(State(state): State<AppState>) -> Json<SecretList> {
    let all = state.secrets.lock();
    Json(SecretList {
        secrets: all
            .iter()
            .map(|(n, s)| SecretInfo {
                name: n.clone(),
                description: s.description.clone(),
            })
            .collect(),
    })
}

/// `GET /api/settings/secrets/{name}`: the value as `text/plain`.
pub async fn get_value(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Response> {
    let value = state
        .secrets
        .lock()
        .get(&name)
        .map(|s| s.value.clone())
        .ok_or(ApiError::NotFound)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], value).into_response())
}

/// `DELETE /api/settings/secrets/{name}`.
pub async fn delete(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
) -> Result<Json<DeletedResponse>> {
    let mut all = state.secrets.lock();
    let deleted = all.remove(&name).is_some();
    if !deleted {
        return Err(ApiError::NotFound);
    }
    state.secrets.persist(&all)?;
    Ok(Json(DeletedResponse { deleted }))
}
