//! Rules for programs with subcommands or modes of their own: git, systemctl, package
//! managers, network clients, find, sed and tar.

use super::{Context, Finding, INSTALL_VERBS, assess_command, operands, option_value, write_to};
use crate::security::paths::Location;
use crate::security::shell::{SimpleCommand, Word};

pub(super) fn systemctl(args: &[Word]) -> Finding {
    let verb = operands(args, &["-H", "-M", "--host"])
        .first()
        .copied()
        .unwrap_or("list-units");
    match verb {
        "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate" => Finding::high(
            "power",
            format!("`systemctl {verb}` stops or restarts the machine"),
        ),
        "status" | "list-units" | "list-unit-files" | "is-active" | "is-enabled" | "is-failed"
        | "show" | "cat" => Finding::low("read-only", "`systemctl` only reports"),
        _ => Finding::high(
            "system-admin",
            format!("`systemctl {verb}` changes system services"),
        ),
    }
}

pub(super) fn git(args: &[Word]) -> Finding {
    // Global options before the subcommand, some with a value.
    let mut i = 0;
    while let Some(w) = args.get(i) {
        match w.text.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            t if t.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).map(|w| w.text.as_str()) else {
        return Finding::low("read-only", "`git` without a subcommand prints help");
    };
    let rest = &args[i + 1..];
    let ops = operands(rest, &[]);
    let flag = |names: &[&str]| {
        rest.iter().any(|w| {
            names
                .iter()
                .any(|n| w.text == *n || w.text.starts_with(&format!("{n}=")))
        })
    };
    match sub {
        "push" => {
            if flag(&[
                "-f",
                "--force",
                "--force-with-lease",
                "--force-if-includes",
                "--mirror",
                "--delete",
                "-d",
            ]) || ops
                .iter()
                .skip(1)
                .any(|r| r.starts_with('+') || r.starts_with(':'))
            {
                Finding::high(
                    "git-force-push",
                    "`git push` rewrites or deletes remote history",
                )
            } else {
                Finding::medium("git-push", "`git push` publishes commits")
            }
        }
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "rev-list" | "ls-files" | "ls-tree" | "ls-remote" | "grep" | "cat-file"
        | "whatchanged" | "help" | "version" | "reflog" => {
            Finding::low("read-only", format!("`git {sub}` only reads"))
        }
        "branch" | "tag" | "remote" | "stash" | "config" => {
            let lists = match sub {
                "branch" | "tag" => {
                    ops.is_empty()
                        && !flag(&[
                            "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy",
                            "-f", "--force",
                        ])
                }
                "remote" => ops.is_empty() || matches!(ops[0], "show" | "get-url" | "-v"),
                "stash" => matches!(ops.first().copied(), Some("list" | "show")),
                _ => flag(&["--get", "--list", "-l", "--get-all", "--get-regexp"]),
            };
            if lists {
                Finding::low("read-only", format!("`git {sub}` only lists"))
            } else {
                Finding::medium("git-change", format!("`git {sub}` changes the repository"))
            }
        }
        "clone" | "fetch" | "pull" => {
            Finding::medium("network", format!("`git {sub}` fetches from the network"))
        }
        _ => Finding::medium(
            "git-change",
            format!("`git {sub}` changes the repository or working tree"),
        ),
    }
}

pub(super) fn find(args: &[Word], ctx: &mut Context<'_>) -> Finding {
    const ACTIONS: [&str; 8] = [
        "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls",
    ];
    if !args.iter().any(|a| ACTIONS.contains(&a.text.as_str())) {
        return Finding::low("read-only", "`find` only lists");
    }
    let roots: Vec<&str> = args
        .iter()
        .map(|a| a.text.as_str())
        .take_while(|t| !t.starts_with('-') && *t != "(" && *t != "!")
        .collect();
    let mut f = Finding::medium(
        "delete-in-workspace",
        "`find` deletes files or runs commands on them",
    );
    for root in if roots.is_empty() { vec!["."] } else { roots } {
        if ctx.workspace.locate(root, &ctx.cwd) == Location::Outside {
            return Finding::high(
                "delete-outside-workspace",
                format!("`find` acts on files under {root}, outside the workspace"),
            );
        }
    }
    // The command `-exec` runs, up to `;` or `+`.
    let mut i = 0;
    while i < args.len() {
        if matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let end = args[i + 1..]
                .iter()
                .position(|a| a.text == ";" || a.text == "+")
                .map_or(args.len(), |p| i + 1 + p);
            let inner = SimpleCommand {
                words: args[i + 1..end].to_vec(),
                redirects: Vec::new(),
            };
            f = f.max(assess_command(&inner, ctx));
            i = end;
        }
        i += 1;
    }
    f
}

