//! Prompt markers: how the shell tells us a command started and finished.
//!
//! bash prints `PS0` after it has read a command line and before it runs it, and runs
//! `PROMPT_COMMAND` once before each prompt. Both print an invisible OSC escape sequence with a
//! per-shell nonce: `ESC ] 6973 ; <nonce> ; S BEL` (started) and
//! `ESC ] 6973 ; <nonce> ; E ; <exit> US <bg pid> US <user> US <host> US <PATH> US <PWD> BEL`
//! (finished, US = 0x1f). The finished marker is not part of `PS1` because readline reprints
//! the prompt while redrawing a long or multi-line command line; `PS1` ends with a third,
//! `ESC ] 6973 ; <nonce> ; R BEL` (reading), which readline prints once it has put the terminal
//! in raw mode and reads the next line (reprinting it is harmless). The nonce never appears
//! literally on the terminal (the variables come in through the environment, and their text
//! spells `\e`, not the escape byte), so command output cannot forge a marker; the variables are
//! un-exported at the first prompt so child processes do not inherit them. [`MarkerParser`]
//! splits the raw PTY stream into output bytes and these two events, across chunk boundaries.

use std::collections::VecDeque;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const FIELD_SEP: u8 = 0x1f;
/// OSC number of our markers (unassigned by terminals; viewers ignore it).
const OSC_ID: &str = "6973";
/// A marker whose terminator has not arrived after this many bytes is not a marker.
const MAX_MARKER_LEN: usize = 64 * 1024;

/// The shell state carried by a finished-command marker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PromptInfo {
    /// `$?` of the command that just finished.
    pub exit_code: i64,
    /// `$!`, the last background job, if any.
    pub background_pid: Option<i64>,
    /// `\u`.
    pub username: String,
    /// `\h`.
    pub hostname: String,
    /// `$PATH`, to find the `python` the shell would run.
    pub path: String,
    /// `$PWD`.
    pub working_dir: String,
}

/// One piece of the parsed PTY stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShellEvent {
    /// Bytes the terminal shows (command echo, output, the visible prompt).
    Output(Vec<u8>),
    /// The shell read a command and is about to run it (`PS0`).
    Started,
    /// The shell is waiting for a command (`PROMPT_COMMAND`, before the prompt shows).
    Prompt(PromptInfo),
    /// Readline shows the prompt and reads input (the end of `PS1`): from now on what is typed
    /// is echoed by readline only, not also by the terminal driver.
    Reading,
}

/// The prompt variables for a shell whose markers carry `nonce`.
#[derive(Debug, Clone)]
pub(crate) struct PromptVars {
    /// Value of `PS0`.
    pub ps0: String,
    /// Value of `PS1`: a readable `user@host:dir$ ` for viewers, then the reading marker.
    pub ps1: String,
    /// Value of `PROMPT_COMMAND`.
    pub prompt_command: String,
}

impl PromptVars {
    /// The variables for `nonce`.
    pub fn new(nonce: &str) -> Self {
        let ps0 = format!(r"\e]{OSC_ID};{nonce};S\a");
        let reading = format!(r"\[\e]{OSC_ID};{nonce};R\a\]");
        let ps1 = format!(r"\u@\h:\w\$ {reading}");
        // Only builtins, so no fork per prompt; bash restores `$?` after PROMPT_COMMAND. The
        // group's stderr goes to /dev/null so `set -x` does not trace it, and every expansion has
        // a default so `set -u` does not abort it (`$!` is unset until a job runs). Commands are typed as
        // bracketed pastes, and readline (bash 5.1+) shows a paste as the active region, in
        // reverse video, then redraws the line plainly when Enter accepts it: viewers then saw
        // each command twice, once in selection colours (and both copies where the viewer's
        // width differs from the shell's). `enable-active-region off` echoes the paste once, as
        // typed text; older bash has no such variable and no highlighting. A `PS1` set by hand
        // (`export PS1='$ '`) gets the reading marker back, invisible, so the tool does not wait
        // out its time limit before every command.
        let prompt_command = format!(
            r#"{{ __tandem_status=$?; __tandem_ids='\u\037\h'; export -n PS0 PS1 PROMPT_COMMAND; case ${{PS1-}} in *'{reading}'*) ;; *) PS1+='{reading}';; esac; bind 'set enable-active-region off'; printf '\e]{OSC_ID};{nonce};E;%s\037%s\037%s\037%s\037%s\a' "$__tandem_status" "${{!-}}" "${{__tandem_ids@P}}" "${{PATH-}}" "${{PWD-}}"; }} 2>/dev/null"#
        );
        Self {
            ps0,
            ps1,
            prompt_command,
        }
    }
}

/// Splits the raw PTY byte stream into [`ShellEvent`]s.
#[derive(Debug)]
pub(crate) struct MarkerParser {
    /// `ESC ] 6973 ; <nonce> ;`
    prefix: Vec<u8>,
    /// Bytes that may be the start of a marker, kept until the rest arrives.
    held: Vec<u8>,
}

