import { Fragment, type ReactNode, type RefObject, useEffect, useRef, useState } from 'react';
import { formatNumber } from '../format.js';

/**
 * Hand-rolled SVG charts (no chart library, nothing from a CDN). Each is a figure with a
 * caption, an SVG described for screen readers, and its numbers in a table under "Data".
 * Series differ by colour and by dash or pattern, so colour is never the only cue.
 */

const COLORS = ['#1d4ed8', '#c2410c', '#047857', '#7c3aed', '#be185d', '#0e7490', '#4d7c0f'];
const DASHES = ['', '6 3', '2 3', '10 3 2 3', '1 2', '8 2 2 2 2 2', '4 4'];
const H = 260;
const M = { top: 12, right: 16, bottom: 34, left: 44 };

/** The width of the chart's box in CSS pixels, kept up to date: the SVG is drawn 1:1. */
function useWidth(): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const update = () => setWidth(Math.max(260, Math.floor(element.clientWidth)));
    update();
    const observer = new ResizeObserver(update);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

export interface Series {
  name: string;
  values: number[];
}

export function seriesColor(index: number): string {
  return COLORS[index % COLORS.length] as string;
}

/** A round upper bound for the y axis and its tick step. */
function yScale(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 4, step: 1 };
  const rough = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
  const whole = Math.max(1, Math.ceil(step));
  return { top: Math.ceil(max / whole) * whole, step: whole };
}

function Axes({ top, step, yLabel, W }: { top: number; step: number; yLabel: string; W: number }) {
  const plotH = H - M.top - M.bottom;
  const ticks: number[] = [];
  for (let v = 0; v <= top; v += step) ticks.push(v);
  return (
    <g className="axes" aria-hidden="true">
      {ticks.map((v) => {
        const y = M.top + plotH - (v / top) * plotH;
        return (
          <g key={v}>
            <line x1={M.left} x2={W - M.right} y1={y} y2={y} className="grid" />
            <text x={M.left - 6} y={y + 4} textAnchor="end" className="tick">
              {formatNumber(v)}
            </text>
          </g>
        );
      })}
      <text
        x={12}
        y={M.top + plotH / 2}
        transform={`rotate(-90 12 ${M.top + plotH / 2})`}
        textAnchor="middle"
        className="axis-label"
      >
        {yLabel}
      </text>
    </g>
  );
}

function Legend({
  series,
  patternOf,
}: {
  series: (Series & { total?: number })[];
  /** Bar charts: the fill pattern of series i (else a line sample is drawn). */
  patternOf?: (index: number) => string;
}) {
  return (
    <ul className="legend">
      {series.map((s, i) => (
        <li key={s.name}>
          <svg width="28" height="14" aria-hidden="true" focusable="false">
            {patternOf ? (
              <rect x="2" y="1" width="24" height="12" fill={patternOf(i)} />
            ) : (
              <line
                x1="1"
                x2="27"
                y1="7"
                y2="7"
                stroke={seriesColor(i)}
                strokeWidth="3"
                strokeDasharray={DASHES[i % DASHES.length]}
              />
            )}
          </svg>
          <span>{s.name}</span>
          {s.total !== undefined ? <span className="muted"> ({formatNumber(s.total)})</span> : null}
        </li>
      ))}
    </ul>
  );
}

