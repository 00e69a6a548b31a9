#!/usr/bin/env bash
# The picture shows the field. A spike after a few hundred sweeps spans
# many decades: on a linear scale it is one flat colour with a dot. The writer must pick
# a scale that shows it (and name it); a smooth field keeps the linear scale.
set -u
HR=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if ! "$HR" info --no-bandwidth --json - 2>/dev/null | grep -q '"version"'; then echo "no hetrelax"; exit 1; fi
P="poisson2d --no-bandwidth --quiet --backend cpu-seq"
"$HR" $P --n 256 --iters 300 --output "$T/spike.png" >/dev/null 2>"$T/err" || {
  grep -q libpng "$T/err" && { echo "no libpng: skipped"; exit 77; }
  echo "FAIL: spike run: $(cat "$T/err")"; exit 1; }
"$HR" $P --n 256 --iters 3000 --rhs manufactured --output "$T/smooth.png" >/dev/null 2>&1 || { echo "FAIL: smooth run"; exit 1; }
"$HR" $P --n 256 --iters 300 --boundary -1 --output "$T/mixed.png" >/dev/null 2>&1 || { echo "FAIL: mixed run"; exit 1; }
python3 - "$T" <<'PY'
import struct, sys, zlib
from collections import Counter

def read_png(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    pos, idat, text = 8, b'', {}
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR': w, h = struct.unpack('>II', body[:8])
        if kind == b'IDAT': idat += body
        if kind == b'tEXt':
            k, v = body.split(b'\0', 1)
            text[k.decode()] = v.decode()
        pos += 12 + n
    raw, rows, prev, bpp, i = zlib.decompress(idat), [], bytearray(w * 3), 3, 0
    for _ in range(h):  # undo the PNG row filters
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + w * 3]); i += 1 + w * 3
        for x in range(len(line)):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line)); prev = line
    return w, h, rows, text

fails = 0
def check(name, want_scale, cond, why):
    global fails
    w, h, rows, text = read_png(f"{sys.argv[1]}/{name}.png")
    side = h  # the field is the left h x h square (256 px here)
    px = Counter(rows[y][3 * x:3 * x + 3] for y in range(side) for x in range(side))
    top = px.most_common(1)[0][1] / (side * side)
    ok = text.get('Scale') == want_scale and cond(len(px), top)
    print(("ok  " if ok else "FAIL"), name, "scale", text.get('Scale'), "colours", len(px), "largest share %.2f" % top, why)
    fails += not ok

check("spike", "log10", lambda n, top: n >= 50 and top < 0.8, "(a spike must not be one flat colour)")
check("smooth", "linear", lambda n, top: n >= 50 and top < 0.2, "(a smooth field stays linear)")
check("mixed", "symlog", lambda n, top: n >= 50 and top < 0.6, "(both signs: symmetric log)")
sys.exit(1 if fails else 0)
PY
