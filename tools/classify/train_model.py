#!/usr/bin/env python3
"""Trains the classifier's learned write veto (a logistic regression) on
every labelled set, judges it by leave-one-set-out cross-validation, and
writes its weights into src/classify/learned_weights.cc.

Usage (from the repository root, after building toolcache):
  tools/classify/train_model.py --toolcache build/apps/toolcache/toolcache

Python 3 stdlib only; deterministic (fixed order, full-batch gradient
descent, no randomness). Method and figures: docs/CLASSIFY.md, "Session 16:
the model on every set, leave-one-set-out".

Corpus: every set under tests/data/classify with labels.csv (all of them
seen by the rules by now, so all are training data). The honest estimate
of "a set it never saw" is leave-one-set-out (LOSO): each outer fold holds
out one set (the three bfcl_live draws together, one population), trains
on the rest and chooses the threshold from the training sets alone (inner
out-of-fold scores, INNER_K folds grouped by set); then one fold per
population (all npm sets, all BFCL sets; tau2 and agents_builtin are
single-set folds already).
Features (binary, the same in src/classify/learned.cc; keep them in step):
  n:<token>  a name token (TokenizeName: split on non-alphanumerics and
             camelCase, lowercased), v:<token> the name's first token,
  d:<word>   a word of the title or description (runs of ASCII letters,
             lowercased, >= 2 letters, the first 80 words),
  f:<word>   the description's first word,
  p:<token>  a token of a top-level input property name,
  q:<word>   a word of a top-level property's description (first 30).
Model: P(write) = sigmoid(bias + sum of the weights of present features);
features seen in fewer than MIN_COUNT training tools are dropped; L2
strength fixed at LAMBDA (not chosen per fold: with the gradient's 1/n
scaling it shrinks a weight by ~3e-5 per step; the 400 steps are the
regulariser).
Threshold (the veto turns a tool the heuristic calls INFORMATIONAL into
COMMAND when P(write) >= threshold): the smallest value on GRID whose
out-of-fold cost on the training sets is at most COST of the reads the
heuristic calls INFORMATIONAL (COST 0.1 %; 1 % was measured first and
cost reads on six sets for no write caught), i.e. the net that catches the
most writes at a bounded recall cost; the shipped threshold is the same
rule on the pooled LOSO scores of every set; the "zero writes" alternative (the largest
value vetoing every training write the heuristic would cache, x MARGIN,
capped at CAP) is reported beside it. Promotion (studied, not shipped):
see --study.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

SETS = "tests/data/classify"
NPM = ["npm_servers", "npm_servers_fresh", "npm_servers_fresh2",
       "npm_servers_fresh3", "npm_servers_fresh4", "npm_servers_fresh5",
       "npm_servers_fresh6", "npm_servers_fresh7", "npm_servers_fresh8",
       "npm_servers_heldout2", "npm_servers_wide"]
BFCL_LIVE = ["bfcl_live", "bfcl_live2", "bfcl_live3"]
OTHER = ["bfcl_multi_turn", "tau2", "agents_builtin"]
ALL_SETS = sorted(NPM + BFCL_LIVE + OTHER)
# Outer folds: (name, held-out sets). The three bfcl_live draws are one
# population sample split three ways: held out together.
SET_FOLDS = ([(s, [s]) for s in NPM] + [("bfcl_live*", BFCL_LIVE)] +
             [(s, [s]) for s in OTHER])
POPULATION_FOLDS = [("npm (11 sets)", NPM),
                    ("bfcl (live* + multi_turn)", BFCL_LIVE + ["bfcl_multi_turn"]),
                    ("tau2", ["tau2"]), ("agents_builtin", ["agents_builtin"])]
MIN_COUNT = 2
LAMBDA = 0.3
ITERS = 400
LR = 0.5
INNER_K = 2
GRID = [x / 100 for x in range(30, 100, 5)]
COST = 0.001
CAP = 0.5
MARGIN = 0.9
# Studied (--extended): g:<word> of the description before its first '.'
# (the first 12), y:<type> of each top-level property.
EXTENDED = False
WRITE_WEIGHT = 1.0
PROMOTE_GRID = [0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2]


def is_alnum(c):
    return (48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122)


def tokenize_name(name):
    """classify::TokenizeName on bytes (ASCII ctype, C locale)."""
    b = name.encode("utf-8")
    out, cur = [], bytearray()
    for i, c in enumerate(b):
        if not is_alnum(c):
            if cur:
                out.append(cur.decode())
                cur = bytearray()
            continue
        if 65 <= c <= 90 and cur:
            prev = b[i - 1]
            nxt_lower = i + 1 < len(b) and 97 <= b[i + 1] <= 122
            if (97 <= prev <= 122) or (48 <= prev <= 57) or (
                    65 <= prev <= 90 and nxt_lower):
                out.append(cur.decode())
                cur = bytearray()
        cur.append(c + 32 if 65 <= c <= 90 else c)
    if cur:
        out.append(cur.decode())
    return out


def words(text, limit):
    """Runs of ASCII letters, lowercased, >= 2 letters, the first `limit`."""
    out, cur = [], bytearray()
    for c in text.encode("utf-8") + b" ":
        if 65 <= c <= 90:
            cur.append(c + 32)
        elif 97 <= c <= 122:
            cur.append(c)
        else:
            if len(cur) >= 2:
                out.append(cur.decode())
                if len(out) == limit:
                    return out
            cur = bytearray()
    return out


def features(tool):
    f = set()
    toks = tokenize_name(tool.get("name", ""))
    for t in toks:
        f.add("n:" + t)
    if toks:
        f.add("v:" + toks[0])
    desc = tool.get("description") or ""
    title = tool.get("title") or ""
    dw = words(title + " " + desc if title else desc, 80)
    for w in dw:
        f.add("d:" + w)
    first = words(desc, 1)
    if first:
        f.add("f:" + first[0])
    if EXTENDED:
        for w in words(desc.split(".", 1)[0], 12):
            f.add("g:" + w)
    schema = tool.get("inputSchema") or tool.get("input_schema") or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict):
        for key, p in props.items():
            for t in tokenize_name(key):
                f.add("p:" + t)
            if isinstance(p, dict) and isinstance(p.get("description"), str):
                for w in words(p["description"], 30):
                    f.add("q:" + w)
            if EXTENDED and isinstance(p, dict):
                ty = p.get("type")
                for x in (ty if isinstance(ty, list) else [ty]):
                    if isinstance(x, str):
                        f.add("y:" + x)
    return f


def read_csv(path):
    import csv
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def run_json(args):
    res = subprocess.run(args, check=True, capture_output=True, text=True)
    return [json.loads(line) for line in res.stdout.splitlines() if line]


def load(set_name, toolcache):
    """The set's tools with their labels, features and the binary's own
    verdicts: the heuristic alone (`--eval-set DIR --no-model`: INFORMATIONAL
    or not, cacheable or not) and, per tool (`classify FILE --no-model
    --no-annotations`), whether a hard veto decided it."""
    d = os.path.join(SETS, set_name)
    halves = {r["server"]: r["half"] for r in read_csv(d + "/split.csv")}
    labels = {(r["server"], r["tool"]): r["label"]
              for r in read_csv(d + "/labels.csv")}
    lost, info_writes, cacheable_writes = set(), set(), set()
    for j in run_json([toolcache, "classify", "--eval-set", d, "--format",
                       "json", "--no-model"]):
        lost.update(j["reads_lost"])
        info_writes.update(j["writes_informational"])
        cacheable_writes.update(j["writes_cacheable"])
    shipped = {"lost": set(), "info": set(), "cacheable": set()}
    for j in run_json([toolcache, "classify", "--eval-set", d, "--format",
                       "json"]):
        shipped["lost"].update(j["reads_lost"])
        shipped["info"].update(j["writes_informational"])
        shipped["cacheable"].update(j["writes_cacheable"])
    out = []
    for server, half in sorted(halves.items()):
        path = os.path.join(d, server + ".json")
        with open(path) as fh:
            data = json.load(fh)
        tools = data["tools"] if isinstance(data, dict) else data
        verdicts = {v["name"]: v for v in run_json(
            [toolcache, "classify", path, "--format", "json", "--no-model",
             "--no-annotations", "--server", server])}
        for t in tools:
            key = server + "/" + t["name"]
            write = labels[(server, t["name"])] == "write"
            v = verdicts[t["name"]]
            info = (key in info_writes) if write else (key not in lost)
            if info != (v["request_type"] == "INFORMATIONAL"):
                print("note: %s per-tool verdict %s differs from --eval-set" %
                      (key, v["request_type"]), file=sys.stderr)
            out.append({
                "set": set_name, "half": half, "server": server,
                "name": t["name"], "key": key, "write": write,
                "features": features(t), "h_info": info,
                "h_cacheable": write and key in cacheable_writes,
                "hard": "(hard veto)" in v["detail"],
                "detail": v["detail"],
                "s_info": ((key in shipped["info"]) if write
                           else (key not in shipped["lost"])),
                "s_cacheable": write and key in shipped["cacheable"]})
    return out


def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def make_vocab(examples):
    count = {}
    for e in examples:
        for f in e["features"]:
            count[f] = count.get(f, 0) + 1
    return sorted(f for f, c in count.items() if c >= MIN_COUNT)


def train(examples, lam=LAMBDA):
    """Full-batch gradient descent on the L2-penalised log-loss. Sparse:
    rows hold feature indices, columns the rows holding a feature."""
    vocab = make_vocab(examples)
    index = {f: i for i, f in enumerate(vocab)}
    rows = [[index[f] for f in sorted(e["features"]) if f in index]
            for e in examples]
    ys = [1.0 if e["write"] else 0.0 for e in examples]
    # Cost-sensitive (studied, --write-weight): a write the heuristic calls
    # INFORMATIONAL is the error the veto exists for.
    cs = [WRITE_WEIGHT if e["write"] and e["h_info"] else 1.0
          for e in examples]
    cols = [[] for _ in vocab]
    for r, idx in enumerate(rows):
        for i in idx:
            cols[i].append(r)
    w = [0.0] * len(vocab)
    b = 0.0
    n = len(rows)
    for _ in range(ITERS):
        wg = w.__getitem__
        g = [(sigmoid(b + sum(map(wg, idx))) - y) * c
             for idx, y, c in zip(rows, ys, cs)]
        gg = g.__getitem__
        b -= LR * sum(g) / n
        w = [wi - LR * (sum(map(gg, c)) / n + lam * wi / n)
             for wi, c in zip(w, cols)]
    return dict(zip(vocab, w)), b


def score(model, feats):
    w, b = model
    z = b  # the same order of additions as learned.cc's ScoreTool
    for f in sorted(feats):
        z += w.get(f, 0.0)
    return sigmoid(z)


def units(sets):
    """Training units for inner folds: a set, or the bfcl_live draws."""
    out, live = [], [s for s in sets if s in BFCL_LIVE]
    if live:
        out.append(live)
    out += [[s] for s in sets if s not in BFCL_LIVE]
    return out


def inner_oof(train_examples, sets):
    """Out-of-fold scores of the training tools: INNER_K folds grouped by
    set, balanced by tool count (largest unit first to the smallest fold;
    ties by name)."""
    size = {}
    for e in train_examples:
        size[e["set"]] = size.get(e["set"], 0) + 1
    us = sorted(units(sets), key=lambda u: (-sum(size.get(s, 0) for s in u),
                                            u[0]))
    folds = [[] for _ in range(INNER_K)]
    load_ = [0] * INNER_K
    for u in us:
        k = min(range(INNER_K), key=lambda i: (load_[i], i))
        folds[k] += u
        load_[k] += sum(size.get(s, 0) for s in u)
    oof = {}
    for held in folds:
        hs = set(held)
        m = train([e for e in train_examples if e["set"] not in hs])
        for e in train_examples:
            if e["set"] in hs:
                oof[e["key"], e["set"]] = score(m, e["features"])
    return oof


def choose_veto(examples, scores):
    """Both veto rules on (out-of-fold) training scores."""
    reads_info = [scores[e["key"], e["set"]] for e in examples
                  if not e["write"] and e["h_info"]]
    n_reads = sum(not e["write"] for e in examples)
    cost = next((t for t in GRID
                 if sum(s >= t for s in reads_info) <= COST * n_reads),
                GRID[-1])
    chase = [scores[e["key"], e["set"]] for e in examples if e["h_cacheable"]]
    if chase:
        zero = min([CAP] + [s * MARGIN for s in chase])
    else:
        zero = next((t for t in GRID if t >= CAP and
                     all(s < t for s in reads_info)), GRID[-1])
    return {"cost": cost, "zero": zero}


def choose_promotion(examples, scores):
    """The largest PROMOTE_GRID value below which no training write the
    heuristic leaves COMMAND (no hard veto) scores out of fold; 0 if none."""
    eligible = [scores[e["key"], e["set"]] for e in examples
                if e["write"] and not e["h_info"] and not e["hard"]]
    ok = [t for t in PROMOTE_GRID if all(s >= t for s in eligible)]
    return max(ok) if ok else 0.0


def figures(examples, scores=None, veto=None, promote=0.0, shipped=False):
    """writes cacheable, writes INFORMATIONAL, read recall (+ promoted
    writes and reads) of the heuristic plus a veto/promotion, as the binary
    composes them: a veto only turns INFORMATIONAL into COMMAND; a
    promotion only turns a COMMAND no hard veto decided into
    INFORMATIONAL."""
    r = {"tools": len(examples), "reads": 0, "writes_cacheable": [],
         "writes_info": [], "reads_info": 0, "promoted_writes": [],
         "promoted_reads": 0, "vetoed_reads": 0}
    for e in examples:
        s = scores[e["key"], e["set"]] if scores is not None else None
        if shipped:
            info, cacheable = e["s_info"], e["s_cacheable"]
        else:
            info, cacheable = e["h_info"], e["h_cacheable"]
            if info and veto is not None and s >= veto:
                info = cacheable = False
                r["vetoed_reads"] += not e["write"]
            elif not info and not e["hard"] and s is not None and s < promote:
                info = True
                if e["write"]:
                    r["promoted_writes"].append(e["key"])
                    cacheable = True  # counted as cacheable: the worst case
                else:
                    r["promoted_reads"] += 1
        if e["write"]:
            if info:
                r["writes_info"].append(e["key"])
            if cacheable:
                r["writes_cacheable"].append(e["key"])
        else:
            r["reads"] += 1
            r["reads_info"] += info
    r["recall"] = r["reads_info"] / max(1, r["reads"])
    return r


def fmt(r):
    return "%d / %d / %.3f" % (len(r["writes_cacheable"]), len(r["writes_info"]),
                               r["recall"])


def emit_cc(path, model, threshold, n_tools, n_writes):
    w, b = model
    lines = [
        "// GENERATED by tools/classify/train_model.py; do not edit by hand.",
        "// The learned write veto's weights (docs/CLASSIFY.md, \"Session 16:",
        "// the model on every set, leave-one-set-out\"). Regenerate:",
        "//   tools/classify/train_model.py --toolcache "
        "build/apps/toolcache/toolcache",
        "//",
        "// Invariants: kWeights is sorted by feature (binary search); the",
        "// threshold was chosen from leave-one-set-out scores (each tool",
        "// scored by a model that never saw its set), never in-sample.",
        "// Trained on every labelled set: %d tools (%d writes); L2 %g fixed;"
        % (n_tools, n_writes, LAMBDA),
        "// %d features seen in >= %d tools." % (len(w), MIN_COUNT),
        "#include \"src/classify/learned.h\"",
        "",
        "namespace toolcache::classify {",
        "",
        "const double kLearnedBias = %r;" % b,
        "const double kLearnedThreshold = %r;" % threshold,
        "",
        "const LearnedWeight kLearnedWeights[] = {",
    ]
    for f in sorted(w):
        lines.append("    {%s, %r}," % (json.dumps(f), w[f]))
    lines += ["};", "",
              "const size_t kLearnedWeightCount =",
              "    sizeof(kLearnedWeights) / sizeof(kLearnedWeights[0]);", "",
              "}  // namespace toolcache::classify", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def curve(examples, scores, log):
    """What each threshold would have done to every set, each tool scored
    by the LOSO model that never saw its set."""
    chase = [e for e in examples if e["h_cacheable"]]
    winfo = [e for e in examples if e["write"] and e["h_info"]]
    rinfo = [e for e in examples if not e["write"] and e["h_info"]]
    n_reads = sum(not e["write"] for e in examples)
    log("veto (LOSO scores, all %d sets pooled; the heuristic alone: %d "
        "writes cacheable, %d writes INFORMATIONAL, %d of %d reads "
        "INFORMATIONAL)" % (len(ALL_SETS), len(chase), len(winfo),
                            len(rinfo), n_reads))
    log("| threshold | writes cacheable vetoed | writes INFORMATIONAL vetoed "
        "| reads vetoed | pooled read recall |")
    log("|---|---|---|---|---|")
    for t in [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99]:
        sc = lambda e: scores[e["key"], e["set"]]
        rv = sum(sc(e) >= t for e in rinfo)
        log("| %.2f | %d | %d | %d | %.3f |" % (
            t, sum(sc(e) >= t for e in chase), sum(sc(e) >= t for e in winfo),
            rv, (len(rinfo) - rv) / n_reads))
    log("the heuristic's writes cacheable, LOSO P(write): " + ", ".join(
        "%s %.3f" % (e["key"], scores[e["key"], e["set"]]) for e in chase))
    el_w = [scores[e["key"], e["set"]] for e in examples
            if e["write"] and not e["h_info"] and not e["hard"]]
    el_r = [scores[e["key"], e["set"]] for e in examples
            if not e["write"] and not e["h_info"] and not e["hard"]]
    log("promotion (reads and writes the heuristic leaves COMMAND with no "
        "hard veto: %d writes, %d reads)" % (len(el_w), len(el_r)))
    log("| P(write) below | writes promoted | reads promoted | pooled read "
        "recall |")
    log("|---|---|---|---|")
    for t in PROMOTE_GRID + [0.3, 0.5]:
        pr = sum(s < t for s in el_r)
        log("| %.3f | %d | %d | %.3f |" % (
            t, sum(s < t for s in el_w), pr, (len(rinfo) + pr) / n_reads))


def loso(examples, folds, nested, log):
    """Outer folds: a model per fold on the other sets; its scores of the
    held-out sets; with `nested`, the thresholds chosen from the training
    sets' inner out-of-fold scores."""
    scores, rows = {}, []
    for name, held in folds:
        hs = set(held)
        tr = [e for e in examples if e["set"] not in hs]
        te = [e for e in examples if e["set"] in hs]
        t0 = time.time()
        m = train(tr)
        fold_scores = {(e["key"], e["set"]): score(m, e["features"]) for e in te}
        scores.update(fold_scores)
        row = {"fold": name, "held": held}
        if nested:
            sets = sorted({e["set"] for e in tr})
            oof = inner_oof(tr, sets)
            row["veto"] = choose_veto(tr, oof)
            row["promote"] = choose_promotion(tr, oof)
            row["scores"] = fold_scores
        rows.append(row)
        log("fold %-26s %5d train %4d held out  %.0f s%s" % (
            name, len(tr), len(te), time.time() - t0,
            ("  veto cost %.2f zero %.3f promote %.3f" % (
                row["veto"]["cost"], row["veto"]["zero"], row["promote"])
             if nested else "")))
    return scores, rows


