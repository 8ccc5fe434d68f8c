"""The interactive report's two static charts, drawn as inline SVG without matplotlib.

**Memory chart** (like Nsight Compute's): the units a kernel's data passes through -- the SMs' warps,
L1/shared memory, L2, DRAM -- as boxes, and between them the bytes moved each way with their rate and
% of the link's peak. Bytes come from the run's counters (sectors x the config's sector size), the peaks
from the config: L1/shared at ``l1_bytes_per_cycle_per_sm`` x SMs over the SMs' active cycles, L2 at
``l2_bytes_per_cycle`` and DRAM at ``dram_bandwidth_gbs`` over the kernel's duration -- the same
formulas as ``l1tex__throughput``, ``lts__throughput`` and ``dram__throughput`` in
``gpusim.observe.metrics``; each unit's metric is split over its directions in proportion to their bytes
(``memory_links``), so a unit's arrows add up to its throughput.

**Roofline**: log-log, every compute ceiling of the config (``gpusim.observe.plot.chip_ceilings``) and
every bandwidth ceiling, and the run's point (FLOPs per DRAM byte, achieved FLOP/s) with its
attainable FLOP/s and % of roof from ``run.roofline()``.

Simplifications: the memory chart shows shared memory as wavefronts through the L1/shared data path (its
bytes are what the path could carry, not what the threads asked for); both charts are fixed-size SVG
scaled to the page's width.
"""

from __future__ import annotations

import html
import math

from gpusim.observe.glossary import anchor

MEMORY_W, MEMORY_H = 900, 300
ROOF_W, ROOF_H = 760, 430
_MARGIN = (70, 20, 30, 50)  # left, right, top, bottom of the roofline's plot area


def human_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def memory_links(run) -> list[dict]:
    """The memory chart's links: name, from, to, bytes, GB/s and % of peak.

    A link's % is its share of its unit's throughput metric (``l1tex__throughput`` for the SM's loads, stores
    and shared-memory wavefronts, ``lts__throughput`` for L2 reads and writes, ``dram__throughput`` for DRAM
    reads and writes): the metric split in proportion to the bytes each direction moved, so the directions
    of one unit add up to its metric."""
    c, m, config = run.counters, run.metrics, run.config
    sector = config.sector_bytes
    seconds = run.seconds
    shared_unit = config.shared_banks * config.shared_bank_bytes
    l2_write = c["l2_store_sectors"] * sector
    groups = {
        "l1tex__throughput.avg.pct_of_peak_sustained_active": [
            ("global loads", "sm", "l1", (c["global_load_sectors"] + c["local_load_sectors"]) * sector),
            ("global stores", "sm", "l1", (c["global_store_sectors"] + c["local_store_sectors"]) * sector),
            ("shared", "sm", "shared", (c["shared_load_wavefronts"] + c["shared_store_wavefronts"]) * shared_unit),
        ],
        "lts__throughput.avg.pct_of_peak_sustained_elapsed": [
            ("L2 reads", "l1", "l2", c["l2_sectors"] * sector - l2_write), ("L2 writes", "l1", "l2", l2_write),
        ],
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": [
            ("DRAM reads", "l2", "dram", c["dram_read_bytes"]), ("DRAM writes", "l2", "dram", c["dram_write_bytes"]),
        ],
    }
    links = []
    for metric, members in groups.items():
        total = sum(nbytes for *_, nbytes in members)
        for name, src, dst, nbytes in members:
            links.append({"name": name, "src": src, "dst": dst, "bytes": float(nbytes), "metric": metric,
                          "gbs": float(nbytes) / seconds / 1e9 if seconds else 0.0,
                          "pct": float(m[metric]) * nbytes / total if total else 0.0})
    return links


def _box(x: int, y: int, w: int, h: int, key: str, title: str, lines: list[str]) -> str:
    text = "".join(f'<text x="{x + w / 2}" y="{y + 40 + 16 * i}" class="sub">{html.escape(t)}</text>'
                   for i, t in enumerate(lines))
    return (f'<g class="unit" data-unit="{key}"><a href="#{anchor(key)}"><rect x="{x}" y="{y}" width="{w}" '
            f'height="{h}" rx="6"/><text x="{x + w / 2}" y="{y + 22}" class="title">{html.escape(title)}</text>'
            f"</a>{text}</g>")


