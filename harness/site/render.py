"""Page data into HTML files, through the Jinja2 templates beside this module.

Autoescaping is on for every template: scenario titles, spec references and the model's reasons
are text, and a ``<`` in one must show as itself, not break the page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.site.model import Site

TEMPLATES = Path(__file__).resolve().parent / "templates"
STYLE = "style.css"
OWN_FOLDERS = ("areas", "scenarios")  # what a build replaces whole: a removed scenario's page goes too


def environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def pages(site: Site) -> dict[str, str]:
    """Every page of the site by its path inside the site folder."""
    env = environment()
    out = {"index.html": env.get_template("index.html").render(site=site, root="")}
    area = env.get_template("area.html")
    for a in site.areas:
        out[a.page] = area.render(area=a, site=site, root="../")
    scenario = env.get_template("scenario.html")
    for s in site.scenarios:
        out[s.page] = scenario.render(s=s, site=site, root="../")
    return out


def write_site(site: Site, out: Path) -> list[Path]:
    """The site into ``out`` (made if need be), replacing an earlier build's pages; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    for folder in OWN_FOLDERS:
        shutil.rmtree(out / folder, ignore_errors=True)
    written = []
    for rel, html in pages(site).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html)
        written.append(path)
    shutil.copyfile(TEMPLATES / STYLE, out / STYLE)
    return written + [out / STYLE]


__all__ = ["environment", "pages", "write_site"]
