"""A fuzz campaign over tiled_attention (its declared SUPPORT), then its report, from Python:

    python campaign.py [OUT]        # OUT/campaign, OUT/report (default: ./tiled-campaign)

Exit status 1 when a case failed or crashed. The report's replay lines for this kernel read
flashproof.replay(<your forward>, "FILE", backward=<your backward>)."""
import os
import sys

import flashproof
from tiled_attention import SUPPORT, backward, forward


def main(out="tiled-campaign"):
    counts = flashproof.fuzz(forward, backward, out=os.path.join(out, "campaign"), seed=1, cases=12, name="tiled",
                             model="naive", max_seqlen=256, support=SUPPORT)
    report = flashproof.report(os.path.join(out, "campaign"), out=os.path.join(out, "report"))
    print(f"fitted into the support: {counts['fitted']}, failed: {counts['fail']}, crashed: {counts['crash']}")
    print(f"report: {report['index_html']}")
    return 1 if counts["fail"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
