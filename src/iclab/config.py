"""Load and validate a configuration against the schema shipped in the package.

The schema is ``iclab/config.schema.yaml`` (global keys and shared ``$defs``) with each experiment's
own ``iclab/experiments/<name>/schema.yaml`` under ``experiments.<name>``. Errors name the offending
key as a dotted path (``experiments.ltb_gap.n[0]``) and what is allowed there; every error of the
file is reported at once, before any job runs. Defaults are declared once, in the schema: the
dataclasses of typed configs read theirs through ``schema_default``.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iclab.errors import ConfigError

if TYPE_CHECKING:  # imported by ``validate`` only: the training code reads defaults here without it (a GPU image)
    import jsonschema

PACKAGE = Path(__file__).resolve().parent
SCHEMA_PATH = PACKAGE / "config.schema.yaml"
EXPERIMENTS_DIR = PACKAGE / "experiments"
# libyaml's parser where PyYAML was built with it (same safe constructors, ~10x faster on the schemas).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    with open(path) as f:
        return yaml.load(f, Loader=SAFE_LOADER)


def experiment_schema_paths() -> dict[str, Path]:
    """Each experiment package's schema file, by experiment name."""
    return {path.parent.name: path for path in sorted(EXPERIMENTS_DIR.glob("*/schema.yaml"))}


@lru_cache(maxsize=1)
def base_schema() -> dict[str, Any]:
    return read_yaml(SCHEMA_PATH)


def load_schema() -> dict[str, Any]:
    """The whole config schema: the base schema with every experiment's section."""
    schema = copy.deepcopy(base_schema())
    sections = schema["properties"]["experiments"]["properties"] = {}
    for name, path in experiment_schema_paths().items():
        sections[name] = read_yaml(path)
    return schema


def schema_default(definition: str, key: str | None = None) -> Any:
    """The ``default`` of ``$defs.<definition>`` (or of its property ``key``) in the base schema."""
    node = base_schema()["$defs"][definition]
    node = node if key is None else node["properties"][key]
    return copy.deepcopy(node["default"])


def key_path(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def describe(error: jsonschema.ValidationError) -> str:
    """One line naming the key and what is allowed there."""
    where = key_path(error.absolute_path)
    schema, value = error.schema, error.instance
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(set(value) - set(allowed))
        return f"{key_path([*error.absolute_path, unknown[0]])}: unknown key; allowed keys here: {', '.join(allowed)}"
    if error.validator == "enum":
        return f"{where}: {value!r} is not allowed; allowed: {', '.join(map(str, schema['enum']))}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    if error.validator == "type":
        return f"{where}: expected {schema['type']}, got {value!r}"
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        relation = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[error.validator]
        return f"{where}: {value!r} is out of range; must be {relation} {error.validator_value}"
    return f"{where}: {error.message}"


def resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The schema itself, or the ``$defs`` entry its ``$ref`` names."""
    return root["$defs"][schema["$ref"].split("/")[-1]] if "$ref" in schema else schema


def with_defaults(instance: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A copy of ``instance`` with the schema's ``default`` values filled in (objects only).

    An absent object is created only when it has no required key (it is then all defaults): an
    optional section such as an experiment or ``train.curriculum`` stays absent."""
    schema = resolved(schema, root)
    if not isinstance(instance, dict):
        return instance
    out = dict(instance)
    for key, sub in schema.get("properties", {}).items():
        sub = resolved(sub, root)
        if key in out:
            out[key] = with_defaults(out[key], sub, root)
        elif "default" in sub:
            out[key] = copy.deepcopy(sub["default"])
        elif sub.get("type") == "object" and not sub.get("required"):
            out[key] = with_defaults({}, sub, root)  # an absent object of defaults only (e.g. ``progress``)
    return out


def validate(config: dict[str, Any], source: str = "config", schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the config with defaults filled in, or raise ``ConfigError`` listing every problem."""
    schema = schema or load_schema()
    if not isinstance(config, dict):
        raise ConfigError(f"{source}: the configuration must be a mapping of keys, got {type(config).__name__}")
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    if errors:
        lines = "\n".join(f"  - {describe(e)}" for e in errors)
        raise ConfigError(f"invalid configuration {source}:\n{lines}")
    return with_defaults(config, schema, schema)


def load(path: str | Path, check: bool = True) -> dict[str, Any]:
    """Read and validate a YAML config file. ``check=False`` fills in the schema's defaults without validating, for
    where jsonschema is not installed (the lent GPU's image, ``iclab.compute.gpu_check``) on a config the suite
    validates."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    with open(path) as f:
        try:
            config = yaml.load(f, Loader=SAFE_LOADER)
        except yaml.YAMLError as err:
            raise ConfigError(f"config file {path} is not valid YAML: {err}") from err
    if not check:
        schema = load_schema()
        return with_defaults(config, schema, schema)
    return validate(config, source=str(path))
