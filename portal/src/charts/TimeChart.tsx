import type { AnalyticsBucket } from '@pts/shared/schemas/analytics';
import { useEffect, useRef, useState } from 'react';
import { AXIS_GAP_PX, yAxis } from './scale.ts';

/** One line of a chart: a numeric field of the buckets, on the left axis or its own right axis. */
export interface ChartSeries {
  key: 'acceptedEvents' | 'refusedEvents' | 'activeMembers' | 'ptsIssued' | 'redemptions' | 'ptsSpent';
  label: string;
  color: string;
  dash?: boolean;
  /** `right`: a second axis on the right, for a figure of another unit or magnitude than the left's. */
  axis?: 'left' | 'right';
}

const HEIGHT = 220;
const TOP = 10;
const BOTTOM = 24;
/** Room kept for each date label under the plot. */
const DATE_SPACING_PX = 72;
const dateLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

const valuesOf = (buckets: AnalyticsBucket[], series: ChartSeries) => buckets.map((b) => Number(b[series.key]));
const maxOf = (buckets: AnalyticsBucket[], series: ChartSeries[]) =>
  Math.max(0, ...series.flatMap((s) => valuesOf(buckets, s)));

/**
 * A time-series line chart drawn as SVG, so its labels are text the page can measure: each y axis is as wide as
 * its widest label (never a fixed width that cuts "600,000" to "00,000"), and labels are compact above 10,000.
 * An image to assistive technology, labelled by `label`; the numbers are in the table the page offers beside
 * it. Resizes with its container (375 px phones too).
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
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    setWidth(element.clientWidth);
    const resize = new ResizeObserver(() => setWidth(element.clientWidth));
    resize.observe(element);
    return () => resize.disconnect();
  }, []);

  const left = series.filter((s) => s.axis !== 'right');
  const right = series.filter((s) => s.axis === 'right');
  const leftAxis = yAxis(maxOf(buckets, left));
  const rightAxis = right.length > 0 ? yAxis(maxOf(buckets, right)) : undefined;
  const plotLeft = leftAxis.width;
  const plotRight = Math.max(plotLeft + 1, width - (rightAxis ? rightAxis.width : 8));
  const plotBottom = HEIGHT - BOTTOM;
  const times = buckets.map((b) => Date.parse(`${b.start}T00:00:00Z`));
  const first = times[0] ?? 0;
  const span = (times[times.length - 1] ?? first) - first;
  const x = (i: number) =>
    span === 0
      ? (plotLeft + plotRight) / 2
      : plotLeft + (((times[i] ?? first) - first) / span) * (plotRight - plotLeft);
  const y = (value: number, top: number) => plotBottom - (value / top) * (plotBottom - TOP);
  const dateStep = Math.max(
    1,
    Math.ceil(buckets.length / Math.max(1, Math.floor((plotRight - plotLeft) / DATE_SPACING_PX))),
  );

  return (
    <div className="chart" role="img" aria-label={label} ref={container}>
      {width > 0 ? (
        <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} aria-hidden="true" focusable="false">
          {leftAxis.ticks.map((tick, i) => (
            <g key={`l${tick}`}>
              <line
                className="grid"
                x1={plotLeft}
                x2={plotRight}
                y1={y(tick, leftAxis.top)}
                y2={y(tick, leftAxis.top)}
              />
              <text
                className="y-label"
                x={plotLeft - AXIS_GAP_PX}
                y={y(tick, leftAxis.top)}
                textAnchor="end"
                dy="0.32em"
              >
                {leftAxis.labels[i]}
              </text>
            </g>
          ))}
          {rightAxis?.ticks.map((tick, i) => (
            <text
              key={`r${tick}`}
              className="y-label"
              x={plotRight + AXIS_GAP_PX}
              y={y(tick, rightAxis.top)}
              textAnchor="start"
              dy="0.32em"
            >
              {rightAxis.labels[i]}
            </text>
          ))}
          {buckets.map((bucket, i) =>
            i % dateStep === 0 ? (
              <text
                key={bucket.start}
                className="x-label"
                x={x(i)}
                y={HEIGHT - 6}
                textAnchor={
                  buckets.length === 1 ? 'middle' : i === 0 ? 'start' : i === buckets.length - 1 ? 'end' : 'middle'
                }
              >
                {dateLabel.format(times[i])}
              </text>
            ) : null,
          )}
          {series.map((s) => {
            const top = s.axis === 'right' && rightAxis ? rightAxis.top : leftAxis.top;
            const values = valuesOf(buckets, s);
            const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v, top).toFixed(1)}`);
            return (
              <g key={s.key}>
                <polyline
                  points={points.join(' ')}
                  fill="none"
                  stroke={s.color}
                  strokeWidth={2}
                  strokeDasharray={s.dash ? '6 4' : undefined}
                />
                {buckets.length <= 31
                  ? values.map((v, i) => <circle key={i} cx={x(i)} cy={y(v, top)} r={2.5} fill={s.color} />)
                  : null}
              </g>
            );
          })}
        </svg>
      ) : null}
    </div>
  );
}
