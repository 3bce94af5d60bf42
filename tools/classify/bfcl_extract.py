#!/usr/bin/env python3
"""Derives a labelled eval set from BFCL's multi-turn function docs.

Usage: bfcl_extract.py FUNC_DOC_DIR OUT_DIR

FUNC_DOC_DIR: berkeley-function-call-leaderboard/bfcl_eval/data/
multi_turn_func_doc of ShishirPatil/gorilla (Apache-2.0), one JSON function
per line. Each file becomes OUT_DIR/bfcl-<file>.json ({"tools": [...]}:
name, description verbatim, inputSchema = parameters with "dict" -> "object";
the "response" schema is dropped). BFCL has no read/write labels: WRITES
below were labelled by hand, by the written rule of docs/CLASSIFY.md (write
if a call has any effect besides returning data, including session state:
cd, log in/out; ambiguous = write), from the names and descriptions only,
before the classifier was run on the set. Every other function is read.
All servers are in the half "test" (a set no rule or model saw).
"""
import csv
import json
import os
import sys

WRITES = {
    "cd": "changes the working directory", "cp": "copies a file",
    "echo": "writes content to a file when file_name is given",
    "mkdir": "creates a directory", "mv": "moves a file", "rm": "removes a file",
    "rmdir": "removes a directory", "touch": "creates a file",
    "sort": "ambiguous: may sort the file in place",
    "archival_memory_add": "adds to memory", "archival_memory_clear": "clears memory",
    "archival_memory_remove": "removes from memory",
    "archival_memory_replace": "replaces in memory",
    "core_memory_add": "adds to memory", "core_memory_clear": "clears memory",
    "core_memory_remove": "removes from memory",
    "core_memory_replace": "replaces in memory",
    "add_contact": "adds a contact", "delete_message": "deletes a message",
    "message_login": "logs in (session state)", "send_message": "sends",
    "authenticate_twitter": "logs in (session state)", "comment": "posts a comment",
    "follow_user": "follows", "mention": "mentions users in a tweet",
    "post_tweet": "posts", "retweet": "posts", "unfollow_user": "unfollows",
    "close_ticket": "closes", "create_ticket": "creates", "edit_ticket": "edits",
    "logout": "logs out (session state)", "resolve_ticket": "resolves",
    "ticket_login": "logs in (session state)",
    "add_to_watchlist": "adds", "cancel_order": "cancels", "fund_account": "pays in",
    "notify_price_change": "ambiguous: notifies", "place_order": "orders",
    "remove_stock_from_watchlist": "removes", "trading_login": "logs in",
    "trading_logout": "logs out", "withdraw_funds": "withdraws money",
    "authenticate_travel": "logs in (session state)", "book_flight": "books",
    "cancel_booking": "cancels", "contact_customer_support": "contacts a person",
    "purchase_insurance": "pays", "register_credit_card": "registers a card",
    "set_budget_limit": "sets a limit",
    "activateParkingBrake": "actuates the car", "adjustClimateControl": "actuates",
    "fillFuelTank": "actuates", "lockDoors": "actuates", "pressBrakePedal": "actuates",
    "releaseBrakePedal": "actuates", "setCruiseControl": "actuates",
    "setHeadlights": "actuates", "set_navigation": "sets the destination",
    "startEngine": "actuates",
}


def fix(schema):
    if isinstance(schema, dict):
        return {k: ("object" if k == "type" and v == "dict" else fix(v))
                for k, v in schema.items()}
    if isinstance(schema, list):
        return [fix(x) for x in schema]
    return schema


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    labels, split, used = [], [], set()
    for fname in sorted(os.listdir(src)):
        if not fname.endswith(".json"):
            continue
        server = "bfcl-" + fname[:-5].replace("_", "-")
        tools = []
        for line in open(os.path.join(src, fname)):
            if not line.strip():
                continue
            f = json.loads(line)
            tools.append({"name": f["name"], "description": f["description"],
                          "inputSchema": fix(f.get("parameters", {}))})
            w = f["name"] in WRITES
            used.add(f["name"])
            labels.append([server, f["name"], "write" if w else "read", "hand",
                           WRITES.get(f["name"], "returns data only")])
        with open(os.path.join(out, server + ".json"), "w") as fh:
            json.dump({"tools": tools}, fh, indent=1)
            fh.write("\n")
        split.append([server, "test", fname[:-5], "ShishirPatil/gorilla", "6ea5797",
                      "Apache-2.0"])
    missing = set(WRITES) - used
    if missing:
        sys.exit("labels for unknown functions: %s" % sorted(missing))
    with open(os.path.join(out, "labels.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["server", "tool", "label", "basis", "note"])
        w.writerows(labels)
    with open(os.path.join(out, "split.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["server", "half", "category", "package", "version", "licence"])
        w.writerows(split)


if __name__ == "__main__":
    main()