pub(super) fn sed(args: &[Word], ctx: &Context<'_>) -> Finding {
    let in_place = args.iter().any(|a| {
        let t = a.text.as_str();
        t.starts_with("--in-place")
            || (t.starts_with('-')
                && !t.starts_with("--")
                && t[1..].starts_with(|c: char| c != 'e' && c != 'f')
                && t[1..].contains('i')
                && !t.contains('='))
    });
    if !in_place {
        return Finding::low("read-only", "`sed` without -i only prints");
    }
    let has_script_option = args.iter().any(|a| {
        a.text == "-e"
            || a.text == "-f"
            || a.text.starts_with("--expression")
            || a.text.starts_with("--file")
    });
    let ops = operands(args, &["-e", "-f", "--expression", "--file", "-l"]);
    let mut f = Finding::medium("write-in-workspace", "`sed -i` edits files");
    for target in ops.iter().skip(usize::from(!has_script_option)) {
        f = f.max(write_to(target, "`sed -i` edits", ctx));
    }
    f
}

pub(super) fn tar(args: &[Word], ctx: &Context<'_>) -> Finding {
    let first = args.first().map(|a| a.text.as_str()).unwrap_or("");
    let cluster = first.trim_start_matches('-');
    let mode = |c: char, long: &str| {
        (!first.starts_with("--") && cluster.contains(c)) || args.iter().any(|a| a.text == long)
    };
    if mode('t', "--list") {
        return Finding::low("read-only", "`tar` lists an archive");
    }
    let mut f = Finding::medium("write-in-workspace", "`tar` writes files");
    if mode('x', "--extract")
        && let Some(dir) = option_value(args, "-C", "--directory")
    {
        f = write_to(dir, "`tar` extracts into", ctx).max(f);
    }
    if mode('c', "--create") {
        let archive = option_value(args, "-f", "--file").or_else(|| {
            // `tar czf out.tgz dir`: the archive is the first operand after the cluster.
            (cluster.contains('f') && !first.starts_with("--"))
                .then(|| args.get(1).map(|a| a.text.as_str()))
                .flatten()
        });
        if let Some(archive) = archive.filter(|a| *a != "-") {
            f = write_to(archive, "`tar` writes", ctx).max(f);
        }
    }
    f
}

pub(super) fn package_manager(name: &str, args: &[Word]) -> Finding {
    let verbs = operands(
        args,
        &["-r", "--requirement", "-C", "--prefix", "--manifest-path"],
    );
    let verb = match (name, verbs.first().copied()) {
        ("uv", Some("pip")) => verbs.get(1).copied(),
        (_, v) => v,
    };
    match verb {
        Some(v) if INSTALL_VERBS.contains(&v) => {
            Finding::medium("package-install", format!("`{name} {v}` installs packages"))
        }
        Some(v) => Finding::medium(
            "unrecognized",
            format!("`{name} {v}` may change the project"),
        ),
        None => Finding::medium("unrecognized", format!("`{name}` may change the project")),
    }
}

pub(super) fn network(name: &str, args: &[Word], ctx: &Context<'_>) -> Finding {
    if matches!(name, "nc" | "ncat")
        && args.iter().any(|a| {
            a.text == "-e" || a.text == "-c" || a.text == "--exec" || a.text == "--sh-exec"
        })
    {
        return Finding::high(
            "remote-script",
            format!("`{name}` hands a shell to the network"),
        );
    }
    let mut f = Finding::medium("network", format!("`{name}` reaches the network"));
    let output = match name {
        "curl" => option_value(args, "-o", "--output"),
        "wget" => option_value(args, "-O", "--output-document")
            .or_else(|| option_value(args, "-P", "--directory-prefix")),
        _ => None,
    };
    if let Some(out) = output.filter(|o| *o != "-") {
        f = f.max(write_to(out, &format!("`{name}` saves to"), ctx));
    }
    f
}
