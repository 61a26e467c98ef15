"""Typed schemas for every config group, and validation of a composed config against them.

Hydra composes plain YAML; ``validate`` merges the result into these dataclasses through OmegaConf, so an
unknown key or a value of the wrong type fails with the valid keys listed (and a "did you mean").
Nothing here imports Hydra, so the core can be driven from Python without it.
"""
from __future__ import annotations

import difflib
from dataclasses import MISSING as MISSING_FIELD, dataclass, field, fields, is_dataclass
from typing import Any, Dict, List, Optional

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException, ValidationError

from .errors import ConfigError


@dataclass
class DatasetConfig:
    name: str = "dataset"
    # A native .jsonl file, a dataset folder (sections/*.jsonl + assets/), or "builtin:<file>" for the
    # examples shipped inside the package.
    path: str = "builtin:quickstart.jsonl"
    format: str = "native"  # native | mmlu | gsm8k | humaneval | auto
    sections: Optional[List[str]] = None
    limit: Optional[int] = None
    system_prompt: Optional[str] = None
    # How an MCQ item becomes a prompt; {question} and {choices} (lettered lines) are filled in.
    mcq_template: str = "{question}\n\n{choices}\n\nAnswer with the letter of the correct option."
    mcq_multi_template: str = (
        "{question}\n\n{choices}\n\nSeveral options may be correct. Answer with all their letters."
    )


@dataclass
class SimVendorConfig:
    """The simulated vendor: an OpenAI-compatible server started in-process on 127.0.0.1."""

    seed: int = 0
    accuracy: Dict[str, float] = field(
        default_factory=lambda: {
            "mcq_single": 0.8,
            "mcq_multi": 0.7,
            "freeform": 0.7,
            "code": 0.7,
            "judge_pairwise": 0.5,
            "default": 0.5,
        }
    )
    temperature_penalty: float = 0.0
    latency_kind: str = "fixed"  # fixed | uniform | lognormal
    latency_ms: float = 0.0
    latency_spread_ms: float = 0.0
    reasoning: bool = False
    behaviours: List[Any] = field(default_factory=list)


@dataclass
class ProviderConfig:
    name: str = "sim"
    # litellm model string: openai/gpt-4o-mini, anthropic/claude-..., hosted_vllm/<name>, openai/<name> + api_base
    model: str = "openai/sim-1"
    api_base: Optional[str] = None
    # The NAME of the environment variable holding the key; the key itself is never in a config.
    api_key_env: Optional[str] = None
    # auto: OpenAI-compatible endpoints (an api_base with an openai/ or hosted_vllm/ model, and sim) go
    # through eval752's direct HTTP client; everything else through litellm.acompletion.
    transport: str = "auto"  # auto | litellm | http
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None
    max_tokens: Optional[int] = None
    seed: Optional[int] = None
    stop: Optional[List[str]] = None
    extra_body: Dict[str, Any] = field(default_factory=dict)
    timeout: float = 120.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    concurrency: int = 16
    # Total seconds one request may take across all its attempts and the waits between them (null: no
    # limit); an attempt's timeout is min(timeout, time left).
    deadline: Optional[float] = None
    # AIMD: halve the requests in flight on sustained 429s (down to 1), regain one per window of successes.
    adaptive_concurrency: bool = True
    rpm: Optional[int] = None
    stream: bool = False
    vision: bool = False
    track_cost: bool = True
    sim: Optional[SimVendorConfig] = None


@dataclass
class CheckerConfig:
    name: str = "auto"
    # A checker (name or {kind: ..., options}) forced on every item, above per-item and per-type choices.
    force: Optional[Any] = None
    # Per item type: the checker used when the item names none.
    by_type: Dict[str, Any] = field(default_factory=dict)


@dataclass
class SweepConfig:
    name: str = "none"
    description: str = ""
    # Folder under ${output_root}/sweeps/. The eval752 command sets it to a hash of the command's overrides,
    # so relaunching the same command finds the same folders (complete runs skipped, others resumed).
    id: Optional[str] = None
    # Command-line keys swept (a,b values); with hydra.sweeper.params they name each run's folder.
    vary: List[str] = field(default_factory=list)


@dataclass
class VerifierConfig:
    """Vendor verification (dataset.format=verifier): prompt rows sent ``loops`` times, scored with the
    MiniMax-Provider-Verifier validators, compared with an official ``baseline``."""

    loops: int = 1
    baseline: Optional[str] = None  # official results: a *_results.jsonl file or a folder of loop_NN.jsonl
    n: int = 3  # repeat_n_gram: substring length in code points
    threshold: int = 4  # repeat_n_gram: occurrences that count as degenerate repetition
    thresholds: Dict[str, Any] = field(default_factory=dict)  # per-metric overrides of the reference verdicts
    flavour: str = "minimax"  # minimax: MiniMax-Provider-Verifier semantics; k2: MoonshotAI K2-Vendor-Verifier's
    fail_on_verdict: bool = False  # exit with status 1 when any metric's verdict is "fail"


