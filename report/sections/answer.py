"""The report's first screen: the question, the answer per workload (from the practitioner's
loop to the best pair and recipe, what each step bought), the machine, and the contents.
Every sentence and table here is rendered by the section that owns its rows; this one only
puts them first."""
from __future__ import annotations

ORDER = 0.5
TOC = "<!-- contents -->"          # report/render.py replaces it with the report's sections


def render(ctx):
    from report.sections import algorithms, chess_algorithms, trained
    cart = [s for s in (trained.headline(ctx), algorithms.headline(ctx)) if s]
    chess = chess_algorithms.knobs(ctx.for_workload(chess_algorithms.WORKLOAD), level="###")
    if not cart and not chess:
        return ""
    out = ["## The answer, first", "",
           "How much faster can an RL training loop get, and what does each rung buy the time to a "
           f"trained agent? On {ctx.machine_line} (`{ctx.machine}`, named so below):", ""]
    if cart:
        out += ["### CartPole-v1", ""] + [s + "\n" for s in cart]
    if chess:
        out += [chess.replace("### What each knob bought, for chess", "### Chess against the random mover")]
    out += ["### Contents", "", TOC, ""]
    return "\n".join(out)
