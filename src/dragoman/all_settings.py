"""Every command's settings classes, imported: one config file may serve several commands, so
its keys are checked against all of them (`dragoman.settings.known_setting_names`), and a class
is known once its module is imported. Whatever reads a config file calls `load_all` first: the
CLI, and Ray Serve's application builder. A new product command's settings module goes here;
the lab's (bench, tune) are registered by the CLI's dispatch, the only product code that
imports the lab, so a config file read by Ray's builder may hold only the product's keys."""

from __future__ import annotations


def load_all() -> None:
    """Import every module that defines a command's settings (each class registers itself)."""
    import dragoman.cli_translate
    import dragoman.deploy.k8s.settings
    import dragoman.deploy.ray.settings
    import dragoman.eval.settings
    import dragoman.info
    import dragoman.models.cli
    import dragoman.plan.footprint
    import dragoman.plan.settings
    import dragoman.router.settings
    import dragoman.service.keys
    import dragoman.service.settings
    import dragoman.settings  # noqa: F401 (imported for the classes they define)
