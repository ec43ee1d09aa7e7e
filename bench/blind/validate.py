#!/usr/bin/env python3
"""Validate a part file: python3 validate.py FILE.json  (prints counts, exits 1 on any problem)."""
import json, sys, collections

KINDS = {"instruction", "correction", "fact"}
SCOPES = {"personal", "project"}

def main(path):
    problems = []
    data = json.load(open(path, encoding="utf-8"))
    sessions = data.get("sessions")
    if not isinstance(sessions, list) or not sessions:
        sys.exit(f"{path}: top level must be {{\"sessions\": [...]}} with at least one session")
    ids = set(); turns = labels = negatives = 0; kinds = collections.Counter(); langs = collections.Counter()
    for s in sessions:
        sid = s.get("id")
        if not sid or sid in ids: problems.append(f"session id missing or repeated: {sid!r}")
        ids.add(sid)
        if set(s) - {"id", "voice", "turns", "lang"}: problems.append(f"{sid}: unknown session keys {set(s) - {'id','voice','turns','lang'}}")
        if not s.get("voice"): problems.append(f"{sid}: voice missing")
        langs[s.get("lang", "en")] += 1
        ts = s.get("turns")
        if not isinstance(ts, list) or not 1 <= len(ts) <= 3: problems.append(f"{sid}: 1-3 turns"); continue
        for n, t in enumerate(ts, 1):
            turns += 1
            where = f"{sid} turn {n}"
            extra = set(t) - {"user", "answer", "teach", "piped", "tool"}
            if extra: problems.append(f"{where}: unknown keys {extra}")
            if not isinstance(t.get("user"), str) or not t["user"].strip(): problems.append(f"{where}: user text missing")
            if not isinstance(t.get("answer"), str) or not t["answer"].strip(): problems.append(f"{where}: answer missing")
            for k in ("piped", "tool"):
                if k in t and (not isinstance(t[k], str) or not t[k].strip()): problems.append(f"{where}: {k} must be non-empty text")
            teach = t.get("teach")
            if not isinstance(teach, list): problems.append(f"{where}: teach must be a list ([] for none)"); continue
            negatives += not teach
            for l in teach:
                labels += 1
                if set(l) != {"kind", "statement", "standing", "scope"}: problems.append(f"{where}: a label has keys kind, statement, standing, scope: {l}"); continue
                if l["kind"] not in KINDS: problems.append(f"{where}: kind {l['kind']!r}")
                if l["scope"] not in SCOPES: problems.append(f"{where}: scope {l['scope']!r}")
                if not isinstance(l["standing"], bool): problems.append(f"{where}: standing must be true/false")
                if l["kind"] == "fact" and l["standing"] is not True: problems.append(f"{where}: facts are standing")
                if not isinstance(l["statement"], str) or l["statement"] not in t.get("user", ""):
                    problems.append(f"{where}: statement must be copied exactly from the user text: {l['statement']!r}")
                kinds[l["kind"]] += 1
            if n == 1 and any(l["kind"] == "correction" for l in teach): problems.append(f"{where}: a correction needs an earlier answer (not turn 1)")
    for p in problems: print("PROBLEM", p)
    print(f"{len(sessions)} sessions, {turns} turns, {negatives} negative turns, {labels} labels {dict(kinds)}")
    print("languages:", dict(langs.most_common()))
    sys.exit(1 if problems else 0)

if __name__ == "__main__":
    main(sys.argv[1])
