"""Parses Prometheus text exposition (stdin) with the official Python client's parser (Debian's
python3-prometheus-client) and prints the families as JSON: name, type, help and samples. Exits 1 with the
parser's message when the text does not parse."""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def main() -> int:
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as err:  # the parser raises ValueError (and others) on malformed text
        print(f"prometheus_client could not parse the exposition: {err!r}", file=sys.stderr)
        return 1
    out = []
    for f in families:
        out.append({
            "name": f.name,
            "type": f.type,
            "help": f.documentation,
            "samples": [
                {"name": s.name, "labels": s.labels, "value": None if math.isnan(s.value) else s.value}
                for s in f.samples
            ],
        })
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
