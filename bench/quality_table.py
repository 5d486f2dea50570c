"""Per-page-type F1 table from the shared scorer's -per-page TSV.

Usage: python3 bench/quality_table.py GROUND_TRUTH.json PER_PAGE.tsv SETNAME

Aggregates as the scorer does: precision is averaged over pages with
non-empty output, recall over all pages, F1 = 2PR/(P+R). Prints a markdown
table, one row per tool: all pages, each page type, and the two halves of
the set split by page id parity (even ids / odd ids).
"""
import collections
import csv
import json
import sys

gt = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
name = sys.argv[3]


def f1(rs):
    if not rs:
        return float("nan")
    ps = [float(r["precision"]) for r in rs if int(r["pred_tokens"]) > 0]
    p = sum(ps) / len(ps) if ps else 0.0
    rec = sum(float(r["recall"]) for r in rs) / len(rs)
    return 2 * p * rec / (p + rec) if p + rec else 0.0


def half(i):
    digits = "".join(c for c in i if c.isdigit())
    return "even" if digits and int(digits) % 2 == 0 else "odd"


types = sorted({v.get("page_type", "") for v in gt.values()} - {""},
               key=lambda t: -sum(1 for v in gt.values() if v.get("page_type") == t))
by_tool = collections.defaultdict(list)
for r in rows:
    by_tool[r["tool"]].append(r)
cols = ["all"] + types + (["even ids", "odd ids"] if types else [])
print(f"\n{name} (F1, -drop-title)")
print("| tool | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for tool, rs in sorted(by_tool.items()):
    vals = [f1(rs)]
    for t in types:
        vals.append(f1([r for r in rs if gt[r["id"]].get("page_type") == t]))
    if types:
        vals.append(f1([r for r in rs if half(r["id"]) == "even"]))
        vals.append(f1([r for r in rs if half(r["id"]) == "odd"]))
    print(f"| {tool} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
