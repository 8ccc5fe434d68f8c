"""Device printf: the records a launch's ``vprintf`` calls left (``gpusim.engine.semantics.calls``) formatted
on the host, as the CUDA driver does after a kernel.

Order. CUDA guarantees no order between the printf output of different threads. gpusim prints in a fixed
one: by block (linear block id), then by warp within the block, then each warp's printf calls in the
order the warp executed them, and within one call its lanes in lane order. That is the same in the
functional and the timed engine (a warp's own execution order does not depend on timing), so the output
of a launch is deterministic.

The format subset (what nvcc passes through): conversions ``d i u x X o f F e E g G a A c s p %``,
flags ``- 0 + space #``, a width and a precision (numbers or ``*``, taken from the arguments), length
modifiers ``hh h l ll z j t`` (``L`` is refused: CUDA has no long double). The arguments are read from the
argument buffer nvcc builds, each at its natural alignment (``char``/``short`` promoted to ``int`` and
``float`` to ``double``, as C's default promotions do); ``%s`` reads a NUL-terminated string from device
memory when the launch ends. Nothing in a format can make the formatting fail: a conversion with no
argument left, an unknown conversion, a string outside device memory or more than 32 arguments (CUDA's
limit) print a ``<gpusim: ...>`` note in its place.

Differences from CUDA, stated: records past ``printf_fifo_bytes`` are dropped (counted, with a note on
stderr) where CUDA's circular buffer overwrites the oldest; a launch that ends in an error prints nothing.
"""

from __future__ import annotations

import re
import struct
import sys

from gpusim.arch import layout as L

MAX_ARGUMENTS = 32
"""CUDA's printf takes at most 32 arguments after the format; the rest are ignored."""
MAX_STRING_BYTES = 1 << 16
"""The longest string a ``%s`` (or a format) is read up to."""
PRINTF_MODES = ("print", "capture")
"""``GPU(..., printf=...)``: print each launch's output to Python's stdout (and keep it in ``run.stdout``),
or only keep it in ``run.stdout``."""

_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?"
                   r"(?P<length>hh|h|ll|l|z|j|t|L)?(?P<conv>.?)", re.S)
_INT_CONVS = "diuxXoc"
_FLOAT_CONVS = "fFeEgGaA"


def _read_string(heap, address: int, limit: int | None) -> bytes | None:
    """The NUL-terminated bytes at device ``address`` (at most ``limit``), or None outside device memory."""
    offset = address - L.GLOBAL_BASE
    if heap is None or offset < 0 or offset >= heap.top:
        return None
    end = min(heap.top, offset + (MAX_STRING_BYTES if limit is None else limit))
    chunk = bytes(heap.data[offset:end])
    nul = chunk.find(b"\0")
    return chunk if nul < 0 else chunk[:nul]


class _Arguments:
    """The argument buffer of one record, read in order at each argument's natural alignment."""

    def __init__(self, raw: bytes):
        self.raw = raw
        self.offset = 0
        self.count = 0

    def take(self, size: int) -> bytes | None:
        self.count += 1
        start = (self.offset + size - 1) // size * size
        if self.count > MAX_ARGUMENTS or start + size > len(self.raw):
            return None
        self.offset = start + size
        return self.raw[start:start + size]


def _int_value(raw: bytes, length: str | None, signed: bool) -> int:
    bits = {"hh": 8, "h": 16}.get(length or "", 8 * len(raw))
    value = int.from_bytes(raw, "little") & ((1 << bits) - 1)
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _format_one(match: re.Match, args: _Arguments, heap) -> str:
    flags, width, precision = match["flags"], match["width"], match["precision"]
    length, conv = match["length"], match["conv"]
    text = match.group(0)
    if conv == "%":
        return "%"
    if length == "L" or conv not in _INT_CONVS + _FLOAT_CONVS + "sp":
        return f"<gpusim: unsupported printf conversion '{text}'>"
    if width == "*":
        raw = args.take(4)
        if raw is None:
            return f"<gpusim: no argument left for the width of '{text}'>"
        value = _int_value(raw, None, True)
        flags, width = (flags + "-", str(-value)) if value < 0 else (flags, str(value))
    if precision == "*":
        raw = args.take(4)
        if raw is None:
            return f"<gpusim: no argument left for the precision of '{text}'>"
        value = _int_value(raw, None, True)
        precision = None if value < 0 else str(value)
    size = 8 if conv in _FLOAT_CONVS + "sp" or length in ("l", "ll", "z", "j", "t") else 4
    raw = args.take(size)
    if raw is None:
        return f"<gpusim: no argument left for '{text}'>"
    if conv in _FLOAT_CONVS:
        value = struct.unpack("<d", raw)[0]
        if conv in "aA":
            return _pad(_hex_float(value, conv == "A"), flags, width)
        return _spec(flags, width, precision, conv) % value
    if conv == "c":
        return _pad(chr(_int_value(raw, None, False) & 0xFF), flags, width)
    if conv == "s":
        address = int.from_bytes(raw, "little")
        if address == 0:
            return _pad("(null)", flags, width)
        limit = int(precision) if precision not in (None, "") else None
        data = _read_string(heap, address, limit)
        if data is None:
            return f"<gpusim: %s argument 0x{address:x} is not in global memory>"
        return _pad(data.decode("latin-1"), flags, width)
    if conv == "p":
        address = int.from_bytes(raw, "little")
        return _pad("(nil)" if address == 0 else f"0x{address:x}", flags, width)
    value = _int_value(raw, length, conv in "di")
    if precision is not None:
        flags = flags.replace("0", "")      # C: a precision turns the 0 flag off for integers
        if value == 0 and precision in ("", "0"):
            return _pad("", flags, width)   # C: precision 0 prints no digits for 0
    if "#" in flags and (value == 0 or conv == "o"):
        flags = flags.replace("#", "")      # C: no 0x prefix for 0; octal's prefix is one 0 (Python's is 0o)
        if conv == "o" and value != 0:
            digits = _spec("", None, precision, "o") % value
            return _pad(digits if digits.startswith("0") else "0" + digits, flags, width)
    return _spec(flags, width, precision, "d" if conv == "u" else conv) % value