@dataclass
class CacheConfig:
    enabled: bool = True
    path: Optional[str] = None  # default: $EVAL752_CACHE_DIR or ~/.cache/eval752, file responses.sqlite


@dataclass
class JudgeConfig:
    """LLM judges (checkers ``judge`` and ``pairwise_judge``): a judge model configured apart from the model
    under test, a sandboxed Jinja2 template and pre/post-processing steps. See eval752/judge/."""

    # Same schema as ``provider``: ``judge=sim`` / ``judge=openai``, or ``judge.provider.model=<litellm model>``.
    # An empty model (the default, ``judge=none``) means no judge: judge checkers then fail up front.
    provider: ProviderConfig = field(default_factory=lambda: ProviderConfig(name="judge", model=""))
    mode: Optional[str] = None  # scale | binary | pairwise; null: from the template (or the checker)
    template: Optional[str] = None  # built-in name (eval752/judge_templates/<name>.jinja) or a .jinja path
    system: Optional[str] = None  # system message sent before the rendered template
    system_in_user: bool = False  # fold the system message into the user message (judges without one)
    prompts_file: Optional[str] = None  # MT-bench judge_prompts.jsonl (official wording) ...
    prompt_name: Optional[str] = None  # ... and the prompt in it: single-v1, pair-v2, single-math-v1, ...
    preprocess: List[str] = field(default_factory=lambda: ["strip_think"])  # on the judged response(s)
    postprocess: Optional[List[str]] = None  # text steps then one parser; null: parse_<mode>
    scale_max: int = 10  # scale mode: a rating N in 1..scale_max scores N / scale_max
    swap: bool = True  # pairwise: judge both orders (position-swap debiasing)
    trial: Optional[int] = None  # judge only this many rows and print each judge input and output to stderr


