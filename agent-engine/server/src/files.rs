//! File upload and download (upstream's `/api/file`): server-level routes take any absolute
//! path without `..`; the per-conversation routes confine the path to the workspace.

use std::path::{Component, Path, PathBuf};

use axum::Json;
use axum::body::Body;
use axum::extract::{Multipart, Path as UrlPath, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tandem_protocol::FileUploadResponse;

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{QueryMap, conversation_id};
use crate::workspace::confine;

fn path_param(q: &QueryMap) -> Result<String> {
    q.get("path").map(str::to_owned).ok_or_else(|| {
        ApiError::field(&["query", "path"], "missing", "Field required", Value::Null)
    })
}

fn server_path(raw: &str) -> Result<PathBuf> {
    let p = Path::new(raw);
    if !p.is_absolute() {
        return Err(ApiError::field(
            &["query", "path"],
            "value_error",
            "the path must be absolute",
            Value::from(raw),
        ));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(ApiError::Forbidden(format!("`{raw}` contains `..`")));
    }
    Ok(p.to_path_buf())
}

async fn conv_path(state: &AppState, cid: &str, raw: &str) -> Result<PathBuf> {
    let id = conversation_id(cid)?;
    let live = state.registry.get(&id).await?;
    confine(&live.workspace, raw)
}

async fn save(dest: PathBuf, mut multipart: Multipart) -> Result<Json<FileUploadResponse>> {
    loop {
        let field = multipart.next_field().await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge("The upload is larger than this server accepts.".into())
            } else {
                ApiError::BadRequest(format!("bad multipart body: {e}"))
            }
        })?;
        let Some(field) = field else {
            return Err(ApiError::field(
                &["body", "file"],
                "missing",
                "Field required",
                Value::Null,
            ));
        };
        if field.name() != Some("file") {
            continue;
        }
        let bytes = field.bytes().await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge("The upload is larger than this server accepts.".into())
            } else {
                ApiError::BadRequest(format!("bad multipart body: {e}"))
            }
        })?;
        if let Some(parent) = dest.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| ApiError::Internal(format!("{}: {e}", parent.display())))?;
        }
        tokio::fs::write(&dest, &bytes)
            .await
            .map_err(|e| ApiError::Internal(format!("{}: {e}", dest.display())))?;
        return Ok(Json(FileUploadResponse {
            success: true,
            file_size: bytes.len() as u64,
        }));
    }
}

async fn load(path: PathBuf) -> Result<Response> {
    let meta = tokio::fs::metadata(&path)
        .await
        .map_err(|_| ApiError::NotFound)?;
    if !meta.is_file() {
        return Err(ApiError::NotFound);
    }
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|_| ApiError::NotFound)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().replace('"', ""))
        .unwrap_or_default();
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (header::CONTENT_LENGTH, meta.len().to_string()),
        ],
        body,
    )
        .into_response())
}

/// `POST /api/file/upload?path=<absolute>` (multipart field `file`).
pub async fn upload(q: QueryMap, multipart: Multipart) -> Result<Json<FileUploadResponse>> {
    save(server_path(&path_param(&q)?)?, multipart).await
}

/// `GET /api/file/download?path=<absolute>`.
pub async fn download(q: QueryMap) -> Result<Response> {
    load(server_path(&path_param(&q)?)?).await
}

/// `POST /api/conversations/{id}/file/upload?path=` (inside the workspace).
pub async fn conv_upload(
    State(state): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    q: QueryMap,
    multipart: Multipart,
) -> Result<Json<FileUploadResponse>> {
    let dest = conv_path(&state, &cid, &path_param(&q)?).await?;
    save(dest, multipart).await
}

/// `GET /api/conversations/{id}/file/download?path=` (inside the workspace).
pub async fn conv_download(
    State(state): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    q: QueryMap,
) -> Result<Response> {
    let path = conv_path(&state, &cid, &path_param(&q)?).await?;
    load(path).await
}
