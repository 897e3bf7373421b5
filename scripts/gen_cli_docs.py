#!/usr/bin/env python3
"""Writes docs/CLI.md from the programs' own --help output, or checks it.

Every command listed under "commands:" in `uot --help` (and `uot-mpi --help`) gets
its `--help` text verbatim, so a new command or flag shows up by rerunning this
script; `uot-studio --help` (the studio's command line) gets a section of its own.
The page is one section per program; --check compares each section of the
programs it was given with the file and fails (exit 1) when they differ, printing
the command that regenerates it.

Usage:
  scripts/gen_cli_docs.py --uot build/app/cli/uot [--uot-mpi build/app/mpi/uot-mpi]
                          [--studio build/app/studio/uot-studio]
                          [--output docs/CLI.md] [--check]
Without --uot-mpi (a build without MPI) or --studio (a build without the GUI) that
section is kept as it is in the file when writing, and not compared with --check.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = """# Command-line reference

Generated from the programs' own `--help` output by `scripts/gen_cli_docs.py`; do not
edit by hand. After changing a command's options, rebuild and run

    scripts/gen_cli_docs.py --uot build/app/cli/uot --uot-mpi build/app/mpi/uot-mpi \\
        --studio build/app/studio/uot-studio

(the CTest test `cli_docs_check` fails while this page and the built programs differ).
Examples and explanations: [COMMAND_LINE.md](COMMAND_LINE.md); exit codes:
[SAFETY.md](SAFETY.md#exit-codes).
"""
SECTION = re.compile(r"^<!-- program: (\S+) -->$", re.M)


def helpText(args, name):
    """stdout (and stderr) of one --help call, with trailing blanks trimmed; the
    path of the executable, where a program prints it, reads as `name`."""
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env={"LC_ALL": "C", "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"})
    if run.returncode != 0:
        sys.exit(f"gen_cli_docs: '{' '.join(args)}' exited {run.returncode}:\n{run.stdout}")
    text = run.stdout.replace(args[0], name)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def commandsOf(overview):
    """The command names listed under 'commands:' in a program's --help."""
    names, inList = [], False
    for line in overview.splitlines():
        if line.strip() == "commands:":
            inList = True
        elif inList and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif inList and line.strip():
            inList = False
    return names


def programSection(name, executable):
    overview = helpText([executable, "--help"], name)
    parts = [f"<!-- program: {name} -->", f"## `{name}`", "", "```text", overview, "```"]
    for command in commandsOf(overview):
        parts += ["", f"### `{name} {command}`", "", "```text",
                  helpText([executable, command, "--help"], name), "```"]
    return "\n".join(parts) + "\n"


def sectionsOf(text):
    """program name -> its section, as written in an existing page."""
    marks = list(SECTION.finditer(text))
    return {m.group(1): text[m.start():(marks[i + 1].start() if i + 1 < len(marks) else len(text))]
            .rstrip("\n") + "\n" for i, m in enumerate(marks)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uot", required=True)
    parser.add_argument("--uot-mpi")
    parser.add_argument("--studio")
    parser.add_argument("--output", default=str(ROOT / "docs" / "CLI.md"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    output = pathlib.Path(args.output)
    existing = sectionsOf(output.read_text()) if output.exists() else {}
    fresh = {"uot": programSection("uot", args.uot)}
    if args.uot_mpi:
        fresh["uot-mpi"] = programSection("uot-mpi", args.uot_mpi)
    if args.studio:
        fresh["uot-studio"] = programSection("uot-studio", args.studio)

    if args.check:
        stale = [name for name, text in fresh.items() if existing.get(name) != text]
        if stale:
            mpi = f" --uot-mpi {args.uot_mpi}" if args.uot_mpi else ""
            studio = f" --studio {args.studio}" if args.studio else ""
            print(f"docs/CLI.md is out of date with the built {' and '.join(stale)}. Regenerate it:\n"
                  f"  scripts/gen_cli_docs.py --uot {args.uot}{mpi}{studio}")
            return 1
        print(f"docs/CLI.md matches the --help of {', '.join(fresh)}")
        return 0

    sections = dict(existing)
    sections.update(fresh)
    order = ["uot", "uot-mpi", "uot-studio"] + sorted(set(sections) - {"uot", "uot-mpi", "uot-studio"})
    body = "\n".join(sections[name] for name in order if name in sections)
    output.write_text(HEADER + "\n" + body)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
