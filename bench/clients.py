"""The generator's cost per operation, side by side in one run: the floor, ``--client fast``, ``--client sdk``.

    .venv/bin/python bench/clients.py                 # point read, upsert, batch of 100, 100-row scan
    .venv/bin/python bench/clients.py --ops read --seconds 20 --users 32

Each side gets a fresh in-memory Azurite on a free loopback port (Azurite slows as it fills) and
the same concurrency. The floor is the same HTTP library (geventhttpclient) in a gevent loop
doing only SharedKey signing and the request, no accounting; ``fast`` and ``sdk`` are the tool's
own users through Locust's runner (``loadtest run --client``). Client CPU (user + system, from
/proc) and served operations are taken over the same steady window after the ramp-up; the
ratios to the floor are what to compare (the machines are noisy: absolute figures vary).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLK_TCK = os.sysconf("SC_CLK_TCK")
RAMP_S = 4
STARTUP_S = 6  # loadtest run: imports, opens and re-seeds the table, starts Locust
MIX = {"read": "read=1", "upsert": "upsert=1", "batch": "batch=1", "scan": "scan=1"}
ENTITIES = {"read": 1, "upsert": 1, "batch": 100, "scan": 100}
#: The emulator side: ``--client fast`` through the throttling emulator, budgets far above the load (nothing throttled).
EMULATOR_ARGS = ("--emulate-throttling", "--emulator-partition-rate", "1e9", "--emulator-account-rate", "1e9")
#: A side named ``<client>-glibc`` (``fast-glibc``, ``sdk-glibc``): that client with glibc's own malloc thresholds,
#: ``loadtest run``'s fixed mmap threshold (``entry.MMAP_THRESHOLDS``) left out; otherwise ``python -m loadtest``.
GLIBC_OWN = "-glibc"
LAUNCH_GLIBC_OWN = "import sys, loadtest.command_line.entry as e; e.MMAP_THRESHOLDS.clear(); sys.exit(e.main())"


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the emulator of a run with ``--emulate-throttling``)."""
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its reaped children, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / CLK_TCK


# --- the floor: signing and the request, nothing else (run as a child: python bench/clients.py --floor ...) ----


def floor(args: argparse.Namespace) -> None:
    import gevent.monkey

    gevent.monkey.patch_all()
    import gevent
    from geventhttpclient import HTTPClient

    from loadtest.redact import AZURITE_ACCOUNT, AZURITE_KEY
    from loadtest.transports.auth import SharedKey

    auth = SharedKey(AZURITE_ACCOUNT, AZURITE_KEY)
    base = f"/{AZURITE_ACCOUNT}/{args.table}"
    payload = "x" * 480
    entity = json.dumps({"PartitionKey": "hot", "RowKey": "0000000001", "n": 1, "p000": payload}).encode()
    counts: dict[int, int] = {}
    deadline = time.time() + args.seconds

    def user(u: int) -> None:
        http = HTTPClient("127.0.0.1", args.port, concurrency=1)
        headers = {"x-ms-version": "2019-02-02", "DataServiceVersion": "3.0", "Accept": "application/json;odata=nometadata"}
        n, requests = u, 0
        while time.time() < deadline:
            n, requests = (n + 7919) % args.rows, requests + 1
            if args.op == "read":
                method, path, query, body, ctype = "GET", f"{base}(PartitionKey='hot',RowKey='{n:010d}')", "", b"", ""
            elif args.op == "upsert":
                method, path, query, body, ctype = (
                    "MERGE",
                    f"{base}(PartitionKey='hot',RowKey='{n:010d}')",
                    "",
                    entity,
                    "application/json",
                )
            elif args.op == "batch":
                body, ctype = _batch(args, base, payload, u, requests)
                method, path, query = "POST", f"/{AZURITE_ACCOUNT}/$batch", ""
            else:
                low = n % max(1, args.rows - 100)
                flt = f"PartitionKey%20eq%20'hot'%20and%20RowKey%20ge%20'{low:010d}'%20and%20RowKey%20lt%20'{low + 100:010d}'"
                method, path, query, body, ctype = "GET", f"{base}()", f"?$filter={flt}", b"", ""
            sent = {**headers, **auth.headers(method, path, ctype)}
            if ctype:
                sent["Content-Type"] = ctype
            response = http.request(method, path + query, body=body, headers=sent)
            response.read()
            response.release()
            if response.status_code >= 400:
                raise SystemExit(f"floor: {response.status_code} on {method} {path}")
            second = int(time.time())
            counts[second] = counts.get(second, 0) + 1

    gevent.joinall([gevent.spawn(user, u) for u in range(args.users)])
    print(json.dumps({"counts": counts}), flush=True)


