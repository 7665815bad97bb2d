//! Turning raw terminal bytes into the text the model reads: escape sequences removed, carriage
//! returns and backspaces applied as a terminal would (so progress bars show their last state),
//! long output cut to its head and tail with the whole saved to a file.

use std::path::{Path, PathBuf};

/// Upstream's limit on the output the model sees.
pub(crate) const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;

/// Plain text of terminal output: no escape sequences, `\r\n` as `\n`, `\r` and backspace
/// overwriting the current line, other control characters dropped.
pub(crate) fn clean(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\n' => {
                out.extend(line.drain(..));
                out.push('\n');
                col = 0;
            }
            '\r' => col = 0,
            '\x08' => col = col.saturating_sub(1),
            '\t' => put(&mut line, &mut col, c),
            c if c.is_control() => {}
            c => put(&mut line, &mut col, c),
        }
    }
    out.extend(line);
    out
}

fn put(line: &mut Vec<char>, col: &mut usize, c: char) {
    if *col < line.len() {
        line[*col] = c;
    } else {
        line.push(c);
    }
    *col += 1;
}

/// Skips the rest of an escape sequence whose `ESC` was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters and intermediates, then one final byte in @..~.
        Some('[') => {
            for c in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&c) {
                    break;
                }
            }
        }
        // OSC, DCS, SOS, PM, APC: until BEL or ST (`ESC \`).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\x07' {
                    break;
                }
                if c == '\x1b' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        // Character set selection takes one more character.
        Some('(' | ')' | '*' | '+' | '#' | '%') => {
            chars.next();
        }
        _ => {}
    }
}

/// `text` cut to about `max_chars`: its head and tail around a note saying how much is left
/// out, followed by `whereabouts` (where the whole is). `None` when it fits.
pub(crate) fn truncate(text: &str, max_chars: usize, whereabouts: &str) -> Option<String> {
    let total = text.chars().count();
    if total <= max_chars {
        return None;
    }
    let keep_head = max_chars / 2;
    let keep_tail = max_chars - keep_head;
    let head_end = text
        .char_indices()
        .nth(keep_head)
        .map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - keep_tail)
        .map_or(text.len(), |(i, _)| i);
    let omitted = total - keep_head - keep_tail;
    Some(format!(
        "{}\n[... {omitted} characters of output omitted here; {whereabouts} ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    ))
}

/// Writes `text` to a new private file in `dir` (created if needed); returns its path.
pub(crate) async fn save_full_output(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    use tokio::io::AsyncWriteExt;

    tokio::fs::create_dir_all(dir).await?;
    let path = dir.join(format!("terminal-{}.txt", uuid::Uuid::now_v7().simple()));
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .await?;
    file.write_all(text.as_bytes()).await?;
    file.flush().await?;
    Ok(path)
}

/// The `python` the shell would run, looked up on its `PATH` (relative entries against `cwd`).
pub(crate) fn python_on_path(path_var: &str, cwd: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;

    path_var.split(':').find_map(|dir| {
        let dir = if dir.is_empty() { "." } else { dir };
        let candidate = Path::new(cwd).join(dir).join("python");
        let meta = std::fs::metadata(&candidate).ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            .then(|| candidate.to_string_lossy().into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_escapes_and_carriage_returns() {
        let raw =
            b"\x1b[31mred\x1b[0m\r\n10%\r50%\r100%\r\nab\x08c\x1b]0;title\x07!\r\n\x1b[?2004h";
        assert_eq!(clean(raw), "red\n100%\nac!\n");
    }

    #[test]
    fn truncates_on_char_boundaries() {
        let text = "é".repeat(100);
        let cut = truncate(&text, 10, "see /x/y").expect("too long");
        assert!(cut.starts_with("ééééé\n[... 90 characters"));
        assert!(cut.contains("see /x/y ...]\nééééé"));
        assert_eq!(cut.chars().filter(|&c| c == 'é').count(), 10);
        assert!(truncate("short", 10, "").is_none());
    }
}
