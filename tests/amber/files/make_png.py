"""Writes the PNG inputs of tests/amber/png_file.amber and tests/amber/unusable/png_*.amber with
Python's zlib, independently of the Rust decoder: `python3 make_png.py` in this directory."""
import struct
import zlib


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(width, height, color_type, depth, rows, idat=None):
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    data = zlib.compress(raw) if idat is None else idat
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


# 3x2 RGBA8: pixel (x, y) = (10 + x, 20 + y, 30 * (x + 1) + y, 255 - 16 * (x + 3 * y)).
rgba = [[c for x in range(3) for c in (10 + x, 20 + y, 30 * (x + 1) + y, 255 - 16 * (x + 3 * y))]
        for y in range(2)]
open("pixels_3x2.png", "wb").write(png(3, 2, 6, 8, rgba))
# 2x2 grey at 4 bits: samples 0, 5, 10, 15 scale to 0, 85, 170, 255 (x * 255 / 15).
open("grey_2x2.png", "wb").write(png(2, 2, 0, 4, [[0x05], [0xAF]]))
# A valid header claiming 65535 x 65535 RGBA8 pixels (16 GiB) with a token IDAT.
open("huge_header.png", "wb").write(png(65535, 65535, 6, 8, [], idat=zlib.compress(b"\x00")))
# A good file cut in the middle of its IDAT.
whole = png(3, 2, 6, 8, rgba)
open("truncated.png", "wb").write(whole[: len(whole) // 2 + 10])