def _batch(args: argparse.Namespace, base: str, payload: str, user: int, n: int) -> tuple[bytes, str]:
    """100 upserts of new rows, built for each batch (as the users' batches are): JSON, multipart, nothing else."""
    parts = ["--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n"]
    for i in range(100):
        row = f"f{user:03d}-{n:07d}-{i:03d}"
        body = json.dumps({"PartitionKey": "hot", "RowKey": row, "n": i, "p000": payload})
        parts.append(
            "--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
            f"MERGE http://127.0.0.1:{args.port}{base}(PartitionKey='hot',RowKey='{row}') HTTP/1.1\r\n"
            f"Content-Type: application/json\r\nDataServiceVersion: 3.0\r\n\r\n{body}\r\n"
        )
    parts.append("--changeset_c--\r\n\r\n--batch_b--\r\n")
    return "".join(parts).encode(), "multipart/mixed; boundary=batch_b"


# --- the parent: a fresh Azurite per side, one side at a time ------------------------------------------


def measure(side: str, op: str, args: argparse.Namespace) -> dict[str, float]:
    from loadtest.account.azurite import EmbeddedAzurite
    from loadtest.account.endpoint import resolve_target
    from loadtest.service.entities import EntityShape
    from loadtest.testbed.table import TestTable
    from loadtest.workload.key_specs import key_strategy

    with EmbeddedAzurite() as azurite, tempfile.TemporaryDirectory() as out:
        target = resolve_target(connection_string=azurite.connection_string)
        table = TestTable.open(target)
        table.seed(key_strategy("single"), args.rows, EntityShape.for_size(1024), progress=False)
        start = RAMP_S + (0 if side == "floor" else STARTUP_S)
        seconds = start + args.seconds + 2
        if side == "floor":
            command = [
                sys.executable,
                __file__,
                "--floor",
                "--op",
                op,
                "--port",
                str(azurite.port),
                "--table",
                table.name,
                "--users",
                str(args.users),
                "--seconds",
                str(seconds),
                "--rows",
                str(args.rows),
            ]
        else:
            client = "fast" if side == "emulator" else side.removesuffix(GLIBC_OWN)
            command = [
                sys.executable,
                *(("-c", LAUNCH_GLIBC_OWN) if side.endswith(GLIBC_OWN) else ("-m", "loadtest")),
                "run",
                "--client",
                client,
                *(EMULATOR_ARGS if side == "emulator" else ()),
                "-u",
                str(args.users),
                "-r",
                str(args.users),
                "-t",
                f"{seconds}s",
                "--mix",
                MIX[op],
                "--reuse-table",
                "--table",
                table.name,
                "--seed-entities",
                str(args.rows),
                "--skip-verify",
                "--retry",
                "none",
                "--out",
                out,
                "--scan-size",
                "100",
                "--batch-size",
                "100",
                "--loglevel",
                "WARNING",
            ]
        env = {**os.environ, "AZURE_STORAGE_CONNECTION_STRING": azurite.connection_string}
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            time.sleep(start)
            t0 = int(time.time()) + 1
            time.sleep(t0 - time.time())
            proxy = children(child.pid)
            c0, a0, e0 = cpu_seconds(child.pid), cpu_seconds(azurite.pid), sum(map(cpu_seconds, proxy))
            time.sleep(args.seconds)
            t1 = int(time.time())
            c1, a1, e1 = cpu_seconds(child.pid), cpu_seconds(azurite.pid), sum(map(cpu_seconds, proxy))
            stdout, _ = child.communicate(timeout=seconds + 120)
        finally:
            if child.poll() is None:
                child.kill()
        if side == "floor":
            counts = {int(k): v for k, v in json.loads(stdout.strip().splitlines()[-1])["counts"].items()}
        else:
            from loadtest.results.form import Results  # the series is beside results.json (series.parquet)

            per_second = Results.load_file(Path(out) / "results.json").timeseries.groupby("second")["requests"].sum()
            counts = {int(second): int(n) for second, n in per_second.items()}
        ops = sum(n for s, n in counts.items() if t0 <= s < t1)
        table.drop()
    window = t1 - t0
    return {
        "ops_s": ops / window,
        "cpu_ms_per_op": 1000 * (c1 - c0) / max(ops, 1),
        "client_cpu": (c1 - c0) / window,
        "azurite_cpu": (a1 - a0) / window,
        "emulator_cpu": (e1 - e0) / window,
    }


