"""`dragoman` command line. Each command parses its own settings object (flags, DRAGOMAN_
environment variables, optional TOML config) and hands it down; errors become one-line messages
here, at the edge."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

from pydantic import ValidationError
from pydantic_settings import SettingsError

from dragoman.argv import parse
from dragoman.errors import ConfigError, DragomanError

USAGE = """usage: dragoman COMMAND [options]

commands:
  serve            run the translation API server
  translate TEXT   translate one text on the command line (--to fr --source en)
  translate FILE   translate a file whole, its format kept (--to de; -o OUT)
  model prepare    assemble, verify and convert the embedded default model; --verify
                   hashes the prepared files again, --force makes them again
  model list       list the models dragoman can prepare
  route            proxy over several servers, by language pair and health
  deploy ray       run on Ray Serve (a deployment per model, autoscaled); --config-out FILE
                   writes the Serve config instead (needs the `ray` extra)
  bench            load-test architectures side by side; results, tables and plots
  tune             sweep dtype, threads and max_num_seqs; write a settings file serve loads
  eval             chrF, BLEU and failure counts of a running server, per pair and input kind
  info             this host, the engine settings it gets and why, versions (--json)
  deploy k8s       Kubernetes manifests from the serve settings, sized from bench results
  plan             replicas for a load and p99 target from bench figures; --simulate a day
  keys add NAME    make an API key: print it once, append its digest to --api-keys-file
  keys revoke NAME remove a key from --api-keys-file (a running server re-reads the file)
  keys list        names and digest prefixes in --api-keys-file

Every option has a DRAGOMAN_<NAME> environment variable twin; --config FILE (or
DRAGOMAN_CONFIG) names a TOML file of defaults. `dragoman COMMAND --help` lists the options.
"""


def _take_config(args: list[str]) -> list[str]:
    """`--config FILE` anywhere in the arguments becomes DRAGOMAN_CONFIG (read by settings).
    An empty name is refused: settings would read it as no file and the defaults would run
    without a word."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--config":
            value = next(it, None)
            if value is None:
                raise ConfigError("--config needs a file name")
            os.environ["DRAGOMAN_CONFIG"] = value
        elif arg.startswith("--config="):
            os.environ["DRAGOMAN_CONFIG"] = arg.split("=", 1)[1]
        else:
            out.append(arg)
    if os.environ.get("DRAGOMAN_CONFIG") == "":
        raise ConfigError("--config (DRAGOMAN_CONFIG) is empty: name a TOML file, or unset it")
    return out


def cmd_serve(args: list[str]) -> None:
    from dragoman.api.serve import serve
    from dragoman.service.settings import ServeSettings

    s = parse(ServeSettings, args, "dragoman serve")
    if s.architecture in ("multiprocess", "static-batch"):  # old, kept only to be measured
        from dragoman.bench.baselines import open_for_serve

        serve(s, open_for_serve)
        return
    serve(s)


def cmd_translate(args: list[str]) -> None:
    from dragoman.cli_translate import run_translate

    run_translate(args)


def cmd_model_prepare(args: list[str]) -> None:
    from dragoman.models.cli import PrepareSettings, run_prepare

    run_prepare(parse(PrepareSettings, args, "dragoman model prepare"))


def cmd_model_list(args: list[str]) -> None:
    from dragoman.models.cli import run_list
    from dragoman.settings import ModelSettings

    run_list(parse(ModelSettings, args, "dragoman model list"))


def cmd_bench(args: list[str]) -> None:
    from dragoman.bench.command import run_bench
    from dragoman.bench.settings import BenchSettings

    run_bench(parse(BenchSettings, args, "dragoman bench"))


def cmd_tune(args: list[str]) -> None:
    from dragoman.bench.settings import TuneSettings
    from dragoman.bench.tune import run_tune

    run_tune(parse(TuneSettings, args, "dragoman tune"))


def cmd_eval(args: list[str]) -> None:
    from dragoman.eval.runner import run_eval
    from dragoman.eval.settings import EvalSettings

    run_eval(parse(EvalSettings, args, "dragoman eval"))


def cmd_route(args: list[str]) -> None:
    from dragoman.router.app import route
    from dragoman.router.settings import RouteSettings

    route(parse(RouteSettings, args, "dragoman route"))


def cmd_deploy_ray(args: list[str]) -> None:
    from dragoman.deploy.ray.run import deploy_ray
    from dragoman.deploy.ray.settings import RaySettings

    deploy_ray(parse(RaySettings, args, "dragoman deploy ray"))


