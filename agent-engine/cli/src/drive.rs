//! Driving a conversation from the terminal, local or on an agent server alike: print its
//! events as they come, ask for approval when it waits (only on a terminal), and map how it
//! ended to an exit code.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde_json::Value;
use tandem_protocol::{ActionEvent, ConfirmationPolicy, Event, ExecutionStatus, Message};
use tandem_sdk::{
    ConversationClient, ConversationHandle, RemoteConversation, SdkError, unmatched_actions,
};
use tokio::sync::broadcast::{self, error::RecvError};

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

/// A conversation `tandem run` and `tandem resume` follow: on this machine or on an agent
/// server. The loop is the same; only the command that continues it differs.
pub trait Followed: ConversationClient {
    /// The agent server's URL; `None` for a conversation on this machine.
    fn server(&self) -> Option<&str>;
}

impl Followed for ConversationHandle {
    fn server(&self) -> Option<&str> {
        None
    }
}

impl Followed for RemoteConversation {
    fn server(&self) -> Option<&str> {
        Some(self.client().base_url())
    }
}

/// The command that continues `conv`.
fn resume_command(conv: &impl Followed) -> String {
    match conv.server() {
        None => format!("tandem resume {}", conv.id()),
        Some(url) => format!("tandem resume --server {url} {}", conv.id()),
    }
}

/// How the next run starts.
enum Start<M> {
    /// Send the message, if any, then run (approving what waits).
    Run(Option<String>),
    /// The person's edited action started a run after this mark: follow it.
    Edited(M),
}

/// Sends `message` (or just runs when `None`) and follows the conversation until it stops.
pub async fn follow<C: Followed>(conv: &C, message: Option<String>) -> Result<Outcome> {
    let interactive = std::io::stdin().is_terminal();
    let (_, mut events) = conv.subscribe();
    let mut start = Some(Start::Run(message));
    let mut interrupted = false;
    loop {
        let status = match start.take() {
            Some(s) => match run_once(conv, s, &mut events, &mut interrupted).await {
                Ok(status) => status,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(Outcome::Failed);
                }
            },
            None => conv.status(),
        };
        match status {
            ExecutionStatus::Finished | ExecutionStatus::Idle => return Ok(Outcome::Finished),
            ExecutionStatus::Error | ExecutionStatus::Stuck => return Ok(Outcome::Failed),
            ExecutionStatus::WaitingForConfirmation if interactive && !interrupted => {
                let pending = unmatched_actions(&conv.events())
                    .first()
                    .map(|a| (*a).clone());
                match ask_approval(pending.as_ref()).await? {
                    Decision::Approve => start = Some(Start::Run(None)),
                    Decision::Edit(id, arguments) => {
                        let mark = conv.run_mark();
                        match conv.approve_edited(&id, arguments).await {
                            Ok(risk) => {
                                eprintln!(
                                    "· running your edited action ({} risk)",
                                    risk.as_str().to_ascii_lowercase()
                                );
                                start = Some(Start::Edited(mark));
                            }
                            // Arguments the tool refuses, or a server that refuses the edit
                            // (the same, or an upstream server without the route): say why
                            // and ask again; nothing ran.
                            Err(e @ (SdkError::InvalidArguments(_) | SdkError::Remote(_))) => {
                                eprintln!("✗ the edited action was refused, nothing ran: {e}");
                            }
                            Err(e) => {
                                eprintln!("error: {e}");
                                return Ok(Outcome::Failed);
                            }
                        }
                    }
                    Decision::ApproveAll => {
                        conv.set_confirmation_policy(ConfirmationPolicy::NeverConfirm)
                            .await?;
                        start = Some(Start::Run(None));
                    }
                    Decision::Reject(reason) => {
                        conv.respond_to_confirmation(false, Some(reason)).await?;
                        // Let the model see the rejection and choose another way.
                        start = Some(Start::Run(None));
                    }
                    Decision::Quit => {
                        hint_resume(conv);
                        return Ok(Outcome::Stopped);
                    }
                }
            }
            ExecutionStatus::WaitingForConfirmation => {
                eprintln!(
                    "· waiting for approval of the action above (approve with: {})",
                    resume_command(conv)
                );
                return Ok(Outcome::Stopped);
            }
            _ => {
                hint_resume(conv);
                return Ok(Outcome::Stopped);
            }
        }
    }
}

/// Starts one run as `start` says and waits for it to end, printing events as they come;
/// the first Ctrl-C interrupts the run, the second quits. Returns the status it stopped in.
async fn run_once<C: Followed>(
    conv: &C,
    start: Start<C::RunMark>,
    events: &mut broadcast::Receiver<Event>,
    interrupted: &mut bool,
) -> tandem_sdk::Result<ExecutionStatus> {
    let mark = match start {
        Start::Edited(mark) => mark,
        Start::Run(message) => {
            if let Some(m) = message {
                conv.send_message(Message::user(m), false).await?;
            }
            let mark = conv.run_mark();
            match conv.run().await {
                // A run already in progress (a server's): follow it.
                Ok(()) | Err(SdkError::AlreadyRunning) => {}
                Err(e) => return Err(e),
            }
            mark
        }
    };
    let ended = conv.wait_for_run_end(&mark);
    tokio::pin!(ended);
    let mut open = true;
    let status = loop {
        tokio::select! {
            r = &mut ended => break r,
            ev = events.recv(), if open => match ev {
                Ok(ev) => print_event(&ev),
                Err(RecvError::Lagged(n)) => match conv.server() {
                    None => eprintln!("· ({n} events not shown; see `tandem conversations`)"),
                    // `tandem conversations` lists this machine's conversations only.
                    Some(_) => eprintln!("· ({n} events not shown)"),
                },
                Err(RecvError::Closed) => open = false,
            },
            _ = tokio::signal::ctrl_c(), if !*interrupted => {
                *interrupted = true;
                eprintln!("\n‖ interrupting… (press Ctrl-C again to quit at once)");
                let _ = conv.interrupt().await;
                tokio::spawn(async {
                    let _ = tokio::signal::ctrl_c().await;
                    crate::exit::quit(130).await;
                });
            },
        }
    };
    while let Ok(ev) = events.try_recv() {
        print_event(&ev);
    }
    status
}

fn hint_resume(conv: &impl Followed) {
    eprintln!("· stopped; continue with: {}", resume_command(conv));
}

pub(crate) fn print_event(event: &Event) {
    if let Some(line) = render::line(event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// The person's answer to an approval prompt.
enum Decision {
    Approve,
    ApproveAll,
    Reject(String),
    /// Run the pending action with these arguments instead (action id, arguments).
    Edit(String, Value),
    Quit,
}

/// Asks on the terminal whether the held action (`pending`, the first one waiting) may run.
async fn ask_approval(pending: Option<&ActionEvent>) -> Result<Decision> {
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
