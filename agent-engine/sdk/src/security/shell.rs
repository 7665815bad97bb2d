//! A small bash reader for risk rules: splits a command line into the simple commands it runs.
//!
//! It understands what changes which commands run or what their words are: `;`, `&&`, `||`,
//! `&`, `|`, newlines, `( )` groups, single and double quotes, backslashes, `$( )`, backticks,
//! process substitution `<( )` / `>( )`, `${ }` and `$(( ))` (kept as literal text), comments,
//! redirections (with file-descriptor prefixes) and here-documents (whose bodies are data, not
//! commands). Command substitutions are read recursively and listed before the command that
//! contains them, as bash runs them first. It is not a full bash parser: control keywords
//! (`if`, `then`, `do`, ...) are skipped, and anything unbalanced marks the script incomplete.

/// How deep substitutions may nest before the reader gives up (and marks the script incomplete).
const MAX_DEPTH: usize = 8;

/// One word of a command, with quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text bash would pass, quotes removed, expansions left as written (`$HOME`, `$(pwd)`).
    pub text: String,
    /// Whether any part was quoted (a quoted word is never an operator or keyword).
    pub quoted: bool,
    /// Whether it holds an expansion (`$x`, `$(...)`, backticks) whose value is unknown.
    pub expands: bool,
}

/// A redirection: `>` (normalised, without the fd number) and its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`.
    pub op: String,
    /// The file (or fd, or here-document delimiter).
    pub target: Word,
}

impl Redirect {
    /// Whether it writes to its target.
    pub fn writes(&self) -> bool {
        matches!(
            self.op.as_str(),
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" | ">&"
        )
    }
}

/// A command with its arguments and redirections (leading `NAME=value` assignments dropped).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The command name and arguments.
    pub words: Vec<Word>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
}

/// Commands joined by `|`: each one's output feeds the next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pipeline {
    /// The commands, left to right.
    pub commands: Vec<SimpleCommand>,
}

/// Everything a command line runs, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// Pipelines in execution order (substitutions before the command holding them).
    pub pipelines: Vec<Pipeline>,
    /// Whether something was unbalanced or too deep, so the reading may be incomplete.
    pub incomplete: bool,
}

/// Reads `source` into the commands it runs.
pub fn parse(source: &str) -> Script {
    parse_at(source, 0)
}

fn parse_at(source: &str, depth: usize) -> Script {
    let mut script = Script::default();
    if depth > MAX_DEPTH {
        script.incomplete = true;
        return script;
    }
    let mut lexer = Lexer {
        chars: source.chars().collect(),
        pos: 0,
        depth,
        script: &mut script,
        heredocs: Vec::new(),
    };
    let tokens = lexer.tokens();
    build(tokens, &mut script);
    script
}

#[derive(Debug)]
enum Token {
    Word(Word),
    Op(String),
}

struct Lexer<'s> {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Receives substitutions as they are found, and the incomplete flag.
    script: &'s mut Script,
    /// Here-document delimiters waiting for the next newline: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
}

