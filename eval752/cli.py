"""The ``eval752`` command: the only module that imports Hydra.

It composes the config, validates it against the schemas in ``config.py`` and hands it to the core.
A few shorthands are rewritten before Hydra sees the command line:

- ``recipe=NAME``       selects ``recipes/NAME.yaml`` as the primary config;
- ``dataset=PATH``      a path to a ``.jsonl`` file or dataset folder instead of a group option;
- ``resume=RUN_DIR``    finishes an interrupted run in place, from its saved config;
- ``reproduce=RUN_DIR`` re-runs a finished run from its saved config into a new run directory.

Bad input exits with status 2 and one message; a traceback is shown only with ``HYDRA_FULL_ERROR=1``.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .config import check_override_key
from .errors import ConfigError, Eval752Error
from .registry import unknown_name_message

PACKAGE_DIR = Path(__file__).resolve().parent
GROUPS = ("dataset", "provider", "checker", "sweep", "judge")


def config_dirs() -> tuple[Path, Path]:
    """``(conf, recipes)``: inside the package when installed from a wheel, else beside it in a checkout."""
    if (PACKAGE_DIR / "_conf").is_dir():
        return PACKAGE_DIR / "_conf", PACKAGE_DIR / "_recipes"
    root = PACKAGE_DIR.parent
    return root / "conf", root / "recipes"


def _options(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def _looks_like_path(value: str) -> bool:
    return value.endswith((".jsonl", ".jsonl.gz", ".json", ".csv")) or "/" in value or Path(value).exists()


def _saved_config_args(run_dir: str, key: str) -> list[str]:
    saved = Path(run_dir) / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise ConfigError(f"{key}={run_dir}: no saved config at {saved} (is this an eval752 run directory?)")
    # The saved config becomes the primary config path, searched before conf/ (which still provides
    # the hydra/ logging options), so its config.yaml wins over conf/config.yaml.
    conf, _ = config_dirs()
    args = ["--config-path", str(saved.parent.resolve()), "--config-name", "config", "--config-dir", str(conf)]
    args += ["hydra.job.chdir=false", "hydra/job_logging=eval752", "hydra/hydra_logging=eval752"]
    if key == "resume":
        args += [f"hydra.run.dir={Path(run_dir).resolve()}", f"resume={Path(run_dir).resolve()}"]
    else:
        args += ["hydra.run.dir='${eval752_run_dir:${output_root},${run_name}}'", f"reproduce={run_dir}"]
        args += ["resume=null"]
    return args


def rewrite_argv(argv: list[str]) -> list[str]:
    """Expand eval752's shorthands into plain Hydra arguments; check group options with did-you-mean."""
    conf, recipes = config_dirs()
    out: list[str] = []
    head: list[str] = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or arg.startswith("-"):
            out.append(arg)
            continue
        bare = key.lstrip("+~")
        if bare == "recipe":
            valid = _options(recipes)
            if value not in valid:
                raise ConfigError(unknown_name_message("recipe", value, valid))
            head += ["--config-dir", str(recipes), "--config-name", value]
        elif bare in ("resume", "reproduce") and value not in ("", "null"):
            head += _saved_config_args(value, bare)
        elif bare in GROUPS and "," not in value and not key.startswith(("+", "~")):
            valid = _options(conf / bare)
            if value in valid:
                out.append(arg)
            elif bare == "dataset" and _looks_like_path(value):
                out += ["dataset=file", f"dataset.path={value}"]
            else:
                raise ConfigError(unknown_name_message(f"{bare} option", value, valid))
        else:
            if not key.startswith(("+", "~", "hydra.", "hydra/")) and bare.split(".")[0] not in ("hydra",):
                if check_override_key(bare):
                    arg = "++" + arg  # a key inside a free-form mapping: add or replace it
            out.append(arg)
    if head.count("--config-name") > 1:
        raise ConfigError("recipe=, resume= and reproduce= cannot be combined")
    from .sweep import sweep_overrides

    out += sweep_overrides(head + out)
    if any(a.lower() == "dry_run=true" for a in out):  # dry runs go through the in-process launcher: nothing is sent, totals are exact
        out = [a for a in out if not a.startswith("hydra/launcher=")] + ["hydra/launcher=basic"]
    return head + out


