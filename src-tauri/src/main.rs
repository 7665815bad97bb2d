//! The `tandem-desktop` binary: everything lives in the library ([`tandem_desktop::run`]).

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    // The session key and the keyring's secrets stay out of reach of the agent's commands,
    // which run as the same user.
    if let Err(e) = tandem_process::keep_memory_private() {
        eprintln!("tandem-desktop: could not make this process undumpable: {e}");
    }
    tandem_desktop::prepare_environment();
    match tandem_desktop::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tandem-desktop: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
