"""`memdir eval run|compare`: the harness behind the CLI (kept out of memdir/cli.py, which stays thin)."""

from __future__ import annotations

import sys
from pathlib import Path

# Imports are inside the handlers: building the parser happens on every `memdir` command, and the
# harness (pydantic, yaml) is only needed when an eval actually runs.
SUITE_NAMES = ("extraction", "recall", "behaviour")


def run_realdata(args) -> int:
    import json

    from memdir.config import Settings, choose_engine
    from memdir.evals.model_loop import model_loop
    from memdir.evals.realdata import EvalError, render, run_folder, run_suite
    from memdir.evals.realdata_path import locate_realdata, missing_reason
    from memdir.evals.run_folder import own_run_folder
    from memdir.evals.runner import prompt_variant

    root = Path(args.data) if args.data else locate_realdata()
    if root is None:
        print(f"memdir eval: {missing_reason()}", file=sys.stderr)
        return 2
    if (args.into or args.chain) and not args.data:
        flag = "--into" if args.into else "--chain"
        print(f"memdir eval: {flag} works with --data only (the suite's sessions are graded one by one, each from an "
              "empty folder)", file=sys.stderr)
        return 2
    requested = args.engine or "auto"
    # Its own folder before anything (a miss) is written; gone again if the run fails before writing anything.
    with (own_run_folder(Path(args.out), f"realdata-{requested}") as out, prompt_variant(args.variant),
          model_loop(requested, relay_dir=args.relay_dir, record=args.record, replay=args.replay,
                     misses=out / "replay-misses") as loop):
        engine = "llm" if loop is not None else choose_engine(requested)
        try:
            settings = Settings.from_env().with_overrides(engine=engine, extract_model=args.model)
            if args.data:
                report = run_folder(root, engine=engine, settings=settings, loop=loop, only=args.session,
                                    into=Path(args.into) if args.into else None, chain=args.chain)
            else:
                report = run_suite(root, engine=engine, settings=settings, only=_sessions_to_run(args, loop),
                                   with_no_loss=not args.skip_no_loss, loop=loop)
        except EvalError as exc:
            print(f"memdir eval: {exc}", file=sys.stderr)
            return 1
        if loop is not None:
            for removed in loop.finish():
                print(f"memdir eval: removed {removed}: a request memdir no longer sends", file=sys.stderr)
        report["engine"] = loop.label(requested) if loop is not None else engine
        text = render(report)
        (out / "summary.md").write_text(text, encoding="utf-8")
        (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n",
                                         encoding="utf-8")
    print(text, end="")
    print(f"summary: {out / 'summary.md'}", file=sys.stderr)
    return 0


def _sessions_to_run(args, loop) -> list[str] | None:
    """--session; else, replaying, the sessions the cassette covers (all of them, and the no-loss check, when it
    was recorded on the whole suite); else None: every session."""
    if args.session or loop is None or loop.replay is None or not loop.replay.sessions:
        return args.session
    covered = loop.replay.sessions
    from memdir.evals.realdata import NO_LOSS_PREFIX

    return None if any(s.startswith(NO_LOSS_PREFIX) for s in covered) else covered


def run(args) -> int:
    if args.suite == "realdata":
        return run_realdata(args)
    if args.engine == "relay" or args.record or args.replay or args.session:
        print("memdir eval: --engine relay, --record, --replay and --session work with --suite realdata only",
              file=sys.stderr)
        return 2
    from memdir.config import Settings, choose_engine
    from memdir.evals.cases import SUITES, load_suite
    from memdir.evals.run_folder import own_run_folder

    settings = Settings.from_env().with_overrides(
        extract_model=args.model, recall_model=args.recall_model or args.model, judge_model=args.judge_model
    )
    engine = choose_engine(args.engine or "auto")
    suites = list(SUITES) if args.suite == "all" else [args.suite]
    cases, problems = [], []
    for suite in suites:
        if suite == "locomo":
            continue
        found, bad = load_suite(suite, Path(args.cases) if args.cases else None)
        cases += found
        problems += bad
    for problem in problems:
        print(f"memdir eval: {problem.file}: {problem.message}", file=sys.stderr)
    with own_run_folder(Path(args.out), engine + (f"-{Path(args.variant).name}" if args.variant else "")) as out:
        return _run_cases_into(out, args, cases, engine, settings, problems)


