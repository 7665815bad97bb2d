//! The rules for shell commands: each simple command is judged on its own (wrappers such as
//! `env`, `nohup`, `timeout` or `xargs` peeled off first), pipelines are checked for downloads
//! fed to an interpreter, and the highest finding wins.
//!
//! Levels: HIGH for privilege escalation, destruction of system or home paths, disk and power
//! operations, writes outside the workspace, remote code piped into an interpreter, forced git
//! pushes; MEDIUM for changes inside the workspace, package installs, network access, `git
//! push`, `kill`, and any command the rules do not recognise (running it may change the
//! workspace, and we cannot tell how); LOW for read-only commands.

use tandem_protocol::SecurityRisk;

use super::paths::{Cwd, Location, Resolved, Workspace};
use super::shell::{self, SimpleCommand, Word};

mod programs;

use programs::{find, git, network, package_manager, sed, systemctl, tar};

/// What fired, how risky, and why (shown in the UI).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The level.
    pub risk: SecurityRisk,
    /// Stable id of the rule (`rm-root-or-home`).
    pub rule: &'static str,
    /// One sentence naming what was matched.
    pub reason: String,
}

impl Finding {
    /// A finding.
    pub fn new(risk: SecurityRisk, rule: &'static str, reason: impl Into<String>) -> Self {
        Self {
            risk,
            rule,
            reason: reason.into(),
        }
    }

    fn low(rule: &'static str, reason: impl Into<String>) -> Self {
        Self::new(SecurityRisk::Low, rule, reason)
    }

    fn medium(rule: &'static str, reason: impl Into<String>) -> Self {
        Self::new(SecurityRisk::Medium, rule, reason)
    }

    fn high(rule: &'static str, reason: impl Into<String>) -> Self {
        Self::new(SecurityRisk::High, rule, reason)
    }

    /// The riskier of the two (the first on a tie).
    pub fn max(self, other: Finding) -> Finding {
        if other.risk > self.risk { other } else { self }
    }
}

/// What the rules know while walking a command line.
#[derive(Debug, Clone)]
pub struct Context<'w> {
    /// The workspace.
    pub workspace: &'w Workspace,
    /// Where relative paths resolve (follows `cd`).
    pub cwd: Cwd,
    /// Nesting of `bash -c` / `eval` strings, to stop runaway recursion.
    pub depth: usize,
}

const MAX_DEPTH: usize = 6;

/// Judges a whole command line.
pub fn assess_script(source: &str, ctx: &mut Context<'_>) -> Finding {
    if let Some(finding) = fork_bomb(source) {
        return finding;
    }
    let script = shell::parse(source);
    let mut worst: Option<Finding> = None;
    for pipeline in &script.pipelines {
        let mut finding = download_to_interpreter(&pipeline.commands)
            .unwrap_or_else(|| Finding::low("read-only", "only reads"));
        for command in &pipeline.commands {
            finding = finding.max(assess_command(command, ctx));
        }
        worst = Some(match worst {
            None => finding,
            Some(w) => w.max(finding),
        });
    }
    let worst = worst.unwrap_or_else(|| Finding::low("empty", "runs no command"));
    if script.incomplete && worst.risk < SecurityRisk::High {
        return Finding::new(
            SecurityRisk::Unknown,
            "unparsed",
            "the command line could not be read completely (unbalanced quotes or brackets)",
        );
    }
    worst
}

/// `:(){ :|:& };:` and its renamed variants: a function that pipes itself into itself.
fn fork_bomb(source: &str) -> Option<Finding> {
    let compact: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    let mut rest = compact.as_str();
    while let Some(at) = rest.find("(){") {
        let name_start = rest[..at]
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_alphanumeric() || "_:.-".contains(c)))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let name = &rest[name_start..at];
        let body_start = at + 3;
        let body = rest[body_start..].split('}').next().unwrap_or_default();
        if !name.is_empty() && body.contains(&format!("{name}|{name}")) {
            return Some(Finding::high(
                "fork-bomb",
                format!("`{name}` is a fork bomb"),
            ));
        }
        rest = &rest[body_start..];
    }
    None
}