function DataTable({
  caption,
  xName,
  xLabels,
  series,
}: {
  caption: string;
  xName: string;
  xLabels: string[];
  series: Series[];
}) {
  return (
    <details className="chart-data">
      <summary>Data</summary>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              <th scope="col">{xName}</th>
              {series.map((s) => (
                <th scope="col" key={s.name}>
                  {s.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {xLabels.map((x, row) => (
              <tr key={row}>
                <th scope="row">{x}</th>
                {series.map((s) => (
                  <td key={s.name} className="num">
                    {formatNumber(s.values[row] ?? 0)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

interface ChartProps {
  id: string;
  title: string;
  /** One sentence saying what the chart shows, for screen readers. */
  summary: string;
  xName: string;
  xLabels: string[];
  yLabel: string;
  series: (Series & { total?: number })[];
}

/** The plot area of a chart over `series`: its width, y scale and the y of a value. */
function usePlot(series: Series[]) {
  const [box, W] = useWidth();
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const { top, step } = yScale(max);
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const y = (v: number) => M.top + plotH - (v / top) * plotH;
  return { box, W, top, step, plotW, plotH, y };
}

/**
 * The figure around a chart's drawing: caption, described SVG with its axes, legend and the
 * numbers under "Data". `children` draw the series (hidden from screen readers).
 */
function ChartFigure({
  id,
  title,
  summary,
  xName,
  xLabels,
  yLabel,
  series,
  plot,
  defs,
  patternOf,
  children,
}: ChartProps & {
  plot: ReturnType<typeof usePlot>;
  defs?: ReactNode;
  patternOf?: (index: number) => string;
  children: ReactNode;
}) {
  return (
    <figure className="chart" id={id}>
      <figcaption>{title}</figcaption>
      <div ref={plot.box} className="chart-box">
        <svg
          width={plot.W}
          height={H}
          viewBox={`0 0 ${plot.W} ${H}`}
          role="img"
          aria-labelledby={`${id}-desc`}
        >
          <desc id={`${id}-desc`}>{summary}</desc>
          {defs}
          <Axes top={plot.top} step={plot.step} yLabel={yLabel} W={plot.W} />
          <g aria-hidden="true">{children}</g>
        </svg>
      </div>
      <Legend series={series} patternOf={patternOf} />
      <DataTable caption={title} xName={xName} xLabels={xLabels} series={series} />
    </figure>
  );
}

/** Lines over time (x: evenly spaced buckets). */
export function LineChart(props: ChartProps) {
  const { xLabels, series } = props;
  const plot = usePlot(series);
  const { plotW, y } = plot;
  const n = Math.max(1, xLabels.length - 1);
  const x = (i: number) => M.left + (i / n) * plotW;
  const shown = labelIndices(xLabels, x);
  return (
    <ChartFigure {...props} plot={plot}>
      {xLabels.map((label, i) =>
        shown.has(i) ? (
          <text
            key={i}
            x={x(i)}
            y={H - M.bottom + 18}
            textAnchor={i === 0 ? 'start' : i === xLabels.length - 1 ? 'end' : 'middle'}
            className="tick"
          >
            {label}
          </text>
        ) : null,
      )}
      {series.map((s, index) => (
        <Fragment key={s.name}>
          <polyline
            fill="none"
            stroke={seriesColor(index)}
            strokeWidth="2.5"
            strokeLinejoin="round"
            strokeDasharray={DASHES[index % DASHES.length]}
            points={s.values.map((v, i) => `${x(i)},${y(v)}`).join(' ')}
          />
          {s.values.map((v, i) =>
            v > 0 ? <circle key={i} cx={x(i)} cy={y(v)} r="3" fill={seriesColor(index)} /> : null,
          )}
        </Fragment>
      ))}
    </ChartFigure>
  );
}

/** Grouped bars: one group per category, one bar per series. */
export function BarChart(props: ChartProps) {
  const { id, xLabels, series } = props;
  const plot = usePlot(series);
  const { plotW, plotH, y } = plot;
  const groups = Math.max(1, xLabels.length);
  const groupW = plotW / groups;
  const barW = Math.max(2, Math.min(36, (groupW * 0.75) / Math.max(1, series.length)));
  const defs = (
    <defs>
      {series.map((s, index) => (
        <pattern
          key={s.name}
          id={`${id}-p${index}`}
          width="6"
          height="6"
          patternUnits="userSpaceOnUse"
          patternTransform={`rotate(${index * 45})`}
        >
          <rect width="6" height="6" fill={seriesColor(index)} />
          {index > 0 ? <line x1="0" y1="0" x2="0" y2="6" stroke="#fff" strokeWidth="1.5" /> : null}
        </pattern>
      ))}
    </defs>
  );
  return (
    <ChartFigure {...props} plot={plot} defs={defs} patternOf={(i) => `url(#${id}-p${i})`}>
      {xLabels.map((label, g) => {
        const start = M.left + g * groupW + (groupW - barW * series.length) / 2;
        return (
          <g key={g}>
            {series.map((s, index) => {
              const v = s.values[g] ?? 0;
              return (
                <rect
                  key={s.name}
                  x={start + index * barW}
                  y={y(v)}
                  width={barW - 1}
                  height={Math.max(0, M.top + plotH - y(v))}
                  fill={`url(#${id}-p${index})`}
                />
              );
            })}
            <text
              x={M.left + g * groupW + groupW / 2}
              y={H - M.bottom + 18}
              textAnchor="middle"
              className="tick"
            >
              {shorten(label, Math.max(3, Math.floor(groupW / 7)))}
            </text>
          </g>
        );
      })}
    </ChartFigure>
  );
}

/** Roughly how wide a tick label is drawn, px (the tick font is ~7 px per character). */
const labelWidth = (text: string) => text.length * 7 + 12;

/**
 * The x labels to draw so that none overlaps another: the last one always (the newest
 * bucket), then every earlier one that has room; the first is anchored at its start and the
 * last at its end, the others at their middle.
 */
function labelIndices(labels: string[], x: (i: number) => number): Set<number> {
  const shown = new Set<number>();
  const last = labels.length - 1;
  if (last < 0) return shown;
  shown.add(last);
  // the left edge of the last label drawn so far
  let leftEdge = x(last) - labelWidth(labels[last] ?? '');
  for (let i = last - 1; i >= 0; i--) {
    const width = labelWidth(labels[i] ?? '');
    const right = i === 0 ? x(i) + width : x(i) + width / 2;
    if (right <= leftEdge) {
      shown.add(i);
      leftEdge = i === 0 ? x(i) : x(i) - width / 2;
    }
  }
  return shown;
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