def seeding(args: argparse.Namespace) -> dict[str, float]:
    """``TestTable.seed`` of ``--seed-rows`` 1-KiB entities under one PartitionKey into a fresh Azurite."""
    from loadtest.account.azurite import EmbeddedAzurite
    from loadtest.account.endpoint import resolve_target
    from loadtest.service.entities import EntityShape
    from loadtest.testbed.table import TestTable
    from loadtest.workload.key_specs import key_strategy

    with EmbeddedAzurite() as azurite:
        table = TestTable.open(resolve_target(connection_string=azurite.connection_string))
        c0, a0, t0 = cpu_seconds(os.getpid()), cpu_seconds(azurite.pid), time.perf_counter()
        written = table.seed(key_strategy("single"), args.seed_rows, EntityShape.for_size(1024), progress=False)
        c1, a1, elapsed = cpu_seconds(os.getpid()), cpu_seconds(azurite.pid), time.perf_counter() - t0
        table.drop()
    return {
        "entities_s": written / elapsed,
        "seconds": elapsed,
        "client_cpu": (c1 - c0) / elapsed,
        "azurite_cpu": (a1 - a0) / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ops", default="read,upsert,batch,scan,seed", help="comma list of read, upsert, batch, scan, seed (seeding)"
    )
    parser.add_argument("--seed-rows", type=int, default=100_000, help="entities the seeding measure writes")
    parser.add_argument(
        "--sides",
        default="floor,fast,sdk,emulator",
        help="floor, fast, sdk, emulator (fast through the throttling emulator), fast-glibc and sdk-glibc (glibc's own "
        "malloc thresholds, loadtest run's fixed mmap threshold left out)",
    )
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=15, help="the measured steady window")
    parser.add_argument("--rows", type=int, default=2000, help="entities seeded (reads, upserts and scans address them)")
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--op", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor(args)
        return 0
    print(f"{args.users} users, {args.seconds}-s steady window after {RAMP_S} s, a fresh in-memory Azurite per side")
    print(
        f"{'operation':<9} {'side':<10} {'ops/s':>8} {'entities/s':>11} {'client CPU':>10} {'ms CPU/op':>10} "
        f"{'x floor':>8} {'served/floor':>13} {'Azurite CPU':>12}"
    )
    floor_batch: dict[str, float] | None = None
    for op in args.ops.split(","):
        if op == "seed":
            floor_batch = floor_batch or measure("floor", "batch", args)
            seeded = seeding(args)
            print(
                f"seeding {args.seed_rows:,} x 1 KiB under one PartitionKey: {seeded['entities_s']:,.0f} entities/s "
                f"in {seeded['seconds']:.1f} s = {seeded['entities_s'] / (floor_batch['ops_s'] * 100):.0%} of the floor's "
                f"batch rate ({floor_batch['ops_s'] * 100:,.0f} entities/s); client CPU {seeded['client_cpu']:.0%}, "
                f"Azurite CPU {seeded['azurite_cpu']:.0%}",
                flush=True,
            )
            continue
        figures = {side: measure(side, op, args) for side in args.sides.split(",")}
        floor_batch = figures.get("floor") if op == "batch" else floor_batch
        base = figures.get("floor")
        for side, f in figures.items():
            if side == "emulator":
                continue
            ratio = f"{f['cpu_ms_per_op'] / base['cpu_ms_per_op']:.2f}" if base else "-"
            served = f"{f['ops_s'] / base['ops_s']:.0%}" if base else "-"
            print(
                f"{op:<9} {side:<10} {f['ops_s']:>8,.0f} {f['ops_s'] * ENTITIES[op]:>11,.0f} {f['client_cpu']:>10.0%} "
                f"{f['cpu_ms_per_op']:>10.3f} {ratio:>8} {served:>13} {f['azurite_cpu']:>12.0%}",
                flush=True,
            )
        if "emulator" in figures and "fast" in figures:
            proxied, direct = figures["emulator"], figures["fast"]
            print(
                f"{op:<9} {'emulator':<6} {proxied['ops_s']:>8,.0f} ops/s through the throttling emulator = "
                f"{proxied['ops_s'] / direct['ops_s']:.0%} of fast direct; emulator CPU {proxied['emulator_cpu']:.0%}, "
                f"client CPU {proxied['client_cpu']:.0%}, Azurite CPU {proxied['azurite_cpu']:.0%}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
