#!/usr/bin/env python3
"""Exports schedules with `bubblesim table --format chakra` and decodes every trace with protoc
and Chakra's schema (tests/data/chakra/schema, or CHAKRA_SCHEMA_DIR for the upstream
et_def.proto). Checks per rank: one COMP_NODE per op of the table (from `--format csv`), every
ctrl/data dependency names an earlier node of the same file, and every send has the receive with
the same tag on its peer (and the same size). Exits 77 (skipped) without protoc."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def split_stream(data):
    """The bodies of a varint-length-delimited message stream."""
    out, pos = [], 0
    while pos < len(data):
        length, shift = 0, 0
        while True:
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        out.append(data[pos:pos + length])
        pos += length
    return out


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def decode(path, schema_dir, here):
    """protoc's text of the file as a Trace message (metadata = field 1, nodes = field 2)."""
    messages = split_stream(open(path, "rb").read())
    framed = b"".join((b"\x0a" if i == 0 else b"\x12") + varint(len(m)) + m
                      for i, m in enumerate(messages))
    result = subprocess.run(
        ["protoc", "-I", schema_dir, "-I", here, "--decode=Trace", os.path.join(here, "trace.proto")],
        input=framed, capture_output=True, check=True)
    return result.stdout.decode()


def nodes_of(text):
    """Per node: id, type, deps, attrs (name -> value text)."""
    nodes = []
    for block in text.split("\nnode {")[1:]:
        node = {"id": 0, "type": "INVALID_NODE", "deps": [], "attrs": {}}
        m = re.search(r"^  id: (\d+)$", block, re.M)
        node["id"] = int(m.group(1)) if m else 0
        node["type"] = re.search(r"^  type: (\w+)$", block, re.M).group(1)
        node["deps"] = [int(d) for d in re.findall(r"^  (?:ctrl|data)_deps: (\d+)$", block, re.M)]
        for name, value in re.findall(r'attr \{\n\s+name: "([^"]+)"\n\s+\w+: ([^\n]+)\n', block):
            node["attrs"][name] = value
        nodes.append(node)
    return nodes


def check_schedule(args, schedule, work, schema_dir, here):
    folder = os.path.join(work, schedule)
    subprocess.run([args.bubblesim, "table", args.scenario, "--schedule", schedule, "--format",
                    "chakra", "-o", folder, "-q"], check=True)
    csv = subprocess.run([args.bubblesim, "table", args.scenario, "--schedule", schedule,
                          "--format", "csv"], check=True, capture_output=True, text=True).stdout
    ops = {}
    for line in csv.splitlines():
        if line and line[0].isdigit():
            ops[int(line.split(",")[0])] = ops.get(int(line.split(",")[0]), 0) + 1
    problems, sends, recvs = [], {}, {}
    for rank in sorted(ops):
        nodes = nodes_of(decode(os.path.join(folder, f"bubblesim.{rank}.et"), schema_dir, here))
        compute = sum(1 for n in nodes if n["type"] == "COMP_NODE")
        if compute != ops[rank]:
            problems.append(f"{schedule} rank {rank}: {compute} COMP_NODEs for {ops[rank]} ops")
        seen = set()
        for n in nodes:
            if any(d not in seen for d in n["deps"]):
                problems.append(f"{schedule} rank {rank}: node {n['id']} depends on a later node")
            seen.add(n["id"])
            a = n["attrs"]
            if n["type"] == "COMM_SEND_NODE":
                sends[(rank, int(a["comm_dst"]), int(a["comm_tag"]))] = a["comm_size"]
            if n["type"] == "COMM_RECV_NODE":
                recvs[(int(a["comm_src"]), rank, int(a["comm_tag"]))] = a["comm_size"]
    if sends != recvs:
        problems.append(f"{schedule}: sends and receives do not pair up")
    return problems, sum(ops.values()), len(sends)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bubblesim", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("schedules", nargs="+")
    args = parser.parse_args()
    if shutil.which("protoc") is None:
        print("chakra_protoc_check: protoc not found; skipping (apt-get install protobuf-compiler)")
        return 77
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "chakra")
    schema_dir = os.environ.get("CHAKRA_SCHEMA_DIR", os.path.join(here, "schema"))
    problems = []
    with tempfile.TemporaryDirectory() as work:
        for schedule in args.schedules:
            found, ops, pairs = check_schedule(args, schedule, work, schema_dir, here)
            problems += found
            print(f"{schedule}: {ops} compute nodes, {pairs} send/receive pairs decoded by protoc")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
