#!/usr/bin/env python3
"""Renders a `tmux capture-pane -e -p` capture (text with SGR colour sequences) as a PNG, for
the screenshots in README.md and docs/terminal.md. Needs Pillow (pinned: pillow==11.3.0) and
the DejaVu Sans Mono font (Debian package fonts-dejavu-core).

  scripts/ansi2png.py CAPTURE.ansi OUT.png [--cols 120] [--rows 40]
"""
import argparse
import re

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu/"
BG = (24, 24, 27)
FG = (220, 220, 215)
# The xterm palette for the 16 basic colours.
PALETTE = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16),
    (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
    (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colour(n):
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    g = 8 + (n - 232) * 10
    return (g, g, g)


def apply(params, st):
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            st.update(fg=None, bg=None, bold=False, dim=False, italic=False, under=False, rev=False)
        elif c == 1:
            st["bold"] = True
        elif c == 2:
            st["dim"] = True
        elif c == 3:
            st["italic"] = True
        elif c == 4:
            st["under"] = True
        elif c == 7:
            st["rev"] = True
        elif c == 22:
            st.update(bold=False, dim=False)
        elif c == 23:
            st["italic"] = False
        elif c == 24:
            st["under"] = False
        elif c == 27:
            st["rev"] = False
        elif 30 <= c <= 37:
            st["fg"] = PALETTE[c - 30]
        elif 90 <= c <= 97:
            st["fg"] = PALETTE[c - 90 + 8]
        elif 40 <= c <= 47:
            st["bg"] = PALETTE[c - 40]
        elif c == 39:
            st["fg"] = None
        elif c == 49:
            st["bg"] = None
        elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
            st["fg" if c == 38 else "bg"] = colour(codes[i + 2])
            i += 2
        elif c in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
            st["fg" if c == 38 else "bg"] = tuple(codes[i + 2:i + 5])
            i += 4
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("out")
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--size", type=int, default=15)
    a = ap.parse_args()
    fonts = {
        (False, False): ImageFont.truetype(FONT_DIR + "DejaVuSansMono.ttf", a.size),
        (True, False): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Bold.ttf", a.size),
        (False, True): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-Oblique.ttf", a.size),
        (True, True): ImageFont.truetype(FONT_DIR + "DejaVuSansMono-BoldOblique.ttf", a.size),
    }
    cw = round(fonts[(False, False)].getlength("M"))
    ch = round(a.size * 1.35)
    pad = 14
    lines = open(a.capture, encoding="utf-8").read().split("\n")[: a.rows]
    # Trailing blank rows are left out of the picture.
    while lines and not SGR.sub("", lines[-1]).strip():
        lines.pop()
    img = Image.new("RGB", (a.cols * cw + 2 * pad, len(lines) * ch + 2 * pad), BG)
    d = ImageDraw.Draw(img)
    st = dict(fg=None, bg=None, bold=False, dim=False, italic=False, under=False, rev=False)
    for row, line in enumerate(lines):
        col = 0
        pos = 0
        for m in list(SGR.finditer(line)) + [None]:
            end = m.start() if m else len(line)
            for c in line[pos:end]:
                fg, bg = st["fg"] or FG, st["bg"] or BG
                if st["rev"]:
                    fg, bg = bg, fg
                if st["dim"]:
                    fg = tuple((f + b) // 2 for f, b in zip(fg, bg))
                x, y = pad + col * cw, pad + row * ch
                if bg != BG:
                    d.rectangle([x, y, x + cw, y + ch], fill=bg)
                d.text((x, y + 2), c, font=fonts[(st["bold"], st["italic"])], fill=fg)
                if st["under"]:
                    d.line([x, y + ch - 3, x + cw, y + ch - 3], fill=fg)
                col += 1
            if m is None:
                break
            apply(m.group(1), st)
            pos = m.end()
    img.save(a.out)


if __name__ == "__main__":
    main()