def _link(link: dict, x0: float, x1: float, y: float, forward: bool) -> str:
    pct = max(0.0, min(100.0, link["pct"]))
    width = 2 + 10 * pct / 100
    colour = f"hsl({int(120 - 1.2 * pct)}, 70%, 42%)"
    a, b = (x0, x1) if forward else (x1, x0)
    head = 8 if forward else -8
    label = f'{link["name"]}: {human_bytes(link["bytes"])}, {link["gbs"]:.1f} GB/s, {link["pct"]:.1f}% of peak'
    return (f'<g class="link" data-link="{html.escape(link["name"])}" data-bytes="{link["bytes"]:.0f}" '
            f'data-pct="{link["pct"]:.3f}"><title>{html.escape(label)}</title>'
            f'<line x1="{a}" y1="{y}" x2="{b - head}" y2="{y}" stroke="{colour}" stroke-width="{width:.1f}"/>'
            f'<polygon points="{b},{y} {b - head},{y - 6} {b - head},{y + 6}" fill="{colour}"/>'
            f'<text x="{(x0 + x1) / 2}" y="{y - 7}" class="num">{human_bytes(link["bytes"])} '
            f'\u00b7 {link["pct"]:.1f}%</text></g>')


def memory_chart_svg(run) -> str:
    """The memory chart (see the module docstring) as an inline SVG."""
    m, config = run.metrics, run.config
    links = {link["name"]: link for link in memory_links(run)}
    parts = [
        _box(10, 60, 150, 170, "sm", f"SMs ({config.sms})",
             [f"{m['smsp__inst_executed.sum']:,.0f} warp-inst",
              f"occupancy {m['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f}%"]),
        _box(270, 30, 160, 110, "l1", "L1",
             [f"hit rate {m['l1tex__t_sector_hit_rate.pct']:.1f}%",
              f"{config.l1_bytes_per_cycle_per_sm:g} B/cycle/SM"]),
        _box(270, 170, 160, 90, "shared", "shared memory",
             [f"{config.shared_banks} banks x {config.shared_bank_bytes} B"]),
        _box(520, 60, 150, 170, "l2", "L2",
             [f"hit rate {m['lts__t_sector_hit_rate.pct']:.1f}%", f"{config.l2_bytes_per_cycle:g} B/cycle"]),
        _box(760, 60, 130, 170, "dram", "DRAM",
             [f"{config.dram_bandwidth_gbs:g} GB/s peak"]),
        _link(links["global loads"], 160, 270, 70, False),
        _link(links["global stores"], 160, 270, 110, True),
        _link(links["shared"], 160, 270, 215, True),
        _link(links["L2 reads"], 430, 520, 80, False),
        _link(links["L2 writes"], 430, 520, 120, True),
        _link(links["DRAM reads"], 670, 760, 110, False),
        _link(links["DRAM writes"], 670, 760, 170, True),
    ]
    legend = ('<text x="10" y="290" class="legend">arrow: direction of the data; width and colour: its % of the '
              "unit's peak (green low, red high; a unit's directions add up to its throughput); hover for the rate"
              "</text>")
    return (f'<svg class="memory-chart" viewBox="0 0 {MEMORY_W} {MEMORY_H}" role="img" '
            f'aria-label="memory chart">{"".join(parts)}{legend}</svg>')


class _LogAxes:
    """Log-log mapping of the roofline's data to SVG coordinates."""

    def __init__(self, x_range, y_range):
        self.x0, self.x1 = (math.log10(v) for v in x_range)
        self.y0, self.y1 = (math.log10(v) for v in y_range)
        left, right, top, bottom = _MARGIN
        self.left, self.right, self.top, self.bottom = left, ROOF_W - right, top, ROOF_H - bottom

    def x(self, value: float) -> float:
        return self.left + (math.log10(value) - self.x0) / (self.x1 - self.x0) * (self.right - self.left)

    def y(self, value: float) -> float:
        return self.bottom - (math.log10(value) - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)