const FETCHERS: [&str; 3] = ["curl", "wget", "fetch"];
const INTERPRETERS: [&str; 14] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python2", "python3", "perl", "ruby",
    "node", "php", "source",
];
const SHELLS: [&str; 6] = ["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// `curl ... | sh`: something downloaded runs as code.
fn download_to_interpreter(commands: &[SimpleCommand]) -> Option<Finding> {
    let names: Vec<String> = commands.iter().map(|c| effective_name(&c.words)).collect();
    let fetch = names.iter().position(|n| FETCHERS.contains(&n.as_str()))?;
    let run = names[fetch + 1..]
        .iter()
        .find(|n| INTERPRETERS.contains(&n.as_str()))?;
    Some(Finding::high(
        "remote-script",
        format!("pipes a download from `{}` into `{run}`", names[fetch]),
    ))
}

/// The command a simple command really runs, after wrappers (`sudo`, `env`, `xargs`...).
fn effective_name(words: &[Word]) -> String {
    let (words, _) = unwrap(words);
    words
        .first()
        .map(|w| basename(&w.text).to_owned())
        .unwrap_or_default()
}

fn basename(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// Wrappers that run the rest of their arguments as a command, and the options of each that
/// take a value.
const WRAPPERS: [(&str, &[&str]); 13] = [
    ("env", &["-u", "-C", "-S", "--unset", "--chdir"]),
    ("nohup", &[]),
    ("time", &["-f", "-o"]),
    ("command", &[]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nice", &["-n"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    (
        "xargs",
        &[
            "-n",
            "-I",
            "-P",
            "-d",
            "-L",
            "-s",
            "-a",
            "-E",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
        ],
    ),
    ("watch", &["-n", "-d", "--interval"]),
    ("nocorrect", &[]),
];

const PRIVILEGE: [&str; 5] = ["sudo", "doas", "su", "pkexec", "runuser"];

/// Peels wrappers off; returns the wrapped command's words and the privilege tool, if any.
fn unwrap(words: &[Word]) -> (&[Word], Option<&str>) {
    let mut words = words;
    loop {
        let Some(first) = words.first() else {
            return (words, None);
        };
        let name = basename(&first.text);
        if PRIVILEGE.contains(&name) {
            return (words, Some(name));
        }
        let Some((wrapper, takes_value)) = WRAPPERS.iter().find(|(w, _)| *w == name) else {
            return (words, None);
        };
        let mut i = 1;
        while let Some(w) = words.get(i) {
            let t = w.text.as_str();
            if t == "--" {
                i += 1;
                break;
            }
            if t.starts_with('-') && t.len() > 1 {
                i += if takes_value.contains(&t) { 2 } else { 1 };
            } else if *wrapper == "env" && shell_assignment(t) {
                i += 1;
            } else {
                break;
            }
        }
        // `timeout 5 cmd` / `nice 10 cmd`: a leading number is the wrapper's own argument.
        if matches!(*wrapper, "timeout") && words.get(i).is_some() {
            i += 1;
        }
        if *wrapper == "command" && words[1..].iter().any(|w| w.text == "-v" || w.text == "-V") {
            return (&words[..0], None);
        }
        words = &words[i.min(words.len())..];
    }
}

fn shell_assignment(t: &str) -> bool {
    t.find('=').is_some_and(|eq| {
        eq > 0
            && t[..eq]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Judges one simple command (and updates the working directory on `cd`).
pub fn assess_command(command: &SimpleCommand, ctx: &mut Context<'_>) -> Finding {
    let mut finding = Finding::low("read-only", "only reads");
    for redirect in command.redirects.iter().filter(|r| r.writes()) {
        finding = finding.max(redirect_target(&redirect.op, &redirect.target.text, ctx));
    }
    let (words, privileged) = unwrap(&command.words);
    if let Some(tool) = privileged {
        return Finding::high(
            "privilege-escalation",
            format!("runs with `{tool}` (elevated privileges)"),
        );
    }
    let Some(first) = words.first() else {
        return finding;
    };
    let name = basename(&first.text).to_owned();
    let args = &words[1..];
    finding.max(assess_named(&name, args, ctx))
}

/// A redirection target: devices and sockets, then where the file lies.
fn redirect_target(op: &str, target: &str, ctx: &Context<'_>) -> Finding {
    if op == ">&" && (target.chars().all(|c| c.is_ascii_digit()) || target == "-") {
        return Finding::low("read-only", "duplicates a file descriptor");
    }
    if matches!(
        target,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || target.starts_with("/dev/fd/")
    {
        return Finding::low("read-only", "writes to a standard stream");
    }
    if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
        return Finding::high(
            "network-redirect",
            format!("redirects to the network socket {target}"),
        );
    }
    if target.starts_with("/dev/") {
        return Finding::high("device-write", format!("writes to the device {target}"));
    }
    write_to(target, "redirects output to", ctx)
}

/// A write to the path written as `target`.
fn write_to(target: &str, verb: &str, ctx: &Context<'_>) -> Finding {
    match ctx.workspace.locate(target, &ctx.cwd) {
        Location::Outside => Finding::high(
            "write-outside-workspace",
            format!("{verb} {target}, outside the workspace"),
        ),
        Location::Scratch => Finding::medium(
            "write-scratch",
            format!("{verb} {target} in a scratch directory"),
        ),
        Location::Inside => Finding::medium(
            "write-in-workspace",
            format!("{verb} {target} in the workspace"),
        ),
        Location::Unknown => Finding::medium(
            "write-in-workspace",
            format!("{verb} {target} (location unknown)"),
        ),
    }
}

/// Arguments that are not options (`--` ends options), skipping the value of any option in
/// `takes_value`.
fn operands<'a>(args: &'a [Word], takes_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        if options_done || !t.starts_with('-') || t == "-" {
            out.push(t);
        } else if t == "--" {
            options_done = true;
        } else if takes_value.contains(&t) {
            i += 1;
        }
    }
    out
}

fn has_flag(args: &[Word], short: char, long: &[&str]) -> bool {
    args.iter().any(|w| {
        let t = w.text.as_str();
        long.contains(&t) || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
    })
}

/// The value of `-o FILE`, `-oFILE`, `--output FILE` or `--output=FILE`.
fn option_value<'a>(args: &'a [Word], short: &str, long: &str) -> Option<&'a str> {
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if t == short || t == long {
            return args.get(i + 1).map(|w| w.text.as_str());
        }
        if let Some(v) = t.strip_prefix(&format!("{long}=")) {
            return Some(v);
        }
        if !short.is_empty()
            && t.len() > short.len()
            && t.starts_with(short)
            && !t.starts_with("--")
        {
            return Some(&t[short.len()..]);
        }
    }
    None
}

