//! Reading text files safely and showing them the way the model expects (`cat -n` numbering,
//! clipped when too long).

use std::path::Path;

use super::error::EditorError;

/// Files larger than this are refused (the same limit as upstream's).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

/// Output longer than this many characters is clipped.
pub const MAX_OUTPUT_CHARS: usize = 16_000;

/// Lines of context shown around an edit.
pub const SNIPPET_CONTEXT_LINES: usize = 4;

const FILE_CLIPPED_NOTICE: &str = "<response clipped><NOTE>The output was cut to fit the limit. \
To see the rest, view a smaller part of the file with `view_range`, or search it with \
`grep -n` in the terminal first.</NOTE>";

/// Appended when a directory listing was cut.
pub const DIRECTORY_CLIPPED_NOTICE: &str = "<response clipped><NOTE>The listing was cut to fit \
the limit. View a subdirectory, or use `ls` or `find` in the terminal.</NOTE>";

/// Reads `real` as UTF-8 text, refusing binary files and files over `max_size` bytes.
/// `shown` is the path as the model wrote it, for messages.
pub fn read_text(real: &Path, shown: &str, max_size: u64) -> Result<String, EditorError> {
    let meta = std::fs::metadata(real).map_err(|e| EditorError::io("read", real, &e))?;
    if meta.len() > max_size {
        return Err(EditorError::validation(
            shown,
            format!(
                "File is too large ({:.1}MB). Maximum allowed size is {}MB.",
                meta.len() as f64 / 1024.0 / 1024.0,
                max_size / 1024 / 1024
            ),
        ));
    }
    let bytes = std::fs::read(real).map_err(|e| EditorError::io("read", real, &e))?;
    let binary = || {
        EditorError::validation(
            shown,
            "File appears to be binary (or is not UTF-8 text) and this file type cannot be \
             read or edited by this tool.",
        )
    };
    if bytes.contains(&0) {
        return Err(binary());
    }
    String::from_utf8(bytes).map_err(|_| binary())
}

/// Writes `content` to `real`.
pub fn write_text(real: &Path, content: &str) -> Result<(), EditorError> {
    std::fs::write(real, content).map_err(|e| EditorError::io("write to", real, &e))
}

/// The number of lines, counting a last line without a newline (`wc -l` plus that one).
pub fn line_count(content: &str) -> usize {
    content.lines().count()
}

/// `content` cut to [`MAX_OUTPUT_CHARS`] characters, with `notice` appended when cut.
pub fn clip(content: &str, notice: &str) -> String {
    match content.char_indices().nth(MAX_OUTPUT_CHARS) {
        None => content.to_owned(),
        Some((cut, _)) => format!("{}{notice}", &content[..cut]),
    }
}

/// `lines` numbered from `first` like `cat -n`, under the header that names `description`.
pub fn cat_n<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    description: &str,
    first: usize,
) -> String {
    let numbered: Vec<String> = lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| format!("{:6}\t{line}", i + first))
        .collect();
    let body = clip(&numbered.join("\n"), FILE_CLIPPED_NOTICE);
    format!("Here's the result of running `cat -n` on {description}:\n{body}\n")
}

/// Lines `first..=last` (1-based, clamped to the file) of `content`, numbered.
pub fn snippet(content: &str, first: usize, last: usize, description: &str) -> String {
    let first = first.max(1);
    let lines = content
        .lines()
        .skip(first - 1)
        .take((last + 1).saturating_sub(first));
    cat_n(lines, description, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_cat_n() {
        assert_eq!(
            cat_n("hello\n".lines(), "/w/a", 1),
            "Here's the result of running `cat -n` on /w/a:\n     1\thello\n"
        );
        assert_eq!(
            snippet("a\nb\nc\nd\n", 2, 3, "x"),
            "Here's the result of running `cat -n` on x:\n     2\tb\n     3\tc\n"
        );
    }

    #[test]
    fn clips_on_a_char_boundary() {
        let long = "é".repeat(MAX_OUTPUT_CHARS + 5);
        let clipped = clip(&long, "<cut>");
        assert!(clipped.ends_with("<cut>"));
        assert_eq!(clipped.chars().count(), MAX_OUTPUT_CHARS + 5);
    }
}