def _ticks(axes: _LogAxes) -> str:
    out = []
    for exponent in range(math.ceil(axes.x0), math.floor(axes.x1) + 1):
        x = axes.x(10.0 ** exponent)
        out.append(f'<line x1="{x:.1f}" y1="{axes.top}" x2="{x:.1f}" y2="{axes.bottom}" class="grid"/>'
                   f'<text x="{x:.1f}" y="{axes.bottom + 16}" class="tick">1e{exponent}</text>')
    for exponent in range(math.ceil(axes.y0), math.floor(axes.y1) + 1):
        y = axes.y(10.0 ** exponent)
        out.append(f'<line x1="{axes.left}" y1="{y:.1f}" x2="{axes.right}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{axes.left - 6}" y="{y + 4:.1f}" class="tick end">1e{exponent}</text>')
    return "".join(out)


def roofline_svg(run) -> str:
    """The config's roofline with the run's point (see the module docstring) as an inline SVG."""
    from gpusim.observe.plot import chip_ceilings

    compute, memory = chip_ceilings(run.config)
    point = run.roofline()
    intensity, achieved = point.arithmetic_intensity, point.achieved_flops
    has_point = achieved > 0 and 0 < intensity < math.inf
    top = max(compute.values())
    x_lo = min([1e-2] + ([intensity / 4] if has_point else []))
    x_hi = max([1e4] + ([intensity * 4] if has_point else []))
    y_lo = min(min(memory.values()) * x_lo / 2, achieved / 4 if has_point else math.inf)
    axes = _LogAxes((x_lo, x_hi), (y_lo, top * 3))
    parts = [_ticks(axes)]
    for i, (name, bandwidth) in enumerate(sorted(memory.items(), key=lambda kv: -kv[1])):
        ridge = top / bandwidth
        x_mid = min(ridge, x_hi)
        parts.append(f'<g class="ceiling memory" data-name="{html.escape(name)}"><polyline class="c{i}" points="'
                     f'{axes.x(x_lo):.1f},{axes.y(bandwidth * x_lo):.1f} {axes.x(x_mid):.1f},'
                     f'{axes.y(min(bandwidth * x_mid, top)):.1f} {axes.x(x_hi):.1f},{axes.y(top):.1f}"/>'
                     f'<text x="{axes.x(x_lo) + 4:.1f}" y="{axes.y(bandwidth * x_lo) - 5:.1f}" class="label c{i}">'
                     f"{html.escape(name)} {bandwidth / 1e9:,.0f} GB/s</text></g>")
    for name, peak in sorted(compute.items(), key=lambda kv: -kv[1]):
        y = axes.y(peak)
        parts.append(f'<g class="ceiling compute" data-name="{html.escape(name)}"><line x1="{axes.left}" '
                     f'y1="{y:.1f}" x2="{axes.right}" y2="{y:.1f}"/><text x="{axes.right - 4}" y="{y - 4:.1f}" '
                     f'class="label end">{html.escape(name)} {peak / 1e12:.3g} TFLOP/s</text></g>')
    if has_point:
        cx, cy = axes.x(intensity), axes.y(achieved)
        label = (f"{run.program.name}: {intensity:.3g} FLOP/B, {achieved / 1e9:.3g} GFLOP/s, "
                 f"{point.pct_of_roof:.1f}% of its roof ({point.bound}-bound side)")
        parts.append(f'<g class="point" data-intensity="{intensity!r}" data-flops="{achieved!r}" '
                     f'data-attainable="{point.attainable_flops!r}"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="6"/>'
                     f'<title>{html.escape(label)}</title><text x="{cx + 9:.1f}" y="{cy + 4:.1f}" class="label">'
                     f"{html.escape(run.program.name)}</text></g>")
        caption = label
    else:
        caption = f"{run.program.name}: no FLOPs (or no DRAM bytes), so no point on the roofline"
    parts.append(f'<text x="{(axes.left + axes.right) / 2}" y="{ROOF_H - 8}" class="axis">arithmetic intensity '
                 "(FLOPs per DRAM byte)</text>"
                 f'<text x="14" y="{(axes.top + axes.bottom) / 2}" class="axis" transform="rotate(-90 14 '
                 f'{(axes.top + axes.bottom) / 2})">FLOP/s</text>')
    svg = (f'<svg class="roofline" viewBox="0 0 {ROOF_W} {ROOF_H}" role="img" aria-label="roofline">'
           f'<rect x="{axes.left}" y="{axes.top}" width="{axes.right - axes.left}" '
           f'height="{axes.bottom - axes.top}" class="frame"/>{"".join(parts)}</svg>')
    return svg + f'<p class="caption">{html.escape(caption)}</p>'
