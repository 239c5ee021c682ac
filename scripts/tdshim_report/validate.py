"""The check of one rank document: schema.json (the subset of JSON Schema it
uses, hand-written so that a message names one field and never quotes a
megabyte of input), then what the schema cannot say."""
import json
import math
import os

from .common import MAX_NUMBER, MAX_RANKS, MAX_TIME, SCHEMA, ReportError, esc, show


class Bad(Exception):
    """a field that does not match: field is a path like episodes[0].t_detect_s"""
    def __init__(self, field, msg):
        super().__init__(f"{field or '(top level)'}: {msg}")
        self.field = field


def schema_file():
    """schema.json: ../../shim/report/ from this package in the source tree
    (scripts/tdshim_report), ../ when installed ($(pkgdatadir)/tdshim_report)"""
    here = os.path.dirname(os.path.realpath(__file__))
    for p in (os.path.join(here, "..", "..", "shim", "report", "schema.json"),   # source tree
              os.path.join(here, "..", "schema.json")):                          # installed (pkgdatadir)
        if os.path.isfile(p):
            return os.path.normpath(p)
    return None


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class Validator:
    """The subset of JSON Schema draft 7 that schema.json uses ($ref, type,
    const, enum, required, properties, additionalProperties, items, minimum,
    maxItems, oneOf, allOf, if/then), reporting the first mismatch with its
    field path, plus the tool's own bounds on numbers (MAX_NUMBER, MAX_TIME
    for fields in seconds). Hand-written, not jsonschema, so that the message
    names one field precisely and never quotes a megabyte of input."""

    def __init__(self, schema):
        self.root = schema

    def resolve(self, s):
        while "$ref" in s:
            node = self.root
            for part in s["$ref"].lstrip("#/").split("/"):
                node = node[part]
            s = node
        return s

    def check(self, v, s, path=""):
        s = self.resolve(s)
        if "type" in s:
            types = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not any(_TYPES[t](v) for t in types):
                raise Bad(path, f"{show(v)} is not {' or '.join(types)}")
        if "const" in s and (v != s["const"] or type(v) is not type(s["const"])):
            raise Bad(path, f"{show(v)}, expected {show(s['const'])}")
        if "enum" in s and not any(v == e and type(v) is type(e) for e in s["enum"]):
            raise Bad(path, f"{show(v)} is not one of {', '.join(map(str, s['enum']))}")
        if _TYPES["number"](v):
            if isinstance(v, float) and not math.isfinite(v) or abs(v) > MAX_NUMBER:
                raise Bad(path, f"{show(v)} is out of range (|x| <= {MAX_NUMBER:g})")
            leaf = path.rsplit(".", 1)[-1]
            if (leaf.endswith("_s") or leaf == "seconds") and abs(v) > MAX_TIME:
                raise Bad(path, f"{show(v)} seconds is out of range (|x| <= {MAX_TIME:g})")
            if "minimum" in s and v < s["minimum"]:
                raise Bad(path, f"{show(v)} is below the minimum {s['minimum']}")
        if isinstance(v, list):
            if "maxItems" in s and len(v) > s["maxItems"]:
                raise Bad(path, f"{len(v)} items, at most {s['maxItems']}")
            if "items" in s:
                for i, x in enumerate(v):
                    self.check(x, s["items"], f"{path}[{i}]")
        if isinstance(v, dict):
            for k in s.get("required", []):
                if k not in v:
                    raise Bad(f"{path}.{k}".lstrip("."), "missing")
            props = s.get("properties", {})
            extra = s.get("additionalProperties", True)
            for k, x in v.items():
                sub = f"{path}.{esc(k)}".lstrip(".")
                if k in props:
                    self.check(x, props[k], sub)
                elif extra is False:
                    raise Bad(sub, "unknown field")
                elif isinstance(extra, dict):
                    self.check(x, extra, sub)
        if "oneOf" in s:
            errors = []
            for alt in s["oneOf"]:
                try:
                    self.check(v, alt, path)
                except Bad as e:
                    errors.append(e)
            if len(errors) != len(s["oneOf"]) - 1:
                # the alternative of v's own type explains best what is wrong
                same = [e for e, alt in zip(errors, s["oneOf"]) if "type" in self.resolve(alt)
                        and _TYPES[self.resolve(alt)["type"]](v)]
                raise same[0] if same else Bad(path, f"{show(v)} matches none of the allowed forms")
        for sub in s.get("allOf", []):
            self.check(v, sub, path)
        if "if" in s:
            try:
                self.check(v, s["if"], path)
            except Bad:
                pass
            else:
                if "then" in s:
                    self.check(v, s["then"], path)


_validator = None


def validator():
    global _validator
    if _validator is None:
        p = schema_file()
        if p is None:
            raise ReportError("cannot find schema.json (shim/report/ in the source tree, share/tdshim/ "
                              "when installed); reinstall tdshim")
        with open(p) as fh:
            _validator = Validator(json.load(fh))
    return _validator


def check_doc(doc):
    """schema.json, then what the schema cannot say"""
    if isinstance(doc, dict) and "schema" in doc and doc["schema"] != SCHEMA:
        raise Bad("schema", f"{show(doc['schema'])}; this tool reads {SCHEMA}")
    validator().check(doc, validator().root)
    if doc["size"] > MAX_RANKS:
        raise Bad("size", f"{doc['size']} ranks, more than {MAX_RANKS}")
    if doc["rank"] >= doc["size"]:
        raise Bad("rank", f"{doc['rank']} is not below size {doc['size']}")

