//! Building the [`TerminalObservation`] the model reads from what a call produced: masked,
//! cleaned output, the notes around it, and the shell facts after it.

use std::path::Path;
use std::time::Duration;

use tandem_protocol::{CmdOutputMetadata, Content, TerminalObservation};
use tandem_sdk::Masker;

use super::markers::PromptInfo;
use super::output;
use super::runner::{Ending, Outcome};
use super::stream_mask::mask_bytes;

/// What the observation needs besides the outcome.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    /// The action's command.
    pub command: &'a str,
    /// Whether this call continued a running command (empty command or input).
    pub continued: bool,
    /// Notes shown before the output (a reset, a restarted shell).
    pub notes: Vec<String>,
    /// The soft timeout in effect.
    pub soft_timeout: Duration,
    /// The `timeout` argument.
    pub timeout: Option<Duration>,
    /// The shell's state before the command, for facts when it has not finished.
    pub last_prompt: Option<PromptInfo>,
    /// Replaces secret values.
    pub masker: &'a Masker,
    /// Longest output shown in full.
    pub max_output_chars: usize,
    /// Where the full output goes when it is cut.
    pub save_dir: &'a Path,
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

fn suffix(outcome: &Outcome, report: &Report<'_>, exit_code: i64) -> String {
    let limit = report.timeout.map(secs);
    match outcome.ending {
        Ending::Completed => format!("\n[The command completed with exit code {exit_code}.]"),
        Ending::SoftTimeout => {
            let waited = match (&limit, report.continued) {
                (Some(limit), true) => format!("did not finish within the {limit} seconds waited"),
                _ => format!(
                    "has printed nothing new for {} seconds",
                    secs(report.soft_timeout)
                ),
            };
            format!(
                "\n[The command {waited} and is still running (exit code -1). To see more of its \
output send an empty command; to type into it or press keys set is_input=true (`C-c` stops \
it); for commands known to take long, give a larger `timeout`.]"
            )
        }
        Ending::HardTimeout => format!(
            "\n[The command was still running after {} seconds, so it was stopped with C-c \
and its processes killed.]",
            limit.unwrap_or_default()
        ),
        Ending::Interrupted => "\n[The command was interrupted: it was sent C-c and it and the \
processes it started were killed.]"
            .to_owned(),
        Ending::ShellExited => {
            "\n[The shell exited. The next command will start a fresh shell.]".to_owned()
        }
    }
}

/// The observation for `outcome`.
pub(crate) async fn build(outcome: Outcome, report: Report<'_>) -> TerminalObservation {
    let masker = report.masker;
    let finished = outcome.prompt.is_some();
    let exit_code = outcome.prompt.as_ref().map_or(-1, |p| p.exit_code);
    let state = outcome.prompt.as_ref().or(report.last_prompt.as_ref());

    let text = output::clean(&mask_bytes(&outcome.raw, masker));
    let text = masker.mask(text.trim_end_matches('\n'));
    let mut full_output_save_dir = None;
    let shown = if text.chars().count() > report.max_output_chars {
        match output::save_full_output(report.save_dir, &text).await {
            Ok(path) => {
                full_output_save_dir = Some(report.save_dir.to_string_lossy().into_owned());
                let whereabouts = format!("the full output is in {}", path.display());
                output::truncate(&text, report.max_output_chars, &whereabouts).unwrap_or(text)
            }
            Err(e) => {
                let whereabouts = format!("the full output could not be saved ({e})");
                output::truncate(&text, report.max_output_chars, &whereabouts).unwrap_or(text)
            }
        }
    } else {
        text
    };

    let mut prefix: String = report.notes.iter().map(|n| format!("{n}\n")).collect();
    if report.continued {
        prefix.push_str("[Output of the command that was still running:]\n");
    }
    let suffix = suffix(&outcome, &report, exit_code);

    let mut body = format!("{prefix}{shown}");
    if shown.is_empty() {
        body.truncate(body.trim_end_matches('\n').len());
    }
    if body.is_empty() {
        body.push_str(suffix.trim_start_matches('\n'));
    } else {
        body.push_str(&suffix);
    }
    let working_dir = state.map(|p| p.working_dir.clone());
    let py_interpreter_path = state.and_then(|p| output::python_on_path(&p.path, &p.working_dir));
    if let Some(dir) = &working_dir {
        body.push_str(&format!("\n[Current working directory: {dir}]"));
    }
    if let Some(python) = &py_interpreter_path {
        body.push_str(&format!("\n[Python interpreter: {python}]"));
    }
    if finished {
        body.push_str(&format!("\n[Command finished with exit code {exit_code}]"));
    }

    let pid = outcome
        .running_pid
        .map(i64::from)
        .or_else(|| outcome.prompt.as_ref().and_then(|p| p.background_pid))
        .unwrap_or(-1);
    let metadata = CmdOutputMetadata {
        exit_code,
        pid,
        username: state.map(|p| p.username.clone()),
        hostname: state.map(|p| p.hostname.clone()),
        working_dir,
        py_interpreter_path,
        prefix: masker.mask(&prefix),
        suffix,
        ..CmdOutputMetadata::default()
    };
    TerminalObservation {
        content: vec![Content::text(masker.mask(&body))],
        is_error: false,
        command: Some(report.command.to_owned()),
        exit_code: Some(exit_code),
        timeout: matches!(outcome.ending, Ending::SoftTimeout | Ending::HardTimeout),
        metadata,
        full_output_save_dir,
        ..TerminalObservation::default()
    }
}

/// An observation reporting a failure of the tool itself.
pub(crate) fn error(command: &str, message: &str, masker: &Masker) -> TerminalObservation {
    TerminalObservation {
        content: vec![Content::text(masker.mask(message))],
        is_error: true,
        command: Some(command.to_owned()),
        exit_code: None,
        ..TerminalObservation::default()
    }
}
