//! Writes the TypeScript of the desktop's Tauri commands to `ui/src/host/bindings.gen.ts`;
//! with `--check`, writes nothing and fails when the committed file differs from what the
//! commands generate now (scripts/test.sh runs that).

use std::process::ExitCode;

use tandem_desktop::bindings::{BINDINGS_FILE, export, repo_root};

fn main() -> ExitCode {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    let target = repo_root().join(BINDINGS_FILE);
    if !check {
        return match export(&target) {
            Ok(()) => {
                println!("wrote {}", target.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cannot make a temporary folder: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fresh = dir.path().join("bindings.gen.ts");
    if let Err(e) = export(&fresh) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    let now = std::fs::read_to_string(&fresh).unwrap_or_default();
    match std::fs::read_to_string(&target) {
        Ok(committed) if committed == now => {
            println!("{BINDINGS_FILE} is current");
            ExitCode::SUCCESS
        }
        Ok(_) => {
            eprintln!(
                "{BINDINGS_FILE} is stale: the Tauri commands changed. Run `cargo run -p tandem-desktop --example gen_bindings` and commit the result."
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("cannot read {}: {e}", target.display());
            ExitCode::FAILURE
        }
    }
}
