// A uPlot chart (bundled; drawn on a canvas). Lines for a metric over time, bars for movements.
// A table next to each chart carries the same numbers for screen readers and keyboard users.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDate } from '../format';

export type Series = { label: string; values: (number | null)[]; color: string; bars?: boolean };

type Props = { title: string; dates: string[]; series: Series[]; format: (v: number) => string; height?: number };

export function Chart({ title, dates, series, format, height = 220 }: Props) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current) return;
    const xs = dates.map((d) => Date.parse(d + 'T00:00:00Z') / 1000);
    const bars = uPlot.paths.bars!({ size: [0.6, 40] });
    const plot = new uPlot({
      width: el.current.clientWidth || 640,
      height,
      scales: { x: { time: true } },
      axes: [{}, { values: (_u, vals) => vals.map((v) => format(v)), size: 90 }],
      // The legend reads the point under the pointer; with none, it says so instead of uPlot's "--".
      series: [{ label: 'Date', value: (_u: uPlot, _v: number | null, _s: number, i: number | null) => (i === null ? 'point at the chart' : formatDate(dates[i])) },
        ...series.map((s) => ({
          label: s.label, stroke: s.color, width: s.bars ? 0 : 2,
          fill: s.bars ? s.color : undefined, paths: s.bars ? bars : undefined, points: s.bars ? { show: false } : undefined,
          value: (_u: uPlot, v: number | null, _s: number, i: number | null) => (i === null ? '' : v === null ? '—' : format(v)),
        }))],
    }, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, el.current);
    const ro = new ResizeObserver(() => el.current && plot.setSize({ width: el.current.clientWidth, height }));
    ro.observe(el.current);
    return () => { ro.disconnect(); plot.destroy(); };
  }, [dates, series]);
  return <figure class="chart"><figcaption>{title}</figcaption><div ref={el} role="img" aria-label={title} /></figure>;
}
