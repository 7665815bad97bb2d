//! Driving a conversation from the terminal: print its events as they come, ask for approval
//! when it waits (only on a terminal), and map how it ended to an exit code.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde_json::Value;
use tandem_protocol::{ActionEvent, ConfirmationPolicy, Event, ExecutionStatus};
use tandem_sdk::{ConversationHandle, unmatched_actions};
use tokio::sync::broadcast::error::RecvError;

use crate::render;

/// How a drive ended, as the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The agent finished (0).
    Finished,
    /// Stopped on an error, stuck, or out of iterations (1).
    Failed,
    /// Paused, interrupted, or waiting for approval with no terminal to ask on (3).
    Stopped,
}

impl Outcome {
    /// The exit code.
    pub fn code(self) -> u8 {
        match self {
            Self::Finished => 0,
            Self::Failed => 1,
            Self::Stopped => 3,
        }
    }
}

enum Start {
    Message(String),
    Run,
    /// Run the pending action `0` with the person's arguments `1` (this starts the run).
    Edited(String, Value),
}

/// Sends `message` (or just runs when `None`) and follows the conversation until it stops.
pub async fn follow(handle: &ConversationHandle, message: Option<String>) -> Result<Outcome> {
    let interactive = std::io::stdin().is_terminal();
    let (_, mut events) = handle.subscribe();
    let mut runs = handle.run_state();
    let mut start = Some(match message {
        Some(m) => Start::Message(m),
        None => Start::Run,
    });
    let mut interrupted = false;
    loop {
        if let Some(s) = start.take() {
            let ended_before = runs.borrow().runs_ended;
            let started = match s {
                Start::Message(m) => {
                    handle
                        .send_message(tandem_protocol::Message::user(m), true)
                        .await
                }
                Start::Run => handle.run().await,
                Start::Edited(id, arguments) => {
                    match handle.approve_edited(&id, arguments).await {
                        Ok(risk) => {
                            eprintln!(
                                "· running your edited action ({} risk)",
                                risk.as_str().to_ascii_lowercase()
                            );
                            Ok(())
                        }
                        // Arguments the tool refuses: say why and ask again; nothing ran.
                        Err(tandem_sdk::SdkError::InvalidArguments(why)) => {
                            eprintln!("✗ the edited action was refused, nothing ran: {why}");
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
            };
            if let Err(e) = started {
                eprintln!("error: {e}");
                return Ok(Outcome::Failed);
            }
            // Wait for this run to end, printing as we go.
            loop {
                tokio::select! {
                    ev = events.recv() => match ev {
                        Ok(ev) => print_event(&ev),
                        Err(RecvError::Lagged(n)) => eprintln!("· ({n} events not shown; see `tandem conversations`)"),
                        Err(RecvError::Closed) => break,
                    },
                    changed = runs.changed() => {
                        let r = *runs.borrow();
                        if changed.is_err() || (!r.active && r.runs_ended > ended_before) {
                            break;
                        }
                    },
                    _ = tokio::signal::ctrl_c(), if !interrupted => {
                        interrupted = true;
                        eprintln!("\n‖ interrupting… (press Ctrl-C again to quit at once)");
                        let _ = handle.interrupt().await;
                        tokio::spawn(async {
                            let _ = tokio::signal::ctrl_c().await;
                            std::process::exit(130);
                        });
                    },
                }
            }
            while let Ok(ev) = events.try_recv() {
                print_event(&ev);
            }
        }
        match handle.status() {
            ExecutionStatus::Finished | ExecutionStatus::Idle => return Ok(Outcome::Finished),
            ExecutionStatus::Error | ExecutionStatus::Stuck => return Ok(Outcome::Failed),
            ExecutionStatus::WaitingForConfirmation if interactive && !interrupted => {
                let pending = {
                    let view = handle.view();
                    unmatched_actions(&view.events)
                        .first()
                        .map(|a| (*a).clone())
                };
                match ask_approval(pending.as_ref()).await? {
                    Decision::Approve => start = Some(Start::Run),
                    Decision::Edit(id, arguments) => start = Some(Start::Edited(id, arguments)),
                    Decision::ApproveAll => {
                        handle
                            .set_confirmation_policy(ConfirmationPolicy::NeverConfirm)
                            .await?;
                        start = Some(Start::Run);
                    }
                    Decision::Reject(reason) => {
                        handle.respond_to_confirmation(false, Some(reason)).await?;
                        // Let the model see the rejection and choose another way.
                        start = Some(Start::Run);
                    }
                    Decision::Quit => {
                        hint_resume(handle);
                        return Ok(Outcome::Stopped);
                    }
                }
            }
            ExecutionStatus::WaitingForConfirmation => {
                eprintln!(
                    "· waiting for approval of the action above (approve with: tandem resume {})",
                    handle.id()
                );
                return Ok(Outcome::Stopped);
            }
            _ => {
                hint_resume(handle);
                return Ok(Outcome::Stopped);
            }
        }
    }
}

fn hint_resume(handle: &ConversationHandle) {
    eprintln!("· stopped; continue with: tandem resume {}", handle.id());
}

pub(crate) fn print_event(event: &Event) {
    if let Some(line) = render::line(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// The person's answer to an approval prompt.
pub(crate) enum Decision {
    Approve,
    ApproveAll,
    Reject(String),
    /// Run the pending action with these arguments instead (action id, arguments).
    Edit(String, Value),
    Quit,
}

/// Asks on the terminal whether the held action (`pending`, the first one waiting) may run.
pub(crate) async fn ask_approval(pending: Option<&ActionEvent>) -> Result<Decision> {
    let question = if pending.is_some() {
        "Approve? [y]es / [n]o / [e]dit / [a]lways (stop asking) / [q]uit: "
    } else {
        "Approve? [y]es / [n]o / [a]lways (stop asking) / [q]uit: "
    };
    loop {
        let answer = prompt(question).await?;
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Ok(Decision::Approve),
            "a" | "always" => return Ok(Decision::ApproveAll),
            "q" | "quit" => return Ok(Decision::Quit),
            "e" | "edit" if pending.is_some() => {
                if let Some(decision) = ask_edit(pending).await? {
                    return Ok(decision);
                }
            }
            "n" | "no" => {
                let reason = prompt("Reason (optional, the agent reads it): ").await?;
                let reason = reason.trim();
                let reason = if reason.is_empty() {
                    "User rejected the action."
                } else {
                    reason
                };
                return Ok(Decision::Reject(reason.to_owned()));
            }
            _ => eprintln!("please answer y, n, e, a or q"),
        }
    }
}

/// Asks for the edited action: a new command for the terminal, else the arguments as a JSON
/// object. `None` when the person gives nothing (back to the approval question).
async fn ask_edit(pending: Option<&ActionEvent>) -> Result<Option<Decision>> {
    let Some(action) = pending else {
        return Ok(None);
    };
    let original: Value = serde_json::from_str(&action.tool_call.arguments)
        .unwrap_or_else(|_| Value::Object(Default::default()));
    if action.tool_name == "terminal" {
        let command = prompt("Command to run instead (empty: back): ").await?;
        let command = command.trim();
        if command.is_empty() {
            return Ok(None);
        }
        let mut arguments = match original {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        arguments.insert("command".into(), Value::from(command));
        return Ok(Some(Decision::Edit(
            action.base.id.clone(),
            Value::Object(arguments),
        )));
    }
    eprintln!("· {} arguments now: {original}", action.tool_name);
    let line = prompt("Arguments to use instead, as one JSON object (empty: back): ").await?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(line.trim()) {
        Ok(v @ Value::Object(_)) => Ok(Some(Decision::Edit(action.base.id.clone(), v))),
        _ => {
            eprintln!("✗ not a JSON object; nothing changed");
            Ok(None)
        }
    }
}

async fn prompt(question: &str) -> Result<String> {
    let question = question.to_owned();
    let line = tokio::task::spawn_blocking(move || {
        eprint!("{question}");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map(|n| if n == 0 { "q".to_owned() } else { line })
    })
    .await??;
    Ok(line)
}
