# SPDX-License-Identifier: Apache-2.0
"""Load the contract: every proto/**/*.toml merged into one spec.

Files are read in sorted path order. Arrays of tables ([[enum]], [[block]], ...) are
concatenated; tables ([const.GROUP], [meta], ...) are merged, and a key defined in two
files is refused, so each value has exactly one home.
"""
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


class ContractError(Exception):
    pass


def files(proto_dir=None):
    """The contract's files under proto_dir (default: the tree's proto/), in load order."""
    d = pathlib.Path(proto_dir) if proto_dir else ROOT / "proto"
    found = sorted(p for p in d.rglob("*.toml"))
    if not found:
        raise ContractError(f"{d}: no contract files (*.toml)")
    return found


def _merge(into, new, where, path):
    """Merge new into into: arrays of tables concatenate, the top tables and their groups
    ([const], [const.GROUP]) merge; any other key defined twice is refused."""
    for key, value in new.items():
        if key not in into:
            into[key] = value
        elif isinstance(into[key], list) and isinstance(value, list) and not path:
            into[key] = into[key] + value
        elif isinstance(into[key], dict) and isinstance(value, dict) and len(path) < 2:
            _merge(into[key], value, where, path + [key])
        else:
            raise ContractError(f"{where}: {'.'.join(path + [key])} is already defined in another contract file")


def load(proto_dir=None):
    """The merged spec of proto_dir (default: the tree's proto/)."""
    spec = {}
    for f in files(proto_dir):
        try:
            part = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError as err:
            raise ContractError(f"{f}: {err}") from err
        _merge(spec, part, f, [])
    return spec