def _spec(flags: str, width: str | None, precision: str | None, conv: str) -> str:
    """A Python %-format for one C conversion (Python's %-formatting is C's for these)."""
    return "%" + flags + (width or "") + ("." + (precision or "0") if precision is not None else "") + conv


def _hex_float(value: float, upper: bool) -> str:
    """C's %a: Python's float.hex() without the trailing zeros of the fraction."""
    text = value.hex()
    if "." in text:
        mantissa, exponent = text.split("p")
        mantissa = mantissa.rstrip("0").rstrip(".")
        text = mantissa + "p" + exponent
    return text.upper().replace("0X", "0X") if upper else text


def _pad(text: str, flags: str, width: str | None) -> str:
    if not width:
        return text
    return text.ljust(int(width)) if "-" in flags else text.rjust(int(width))


def format_record(fmt: bytes, raw_args: bytes, heap) -> str:
    """One printf call's output: ``fmt`` with the arguments in ``raw_args`` (C's printf, see the module
    docstring)."""
    text = fmt.decode("latin-1")
    args = _Arguments(raw_args)
    out = []
    position = 0
    for match in _SPEC.finditer(text):
        out.append(text[position:match.start()])
        if args.count >= MAX_ARGUMENTS and match["conv"] != "%":
            out.append(match.group(0))      # CUDA prints the conversions past the 32nd argument as written
        else:
            out.append(_format_one(match, args, heap))
        position = match.end()
    out.append(text[position:])
    return "".join(out)


def collect_output(m, heap) -> tuple[str, int]:
    """The launch's printf output in gpusim's order, and the number of records dropped."""
    used = int(m.printf_ctl[0])
    dropped = int(m.printf_ctl[1])
    if used == 0:
        return "", dropped
    buf8 = m.printf8
    buf64 = m.printf64
    records: list[tuple[int, int, int, int, bytes]] = []
    pos = 0
    while pos < used:
        word = pos >> 3
        block, thread, fmt, nbytes = (int(buf64[word + k]) for k in range(4))
        start = pos + 32
        records.append((block, thread // 32, len(records), fmt, bytes(buf8[start:start + nbytes])))
        pos = start + (nbytes + 7) // 8 * 8
    records.sort(key=lambda r: (r[0], r[1], r[2]))
    pieces = []
    for _, _, _, fmt, raw in records:
        text = _read_string(heap, fmt, None)
        pieces.append(format_record(text, raw, heap) if text is not None else
                      f"<gpusim: printf format pointer 0x{fmt:x} is not in global memory>\n")
    return "".join(pieces), dropped


def deliver_printf(gpu, run, m, program):
    """Set ``run.stdout`` (and print it, unless the GPU captures printf); returns ``run``."""
    if not program.has_printf:
        run.stdout = ""
        return run
    text, dropped = collect_output(m, gpu.heap)
    run.stdout = text
    run.printf_dropped = dropped
    if getattr(gpu, "printf", "print") == "print" and text:
        sys.stdout.write(text)
        sys.stdout.flush()
    if dropped:
        sys.stderr.write(f"gpusim: {dropped} printf records of kernel '{program.name}' did not fit the printf "
                         f"buffer (printf_fifo_bytes={gpu.config.printf_fifo_bytes}) and were dropped\n")
    return run