@dataclass
class RunConfig:
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    checker: CheckerConfig = field(default_factory=CheckerConfig)
    sweep: SweepConfig = field(default_factory=SweepConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    run_name: str = "run"
    recipe: Optional[str] = None
    samples: int = 1
    seed: int = 0
    resume: Optional[str] = None
    reproduce: Optional[str] = None
    output_root: str = "outputs"
    progress: bool = True
    dry_run: bool = False  # print the requests (and tokens, cost) a run or sweep would send; send nothing


def _valid_keys(schema: type, path: list[str]) -> tuple[str, list[str]]:
    cls = schema
    for part in path:
        f = {x.name: x for x in fields(cls)}.get(part)
        if f is None:
            break
        default = f.default_factory() if callable(f.default_factory) else f.default  # type: ignore[misc]
        if not is_dataclass(default):
            break
        cls = type(default)
    return cls.__name__, [f.name for f in fields(cls)]


def check_override_key(key: str) -> bool:
    """Refuse ``provider.temprature=0.7`` before Hydra does, with the valid keys and a did-you-mean.
    Keys below free-form mappings (``provider.extra_body.*``, ``provider.sim.accuracy.*``) pass, and the
    return value says so (the CLI then lets Hydra add them)."""
    cls: Any = RunConfig
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not is_dataclass(cls):
            return cls == "mapping" and i < len(parts)
        by_name = {f.name: f for f in fields(cls)}
        if part not in by_name:
            close = difflib.get_close_matches(part, list(by_name), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where = ".".join(parts[:i]) or "the top level"
            raise ConfigError(f"unknown config key {key!r}{hint}; valid keys of {where}: {', '.join(by_name)}")
        f = by_name[part]
        if f.default_factory is not MISSING_FIELD:  # type: ignore[misc]
            value = f.default_factory()  # type: ignore[misc]
            cls = type(value) if is_dataclass(value) else ("mapping" if isinstance(value, dict) else None)
        elif part == "sim":
            cls = SimVendorConfig
        else:
            return False
    return False


def _stray_key(node: Any, cls: type, path: list[str]) -> tuple[str, type, str] | None:
    """A key of ``node`` that ``cls`` does not have (``+key=...`` slips past struct mode: the typed merge
    below would then drop it silently), searched through nested schema groups; free-form mappings pass."""
    if not isinstance(node, (DictConfig, dict)):
        return None
    by_name = {f.name: f for f in fields(cls)}
    for key in list(node.keys()):
        f = by_name.get(str(key))
        if f is None:
            return ".".join(path + [str(key)]), cls, str(key)
        sub = f.default_factory() if f.default_factory is not MISSING_FIELD else f.default  # type: ignore[misc]
        sub_cls = type(sub) if is_dataclass(sub) else (SimVendorConfig if f.name == "sim" else None)
        if sub_cls is not None:
            try:
                child = node[key]
            except OmegaConfBaseException:
                continue
            found = _stray_key(child, sub_cls, path + [str(key)])
            if found:
                return found
    return None


def validate(cfg: DictConfig | dict) -> RunConfig:
    """Merge a composed config into the schema and return the typed ``RunConfig``."""
    stray = _stray_key(cfg, RunConfig, [])
    if stray:
        full, cls, key = stray
        valid = [f.name for f in fields(cls)]
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown config key {full!r}{hint}; valid keys of {cls.__name__}: {', '.join(valid)}")
    base = OmegaConf.structured(RunConfig)
    try:
        merged = OmegaConf.merge(base, cfg)
        obj = OmegaConf.to_object(merged)
    except ConfigKeyError as e:
        key = str(getattr(e, "key", "") or "")
        full = str(getattr(e, "full_key", "") or key)
        parent = full.split(".")[:-1]
        where, valid = _valid_keys(RunConfig, parent)
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"unknown config key {full!r}{hint}; valid keys of {where}: {', '.join(valid)}"
        ) from None
    except (ValidationError, OmegaConfBaseException) as e:
        full = getattr(e, "full_key", None)
        msg = str(e).splitlines()[0]
        raise ConfigError(f"invalid config value{f' at {full!r}' if full else ''}: {msg}") from None
    assert isinstance(obj, RunConfig)
    _check_values(obj)
    return obj


def _check_values(c: RunConfig) -> None:
    problems = []
    if c.samples < 1:
        problems.append(f"samples must be >= 1, got {c.samples}")
    if c.provider.concurrency < 1:
        problems.append(f"provider.concurrency must be >= 1, got {c.provider.concurrency}")
    if c.provider.max_retries < 0:
        problems.append(f"provider.max_retries must be >= 0, got {c.provider.max_retries}")
    if c.provider.timeout <= 0:
        problems.append(f"provider.timeout must be > 0, got {c.provider.timeout}")
    if c.provider.transport not in ("auto", "litellm", "http"):
        problems.append(f"provider.transport must be auto, litellm or http, got {c.provider.transport!r}")
    if c.provider.deadline is not None and not c.provider.deadline > 0:
        problems.append(f"provider.deadline must be > 0 or null, got {c.provider.deadline}")
    if c.provider.rpm is not None and c.provider.rpm < 1:
        problems.append(f"provider.rpm must be >= 1 or null, got {c.provider.rpm}")
    if c.dataset.limit is not None and c.dataset.limit < 1:
        problems.append(f"dataset.limit must be >= 1 or null, got {c.dataset.limit}")
    if c.verifier.loops < 1:
        problems.append(f"verifier.loops must be >= 1, got {c.verifier.loops}")
    if c.verifier.flavour not in ("minimax", "k2"):
        problems.append(f"verifier.flavour must be minimax or k2, got {c.verifier.flavour!r}")
    if c.provider.sim is not None:
        for k, v in c.provider.sim.accuracy.items():
            if not 0.0 <= float(v) <= 1.0:
                problems.append(f"provider.sim.accuracy.{k} must be in [0, 1], got {v}")
    if problems:
        raise ConfigError("; ".join(problems))


def to_container(c: RunConfig) -> dict[str, Any]:
    return OmegaConf.to_container(OmegaConf.structured(c), resolve=True)  # type: ignore[return-value]


DEFAULT_DIAG_TEXT_FIELDS = ("response.text", "response.reasoning")


@dataclass
class DiagnosticsConfig:
    """Repetition and script scans (numba kernels) over every row of the input, streamed."""

    enabled: bool = True
    n: int = 3
    threshold: int = 4
    expected: Optional[str] = None  # language (en, ja, zh, ko, ru) or script; null: inferred from each prompt
    text_fields: List[str] = field(default_factory=lambda: list(DEFAULT_DIAG_TEXT_FIELDS))
    group_field: Optional[str] = None  # dotted path of the field to group rows by (e.g. model)
    id_field: str = "item_id"
    prompt_field: Optional[str] = "request.messages"


@dataclass
class ScoreConfig:
    """``eval752-score``: score recorded outputs without calling any model."""

    input: str = "???"
    format: str = "auto"  # auto | eval752 | verifier | k2 | jsonl | chat | conversation | eval_only | csv | alpaca_*
    dataset: Optional[DatasetConfig] = None  # for eval752 results: default, the run's own saved dataset
    prompts: Optional[str] = None  # for verifier results: the prompt file (checks and labels per data_index)
    checker: CheckerConfig = field(default_factory=CheckerConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    diagnostics: DiagnosticsConfig = field(default_factory=DiagnosticsConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    run_name: str = "score"
    output_root: str = "outputs"


def validate_score(cfg: DictConfig | dict) -> ScoreConfig:
    try:
        obj = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ScoreConfig), cfg))
    except (ValidationError, OmegaConfBaseException) as e:
        raise ConfigError(f"invalid config: {str(e).splitlines()[0]}") from None
    assert isinstance(obj, ScoreConfig)
    if obj.input in ("???", ""):
        raise ConfigError("eval752-score needs input=<file>")
    score_formats = ("auto", "eval752", "verifier", "k2", "jsonl", "chat", "conversation", "eval_only", "csv",
                     "alpaca_annotations", "alpaca_outputs")
    if obj.format not in score_formats:
        raise ConfigError(f"format must be one of {', '.join(score_formats)}, got {obj.format!r}")
    return obj
