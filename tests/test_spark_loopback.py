"""A Spark job rivulet starts on a local master (the CLI's import, verify and bootstrap, an
embedded program's) listens on loopback only, and its JVM takes loopback for its own
address, without SPARK_LOCAL_IP in the environment: a machine's database is not reachable
through Spark's ports from the network unless the user says so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_JOB = textwrap.dedent("""
    import ipaddress, os, re
    from rivulet.spark.session import get_session

    assert "SPARK_LOCAL_IP" not in os.environ
    get_session().range(100).selectExpr("sum(id)").collect()

    def tree(root):
        pids, children = {root}, {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = open(f"/proc/{entry}/stat").read()
                except OSError:
                    continue
                children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
        todo = [root]
        while todo:
            for child in children.get(todo.pop(), []):
                pids.add(child)
                todo.append(child)
        return pids

    inodes = set()
    for pid in tree(os.getpid()):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue

    def address(hex_ip):
        raw = bytes.fromhex(hex_ip)
        if len(raw) == 4:
            return ipaddress.IPv4Address(raw[::-1])
        words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
        ip = ipaddress.IPv6Address(words)
        return ip.ipv4_mapped or ip

    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN, ours
                listening.append(address(fields[1].split(":")[0]))
    print("LISTENING", " ".join(str(a) for a in listening))
""")


def test_a_local_spark_job_listens_on_loopback_only_without_spark_local_ip() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    done = subprocess.run([sys.executable, "-c", _JOB], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("LISTENING"))
    addresses = line.split()[1:]
    assert addresses, done.stdout  # the JVM's RPC and block manager, Python's worker server
    assert all(a.startswith("127.") or a == "::1" for a in addresses), addresses
    assert "resolves to a loopback address" not in done.stderr, done.stderr
