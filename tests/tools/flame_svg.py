#!/usr/bin/env python3
"""Draws folded stacks (mxprof report --flame) as a flame graph in SVG.

usage: flame_svg.py FOLDED [TITLE] > out.svg

Each line of FOLDED is "frame;frame;...;leaf weight". Frames are drawn
root at the bottom, each as wide as its total weight; a frame narrower than
0.1% of the width is left out, and a name that does not fit is cut.
"""
import html
import sys

W, H, FONT = 1200, 17, 11


def main():
    root = {"w": 0, "kids": {}}
    for line in open(sys.argv[1]):
        path, _, w = line.rstrip("\n").rpartition(" ")
        if not path:
            continue
        n = root
        n["w"] += int(w)
        for f in path.split(";"):
            n = n["kids"].setdefault(f, {"w": 0, "kids": {}})
            n["w"] += int(w)
    depth = [0]

    def walk(n, d):
        depth[0] = max(depth[0], d)
        for k in n["kids"].values():
            walk(k, d + 1)

    walk(root, 0)
    height = (depth[0] + 2) * H + 10
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="monospace" font-size="%d">' % (W, height, FONT),
           '<rect width="100%%" height="100%%" fill="#f8f8f8"/>',
           '<text x="%d" y="%d" text-anchor="middle">%s</text>'
           % (W // 2, H, html.escape(sys.argv[2] if len(sys.argv) > 2
                                     else "Flame graph"))]
    total = root["w"] or 1

    def draw(n, name, x, d):
        width = n["w"] * (W - 20) / total
        if width < (W - 20) / 1000:
            return
        y = height - (d + 1) * H
        hue = 20 + (hash(name) % 40)
        label = name if len(name) * 7 < width else name[: int(width / 7)]
        title = "%s (%.3f ms, %.1f%%)" % (name, n["w"] / 1e6,
                                         100.0 * n["w"] / total)
        out.append('<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" '
                   'height="%d" fill="hsl(%d,80%%,60%%)" stroke="#fff"/>'
                   '<text x="%.1f" y="%d">%s</text></g>'
                   % (html.escape(title), x, y, width, H - 1, hue, x + 2,
                      y + H - 5, html.escape(label)))
        for k, kid in sorted(n["kids"].items()):
            draw(kid, k, x, d + 1)
            x += kid["w"] * (W - 20) / total

    x = 10
    for k, kid in sorted(root["kids"].items()):
        draw(kid, k, x, 0)
        x += kid["w"] * (W - 20) / total
    out.append("</svg>")
    print("\n".join(out))


main()
