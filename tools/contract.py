# SPDX-License-Identifier: Apache-2.0
"""Load the contract: every proto/**/*.toml merged into one spec.

Files are read in sorted path order. Arrays of tables ([[enum]], [[block]], ...) are
concatenated; tables ([const.GROUP], [meta], ...) are merged, and a key defined in two
files is refused, so each value has exactly one home.

Then the registers are put in one shape for every generator (registers()): a register
array (count, stride) becomes its elements, a register's fields (inline, or the layout of
a [[bitfield]]) and named values (inline, or a shared [[enum]]) are resolved and checked.
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
    registers(spec)
    return spec


# ---- registers: fields, named values, arrays -----------------------------------------
def _values(spec, enum, where, width):
    """The named values of an `enum` key: the name of a shared [[enum]], or an inline table
    NAME = value (or { value, doc }). Each must fit width bits. Returns (shared name or
    None, [{name, value, doc}])."""
    if isinstance(enum, str):
        shared = next((e for e in spec.get("enum", []) if e["name"] == enum), None)
        if shared is None:
            raise ContractError(f"{where}: enum {enum!r} is no [[enum]] of the contract")
        values, ref = shared["values"], enum
    elif isinstance(enum, dict) and enum:
        values, ref = [], None
        for name, v in enum.items():
            v = v if isinstance(v, dict) else {"value": v}
            if not isinstance(v.get("value"), int) or set(v) - {"value", "doc"}:
                raise ContractError(f"{where}: enum value {name} must be an integer or {{ value = N, doc = \"...\" }}")
            values.append({"name": name, "value": v["value"], "doc": v.get("doc", "")})
    else:
        raise ContractError(f"{where}: enum must name a shared [[enum]] or be a table NAME = value")
    seen = {}
    for v in values:
        if not 0 <= v["value"] < 1 << width:
            raise ContractError(f"{where}: enum value {v['name']} = {v['value']} does not fit {width} bits")
        if v["value"] in seen and ref is None:
            raise ContractError(f"{where}: enum values {seen[v['value']]} and {v['name']} are both {v['value']}")
        seen.setdefault(v["value"], v["name"])
    return ref, values


def _fields(spec, fields, where, width):
    """Fields checked and their named values resolved: each inside width bits, none
    overlapping another, names distinct."""
    out, used, names = [], {}, set()
    for f in fields:
        name = f.get("name", "?")
        at = f"{where}.{name}"
        if not isinstance(f.get("lsb"), int) or not isinstance(f.get("width"), int) or f["lsb"] < 0 or f["width"] < 1:
            raise ContractError(f"{at}: a field needs lsb >= 0 and width >= 1 (integers)")
        if f["lsb"] + f["width"] > width:
            raise ContractError(f"{at}: bits {f['lsb'] + f['width'] - 1}:{f['lsb']} go beyond the word's {width} bits")
        if name in names:
            raise ContractError(f"{at}: field {name} is defined twice")
        names.add(name)
        for bit in range(f["lsb"], f["lsb"] + f["width"]):
            if bit in used:
                raise ContractError(f"{at}: bit {bit} overlaps field {used[bit]}")
            used[bit] = name
        g = dict(f, doc=f.get("doc", ""))
        if "enum" in f:
            g["enum_ref"], g["values"] = _values(spec, f["enum"], at, f["width"])
        out.append(g)
    return out


def _element(r, i):
    """Element i of register array r: its name, offset, doc (its own of `docs`, or the
    array's name and index) and the array it belongs to."""
    e = {k: v for k, v in r.items() if k not in ("count", "stride", "docs")}
    doc = r["docs"][i] if "docs" in r else f"{r['name']}[{i}]"
    e.update(name=f"{r['name']}{i}", off=r["off"] + i * r["stride"], array=r["name"], index=i, doc=doc)
    return e


def registers(spec):
    """Every [[bitfield]] checked; every block's registers in one shape: arrays as their
    elements (block["arrays"] keeps the arrays), each register's `fields` resolved (from
    its own list or its `layout`, a [[bitfield]]), `values` of a register-wide `enum`."""
    layouts = {}
    for bf in spec.get("bitfield", []):
        bf["fields"] = _fields(spec, bf["fields"], f"bitfield {bf['name']}", 32)
        layouts[bf["name"]] = bf
    for b in spec.get("block", []):
        arrays, regs = [], []
        for r in b["regs"]:
            where = f"{b['name']}.{r.get('name', '?')}"
            width = r.get("width", 32)
            bits = width if isinstance(width, int) else 32  # a parameter's width is at most 32
            if isinstance(width, int) and not 1 <= width <= 32:
                raise ContractError(f"{where}: width {width} is not 1..32")
            if "fields" in r and "layout" in r:
                raise ContractError(f"{where}: fields and layout both given; a register takes one")
            if "layout" in r:
                if r["layout"] not in layouts:
                    raise ContractError(f"{where}: layout {r['layout']!r} is no [[bitfield]] of the contract")
                r = dict(r, fields=_fields(spec, layouts[r["layout"]]["fields"], where, bits))
            elif "fields" in r:
                r = dict(r, fields=_fields(spec, r["fields"], where, bits))
            if "enum" in r:
                if "fields" in r:
                    raise ContractError(f"{where}: a register with fields names its values per field")
                r = dict(r)
                r["enum_ref"], r["values"] = _values(spec, r["enum"], where, bits)
            if "count" in r or "stride" in r:
                count, stride = r.get("count"), r.get("stride")
                if not isinstance(count, int) or count < 2 or not isinstance(stride, int) or stride < 4 or stride % 4:
                    raise ContractError(f"{where}: an array needs count >= 2 and a stride that is a multiple of 4")
                if "docs" in r and (not isinstance(r["docs"], list) or len(r["docs"]) != count):
                    raise ContractError(f"{where}: docs must be a list of {count} strings, one per element")
                arrays.append({k: r[k] for k in ("name", "off", "count", "stride", "doc")})
                regs += [_element(r, i) for i in range(count)]
            else:
                regs.append(r)
        b["regs"], b["arrays"] = regs, arrays