def _register_schema() -> None:
    """The typed schema under every composed config: group options merge onto it, so types are checked
    at composition and every key (even an empty ``provider.extra_body``) exists to be overridden."""
    from hydra.core.config_store import ConfigStore

    from .config import RunConfig, ScoreConfig

    ConfigStore.instance().store(name="eval752_schema", node=RunConfig)
    ConfigStore.instance().store(name="eval752_score_schema", node=ScoreConfig)


def _register_resolvers() -> None:
    from omegaconf import OmegaConf

    def run_dir(root: str, name: str, kind: str = "runs") -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.time_ns() % 1_000_000_000 // 1000:06d}"
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))[:60] or "run"
        return str(Path(root) / kind / f"{stamp}_{safe}")

    def stem(path: str) -> str:
        p = Path(str(path))
        name = p.name
        for suffix in (".jsonl.gz", ".jsonl", ".json", ".csv"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name or "dataset"

    if not OmegaConf.has_resolver("eval752_run_dir"):
        OmegaConf.register_new_resolver("eval752_run_dir", run_dir, use_cache=True)
    if not OmegaConf.has_resolver("eval752_stem"):
        OmegaConf.register_new_resolver("eval752_stem", stem)
    from .sweep import register_resolvers

    register_resolvers()


_task_started = False


def _task(cfg) -> None:
    global _task_started
    _task_started = True
    from hydra.core.hydra_config import HydraConfig

    from .config import validate

    try:
        run_cfg = validate(cfg)
        hc = HydraConfig.get()
        from hydra.types import RunMode

        from .app import run_from_config

        if run_cfg.dry_run:
            from .sweep import dry_run_job

            dry_run_job(run_cfg, Path(hc.runtime.output_dir))
        elif hc.mode == RunMode.MULTIRUN:
            from .sweep import run_job

            run_job(run_cfg, Path(hc.runtime.output_dir), Path(hc.sweep.dir), list(hc.overrides.task),
                    int(hc.job.num))
        else:
            run_from_config(run_cfg, Path(hc.runtime.output_dir))
    except Eval752Error as e:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"eval752: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("eval752: interrupted; resume with the resume= command printed above", file=sys.stderr)
        sys.exit(130)


def _launch(config_name: str, task, args: list[str]) -> None:
    """Run ``task`` as a Hydra app over ``args``; Hydra's own composition errors exit with status 2."""
    global _task_started
    import hydra

    _register_resolvers()
    _register_schema()
    conf, _ = config_dirs()
    entry = hydra.main(version_base="1.3", config_path=str(conf), config_name=config_name)(task)
    saved_argv = sys.argv
    sys.argv = [saved_argv[0] if saved_argv else "eval752"] + args
    _task_started = False
    try:
        entry()
    except SystemExit as e:
        # Hydra reports a bad override or a missing option with status 1: that is bad input too.
        if e.code == 1 and not _task_started:
            sys.exit(2)
        raise
    finally:
        sys.argv = saved_argv


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args = rewrite_argv(args)
    except Eval752Error as e:
        print(f"eval752: error: {e}", file=sys.stderr)
        sys.exit(2)
    _launch("config", _task, args)
    from .sweep import print_dry_run_total

    print_dry_run_total()


def _score_task(cfg) -> None:
    global _task_started
    _task_started = True
    from hydra.core.hydra_config import HydraConfig

    from .config import validate_score

    try:
        score_cfg = validate_score(cfg)
        from .scoring import score_from_config

        score_from_config(score_cfg, Path(HydraConfig.get().runtime.output_dir))
    except Eval752Error as e:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"eval752-score: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)


def score_main(argv: list[str] | None = None) -> None:
    """``eval752-score``: score recorded outputs with the same checkers, without calling a model."""
    _launch("score", _score_task, list(sys.argv[1:] if argv is None else argv))


# Launchers (joblib, submitit) unpickle ``_task`` in another process by importing this module: the
# resolvers its configs use must exist there before the job's config is resolved.
_register_resolvers()

if __name__ == "__main__":
    if os.environ.get("EVAL752_ENTRY") == "score":
        score_main()
    else:
        main()
