//! What a sandbox is made from: the `tandem` binary to put in its image, and the environment its
//! server starts with (the webview's origins for CORS, the desktop's LLM and provider keys).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tandem_protocol::LlmConfig;

/// Where [`find_tandem_binary`] looks, given rather than read so tests need no environment.
#[derive(Debug, Clone, Default)]
pub struct BinarySearch {
    /// `TANDEM_BIN`.
    pub env: Option<OsString>,
    /// The desktop's own executable (its folder is searched).
    pub exe: Option<PathBuf>,
    /// `PATH`.
    pub path: Option<OsString>,
}

impl BinarySearch {
    /// This process's `TANDEM_BIN`, executable and `PATH`.
    pub fn from_env() -> Self {
        Self {
            env: std::env::var_os("TANDEM_BIN").filter(|v| !v.is_empty()),
            exe: std::env::current_exe().ok(),
            path: std::env::var_os("PATH"),
        }
    }
}

/// The `tandem` binary to build the sandbox image with: `TANDEM_BIN`, else a `tandem` next to
/// the desktop's executable (how the two ship together), else the first on `PATH`. The error
/// says where it looked and how to provide one.
pub fn find_tandem_binary(search: &BinarySearch) -> Result<PathBuf, NoTandemBinary> {
    if let Some(bin) = &search.env {
        let p = PathBuf::from(bin);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(NoTandemBinary::NotAFile(p))
        };
    }
    let beside = search
        .exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join("tandem"));
    if let Some(p) = beside.as_ref().filter(|p| is_executable(p)) {
        return Ok(p.clone());
    }
    if let Some(found) = search.path.as_ref().and_then(|path| {
        std::env::split_paths(path)
            .map(|d| d.join("tandem"))
            .find(|p| is_executable(p))
    }) {
        return Ok(found);
    }
    Err(NoTandemBinary::Nowhere {
        app_dir: beside
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf),
    })
}

