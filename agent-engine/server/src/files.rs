//! File upload and download (upstream's `/api/file`): server-level routes take any absolute
//! path without `..`; the per-conversation routes confine the path to the workspace (a
//! relative path is relative to the workspace root). An empty or malformed path, or a folder
//! where a file belongs, is a 422 naming `path`.

use std::path::{Component, PathBuf};

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
use crate::workspace::{PathArg, confine, existing_file, writable_file};

/// Where the routes' path is.
const PATH_LOC: &[&str] = &["query", "path"];

fn path_param(q: &QueryMap) -> Result<String> {
    q.get("path").map(str::to_owned).ok_or_else(|| {
        ApiError::field(&["query", "path"], "missing", "Field required", Value::Null)
    })
}

fn server_path(raw: &str) -> Result<PathBuf> {
    let arg = PathArg::new(raw, PATH_LOC);
    let p = arg.checked()?;
    if !p.is_absolute() {
        return Err(arg.invalid("the path must be absolute"));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(ApiError::Forbidden(format!("`{raw}` contains `..`")));
    }
    Ok(p.to_path_buf())
}

async fn conv_path(state: &AppState, cid: &str, raw: &str) -> Result<PathBuf> {
    let id = conversation_id(cid)?;
    let live = state.registry.get(&id).await?;
    confine(&live.workspace, PathArg::new(raw, PATH_LOC))
}

async fn save(
    raw: &str,
    dest: PathBuf,
    mut multipart: Multipart,
) -> Result<Json<FileUploadResponse>> {
    let arg = PathArg::new(raw, PATH_LOC);
    writable_file(arg, &dest).await?;
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
                .map_err(|e| arg.io_error("creating the folders of", &e))?;
        }
        tokio::fs::write(&dest, &bytes)
            .await
            .map_err(|e| arg.io_error("writing", &e))?;
        return Ok(Json(FileUploadResponse {
            success: true,
            file_size: bytes.len() as u64,
        }));
    }
}

async fn load(raw: &str, path: PathBuf) -> Result<Response> {
    let arg = PathArg::new(raw, PATH_LOC);
    let meta = existing_file(arg, &path).await?;
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| arg.io_error("opening", &e))?;
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
    let raw = path_param(&q)?;
    save(&raw, server_path(&raw)?, multipart).await
}

/// `GET /api/file/download?path=<absolute>`.
pub async fn download(q: QueryMap) -> Result<Response> {
    let raw = path_param(&q)?;
    load(&raw, server_path(&raw)?).await
}

/// `POST /api/conversations/{id}/file/upload?path=` (inside the workspace).
pub async fn conv_upload(
    State(state): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    q: QueryMap,
    multipart: Multipart,
) -> Result<Json<FileUploadResponse>> {
    let raw = path_param(&q)?;
    let dest = conv_path(&state, &cid, &raw).await?;
    save(&raw, dest, multipart).await
}

/// `GET /api/conversations/{id}/file/download?path=` (inside the workspace).
pub async fn conv_download(
    State(state): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    q: QueryMap,
) -> Result<Response> {
    let raw = path_param(&q)?;
    let path = conv_path(&state, &cid, &raw).await?;
    load(&raw, path).await
}
