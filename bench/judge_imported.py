#!/usr/bin/env python3
"""Judge every case of a `flashproof export` directory under several implementations, as a fuzz
campaign directory that `flashproof report` reads (docs/exchange.md).

For each case of EXPORT/index.json and each implementation, the case's case.json with "impl" set
is saved under OUT/case-files/ and re-run with `flashproof replay FILE --json`, with
FLASHPROOF_IMPORT=EXPORT so that imported:<backend> implementations exist. Each result becomes one
line of OUT/cases.jsonl in the fuzz record format (docs/fuzz.md), with the export's index, kind and
logit scale; OUT/campaign.json names the export's parameters. A case an implementation does not
support (a backend refused it: no o.bin) gets no record, as in a campaign. Running the same
command again skips the (index, implementation) pairs already recorded.

Needs only the Python standard library. Exit status: 0 when no record failed or crashed, 1 when
one did, 2 for bad input.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

from exchange_index import checked_entries

UNSUPPORTED = "does not support this case"


def fail_usage(message):
    print(f"judge_imported: {message}", file=sys.stderr)
    sys.exit(2)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail_usage(f"{path}: {e}")


def done_pairs(cases_jsonl):
    done = set()
    if os.path.exists(cases_jsonl):
        with open(cases_jsonl, encoding="utf-8") as f:
            for line in f:
                try:
                    r = json.loads(line)
                    done.add((r["index"], r["impl"]))
                except (ValueError, KeyError):
                    pass  # a line cut short by a kill: run that pair again
    return done


def write_campaign_json(out, export_dir, index, impls):
    params = dict(index.get("parameters", {}))
    params.update({"impls": impls, "minutes": None, "shard": {"index": 0, "count": 1},
                   "exported_from": os.path.abspath(export_dir)})
    campaign = {"format": "flashproof-campaign", "version": 1, "parameters": params,
                "commit": "unknown", "machine": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path = os.path.join(out, "campaign.json")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(campaign, f, indent=2)
            f.write("\n")


def judge(args, entry, impl, case_files):
    """One (case, implementation): the fuzz record's dict, or None when unsupported."""
    case = read_json(os.path.join(args.export_dir, entry["directory"], "case.json"))
    case["impl"] = impl
    case_file = os.path.join(case_files, f"{entry['index']}-{impl.replace(':', '_')}.json")
    with open(case_file, "w", encoding="utf-8") as f:
        json.dump(case, f, indent=2)
        f.write("\n")
    env = dict(os.environ, FLASHPROOF_IMPORT=os.path.abspath(args.export_dir))
    command = [args.flashproof, "replay", case_file, "--json"]
    if args.threads:
        command += ["--threads", str(args.threads)]
    start = time.monotonic()
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if run.returncode == 2 and UNSUPPORTED in run.stderr:
        return None
    record, status, error = None, "crash", ""
    if run.returncode in (0, 1, 5):  # 5: failed by the second tier's baseline rule
        try:
            record = json.loads(run.stdout)
            status = record["verdict"]
        except (ValueError, KeyError):
            record, error = None, "replay printed no JSON record"
    if record is None and not error:
        lines = [l for l in run.stderr.splitlines() if l.strip()]
        error = lines[-1] if lines else f"replay exited with status {run.returncode}"
    if status in ("fail", "fail (baseline rule)") and record:
        reasons = [f"{t['name']}: {t['reasons'][0]}" for t in record["tensors"] if t.get("reasons")]
        error = reasons[0] if reasons else ""
    kept = status in ("fail", "fail (baseline rule)", "crash")
    rs = record["seconds"] if record else {}
    return {"format": "flashproof-fuzz-record", "version": 1,
            "campaign_seed": str(args.seed), "index": entry["index"], "impl": impl,
            "where": record["case"]["where"] if record else "", "status": status,
            "kind": entry.get("kind", "?"), "logit_scale": entry.get("logit_scale", 0),
            "case": case, "record": record, "error": error,
            "failure_file": case_file if kept else "",
            "replay": f"FLASHPROOF_IMPORT={os.path.abspath(args.export_dir)} flashproof replay {case_file}"
            if kept else "",
            "seconds": {"total": seconds, "impl": rs.get("impl", 0), "reference": rs.get("reference", 0),
                        "bounds": rs.get("bounds", 0)}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export_dir", help="a directory written by `flashproof export`")
    parser.add_argument("--impl", required=True,
                        help="comma-separated implementations, e.g. imported:torch-flash,fa2")
    parser.add_argument("--out", required=True, help="the campaign directory to write")
    parser.add_argument("--flashproof", default="flashproof", help="the flashproof binary")
    parser.add_argument("--threads", type=int, default=0, help="reference threads per check (0: all)")
    args = parser.parse_args()
    impls = [i for i in args.impl.split(",") if i]
    if not impls:
        fail_usage("--impl needs at least one implementation")
    index = read_json(os.path.join(args.export_dir, "index.json"))
    if index.get("format") != "flashproof-exchange-index":
        fail_usage(f"{args.export_dir}/index.json is not a flashproof export index")
    try:
        entries = checked_entries(index)
    except ValueError as e:
        fail_usage(f"{args.export_dir}/{e}")
    args.seed = index.get("parameters", {}).get("seed", "0")
    case_files = os.path.join(args.out, "case-files")
    os.makedirs(case_files, exist_ok=True)
    write_campaign_json(args.out, args.export_dir, index, impls)
    cases_jsonl = os.path.join(args.out, "cases.jsonl")
    done = done_pairs(cases_jsonl)
    counts = {"pass": 0, "fail": 0, "out-of-domain": 0, "not-judged": 0, "pass (baseline rule)": 0,
              "fail (baseline rule)": 0, "crash": 0, "unsupported": 0}
    with open(cases_jsonl, "a", encoding="utf-8") as log:
        for entry in entries:
            for impl in impls:
                if (entry["index"], impl) in done:
                    continue
                line = judge(args, entry, impl, case_files)
                if line is None:
                    counts["unsupported"] += 1
                    continue
                counts[line["status"]] += 1
                log.write(json.dumps(line) + "\n")
                log.flush()
                os.fsync(log.fileno())
    print("judge_imported: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
          f"; records in {cases_jsonl}; report: flashproof report {args.out} --out {args.out}/report")
    sys.exit(1 if counts["fail"] + counts["crash"] + counts["fail (baseline rule)"] else 0)


if __name__ == "__main__":
    main()