def cmd_info(args: list[str]) -> None:
    import json
    from dataclasses import replace

    from dragoman.engine.choice import resolve_architecture
    from dragoman.engine.host_defaults import Choice
    from dragoman.engine.vllm_engine import engine_plan, loaded_model_path
    from dragoman.host import detect
    from dragoman.info import InfoSettings, render, report

    s, engine = resolve_architecture(parse(InfoSettings, args, "dragoman info"))
    if s.architecture == "llama-cpp":
        from dragoman.engine.llamacpp import info_plan

        path, plan = info_plan(s)
        plan = replace(plan, engine=Choice(plan.engine.value, engine.reason))
        info = report(detect(), {s.model: plan}, {s.model: path})
        print(json.dumps(info, indent=1) if s.json_output else render(info))
        return
    try:
        path = loaded_model_path(s)
    except DragomanError as e:
        path = f"{s.model} (not prepared: {e})"
    plan = engine_plan(s, path)
    plan = replace(plan, engine=Choice(plan.engine.value, engine.reason))
    info = report(detect(), {s.model: plan}, {s.model: path})
    print(json.dumps(info, indent=1) if s.json_output else render(info))


def cmd_deploy_k8s(args: list[str]) -> None:
    from dragoman.deploy.k8s.settings import K8sSettings
    from dragoman.deploy.k8s.write import run_k8s

    run_k8s(parse(K8sSettings, args, "dragoman deploy k8s"))


def cmd_plan(args: list[str]) -> None:
    from dragoman.plan.cli import run_plan
    from dragoman.plan.settings import PlanSettings

    run_plan(parse(PlanSettings, args, "dragoman plan"))


def cmd_keys_add(args: list[str]) -> None:
    from dragoman.service.keys import KeyNameSettings, add_key

    s = parse(KeyNameSettings, args, "dragoman keys add")
    key = add_key(s.api_keys_file, s.name)
    print(key)
    print(f"added {s.name!r} to {s.api_keys_file}; the key is shown this once", file=sys.stderr)


def cmd_keys_revoke(args: list[str]) -> None:
    from dragoman.errors import ConfigError
    from dragoman.service.keys import KeyNameSettings, revoke_key

    s = parse(KeyNameSettings, args, "dragoman keys revoke")
    if not revoke_key(s.api_keys_file, s.name):
        raise ConfigError(f"no key named {s.name!r} in {s.api_keys_file}")
    print(f"revoked {s.name!r}", file=sys.stderr)


def cmd_keys_list(args: list[str]) -> None:
    from dragoman.service.keys import KeysSettings, list_keys

    for name, prefix in list_keys(parse(KeysSettings, args, "dragoman keys list").api_keys_file):
        print(f"{name}\t{prefix}")


COMMANDS: dict[tuple[str, ...], Callable[[list[str]], None]] = {
    ("serve",): cmd_serve,
    ("translate",): cmd_translate,
    ("model", "prepare"): cmd_model_prepare,
    ("model", "list"): cmd_model_list,
    ("bench",): cmd_bench,
    ("tune",): cmd_tune,
    ("eval",): cmd_eval,
    ("route",): cmd_route,
    ("deploy", "ray"): cmd_deploy_ray,
    ("info",): cmd_info,
    ("deploy", "k8s"): cmd_deploy_k8s,
    ("plan",): cmd_plan,
    ("keys", "add"): cmd_keys_add,
    ("keys", "revoke"): cmd_keys_revoke,
    ("keys", "list"): cmd_keys_list,
}


def _one_line_each(exc: ValidationError) -> str:
    """`dragoman: invalid settings: FIELD: what is wrong`, a line per mistake (pydantic's own
    text spends three lines on each, one of them a link); a whole-settings check names none."""
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        what = error["msg"].removeprefix("Value error, ")
        lines.append(
            f"dragoman: invalid settings: {where}: {what}"
            if where
            else f"dragoman: invalid settings: {what}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for words, command in sorted(COMMANDS.items(), key=lambda kv: -len(kv[0])):
        if tuple(args[: len(words)]) == words:
            try:
                rest = _take_config(args[len(words) :])
                if os.environ.get("DRAGOMAN_CONFIG"):
                    import dragoman.bench.settings  # noqa: F401 (the lab's commands' too)
                    from dragoman.all_settings import load_all

                    load_all()  # the file's keys are checked against every command's
                command(rest)
            except ConfigError as exc:  # wrong input: exits as a bad flag does
                print(f"dragoman: error: {exc.message}", file=sys.stderr)
                return 2
            except DragomanError as exc:  # the work failed (a server down): 1
                print(f"dragoman: error: {exc.message}", file=sys.stderr)
                return 1
            except ValidationError as exc:
                print(_one_line_each(exc), file=sys.stderr)
                return 2
            except SettingsError as exc:
                print(f"dragoman: invalid settings: {exc}", file=sys.stderr)
                return 2
            except KeyboardInterrupt:
                return 130
            return 0
    print(USAGE, file=sys.stderr if args and args[0] not in ("-h", "--help") else sys.stdout)
    return 0 if args and args[0] in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