/// Paths whose removal (or recursive permission change) ruins the system or the home folder.
fn is_system_or_home(text: &str, ctx: &Context<'_>) -> bool {
    const SYSTEM: [&str; 16] = [
        "/", "/*", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc",
        "/root", "/sbin", "/sys", "/usr", "/var",
    ];
    const HOME: [&str; 9] = [
        "~",
        "~/",
        "~/*",
        "$HOME",
        "$HOME/",
        "$HOME/*",
        "${HOME}",
        "${HOME}/",
        "${HOME}/*",
    ];
    if HOME.contains(&text) {
        return true;
    }
    let trimmed = if text.len() > 1 {
        text.trim_end_matches('/')
    } else {
        text
    };
    match ctx.workspace.resolve(text, &ctx.cwd) {
        Resolved::Path(p) => {
            let p = p.to_string_lossy().into_owned();
            let p = p.strip_suffix("/*").unwrap_or(&p).to_owned();
            SYSTEM.contains(&p.as_str()) || SYSTEM.contains(&trimmed)
        }
        _ => SYSTEM.contains(&trimmed),
    }
}

const READ_ONLY: [&str; 78] = [
    "ls",
    "ll",
    "la",
    "dir",
    "cat",
    "tac",
    "nl",
    "echo",
    "printf",
    "pwd",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "head",
    "tail",
    "wc",
    "less",
    "more",
    "which",
    "whereis",
    "type",
    "whoami",
    "id",
    "groups",
    "date",
    "cal",
    "uname",
    "hostname",
    "uptime",
    "df",
    "du",
    "free",
    "ps",
    "pgrep",
    "top",
    "file",
    "stat",
    "tree",
    "uniq",
    "cut",
    "tr",
    "paste",
    "join",
    "column",
    "fmt",
    "fold",
    "diff",
    "cmp",
    "comm",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "true",
    "false",
    "test",
    "[",
    "[[",
    "sleep",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "export",
    "history",
    "jq",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "seq",
    "printenv",
    "lsblk",
];

