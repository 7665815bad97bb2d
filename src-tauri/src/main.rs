//! The `tandem-desktop` binary: everything lives in the library ([`tandem_desktop::run`]).

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    tandem_desktop::prepare_environment();
    match tandem_desktop::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tandem-desktop: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
