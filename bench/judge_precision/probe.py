import json
import sys
import time

from kgym.check import CheckOptions, check
from kgym.tasks import find_task

for task in sys.argv[1:]:
    t = time.time()
    r = check(
        find_task(task),
        find_task(task).solution_path().read_text(),
        CheckOptions(device="cuda", trials=2),
    )
    tm = r["timing"]
    print(
        task,
        r["status"],
        [(f["rule"], f["detail"][:200]) for f in r["findings"]],
        r.get("error"),
        round(time.time() - t, 1),
    )
    print(
        "  speedup",
        tm.get("speedup"),
        tm.get("speedup_ci"),
        "PR",
        r["profile"].get("triton_share"),
        json.dumps(tm.get("method"))[:600],
    )
    print(
        "  judge",
        json.dumps(r.get("judge"))[:400],
        "durations",
        json.dumps(r.get("durations_ms"))[:400],
    )
    if r["status"] != "ok":
        print(r["sandbox"].get("stderr_tail", "")[-1500:])
