import type { AnalyticsBucket } from '@pts/shared/schemas/analytics';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One line of a chart: a numeric field of the buckets. */
export interface ChartSeries {
  key: 'acceptedEvents' | 'refusedEvents' | 'activeMembers' | 'ptsIssued' | 'redemptions' | 'ptsSpent';
  label: string;
  color: string;
  dash?: boolean;
}

const HEIGHT = 220;

/** Bucket starts (UTC days) as Unix seconds, and one array of numbers per series. */
function alignedData(buckets: AnalyticsBucket[], series: ChartSeries[]): uPlot.AlignedData {
  return [
    buckets.map((b) => Date.parse(`${b.start}T00:00:00Z`) / 1000),
    ...series.map((s) => buckets.map((b) => Number(b[s.key]))),
  ];
}

/**
 * A time-series chart (uPlot, canvas): an image to assistive technology, labelled by `label`; the numbers
 * themselves are in the table the page offers next to it. Resizes with its container (375 px phones too).
 */
export function TimeChart({
  buckets,
  series,
  label,
}: {
  buckets: AnalyticsBucket[];
  series: ChartSeries[];
  label: string;
}) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const chart = new uPlot(
      {
        width: Math.max(240, element.clientWidth),
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { size: 56 }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            ...(s.dash ? { dash: [6, 4] } : {}),
            points: { show: buckets.length <= 31 },
          })),
        ],
      },
      alignedData(buckets, series),
      element,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(240, element.clientWidth), height: HEIGHT }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // The chart is rebuilt only when its lines change; new numbers go through setData below.
  }, [series]);

  useEffect(() => {
    plot.current?.setData(alignedData(buckets, series));
  }, [buckets, series]);

  return <div className="chart" role="img" aria-label={label} ref={container} />;
}
