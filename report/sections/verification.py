"""Which versions verified, which were skipped and why."""
from report.context import md_table
from report.data import version_key



def render(ctx):
    rows = ctx.latest("verification", ("version",))
    if not rows:
        return "## Verification\n\nNo verification rows in results/ yet: run `make bench`.\n"
    body = []
    for r in sorted(rows, key=lambda r: version_key(r["version"])):
        detail = r.get("reason") or f"{r.get('checks', '?')} checks"
        body.append((f"`{r['version']}`", r["status"], detail.replace("|", "\\|")[:200]))
    return ("## Verification\n\nThe three checks of WORKLOAD.md (Gymnasium replay of every transition, "
            "equality with v1, equality across worker counts), run by the bench before timing. "
            "A version that does not pass gets no number.\n\n"
            + md_table(["Version", "Status", "Detail"], body) + "\n")