const PACKAGE_MANAGERS: [&str; 22] = [
    "pip", "pip3", "pipx", "uv", "poetry", "conda", "mamba", "gem", "cargo", "npm", "yarn", "pnpm",
    "bun", "go", "apt", "apt-get", "dnf", "yum", "apk", "brew", "composer", "snap",
];
const INSTALL_VERBS: [&str; 7] = ["install", "i", "add", "ci", "get", "upgrade", "sync"];

const NETWORK: [&str; 14] = [
    "curl", "wget", "fetch", "http", "https", "aria2c", "ftp", "sftp", "ssh", "scp", "rsync",
    "telnet", "nc", "ncat",
];

const SYSTEM_ADMIN: [&str; 17] = [
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "useradd",
    "userdel",
    "usermod",
    "passwd",
    "chpasswd",
    "groupadd",
    "visudo",
    "modprobe",
    "insmod",
    "rmmod",
    "mount",
    "umount",
    "chattr",
];

fn assess_named(name: &str, args: &[Word], ctx: &mut Context<'_>) -> Finding {
    match name {
        "rm" | "rmdir" | "unlink" | "shred" => remove(name, args, ctx),
        "mv" => {
            let mut f = Finding::medium("write-in-workspace", "moves files in the workspace");
            for target in operands(args, &["-t", "-S", "--target-directory", "--suffix"]) {
                f = f.max(write_to(target, "moves", ctx));
            }
            f
        }
        "cp" | "ln" | "install" | "rsync" | "scp" => copy(name, args, ctx),
        "touch" | "mkdir" | "truncate" | "tee" => {
            let mut f = Finding::medium("write-in-workspace", format!("`{name}` writes files"));
            for target in operands(
                args,
                &[
                    "-m",
                    "-d",
                    "-t",
                    "-r",
                    "-s",
                    "--mode",
                    "--size",
                    "--reference",
                ],
            ) {
                f = f.max(write_to(target, "writes", ctx));
            }
            f
        }
        "chmod" | "chown" | "chgrp" => permissions(name, args, ctx),
        "dd" => {
            let Some(out) = args.iter().find_map(|w| w.text.strip_prefix("of=")) else {
                return Finding::medium("unrecognized", "`dd` copies raw data");
            };
            if out.starts_with("/dev/")
                && !matches!(out, "/dev/null" | "/dev/stdout" | "/dev/stderr")
            {
                return Finding::high("device-write", format!("`dd` writes to the device {out}"));
            }
            write_to(out, "`dd` writes", ctx)
        }
        n if n.starts_with("mkfs")
            || matches!(
                n,
                "mke2fs" | "mkswap" | "fdisk" | "sfdisk" | "parted" | "wipefs"
            ) =>
        {
            Finding::high(
                "disk-format",
                format!("`{n}` formats or repartitions a disk"),
            )
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            Finding::high("power", format!("`{name}` stops or restarts the machine"))
        }
        "init" | "telinit" if args.first().is_some_and(|a| a.text == "0" || a.text == "6") => {
            Finding::high("power", "`init` changes the runlevel to halt or reboot")
        }
        "systemctl" => systemctl(args),
        "kill" | "pkill" | "killall" | "killall5" => {
            let every = name == "killall5"
                || (name == "kill"
                    && args.len() >= 2
                    && args.last().is_some_and(|a| a.text == "-1"));
            if every {
                Finding::high("kill", "kills every process")
            } else if name == "kill" && operands(args, &["-s", "-n"]).contains(&"1") {
                Finding::high("kill", "kills the init process")
            } else {
                Finding::medium("kill", format!("`{name}` stops processes"))
            }
        }
        "git" => git(args),
        "find" => find(args, ctx),
        "sed" => sed(args, ctx),
        "awk" | "gawk" | "mawk" | "nawk" => {
            let program = args
                .iter()
                .map(|a| a.text.as_str())
                .find(|t| !t.starts_with('-'))
                .unwrap_or("");
            if program.contains("system(")
                || program.contains("getline")
                || has_flag(args, 'i', &["--in-place"])
                || program.contains("print >")
                || program.contains("printf >")
            {
                Finding::medium(
                    "unrecognized",
                    "the awk program runs commands or writes files",
                )
            } else {
                Finding::low("read-only", "`awk` only reads")
            }
        }
        "sort" => match option_value(args, "-o", "--output") {
            Some(out) => write_to(out, "`sort` writes", ctx),
            None => Finding::low("read-only", "`sort` only reads"),
        },
        "tar" => tar(args, ctx),
        "crontab" => Finding::high("system-admin", "`crontab` changes scheduled jobs"),
        n if SYSTEM_ADMIN.contains(&n) => Finding::high(
            "system-admin",
            format!("`{n}` changes system configuration"),
        ),
        n if SHELLS.contains(&n) => shell_command(n, args, ctx),
        "eval" => {
            let source: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
            nested(&source.join(" "), ctx, "eval")
        }
        "source" | "." => Finding::medium("run-code", "runs a shell script in the current shell"),
        "python" | "python2" | "python3"
            if args.first().is_some_and(|a| a.text == "-m")
                && args.get(1).is_some_and(|a| a.text == "pip") =>
        {
            package_manager("pip", &args[2..])
        }
        n if PACKAGE_MANAGERS.contains(&n) => package_manager(n, args),
        n if NETWORK.contains(&n) => network(n, args, ctx),
        n if READ_ONLY.contains(&n) => {
            if n == "cd" || n == "pushd" {
                change_directory(args, ctx);
            }
            Finding::low("read-only", format!("`{n}` only reads"))
        }
        "python" | "python2" | "python3" | "node" | "ruby" | "perl" | "php" | "deno" => {
            Finding::medium("run-code", format!("`{name}` runs a program"))
        }
        _ => Finding::medium(
            "unrecognized",
            format!("`{name}` is not a command the rules know; it may change files"),
        ),
    }
}

