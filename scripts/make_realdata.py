"""Writes the synthetic real-format samples of ``evals/realdata`` (seeded, reproducible).

The lines are ours, written in the shapes real systems produce (an Apache 2.0 error log of
2005, RFC 3164 syslog without a year, JSON-lines application logs, a change feed); the NAB
series beside them is public data (see ``evals/realdata/NOTICE``). Run from the project root:
``python scripts/make_realdata.py``.
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "evals" / "realdata"


def apache_error_log(path: Path) -> None:
    """web-frontend, 2005-12-04 04:00–08:00: routine notices, a mod_jk error storm 06:02–06:24."""
    rng = random.Random(4)
    lines = []
    moment = datetime(2005, 12, 4, 4, 0, 3)
    end = datetime(2005, 12, 4, 8, 0)
    slot = 0
    while moment < end:
        stamp = moment.strftime("[%a %b %d %H:%M:%S %Y]")
        storm = datetime(2005, 12, 4, 6, 2) <= moment < datetime(2005, 12, 4, 6, 24)
        if storm and rng.random() < 0.8:
            state = rng.choice([6, 6, 6, 7])
            lines.append(f"{stamp} [error] mod_jk child workerEnv in error state {state}")
        elif rng.random() < 0.08:
            lines.append(
                f"{stamp} [error] [client 10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}] "
                "Directory index forbidden by rule: /var/www/html/"
            )
        else:
            slot = (slot + 1) % 12
            lines.append(f"{stamp} [notice] jk2_init() Found child {rng.randint(1000, 9999)} in scoreboard slot {slot}")
            if rng.random() < 0.3:
                lines.append(f"{stamp} [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties")
        moment += timedelta(seconds=rng.randint(5, 40) if not storm else rng.randint(1, 4))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def auth_api_json(path: Path) -> None:
    """auth-api beside it, healthy all morning: INFO requests, a rare WARN."""
    rng = random.Random(5)
    lines = []
    moment = datetime(2005, 12, 4, 4, 0, tzinfo=UTC)
    while moment < datetime(2005, 12, 4, 8, 0, tzinfo=UTC):
        record = {
            "ts": moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "level": "info",
            "logger": "auth.http",
            "msg": f"POST /v1/token 200 {rng.randint(8, 40)}ms",
        }
        if rng.random() < 0.01:
            record.update(level="warn", logger="auth.cache", msg="token cache miss ratio above 0.2")
        lines.append(json.dumps(record))
        moment += timedelta(seconds=rng.randint(20, 90))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bastion_syslog(path: Path) -> None:
    """RFC 3164 syslog (no year) of a bastion host, Mar 13 20:00 – Mar 14 06:00: a password
    guessing run 03:10–03:41 and one OOM kill; cron and accepted logins otherwise."""
    rng = random.Random(6)
    lines = []
    moment = datetime(2014, 3, 13, 20, 0, 0)
    while moment < datetime(2014, 3, 14, 6, 0):
        stamp = f"{moment.strftime('%b')} {moment.day:>2} {moment.strftime('%H:%M:%S')}"
        pid = rng.randint(2000, 30000)
        attack = datetime(2014, 3, 14, 3, 10) <= moment < datetime(2014, 3, 14, 3, 41)
        if attack:
            user = rng.choice(["admin", "oracle", "test", "ubuntu", "git"])
            ip = f"203.0.113.{rng.randint(2, 60)}"
            lines.append(
                f"{stamp} bastion sshd[{pid}]: Failed password for invalid user {user} from {ip} "
                f"port {rng.randint(30000, 65000)} ssh2"
            )
            moment += timedelta(seconds=rng.randint(1, 3))
            continue
        roll = rng.random()
        if roll < 0.5:
            lines.append(f"{stamp} bastion CRON[{pid}]: (root) CMD (run-parts /etc/cron.hourly)")
        elif roll < 0.9:
            lines.append(
                f"{stamp} bastion sshd[{pid}]: Accepted publickey for deploy from 10.1.2.{rng.randint(2, 9)} "
                f"port {rng.randint(30000, 65000)} ssh2"
            )
        else:
            lines.append(f"{stamp} bastion systemd[1]: Started Session {rng.randint(100, 999)} of user deploy.")
        if datetime(2014, 3, 14, 4, 2) <= moment < datetime(2014, 3, 14, 4, 4):
            lines.append(
                f"{stamp} bastion kernel: [812345.123456] Out of memory: Killed process {pid} (java) "
                "total-vm:4194304kB, anon-rss:3145728kB"
            )
        moment += timedelta(seconds=rng.randint(60, 240))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def checkout_series(latency: Path, database: Path, logs: Path, changes: Path) -> None:
    """checkout-api, 2014-03-18 00:00 – 2014-03-21 03:25 every 5 minutes: p99 latency with a
    daily rhythm; deploy 2.8.0 at 14:05 on the 20th doubles it until the rollback at 16:40.
    payments-db beside it stays normal."""
    rng = random.Random(7)
    start = datetime(2014, 3, 18, 0, 0, tzinfo=UTC)
    end = datetime(2014, 3, 21, 3, 30, tzinfo=UTC)
    deploy = datetime(2014, 3, 20, 14, 5, tzinfo=UTC)
    rollback = datetime(2014, 3, 20, 16, 40, tzinfo=UTC)
    rows = ["timestamp,checkout_p99_ms"]
    db_rows = ["time,db_query_p99_ms"]
    log_lines = []
    moment = start
    while moment < end:
        hour = moment.hour + moment.minute / 60
        daily = 60 * math.sin((hour - 8) / 24 * 2 * math.pi)
        p99 = 240 + daily + rng.gauss(0, 9)
        if deploy + timedelta(minutes=5) <= moment < rollback:
            p99 = 1150 + rng.gauss(0, 60)
        db = 18 + daily / 20 + rng.gauss(0, 1.2)
        rows.append(f"{moment.strftime('%m/%d/%Y %H:%M')},{p99:.0f}")
        db_rows.append(f"{int(moment.timestamp())},{db:.1f}")
        for _ in range(2):
            at = moment + timedelta(seconds=rng.randint(0, 299))
            record = {
                "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "level": "INFO",
                "logger": "checkout.http",
                "message": f"POST /api/checkout 200 {rng.randint(80, 300)}ms",
            }
            if deploy + timedelta(minutes=5) <= moment < rollback and rng.random() < 0.7:
                record.update(
                    level="ERROR",
                    logger="checkout.pricing",
                    message=f"ERR_PRICING_TIMEOUT pricing call timed out after {rng.randint(1000, 1200)}ms "
                    f"cart={rng.randint(100000, 999999)}",
                )
            log_lines.append((at, json.dumps(record)))
        moment += timedelta(minutes=5)
    latency.write_text("\n".join(rows) + "\n", encoding="utf-8")
    database.write_text("\n".join(db_rows) + "\n", encoding="utf-8")
    logs.write_text("\n".join(line for _at, line in sorted(log_lines)) + "\n", encoding="utf-8")
    changes.write_text(
        "timestamp,service,kind,description,version\n"
        "2014-03-19T10:12:00Z,payments-db,config,raised max_connections to 400,\n"
        "2014-03-20T14:05:00Z,checkout-api,deploy,checkout-api 2.8.0 rolled out (pricing client rewrite),2.8.0\n"
        "2014-03-20T16:40:00Z,checkout-api,rollback,checkout-api rolled back to 2.7.3,2.7.3\n",
        encoding="utf-8",
    )


def main() -> None:
    (ROOT / "apache-2005").mkdir(parents=True, exist_ok=True)
    apache_error_log(ROOT / "apache-2005" / "error_log")
    auth_api_json(ROOT / "apache-2005" / "auth-api.jsonl")
    (ROOT / "bastion-syslog").mkdir(parents=True, exist_ok=True)
    bastion_syslog(ROOT / "bastion-syslog" / "auth.log")
    (ROOT / "checkout-deploy").mkdir(parents=True, exist_ok=True)
    checkout_series(
        ROOT / "checkout-deploy" / "latency.csv",
        ROOT / "checkout-deploy" / "payments-db.csv",
        ROOT / "checkout-deploy" / "checkout.jsonl",
        ROOT / "checkout-deploy" / "changes.csv",
    )


if __name__ == "__main__":
    main()