def main():
    global ITERS, EXTENDED, COST, WRITE_WEIGHT
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolcache", required=True)
    ap.add_argument("--out", default="src/classify/learned_weights.cc")
    ap.add_argument("--scores", default=SETS + "/model/scores.csv")
    ap.add_argument("--study", action="store_true",
                    help="nested LOSO: per-set and per-population figures "
                    "of the heuristic, the shipped veto and the variants")
    ap.add_argument("--report", help="with --study: the figures as JSON")
    ap.add_argument("--no-write", action="store_true",
                    help="do not regenerate the weights and scores.csv")
    ap.add_argument("--iters", type=int, default=ITERS,
                    help="gradient steps (default %d; fewer for a smoke "
                    "run only)" % ITERS)
    ap.add_argument("--extended", action="store_true",
                    help="add the studied g: and y: features")
    ap.add_argument("--cost", type=float, default=COST,
                    help="the veto's read budget (default %g)" % COST)
    ap.add_argument("--write-weight", type=float, default=WRITE_WEIGHT,
                    help="studied: the weight of a write the heuristic calls "
                    "INFORMATIONAL in the loss (default %g)" % WRITE_WEIGHT)
    args = ap.parse_args()
    WRITE_WEIGHT = args.write_weight
    COST = args.cost
    ITERS = args.iters
    EXTENDED = args.extended

    def log(msg):
        print(msg, flush=True)

    examples = []
    for s in ALL_SETS:
        examples += load(s, args.toolcache)
    log("%d tools (%d writes) in %d sets" % (
        len(examples), sum(e["write"] for e in examples), len(ALL_SETS)))

    # Leave-one-set-out scores: every tool scored by a model that never saw
    # its set (the bfcl_live draws held out together).
    oof, rows = loso(examples, SET_FOLDS, args.study, log)
    curve(examples, oof, log)
    shipped_rule = choose_veto(examples, oof)
    threshold = shipped_rule["cost"]
    log("threshold from the LOSO scores of all sets: cost rule %.2f, "
        "zero-writes rule %.3f; shipped: %.2f" % (
            shipped_rule["cost"], shipped_rule["zero"], threshold))

    if args.study:
        report = []
        by_set = {}
        for e in examples:
            by_set.setdefault(e["set"], []).append(e)
        for row in rows:
            sub = []
            for s in row["held"]:
                ex = by_set[s]
                sub.append((s, ex))
            if len(row["held"]) > 1:
                sub.append((row["fold"], [e for s in row["held"]
                                          for e in by_set[s]]))
            for label, ex in sub:
                sc = row["scores"]
                r = {"set": label,
                     "heuristic": figures(ex),
                     "shipped": figures(ex, shipped=True),
                     "veto_cost": figures(ex, sc, veto=row["veto"]["cost"]),
                     "veto_zero": figures(ex, sc, veto=row["veto"]["zero"]),
                     "promote": figures(ex, sc, veto=row["veto"]["cost"],
                                        promote=row["promote"]),
                     "thresholds": [row["veto"]["cost"], row["veto"]["zero"],
                                    row["promote"]]}
                report.append(r)
        _, prow = loso(examples, POPULATION_FOLDS[:2], True, log)
        for row in prow + [r for r in rows if r["fold"] in ("tau2",
                                                             "agents_builtin")]:
            ex = [e for s in row["held"] for e in by_set[s]]
            sc = row["scores"]
            report.append({
                "set": "POP " + row["fold"],
                "heuristic": figures(ex), "shipped": figures(ex, shipped=True),
                "veto_cost": figures(ex, sc, veto=row["veto"]["cost"]),
                "veto_zero": figures(ex, sc, veto=row["veto"]["zero"]),
                "promote": figures(ex, sc, veto=row["veto"]["cost"],
                                   promote=row["promote"]),
                "thresholds": [row["veto"]["cost"], row["veto"]["zero"],
                               row["promote"]]})
        log("\n| held out | tools | reads | heuristic alone | shipped veto "
            "(0.90) | LOSO veto, cost rule | LOSO veto, zero-writes rule | "
            "+ promotion (writes promoted) | thresholds cost / zero / "
            "promote |")
        log("|---|---|---|---|---|---|---|---|---|")
        for r in report:
            h = r["heuristic"]
            log("| %s | %d | %d | %s | %s | %s | %s | %s (%d; +%d reads) | "
                "%.2f / %.3f / %.3f |" % (
                    r["set"], h["tools"], h["reads"], fmt(h), fmt(r["shipped"]),
                    fmt(r["veto_cost"]), fmt(r["veto_zero"]), fmt(r["promote"]),
                    len(r["promote"]["promoted_writes"]),
                    r["promote"]["promoted_reads"], *r["thresholds"]))
        log("\ncells: writes cacheable / writes INFORMATIONAL / read recall")
        for r in report:
            for k in ("heuristic", "veto_cost", "veto_zero", "promote"):
                if r[k]["writes_cacheable"] or r[k]["promoted_writes"]:
                    log("%s %s: cacheable %s promoted %s" % (
                        r["set"], k, r[k]["writes_cacheable"],
                        r[k]["promoted_writes"]))
        if args.report:
            with open(args.report, "w") as fh:
                json.dump(report, fh, indent=1, sort_keys=True)

    if args.no_write:
        return
    model = train(examples)
    emit_cc(args.out, model, threshold, len(examples),
            sum(e["write"] for e in examples))
    os.makedirs(os.path.dirname(args.scores), exist_ok=True)
    with open(args.scores, "w") as fh:
        fh.write("set,server,tool,part,score\n")
        for e in examples:
            fh.write("%s,%s,%s,train,%.12f\n" % (
                e["set"], e["server"], e["name"],
                score(model, e["features"])))
    final = {(e["key"], e["set"]): score(model, e["features"]) for e in examples}
    r = figures(examples, final, veto=threshold)
    log("in-sample, every set, heuristic + the shipped veto: %s" % fmt(r))


if __name__ == "__main__":
    main()
