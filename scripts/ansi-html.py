#!/usr/bin/env python3
"""Terminal text with SGR colour sequences (tmux `capture-pane -e`) on stdin -> one HTML page
on stdout, drawn like a dark terminal. Used by scripts/readme-capture.sh for the README's
picture. Only SGR is understood; any other escape sequence is dropped."""

import html
import re
import sys
import unicodedata

BASE = ["#1e1e1e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#dcdfe4"]
BRIGHT = ["#5c6370", "#ff7b86", "#b5e890", "#ffd68a", "#8cc8ff", "#de9bff", "#7fd8e4", "#ffffff"]
FG, BG = "#dcdfe4", "#1e1e1e"


def palette(n):
    """xterm's 256 colours."""
    if n < 8:
        return BASE[n]
    if n < 16:
        return BRIGHT[n - 8]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (v, v, v)


def sgr(params, st):
    codes = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            st.clear()
        elif c == 1:
            st["bold"] = True
        elif c == 22:
            st.pop("bold", None)
        elif c == 7:
            st["reverse"] = True
        elif c == 27:
            st.pop("reverse", None)
        elif 30 <= c <= 37:
            st["fg"] = BASE[c - 30]
        elif 90 <= c <= 97:
            st["fg"] = BRIGHT[c - 90]
        elif 40 <= c <= 47:
            st["bg"] = BASE[c - 40]
        elif 100 <= c <= 107:
            st["bg"] = BRIGHT[c - 100]
        elif c == 39:
            st.pop("fg", None)
        elif c == 49:
            st.pop("bg", None)
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                st[key] = palette(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                st[key] = "#%02x%02x%02x" % tuple(codes[i + 2 : i + 5])
                i += 4
        i += 1


def style(st):
    fg, bg = st.get("fg", FG), st.get("bg", BG)
    if st.get("reverse"):
        fg, bg = bg, fg
    css = "color:%s;background:%s" % (fg, bg)
    if st.get("bold"):
        css += ";font-weight:bold"
    return css


def convert(text):
    out, st = [], {}
    for part in re.split(r"(\x1b\[[0-9;?]*[A-Za-z])", text):
        if part.startswith("\x1b["):
            if part.endswith("m"):
                sgr(part[2:-1], st)
            continue
        if part:
            out.append('<span style="%s">%s</span>' % (style(st), cells(part)))
    return "".join(out)


def cells(text):
    """Escaped text; a character a terminal draws two cells wide (the state glyphs) gets exactly
    two cells here too, whatever width the font's glyph has."""
    out = []
    for ch in text:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            out.append('<span style="display:inline-block;width:2ch">%s</span>' % html.escape(ch))
        else:
            out.append(html.escape(ch))
    return "".join(out)


def main():
    body = convert(sys.stdin.read())
    print(
        "<!doctype html><meta charset=utf-8><style>"
        "body{margin:0;background:%s}"
        "pre{margin:0;padding:14px 18px;font:15px/1.35 'DejaVu Sans Mono',monospace;color:%s}"
        "</style><pre>%s</pre>" % (BG, FG, body)
    )


if __name__ == "__main__":
    main()