impl MarkerParser {
    /// A parser for the markers of the shell started with `nonce`.
    pub fn new(nonce: &str) -> Self {
        let mut prefix = vec![ESC, b']'];
        prefix.extend_from_slice(OSC_ID.as_bytes());
        prefix.push(b';');
        prefix.extend_from_slice(nonce.as_bytes());
        prefix.push(b';');
        Self {
            prefix,
            held: Vec::new(),
        }
    }

    /// Parses `chunk` (continuing from earlier chunks), appending the events to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut VecDeque<ShellEvent>) {
        let owned;
        let buf: &[u8] = if self.held.is_empty() {
            chunk
        } else {
            self.held.extend_from_slice(chunk);
            owned = std::mem::take(&mut self.held);
            &owned
        };
        let mut data_start = 0;
        let mut i = 0;
        let mut keep_from = buf.len();
        while let Some(off) = buf[i..].iter().position(|&b| b == ESC) {
            let at = i + off;
            let rest = &buf[at..];
            if rest.len() < self.prefix.len() {
                if self.prefix.starts_with(rest) {
                    keep_from = at;
                    break;
                }
                i = at + 1;
                continue;
            }
            if !rest.starts_with(&self.prefix) {
                i = at + 1;
                continue;
            }
            let Some(len) = rest.iter().position(|&b| b == BEL) else {
                if rest.len() < MAX_MARKER_LEN {
                    keep_from = at;
                    break;
                }
                i = at + 1;
                continue;
            };
            let body = &rest[self.prefix.len()..len];
            let event = parse_body(body);
            if let Some(event) = event {
                if at > data_start {
                    out.push_back(ShellEvent::Output(buf[data_start..at].to_vec()));
                }
                out.push_back(event);
                data_start = at + len + 1;
            }
            i = at + len + 1;
        }
        if keep_from > data_start {
            out.push_back(ShellEvent::Output(buf[data_start..keep_from].to_vec()));
        }
        if keep_from < buf.len() {
            self.held = buf[keep_from..].to_vec();
        }
    }
}

fn parse_body(body: &[u8]) -> Option<ShellEvent> {
    if body == b"S" {
        return Some(ShellEvent::Started);
    }
    if body == b"R" {
        return Some(ShellEvent::Reading);
    }
    let fields = body.strip_prefix(b"E;")?;
    let mut parts = fields.splitn(6, |&b| b == FIELD_SEP);
    let mut next = || String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let exit_code = next().trim().parse().unwrap_or(-1);
    let background_pid = next().trim().parse().ok();
    Some(ShellEvent::Prompt(PromptInfo {
        exit_code,
        background_pid,
        username: next(),
        hostname: next(),
        path: next(),
        working_dir: next(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(nonce: &str, code: &str, pwd: &str) -> Vec<u8> {
        let mut v = format!("\x1b]6973;{nonce};E;{code}\x1f\x1fme\x1fbox\x1f/bin\x1f{pwd}\x07")
            .into_bytes();
        v.extend_from_slice(b"me@box:~$ ");
        v
    }

    fn parse_all(parser: &mut MarkerParser, chunks: &[&[u8]]) -> Vec<ShellEvent> {
        let mut out = VecDeque::new();
        for c in chunks {
            parser.push(c, &mut out);
        }
        // Merge adjacent output so the assertions do not depend on chunking.
        let mut merged: Vec<ShellEvent> = Vec::new();
        for e in out {
            match (merged.last_mut(), e) {
                (Some(ShellEvent::Output(a)), ShellEvent::Output(b)) => a.extend(b),
                (_, e) => merged.push(e),
            }
        }
        merged
    }

    #[test]
    fn splits_output_and_markers_across_any_chunking() {
        let mut stream = b"echo hi\r\n\x1b]6973;abc;S\x07hi\r\n".to_vec();
        stream.extend(end("abc", "0", "/tmp/a b"));
        stream.extend(b"\x1b]6973;abc;R\x07");
        let expected = vec![
            ShellEvent::Output(b"echo hi\r\n".to_vec()),
            ShellEvent::Started,
            ShellEvent::Output(b"hi\r\n".to_vec()),
            ShellEvent::Prompt(PromptInfo {
                exit_code: 0,
                background_pid: None,
                username: "me".into(),
                hostname: "box".into(),
                path: "/bin".into(),
                working_dir: "/tmp/a b".into(),
            }),
            ShellEvent::Output(b"me@box:~$ ".to_vec()),
            ShellEvent::Reading,
        ];
        for size in 1..stream.len() {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            let mut parser = MarkerParser::new("abc");
            assert_eq!(
                parse_all(&mut parser, &chunks),
                expected,
                "chunk size {size}"
            );
        }
    }

    #[test]
    fn foreign_escapes_and_other_nonces_are_output() {
        let mut parser = MarkerParser::new("abc");
        let stream = b"\x1b[31mred\x1b]6973;xyz;S\x07\x1b]0;title\x07";
        let events = parse_all(&mut parser, &[stream]);
        assert_eq!(events, vec![ShellEvent::Output(stream.to_vec())]);
    }

    #[test]
    fn prompt_vars_never_contain_the_escape_byte() {
        let vars = PromptVars::new("abc");
        assert!(!vars.ps0.as_bytes().contains(&ESC));
        assert!(!vars.ps1.as_bytes().contains(&ESC));
        assert!(!vars.prompt_command.as_bytes().contains(&ESC));
    }
}