/// Why [`find_tandem_binary`] found none, and how to provide one.
#[derive(Debug, thiserror::Error)]
pub enum NoTandemBinary {
    /// `TANDEM_BIN` is set to something that is not a file (taken at its word, never replaced).
    #[error(
        "TANDEM_BIN names {}, which is not a file: point it at a `tandem` binary built for Linux (`cargo build -p tandem-cli`)",
        .0.display()
    )]
    NotAFile(PathBuf),
    /// Neither next to the desktop app nor on `PATH`.
    #[error(
        "the sandbox image is missing and there is no `tandem` binary to build it with: set TANDEM_BIN to one, put it next to the desktop app{}, or on PATH (build it with `cargo build -p tandem-cli`); or build the image yourself with `tandem sandbox build`",
        .app_dir.as_deref().map(|d| format!(" ({})", d.display())).unwrap_or_default()
    )]
    Nowhere {
        /// The desktop app's folder, when known.
        app_dir: Option<PathBuf>,
    },
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The environment of the sandbox's server: `TANDEM_ALLOWED_ORIGINS` for the webview's
/// `origins` (its pages call the server from there), the variables of
/// [`tandem_sandbox::FORWARDED_ENV`] that `var` has (no credential among them), and the
/// desktop's LLM (`llm`, resolved as for the local backend, its key included) as `LLM_MODEL` /
/// `LLM_BASE_URL` / `LLM_API_KEY`, which the provisioner writes into a file only the sandbox's
/// server reads, never into its environment. The values are secrets: never log them.
pub fn sandbox_env(
    llm: Option<&LlmConfig>,
    var: impl Fn(&str) -> Option<String>,
    origins: &[&str],
) -> Vec<(String, String)> {
    let mut env = vec![("TANDEM_ALLOWED_ORIGINS".to_owned(), origins.join(","))];
    env.extend(tandem_sandbox::forwarded_env(&var));
    if let Some(llm) = llm {
        env.push(("LLM_MODEL".into(), llm.model.clone()));
        if let Some(url) = &llm.base_url {
            env.push(("LLM_BASE_URL".into(), url.clone()));
        }
        // Without a key of its own, the provider's variable (`ANTHROPIC_API_KEY` for
        // `anthropic/…`, `OPENAI_API_KEY` without a prefix): the sandbox's environment never
        // gets it, so its server takes it as the LLM's key.
        let provider_key = || {
            let name = match llm.model.split_once('/') {
                Some((p, _)) if !p.is_empty() => {
                    format!("{}_API_KEY", p.to_ascii_uppercase().replace('-', "_"))
                }
                _ => "OPENAI_API_KEY".to_owned(),
            };
            var(&name).filter(|k| !k.trim().is_empty())
        };
        if let Some(key) = llm.api_key.clone().or_else(provider_key) {
            env.push(("LLM_API_KEY".into(), key));
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_binary_comes_from_tandem_bin_then_beside_the_app_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let (app, bin, other) = (
            dir.path().join("app"),
            dir.path().join("bin"),
            dir.path().join("x"),
        );
        for d in [&app, &bin, &other] {
            std::fs::create_dir(d).unwrap();
        }
        executable(&bin.join("tandem"));
        executable(&other.join("tandem"));
        let mut s = BinarySearch {
            env: None,
            exe: Some(app.join("tandem-desktop")),
            path: Some(std::env::join_paths([&other, &bin]).unwrap()),
        };
        assert_eq!(find_tandem_binary(&s).unwrap(), other.join("tandem"));

        executable(&app.join("tandem"));
        assert_eq!(find_tandem_binary(&s).unwrap(), app.join("tandem"));

        s.env = Some(bin.join("tandem").into());
        assert_eq!(find_tandem_binary(&s).unwrap(), bin.join("tandem"));

        // TANDEM_BIN is taken at its word: a wrong one is named, never silently replaced.
        s.env = Some(dir.path().join("nope").into());
        let e = find_tandem_binary(&s).unwrap_err().to_string();
        assert!(
            e.starts_with("TANDEM_BIN names ") && e.contains("nope"),
            "{e}"
        );
    }

    #[test]
    fn no_binary_anywhere_is_an_error_saying_where_to_put_one() {
        let dir = tempfile::tempdir().unwrap();
        // A `tandem` that is not executable does not count.
        std::fs::write(dir.path().join("tandem"), b"").unwrap();
        let s = BinarySearch {
            env: None,
            exe: Some(dir.path().join("tandem-desktop")),
            path: Some(dir.path().as_os_str().to_owned()),
        };
        let e = find_tandem_binary(&s).unwrap_err().to_string();
        for needed in [
            "TANDEM_BIN",
            "PATH",
            "tandem sandbox build",
            &dir.path().display().to_string(),
        ] {
            assert!(e.contains(needed), "{needed} missing in: {e}");
        }
    }

    #[test]
    fn the_sandbox_gets_the_origins_and_the_llm_but_no_provider_key() {
        let mut llm = LlmConfig::new("openai/gpt-5");
        llm.base_url = Some("http://proxy:4000/v1".into());
        llm.api_key = Some("sk-llm".into());
        let var = |n: &str| match n {
            "ANTHROPIC_API_KEY" => Some("sk-ant".to_owned()),
            "TANDEM_LOG" => Some("debug".to_owned()),
            "GROQ_API_KEY" => Some("  ".to_owned()),
            "HOME" => Some("/root".to_owned()),
            _ => None,
        };
        let env = sandbox_env(
            Some(&llm),
            var,
            &["tauri://localhost", "http://tauri.localhost"],
        );
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                (
                    "TANDEM_ALLOWED_ORIGINS",
                    "tauri://localhost,http://tauri.localhost"
                ),
                // The LLM's key goes as LLM_API_KEY only; other provider keys stay here.
                ("TANDEM_LOG", "debug"),
                ("LLM_MODEL", "openai/gpt-5"),
                ("LLM_BASE_URL", "http://proxy:4000/v1"),
                ("LLM_API_KEY", "sk-llm"),
            ]
        );
        // An LLM without a key of its own takes its provider's variable, as its key.
        let env = sandbox_env(
            Some(&LlmConfig::new("anthropic/claude")),
            var,
            &["tauri://localhost"],
        );
        assert!(
            env.contains(&("LLM_API_KEY".to_owned(), "sk-ant".to_owned())),
            "{env:?}"
        );
        assert!(env.iter().all(|(k, _)| k != "ANTHROPIC_API_KEY"), "{env:?}");
        // Without an LLM (the desktop's demo mode) the server inside has no default model.
        let env = sandbox_env(None, |_| None, &["tauri://localhost"]);
        assert_eq!(
            env,
            [(
                "TANDEM_ALLOWED_ORIGINS".to_owned(),
                "tauri://localhost".to_owned()
            )]
        );
    }
}