const OPERATORS: [&str; 22] = [
    "&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<&", "<>", "<<", ";",
    "&", "|", "(", ")", "<", ">", "\n",
];

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(i, c)| self.peek(i) == Some(c))
    }

    fn tokens(&mut self) -> Vec<Token> {
        let mut tokens = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    let word = self.process_substitution();
                    tokens.push(Token::Word(word));
                }
                _ => {
                    if let Some(op) = OPERATORS.iter().find(|op| self.starts_with(op)) {
                        self.pos += op.chars().count();
                        if *op == "\n" {
                            tokens.push(Token::Op(";".to_owned()));
                            self.skip_heredoc_bodies();
                        } else {
                            tokens.push(Token::Op((*op).to_owned()));
                            if *op == "<<" || *op == "<<-" {
                                self.expect_heredoc(*op == "<<-");
                                if let Some(Token::Word(w)) = self.next_word_token() {
                                    tokens.push(Token::Word(w));
                                }
                            }
                        }
                    } else {
                        let word = self.word();
                        // `2>file`: an all-digit word right before a redirection is its fd.
                        let is_fd = !word.quoted
                            && !word.text.is_empty()
                            && word.text.chars().all(|c| c.is_ascii_digit())
                            && matches!(self.peek(0), Some('<' | '>'));
                        if !is_fd {
                            tokens.push(Token::Word(word));
                        }
                    }
                }
            }
        }
        tokens
    }

    /// Records the delimiter of a here-document (read as the next word).
    fn expect_heredoc(&mut self, strip_tabs: bool) {
        let save = self.pos;
        if let Some(Token::Word(w)) = self.next_word_token() {
            self.heredocs.push((w.text, strip_tabs));
        }
        self.pos = save;
    }

    fn next_word_token(&mut self) -> Option<Token> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        match self.peek(0) {
            Some(c) if !matches!(c, '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>') => {
                Some(Token::Word(self.word()))
            }
            _ => None,
        }
    }

    /// Skips the bodies of pending here-documents (they start after the newline just read).
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    self.script.incomplete = true;
                    return;
                }
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0) == Some('\n') {
                    self.pos += 1;
                }
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }

    /// Reads one word up to unquoted whitespace or an operator character.
    fn word(&mut self) -> Word {
        let mut word = Word {
            text: String::new(),
            quoted: false,
            expands: false,
        };
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            word.text.push(next);
                            word.quoted = true;
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    word.quoted = true;
                    self.pos += 1;
                    self.until_quote('\'', &mut word.text);
                }
                '"' => {
                    word.quoted = true;
                    self.pos += 1;
                    self.double_quoted(&mut word);
                }
                '$' => self.dollar(&mut word),
                '`' => self.backtick(&mut word),
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    /// Copies characters up to the closing `quote` (consumed) into `out`.
    fn until_quote(&mut self, quote: char, out: &mut String) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == quote {
                return;
            }
            out.push(c);
        }
        self.script.incomplete = true;
    }

    fn double_quoted(&mut self, word: &mut Word) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some(next @ ('$' | '`' | '"' | '\\')) => {
                            word.text.push(next);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => word.text.push('\\'),
                    }
                }
                '$' => self.dollar(word),
                '`' => self.backtick(word),
                _ => {
                    word.text.push(c);
                    self.pos += 1;
                }
            }
        }
        self.script.incomplete = true;
    }

    /// `$(...)`, `$((...))`, `${...}`, `$'...'` or a plain `$name`.
    fn dollar(&mut self, word: &mut Word) {
        match (self.peek(1), self.peek(2)) {
            (Some('('), Some('(')) => {
                word.expands = true;
                let raw = self.balanced(1, '(', ')');
                word.text.push_str(&raw);
            }
            (Some('('), _) => {
                word.expands = true;
                let raw = self.balanced(1, '(', ')');
                self.nested(inner_of(&raw));
                word.text.push_str(&raw);
            }
            (Some('{'), _) => {
                word.expands = true;
                let raw = self.balanced(1, '{', '}');
                word.text.push_str(&raw);
            }
            (Some('\''), _) => {
                word.quoted = true;
                self.pos += 2;
                self.until_quote('\'', &mut word.text);
            }
            (Some(next), _) if next.is_ascii_alphanumeric() || "_@*#?$!-".contains(next) => {
                word.expands = true;
                word.text.push('$');
                self.pos += 1;
            }
            _ => {
                word.text.push('$');
                self.pos += 1;
            }
        }
    }

    fn backtick(&mut self, word: &mut Word) {
        word.expands = true;
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => {
                    self.script.incomplete = true;
                    break;
                }
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if self.peek(1).is_some() => {
                    inner.extend(self.peek(1));
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.nested(&inner);
        word.text.push('`');
        word.text.push_str(&inner);
        word.text.push('`');
    }

    /// `<(...)` or `>(...)`: a word whose commands run alongside.
    fn process_substitution(&mut self) -> Word {
        let raw = self.balanced(1, '(', ')');
        self.nested(inner_of(&raw));
        Word {
            text: raw,
            quoted: false,
            expands: true,
        }
    }

    /// The raw text from the current position through the bracket matching the `open` found
    /// `offset` characters ahead, skipping quoted text; consumes it.
    fn balanced(&mut self, offset: usize, open: char, close: char) -> String {
        let start = self.pos;
        self.pos += offset;
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\\' => self.pos += 1,
                '\'' if open == '(' => {
                    while self.peek(0).is_some_and(|q| q != '\'') {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                '"' => {
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        if q == '\\' {
                            self.pos += 1;
                        } else if q == '"' {
                            break;
                        }
                    }
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth > 0 || self.pos > self.chars.len() {
            self.script.incomplete = true;
        }
        self.pos = self.pos.min(self.chars.len());
        self.chars[start..self.pos].iter().collect()
    }

    /// Reads the commands of a substitution into the script.
    fn nested(&mut self, source: &str) {
        let inner = parse_at(source, self.depth + 1);
        self.script.incomplete |= inner.incomplete;
        self.script.pipelines.extend(inner.pipelines);
    }
}

/// Words that are syntax, not commands, when they start a command.
const KEYWORDS: [&str; 16] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "{", "}",
    "!", "function", "in",
];

/// Groups tokens into pipelines of simple commands.
fn build(tokens: Vec<Token>, script: &mut Script) {
    let mut pipeline = Pipeline::default();
    let mut command = SimpleCommand::default();
    let mut pending_redirect: Option<String> = None;
    let mut skip_until_separator = false;
    let mut tokens = tokens.into_iter().peekable();

    fn finish_command(command: &mut SimpleCommand, pipeline: &mut Pipeline) {
        let done = std::mem::take(command);
        if !done.words.is_empty() || !done.redirects.is_empty() {
            pipeline.commands.push(done);
        }
    }
    fn finish_pipeline(pipeline: &mut Pipeline, script: &mut Script) {
        let done = std::mem::take(pipeline);
        if !done.commands.is_empty() {
            script.pipelines.push(done);
        }
    }

    while let Some(token) = tokens.next() {
        match token {
            Token::Word(word) => {
                if let Some(op) = pending_redirect.take() {
                    command.redirects.push(Redirect { op, target: word });
                    continue;
                }
                if skip_until_separator {
                    continue;
                }
                if command.words.is_empty() && !word.quoted {
                    if KEYWORDS.contains(&word.text.as_str()) {
                        continue;
                    }
                    // `for x in ...` / `select x in ...`: the words are data.
                    if word.text == "for" || word.text == "select" {
                        skip_until_separator = true;
                        continue;
                    }
                    if is_assignment(&word.text) {
                        continue;
                    }
                }
                command.words.push(word);
            }
            Token::Op(op) => match op.as_str() {
                "|" | "|&" => {
                    finish_command(&mut command, &mut pipeline);
                    skip_until_separator = false;
                }
                "(" => {
                    // `name() { ...; }` defines a function; the name does not run.
                    if command.words.len() == 1
                        && matches!(tokens.peek(), Some(Token::Op(o)) if o == ")")
                    {
                        tokens.next();
                        command.words.clear();
                    }
                    finish_command(&mut command, &mut pipeline);
                    finish_pipeline(&mut pipeline, script);
                    skip_until_separator = false;
                }
                ";" | "&" | "&&" | "||" | ";;" | ")" => {
                    finish_command(&mut command, &mut pipeline);
                    finish_pipeline(&mut pipeline, script);
                    skip_until_separator = false;
                }
                _ => pending_redirect = Some(op),
            },
        }
    }
    if pending_redirect.is_some() {
        script.incomplete = true;
    }
    finish_command(&mut command, &mut pipeline);
    finish_pipeline(&mut pipeline, script);
}

/// The commands inside `$(...)` / `<(...)`: without the two-character opener and the `)`.
fn inner_of(raw: &str) -> &str {
    let inner = raw.get(2..).unwrap_or_default();
    inner.strip_suffix(')').unwrap_or(inner)
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value`.
fn is_assignment(text: &str) -> bool {
    let Some(eq) = text.find('=') else {
        return false;
    };
    let name = text[..eq].trim_end_matches('+');
    let name = name.split('[').next().unwrap_or_default();
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(script: &Script) -> Vec<Vec<String>> {
        script
            .pipelines
            .iter()
            .flat_map(|p| p.commands.iter())
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn splits_lists_pipes_and_groups() {
        let s = parse("a 1 && b 2 || c; d | e & (f; g)\nh");
        assert_eq!(
            names(&s),
            [
                vec!["a", "1"],
                vec!["b", "2"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"],
                vec!["g"],
                vec!["h"]
            ]
        );
        assert_eq!(s.pipelines[3].commands.len(), 2);
        assert!(!s.incomplete);
    }

    #[test]
    fn quotes_make_one_word() {
        let s = parse(r#"echo "rm -rf /" 'a b' c\ d"#);
        assert_eq!(names(&s), [vec!["echo", "rm -rf /", "a b", "c d"]]);
    }

    #[test]
    fn substitutions_run_first() {
        let s = parse(r#"echo "$(rm -rf /tmp/x)" `id` <(ls)"#);
        assert_eq!(names(&s)[0], ["rm", "-rf", "/tmp/x"]);
        assert_eq!(names(&s)[1], ["id"]);
        assert_eq!(names(&s)[2], ["ls"]);
        assert_eq!(names(&s)[3][0], "echo");
        let s = parse("echo $((1 + 2)) ${HOME}");
        assert_eq!(names(&s), [vec!["echo", "$((1 + 2))", "${HOME}"]]);
    }

    #[test]
    fn redirections_and_fds() {
        let s = parse("cmd arg 2>&1 >out.txt 2>> err.log < in");
        let c = &s.pipelines[0].commands[0];
        assert_eq!(c.words.len(), 2);
        let r: Vec<(&str, &str)> = c
            .redirects
            .iter()
            .map(|r| (r.op.as_str(), r.target.text.as_str()))
            .collect();
        assert_eq!(
            r,
            [
                (">&", "1"),
                (">", "out.txt"),
                (">>", "err.log"),
                ("<", "in")
            ]
        );
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        let s = parse("cat <<'EOF' > notes.txt\nrm -rf /\nEOF\nls");
        assert_eq!(names(&s), [vec!["cat"], vec!["ls"]]);
        assert!(!s.incomplete);
    }

    #[test]
    fn assignments_keywords_and_functions_are_skipped() {
        let s = parse(
            "FOO=1 BAR=x cmd; if true; then go; fi; for f in a b; do rm $f; done; f() { x; }",
        );
        assert_eq!(
            names(&s),
            [
                vec!["cmd"],
                vec!["true"],
                vec!["go"],
                vec!["rm", "$f"],
                vec!["x"]
            ]
        );
    }

    #[test]
    fn unbalanced_input_is_incomplete() {
        assert!(parse("echo 'oops").incomplete);
        assert!(parse("echo $(ls").incomplete);
        assert!(parse("cat <<EOF\nno end").incomplete);
    }
}
