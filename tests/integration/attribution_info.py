"""Rewrites series as `gpuscope serve --attribution-labels info` writes them.

In series mode (the default) every GPU series carries its holder's labels
(namespace, pod, container, hpc_job, workload) and a GPU shared by several
holders has one copy of each series per holder. In info mode the GPU series
keep only device labels, once per GPU, and one gpuscope_gpu_holder_info series
per holder carries the attribution (src/export/render.h). `to_info_mode`
applies that rewrite to a promtool unit test document, so every shipped rule
test also runs against info-mode input with its expectations unchanged.
"""
import re

HOLDER_LABELS = ("namespace", "pod", "container", "hpc_job", "workload")
# Native device labels, in the order the renderer writes them.
DEVICE_LABELS = ("gpu", "uuid", "gpu_instance", "mig_profile", "compute_instance")
# Families whose namespace/pod/workload labels are their own (application KPIs
# from OTLP, the KPI diagnosis), not the GPU holder's, and the per-holder
# families that carry their holder's labels in both modes (holder info, the
# holder's SM share).
OWN_LABEL_PREFIXES = ("gpuscope_app_", "gpuscope_kpi_", "gpuscope_gpu_holder_")

_SERIES = re.compile(r'^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*$')
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def parse_series(text):
    """'name{a="x",b="y"}' -> (name, [(a, x), (b, y)])."""
    m = _SERIES.match(text)
    if not m:
        raise ValueError("not a series: %r" % text)
    labels, rest = [], m.group(2) or ""
    while rest.strip():
        lm = _LABEL.match(rest)
        if not lm:
            raise ValueError("bad labels in %r" % text)
        labels.append((lm.group(1), lm.group(2)))
        rest = rest[lm.end():]
    return m.group(1), labels


def format_series(name, labels):
    return name + "{" + ",".join('%s="%s"' % kv for kv in labels) + "}"


def sample_count(values):
    """How many samples a promtool values string expands to."""
    n = 0
    for token in values.split():
        m = re.match(r'^(.*?)x(\d+)$', token)
        if not m:
            n += 1
        elif m.group(1) == "_":
            n += int(m.group(2))
        else:
            n += int(m.group(2)) + 1
    return n


def is_holder_series(name, labels):
    keys = {k for k, _ in labels}
    return (":" not in name and not name.startswith(OWN_LABEL_PREFIXES)
            and bool(keys & {"uuid", "UUID"}) and bool(keys & set(HOLDER_LABELS)))


def to_info_series(input_series):
    """A list of {series, values} in series mode -> the same data in info mode:
    holder labels removed from GPU series (copies of a shared GPU's series
    folded into one), one gpuscope_gpu_holder_info per holder of a native
    series, present as long as the longest of its holder's series."""
    out, seen, holders = [], set(), {}
    for entry in input_series:
        name, labels = parse_series(entry["series"])
        if not is_holder_series(name, labels):
            out.append(entry)
            continue
        device = [(k, v) for k, v in labels if k not in HOLDER_LABELS]
        key = format_series(name, device)
        if key not in seen:
            seen.add(key)
            out.append({"series": key, "values": entry["values"]})
        if "uuid" not in {k for k, _ in labels}:
            continue  # a DCGM series: its native twin names the holder
        target = [(k, v) for k, v in labels if k not in DEVICE_LABELS + HOLDER_LABELS]
        dev = [(k, v) for k, v in labels if k in DEVICE_LABELS]
        who = [(k, v) for k, v in labels if k in HOLDER_LABELS]
        info = format_series("gpuscope_gpu_holder_info",
                             sorted(target) + dev + sorted(who, key=lambda kv: HOLDER_LABELS.index(kv[0])))
        holders[info] = max(holders.get(info, 0), sample_count(entry["values"]))
    for info, n in sorted(holders.items()):
        out.append({"series": info, "values": "1x%d" % max(n - 1, 0)})
    return out


def to_info_mode(doc):
    """A promtool unit test document, its input series rewritten to info mode."""
    for test in doc.get("tests", []):
        test["input_series"] = to_info_series(test.get("input_series", []))
    return doc
