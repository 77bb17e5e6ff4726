"""Runs SQL statements on the current ClickHouse engine (embedded through chdb) and reports, as JSON,
each statement that it rejects. Input on stdin: {"database": "...", "statements": ["...", ...]}."""
import json
import sys
import tempfile

from chdb.session import Session


def main() -> int:
    req = json.load(sys.stdin)
    db = req["database"]
    failures = []
    with tempfile.TemporaryDirectory() as path:
        s = Session(path)
        s.query(f"CREATE DATABASE IF NOT EXISTS {db}")
        s.query(f"USE {db}")
        for st in req["statements"]:
            try:
                s.query(st)
            except Exception as e:  # chdb raises a plain Exception carrying the server message
                failures.append({"statement": st[:200], "error": str(e)[:500]})
        version = str(s.query("SELECT version()", "CSV")).strip().strip('"')
        s.close()
    json.dump({"version": version, "failures": failures}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
