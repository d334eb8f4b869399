"""`dragoman deploy k8s`: build the objects from the serve settings and the measured pod
size, write them as YAML (one file per model group, one for the route), and say what was
decided and from which figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from dragoman.deploy.k8s.groups import model_groups
from dragoman.deploy.k8s.manifests import (
    SCALE_METRIC,
    all_objects,
    grace_seconds,
    group_name,
    keys_secret,
    scale_target,
    startup_failures,
)
from dragoman.deploy.k8s.settings import K8sSettings
from dragoman.deploy.k8s.sizing import PodSize, measured_size


def adapter_rules() -> dict[str, Any]:
    """prometheus-adapter's rule (its Helm values) that serves the HPA's Pods metric."""
    return {
        "rules": {
            "custom": [
                {
                    "seriesQuery": f'{SCALE_METRIC}{{namespace!="",pod!=""}}',
                    "resources": {
                        "overrides": {
                            "namespace": {"resource": "namespace"},
                            "pod": {"resource": "pod"},
                        }
                    },
                    "name": {"matches": SCALE_METRIC, "as": SCALE_METRIC},
                    "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
                }
            ]
        }
    }


def pod_size(s: K8sSettings) -> PodSize:
    from dragoman.host import detect

    host_class = s.host_class or detect().cpu_class
    return measured_size(s.bench_results, host_class, s.cpu, s.memory_mib, s.start_seconds)


def build(s: K8sSettings) -> tuple[dict[str, list[dict[str, Any]]], PodSize]:
    size = pod_size(s)
    return all_objects(s, model_groups(s), size), size


def write(files: dict[str, list[dict[str, Any]]], s: K8sSettings) -> list[Path]:
    s.out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, objs in files.items():
        path = s.out / name
        path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
        written.append(path)
    if s.autoscaler == "hpa":
        path = s.out / "prometheus-adapter-values.yaml"
        path.write_text(
            "# prometheus-adapter values: serves dragoman_admitted_in_flight per pod to the HPA\n"
            + yaml.safe_dump(adapter_rules(), sort_keys=False)
        )
        written.append(path)
    return written


def run_k8s(s: K8sSettings) -> None:
    from dragoman.writable import check_dir

    check_dir(s.out, "--out")
    console = Console()
    files, size = build(s)
    written = write(files, s)
    table = Table(title=f"dragoman deploy k8s: {len(files) - 1} model group(s) and the route")
    for col in ("Deployment", "pairs", "replicas", "CPU", "memory", "scale on"):
        table.add_column(col)
    for g in model_groups(s):
        table.add_row(
            group_name(s, g),
            f"{len(g.pairs)} ({', '.join(g.pairs[:4])}{', ...' if len(g.pairs) > 4 else ''})",
            f"{s.replicas}-{s.max_replicas}",
            f"{size.cpu:g}",
            f"{size.memory_mib} MiB",
            "-" if s.autoscaler == "none" else f"{SCALE_METRIC} > {scale_target(s):g}/pod",
        )
    table.add_row(
        f"{s.name}-route",
        "all",
        str(s.route_replicas),
        f"{s.route_cpu:g}",
        f"{s.route_memory_mib} MiB",
        "-",
    )
    console.print(table)
    console.print(
        f"sized from {size.source}: load time {size.start_seconds:.0f} s -> startup window "
        f"{startup_failures(size) * 5} s; drain {s.drain_seconds:g} s -> grace "
        f"{grace_seconds(s)} s"
    )
    for path in written:
        console.print(f"wrote {path}")
    if s.required_keys:
        console.print(
            f"[yellow]keys[/]: the pods read {' and '.join(s.required_keys)} from Secret "
            f"{keys_secret(s)} (api-keys: the raw keys, comma-separated; cache-url, "
            "glossary-url: the URL with its password) and do not start without it: create it "
            "before applying (kubectl create secret generic ...); a keys file is not copied "
            "into the manifests"
        )
    note = glossary_note(s, len(files) - 1)
    if note:
        console.print(f"[yellow]glossaries[/]: {note}")


def glossary_note(s: K8sSettings, groups: int) -> str | None:
    """What to know when DeepL's stored glossaries stay in each pod's own data folder: lost
    with the pod, missing on a group's other pods, refused by the route across groups."""
    if s.glossary_url or s.glossary_dir or (groups == 1 and s.max_replicas == 1):
        return None
    store = "the --cache-url store will do: " if s.cache_url else ""
    return (
        "each pod keeps DeepL's stored glossaries in its own data folder: lost with the pod, "
        "missing on the group's other pods, refused by the route across groups; to share "
        f"them, give --glossary-url, a Redis-protocol store ({store}DRAGOMAN_GLOSSARY_URL), "
        "or send glossary terms with native requests"
    )
