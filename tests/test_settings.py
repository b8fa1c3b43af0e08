"""The project's Scrapy settings: no endpoint a crawl process opens by itself."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings


def test_no_code_execution_endpoint_in_a_crawl_process():
    """Scrapy 2.19 starts an HTTP server that runs the Python code it is sent (the remote
    control), and Scrapy a telnet console: a crawler and every scale-out worker open
    neither (hostile input: nothing listens that the user did not ask for)."""
    from scrapy.extensions.remote_control import RemoteControl
    from scrapy.extensions.telnet import TelnetConsole

    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    crawler = SimpleNamespace(settings=settings)  # both read their switch before anything else
    for ext in (RemoteControl, TelnetConsole):
        with pytest.raises(NotConfigured):
            ext.from_crawler(crawler)


def test_the_remote_control_module_is_not_loaded():
    """Out of the extensions: Scrapy imports every key of EXTENSIONS (None or not) to compare
    it with the base's before asking the extension whether it is configured, and the remote
    control's module imports aiohttp (≈ 8 MB). Checked in a fresh interpreter, the way the
    crawl's ExtensionManager reads the setting."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from scrapy.settings import Settings\n"
        "from scrapy.utils.conf import build_component_list\n"
        "s = Settings(); s.setmodule('crawler.settings', priority='project')\n"
        "names = build_component_list(s.get_component_priority_dict_with_base('EXTENSIONS'))\n"
        "print(' '.join(names))\n"
        "print(' '.join(m for m in sys.modules if m.startswith(('aiohttp', "
        "'scrapy.extensions.remote_control', 'scrapy.extensions.telnet'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.splitlines()  # fmt: skip
    names = out[0].split()
    assert "crawler.extensions.CrawlProgress" in names
    assert "scrapy.extensions.corestats.CoreStats" in names
    assert not [n for n in names if "remote_control" in n or "telnet" in n]
    assert out[1:] == [""] or out[1:] == [], out[1:]


def test_extract_workers_from_the_environment():
    """TOPICRAWL_EXTRACT_WORKERS in the environment overrides the CPU-count default (the
    compose deployment sets 0)."""
    import os
    import subprocess
    import sys

    probe = "from crawler import settings; print(settings.TOPICRAWL_EXTRACT_WORKERS)"
    env = {**os.environ, "TOPICRAWL_EXTRACT_WORKERS": "0"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert out == "0"
    env["TOPICRAWL_EXTRACT_WORKERS"] = "3"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert out == "3"