fn remove(name: &str, args: &[Word], ctx: &Context<'_>) -> Finding {
    if args.iter().any(|a| a.text == "--no-preserve-root") {
        return Finding::high(
            "rm-root-or-home",
            "`rm --no-preserve-root` can delete the whole system",
        );
    }
    let recursive =
        name == "rm" && has_flag(args, 'r', &["--recursive"]) || has_flag(args, 'R', &[]);
    let targets = operands(args, &["-n", "-s"]);
    let mut f = Finding::medium(
        "delete-in-workspace",
        format!("`{name}` deletes files in the workspace"),
    );
    for target in targets {
        if is_system_or_home(target, ctx) {
            return Finding::high("rm-root-or-home", format!("`{name}` deletes {target}"));
        }
        if let Resolved::Path(p) = ctx.workspace.resolve(target, &ctx.cwd)
            && recursive
            && ctx.workspace.is_root(&p)
        {
            return Finding::high(
                "rm-workspace-root",
                format!("`{name}` deletes the whole workspace ({target})"),
            );
        }
        f = f.max(match ctx.workspace.locate(target, &ctx.cwd) {
            Location::Outside => Finding::high(
                "delete-outside-workspace",
                format!("`{name}` deletes {target}, outside the workspace"),
            ),
            Location::Scratch => Finding::medium(
                "delete-in-workspace",
                format!("`{name}` deletes {target} in a scratch directory"),
            ),
            _ => Finding::medium("delete-in-workspace", format!("`{name}` deletes {target}")),
        });
    }
    f
}

