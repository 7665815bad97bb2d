"""Trims LiteLLM's model price table to what Tandem reads (see NOTICE.md).

Usage: python3 trim_prices.py <model_prices_and_context_window_backup.json>
Writes model_prices.json beside this script, one model per line, sorted.
"""

import json
import os
import sys

FIELDS = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "output_cost_per_reasoning_token",
    "max_input_tokens",
    "max_output_tokens",
    "max_tokens",
    "supports_function_calling",
    "supports_vision",
    "supports_reasoning",
    "supports_prompt_caching",
    "litellm_provider",
    "mode",
]
MODES = {"chat", "responses"}
COUNTS = ["max_input_tokens", "max_output_tokens", "max_tokens"]


def trim(source):
    out = {}
    for name, entry in source.items():
        if name == "sample_spec" or not isinstance(entry, dict):
            continue
        if entry.get("mode") not in MODES:
            continue
        kept = {f: entry[f] for f in FIELDS if entry.get(f) is not None}
        for field in COUNTS:
            if field in kept and not isinstance(kept[field], int):
                try:
                    kept[field] = int(kept[field])
                except (TypeError, ValueError):
                    del kept[field]
        out[name] = kept
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        table = trim(json.load(f))
    lines = [
        json.dumps(name) + ":" + json.dumps(table[name], separators=(",", ":"))
        for name in sorted(table)
    ]
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model_prices.json")
    with open(target, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    main()