def _run_cases_into(out: Path, args, cases: list, engine: str, settings, problems: list) -> int:
    from memdir.evals.report import summary
    from memdir.evals.runner import Progress, run_cases, write_results

    run_id = out.name
    jobs = len(cases) * args.repeat
    print(f"memdir eval: {len(cases)} cases x {args.repeat} on the {engine} engine -> {out}", file=sys.stderr)
    records = run_cases(cases, engine=engine, settings=settings, repeat=args.repeat, concurrency=args.concurrency,
                        variant=args.variant, progress=Progress(jobs)) if cases else []
    if args.suite == "locomo":
        from memdir.evals.locomo import run_records

        records += run_records(engine, settings, limit=args.limit)
    write_results(records, out / "results.jsonl")
    text = summary(records, f"memdir eval {run_id}")
    (out / "summary.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"results: {out / 'results.jsonl'}\nsummary: {out / 'summary.md'}", file=sys.stderr)
    return 1 if problems else 0


def compare_runs(args) -> int:
    from memdir.evals.report import compare, load_run

    a, b = Path(args.run_a), Path(args.run_b)
    print(compare(load_run(a), load_run(b), a.name, b.name))
    return 0


def add_parser(sub, command) -> None:
    p = command("eval", None, "measure extraction and recall quality (see `memdir eval run --help`)", folder=False)
    evsub = p.add_subparsers(dest="eval_command", required=True, parser_class=type(p))
    r = evsub.add_parser("run", help="run eval cases", description="run eval cases")
    r.add_argument("--suite", choices=[*SUITE_NAMES, "locomo", "realdata", "all"], default="all",
                   help="realdata: every real session in ../shared/realdata (or $MEMDIR_REALDATA)")
    r.add_argument("--engine", choices=["auto", "llm", "anthropic", "claude-code", "offline", "relay"], default=None,
                   help="relay (realdata only): a person or another agent answers each request as a file in --relay-dir")
    r.add_argument("--relay-dir", help="--engine relay: where NNNN.request.md is written and NNNN.response.json read")
    r.add_argument("--record", metavar="DIR", help="realdata: record every answer the model gave as a cassette in DIR")
    r.add_argument("--replay", metavar="DIR",
                   help="realdata: answer from the cassette in DIR; a request it lacks fails the run with a diff "
                        "(or goes to --engine relay/anthropic when given)")
    r.add_argument("--session", action="append", metavar="PATTERN",
                   help="realdata: only the sessions whose key matches (e.g. sessions2/ko-push-nothing); repeatable")
    r.add_argument("--skip-no-loss", action="store_true", help="realdata: leave out the no-loss check")
    r.add_argument("--data", metavar="DIR",
                   help="realdata: grade the *.jsonl of an outside folder from its items.json (the sessions2 format) "
                        "instead of the shared data, reported as held out")
    r.add_argument("--into", metavar="FOLDER",
                   help="realdata --data: extract each session into a copy of this memory folder (not an empty one); "
                        "only memories the run wrote or changed are graded")
    r.add_argument("--chain", action="store_true",
                   help="realdata --data: the sessions of one project run oldest first into one memory folder, as a "
                        "returning user's would; each is graded on what it wrote or changed")
    r.add_argument("--model", help="extraction/agent model")
    r.add_argument("--recall-model", help="recall selector model (default: --model or $MEMDIR_RECALL_MODEL)")
    r.add_argument("--judge-model", help="model for rubric grading")
    r.add_argument("--repeat", type=int, default=1, help="run every case this many times")
    r.add_argument("--variant", help="folder of prompt templates overriding prompts/*.j2 by name")
    r.add_argument("--concurrency", type=int, default=4, help="cases run at once")
    r.add_argument("--cases", help="folder with extraction/, recall/, behaviour/ case files (default: built in)")
    r.add_argument("--out", default="eval-runs", help="where run folders are written (default ./eval-runs)")
    r.add_argument("--limit", type=int, help="locomo: questions per conversation")
    r.set_defaults(func=run)
    c = evsub.add_parser("compare", help="per-case flips between two runs", description="compare two runs")
    c.add_argument("run_a", help="a run folder (eval-runs/RUN), the baseline")
    c.add_argument("run_b", help="a run folder to compare with it")
    c.set_defaults(func=compare_runs)
    from memdir.evals.consolidate_run import add_parser as add_consolidate_parser

    add_consolidate_parser(evsub)
