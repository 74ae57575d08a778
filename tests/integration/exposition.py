"""The one exposition parser of the tests: Prometheus text format 0.0.4 and
OpenMetrics 1.0 bodies into families and samples (not a test itself; tests
reach it as gpuscope_testlib.parse_exposition).

Strict: any line it cannot read fails the test (AssertionError naming the
line), as do an escape the format does not define, a value that is not a
number, +Inf, -Inf or NaN, a label or a series given twice, a family
described twice or whose samples are not together and, with
openmetrics=True, a blank line, a comment other than HELP, TYPE and UNIT,
or a body that does not end with its one "# EOF".

    body = parse_exposition(text)
    body.families["gpuscope_nvml_up"].type    # "gauge"
    body.value("gpuscope_collector_stale", gpu="2")   # 1.0, None when absent
    for s in body.find("DCGM_FI_DEV_GPU_UTIL"): s.labels["gpu"], s.value

Label values and HELP text come unescaped; labels keep the order written.
stdlib only.
"""
import re
from typing import NamedTuple, Optional

# A sample name belongs to the family described before it when it is the
# family's name plus one of these suffixes for the family's type (text-format
# counters are typed under their _total name, OpenMetrics ones without it).
SUFFIXES = {
    "counter": ("", "_total", "_created"),
    "gauge": ("",), "untyped": ("",), "unknown": ("",), "stateset": ("",),
    "info": ("_info",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
    "summary": ("", "_count", "_sum", "_created"),
}
TEXT_TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
OPENMETRICS_TYPES = ("counter", "gauge", "histogram", "gaugehistogram", "stateset", "info",
                     "summary", "unknown")

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
NUMBER = r"[+-]?Inf|NaN|[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
PAIR = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
LABELS = r"\{(?:%s(?:,%s)*)?\}" % (PAIR, PAIR)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')
# name{labels} value [timestamp] [# {labels} value [timestamp]] (the exemplar)
SAMPLE = re.compile(r"(%s)(%s)? (%s)(?: (%s))?(?: # (%s) (%s)(?: (%s))?)?"
                    % (NAME, LABELS, NUMBER, NUMBER, LABELS, NUMBER, NUMBER))
TEXT_DESCRIPTOR = re.compile(r"# (HELP|TYPE) (%s)(?: (.*))?" % NAME)
OPENMETRICS_DESCRIPTOR = re.compile(r"# (HELP|TYPE|UNIT) (%s)(?: (.*))?" % NAME)
ESCAPES = {"\\\\": "\\", "\\n": "\n", '\\"': '"'}


class Exemplar(NamedTuple):
    labels: dict
    value: float
    timestamp: Optional[float]


class Sample(NamedTuple):
    name: str
    labels: dict  # label -> unescaped value, in the order written
    value: float
    timestamp: Optional[float]  # as written: ms (text format) or s (OpenMetrics)
    exemplar: Optional[Exemplar]

    @property
    def series(self):
        """(name, ((label, value), ...)): hashable, label order included."""
        return self.name, tuple(self.labels.items())


class Family:
    """A metric family: its HELP, TYPE and UNIT (None when not given) and samples."""

    def __init__(self, name):
        self.name, self.type, self.help, self.unit = name, None, None, None
        self.samples = []

    def owns(self, sample_name):
        suffixes = SUFFIXES[self.type] if self.type else ("",)
        return any(sample_name == self.name + s for s in suffixes)


class Exposition:
    """A parsed body: families by name (in order) and every sample in order."""

    def __init__(self, families):
        self.families = families
        self.samples = [s for f in families.values() for s in f.samples]

    def find(self, name, /, **labels):
        """The samples named name whose labels include the given ones."""
        return [s for s in self.samples if s.name == name and
                all(s.labels.get(k) == v for k, v in labels.items())]

    def value(self, name, /, **labels):
        """The value of the one sample find() gives; None when there is none,
        AssertionError when there are several."""
        found = self.find(name, **labels)
        if len(found) > 1:
            raise AssertionError("%d samples of %s%s, expected one: %s"
                                 % (len(found), name, labels, [s.labels for s in found]))
        return found[0].value if found else None


def parse_exposition(text, openmetrics=False):
    """Parses a text-format (or with openmetrics=True, an OpenMetrics) body."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if openmetrics:
        _expect(lines and lines[-1] == "# EOF", len(lines), lines[-1:],
                "an OpenMetrics body ends with '# EOF'")
        lines.pop()
    families, seen = {}, set()
    family = None
    for number, line in enumerate(lines, 1):
        if line.startswith("#"):
            family = _descriptor(line, number, family, families, openmetrics)
        elif line:
            sample = _sample(line, number, openmetrics)
            if family is None or not family.owns(sample.name):
                _expect(sample.name not in families, number, line,
                        "samples of %s are not together" % sample.name)
                family = families[sample.name] = Family(sample.name)
            key = (sample.name, frozenset(sample.labels.items()))
            _expect(key not in seen, number, line, "a series twice")
            seen.add(key)
            family.samples.append(sample)
        else:
            _expect(not openmetrics, number, line, "OpenMetrics has no blank lines")
    return Exposition(families)


def _descriptor(line, number, family, families, openmetrics):
    """Reads a comment line; returns the family that samples go to next."""
    m = (OPENMETRICS_DESCRIPTOR if openmetrics else TEXT_DESCRIPTOR).fullmatch(line)
    if not m:
        _expect(not openmetrics, number, line, "OpenMetrics allows only HELP, TYPE, UNIT, EOF")
        return family  # a plain comment of the text format
    kind, name, rest = m.group(1), m.group(2), m.group(3) or ""
    if family is None or family.name != name or family.samples:
        _expect(name not in families, number, line, "family %s described twice" % name)
        family = families[name] = Family(name)
    if kind == "HELP":
        _expect(family.help is None, number, line, "second HELP")
        family.help = _unescape(rest, number, line, quote=openmetrics)
    elif kind == "TYPE":
        _expect(family.type is None, number, line, "second TYPE")
        _expect(rest in (OPENMETRICS_TYPES if openmetrics else TEXT_TYPES), number, line,
                "unknown type")
        family.type = rest
    else:
        _expect(family.unit is None, number, line, "second UNIT")
        family.unit = rest
    return family


def _sample(line, number, openmetrics):
    m = SAMPLE.fullmatch(line)
    _expect(m, number, line, "not a sample line")
    name, labels, value, timestamp, ex_labels, ex_value, ex_timestamp = m.groups()
    exemplar = None
    if ex_labels is not None:
        _expect(openmetrics, number, line, "exemplars are OpenMetrics only")
        exemplar = Exemplar(_labels(ex_labels, number, line), float(ex_value),
                            _number(ex_timestamp))
    return Sample(name, _labels(labels, number, line), float(value), _number(timestamp),
                  exemplar)


def _number(text):
    return None if text is None else float(text)


def _labels(text, number, line):
    """{label: value} of a '{a="x",b="y"}' that SAMPLE matched (None: no braces)."""
    pairs = LABEL.findall(text or "")
    names = [k for k, _ in pairs]
    _expect(len(names) == len(set(names)), number, line, "a label twice")
    return {k: _unescape(v, number, line, quote=True) for k, v in pairs}


def _unescape(text, number, line, quote):
    """Label values escape \\\\, \\" and \\n; HELP text the same in OpenMetrics,
    all but \\" in the text format."""
    def one(m):
        _expect(m.group(0) in ESCAPES and (quote or m.group(0) != '\\"'), number, line,
                "undefined escape %s" % m.group(0))
        return ESCAPES[m.group(0)]
    return re.sub(r"\\.?", one, text)


def _expect(cond, number, line, what):
    if not cond:
        raise AssertionError("exposition line %s: %s: %r" % (number, what, line))