fn copy(name: &str, args: &[Word], ctx: &Context<'_>) -> Finding {
    let values: &[&str] = &[
        "-t",
        "-S",
        "-m",
        "-o",
        "-g",
        "-e",
        "--target-directory",
        "--suffix",
        "--mode",
    ];
    let targets = operands(args, values);
    let remote = targets
        .iter()
        .any(|t| t.contains(':') && !t.starts_with('/'));
    let dest = option_value(args, "-t", "--target-directory")
        .or_else(|| targets.last().copied().filter(|_| targets.len() > 1));
    let mut f = if remote || name == "scp" {
        Finding::medium("network", format!("`{name}` copies over the network"))
    } else {
        Finding::medium("write-in-workspace", format!("`{name}` writes files"))
    };
    if let Some(dest) = dest.filter(|d| !d.contains(':') || d.starts_with('/')) {
        f = f.max(write_to(dest, &format!("`{name}` writes"), ctx));
    }
    f
}

fn permissions(name: &str, args: &[Word], ctx: &Context<'_>) -> Finding {
    let recursive = has_flag(args, 'R', &["--recursive"]);
    let ops = operands(args, &["--reference"]);
    let skip = usize::from(!args.iter().any(|a| a.text.starts_with("--reference")));
    let mut f = Finding::medium(
        "write-in-workspace",
        format!("`{name}` changes permissions in the workspace"),
    );
    for target in ops.iter().skip(skip) {
        if is_system_or_home(target, ctx) {
            let how = if recursive { "recursively " } else { "" };
            return Finding::high(
                "chmod-system",
                format!("`{name}` {how}changes permissions of {target}"),
            );
        }
        f = f.max(write_to(target, &format!("`{name}` changes"), ctx));
    }
    f
}

fn shell_command(name: &str, args: &[Word], ctx: &mut Context<'_>) -> Finding {
    if args.iter().any(|a| {
        (a.text.starts_with("<(") || a.text.contains("$(") || a.text.contains('`'))
            && FETCHERS.iter().any(|f| a.text.contains(f))
    }) {
        return Finding::high(
            "remote-script",
            format!("`{name}` runs a script it downloads"),
        );
    }
    let script_flag = args.iter().position(|a| {
        a.text == "-c"
            || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.ends_with('c'))
    });
    if let Some(script) = script_flag.and_then(|at| args.get(at + 1)) {
        return nested(&script.text, ctx, name);
    }
    Finding::medium(
        "run-code",
        format!("`{name}` runs a script or an interactive shell"),
    )
}

/// Judges a command string run by `bash -c` or `eval`.
fn nested(source: &str, ctx: &mut Context<'_>, runner: &str) -> Finding {
    if ctx.depth >= MAX_DEPTH {
        return Finding::new(
            SecurityRisk::Unknown,
            "unparsed",
            format!("`{runner}` nests too deeply to judge"),
        );
    }
    let mut inner = Context {
        workspace: ctx.workspace,
        cwd: ctx.cwd.clone(),
        depth: ctx.depth + 1,
    };
    assess_script(source, &mut inner)
}

/// Follows `cd DIR` so later relative paths resolve where the shell will be.
fn change_directory(args: &[Word], ctx: &mut Context<'_>) {
    let target = operands(args, &[]).first().copied();
    ctx.cwd = match target {
        None | Some("-") => None,
        Some(t) => match ctx.workspace.resolve(t, &ctx.cwd) {
            Resolved::Path(p) => Some(p),
            Resolved::Home | Resolved::Unknown => None,
        },
    };
}
