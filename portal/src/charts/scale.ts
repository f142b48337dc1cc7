import { formatAxisValue } from '../format/numbers.ts';

/** The font size (px) of axis labels: `.chart text` in styles.css. */
export const AXIS_FONT_PX = 12;
/** Space between a y label and the plot. */
export const AXIS_GAP_PX = 6;

/**
 * Ticks from 0 to at least `max`, a "nice" whole step apart (1, 2 or 5 × 10^k) and at most `intervals`
 * intervals: the top tick covers the largest value, so no line leaves the chart.
 */
export function niceTicks(max: number, intervals = 4): number[] {
  const top = Number.isFinite(max) && max > 0 ? max : 1;
  const rough = top / intervals;
  let magnitude = 10 ** Math.max(0, Math.floor(Math.log10(rough)));
  let step = magnitude;
  for (const factor of [1, 2, 5, 10]) {
    step = factor * magnitude;
    if (step * intervals >= top) break;
  }
  // Floating point can leave log10 one short: widen until the ticks cover the max.
  while (step * intervals < top) {
    magnitude *= 10;
    step = magnitude;
  }
  const ticks = [0];
  while (ticks[ticks.length - 1]! < top) ticks.push(ticks.length * step);
  return ticks;
}

/**
 * How wide `text` draws at `fontPx`, on the generous side: per-character widths at least those of the wide
 * sans-serif fonts (DejaVu Sans, Helvetica), so a label sized by this is never cut.
 */
export function labelWidth(text: string, fontPx = AXIS_FONT_PX): number {
  let em = 0;
  for (const char of text) {
    if (/[0-9]/.test(char)) em += 0.66;
    else if (char === ',' || char === '.') em += 0.36;
    else if (char === ' ') em += 0.34;
    else em += 0.92; // K, M, B, T and anything else
  }
  return Math.ceil(em * fontPx);
}

/** The width of a y axis: its widest label plus the gap to the plot (sized to the labels, never fixed). */
export function axisWidth(labels: string[], fontPx = AXIS_FONT_PX): number {
  return Math.max(0, ...labels.map((label) => labelWidth(label, fontPx))) + AXIS_GAP_PX + 2;
}

/** A y axis for values up to `max`: its ticks, their labels and its width. */
export function yAxis(max: number, intervals = 4) {
  const ticks = niceTicks(max, intervals);
  const labels = ticks.map(formatAxisValue);
  return { ticks, labels, width: axisWidth(labels), top: ticks[ticks.length - 1]! };
}
