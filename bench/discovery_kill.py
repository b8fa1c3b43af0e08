"""A JOBDIR discovery crawl killed (SIGKILL) while its sitemap entries are held, then resumed.

    python bench/discovery_kill.py [--root TREE] [--out DIR]

The single-topic site of the local test web (family a, small, seed 7, 30 % orphan articles that
only the sitemaps list), seeded with its home page alone, ``-a discover=sitemaps``: the crawl is
killed 0.3 s after its second section sitemap is fetched (400 ms a request, so the host's other
sitemaps are still to come and the entries read are held by ``TOPICRAWL_SITEMAP_INTERLEAVE``),
resumed with the same JOBDIR, and compared with an uninterrupted crawl: the orphans of the host
reached, and how many discovery requests the resume made again
(``topicrawl/discovery/resumed``). ``--root``: the source tree whose crawler runs (a worktree of
another commit, to compare), this one by default.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models.store import Store  # noqa: E402
from sitegen.build import build_web  # noqa: E402
from sitegen.server import ServerProcess, crawl_command  # noqa: E402


def crawl(root: Path, web: Path, home: str, db: str, jobdir: Path, *, latency: int,
          kill: bool) -> int:  # fmt: skip
    """One crawl (killed once a section sitemap is fetched, with ``kill``); its exit status."""
    topic = root / "topics" / "shizheng.toml"
    settings = {"JOBDIR": str(jobdir), "TOPICRAWL_DB_URL": db, "LOG_LEVEL": "DEBUG"}
    with ServerProcess(web, latency_ms=latency) as server:
        cmd, env = crawl_command(server.url, [home], topic, args={"discover": "sitemaps"},
                                 settings=settings)  # fmt: skip
        log_path = jobdir.parent / f"{jobdir.name}-{time.monotonic_ns()}.log"
        with log_path.open("w") as log:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                                    stderr=log)  # fmt: skip
            if kill:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and proc.poll() is None:
                    if log_path.read_text(errors="replace").count("/sitemaps/") >= 2:
                        time.sleep(0.3)
                        break
                    time.sleep(0.05)
                proc.send_signal(signal.SIGKILL)
            return proc.wait(timeout=600)


def figures(db: str, orphans: set[str]) -> dict[str, object]:
    store = Store.from_url(db, migrate=False)
    run = store.list_runs()[0]
    urls = {p.url for p in store.iter_pages(run.id)}
    stats = store.get_run(run.id).stats or {}
    return {"pages": len(urls), "orphans reached": f"{len(urls & orphans)} of {len(orphans)}",
            "discovery resumed": stats.get("topicrawl/discovery/resumed", 0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the source tree that crawls")
    ap.add_argument("--out", type=Path, help="working directory (default: a temporary one)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="discovery-kill-"))
    web = out / "web"
    if (web / "ground_truth.json").exists():
        truth = json.loads((web / "ground_truth.json").read_text(encoding="utf-8"))
    else:
        truth = build_web(web, scale="small", seed=7, discovery=True, orphans=0.3, documents=True)
    home = truth["seeds"]["domain"][0]
    host = urlsplit(home).hostname
    orphans = {u for u in truth["orphans"] if urlsplit(u).hostname == host}
    root = args.root.resolve()
    killed, full = f"sqlite:///{out / 'killed.db'}", f"sqlite:///{out / 'full.db'}"
    first = crawl(root, web, home, killed, out / "job", latency=400, kill=True)
    again = crawl(root, web, home, killed, out / "job", latency=0, kill=False)
    whole = crawl(root, web, home, full, out / "job-full", latency=0, kill=False)
    print(f"tree {root}: killed crawl exit {first}, resume exit {again}, uninterrupted exit {whole}")
    print(f"  killed and resumed: {figures(killed, orphans)}")
    print(f"  uninterrupted:      {figures(full, orphans)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
